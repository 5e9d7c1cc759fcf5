"""``SessionStore``: the state of tool-search sessions that must outlive one process.

The :class:`~toolsearch.search.registry.SessionRegistry` splits a session in two:

* what the **store** keeps, because another worker serving the conversation's next request
  needs it: the fingerprints and names of the tool set used last, the tools the model
  discovered (in discovery order) and the turn each was last used on (for unloading idle
  tools), the session's turn count, which requests hold the session (leases), and when it
  was used, for eviction;
* the working set's **tool changes** (:class:`StoredChanges`): the additions and removals of
  the session's tool list, each at its message position, the list the latest request held,
  and the tools handed over in the messages, so that every worker renders the
  conversation's requests with each change at the same place (at most
  :data:`MAX_STORED_CHANGES` changes; the tracker starts over past it);
* what the **registry** keeps in its own process: which tool sets are indexed in this
  process's index, the holds of its running requests on them, and one build lock per
  session.

:class:`InMemorySessionStore` (the default) keeps the state in this process and runs an
:class:`~toolsearch.stores.eviction.EvictionStrategy`;
:class:`~toolsearch.stores.redis_store.RedisSessionStore` keeps it in Redis, shared by every
process pointed at the same server, with the same eviction meanings. One contract suite
(``tests/contracts/test_session_store_contract.py``) runs over both.

A store never evicts a session that holds a live lease (a running request or index call):
its eviction waits until the session is idle. The store reports every session it dropped
through :meth:`SessionStore.take_dropped`, so the registry clears that session's index keys.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from toolsearch.chat.options import ToolChange
from toolsearch.stores.eviction import EvictionStrategy, LruEvictionStrategy

__all__ = [
    "MAX_STORED_CHANGES",
    "InMemorySessionStore",
    "Lease",
    "SessionStore",
    "StoredChanges",
    "StoredTools",
]

MAX_STORED_CHANGES = 256
"""The most tool changes a session keeps: past it, the session's change list starts over
from its current tool list (its next request rewrites the cached prefix once, as a new
conversation would)."""


@dataclass(frozen=True)
class Lease:
    """A hold on a session for one request or index call (:meth:`SessionStore.begin`).

    ``generation`` names this life of the session: it changes when the session was dropped
    and created again, so a process that kept local state for an older life knows to
    discard it.
    """

    session_id: str
    lease_id: str
    generation: str
    tracked: bool = True
    """Whether the session is tracked by eviction (as the store holds it)."""


@dataclass(frozen=True)
class StoredTools:
    """The tool set a session used most recently."""

    fingerprints: frozenset[str]
    names: tuple[str, ...]


@dataclass(frozen=True)
class StoredChanges:
    """A session's tool changes (the working set's
    :class:`~toolsearch.search.working_set.ChangeTracker`), as the store keeps them.

    ``held``: the tool list of the session's latest request (``None`` before the first);
    ``changes``: every addition and removal so far, in order, each at its message position
    (at most :data:`MAX_STORED_CHANGES`); ``carried``: the tools handed over in the
    messages (``injection="results"``), in order."""

    held: tuple[str, ...] | None = None
    changes: tuple[ToolChange, ...] = ()
    carried: tuple[str, ...] = ()


def check_changes(changes: StoredChanges) -> None:
    """Raise ``ValueError`` for a change list over :data:`MAX_STORED_CHANGES`."""
    if len(changes.changes) > MAX_STORED_CHANGES:
        raise ValueError(
            f"a session keeps at most {MAX_STORED_CHANGES} tool changes, not {len(changes.changes)}"
        )


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live: discoveries, the last tool set, leases and eviction."""

    def begin(self, session_id: str, *, tracked: bool = True) -> Lease:
        """Hold the session (created if needed) for one request or index call; counts as
        use. ``tracked=False`` keeps a throwaway session out of eviction by size or age."""

    def end(self, lease: Lease, *, request: bool = True) -> None:
        """Release a hold; counts as use. When the session is idle afterwards, an eviction
        asked for while it was busy happens now, as does the strategy's after-request
        eviction (``request=True`` only)."""

    def record_tools(self, session_id: str, tools: StoredTools) -> None:
        """Remember the tool set the session used last."""

    def tools(self, session_id: str) -> StoredTools | None:
        """The tool set the session used last (``None`` for none or an unknown session)."""

    def record_tool_changes(self, session_id: str, changes: StoredChanges) -> None:
        """Keep the session's tool changes, replacing the earlier ones (an unknown session
        keeps nothing; more than :data:`MAX_STORED_CHANGES` changes: ``ValueError``)."""

    def tool_changes(self, session_id: str) -> StoredChanges | None:
        """The session's tool changes (``None`` for none or an unknown session)."""

    def mark_discovered(self, session_id: str, names: Iterable[str]) -> list[str]:
        """Add discovered names (a first discovery keeps its place); returns those added.
        An unknown session discovers nothing."""

    def discovered(self, session_id: str) -> list[str]:
        """The session's discovered tool names, in discovery order."""

    def begin_turn(self, session_id: str) -> int:
        """Count a new turn of the session (one run of a front door: a user's message and
        the tool loop it starts) and return its number, from 1; 0 for an unknown session.
        Discoveries and uses are stamped with the current turn."""

    def mark_used(self, session_id: str, names: Iterable[str]) -> None:
        """The discovered tools among ``names`` were used (called) on the current turn."""

    def last_used(self, session_id: str) -> dict[str, int]:
        """Each discovered tool's last turn of use: the turn it was discovered on, or a
        later one it was called on."""

    def unload(self, session_id: str, names: Iterable[str]) -> list[str]:
        """Take ``names`` out of the discoveries (a later discovery puts a name back, at
        the end); returns the names that were discovered and are now unloaded."""

    def evict(self, session_id: str) -> None:
        """Drop the session now, or as soon as no lease holds it."""

    def evict_expired(self) -> list[str]:
        """Apply the eviction policy now; returns the sessions dropped."""

    def take_dropped(self) -> list[str]:
        """Sessions this store object dropped since the last call (each named once)."""

    def session_ids(self) -> list[str]:
        """The sessions the store holds."""

    def __contains__(self, session_id: object) -> bool: ...

    def __len__(self) -> int: ...


