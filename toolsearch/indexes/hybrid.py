"""``HybridToolIndex``: two rankings of the same tools fused into one (keyword + vector).

Each side ranks the session's tools on its own (``candidates`` hits each); the lists are
fused by :func:`toolsearch.indexes.fusion.fuse` (reciprocal-rank fusion with ``rrf_k=5`` by
default, or a convex combination of scores; see that module and
:class:`~toolsearch.indexes.params.FusionParams`). :class:`HybridRanker` fuses any two
:class:`~toolsearch.indexes.ranker.Ranker` objects through the public protocol, so a
hybrid of a regex and a BM25 ranker, or of two embedders, is the same code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Unpack

from toolsearch.indexes.fusion import fuse
from toolsearch.indexes.params import FusionOptions, FusionParams
from toolsearch.indexes.ranker import Ranker, Ranking, SessionRanker
from toolsearch.indexes.session import SessionIndex, SessionTools, as_ranker

__all__ = ["FusedSession", "HybridRanker", "HybridToolIndex"]


@dataclass(frozen=True)
class FusedSession:
    """Prepared rankers of one tool set, each with its weight, fused per search."""

    sides: tuple[tuple[SessionRanker, float], ...]
    params: FusionParams

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        depth = max(limit, self.params.candidates)
        rankings = [(side.rank(query, depth, allowed).hits, weight) for side, weight in self.sides]
        fused = fuse(rankings, self.params)
        return Ranking.of(fused[:limit], len(fused))


class HybridRanker:
    """Fuses a first (keyword) and a second (vector) ranker's lists; weight 0 skips a side."""

    search_type = "hybrid"

    def __init__(self, first: Ranker, second: Ranker, params: FusionParams | None = None) -> None:
        self.first = first
        self.second = second
        self.params = params or FusionParams()

    def prepare(self, tools: SessionTools) -> FusedSession:
        sides = (
            (self.first, self.params.bm25_weight),
            (self.second, self.params.vector_weight),
        )
        return FusedSession(
            tuple((ranker.prepare(tools), weight) for ranker, weight in sides if weight != 0),
            self.params,
        )


class HybridToolIndex(SessionIndex):
    """Fusion of a :class:`~toolsearch.indexes.lexical.bm25.Bm25ToolIndex` and a
    :class:`~toolsearch.indexes.vector.VectorToolIndex` (or any two rankers).

    Args:
        params: The fusion parameters (:class:`~toolsearch.indexes.params.FusionParams`);
            its fields can also be given as keywords: ``fusion`` (``"rrf"`` or
            ``"convex"``), ``rrf_k``, ``bm25_weight``, ``vector_weight``, ``candidates``.
        bm25: The keyword side, an index or a ranker (default BM25 settings when omitted).
        vector: The vector side, an index or a ranker (the packaged MiniLM, or
            ``embedder``, when omitted, reading a request of several clauses clause by
            clause: :mod:`toolsearch.indexes.clauses`).
        embedder: Embedder for the default vector side.
    """

    ranker: HybridRanker

    def __init__(
        self,
        params: FusionParams | None = None,
        *,
        bm25: Any = None,
        vector: Any = None,
        embedder: Any = None,
        **options: Unpack[FusionOptions],
    ) -> None:
        fusion = dataclasses.replace(params or FusionParams(), **options)
        if bm25 is None:
            from toolsearch.indexes.lexical.bm25 import Bm25ToolIndex

            bm25 = Bm25ToolIndex()
        if vector is None:
            from toolsearch.indexes.vector import VectorToolIndex

            vector = VectorToolIndex(embedder=embedder, query_clauses=True)
        self.bm25 = bm25
        self.vector = vector
        super().__init__(
            HybridRanker(
                as_ranker(bm25, "a hybrid side"), as_ranker(vector, "a hybrid side"), fusion
            )
        )

    @property
    def params(self) -> FusionParams:
        return self.ranker.params

    @property
    def fusion(self) -> str:
        return self.params.fusion

    @property
    def rrf_k(self) -> float:
        return self.params.rrf_k

    @property
    def bm25_weight(self) -> float:
        return self.params.bm25_weight

    @property
    def vector_weight(self) -> float:
        return self.params.vector_weight

    @property
    def candidates(self) -> int:
        return self.params.candidates
