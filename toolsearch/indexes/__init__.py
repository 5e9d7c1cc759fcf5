"""Tool index backends behind the ``ToolIndex`` protocol.

``RegexToolIndex`` needs nothing extra (its pattern mode needs ``toolsearch[regex]``);
``Bm25ToolIndex`` needs ``toolsearch[bm25]``; ``VectorToolIndex`` and ``HybridToolIndex``
need ``toolsearch[vector]``, as does ``RerankingToolIndex`` with a ``CrossEncoderReranker``.
Backends load on first use, so importing this package is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolsearch.indexes.base import BaseToolIndex, SessionTools
    from toolsearch.indexes.bm25 import Bm25ToolIndex
    from toolsearch.indexes.embedders import (
        Embedder,
        HashingEmbedder,
        SentenceTransformerEmbedder,
        StaticEmbedder,
        load_embedder,
    )
    from toolsearch.indexes.hybrid import HybridToolIndex
    from toolsearch.indexes.regex import RegexToolIndex
    from toolsearch.indexes.rerank import (
        CrossEncoderReranker,
        FunctionReranker,
        Reranker,
        RerankingToolIndex,
        load_reranker,
    )
    from toolsearch.indexes.text import PreparedTool, prepare_tool, split_name
    from toolsearch.indexes.vector import VectorToolIndex

_LOCATIONS = {
    "BaseToolIndex": "base",
    "SessionTools": "base",
    "Bm25ToolIndex": "bm25",
    "Embedder": "embedders",
    "HashingEmbedder": "embedders",
    "SentenceTransformerEmbedder": "embedders",
    "StaticEmbedder": "embedders",
    "load_embedder": "embedders",
    "HybridToolIndex": "hybrid",
    "RegexToolIndex": "regex",
    "CrossEncoderReranker": "rerank",
    "FunctionReranker": "rerank",
    "Reranker": "rerank",
    "RerankingToolIndex": "rerank",
    "load_reranker": "rerank",
    "PreparedTool": "text",
    "prepare_tool": "text",
    "split_name": "text",
    "VectorToolIndex": "vector",
}

__all__ = [
    "BaseToolIndex",
    "Bm25ToolIndex",
    "CrossEncoderReranker",
    "Embedder",
    "FunctionReranker",
    "HashingEmbedder",
    "HybridToolIndex",
    "PreparedTool",
    "RegexToolIndex",
    "Reranker",
    "RerankingToolIndex",
    "SentenceTransformerEmbedder",
    "SessionTools",
    "StaticEmbedder",
    "VectorToolIndex",
    "load_embedder",
    "load_reranker",
    "prepare_tool",
    "split_name",
]


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"toolsearch.indexes.{module}"), name)
