"""Tool search: the search-session core every front door uses (``ToolSearchSessions``,
``SearchRun``), the ``ToolIndex`` protocol and its request/response types, sessions,
session stores (in memory or Redis), eviction and search logs."""

from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
from toolsearch.search.builtin_tools.search_tool import DEFAULT_SEARCH_TOOL_NAME, ToolSearchTool
from toolsearch.search.events import SearchListener, ToolSearchEvent
from toolsearch.search.logs.reader import LabeledSearch, SearchLogContents, read_search_log
from toolsearch.search.logs.sink import JsonlSearchLog, LoggedCalls, LoggedSearch, SearchLog
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.registry import SessionRegistry, SessionState
from toolsearch.search.sessions import (
    CallDecision,
    SearchResult,
    SearchRun,
    SessionRef,
    ToolSearchSessions,
    resolve_session,
)
from toolsearch.search.types import (
    DEFAULT_MAX_RESULTS,
    SearchMetadata,
    ToolIndex,
    ToolReference,
    ToolSearchRequest,
    ToolSearchResponse,
)
from toolsearch.search.working_set.warm import StaticWarmSet, WarmSetSource, WarmTool
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
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_SEARCH_TOOL_NAME",
    "AlwaysEvictStrategy",
    "CallDecision",
    "CompositeEvictionStrategy",
    "EvictionStrategy",
    "InMemorySessionStore",
    "JsonlSearchLog",
    "LabeledSearch",
    "Lease",
    "LoggedCalls",
    "LoggedSearch",
    "LruEvictionStrategy",
    "NeverEvictStrategy",
    "RedisSessionStore",
    "SearchListener",
    "SearchLog",
    "SearchLogContents",
    "SearchMetadata",
    "SearchResult",
    "SearchRun",
    "SessionRef",
    "SessionRegistry",
    "SessionState",
    "SessionStore",
    "StaticWarmSet",
    "StoredChanges",
    "StoredTools",
    "ToolIndex",
    "ToolReference",
    "ToolSearchEvent",
    "ToolSearchOptions",
    "ToolSearchRequest",
    "ToolSearchResponse",
    "ToolSearchSessions",
    "ToolSearchTool",
    "ToolSearchToolCallingAdvisor",
    "TtlEvictionStrategy",
    "WarmSetSource",
    "WarmTool",
    "read_search_log",
    "resolve_session",
]
