"""Finding tools by name outside the request: registries that ``tool_names`` refer to."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import tool_callbacks

__all__ = ["DelegatingToolCallbackResolver", "StaticToolCallbackResolver", "ToolCallbackResolver"]


@runtime_checkable
class ToolCallbackResolver(Protocol):
    """Look a tool up by name; ``None`` when it is not known."""

    def resolve(self, tool_name: str) -> ToolCallback | None: ...


class StaticToolCallbackResolver:
    """A fixed registry of tools (anything ``.tools(...)`` accepts)."""

    def __init__(self, *tools: Any) -> None:
        self._callbacks = {cb.definition.name: cb for cb in tool_callbacks(*tools)}

    def resolve(self, tool_name: str) -> ToolCallback | None:
        return self._callbacks.get(tool_name)

    @property
    def names(self) -> Sequence[str]:
        return list(self._callbacks)


class DelegatingToolCallbackResolver:
    """Ask several resolvers in turn; the first that knows the name wins."""

    def __init__(self, resolvers: Iterable[ToolCallbackResolver]) -> None:
        self._resolvers = list(resolvers)

    def resolve(self, tool_name: str) -> ToolCallback | None:
        for resolver in self._resolvers:
            found = resolver.resolve(tool_name)
            if found is not None:
                return found
        return None
