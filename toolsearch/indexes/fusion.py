"""Fusing rankings, written once: the hybrid index and a hybrid catalog both call :func:`fuse`.

* ``"rrf"`` (default): reciprocal-rank fusion, ``Σ weight / (rrf_k + rank)`` over the lists
  a tool appears in (ranks from 1); needs no common score scale. ``rrf_k`` defaults to 5,
  not the 60 of the original RRF paper: 60 was chosen for fusing long ranked lists of
  documents, where rank 40 still matters; a tool search fuses two short candidate lists
  and only the first few places matter, so a small constant keeps the top of each list
  decisive (how it was chosen, with the figures: ``benchmarks/results/tried.md``).
* ``"convex"``: ``Σ weight · max(score, 0) / Σ weights``, using each list's scores as they
  are (BM25's normalized score and the cosine, both in ``[0, 1]`` where it matters), so
  a lone weak hit stays weak (a tool missing from a list scores 0 there). It keeps how
  *much* better a hit is, which rank fusion drops.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

from toolsearch.indexes.params import FusionParams

__all__ = ["fuse"]

K = TypeVar("K", bound=Hashable)


def fuse(
    rankings: Sequence[tuple[Sequence[tuple[K, float]], float]], params: FusionParams
) -> list[tuple[K, float]]:
    """Fuse ``(ranking best first, weight)`` lists; best first, ties by the lower key.

    A ranking of weight 0 should be left out by the caller (it is not searched at all)."""
    total_weight = params.bm25_weight + params.vector_weight
    fused: dict[K, float] = {}
    for ranking, weight in rankings:
        if params.fusion == "rrf":
            for rank, (key, _score) in enumerate(ranking, start=1):
                fused[key] = fused.get(key, 0.0) + weight / (params.rrf_k + rank)
        else:
            for key, score in ranking:
                fused[key] = fused.get(key, 0.0) + max(score, 0.0) * weight / total_weight
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
