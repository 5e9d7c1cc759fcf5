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

What must outlive this process lives in a :class:`~toolsearch.stores.session_store.SessionStore`:
the tools a session discovered, the tool set it used last, which requests hold it (leases)
and eviction. The default :class:`~toolsearch.stores.session_store.InMemorySessionStore` keeps it
here; a :class:`~toolsearch.stores.redis_store.RedisSessionStore` shares it between
processes, so a conversation's next request may go to any worker and still see the tools it
discovered. The registry keeps only this process's side: which tool sets its index holds,
their holds, and one build lock per session.

Eviction drops a whole session: its state, its discoveries and *every* index key it has in
this process. The store decides; the registry clears the index keys of every session the
store reports dropped, under the registry's one lock, and the store never drops a session
while one of its requests runs or one of its tool sets is being indexed (both hold a lease),
so no interleaving leaves an index key the registry does not know (an orphan never freed).
With a shared store, a session dropped by another process is noticed here on its next use
(its lease carries a new generation); this process's copy of sessions it no longer sees is
bounded by ``max_local_sessions``.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from toolsearch.search.types import ToolIndex
from toolsearch.stores.eviction import EvictionStrategy
from toolsearch.stores.session_store import InMemorySessionStore, Lease, SessionStore, StoredTools
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "DEFAULT_MAX_LOCAL_SESSIONS",
    "DEFAULT_MAX_TOOL_SETS",
    "SessionRegistry",
    "SessionState",
    "session_of_key",
    "tool_set_key",
]

DEFAULT_MAX_TOOL_SETS = 4
"""How many distinct tool sets a session keeps indexed at once (least recently used out)."""

