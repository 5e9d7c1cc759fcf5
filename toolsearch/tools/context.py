"""Data the application passes to tools at call time, never shown to the model."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["ToolContext"]


class ToolContext(Mapping[str, Any]):
    """A read-only mapping of the merged tool context.

    A tool parameter typed ``ToolContext`` receives it at call time; it never appears in
    the tool's JSON Schema. The client merges ``default_tool_context({...})`` with the
    per-call ``tool_context({...})``; per-call keys win.
    """

    __slots__ = ("_data",)

    def __init__(self, context: Mapping[str, Any] | None = None) -> None:
        self._data: Mapping[str, Any] = MappingProxyType(dict(context or {}))

    @property
    def context(self) -> Mapping[str, Any]:
        """The merged context as a read-only mapping."""
        return self._data

    def merged(self, overrides: Mapping[str, Any] | None) -> ToolContext:
        """A new context with ``overrides`` applied on top of this one."""
        if not overrides:
            return self
        return ToolContext({**self._data, **overrides})

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ToolContext):
            return dict(self._data) == dict(other._data)
        if isinstance(other, Mapping):
            return dict(self._data) == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ToolContext({dict(self._data)!r})"
