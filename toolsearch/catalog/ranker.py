"""The catalog as a :class:`~toolsearch.indexes.ranker.Ranker`: sessions over built artifacts.

``prepare`` looks a session's tools up in the catalog by fingerprint (a memory-mapped
binary search: nothing is analyzed or embedded) and places them over the artifacts:

* **BM25**: the session's catalog tools are a scope of the memory-mapped postings; tools
  the catalog does not hold are analyzed when the session registers and chained after the
  catalog's postings, so the whole session is one corpus with the session's statistics
  (the same hits and scores as a ``Bm25ToolIndex`` over the same tools). A session that
  is the whole catalog in catalog order uses the precomputed impacts.
* **vector**: the catalog's rows of the session's tools (or a FAISS selector for large
  sessions); tools the catalog lacks are embedded into a small session of their own and
  the two cosine lists merged by score.
* **hybrid**: both, fused by :class:`~toolsearch.indexes.hybrid.FusedSession`, as a
  ``HybridToolIndex`` fuses its sides.

Scoring is :mod:`toolsearch.indexes.lexical.bm25_scoring`'s and fusion
:mod:`toolsearch.indexes.fusion`'s: the catalog defines none of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.catalog.bm25_artifact import MappedPostings
from toolsearch.catalog.store import ToolStore
from toolsearch.catalog.vector_artifact import VectorArtifact, VectorScope
from toolsearch.indexes.clauses import clause_ranking, query_vectors
from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.hybrid import FusedSession
from toolsearch.indexes.lexical.analysis import tool_terms
from toolsearch.indexes.lexical.bm25 import Bm25Session
from toolsearch.indexes.lexical.bm25_scoring import (
    ChainedPostings,
    MemoryPostings,
    scope_of,
    whole_scope,
)
from toolsearch.indexes.params import FusionParams, VectorParams
from toolsearch.indexes.ranker import Ranking, SessionRanker
from toolsearch.indexes.session import SessionTools
from toolsearch.indexes.text import prepare_tool

__all__ = ["CatalogRanker", "Placement"]


@dataclass(frozen=True)
class Placement:
    """Where a session's tools are: ``docs`` are the catalog ids of the tools the catalog
    holds, at session ``positions`` (increasing); ``fallback`` are the positions of the
    others. ``whole``: the session is the entire catalog in catalog order."""

    tools: SessionTools
    positions: Any
    docs: Any
    fallback: Any
    whole: bool

    @classmethod
    def of(cls, store: ToolStore, tools: SessionTools) -> Placement:
        import numpy as np

        ids = store.lookup(list(tools.fingerprints))
        found = ids >= 0
        docs = ids[found]
        whole = len(docs) == len(store) == len(tools) and bool(np.all(docs == np.arange(len(docs))))
        return cls(tools, np.flatnonzero(found), docs, np.flatnonzero(~found), whole)

    @classmethod
    def catalog(cls, store: ToolStore) -> Placement:
        """The whole catalog, without a session (places are catalog ids)."""
        import numpy as np

        count = len(store)
        everything = np.arange(count)
        return cls(SessionTools(()), everything, everything, np.zeros(0, dtype=np.int64), True)


class _Keyword:
    """BM25 sessions over the memory-mapped postings."""

    def __init__(self, postings: MappedPostings) -> None:
        self.postings = postings
        self._whole: Bm25Session | None = None

    def session(self, placement: Placement) -> Bm25Session:
        import numpy as np

        params = self.postings.settings
        if placement.whole:
            if self._whole is None:
                self._whole = Bm25Session(self.postings, params, whole_scope(self.postings))
            return self._whole
        if not len(placement.fallback):
            return Bm25Session(self.postings, params, scope_of(self.postings, placement.docs))
        own = MemoryPostings()
        for position in placement.fallback.tolist():
            tool = placement.tools.tools[position]
            own.add(tool_terms(prepare_tool(tool), params, tool.fingerprint))
        chained = ChainedPostings(self.postings, own)
        ids = np.empty(len(placement.tools), dtype=np.int64)
        ids[placement.positions] = placement.docs
        ids[placement.fallback] = self.postings.size + np.arange(len(placement.fallback))
        return Bm25Session(chained, params, scope_of(chained, ids))


@dataclass(frozen=True)
class _VectorSession:
    """Cosine ranking of a session's catalog rows, merged with its own tools' session."""

    artifact: VectorArtifact
    embedder: Callable[[], Embedder]
    placement: Placement
    scope: VectorScope | None
    own: SessionRanker | None
    params: VectorParams

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        import numpy as np

        placement = self.placement
        positions, docs, scope = placement.positions, placement.docs, self.scope
        own_allowed: list[int] | None = None
        if allowed is not None:
            picked = np.asarray(list(allowed), dtype=np.int64)
            inside = np.isin(positions, picked)
            positions, docs = positions[inside], docs[inside]
            scope = _vector_scope(self.artifact, docs)
            if self.own is not None:
                own_allowed = np.flatnonzero(np.isin(placement.fallback, picked)).tolist()
        hits: list[tuple[int, float]] = []
        total = 0
        if len(docs):
            embedder = self.embedder()

            def search(vector: Any, depth: int) -> list[tuple[int, float]]:
                places, scores, _ = self.artifact.rank(vector, depth, scope)
                return list(zip(positions[places].tolist(), scores.tolist(), strict=True))

            clauses = None
            if self.params.query_clauses:
                vector, clauses = query_vectors(embedder, query)
            else:
                vector = embedder.embed_query(query)
            if clauses is None:
                hits = search(vector, limit)
            else:
                hits = clause_ranking(search, vector, clauses, limit)
            total = len(docs)
        if self.own is None:
            return Ranking.of(hits, total)
        if own_allowed is None or own_allowed:
            extra = self.own.rank(query, limit, own_allowed)
            fallback = placement.fallback
            hits += [(int(fallback[j]), float(score)) for j, score in extra.hits]
            total += extra.total
        hits.sort(key=lambda item: (-item[1], item[0]))
        return Ranking.of(hits[:limit], total)


def _vector_scope(artifact: VectorArtifact, docs: Any) -> VectorScope:
    """The artifact's scope of catalog ids ``docs`` (in session order)."""
    import numpy as np

    order = np.argsort(docs, kind="stable")
    return artifact.scope(docs, order, docs[order])


