"""Tool search: the ``ToolIndex`` protocol, its request/response types, sessions, eviction."""

from toolsearch.search.eviction import (
    AlwaysEvictStrategy,
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    NeverEvictStrategy,
    TtlEvictionStrategy,
)
from toolsearch.search.registry import SessionRegistry, SessionState
from toolsearch.search.types import (
    DEFAULT_MAX_RESULTS,
    SearchMetadata,
    ToolIndex,
    ToolReference,
    ToolSearchRequest,
    ToolSearchResponse,
)

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "AlwaysEvictStrategy",
    "CompositeEvictionStrategy",
    "EvictionStrategy",
    "LruEvictionStrategy",
    "NeverEvictStrategy",
    "SearchMetadata",
    "SessionRegistry",
    "SessionState",
    "ToolIndex",
    "ToolReference",
    "ToolSearchRequest",
    "ToolSearchResponse",
    "TtlEvictionStrategy",
]
