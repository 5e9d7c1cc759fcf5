"""``SessionRegistry`` and the eviction strategies: LRU, TTL, composite, never, always;
lazy eviction, no eviction under a running request, re-index skipping, discoveries and
thread safety. Time-based tests use an injected fake clock and never sleep."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import timedelta
from functools import partial

import pytest

from toolsearch import ToolDefinition
from toolsearch.indexes import RegexToolIndex
from toolsearch.search import (
    AlwaysEvictStrategy,
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    NeverEvictStrategy,
    SessionRegistry,
    SessionState,
    ToolIndex,
    ToolSearchRequest,
    ToolSearchResponse,
    TtlEvictionStrategy,
)
from toolsearch.search.registry import session_of_key
from toolsearch.testing import FakeClock, tool_definition

# -- helpers ---------------------------------------------------------------------------


class RecordingIndex:
    """A ``ToolIndex`` that records ``index_tools`` / ``clear_index`` calls and delegates
    the real work to a :class:`RegexToolIndex`.

    The registry indexes each tool set of a session under its own key
    (``session#digest``); ``indexed`` and ``cleared`` record the *session* of each key
    (``keys_cleared`` the keys themselves)."""

    def __init__(self) -> None:
        self.inner = RegexToolIndex()
        self.indexed: list[tuple[str, list[str]]] = []
        self.cleared: list[str] = []
        self.keys_cleared: list[str] = []
        self._lock = threading.Lock()

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        with self._lock:
            self.indexed.append((session_of_key(session_id), [t.name for t in tools]))
        self.inner.index_tools(session_id, tools)

    def index_tool(self, session_id: str, tool: ToolDefinition) -> None:
        self.inner.index_tool(session_id, tool)

    def search(self, request: ToolSearchRequest) -> ToolSearchResponse:
        return self.inner.search(request)

    def clear_index(self, session_id: str) -> None:
        with self._lock:
            self.cleared.append(session_of_key(session_id))
            self.keys_cleared.append(session_id)
        self.inner.clear_index(session_id)

    def session_ids(self) -> list[str]:
        return self.inner.session_ids()

    def index_calls(self, session_id: str) -> int:
        with self._lock:
            return sum(1 for sid, _ in self.indexed if sid == session_id)


td = partial(tool_definition, schema={"type": "object", "properties": {"q": {"type": "string"}}})


TOOLS = [td("weather_lookup", "Current weather for a city."), td("stock_quote", "Stock price.")]


def found(index: RecordingIndex, session_id: str, query: str) -> list[str]:
    """What a search finds among every tool set the index holds for the session."""
    names: dict[str, None] = {}
    for key in index.session_ids():
        if session_of_key(key) == session_id:
            request = ToolSearchRequest(session_id=key, query=query)
            names.update(dict.fromkeys(index.search(request).tool_names))
    return list(names)


def found_in(index: ToolIndex, key: str, query: str) -> list[str]:
    """What a search of one index key finds."""
    return index.search(ToolSearchRequest(session_id=key, query=query)).tool_names


def use(registry: SessionRegistry, *session_ids: str) -> None:
    """One complete request per session, in order (each indexes ``TOOLS``)."""
    for session_id in session_ids:
        with registry.session(session_id):
            registry.index_tools(session_id, TOOLS)


def test_fake_index_and_strategies_satisfy_protocols() -> None:
    assert isinstance(RecordingIndex(), ToolIndex)
    assert isinstance(RegexToolIndex(), ToolIndex)
    for strategy in (
        LruEvictionStrategy(),
        TtlEvictionStrategy(10),
        CompositeEvictionStrategy(NeverEvictStrategy()),
        NeverEvictStrategy(),
        AlwaysEvictStrategy(),
    ):
        assert isinstance(strategy, EvictionStrategy)


# -- LRU ---------------------------------------------------------------------------------


def test_lru_default_is_the_registry_default() -> None:
    assert LruEvictionStrategy().max_sessions == 1000
    registry = SessionRegistry(RegexToolIndex())
    assert isinstance(registry.eviction_strategy, LruEvictionStrategy)
    assert registry.eviction_strategy.max_sessions == 1000


def test_lru_strategy_names_the_least_recently_used_once() -> None:
    lru = LruEvictionStrategy(max_sessions=2)
    lru.touch("a")
    lru.touch("b")
    assert lru.expired() == []
    lru.touch("c")
    assert lru.expired() == ["a"]
    assert lru.expired() == []  # each named once


def test_lru_strategy_access_refreshes_recency() -> None:
    lru = LruEvictionStrategy(max_sessions=2)
    lru.touch("a")
    lru.touch("b")
    lru.touch("a")  # a is now the most recent
    lru.touch("c")
    assert lru.expired() == ["b"]


def test_lru_strategy_remove_frees_a_slot() -> None:
    lru = LruEvictionStrategy(max_sessions=2)
    lru.touch("a")
    lru.touch("b")
    lru.remove("a")
    lru.remove("unknown")  # no error
    lru.touch("c")
    assert lru.expired() == []


@pytest.mark.parametrize("max_sessions", [0, -1])
def test_lru_rejects_max_sessions_below_one(max_sessions: int) -> None:
    with pytest.raises(ValueError, match="max_sessions"):
        LruEvictionStrategy(max_sessions=max_sessions)


def test_lru_eviction_through_registry_clears_index_and_registry() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, LruEvictionStrategy(max_sessions=2))
    for sid in ("a", "b", "c"):
        with registry.session(sid):
            assert registry.index_tools(sid, TOOLS) is True
        assert found(index, sid, "weather") == ["weather_lookup"]
        if sid != "c":
            assert index.cleared == []
    assert "a" not in registry
    assert registry.get("a") is None
    assert sorted(registry.session_ids()) == ["b", "c"]
    assert len(registry) == 2
    assert index.cleared == ["a"]
    assert found(index, "a", "weather") == []
    assert registry.discovered("a") == []
    assert found(index, "b", "weather") == ["weather_lookup"]


def test_lru_access_through_registry_refreshes_recency() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, LruEvictionStrategy(max_sessions=2))
    use(registry, "a", "b", "a", "c")
    assert sorted(registry.session_ids()) == ["a", "c"]
    assert index.cleared == ["b"]


def test_evicted_session_starts_fresh_and_reindexes() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, LruEvictionStrategy(max_sessions=1))
    with registry.session("a"):
        registry.index_tools("a", TOOLS)
        registry.mark_discovered("a", ["weather_lookup"])
    use(registry, "b")  # pushes a out
    assert "a" not in registry
    with registry.session("a") as state:
        assert registry.discovered("a") == []
        assert state.fingerprints is None
        assert registry.index_tools("a", TOOLS) is True
    assert index.index_calls("a") == 2


# -- TTL ---------------------------------------------------------------------------------


def test_ttl_strategy_expires_after_ttl_and_touch_refreshes() -> None:
    clock = FakeClock(1000)
    ttl = TtlEvictionStrategy(10, clock=clock)
    ttl.touch("a")
    ttl.touch("b")
    clock.advance(6)
    ttl.touch("b")  # refreshed at t+6
    assert ttl.expired() == []
    clock.advance(5)  # a unused 11 s, b unused 5 s
    assert ttl.expired() == ["a"]
    assert ttl.expired() == []
    clock.advance(6)
    assert ttl.expired() == ["b"]


def test_ttl_strategy_remove_forgets() -> None:
    clock = FakeClock(1000)
    ttl = TtlEvictionStrategy(10, clock=clock)
    ttl.touch("a")
    ttl.remove("a")
    ttl.remove("unknown")
    clock.advance(100)
    assert ttl.expired() == []


def test_ttl_strategy_touching_another_session_does_not_swallow_an_expiry() -> None:
    clock = FakeClock(1000)
    ttl = TtlEvictionStrategy(10, clock=clock)
    ttl.touch("a")
    clock.advance(20)
    ttl.touch("b")  # a has expired by now; it must still be reported
    assert ttl.expired() == ["a"]


def test_ttl_accepts_timedelta() -> None:
    clock = FakeClock(1000)
    ttl = TtlEvictionStrategy(timedelta(minutes=1), clock=clock)
    assert ttl.ttl == 60.0
    ttl.touch("a")
    clock.advance(59)
    assert ttl.expired() == []
    clock.advance(2)
    assert ttl.expired() == ["a"]


@pytest.mark.parametrize(
    "bad", [0, -1, -0.5, timedelta(0), timedelta(seconds=-5), float("nan")], ids=repr
)
def test_ttl_rejects_invalid_ttl(bad: float | timedelta) -> None:
    with pytest.raises(ValueError, match="ttl"):
        TtlEvictionStrategy(bad)


def test_ttl_eviction_is_lazy_and_happens_on_next_access() -> None:
    clock = FakeClock(1000)
    index = RecordingIndex()
    registry = SessionRegistry(index, TtlEvictionStrategy(10, clock=clock))
    with registry.session("a"):
        registry.index_tools("a", TOOLS)
    clock.advance(11)
    # nothing happens without an access
    assert index.cleared == []
    assert "a" in registry
    assert found(index, "a", "weather") == ["weather_lookup"]
    use(registry, "b")  # the next access evicts a
    assert "a" not in registry
    assert index.cleared == ["a"]
    assert found(index, "a", "weather") == []
    assert registry.session_ids() == ["b"]


def test_ttl_use_refreshes_the_clock_in_registry() -> None:
    clock = FakeClock(1000)
    index = RecordingIndex()
    registry = SessionRegistry(index, TtlEvictionStrategy(10, clock=clock))
    use(registry, "a", "b")
    clock.advance(8)
    use(registry, "a")  # refreshes a
    clock.advance(8)  # a unused 8 s, b unused 16 s
    use(registry, "c")
    assert sorted(registry.session_ids()) == ["a", "c"]
    assert index.cleared == ["b"]


def test_ttl_evict_expired_explicitly() -> None:
    clock = FakeClock(1000)
    index = RecordingIndex()
    registry = SessionRegistry(index, TtlEvictionStrategy(10, clock=clock))
    use(registry, "a", "b")
    clock.advance(5)
    assert registry.evict_expired() == []
    clock.advance(6)
    assert sorted(registry.evict_expired()) == ["a", "b"]
    assert len(registry) == 0
    assert sorted(index.cleared) == ["a", "b"]


def test_ttl_expiry_is_not_lost_when_index_tools_creates_a_session() -> None:
    clock = FakeClock(1000)
    index = RecordingIndex()
    registry = SessionRegistry(index, TtlEvictionStrategy(10, clock=clock))
    with registry.session("a"):
        registry.index_tools("a", TOOLS)
    clock.advance(20)
    registry.index_tools("b", TOOLS)  # an access that creates b while a has expired
    registry.evict_expired()
    assert "a" not in registry
    assert "a" in index.cleared
    assert found(index, "a", "weather") == []


# -- composite ------------------------------------------------------------------------


def test_composite_needs_a_strategy() -> None:
    with pytest.raises(ValueError, match="at least one"):
        CompositeEvictionStrategy()


def test_composite_lru_and_ttl_evicts_when_either_says_so() -> None:
    clock = FakeClock(1000)
    index = RecordingIndex()
    strategy = CompositeEvictionStrategy(
        LruEvictionStrategy(max_sessions=2), TtlEvictionStrategy(10, clock=clock)
    )
    registry = SessionRegistry(index, strategy)
    # LRU says so
    use(registry, "a", "b", "c")
    assert sorted(registry.session_ids()) == ["b", "c"]
    assert index.cleared == ["a"]
    # TTL says so (the LRU is not full after b is gone)
    clock.advance(5)
    use(registry, "c")
    clock.advance(6)  # b unused 11 s, c unused 6 s
    use(registry, "c")
    assert registry.session_ids() == ["c"]
    assert index.cleared == ["a", "b"]
    # the removed sessions were forgotten by both strategies: no repeats later
    clock.advance(100)
    assert registry.evict_expired() == ["c"]
    assert index.cleared == ["a", "b", "c"]
    assert strategy.expired() == []


def test_composite_expired_names_each_session_once() -> None:
    clock = FakeClock(1000)
    strategy = CompositeEvictionStrategy(
        LruEvictionStrategy(max_sessions=1), TtlEvictionStrategy(10, clock=clock)
    )
    strategy.touch("a")
    clock.advance(20)
    strategy.touch("b")  # LRU pushes a out, and a's TTL has run out too
    assert strategy.expired().count("a") == 1


def test_composite_evict_after_request_if_any() -> None:
    assert CompositeEvictionStrategy(
        NeverEvictStrategy(), AlwaysEvictStrategy()
    ).evict_after_request("x")
    assert not CompositeEvictionStrategy(
        NeverEvictStrategy(), LruEvictionStrategy()
    ).evict_after_request("x")


# -- never / always -------------------------------------------------------------------


def test_never_evicts_nothing() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy())
    ids = [f"s{i}" for i in range(50)]
    for sid in ids:
        with registry.session(sid):
            registry.index_tools(sid, TOOLS)
    assert registry.evict_expired() == []
    assert len(registry) == 50
    assert index.cleared == []
    # only an explicit eviction drops a session
    registry.evict_session("s0")
    assert "s0" not in registry
    assert index.cleared == ["s0"]


def test_always_drops_session_when_request_ends_and_next_request_reindexes() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, AlwaysEvictStrategy())
    with registry.session("a") as state:
        assert registry.index_tools("a", TOOLS) is True
        assert state.index_count == 1
        assert "a" in registry  # not while the request runs
        assert index.cleared == []
    assert "a" not in registry
    assert index.cleared == ["a"]
    assert found(index, "a", "weather") == []
    with registry.session("a") as state:
        assert registry.index_tools("a", TOOLS) is True  # same tools, but re-indexed
        assert state.index_count == 1  # a fresh state
    assert index.index_calls("a") == 2
    assert index.cleared == ["a", "a"]


# -- no eviction under a running request ------------------------------------------------


def test_lru_overflow_during_request_keeps_the_session_which_ends_most_recently_used() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, LruEvictionStrategy(max_sessions=2))
    with registry.session("a"):
        registry.index_tools("a", TOOLS)
        use(registry, "b", "c")  # a is the least recently used and overflows
        assert "a" in registry
        assert index.cleared == []
        assert found(index, "a", "weather") == ["weather_lookup"]
        assert registry.evict_expired() == []  # still pending
        assert "a" in registry
    # the request's end counts as use: a is the most recent, b is now the oldest
    assert sorted(registry.session_ids()) == ["a", "c"]
    assert index.cleared == ["b"]
    assert found(index, "a", "weather") == ["weather_lookup"]


def test_ttl_expiry_during_request_does_not_drop_the_session_at_its_end() -> None:
    clock = FakeClock(1000)
    index = RecordingIndex()
    registry = SessionRegistry(index, TtlEvictionStrategy(10, clock=clock))
    with registry.session("a"):
        registry.index_tools("a", TOOLS)
        clock.advance(100)
        use(registry, "b")  # an access while a is expired but busy
        assert registry.evict_expired() == []
        assert "a" in registry
        assert index.cleared == []
        assert registry.mark_discovered("a", ["weather_lookup"]) == ["weather_lookup"]
    assert "a" in registry  # just used: its TTL starts again
    assert index.cleared == []
    clock.advance(11)
    use(registry, "c")
    assert "a" not in registry
    assert "a" in index.cleared


def test_evict_session_during_request_waits_for_the_last_request() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy())
    with registry.session("a") as outer:
        registry.index_tools("a", TOOLS)
        with registry.session("a") as inner:
            assert inner is outer
            assert outer.active_requests == 2
            registry.evict_session("a")
            assert "a" in registry
        assert outer.active_requests == 1
        assert "a" in registry  # one request still running
        assert index.cleared == []
        assert found(index, "a", "weather") == ["weather_lookup"]
    assert "a" not in registry
    assert index.cleared == ["a"]


def test_evict_session_idle_drops_now_and_unknown_is_a_no_op() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy())
    with registry.session("a"):
        registry.index_tools("a", TOOLS)
    registry.evict_session("a")
    assert "a" not in registry
    assert index.cleared == ["a"]
    registry.evict_session("nope")
    assert index.cleared == ["a"]


def test_concurrent_requests_on_same_session_keep_it_while_any_runs() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, LruEvictionStrategy(max_sessions=1))
    registry.acquire("a")
    registry.acquire("a")
    assert registry.get("a") is not None
    assert registry.get("a").active_requests == 2  # type: ignore[union-attr]
    use(registry, "b")  # pushes a out of the LRU
    assert "a" in registry
    assert index.cleared == []
    registry.release("a")  # a request's end is a use: a is the most recent session now
    assert "a" in registry
    assert index.cleared == ["b"]
    registry.release("a")
    assert registry.session_ids() == ["a"]
    assert index.cleared == ["b"]


def test_session_context_manager_releases_on_exception() -> None:
    registry = SessionRegistry(RecordingIndex(), AlwaysEvictStrategy())
    seen: list[SessionState] = []

    def failing_request() -> None:
        with registry.session("a") as state:
            seen.append(state)
            assert state.active_requests == 1
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        failing_request()
    assert seen[0].active_requests == 0
    assert "a" not in registry


def test_session_state_shape() -> None:
    registry = SessionRegistry(RecordingIndex(), NeverEvictStrategy())
    with registry.session("a") as state:
        assert isinstance(state, SessionState)
        assert state.session_id == "a"
        assert state.active_requests == 1
        assert state.index_count == 0
        assert registry.discovered("a") == []
    assert state.active_requests == 0
    assert registry.get("a") is state


# -- index_tools ----------------------------------------------------------------------


def test_index_tools_skips_when_fingerprints_unchanged() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy())
    with registry.session("a") as state:
        assert registry.index_tools("a", TOOLS) is True
        assert index.index_calls("a") == 1
        # equal definitions built anew: same fingerprints
        same = [td(t.name, t.description) for t in TOOLS]
        assert registry.index_tools("a", same) is False
        assert index.index_calls("a") == 1
        assert state.index_count == 1
        # order change of the same tools
        assert registry.index_tools("a", list(reversed(TOOLS))) is False
        assert index.index_calls("a") == 1
        # a description change
        changed = [td("weather_lookup", "Weather forecast for a town."), TOOLS[1]]
        assert registry.index_tools("a", changed) is True
        assert index.index_calls("a") == 2
        assert state.index_count == 2
        assert found(index, "a", "forecast") == ["weather_lookup"]
        assert state.fingerprints == frozenset(t.fingerprint for t in changed)
        assert state.tool_names == ("weather_lookup", "stock_quote")


def test_index_tools_sessions_are_independent() -> None:
    index = RecordingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy())
    assert registry.index_tools("a", TOOLS) is True
    assert registry.index_tools("b", TOOLS) is True  # same tools, other session
    assert index.index_calls("a") == index.index_calls("b") == 1
    assert registry.index_tools("b", [td("calendar_add")]) is True
    assert found(index, "a", "weather") == ["weather_lookup"]
    assert found(index, "a", "calendar") == []
    # b's second tool set has its own key; its first stays indexed beside it
    calendar_key = registry.index_key("b", [td("calendar_add")])
    assert found_in(index, calendar_key, "weather") == []
    assert found_in(index, calendar_key, "calendar") == ["calendar_add"]
    assert found_in(index, registry.index_key("b", TOOLS), "weather") == ["weather_lookup"]
    assert registry.index_keys("b") == [registry.index_key("b", TOOLS), calendar_key]


def test_discoveries_survive_reindexing_with_fewer_tools() -> None:
    registry = SessionRegistry(RecordingIndex(), NeverEvictStrategy())
    tools = [td("alpha"), td("beta"), td("gamma")]
    with registry.session("a"):
        registry.index_tools("a", tools)
        registry.mark_discovered("a", ["gamma", "alpha", "beta"])
        # beta removed, alpha changed, delta added
        registry.index_tools("a", [td("alpha", "changed"), td("gamma"), td("delta")])
        # kept in discovery order; the advisor shows only tools the request registered
        assert registry.discovered("a") == ["gamma", "alpha", "beta"]


# -- discoveries ----------------------------------------------------------------------


def test_mark_discovered_keeps_first_order_and_returns_new_only() -> None:
    registry = SessionRegistry(RecordingIndex(), NeverEvictStrategy())
    with registry.session("a"):
        registry.index_tools("a", [td("x"), td("y"), td("z")])
        assert registry.mark_discovered("a", ["y", "x", "y"]) == ["y", "x"]
        assert registry.mark_discovered("a", ["x", "z", "y"]) == ["z"]
        assert registry.mark_discovered("a", ["z"]) == []
        assert registry.mark_discovered("a", iter(["x"])) == []
        assert registry.discovered("a") == ["y", "x", "z"]
        # the returned list is a copy
        registry.discovered("a").append("w")
        assert registry.discovered("a") == ["y", "x", "z"]


def test_mark_discovered_unknown_session() -> None:
    registry = SessionRegistry(RecordingIndex(), NeverEvictStrategy())
    assert registry.mark_discovered("ghost", ["x"]) == []
    assert registry.discovered("ghost") == []
    assert "ghost" not in registry
    assert len(registry) == 0


def test_discoveries_are_per_session() -> None:
    registry = SessionRegistry(RecordingIndex(), NeverEvictStrategy())
    use(registry, "a", "b")
    registry.mark_discovered("a", ["x"])
    assert registry.discovered("b") == []


# -- thread safety --------------------------------------------------------------------


def test_thirty_two_threads_with_own_sessions() -> None:
    max_sessions, n_threads = 8, 32
    index = RecordingIndex()
    registry = SessionRegistry(index, LruEvictionStrategy(max_sessions=max_sessions))
    barrier = threading.Barrier(n_threads)
    counter_lock = threading.Lock()
    in_flight = 0
    violations: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def tools_of(i: int) -> list[ToolDefinition]:
        return [td(f"t{i}_search", f"Search for session {i}."), td(f"t{i}_fetch")]

    def check_size() -> None:
        with counter_lock:  # no thread starts or finishes a request while we look
            size = len(registry)
            if size > max_sessions + in_flight:
                violations.append((size, in_flight))

    def worker(i: int) -> None:
        nonlocal in_flight
        sid = f"session-{i}"
        try:
            with counter_lock:
                in_flight += 1
            registry.acquire(sid)
            try:
                check_size()
                barrier.wait(timeout=30)  # all 32 requests run at once
                assert registry.index_tools(sid, tools_of(i)) is True
                names = [t.name for t in tools_of(i)]
                assert registry.mark_discovered(sid, names) == names
                assert registry.mark_discovered(sid, names) == []
                assert registry.discovered(sid) == names
                check_size()
            finally:
                registry.release(sid)
                with counter_lock:
                    in_flight -= 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert violations == []
    assert len(registry) <= max_sessions
    assert registry.evict_expired() == []
    survivors = registry.session_ids()
    assert len(survivors) == max_sessions  # exactly the 8 most recent ones remain
    for sid in survivors:
        i = int(sid.split("-")[1])
        assert registry.discovered(sid) == [f"t{i}_search", f"t{i}_fetch"]
        state = registry.get(sid)
        assert state is not None
        assert state.active_requests == 0
        assert found(index, sid, f"t{i}_search")[0] == f"t{i}_search"
    for i in range(n_threads):
        sid = f"session-{i}"
        if sid not in survivors:
            assert sid in index.cleared
            assert found(index, sid, f"t{i}_search") == []
