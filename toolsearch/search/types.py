"""The ``ToolIndex`` protocol and the request and response types of a tool search."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "MAX_QUERY_LENGTH",
    "DEFAULT_MAX_RESULTS",
    "SearchMetadata",
    "ToolIndex",
    "ToolReference",
    "ToolSearchRequest",
    "ToolSearchResponse",
]

DEFAULT_MAX_RESULTS = 10
"""What ``max_results=None`` means."""


MAX_QUERY_LENGTH = 20_000
"""Characters of a query that a search reads; the rest is ignored. It bounds every ranker's
work whatever a model or user sends (queries of the public benchmark sets are at most
about 19,000 characters, most under 500), and a search log keeps no more of a query. A
pattern-mode regex has its own, smaller limit (``MAX_PATTERN_LENGTH``), which rejects
instead of truncating."""


@dataclass(frozen=True, slots=True)
class ToolReference:
    """One search hit: the tool's name, a one-line summary and a relevance score."""

    tool_name: str
    summary: str = ""
    relevance_score: float | None = None


@dataclass(frozen=True, slots=True)
class ToolSearchRequest:
    """A search within one session's tools. ``max_results=None`` means 10.

    ``category`` restricts the search to one category before ranking. ``exclude`` names
    tools to leave out of the results (the tools a model already has, say); they are
    dropped from the finished ranking, so the other tools rank as they would without it,
    and a tool whose exact name is the query is never excluded.
    """

    session_id: str
    query: str
    max_results: int | None = None
    category: str | None = None
    exclude: frozenset[str] = frozenset()

    @property
    def limit(self) -> int:
        """``max_results`` clamped to at least 1 (10 when unset)."""
        if self.max_results is None:
            return DEFAULT_MAX_RESULTS
        return max(1, int(self.max_results))


@dataclass(frozen=True, slots=True)
class SearchMetadata:
    """How a search ran: the backend, the query as given, and the time it took."""

    search_type: str = ""
    query: str = ""
    search_time_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class ToolSearchResponse:
    """The hits of a search, best first, and how many tools matched in all."""

    tool_references: Sequence[ToolReference] = ()
    total_matches: int = 0
    metadata: SearchMetadata = field(default_factory=SearchMetadata)

    @property
    def tool_names(self) -> list[str]:
        return [ref.tool_name for ref in self.tool_references]


@runtime_checkable
class ToolIndex(Protocol):
    """Indexes each session's tools and searches them; sessions never see each other's tools.

    ``search`` returns an empty response for an unknown or cleared session and, in every
    default configuration, never raises for any query string.
    """

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None: ...

    def index_tool(self, session_id: str, tool: ToolDefinition) -> None: ...

    def search(self, request: ToolSearchRequest) -> ToolSearchResponse: ...

    def clear_index(self, session_id: str) -> None: ...