DEFAULT_MAX_LOCAL_SESSIONS = 1000
"""With a shared store: how many idle sessions this process keeps indexed at most."""


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
    """What this process knows about one session (the store holds the shared part)."""

    session_id: str
    fingerprints: frozenset[str] | None = None
    """The fingerprints of the tool set used most recently here (``None`` before any)."""
    tool_names: tuple[str, ...] = ()
    """The names of the tool set used most recently here, in registration order."""
    active_requests: int = 0
    """Requests of this process running on the session."""
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
    generation: str = ""
    """The session's life in the store this state belongs to (see ``Lease.generation``)."""
    leases: list[Lease] = field(default_factory=list, repr=False, compare=False)
    """The store leases of this process's running requests."""

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
    * eviction is the store's (``InMemorySessionStore(eviction_strategy)`` by default, an
      LRU of 1,000 sessions without a strategy), evaluated lazily on each access; the
      registry clears every index key of each session the store dropped, in the same
      locked step.

    Pass either ``eviction_strategy`` (for the default in-memory store) or ``store`` (which
    has its own). ``max_tool_sets`` bounds the tool sets one session keeps indexed (see the
    module docstring); it is read on each use, so it may be changed on a live registry.
    """

    def __init__(
        self,
        index: ToolIndex,
        eviction_strategy: EvictionStrategy | None = None,
        *,
        store: SessionStore | None = None,
        max_tool_sets: int = DEFAULT_MAX_TOOL_SETS,
        max_local_sessions: int = DEFAULT_MAX_LOCAL_SESSIONS,
    ) -> None:
        if max_tool_sets < 1:
            raise ValueError("max_tool_sets must be at least 1")
        if max_local_sessions < 1:
            raise ValueError("max_local_sessions must be at least 1")
        if store is not None and eviction_strategy is not None:
            raise TypeError(
                "give eviction_strategy or store, not both: a store evicts by its own "
                "strategy (pass the strategy to the store)"
            )
        self.index = index
        self.store: SessionStore = (
            store if store is not None else InMemorySessionStore(eviction_strategy)
        )
        self.max_tool_sets = max_tool_sets
        self.max_local_sessions = max_local_sessions
        self._sessions: OrderedDict[str, SessionState] = OrderedDict()  # least recent first
        self._lock = threading.RLock()
        self._forget_listeners: list[weakref.WeakMethod[Callable[[str], None]]] = []

    def add_forget_listener(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(session_id)`` whenever this process forgets a session (evicted,
        dropped by the store, pushed out of ``max_local_sessions``), so state kept beside
        the registry per session (the loaded-tools views of every front door sharing it)
        goes with it: without this, each evicted conversation's view stayed in memory up
        to the tracker's own bound of 10,000 sessions whatever the eviction cap (issue 47).

        ``listener`` must be a bound method; it is held weakly (a front door created per
        request and then dropped does not stay alive, nor grow this list, through it).
        """
        with self._lock:
            self._forget_listeners = [ref for ref in self._forget_listeners if ref() is not None]
            self._forget_listeners.append(weakref.WeakMethod(listener))

    @property
    def eviction_strategy(self) -> EvictionStrategy | None:
        """The store's eviction strategy (``None`` if the store does not expose one)."""
        return getattr(self.store, "eviction_strategy", None)

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
            lease = self.store.begin(session_id, tracked=tracked)
            self._sweep()
            state = self._state(lease, tracked=tracked)
            state.leases.append(lease)
            state.active_requests += 1
            return state

    def release(self, session_id: str, tool_sets: Iterable[str] = ()) -> None:
        """The request ended; that counts as use. Evictions deferred for it happen now.

        ``tool_sets`` are the keys the request held (from :meth:`use_tools`).
        """
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None or not state.leases:
                return
            for key in tool_sets:
                entry = state.tool_sets.get(key)
                if entry is not None and entry.holds:
                    entry.holds -= 1
            state.active_requests = max(0, state.active_requests - 1)
            lease = state.leases.pop()
            self._trim(state)
            try:
                self.store.end(lease, request=True)
            finally:
                self._sweep()

    # -- tools and discoveries ------------------------------------------------------------

    def use_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> str:
        """Index a request's tools for the session (unless this set is indexed already),
        hold the key for the running request, and return it.

        Search the returned key; pass it to :meth:`release` when the request ends. Until
        then the key stays indexed whatever other requests of the session register. Call it
        between the request's :meth:`acquire` and :meth:`release`: the request's lease then
        holds the session, and the store is not asked again.
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
            return self.store.mark_discovered(session_id, names)

    def discovered(self, session_id: str) -> list[str]:
        """The session's discoveries, read from the store (shared by its processes)."""
        with self._lock:
            return self.store.discovered(session_id)

    def begin_turn(self, session_id: str) -> int:
        """Count a new turn of the session in the store; its number (0: unknown session)."""
        with self._lock:
            return self.store.begin_turn(session_id)

    def mark_used(self, session_id: str, names: Iterable[str]) -> None:
        """Stamp the discovered tools among ``names`` with the session's current turn."""
        with self._lock:
            self.store.mark_used(session_id, names)

    def last_used(self, session_id: str) -> dict[str, int]:
        """Each discovered tool's last turn of use (store)."""
        with self._lock:
            return self.store.last_used(session_id)

    def unload(self, session_id: str, names: Iterable[str]) -> list[str]:
        """Take ``names`` out of the session's discoveries (store); those that were in."""
        with self._lock:
            return self.store.unload(session_id, names)

    # -- inspection and eviction -----------------------------------------------------------

    def get(self, session_id: str) -> SessionState | None:
        """This process's state of the session (``None`` if it has none)."""
        with self._lock:
            return self._sessions.get(session_id)

    def session_ids(self) -> list[str]:
        """The sessions the store holds (with a shared store: those of every process)."""
        with self._lock:
            return self.store.session_ids()

    def index_keys(self, session_id: str | None = None) -> list[str]:
        """The index keys of one session (least recently used first), or of all sessions."""
        with self._lock:
            if session_id is not None:
                state = self._sessions.get(session_id)
                return state.index_keys if state else []
            return [key for state in self._sessions.values() for key in state.tool_sets]

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self.store

    def __len__(self) -> int:
        with self._lock:
            return len(self.store)

    def evict_session(self, session_id: str) -> None:
        """Drop a session now, or when its running requests (and index calls) end."""
        with self._lock:
            try:
                self.store.evict(session_id)
            finally:
                self._sweep()

    def evict_expired(self) -> list[str]:
        """Apply the eviction strategy now; returns the sessions it dropped."""
        with self._lock:
            try:
                return self.store.evict_expired()
            finally:
                self._sweep()

    # -- internals (``_lock`` guards every registry field; ``state.lock`` only builds) ------

    def _state(self, lease: Lease, *, tracked: bool = True) -> SessionState:
        """This process's state for the session's current life, created if needed; call
        under ``_lock``. A state of an older life (the session was dropped elsewhere and
        created again) is replaced, keeping tool sets that running requests still hold."""
        session_id = lease.session_id
        state = self._sessions.get(session_id)
        if state is not None and state.generation != lease.generation:
            if self._busy(state):
                state.generation = lease.generation
            else:
                self._forget(session_id)
                state = None
        if state is None:
            state = SessionState(session_id, tracked=tracked, generation=lease.generation)
            self._sessions[session_id] = state
        self._sessions.move_to_end(session_id)
        self._bound_local(keep=session_id)
        return state

    def _index(
        self, session_id: str, tools: Sequence[ToolDefinition], *, hold: bool
    ) -> tuple[str, bool]:
        tools = list(tools)
        fingerprints = frozenset(tool.fingerprint for tool in tools)
        names = tuple(tool.name for tool in tools)
        key = tool_set_key(session_id, fingerprints)
        with self._lock:
            state_or_none = self._sessions.get(session_id)
            lease: Lease | None = None
            if not hold or state_or_none is None or not state_or_none.leases:
                # the index call holds the session itself, unless it is the running
                # request's own (``use_tools`` inside ``acquire``): its lease holds it
                lease = self.store.begin(session_id)
                self._sweep()
                state_or_none = self._state(lease)
            state = state_or_none
            state.indexing += 1
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
                if (state.fingerprints, state.tool_names) != (fingerprints, names):
                    self.store.record_tools(session_id, StoredTools(fingerprints, names))
                state.fingerprints = fingerprints
                state.tool_names = names
        finally:
            with self._lock:
                state.indexing -= 1
                self._trim(state, keep=key)
                if lease is not None:
                    try:
                        self.store.end(lease, request=False)
                    finally:
                        self._sweep()
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

    def _sweep(self) -> None:
        """Clear the index keys of every session the store dropped; call under ``_lock``."""
        for session_id in self.store.take_dropped():
            self._forget(session_id)

    def _bound_local(self, keep: str) -> None:
        """With a shared store, forget the least recently used idle sessions beyond
        ``max_local_sessions`` here (their shared state stays in the store); the default
        in-memory store reports every drop, so this process holds no more than it does."""
        if isinstance(self.store, InMemorySessionStore):
            return
        excess = len(self._sessions) - self.max_local_sessions
        idle = [s for s, st in self._sessions.items() if s != keep and not self._busy(st)]
        for session_id in idle:
            if excess <= 0:
                break
            self._forget(session_id)
            excess -= 1

    def _forget(self, session_id: str) -> None:
        """Forget this process's state of the session, clear all its index keys, and tell
        the forget listeners (:meth:`add_forget_listener`)."""
        state = self._sessions.pop(session_id, None)
        for ref in self._forget_listeners:
            listener = ref()
            if listener is not None:
                listener(session_id)
        if state is None:
            return
        keys = list(state.tool_sets)
        state.tool_sets.clear()
        for key in keys:
            self.index.clear_index(key)
