"""What a :class:`~toolsearch.search.run.SearchRun` answers and needs: a search's
:class:`SearchResult`, a call's :class:`CallDecision`, and :class:`RunOwner`, what a run
asks of the front door's core object. Re-exported by :mod:`toolsearch.search.run`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from toolsearch.chat.messages import ToolSearchHit
from toolsearch.search.events import ToolSearchEvent
from toolsearch.search.loaded import LoadedTools
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.types import ToolIndex
from toolsearch.search.working_set.warm import WarmSetSource
from toolsearch.tools.definition import ToolDefinition

__all__ = ["CallDecision", "RunOwner", "SearchResult", "merge_hits"]

RunT = TypeVar("RunT", contravariant=True)
"""The run an owner reports for (:class:`~toolsearch.search.run.SearchRun`; a type
variable, so this module need not import the run's, which imports it)."""


def merge_hits(per_query: Sequence[Sequence[ToolSearchHit]]) -> tuple[ToolSearchHit, ...]:
    """Hits of several queries interleaved by rank, each tool once (at its best place)."""
    best: dict[str, ToolSearchHit] = {}
    for rank in range(max((len(hits) for hits in per_query), default=0)):
        for hits in per_query:
            if rank < len(hits):
                best.setdefault(hits[rank].name, hits[rank])
    return tuple(best.values())


@dataclass(frozen=True)
class SearchResult:
    """What one search (of one or several queries) found: the hits, best first, each a
    tool new to the model (unless named exactly); or the index's error for the model."""

    hits: tuple[ToolSearchHit, ...] = ()
    error: dict[str, Any] | None = None
    total_matches: int = 0
    """How many tools matched before the cut (the largest count among the queries)."""

    @property
    def names(self) -> list[str]:
        """The hits' names (the tools' own names)."""
        return [hit.name for hit in self.hits]


@dataclass(frozen=True)
class CallDecision:
    """What a front door does with one tool call of the model (:meth:`SearchRun.check_call`).

    ``allowed``: run it (``name`` is the tool's own name, mapped back from a wire name);
    otherwise answer ``message`` as the call's result, without running anything.
    """

    name: str
    allowed: bool
    message: str | None = None
    kind: Literal["search", "visible", "discovered_by_call", "undiscovered", "unknown"] = "visible"


class RunOwner(Protocol, Generic[RunT]):
    """What a run needs from the front door's core object
    (:class:`~toolsearch.search.sessions.ToolSearchSessions`): the registry and options,
    and the sinks it reports to. The run never calls the front door itself."""

    registry: SessionRegistry
    options: ToolSearchOptions
    door: str

    @property
    def index(self) -> ToolIndex: ...

    @property
    def search_tool_name(self) -> str: ...

    def search_definition(self) -> ToolDefinition: ...

    @property
    def call_tool_name(self) -> str | None: ...

    def call_definition(self) -> ToolDefinition | None: ...

    def report_search(self, event: ToolSearchEvent, run: RunT, loaded: Sequence[str]) -> None: ...

    def report_calls(
        self,
        run: RunT,
        names: Sequence[str],
        *,
        ok: Sequence[bool] | None = None,
        started: float | None = None,
    ) -> None: ...

    def report_loaded(self, run: RunT, names: Sequence[str]) -> LoadedTools: ...

    def forget_loaded(self, session_id: str) -> None: ...

    @property
    def warm_set(self) -> WarmSetSource | None: ...

    def count_tokens(self, definition: ToolDefinition) -> int: ...
