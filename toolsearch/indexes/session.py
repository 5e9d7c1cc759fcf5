"""The session layer: what every index shares, written once, over any :class:`Ranker`.

:class:`SessionIndex` is a ``ToolIndex``. It keeps one immutable :class:`SessionTools`
snapshot per session (unique names, registration order; the first registration of a name
wins) and asks its ranker to ``prepare`` each distinct tool set once: sessions whose tools
have the same fingerprints in the same order share one prepared ranker, released when the
last of them is cleared. A search then

* returns an empty response for an unknown session or a blank query (never raises for a
  query string: lone surrogates are replaced), and reads at most ``MAX_QUERY_LENGTH``
  characters of a query, so no input makes a ranker's work unbounded;
* restricts the ranking to the request's ``category`` *before* ranking;
* puts the tool whose name is the query first (case-sensitive, then case-insensitive),
  with the best score of the ranking;
* leaves out the request's ``exclude`` names (never the exact-name hit). Excluded tools
  are dropped from the finished ranking, not from the statistics or the fusion, so the
  other tools rank exactly as they would without the exclusion;
* clamps ``max_results`` (``None`` means 10) and reports the search type, the query and
  the time taken.

Every backend (regex, BM25, vector, hybrid, reranking, a built catalog) is this layer over
its ranker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.indexes.ranker import Ranker, Ranking, SessionRanker, SessionTools
from toolsearch.indexes.text import clean_text
from toolsearch.search.types import (
    MAX_QUERY_LENGTH,
    SearchMetadata,
    ToolReference,
    ToolSearchRequest,
    ToolSearchResponse,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "MAX_QUERY_LENGTH",
    "SessionIndex",
    "SessionTools",
    "as_ranker",
    "clean_query",
    "order_hits",
]


def clean_query(query: Any) -> str:
    """The query as text a search can encode: non-strings become ``""``, and lone
    surrogates (a model's ``"\\ud800"`` decoded by json) become U+FFFD, the replacement
    character, which no word, term or pattern confuses with anything else (``?`` would turn
    ``q\\ud800`` into the pattern ``q?``)."""
    return clean_text(query) if isinstance(query, str) else ""


def order_hits(
    ranking: Ranking, exact: int | None, excluded: set[int], limit: int
) -> list[tuple[int, float | None]]:
    """The final order of a search's hits: the exact-name hit first (scored as the best
    hit), then the ranking without it and without ``excluded``, at most ``limit``."""
    hits: list[tuple[int, float | None]] = []
    if exact is not None:
        hits.append((exact, max((s for _, s in ranking.hits), default=None)))
    hits.extend(
        (i, s) for i, s in ranking.hits if i != exact and (not excluded or i not in excluded)
    )
    return hits[:limit]


@dataclass
class _Shared:
    """A prepared ranker and how many sessions use it."""

    ranker: SessionRanker
    users: int = 0


class SessionIndex:
    """A ``ToolIndex`` over a :class:`Ranker`; see the module docstring. Thread-safe."""

    def __init__(self, ranker: Ranker) -> None:
        self.ranker = ranker
        self._sessions: dict[str, tuple[SessionTools, _Shared]] = {}
        self._shared: dict[tuple[str, ...], _Shared] = {}
        self._lock = threading.RLock()

    @property
    def search_type(self) -> str:
        return self.ranker.search_type

    # -- the ToolIndex protocol -------------------------------------------------------

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        """Index (or re-index) a session's tools, replacing what it had."""
        snapshot = SessionTools.of(list(tools))
        key = snapshot.fingerprints
        with self._lock:
            shared = self._shared.get(key)
        prepared = shared.ranker if shared is not None else self.ranker.prepare(snapshot)
        with self._lock:
            shared = self._shared.setdefault(key, _Shared(prepared))
            shared.users += 1
            self._release(session_id)
            self._sessions[session_id] = (snapshot, shared)

    def index_tool(self, session_id: str, tool: ToolDefinition) -> None:
        """Add one tool to a session (replacing a tool of the same name)."""
        with self._lock:
            current = self._sessions.get(session_id)
            existing = [t for t in current[0].tools if t.name != tool.name] if current else []
            self.index_tools(session_id, [*existing, tool])

    def clear_index(self, session_id: str) -> None:
        with self._lock:
            self._release(session_id)

    def search(self, request: ToolSearchRequest) -> ToolSearchResponse:
        started = time.perf_counter()
        query = clean_query(request.query)
        text = query[:MAX_QUERY_LENGTH]
        entry = self._sessions.get(request.session_id)
        if entry is None or not text.strip():
            return self._response([], 0, query, started)
        snapshot, shared = entry
        allowed: list[int] | None = None
        if request.category is not None:
            allowed = [i for i, t in enumerate(snapshot.tools) if t.category == request.category]
            if not allowed:
                return self._response([], 0, query, started)
        limit = request.limit
        exact = snapshot.exact(text)
        if exact is not None and allowed is not None and exact not in allowed:
            exact = None
        excluded = snapshot.positions(request.exclude) - {exact}
        # excluded tools still rank (statistics and fusion include them); ask for enough
        depth = limit + len(request.exclude) + 1
        ranking = shared.ranker.rank(text, depth, allowed)
        references = self._references(snapshot, ranking, exact, excluded, limit)
        return self._response(references, max(ranking.total, len(references)), query, started)

    # -- helpers for callers -----------------------------------------------------------

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def session_tools(self, session_id: str) -> tuple[ToolDefinition, ...]:
        entry = self._sessions.get(session_id)
        return entry[0].tools if entry else ()

    def session_ranker(self, session_id: str) -> SessionRanker | None:
        """What the ranker prepared for a session's tools (shared by sessions with the same
        tools), or ``None`` for an unknown session."""
        entry = self._sessions.get(session_id)
        return entry[1].ranker if entry else None

    def prepared_count(self) -> int:
        """How many distinct tool sets are prepared (sessions with the same tools share one)."""
        with self._lock:
            return len(self._shared)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sessions={len(self._sessions)})"

    # -- internals ----------------------------------------------------------------------

    def _release(self, session_id: str) -> None:
        """Drop the session's claim on its prepared ranker; the last session out frees it."""
        entry = self._sessions.pop(session_id, None)
        if entry is None:
            return
        snapshot, shared = entry
        shared.users -= 1
        if shared.users <= 0 and self._shared.get(snapshot.fingerprints) is shared:
            del self._shared[snapshot.fingerprints]

    @staticmethod
    def _references(
        snapshot: SessionTools,
        ranking: Ranking,
        exact: int | None,
        excluded: set[int],
        limit: int,
    ) -> list[ToolReference]:
        return [
            ToolReference(
                snapshot.tools[i].name,
                snapshot.summary(i),
                None if score is None else float(score),
            )
            for i, score in order_hits(ranking, exact, excluded, limit)
        ]

    def _response(
        self, references: list[ToolReference], total: int, query: str, started: float
    ) -> ToolSearchResponse:
        return ToolSearchResponse(
            tuple(references),
            total,
            SearchMetadata(self.search_type, query, (time.perf_counter() - started) * 1000.0),
        )


def as_ranker(part: Any, role: str) -> Ranker:
    """The ranker of an index, or ``part`` itself when it is a ranker: what wrappers take
    (``role`` names the argument in the error)."""
    ranker = part.ranker if isinstance(part, SessionIndex) else part
    if not isinstance(ranker, Ranker):
        raise TypeError(f"{role} must be an index or a Ranker, not {type(part).__name__}")
    return ranker
