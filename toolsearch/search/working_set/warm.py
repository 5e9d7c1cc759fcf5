"""The warm set: the seam between learning from use and the working set.

A *warm set* is the handful of tools of a tool set that are used most, with how well they
went. The usage memory computes it from the outcomes every front door records; a user can
also configure one. The working-set policy reads it through :class:`WarmSetSource` and
decides, with the cost model, whether holding those tools as a stable, cacheable prefix
pays for a session.

The source takes the session's tool definitions rather than a precomputed key, so the
memory is free to key what it learned however it likes (per tool fingerprint, per tool
set, per tenant) and only ever answers with names that are in the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolsearch.tools.definition import ToolDefinition

__all__ = ["StaticWarmSet", "WarmSetSource", "WarmTool"]


@dataclass(frozen=True)
class WarmTool:
    """One tool of a warm set.

    Attributes:
        name: The tool's own name (not its wire name).
        weight: How much it is used, decayed with age (successful calls; a configured
            tool gets 1.0). Higher first.
        success_rate: Recent successful calls over recent calls, in ``[0, 1]``.
        last_used: When it was last called successfully (seconds since the epoch; 0 when
            unknown).
    """

    name: str
    weight: float = 1.0
    success_rate: float = 1.0
    last_used: float = 0.0


@runtime_checkable
class WarmSetSource(Protocol):
    """Anything that can name a session's warm tools (the usage memory, a fixed list)."""

    def warm_tools(
        self,
        tools: Sequence[ToolDefinition],
        *,
        tenant: str | None = None,
        limit: int = 10,
    ) -> Sequence[WarmTool]:
        """At most ``limit`` tools among ``tools``, most used first; empty when nothing
        is known. Never raises for a damaged or unreachable backing store: a source that
        cannot answer answers with nothing."""
        ...


class StaticWarmSet:
    """A configured warm set: these names, in this order, whenever the session has them."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names: tuple[str, ...] = tuple(dict.fromkeys(names))

    def __repr__(self) -> str:
        return f"StaticWarmSet({list(self.names)!r})"

    def warm_tools(
        self,
        tools: Sequence[ToolDefinition],
        *,
        tenant: str | None = None,
        limit: int = 10,
    ) -> list[WarmTool]:
        present = {tool.name for tool in tools}
        return [WarmTool(name) for name in self.names if name in present][: max(0, limit)]
