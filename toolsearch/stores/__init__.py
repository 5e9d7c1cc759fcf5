"""Session stores: the state of tool-search sessions that must outlive one request.

The seam and the in-memory store (:mod:`.session_store`), the Redis store shared by every
process (:mod:`.redis_store`, ``toolsearch[redis]``) and when a session is dropped
(:mod:`.eviction`). :mod:`toolsearch.search` hands on the same names.
"""

from toolsearch.stores.eviction import (
    AlwaysEvictStrategy,
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    NeverEvictStrategy,
    TtlEvictionStrategy,
)
from toolsearch.stores.redis_store import RedisSessionStore
from toolsearch.stores.session_store import (
    InMemorySessionStore,
    Lease,
    SessionStore,
    StoredChanges,
    StoredTools,
)

__all__ = [
    "AlwaysEvictStrategy",
    "CompositeEvictionStrategy",
    "EvictionStrategy",
    "InMemorySessionStore",
    "Lease",
    "LruEvictionStrategy",
    "NeverEvictStrategy",
    "RedisSessionStore",
    "SessionStore",
    "StoredChanges",
    "StoredTools",
    "TtlEvictionStrategy",
]
