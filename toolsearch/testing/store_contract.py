"""The ``SessionStore`` contract: subclass :class:`SessionStoreContract`, implement
``make_store``, and pytest runs every check against your store.

.. code-block:: python

    class TestMyStore(SessionStoreContract):
        def make_store(self, eviction_strategy):
            return MyStore(eviction_strategy=eviction_strategy, clock=self.clock)

Every store object of a test shares one :class:`~toolsearch.testing.FakeClock`
(``self.clock``; a store that reads the time itself gets it, and so do the strategies), so
TTLs and lease expiries are tested without sleeping. A test that asks for a second store
stands for a second process on the same store: a shared store (Redis) gives two objects
over one state; for a store that lives in one process, set ``process_local = True`` and
the test's first store stands for every process (``make_store`` is called once a test).

The contract (``toolsearch/stores/session_store.py``): sessions are created by ``begin``;
the last tool set and the discoveries (in discovery order, each once) are kept; turns are
counted and stamp discoveries and uses; the working set's tool changes are kept (replaced
whole, equal on read, bounded by ``MAX_STORED_CHANGES``) and go with the session; LRU keeps
the most recently used, TTL drops the unused, a composite does both, never keeps all,
always drops when a request ends (not an index call); a held session is never dropped and
its eviction waits until it is idle; each drop is reported once by ``take_dropped``; a
dropped session comes back as a new generation, and a lease of the old one ends as a
no-op; hostile session ids are kept apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import pytest

from toolsearch.chat.options import ToolChange
from toolsearch.search import (
    AlwaysEvictStrategy,
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    NeverEvictStrategy,
    SessionStore,
    StoredChanges,
    StoredTools,
    TtlEvictionStrategy,
)
from toolsearch.stores.session_store import MAX_STORED_CHANGES
from toolsearch.testing.fakes import FakeClock

__all__ = ["SessionStoreContract"]

Clock = Callable[[], float]
StrategyFactory = Callable[[Clock], EvictionStrategy]


def lru(size: int) -> StrategyFactory:
    return lambda clock: LruEvictionStrategy(size)


def ttl(seconds: float) -> StrategyFactory:
    return lambda clock: TtlEvictionStrategy(seconds, clock=clock)


def use(store: SessionStore, session_id: str, *, request: bool = True) -> None:
    """One complete request (or index call) on the session."""
    store.end(store.begin(session_id), request=request)


class SessionStoreContract:
    """Every check of a ``SessionStore``: implement :meth:`make_store` in a ``Test...``
    subclass."""

    clock: FakeClock

    process_local: ClassVar[bool] = False
    """Whether the store lives in one process (in memory): a test's second store is then
    its first one again."""

    def make_store(self, eviction_strategy: EvictionStrategy | None) -> SessionStore:
        """A store with ``eviction_strategy`` (``None``: the store's default), reading the
        time from ``self.clock``. A second call in a test stands for a second process."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_store()")

    @pytest.fixture(autouse=True)
    def _fake_clock(self) -> None:
        self.clock = FakeClock()
        self._first: SessionStore | None = None

    def store(self, strategy: StrategyFactory | None = None) -> SessionStore:
        """:meth:`make_store` with the strategy ``strategy`` builds from the test's clock
        (for a ``process_local`` store: the test's first store, after the first call)."""
        if self.process_local and self._first is not None:
            return self._first
        made = self.make_store(strategy(self.clock) if strategy is not None else None)
        if self._first is None:
            self._first = made
        return made

    # -- state ----------------------------------------------------------------------------

    def test_begin_creates_a_session(self) -> None:
        store = self.store(lambda clock: NeverEvictStrategy())
        assert "a" not in store
        lease = store.begin("a")
        assert lease.session_id == "a"
        assert "a" in store
        assert store.session_ids() == ["a"]
        assert len(store) == 1
        store.end(lease)
        assert "a" in store

    def test_discoveries_keep_their_first_place_and_appear_once(self) -> None:
        store = self.store()
        lease = store.begin("a")
        assert store.discovered("a") == []
        assert store.mark_discovered("a", ["weather", "stocks", "weather"]) == ["weather", "stocks"]
        assert store.mark_discovered("a", ["mail", "stocks"]) == ["mail"]
        assert store.mark_discovered("a", []) == []
        assert store.discovered("a") == ["weather", "stocks", "mail"]
        store.end(lease)
        assert store.discovered("a") == ["weather", "stocks", "mail"]

    def test_an_unknown_session_discovers_nothing(self) -> None:
        store = self.store()
        assert store.mark_discovered("ghost", ["weather"]) == []
        assert store.discovered("ghost") == []
        assert "ghost" not in store

    def test_turns_count_from_one_and_stamp_discoveries_and_uses(self) -> None:
        store = self.store()
        lease = store.begin("a")
        assert store.begin_turn("a") == 1
        store.mark_discovered("a", ["weather", "stocks"])
        assert store.begin_turn("a") == 2
        assert store.begin_turn("a") == 3
        store.mark_discovered("a", ["mail"])
        store.mark_used("a", ["stocks", "never-discovered"])
        assert store.last_used("a") == {"weather": 1, "stocks": 3, "mail": 3}
        store.end(lease)
        assert store.begin_turn("ghost") == 0
        store.mark_used("ghost", ["weather"])
        assert store.last_used("ghost") == {}
        assert "ghost" not in store

    def test_an_unloaded_tool_leaves_the_discoveries_and_comes_back_at_the_end(self) -> None:
        store = self.store()
        lease = store.begin("a")
        store.begin_turn("a")
        store.mark_discovered("a", ["weather", "stocks", "mail"])
        assert store.unload("a", ["stocks", "ghost", "stocks"]) == ["stocks"]
        assert store.unload("a", []) == []
        assert store.discovered("a") == ["weather", "mail"]
        assert store.last_used("a") == {"weather": 1, "mail": 1}
        store.begin_turn("a")
        assert store.mark_discovered("a", ["stocks"]) == ["stocks"]
        assert store.discovered("a") == ["weather", "mail", "stocks"]
        assert store.last_used("a") == {"weather": 1, "mail": 1, "stocks": 2}
        store.end(lease)
        assert store.unload("ghost", ["weather"]) == []

    def test_a_second_store_object_sees_turns_and_unloads(self) -> None:
        first, second = self.store(), self.store()
        lease = first.begin("a")
        first.begin_turn("a")
        first.mark_discovered("a", ["weather", "stocks"])
        assert second.begin_turn("a") == 2
        second.mark_used("a", ["weather"])
        second.unload("a", ["stocks"])
        assert first.last_used("a") == {"weather": 2}
        assert first.discovered("a") == ["weather"]
        first.end(lease)

    def test_the_last_tool_set_is_kept(self) -> None:
        store = self.store()
        assert store.tools("a") is None
        lease = store.begin("a")
        assert store.tools("a") is None
        first = StoredTools(frozenset({"f1", "f2"}), ("weather", "stocks"))
        store.record_tools("a", first)
        assert store.tools("a") == first
        second = StoredTools(frozenset({"f3"}), ("mail",))
        store.record_tools("a", second)
        assert store.tools("a") == second
        store.end(lease)

    def test_the_tool_changes_are_kept_whole(self) -> None:
        store = self.store()
        assert store.tool_changes("a") is None
        lease = store.begin("a")
        assert store.tool_changes("a") is None
        first = StoredChanges(("search",))
        store.record_tool_changes("a", first)
        assert store.tool_changes("a") == first
        second = StoredChanges(
            ("search", "weather", "ключ"),
            (ToolChange("add", ("weather", "stocks"), 4), ToolChange("remove", ("stocks",), 9)),
            ("ключ",),
        )
        store.record_tool_changes("a", second)  # replaces the first, whole
        assert store.tool_changes("a") == second
        store.end(lease)
        assert store.tool_changes("a") == second
        assert store.tool_changes("b") is None

    def test_an_unknown_session_keeps_no_tool_changes(self) -> None:
        store = self.store()
        store.record_tool_changes("ghost", StoredChanges(("search",)))
        assert store.tool_changes("ghost") is None
        assert "ghost" not in store

    def test_the_tool_changes_are_bounded(self) -> None:
        store = self.store()
        lease = store.begin("a")
        most = StoredChanges(("s",), (ToolChange("add", ("a",), 1),) * MAX_STORED_CHANGES)
        store.record_tool_changes("a", most)
        assert store.tool_changes("a") == most
        over = StoredChanges(("s",), (*most.changes, ToolChange("add", ("b",), 2)))
        with pytest.raises(ValueError, match="at most"):
            store.record_tool_changes("a", over)
        assert store.tool_changes("a") == most
        store.end(lease)

    def test_the_tool_changes_go_with_the_session(self) -> None:
        store = self.store(lru(1))
        use(store, "a")
        lease = store.begin("a")
        store.record_tool_changes("a", StoredChanges(("s", "weather")))
        store.end(lease)
        use(store, "b")  # LRU of one: "a" goes, and its changes with it
        assert "a" not in store
        assert store.tool_changes("a") is None
        use(store, "a")  # a new life starts with no changes
        assert store.tool_changes("a") is None

    def test_the_tool_changes_expire_with_the_session(self) -> None:
        store = self.store(ttl(60))
        lease = store.begin("a")
        store.record_tool_changes("a", StoredChanges(("s",)))
        store.end(lease)
        self.clock.advance(61)
        store.evict_expired()
        assert store.tool_changes("a") is None

    def test_sessions_are_isolated(self) -> None:
        store = self.store()
        a, b = store.begin("a"), store.begin("b")
        store.mark_discovered("a", ["weather"])
        store.record_tools("a", StoredTools(frozenset({"f1"}), ("weather",)))
        assert store.discovered("b") == []
        assert store.tools("b") is None
        store.end(a)
        store.end(b)

    def test_hostile_session_ids_are_kept_apart(self) -> None:
        store = self.store()
        ids = ["a", "a#b", "{a}", "a}{", "a:b:state", "ключ", "", "a\nb", '"\\']
        for session_id in ids:
            lease = store.begin(session_id)
            store.mark_discovered(session_id, [f"tool-{session_id}"])
            store.end(lease)
        for session_id in ids:
            assert store.discovered(session_id) == [f"tool-{session_id}"]
        assert sorted(store.session_ids()) == sorted(ids)

    # -- eviction -------------------------------------------------------------------------

    def test_lru_keeps_the_most_recently_used(self) -> None:
        store = self.store(lru(3))
        for session_id in "abc":
            use(store, session_id)
        use(store, "a")  # a is the most recent now; b is the oldest
        use(store, "d")
        assert sorted(store.session_ids()) == ["a", "c", "d"]
        assert store.take_dropped() == ["b"]
        assert store.take_dropped() == []
        use(store, "e")
        assert sorted(store.session_ids()) == ["a", "d", "e"]
        assert store.take_dropped() == ["c"]
        assert store.discovered("c") == []

    def test_a_held_session_is_not_dropped_and_its_end_counts_as_use(self) -> None:
        store = self.store(lru(1))
        held = store.begin("a")
        store.mark_discovered("a", ["weather"])
        use(store, "b")  # a is the oldest, but busy
        assert "a" in store
        assert store.discovered("a") == ["weather"]
        store.end(held)  # a is used now: b is the oldest idle one
        assert store.session_ids() == ["a"]
        assert store.take_dropped() == ["b"]

    def test_ttl_drops_sessions_unused_for_the_ttl(self) -> None:
        store = self.store(ttl(60))
        use(store, "a")
        self.clock.advance(30)
        use(store, "b")
        self.clock.advance(31)  # a unused for 61 s, b for 31 s
        assert store.evict_expired() == ["a"]
        assert store.session_ids() == ["b"]
        assert store.take_dropped() == ["a"]
        self.clock.advance(30)
        use(store, "c")  # any access applies the policy: b is 61 s old
        assert store.session_ids() == ["c"]
        assert store.take_dropped() == ["b"]

    def test_ttl_waits_for_a_held_session(self) -> None:
        store = self.store(ttl(60))
        held = store.begin("a")
        self.clock.advance(120)
        assert store.evict_expired() == []
        assert "a" in store
        store.end(held)  # the end is a use: the clock starts again
        self.clock.advance(59)
        assert store.evict_expired() == []
        self.clock.advance(2)
        assert store.evict_expired() == ["a"]

    def test_composite_applies_size_and_age(self) -> None:
        def both(clock: Clock) -> EvictionStrategy:
            return CompositeEvictionStrategy(
                LruEvictionStrategy(2), TtlEvictionStrategy(60, clock=clock)
            )

        store = self.store(both)
        for session_id in "abc":
            use(store, session_id)
        assert sorted(store.session_ids()) == ["b", "c"]
        self.clock.advance(61)
        use(store, "d")
        assert store.session_ids() == ["d"]
        assert sorted(store.take_dropped()) == ["a", "b", "c"]

    def test_never_keeps_every_session(self) -> None:
        store = self.store(lambda c: NeverEvictStrategy())
        for i in range(20):
            use(store, f"s{i}")
            self.clock.advance(3600)
        assert len(store) == 20
        assert store.evict_expired() == []
        store.evict("s0")
        assert "s0" not in store
        assert store.take_dropped() == ["s0"]

    def test_always_drops_when_a_request_ends_not_an_index_call(self) -> None:
        store = self.store(lambda c: AlwaysEvictStrategy())
        outer = store.begin("a")
        use(store, "a", request=False)  # an index call inside the request
        use(store, "a")  # a nested request: the outer one still holds the session
        assert "a" in store
        store.end(outer)
        assert "a" not in store
        assert store.take_dropped() == ["a"]
        use(store, "b", request=False)
        assert "b" in store

    def test_explicit_eviction_waits_for_the_last_hold(self) -> None:
        store = self.store()
        first, second = store.begin("a"), store.begin("a")
        store.evict("a")
        assert "a" in store
        store.end(first)
        assert "a" in store
        store.end(second)
        assert "a" not in store
        assert store.take_dropped() == ["a"]

    def test_a_session_comes_back_as_a_new_generation(self) -> None:
        store = self.store()
        old = store.begin("a")
        store.mark_discovered("a", ["weather"])
        store.end(old)
        store.evict("a")
        new = store.begin("a")
        assert new.generation != old.generation
        assert store.discovered("a") == []
        store.end(old)  # a lease of the old life: nothing happens
        store.mark_discovered("a", ["stocks"])
        assert store.discovered("a") == ["stocks"]
        store.end(new)
        assert store.discovered("a") == ["stocks"]

    def test_untracked_sessions_do_not_push_tracked_ones_out(self) -> None:
        store = self.store(lru(2))
        use(store, "a")
        use(store, "b")
        for i in range(5):
            lease = store.begin(f"throwaway-{i}", tracked=False)
            store.end(lease)
            store.evict(f"throwaway-{i}")
        assert sorted(store.session_ids()) == ["a", "b"]
        assert sorted(store.take_dropped()) == [f"throwaway-{i}" for i in range(5)]

    def test_two_store_objects_share_the_sessions(self) -> None:
        """Two processes on one store see one state (in memory: one process, one object)."""
        first, second = self.store(lru(2)), self.store(lru(2))
        lease = first.begin("a")
        first.mark_discovered("a", ["weather"])
        assert second.discovered("a") == ["weather"]
        changes = StoredChanges(("s", "weather"), (ToolChange("add", ("weather",), 3),))
        first.record_tool_changes("a", changes)
        assert second.tool_changes("a") == changes
        assert second.mark_discovered("a", ["stocks"]) == ["stocks"]
        assert first.discovered("a") == ["weather", "stocks"]
        first.end(lease)
        use(second, "b")
        use(second, "c")
        assert "a" not in first
        assert sorted(first.session_ids()) == ["b", "c"]
