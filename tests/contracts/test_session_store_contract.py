"""The ``SessionStore`` contract (``toolsearch.testing.SessionStoreContract``) over the
in-memory store and Redis (a real server: the ``redis_url`` fixture).

The Redis stores of a test share a fresh namespace, so two store objects stand for two
processes on one Redis; the in-memory store is one object per test (one process).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from toolsearch.search import (
    EvictionStrategy,
    InMemorySessionStore,
    RedisSessionStore,
    SessionStore,
)
from toolsearch.testing import SessionStoreContract


class TestInMemory(SessionStoreContract):
    process_local = True  # one process has one in-memory store: "another process" is it

    def make_store(self, eviction_strategy: EvictionStrategy | None) -> SessionStore:
        return InMemorySessionStore(eviction_strategy)


class TestRedis(SessionStoreContract):
    @pytest.fixture(autouse=True)
    def _namespace(self, redis_url: str) -> Iterator[None]:
        self.url = redis_url
        self.namespace = f"contract-{uuid.uuid4().hex[:12]}"
        self.made: list[RedisSessionStore] = []
        yield
        if self.made:
            self.made[0].clear()

    def make_store(self, eviction_strategy: EvictionStrategy | None) -> SessionStore:
        store = RedisSessionStore(
            self.url,
            namespace=self.namespace,
            clock=self.clock,
            eviction_strategy=eviction_strategy,
        )
        self.made.append(store)
        return store
