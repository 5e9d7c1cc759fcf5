"""What only the Redis session store has: leases that run out, keys that expire, errors
when Redis is gone, and two registries (two processes' views) on one store.

The behaviour both stores share is the contract suite's
(``tests/contracts/test_session_store_contract.py``). These tests use a real Redis server
(``REDIS_URL``, or one started for the run).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from services import free_port

from toolsearch import ToolDefinition
from toolsearch.errors import SessionStoreError
from toolsearch.indexes import RegexToolIndex
from toolsearch.search import (
    AlwaysEvictStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    RedisSessionStore,
    SessionRegistry,
    ToolSearchRequest,
    TtlEvictionStrategy,
)
from toolsearch.testing import FakeClock


@pytest.fixture
def namespace(redis_url: str) -> Iterator[str]:
    name = f"redis-store-{uuid.uuid4().hex[:12]}"
    yield name
    RedisSessionStore(redis_url, namespace=name).clear()


def store_of(
    redis_url: str, namespace: str, clock: FakeClock, **options: object
) -> RedisSessionStore:
    return RedisSessionStore(redis_url, namespace=namespace, clock=clock, **options)  # type: ignore[arg-type]


TOOLS = [
    ToolDefinition(name="weather_lookup", description="Weather forecast for a city."),
    ToolDefinition(name="stock_quote", description="Latest stock price for a ticker."),
]


def test_a_crashed_workers_lease_runs_out(redis_url: str, namespace: str) -> None:
    clock = FakeClock(5_000_000)
    store = store_of(
        redis_url, namespace, clock, eviction_strategy=LruEvictionStrategy(1), lease_seconds=30
    )
    store.begin("a")  # the worker dies: this lease never ends
    store.end(store.begin("b"))
    assert "a" in store  # still held
    clock.now += 31
    store.end(store.begin("c"))
    assert "a" not in store
    assert sorted(store.take_dropped()) == ["a", "b"]


def test_keys_expire_on_their_own_under_a_ttl(redis_url: str, namespace: str) -> None:
    store = RedisSessionStore(
        redis_url, namespace=namespace, eviction_strategy=TtlEvictionStrategy(60), lease_seconds=10
    )
    lease = store.begin("a")
    store.mark_discovered("a", ["weather"])
    store.end(lease)
    keys = store.client.keys(f"{namespace}:{{*")
    assert sorted(key.rsplit(":", 1)[1] for key in keys) == ["found", "seen", "state"]
    for key in keys:  # the ttl and one lease: a backstop for a session no sweep reaches
        assert 60_000 < store.client.pttl(key) <= 70_000


def test_a_crashed_workers_session_expires_under_always_evict(
    redis_url: str, namespace: str
) -> None:
    """AlwaysEvictStrategy drops a session when its request ends; a worker that crashes
    mid-request never ends it, and its keys had no expiry (issue 34, item 8)."""
    store = RedisSessionStore(
        redis_url, namespace=namespace, eviction_strategy=AlwaysEvictStrategy(), lease_seconds=10
    )
    store.begin("a")  # the worker dies here
    store.mark_discovered("a", ["weather"])
    keys = store.client.keys(f"{namespace}:{{*")
    assert keys
    for key in keys:
        assert 0 < store.client.pttl(key) <= 10_000


def test_a_session_has_one_hash_tag(redis_url: str, namespace: str) -> None:
    store = RedisSessionStore(redis_url, namespace=namespace)
    lease = store.begin("conversation {42}")
    store.mark_discovered("conversation {42}", ["weather"])
    tags = {key.split("{", 1)[1].split("}", 1)[0] for key in store.client.keys(f"{namespace}:{{*")}
    assert len(tags) == 1
    store.end(lease)


def test_an_unreachable_redis_is_a_session_store_error_without_the_password() -> None:
    url = f"redis://user:s3cret@127.0.0.1:{free_port()}/0"
    store = RedisSessionStore(url, retries=1)
    with pytest.raises(SessionStoreError) as raised:
        store.begin("a")
    message = str(raised.value)
    assert "127.0.0.1" in message
    assert "s3cret" not in message
    assert "ConnectionError" in message


def test_only_built_in_strategies_are_accepted(redis_url: str) -> None:
    class Custom(LruEvictionStrategy):
        pass

    class Odd:
        def touch(self, session_id: str) -> None: ...
        def remove(self, session_id: str) -> None: ...
        def expired(self) -> list[str]:
            return []

        def evict_after_request(self, session_id: str) -> bool:
            return False

    RedisSessionStore(redis_url, eviction_strategy=Custom(3))  # a subclass keeps its meaning
    odd: EvictionStrategy = Odd()
    with pytest.raises(TypeError, match="built-in strategies"):
        RedisSessionStore(redis_url, eviction_strategy=odd)


def test_bad_arguments_are_refused(redis_url: str) -> None:
    with pytest.raises(TypeError, match="url or a client"):
        RedisSessionStore()
    with pytest.raises(ValueError, match="lease_seconds"):
        RedisSessionStore(redis_url, lease_seconds=0)
    with pytest.raises(ValueError, match="namespace"):
        RedisSessionStore(redis_url, namespace="a{b}")


def test_two_registries_share_discoveries_but_index_on_their_own(
    redis_url: str, namespace: str
) -> None:
    """Two processes: each indexes the tools in its own index; the discoveries are shared."""
    clock = FakeClock(5_000_000)
    here = SessionRegistry(RegexToolIndex(), store=store_of(redis_url, namespace, clock))
    there = SessionRegistry(RegexToolIndex(), store=store_of(redis_url, namespace, clock))
    with here.session("a"):
        key = here.use_tools("a", TOOLS)
        hits = here.index.search(ToolSearchRequest(key, "weather"))
        here.mark_discovered("a", [ref.tool_name for ref in hits.tool_references])
    with there.session("a") as state:
        assert there.discovered("a") == ["weather_lookup"]
        assert there.use_tools("a", TOOLS) == key
        assert state.index_count == 1  # indexed in this process too
    assert here.store.tools("a") is not None
    assert "a" in there
    assert "a" in here


def test_a_session_dropped_elsewhere_is_rebuilt_here(redis_url: str, namespace: str) -> None:
    clock = FakeClock(5_000_000)
    index = RegexToolIndex()
    here = SessionRegistry(index, store=store_of(redis_url, namespace, clock))
    there = SessionRegistry(RegexToolIndex(), store=store_of(redis_url, namespace, clock))
    here.index_tools("a", TOOLS)
    here.mark_discovered("a", ["weather_lookup"])
    old_key = here.index_keys("a")[0]
    there.evict_session("a")  # another process drops it
    with here.session("a") as state:
        assert here.discovered("a") == []
        assert state.index_count == 0  # the old life's index keys were cleared here
        assert here.index_keys("a") == []
    assert not index.search(ToolSearchRequest(old_key, "weather")).tool_references


def test_this_process_keeps_at_most_max_local_sessions(redis_url: str, namespace: str) -> None:
    store = RedisSessionStore(redis_url, namespace=namespace)
    registry = SessionRegistry(RegexToolIndex(), store=store, max_local_sessions=3)
    for i in range(6):
        registry.index_tools(f"s{i}", TOOLS)
    assert len(registry.index_keys()) == 3  # the three most recent, here
    assert len(registry) == 6  # the store keeps every session
    with registry.session("s0"):
        assert registry.use_tools("s0", TOOLS)  # re-indexed here on its next use


def test_a_store_and_a_strategy_are_not_both_given(redis_url: str) -> None:
    with pytest.raises(TypeError, match="not both"):
        SessionRegistry(
            RegexToolIndex(),
            LruEvictionStrategy(),
            store=RedisSessionStore(redis_url),
        )
