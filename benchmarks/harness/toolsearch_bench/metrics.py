"""Retrieval metrics over ranked tool names and gold tool sets."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["RetrievalScores", "percentile", "score_rankings"]

CUTOFFS = (1, 3, 5, 10)


def recall_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of the gold tools found in the top ``k``."""
    wanted = set(gold)
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def ndcg_at(ranked: Sequence[str], gold: Sequence[str], k: int = 10) -> float:
    """Binary-relevance NDCG: gold tools are relevant, everything else is not."""
    wanted = set(gold)
    dcg = sum(1.0 / math.log2(i + 2) for i, name in enumerate(ranked[:k]) if name in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(wanted), k)))
    return dcg / ideal if ideal else 0.0


def reciprocal_rank_at(ranked: Sequence[str], gold: Sequence[str], k: int = 10) -> float:
    wanted = set(gold)
    for i, name in enumerate(ranked[:k]):
        if name in wanted:
            return 1.0 / (i + 1)
    return 0.0


def complete_at(ranked: Sequence[str], gold: Sequence[str], k: int = 10) -> float:
    """1 when every gold tool is in the top ``k``, else 0."""
    return 1.0 if set(gold) <= set(ranked[:k]) else 0.0


@dataclass(frozen=True)
class RetrievalScores:
    """Mean metrics over a query set, in percent."""

    queries: int
    recall: Mapping[int, float]
    ndcg10: float
    mrr10: float
    complete10: float

    def as_dict(self) -> dict[str, float]:
        out: dict[str, float] = {f"R@{k}": v for k, v in self.recall.items()}
        out.update({"NDCG@10": self.ndcg10, "MRR@10": self.mrr10, "Complete@10": self.complete10})
        return out


def score_rankings(rankings: Sequence[tuple[Sequence[str], Sequence[str]]]) -> RetrievalScores:
    """Average the metrics over ``(ranked names, gold names)`` pairs; values in percent."""
    n = len(rankings)
    if not n:
        return RetrievalScores(0, {k: 0.0 for k in CUTOFFS}, 0.0, 0.0, 0.0)

    def mean(values: list[float]) -> float:
        return round(100.0 * sum(values) / n, 2)

    return RetrievalScores(
        n,
        {k: mean([recall_at(r, g, k) for r, g in rankings]) for k in CUTOFFS},
        mean([ndcg_at(r, g) for r, g in rankings]),
        mean([reciprocal_rank_at(r, g) for r, g in rankings]),
        mean([complete_at(r, g) for r, g in rankings]),
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
