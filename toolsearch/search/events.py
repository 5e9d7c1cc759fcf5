"""What a search reports to its listeners: one :class:`ToolSearchEvent` per search."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolsearch.chat.messages import ToolSearchHit
from toolsearch.observe import hash_session_id

__all__ = ["SearchListener", "ToolSearchEvent"]


@dataclass(frozen=True)
class ToolSearchEvent:
    """One search, as its listeners receive it (a ``SearchLog`` sink, say): handed over
    inside the search's ``tool_search`` span, once the hits are known.

    ``session_id`` is the conversation's id as given (hash it before storing:
    :attr:`session_hash`); it travels beside ``index_key``, the session's key for the
    run's tool set, and is never parsed out of it. ``hits`` are what the model was shown,
    best first, with the index's scores (tools' own names, not wire names); ``error`` is
    the index's error code when it refused the query.
    """

    timestamp: float
    """Seconds since the epoch when the search started."""
    session_id: str
    index_key: str
    """The session's index key for the run's tool set (``session#digest``)."""
    query: str
    limit: int
    index: str
    """The index's class name (``Bm25ToolIndex``, ``HybridToolIndex``...)."""
    search_type: str
    hits: tuple[ToolSearchHit, ...]
    total_matches: int
    visible_tools: int | None
    """How many tools the model saw on the request that made this search."""
    duration_ms: float
    error: str | None = None
    door: str = ""
    """The front door that searched (``advisor``, ``pydantic-ai``, ``langgraph``...)."""

    @property
    def session_hash(self) -> str:
        """The session id as spans and logs show it (:func:`hash_session_id`)."""
        return hash_session_id(self.session_id)

    @property
    def hit_names(self) -> list[str]:
        return [hit.name for hit in self.hits]


SearchListener = Callable[[ToolSearchEvent], None]
"""Receives every :class:`ToolSearchEvent`; an exception it raises is logged and ignored."""