class _Semantic:
    """Vector sessions over the catalog's embeddings."""

    def __init__(
        self, artifact: VectorArtifact, embedder: Callable[[], Embedder], params: VectorParams
    ) -> None:
        self.artifact = artifact
        self.embedder = embedder
        self.params = params
        self._own_ranker: Any = None
        self._lock = threading.Lock()

    def session(self, placement: Placement) -> _VectorSession:

        scope = None if placement.whole else _vector_scope(self.artifact, placement.docs)
        own = None
        if len(placement.fallback):
            tools = placement.tools.tools
            own = self._own().prepare(
                SessionTools.of([tools[i] for i in placement.fallback.tolist()])
            )
        return _VectorSession(self.artifact, self.embedder, placement, scope, own, self.params)

    def _own(self) -> Any:
        """A ``VectorRanker`` with the catalog's settings, for tools the catalog lacks."""
        with self._lock:
            if self._own_ranker is None:
                from toolsearch.indexes.vector import VectorRanker

                self._own_ranker = VectorRanker(self.embedder(), self.params)
            return self._own_ranker


class CatalogRanker:
    """Ranks sessions over a built catalog (``bm25``, ``vector`` or ``hybrid``)."""

    def __init__(
        self,
        kind: str,
        store: ToolStore,
        *,
        postings: MappedPostings | None,
        vectors: VectorArtifact | None,
        embedder: Callable[[], Embedder],
        vector_params: VectorParams,
        fusion: FusionParams,
    ) -> None:
        self.kind = kind
        self.search_type = f"catalog-{kind}"
        self.fusion = fusion
        self._store = store
        self._keyword = _Keyword(postings) if postings is not None else None
        self._semantic = (
            _Semantic(vectors, embedder, vector_params) if vectors is not None else None
        )
        self._whole: SessionRanker | None = None

    def prepare(self, tools: SessionTools) -> SessionRanker:
        return self._session(Placement.of(self._store, tools))

    def whole(self) -> SessionRanker:
        """The whole catalog as one session, places being catalog ids."""
        if self._whole is None:
            self._whole = self._session(Placement.catalog(self._store))
        return self._whole

    def _session(self, placement: Placement) -> SessionRanker:
        keyword = self._keyword.session(placement) if self._keyword is not None else None
        if self.kind == "bm25":
            assert keyword is not None
            return keyword
        assert self._semantic is not None
        if self.kind == "vector":
            return self._semantic.session(placement)
        sides = [
            (side, weight)
            for side, weight in (
                (keyword, self.fusion.bm25_weight),
                (self._semantic.session(placement), self.fusion.vector_weight),
            )
            if weight != 0 and side is not None
        ]
        return FusedSession(tuple(sides), self.fusion)
