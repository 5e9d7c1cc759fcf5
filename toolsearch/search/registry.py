"""``SessionRegistry``: per-session tool-search state over one ``ToolIndex``, with eviction.

One session (a conversation) may run several requests at once, and they may register
different tools (a sub-agent with fewer tools, a request that adds one). So the index is
keyed by **(session, tool set)**: each distinct tool set of a session lives under its own
index key, ``f"{session_id}#{digest}"`` (:func:`tool_set_key`), and a request searches the
key of its own tools. Concurrent requests with different tool sets then never overwrite
each other's tools (no empty searches, no re-index storm), and each distinct tool set is
indexed once per session. This costs little: the index shares the prepared work of every
key with the same tools. What the model discovered stays per session (per conversation),
whatever tool set found it.

The keys of one session are a small LRU (``max_tool_sets``, 4 by default), so a client that
sends a new tool set on every request cannot grow the index without limit: the least
recently used tool set is cleared from the index when a fifth arrives, unless a running
request still searches it (a tool set in use is never cleared; the LRU may then hold more
for as long as those requests run).

Eviction drops a whole session: its state, its discoveries and *every* index key it has.
The decision and the clearing happen under the registry's one lock, and a session is never
dropped while one of its requests runs or while one of its tool sets is being indexed, so
no interleaving leaves an index key the registry does not know (an orphan never freed).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from toolsearch.search.eviction import EvictionStrategy, LruEvictionStrategy
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "DEFAULT_MAX_TOOL_SETS",
    "SessionRegistry",
    "SessionState",
    "session_of_key",
    "tool_set_key",
]

DEFAULT_MAX_TOOL_SETS = 4
"""How many distinct tool sets a session keeps indexed at once (least recently used out)."""


def tool_set_key(session_id: str, fingerprints: Iterable[str]) -> str:
    """The index key of one tool set of a session: ``f"{session_id}#{digest}"``.

    The digest is over the *set* of tool fingerprints (order and repeats do not matter), 32
    hex digits of sha256. Every key ends in ``#`` and the digest, so the key names its
    session unambiguously even when a session id contains ``#`` (:func:`session_of_key`).
    """
    digest = hashlib.sha256("\n".join(sorted(set(fingerprints))).encode()).hexdigest()
    return f"{session_id}#{digest[:32]}"


def session_of_key(key: str) -> str:
    """The session id of an index key made by :func:`tool_set_key`."""
    return key.rsplit("#", 1)[0]


@dataclass
class _ToolSet:
    """One indexed tool set of a session."""

    key: str
    fingerprints: frozenset[str]
    holds: int = 0
    """Running requests that search this key (it is not cleared while any does)."""


@dataclass
class SessionState:
    """What the registry knows about one session."""

    session_id: str
    fingerprints: frozenset[str] | None = None
    """The fingerprints of the tool set used most recently (``None`` before any)."""
    tool_names: tuple[str, ...] = ()
    """The names of the tool set used most recently, in registration order."""
    discovered: list[str] = field(default_factory=list)
    active_requests: int = 0
    index_count: int = 0
    """How many times a tool set of this session was indexed (once per distinct set, again
    only after the set was pushed out of the session's LRU or the session was evicted)."""
    tracked: bool = True
    """Whether the eviction strategy sees this session (throwaway sessions are not)."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """Serializes the indexing of this session's new tool sets (each is indexed once)."""
    tool_sets: OrderedDict[str, _ToolSet] = field(
        default_factory=OrderedDict, repr=False, compare=False
    )
    """Index key -> tool set, least recently used first."""
    indexing: int = 0
    """Index calls in flight for this session (it is not evicted under them)."""

    @property
    def index_keys(self) -> list[str]:
        """The index keys of this session's tool sets, least recently used first."""
        return list(self.tool_sets)


class SessionRegistry:
    """Sessions of one index: their tool sets, discovered tool names, and eviction.

    * :meth:`use_tools` indexes a request's tools under the session's key for that tool
      set (once per distinct set), holds the key for the running request and returns it;
      the request searches that key and hands it back to :meth:`release`;
      :meth:`index_tools` is the same without the hold;
    * :meth:`mark_discovered` / :meth:`discovered` keep the tools a session found, in
      discovery order, shared by all its tool sets (kept when a later request registers
      fewer tools: the advisor shows only those the current request registered);
    * :meth:`session` (:meth:`acquire` / :meth:`release`) marks a request as running, so
      the session is not evicted under it;
    * eviction (``LruEvictionStrategy(1000)`` by default) is evaluated lazily on each
      access and clears every index key of the session, in the same locked step that
      decides it.

    ``max_tool_sets`` bounds the tool sets one session keeps indexed (see the module
    docstring); it is read on each use, so it may be changed on a live registry.
    """

    def __init__(
        self,
        index: ToolIndex,
        eviction_strategy: EvictionStrategy | None = None,
        *,
        max_tool_sets: int = DEFAULT_MAX_TOOL_SETS,
    ) -> None:
        if max_tool_sets < 1:
            raise ValueError("max_tool_sets must be at least 1")
        self.index = index
        self.eviction_strategy = eviction_strategy or LruEvictionStrategy()
        self.max_tool_sets = max_tool_sets
        self._sessions: dict[str, SessionState] = {}
        self._pending: set[str] = set()  # the strategy evicted them while busy
        self._requested: set[str] = set()  # to drop once idle (evict_session, after-request)
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
            state = self._state(session_id, tracked=tracked)
            self._pending.discard(session_id)  # in use again: the strategy's verdict is stale
            state.active_requests += 1
            self._touch(state)
            return state

    def release(self, session_id: str, tool_sets: Iterable[str] = ()) -> None:
        """The request ended; that counts as use. Evictions deferred for it happen now.

        ``tool_sets`` are the keys the request held (from :meth:`use_tools`).
        """
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                return
            for key in tool_sets:
                entry = state.tool_sets.get(key)
                if entry is not None and entry.holds:
                    entry.holds -= 1
            state.active_requests = max(0, state.active_requests - 1)
            if (
                not state.active_requests
                and state.tracked
                and self.eviction_strategy.evict_after_request(session_id)
            ):
                self._requested.add(session_id)
            self._trim(state)
            self._settle(state)

    # -- tools and discoveries ------------------------------------------------------------

    def use_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> str:
        """Index a request's tools for the session (unless this set is indexed already),
        hold the key for the running request, and return it.

        Search the returned key; pass it to :meth:`release` when the request ends. Until
        then the key stays indexed whatever other requests of the session register.
        """
        return self._index(session_id, tools, hold=True)[0]

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> bool:
        """Index the session's tools unless the same set is indexed already (no hold).

        Returns whether the index was built. The key is :meth:`index_key`.
        """
        return self._index(session_id, tools, hold=False)[1]

    @staticmethod
    def index_key(session_id: str, tools: Iterable[ToolDefinition]) -> str:
        """The index key under which the session's tool set ``tools`` is indexed."""
        return tool_set_key(session_id, (tool.fingerprint for tool in tools))

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

    def index_keys(self, session_id: str | None = None) -> list[str]:
        """The index keys of one session (least recently used first), or of all sessions."""
        with self._lock:
            if session_id is not None:
                state = self._sessions.get(session_id)
                return state.index_keys if state else []
            return [key for state in self._sessions.values() for key in state.tool_sets]

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._sessions

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def evict_session(self, session_id: str) -> None:
        """Drop a session now, or when its running requests (and index calls) end."""
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                return
            if self._busy(state):
                self._requested.add(session_id)
            else:
                self._drop(session_id)

    def evict_expired(self) -> list[str]:
        """Apply the eviction strategy now; returns the sessions it dropped."""
        with self._lock:
            return self._evict_expired()

    # -- internals (``_lock`` guards every registry field; ``state.lock`` only builds) ------

    def _state(self, session_id: str, *, tracked: bool = True) -> SessionState:
        """The session's state, created if needed; call under ``_lock``."""
        state = self._sessions.get(session_id)
        if state is None:
            state = self._sessions[session_id] = SessionState(session_id, tracked=tracked)
        return state

    def _touch(self, state: SessionState) -> None:
        """Count a use of a busy session; call under ``_lock``. A touch may push another
        session out of the strategy: that eviction happens in the same step."""
        if state.tracked:
            self.eviction_strategy.touch(state.session_id)
            self._evict_expired()

    def _index(
        self, session_id: str, tools: Sequence[ToolDefinition], *, hold: bool
    ) -> tuple[str, bool]:
        tools = list(tools)
        fingerprints = frozenset(tool.fingerprint for tool in tools)
        names = tuple(tool.name for tool in tools)
        key = tool_set_key(session_id, fingerprints)
        with self._lock:
            self._evict_expired()
            state = self._state(session_id)
            state.indexing += 1  # from here on the session is not dropped under us
            self._touch(state)
            entry = self._take(state, key, hold)
        built = False
        try:
            if entry is None:
                with state.lock:  # one build per new tool set, even when requests race
                    with self._lock:
                        entry = self._take(state, key, hold)
                    if entry is None:
                        try:
                            self.index.index_tools(key, tools)
                        except BaseException:
                            with self._lock:  # leave nothing half-indexed behind
                                self.index.clear_index(key)
                            raise
                        built = True
                        with self._lock:
                            state.tool_sets[key] = _ToolSet(key, fingerprints, holds=int(hold))
                            state.index_count += 1
            with self._lock:
                state.fingerprints = fingerprints
                state.tool_names = names
        finally:
            with self._lock:
                state.indexing -= 1
                self._trim(state, keep=key)
                self._settle(state)
        return key, built

    @staticmethod
    def _take(state: SessionState, key: str, hold: bool) -> _ToolSet | None:
        """The indexed tool set under ``key`` (most recent now, held if asked) or ``None``;
        call under ``_lock``: the look-up and the hold are one step, so no trim comes
        between them."""
        entry = state.tool_sets.get(key)
        if entry is not None:
            state.tool_sets.move_to_end(key)
            entry.holds += int(hold)
        return entry

    def _trim(self, state: SessionState, keep: str | None = None) -> None:
        """Clear the session's least recently used tool sets beyond ``max_tool_sets`` that
        no running request holds (``keep``: the one just used); call under ``_lock``."""
        excess = len(state.tool_sets) - max(1, self.max_tool_sets)
        if excess <= 0:
            return
        idle = [k for k, entry in state.tool_sets.items() if not entry.holds and k != keep]
        for key in idle[:excess]:
            del state.tool_sets[key]
            self.index.clear_index(key)

    @staticmethod
    def _busy(state: SessionState) -> bool:
        return bool(state.active_requests or state.indexing)

    def _settle(self, state: SessionState) -> None:
        """After a request or an index call ended: if the session is idle now, carry out
        a deferred eviction, else count the end as use; call under ``_lock``."""
        session_id = state.session_id
        if self._busy(state) or self._sessions.get(session_id) is not state:
            return
        if session_id in self._requested:
            self._drop(session_id)
        else:
            self._pending.discard(session_id)
            self._touch(state)

    def _evict_expired(self) -> list[str]:
        dropped = []
        for session_id in self.eviction_strategy.expired():
            state = self._sessions.get(session_id)
            if state is None:
                continue
            if self._busy(state):
                self._pending.add(session_id)
            else:
                self._drop(session_id)
                dropped.append(session_id)
        return dropped

    def _drop(self, session_id: str) -> None:
        """Forget the session and clear all its index keys, in one step under ``_lock``."""
        state = self._sessions.pop(session_id, None)
        self._pending.discard(session_id)
        self._requested.discard(session_id)
        self.eviction_strategy.remove(session_id)
        if state is None:
            return
        keys = list(state.tool_sets)
        state.tool_sets.clear()
        for key in keys:
            self.index.clear_index(key)
