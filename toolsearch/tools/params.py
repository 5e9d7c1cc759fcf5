"""Per-parameter annotations for ``@tool`` functions."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ToolParam"]


@dataclass(frozen=True, slots=True)
class ToolParam:
    """Describe one tool parameter: ``Annotated[str, ToolParam(description="...")]``.

    ``required=None`` (the default) infers it: a parameter is required unless it has a
    default value or its type admits ``None``. ``required=False`` makes a parameter without
    a default optional (it then receives ``None`` when the model leaves it out);
    ``required=True`` lists a parameter with a default as required in the schema.
    """

    description: str | None = None
    required: bool | None = None
