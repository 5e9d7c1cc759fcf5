"""The one interface the loop needs from a tool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from toolsearch.tools.context import ToolContext
    from toolsearch.tools.definition import ToolDefinition, ToolMetadata

__all__ = ["ToolCallback"]


@runtime_checkable
class ToolCallback(Protocol):
    """A callable tool: its definition, its metadata, and a way to run it on JSON input.

    ``call`` and ``acall`` take the model's arguments as a JSON string and return the
    converted result text. They raise :class:`~toolsearch.errors.InvalidToolArgumentsError`
    when the arguments do not fit the schema and :class:`~toolsearch.errors.ToolExecutionError`
    when the tool itself fails.
    """

    @property
    def definition(self) -> ToolDefinition: ...

    @property
    def metadata(self) -> ToolMetadata: ...

    def call(self, input_json: str, context: ToolContext | None = None) -> str: ...

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str: ...
