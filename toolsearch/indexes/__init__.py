"""Tool index backends behind the ``ToolIndex`` protocol.

Every backend is the session layer (:class:`SessionIndex`: snapshots, isolation,
exact-name first, exclusions, ``max_results``, timing) over a :class:`Ranker` (the one seam
a backend implements: rank a query inside one session's tools). The hybrid and reranking
rankers compose other rankers.

``RegexToolIndex`` needs nothing extra (its pattern mode needs ``toolsearch[regex]``);
``Bm25ToolIndex`` needs ``toolsearch[bm25]``; ``VectorToolIndex`` and ``HybridToolIndex``
need ``toolsearch[vector]``, as does ``RerankingToolIndex`` with a ``CrossEncoderReranker``;
``MilvusToolIndex`` (a Milvus collection shared by many processes) needs ``toolsearch[milvus]``.
The API embedders ``OpenAIEmbedder`` and ``GeminiEmbedder`` need
``toolsearch[openai-embeddings]`` or ``toolsearch[gemini-embeddings]``.
Backends load on first use, so importing this package is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolsearch.indexes.embedders import (
        Embedder,
        HashingEmbedder,
        SentenceTransformerEmbedder,
        StaticEmbedder,
    )
    from toolsearch.indexes.embedders.api import GeminiEmbedder, OpenAIEmbedder
    from toolsearch.indexes.embedders.cache import EmbeddingCache
    from toolsearch.indexes.embedders.onnx import OnnxEmbedder
    from toolsearch.indexes.hybrid import HybridRanker, HybridToolIndex
    from toolsearch.indexes.kinds import IndexKindRow, IndexOptions
    from toolsearch.indexes.learning.learned import LearnedParams, LearnedToolIndex
    from toolsearch.indexes.learning.memory import UsageMemory, UsageParams
    from toolsearch.indexes.lexical.bm25 import Bm25Ranker, Bm25ToolIndex
    from toolsearch.indexes.lexical.regex import RegexRanker, RegexToolIndex
    from toolsearch.indexes.milvus import MilvusRanker, MilvusToolIndex
    from toolsearch.indexes.params import Bm25Params, FusionParams, VectorParams
    from toolsearch.indexes.ranker import Ranker, Ranking, SessionRanker
    from toolsearch.indexes.rerank import (
        CrossEncoderReranker,
        FunctionReranker,
        Reranker,
        RerankingRanker,
        RerankingToolIndex,
        RerankParams,
        load_reranker,
    )
    from toolsearch.indexes.session import SessionIndex, SessionTools
    from toolsearch.indexes.specs import (
        embedder_factory,
        index_factory,
        load_embedder,
        make_index,
        resolve_embedder,
    )
    from toolsearch.indexes.text import PreparedTool, prepare_tool, split_name
    from toolsearch.indexes.vector import VectorRanker, VectorToolIndex

_LOCATIONS = {
    "SessionIndex": "session",
    "SessionTools": "session",
    "Bm25Params": "params",
    "FusionParams": "params",
    "VectorParams": "params",
    "Ranker": "ranker",
    "Ranking": "ranker",
    "SessionRanker": "ranker",
    "Bm25Ranker": "lexical.bm25",
    "Bm25ToolIndex": "lexical.bm25",
    "Embedder": "embedders",
    "EmbeddingCache": "embedders.cache",
    "GeminiEmbedder": "embedders.api",
    "OpenAIEmbedder": "embedders.api",
    "HashingEmbedder": "embedders",
    "SentenceTransformerEmbedder": "embedders",
    "StaticEmbedder": "embedders",
    "OnnxEmbedder": "embedders.onnx",
    "embedder_factory": "specs",
    "index_factory": "specs",
    "load_embedder": "specs",
    "make_index": "specs",
    "resolve_embedder": "specs",
    "HybridRanker": "hybrid",
    "HybridToolIndex": "hybrid",
    "IndexKindRow": "kinds",
    "IndexOptions": "kinds",
    "LearnedParams": "learned",
    "LearnedToolIndex": "learned",
    "UsageMemory": "usage",
    "UsageParams": "usage",
    "MilvusRanker": "milvus",
    "MilvusToolIndex": "milvus",
    "RegexRanker": "lexical.regex",
    "RegexToolIndex": "lexical.regex",
    "CrossEncoderReranker": "rerank",
    "FunctionReranker": "rerank",
    "Reranker": "rerank",
    "RerankParams": "rerank",
    "RerankingRanker": "rerank",
    "RerankingToolIndex": "rerank",
    "load_reranker": "rerank",
    "PreparedTool": "text",
    "prepare_tool": "text",
    "split_name": "text",
    "VectorRanker": "vector",
    "VectorToolIndex": "vector",
}

__all__ = [
    "Bm25Params",
    "Bm25Ranker",
    "Bm25ToolIndex",
    "CrossEncoderReranker",
    "Embedder",
    "EmbeddingCache",
    "FunctionReranker",
    "FusionParams",
    "GeminiEmbedder",
    "HashingEmbedder",
    "HybridRanker",
    "HybridToolIndex",
    "IndexKindRow",
    "IndexOptions",
    "LearnedParams",
    "LearnedToolIndex",
    "MilvusRanker",
    "MilvusToolIndex",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "PreparedTool",
    "Ranker",
    "Ranking",
    "RegexRanker",
    "RegexToolIndex",
    "Reranker",
    "RerankParams",
    "RerankingRanker",
    "RerankingToolIndex",
    "SentenceTransformerEmbedder",
    "SessionIndex",
    "SessionRanker",
    "SessionTools",
    "StaticEmbedder",
    "UsageMemory",
    "UsageParams",
    "VectorParams",
    "VectorRanker",
    "VectorToolIndex",
    "embedder_factory",
    "index_factory",
    "load_embedder",
    "load_reranker",
    "make_index",
    "prepare_tool",
    "resolve_embedder",
    "split_name",
]


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"toolsearch.indexes.{module}"), name)
