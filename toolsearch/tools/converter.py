"""Turning a tool's return value into the text the model reads."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["DEFAULT_RESULT_CONVERTER", "JsonResultConverter", "ResultConverter"]

#: What a tool that returns ``None`` reports to the model.
EMPTY_RESULT = "Done"


@runtime_checkable
class ResultConverter(Protocol):
    """Convert a tool's return value to a string. ``return_type`` is the annotated type."""

    def convert(self, result: Any, return_type: Any = None) -> str: ...


class JsonResultConverter:
    """The default: strings pass through, ``None`` becomes ``"Done"``, the rest becomes JSON.

    JSON is produced by pydantic, so models, dataclasses, enums, datetimes, sets and
    nested containers of them all serialize; anything else falls back to ``str()``.
    """

    def convert(self, result: Any, return_type: Any = None) -> str:
        if result is None:
            return EMPTY_RESULT
        if isinstance(result, str):
            return result
        import pydantic_core

        return pydantic_core.to_json(result, fallback=str).decode("utf-8")


DEFAULT_RESULT_CONVERTER: ResultConverter = JsonResultConverter()
