"""What every index backend shares: per-session snapshots, exact-name lookup, responses.

A backend implements two steps: ``_build_view`` turns one session's tools into whatever it
searches (built once per ``index_tools``), and ``_rank`` scores a query against a view,
restricted to the allowed tools *before* ranking. The base class keeps sessions isolated,
puts an exact tool-name match first, applies ``max_results`` and times the search.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from toolsearch.indexes.text import PreparedTool, prepare_tool
from toolsearch.search.types import (
    SearchMetadata,
    ToolReference,
    ToolSearchRequest,
    ToolSearchResponse,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = ["BaseToolIndex", "SessionTools"]

V = TypeVar("V")


@dataclass(frozen=True)
class SessionTools:
    """An immutable snapshot of one session's tools, in registration order, unique names."""

    tools: tuple[ToolDefinition, ...]
    prepared: tuple[PreparedTool, ...] = field(repr=False, default=())
    by_name: dict[str, int] = field(repr=False, default_factory=dict)
    by_lower_name: dict[str, int] = field(repr=False, default_factory=dict)

    @classmethod
    def of(cls, tools: Sequence[ToolDefinition]) -> SessionTools:
        unique: dict[str, ToolDefinition] = {}
        for tool in tools:
            if not isinstance(tool, ToolDefinition):
                raise TypeError(
                    f"index_tools needs ToolDefinition objects, got {type(tool).__name__}"
                )
            unique.setdefault(tool.name, tool)  # first registration of a name wins
        ordered = tuple(unique.values())
        lower: dict[str, int] = {}
        for i, tool in enumerate(ordered):
            lower.setdefault(tool.name.lower(), i)
        return cls(
            ordered,
            tuple(prepare_tool(t) for t in ordered),
            {t.name: i for i, t in enumerate(ordered)},
            lower,
        )

    def exact(self, query: str) -> int | None:
        """The tool whose name is the query: case-sensitive first, then case-insensitive."""
        text = query.strip()
        found = self.by_name.get(text)
        return found if found is not None else self.by_lower_name.get(text.lower())


class BaseToolIndex(ABC, Generic[V]):
    """Session bookkeeping shared by every backend; thread-safe."""

    search_type: ClassVar[str] = "custom"

    def __init__(self) -> None:
        self._sessions: dict[str, tuple[SessionTools, V]] = {}
        # sessions with the same tools (same fingerprints, same order) share one view
        self._views: dict[tuple[str, ...], list[Any]] = {}  # key -> [view, sessions using it]
        self._view_keys: dict[str, tuple[str, ...]] = {}
        self._lock = threading.RLock()

    # -- the ToolIndex protocol -------------------------------------------------------

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        """Index (or re-index) a session's tools, replacing what it had."""
        snapshot = SessionTools.of(list(tools))
        key = tuple(tool.fingerprint for tool in snapshot.tools)
        with self._lock:
            shared = self._views.get(key)
        view = shared[0] if shared is not None else self._build_view(snapshot)
        with self._lock:
            shared = self._views.setdefault(key, [view, 0])
            shared[1] += 1
            self._release_view(session_id)
            self._sessions[session_id] = (snapshot, shared[0])
            self._view_keys[session_id] = key

    def index_tool(self, session_id: str, tool: ToolDefinition) -> None:
        """Add one tool to a session (replacing a tool of the same name)."""
        with self._lock:
            current = self._sessions.get(session_id)
            existing = [t for t in current[0].tools if t.name != tool.name] if current else []
            self.index_tools(session_id, [*existing, tool])

    def clear_index(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)
            self._release_view(session_id)

    def _release_view(self, session_id: str) -> None:
        """Drop the session's claim on its view; the last session out frees it."""
        key = self._view_keys.pop(session_id, None)
        shared = self._views.get(key) if key is not None else None
        if shared is not None:
            shared[1] -= 1
            if shared[1] <= 0:
                del self._views[key]  # type: ignore[arg-type]

    def search(self, request: ToolSearchRequest) -> ToolSearchResponse:
        started = time.perf_counter()
        entry = self._sessions.get(request.session_id)
        query = request.query if isinstance(request.query, str) else ""
        # lone surrogates (a model's "\ud800" decoded by json) cannot be encoded: replace them
        query = query.encode("utf-8", "replace").decode("utf-8")
        if entry is None or not query.strip():
            return self._response([], 0, query, started)
        snapshot, view = entry
        allowed: list[int] | None = None
        if request.category is not None:
            allowed = [i for i, p in enumerate(snapshot.prepared) if p.category == request.category]
            if not allowed:
                return self._response([], 0, query, started)
        limit = request.limit
        exact = snapshot.exact(query)
        if exact is not None and allowed is not None and exact not in allowed:
            exact = None
        ranked, total = self._rank(view, snapshot, query, limit + 1, allowed)
        hits: list[tuple[int, float | None]] = []
        if exact is not None:
            best = max((s for _, s in ranked), default=None)
            hits.append((exact, best))
            total = max(total, 1) if all(i != exact for i, _ in ranked) else total
        hits.extend((i, s) for i, s in ranked if i != exact)
        references = [
            ToolReference(
                snapshot.tools[i].name,
                snapshot.prepared[i].summary,
                None if score is None else float(score),
            )
            for i, score in hits[:limit]
        ]
        return self._response(references, max(total, len(references)), query, started)

    # -- helpers for backends and callers -----------------------------------------------

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def session_tools(self, session_id: str) -> tuple[ToolDefinition, ...]:
        entry = self._sessions.get(session_id)
        return entry[0].tools if entry else ()

    @abstractmethod
    def _build_view(self, snapshot: SessionTools) -> V:
        """Prepare what ``_rank`` searches for one session."""

    @abstractmethod
    def _rank(
        self,
        view: V,
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        """Best tools first as ``(position in snapshot, score)``, at most ``limit``, only from
        ``allowed`` when given; and how many tools matched in all."""

    def _response(
        self, references: list[ToolReference], total: int, query: str, started: float
    ) -> ToolSearchResponse:
        return ToolSearchResponse(
            tuple(references),
            total,
            SearchMetadata(self.search_type, query, (time.perf_counter() - started) * 1000.0),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sessions={len(self._sessions)})"