@dataclass
class _Record:
    generation: str
    tracked: bool
    tools: StoredTools | None = None
    changes: StoredChanges | None = None
    discovered: list[str] = field(default_factory=list)
    turn: int = 0
    used: dict[str, int] = field(default_factory=dict)
    leases: set[str] = field(default_factory=set)


class InMemorySessionStore:
    """Sessions in this process, evicted by an :class:`EvictionStrategy` (LRU of 1,000 by
    default). Thread-safe; eviction is evaluated lazily on each access, never by a thread.
    """

    def __init__(self, eviction_strategy: EvictionStrategy | None = None) -> None:
        self.eviction_strategy = eviction_strategy or LruEvictionStrategy()
        self._records: dict[str, _Record] = {}
        self._requested: set[str] = set()  # to drop once idle (evict, after-request)
        self._dropped: list[str] = []
        self._generations = itertools.count(1)
        self._lock = threading.RLock()

    # -- holds --------------------------------------------------------------------------

    def begin(self, session_id: str, *, tracked: bool = True) -> Lease:
        with self._lock:
            self._evict_expired()
            record = self._records.get(session_id)
            if record is None:
                record = _Record(str(next(self._generations)), tracked)
                self._records[session_id] = record
            lease = Lease(session_id, uuid.uuid4().hex, record.generation, record.tracked)
            record.leases.add(lease.lease_id)
            self._touch(session_id, record)
            return lease

    def end(self, lease: Lease, *, request: bool = True) -> None:
        with self._lock:
            record = self._records.get(lease.session_id)
            if record is None or record.generation != lease.generation:
                return
            record.leases.discard(lease.lease_id)
            session_id = lease.session_id
            if record.leases:  # still held: the end is a use all the same
                self._touch(session_id, record)
                return
            if (
                request
                and record.tracked
                and self.eviction_strategy.evict_after_request(session_id)
            ):
                self._requested.add(session_id)
            if session_id in self._requested:
                self._drop(session_id)
            else:  # a strategy's verdict while it was busy is stale now: the end is a use
                self._touch(session_id, record)

    # -- state ----------------------------------------------------------------------------

    def record_tools(self, session_id: str, tools: StoredTools) -> None:
        with self._lock:
            record = self._records.get(session_id)
            if record is not None:
                record.tools = tools

    def tools(self, session_id: str) -> StoredTools | None:
        with self._lock:
            record = self._records.get(session_id)
            return record.tools if record else None

    def record_tool_changes(self, session_id: str, changes: StoredChanges) -> None:
        check_changes(changes)
        with self._lock:  # kept as given (frozen): this process's tracker reuses it
            record = self._records.get(session_id)
            if record is not None:
                record.changes = changes

    def tool_changes(self, session_id: str) -> StoredChanges | None:
        with self._lock:
            record = self._records.get(session_id)
            return record.changes if record else None

    def mark_discovered(self, session_id: str, names: Iterable[str]) -> list[str]:
        with self._lock:
            record = self._records.get(session_id)
            if record is None:
                return []
            added = [n for n in dict.fromkeys(names) if n not in record.used]
            record.discovered.extend(added)
            record.used.update(dict.fromkeys(added, record.turn))
            return added

    def discovered(self, session_id: str) -> list[str]:
        with self._lock:
            record = self._records.get(session_id)
            return list(record.discovered) if record else []

    def begin_turn(self, session_id: str) -> int:
        with self._lock:
            record = self._records.get(session_id)
            if record is None:
                return 0
            record.turn += 1
            return record.turn

    def mark_used(self, session_id: str, names: Iterable[str]) -> None:
        with self._lock:
            record = self._records.get(session_id)
            if record is not None:
                for name in names:
                    if name in record.used:
                        record.used[name] = record.turn

    def last_used(self, session_id: str) -> dict[str, int]:
        with self._lock:
            record = self._records.get(session_id)
            return dict(record.used) if record else {}

    def unload(self, session_id: str, names: Iterable[str]) -> list[str]:
        with self._lock:
            record = self._records.get(session_id)
            if record is None:
                return []
            gone = [n for n in dict.fromkeys(names) if record.used.pop(n, None) is not None]
            if gone:
                removed = set(gone)
                record.discovered = [n for n in record.discovered if n not in removed]
            return gone

    # -- eviction -------------------------------------------------------------------------

    def evict(self, session_id: str) -> None:
        with self._lock:
            record = self._records.get(session_id)
            if record is None:
                return
            if record.leases:
                self._requested.add(session_id)
            else:
                self._drop(session_id)

    def evict_expired(self) -> list[str]:
        with self._lock:
            return self._evict_expired()

    def take_dropped(self) -> list[str]:
        with self._lock:
            out, self._dropped = list(dict.fromkeys(self._dropped)), []
            return out

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._records)

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._records

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def __repr__(self) -> str:
        return f"InMemorySessionStore({self.eviction_strategy!r})"

    # -- internals (under ``_lock``) ----------------------------------------------------------

    def _touch(self, session_id: str, record: _Record) -> None:
        """Count a use; a touch may push another session out of the strategy, and that
        eviction happens in the same step."""
        if record.tracked:
            self.eviction_strategy.touch(session_id)
            self._evict_expired()

    def _evict_expired(self) -> list[str]:
        dropped = []
        for session_id in self.eviction_strategy.expired():
            record = self._records.get(session_id)
            if record is None:
                continue
            if not record.leases:  # a busy session stays; its end counts as use
                self._drop(session_id)
                dropped.append(session_id)
        return dropped

    def _drop(self, session_id: str) -> None:
        self._records.pop(session_id, None)
        self._requested.discard(session_id)
        self.eviction_strategy.remove(session_id)
        self._dropped.append(session_id)
