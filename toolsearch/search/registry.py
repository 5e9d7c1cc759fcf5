"""``SessionRegistry``: per-session tool-search state over one ``ToolIndex``, with eviction."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from toolsearch.search.eviction import EvictionStrategy, LruEvictionStrategy
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

__all__ = ["SessionRegistry", "SessionState"]


@dataclass
class SessionState:
    """What the registry knows about one session."""

    session_id: str
    fingerprints: frozenset[str] | None = None
    tool_names: tuple[str, ...] = ()
    discovered: list[str] = field(default_factory=list)
    active_requests: int = 0
    index_count: int = 0
    """How many times this session's tools were (re)indexed."""
    tracked: bool = True
    """Whether the eviction strategy sees this session (throwaway sessions are not)."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """Serializes (re)indexing of this session, so the index and ``fingerprints`` agree."""


class SessionRegistry:
    """Sessions of one index: their tools' fingerprints, discovered tool names, and eviction.

    * :meth:`index_tools` indexes a session's tools, and skips the work when the set of
      fingerprints is unchanged;
    * :meth:`mark_discovered` / :meth:`discovered` keep the tools a session found, in
      discovery order (kept when a later request registers fewer tools: the advisor shows
      only those the current request registered);
    * :meth:`session` marks a request as running, so the session is not evicted under it;
    * eviction (``LruEvictionStrategy(1000)`` by default) is evaluated lazily on each
      access and clears the session from the index.
    """

    def __init__(self, index: ToolIndex, eviction_strategy: EvictionStrategy | None = None) -> None:
        self.index = index
        self.eviction_strategy = eviction_strategy or LruEvictionStrategy()
        self._sessions: dict[str, SessionState] = {}
        self._pending: set[str] = set()  # the strategy evicted them while busy
        self._requested: set[str] = set()  # evict_session() was called while busy
        self._lock = threading.RLock()

    # -- requests -------------------------------------------------------------------------

    @contextmanager
    def session(self, session_id: str, *, tracked: bool = True) -> Iterator[SessionState]:
        """Hold a session for the duration of one request."""
        state = self.acquire(session_id, tracked=tracked)
        try:
            yield state
        finally:
            self.release(session_id)

    def acquire(self, session_id: str, *, tracked: bool = True) -> SessionState:
        """Mark a request on the session as running (creating the session if needed).

        ``tracked=False`` keeps a throwaway session out of the eviction strategy, so it
        never pushes a real conversation out of the LRU; drop it with :meth:`evict_session`.
        """
        with self._lock:
            self._evict_expired()
            state = self._sessions.get(session_id)
            if state is None:
                state = self._sessions[session_id] = SessionState(session_id, tracked=tracked)
            self._pending.discard(session_id)  # in use again: the strategy's verdict is stale
            state.active_requests += 1
            if state.tracked:
                self.eviction_strategy.touch(session_id)
            self._evict_expired()
            return state

    def release(self, session_id: str) -> None:
        """The request ended; that counts as use. Evictions deferred for it happen now."""
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                return
            state.active_requests = max(0, state.active_requests - 1)
            if state.active_requests:
                return
            if session_id in self._requested or (
                state.tracked and self.eviction_strategy.evict_after_request(session_id)
            ):
                self._drop(session_id)
            elif state.tracked:
                self._pending.discard(session_id)
                self.eviction_strategy.touch(session_id)
                self._evict_expired()

    # -- tools and discoveries ------------------------------------------------------------

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> bool:
        """Index the session's tools unless the same set is indexed already.

        Returns whether the index was (re)built.
        """
        fingerprints = frozenset(tool.fingerprint for tool in tools)
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                state = self._sessions[session_id] = SessionState(session_id)
                self.eviction_strategy.touch(session_id)
        with state.lock:  # check, index and record as one step per session
            if state.fingerprints == fingerprints:
                return False
            self.index.index_tools(session_id, list(tools))
            with self._lock:
                state.fingerprints = fingerprints
                state.tool_names = tuple(tool.name for tool in tools)
                state.index_count += 1
        return True

    def mark_discovered(self, session_id: str, names: Iterable[str]) -> list[str]:
        """Add names to the session's discoveries (first discovery keeps its place)."""
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                return []
            added = [n for n in dict.fromkeys(names) if n not in state.discovered]
            state.discovered.extend(added)
            return added

    def discovered(self, session_id: str) -> list[str]:
        with self._lock:
            state = self._sessions.get(session_id)
            return list(state.discovered) if state else []

    # -- inspection and eviction -----------------------------------------------------------

    def get(self, session_id: str) -> SessionState | None:
        with self._lock:
            return self._sessions.get(session_id)

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._sessions

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def evict_session(self, session_id: str) -> None:
        """Drop a session now, or when its running request ends."""
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                return
            if state.active_requests:
                self._requested.add(session_id)
            else:
                self._drop(session_id)

    def evict_expired(self) -> list[str]:
        """Apply the eviction strategy now; returns the sessions it dropped."""
        with self._lock:
            return self._evict_expired()

    def _evict_expired(self) -> list[str]:
        dropped = []
        for session_id in self.eviction_strategy.expired():
            state = self._sessions.get(session_id)
            if state is None:
                continue
            if state.active_requests:
                self._pending.add(session_id)
            else:
                self._drop(session_id)
                dropped.append(session_id)
        return dropped

    def _drop(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._pending.discard(session_id)
        self._requested.discard(session_id)
        self.eviction_strategy.remove(session_id)
        self.index.clear_index(session_id)
