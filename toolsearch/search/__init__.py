"""Tool search: the ``ToolIndex`` protocol, its request/response types, sessions, eviction."""

from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
from toolsearch.search.eviction import (
    AlwaysEvictStrategy,
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    NeverEvictStrategy,
    TtlEvictionStrategy,
)
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.registry import SessionRegistry, SessionState
from toolsearch.search.search_tool import DEFAULT_SEARCH_TOOL_NAME, ToolSearchTool
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
    "DEFAULT_SEARCH_TOOL_NAME",
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
    "ToolSearchOptions",
    "ToolSearchRequest",
    "ToolSearchResponse",
    "ToolSearchTool",
    "ToolSearchToolCallingAdvisor",
    "TtlEvictionStrategy",
]
