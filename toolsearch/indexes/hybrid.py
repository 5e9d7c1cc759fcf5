"""``HybridToolIndex``: BM25 and vector results fused into one ranking.

Each backend ranks the session's tools on its own (``candidates`` each), then:

* ``fusion="rrf"`` (default): reciprocal-rank fusion, ``Σ weight / (rrf_k + rank)`` over
  the lists a tool appears in (ranks from 1); needs no common score scale.
  ``rrf_k`` defaults to 5, not the 60 of the original RRF paper: 60 was chosen for fusing
  long ranked lists of documents, where rank 40 still matters; a tool search fuses two
  short candidate lists and only the first few places matter, so a small constant keeps
  the top of each list decisive. k was fixed on development data only (the bundled acme
  catalog and the odd-numbered half of BFCL's queries; R@5 there rose from 85.0 to 86.7
  on average, and every k from 1 to 10 lay within ±0.3 of it): see
  ``benchmarks/results/retrieval.md``.
* ``fusion="convex"``: ``(bm25_weight·bm25 + vector_weight·max(cosine, 0)) / (sum of
  weights)``, using BM25's normalized score (already in ``[0, 1]``) and the cosine
  similarity as they are, so a lone weak hit stays weak (a tool missing from a list
  scores 0 there). It keeps how *much* better a hit is, which rank fusion drops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from toolsearch.indexes.base import BaseToolIndex, SessionTools
from toolsearch.indexes.bm25 import Bm25ToolIndex
from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.vector import VectorToolIndex

__all__ = ["HybridToolIndex"]


class HybridToolIndex(BaseToolIndex[tuple[Any, Any]]):
    """Reciprocal-rank fusion of a :class:`Bm25ToolIndex` and a :class:`VectorToolIndex`.

    Args:
        bm25: The keyword backend (default settings when omitted).
        vector: The vector backend (the packaged MiniLM, or ``embedder``, when omitted).
        embedder: Embedder for the default vector backend.
        bm25_weight: Weight of the keyword ranking.
        vector_weight: Weight of the vector ranking.
        fusion: ``"convex"`` (normalized score combination) or ``"rrf"`` (rank fusion).
        rrf_k: The rank-fusion constant; larger flattens the advantage of top ranks
            (5 by default, see the module docstring).
        candidates: How many hits each backend contributes.
    """

    search_type = "hybrid"

    def __init__(
        self,
        *,
        bm25: Bm25ToolIndex | None = None,
        vector: VectorToolIndex | None = None,
        embedder: Embedder | None = None,
        bm25_weight: float = 1.0,
        vector_weight: float = 1.0,
        fusion: Literal["rrf", "convex"] = "rrf",
        rrf_k: float = 5.0,
        candidates: int = 50,
    ) -> None:
        if bm25_weight < 0 or vector_weight < 0 or bm25_weight + vector_weight == 0:
            raise ValueError("weights must be non-negative and not both zero")
        if candidates < 1 or rrf_k < 0:
            raise ValueError("candidates must be at least 1 and rrf_k non-negative")
        if fusion not in ("convex", "rrf"):
            raise ValueError("fusion must be 'convex' or 'rrf'")
        self.fusion = fusion
        super().__init__()
        self.bm25 = bm25 or Bm25ToolIndex()
        self.vector = vector or VectorToolIndex(embedder=embedder)
        self.bm25_weight = bm25_weight
        self.vector_weight = vector_weight
        self.rrf_k = rrf_k
        self.candidates = candidates

    def _build_view(self, snapshot: SessionTools) -> tuple[Any, Any]:
        return self.bm25._build_view(snapshot), self.vector._build_view(snapshot)

    def _rank(
        self,
        view: tuple[Any, Any],
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        depth = max(limit, self.candidates)
        total_weight = self.bm25_weight + self.vector_weight
        fused: dict[int, float] = {}
        for backend, backend_view, weight in (
            (self.bm25, view[0], self.bm25_weight),
            (self.vector, view[1], self.vector_weight),
        ):
            if weight == 0:
                continue
            ranked, _ = backend._rank(backend_view, snapshot, query, depth, allowed)
            if self.fusion == "rrf":
                for rank, (position, _score) in enumerate(ranked, start=1):
                    fused[position] = fused.get(position, 0.0) + weight / (self.rrf_k + rank)
                continue
            for position, score in ranked:
                fused[position] = fused.get(position, 0.0) + max(score, 0.0) * weight / total_weight
        ordered = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
        return ordered[:limit], len(fused)
