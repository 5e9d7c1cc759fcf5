"""Tool search in a Milvus collection (``toolsearch[milvus]``), shared by every process.

The index (:mod:`.index`, the design), its ranker (:mod:`.ranker`), the collection's
fields (:mod:`.schema`), the client and its retries (:mod:`.client`) and what a write
reports (:mod:`.writes`). This package hands on the names ``toolsearch.indexes.milvus``
had when it was one module; ``pymilvus`` is imported only when a server is first used.
"""

from toolsearch.indexes.milvus.index import (
    EXACT_TOTAL_UP_TO,
    MAX_TOP_K,
    MilvusRanker,
    MilvusSession,
    MilvusToolIndex,
    Mode,
    RefusedTool,
    RetryPolicy,
    UpsertReport,
)

__all__ = [
    "EXACT_TOTAL_UP_TO",
    "MAX_TOP_K",
    "MilvusRanker",
    "MilvusSession",
    "MilvusToolIndex",
    "Mode",
    "RefusedTool",
    "RetryPolicy",
    "UpsertReport",
]
