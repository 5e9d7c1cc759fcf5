"""How what use taught is fused with an index's ranking: :class:`LearnedParams`,
:func:`fuse_learned` (reciprocal rank, each learned hit scaled by its confidence) and
:func:`guard_top` (the support rule: thinly supported learning never moves a tool above
the inner index's top hit). :class:`~toolsearch.indexes.learning.learned.LearnedToolIndex` uses
them; they are pure functions of rankings, tested on their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from toolsearch.indexes.fusion import fuse
from toolsearch.indexes.params import Bm25Params, FusionParams
from toolsearch.indexes.ranker import Hit

__all__ = ["LearnedOptions", "LearnedParams", "fuse_learned", "guard_top"]


@dataclass(frozen=True, slots=True)
class LearnedParams:
    """How what use taught is ranked and fused; see :class:`LearnedToolIndex`.

    Attributes:
        inner_weight: Weight of the inner index's rank.
        vote_weight: Weight of the nearest-neighbour vote's rank (0: no vote, no embedder).
        bm25_weight: Weight of the learned-requests BM25 field's rank (0: none).
        rrf_k: The rank-fusion constant (5, as in the hybrid index).
        candidates: How deep each ranking goes into the fusion.
        vote_k: How many stored requests (best decay-weighted cosine first) vote.
        vote_min_cosine: A stored request votes only when its cosine reaches this.
        bm25_min_score: The learned field's hits below this normalized score are dropped.
        k1: BM25 term-frequency saturation of the learned field.
        b: BM25 length normalization of the learned field.
        refresh_seconds: Weights are re-read at most this often (and on every change).
        confidence: Scale each learned hit's share by how far its score clears its floor
            (:func:`fuse_learned`); ``False``: plain reciprocal rank.
        outrank_sessions: A tool whose learned requests came from fewer distinct sessions
            than this never moves above the inner index's top hit (requests without a
            conversation id are one session): one user cannot put a tool first for
            another's request. ``1``: no such rule.
        vote_sum: Order the vote's tools by the sum of their voting requests' scores
            (many neighbours for one tool count), not by their best one; a hit's
            confidence still comes from its best.
        shadow: Learn and compute the learned ranking, but answer with the inner index's
            (the learned top hits go to the shadow listener and the debug log).
    """

    inner_weight: float = 1.0
    vote_weight: float = 2.0
    bm25_weight: float = 4.0
    rrf_k: float = 5.0
    candidates: int = 20
    vote_k: int = 10
    vote_min_cosine: float = 0.4
    bm25_min_score: float = 0.1
    k1: float = 1.2
    b: float = 0.75
    refresh_seconds: float = 600.0
    confidence: bool = True
    outrank_sessions: int = 3
    shadow: bool = False
    vote_sum: bool = True

    def __post_init__(self) -> None:
        weights = (self.inner_weight, self.vote_weight, self.bm25_weight)
        if min(weights) < 0 or sum(weights) == 0:
            raise ValueError("weights must be non-negative and not all zero")
        if self.candidates < 1 or self.vote_k < 1 or self.rrf_k < 0:
            raise ValueError("candidates and vote_k must be at least 1, rrf_k non-negative")
        if not -1 <= self.vote_min_cosine < 1 or not 0 <= self.bm25_min_score < 1:
            raise ValueError("vote_min_cosine is a cosine, bm25_min_score a score in [0, 1)")
        if self.refresh_seconds < 0:
            raise ValueError("refresh_seconds must be non-negative")
        if self.outrank_sessions < 1:
            raise ValueError("outrank_sessions must be at least 1")
        Bm25Params(k1=self.k1, b=self.b)  # the same checks as the BM25 index's


def fuse_learned(
    inner: Sequence[Hit],
    learned: Sequence[tuple[Sequence[Hit], float, float]],
    params: LearnedParams,
) -> list[Hit]:
    """The inner ranking fused with the learned ``(hits, weight, floor)`` rankings, best
    first (ties: the lower position).

    A tool gains ``inner_weight / (rrf_k + rank)`` from the inner ranking and, from each
    learned ranking, ``weight · confidence / (rrf_k + rank)``, where the confidence is how
    far the hit's score clears that ranking's floor, ``(score - floor) / (1 - floor)`` in
    ``[0, 1]`` (a near-duplicate of a learned request counts fully, a request that only
    just qualifies hardly at all). ``confidence=False``: plain reciprocal rank, the
    hybrid's :func:`~toolsearch.indexes.fusion.fuse`."""
    lists: list[tuple[Sequence[Hit], float]] = []
    if params.inner_weight > 0:
        lists.append((inner, params.inner_weight))
    if not params.confidence:
        lists.extend((hits, weight) for hits, weight, _ in learned)
        return fuse(lists, FusionParams(rrf_k=params.rrf_k))
    fused: dict[int, float] = {}
    for rank, (position, _score) in enumerate(lists[0][0] if lists else (), start=1):
        fused[position] = params.inner_weight / (params.rrf_k + rank)
    for hits, weight, floor in learned:
        for rank, (position, score) in enumerate(hits, start=1):
            confidence = min(1.0, max(0.0, (score - floor) / (1.0 - floor)))
            fused[position] = fused.get(position, 0.0) + weight * confidence / (params.rrf_k + rank)
    return sorted(fused.items(), key=lambda hit: (-hit[1], hit[0]))


class LearnedOptions(TypedDict, total=False):
    """Keyword overrides of :class:`LearnedParams`."""

    inner_weight: float
    vote_weight: float
    bm25_weight: float
    rrf_k: float
    candidates: int
    vote_k: int
    vote_min_cosine: float
    bm25_min_score: float
    k1: float
    b: float
    refresh_seconds: float
    confidence: bool
    outrank_sessions: int
    shadow: bool
    vote_sum: bool


def guard_top(
    fused: Sequence[Hit], inner: Sequence[Hit], support: dict[int, int], needed: int
) -> list[Hit]:
    """``fused`` with every tool that fusion put above the inner index's top hit, but whose
    learning came from fewer than ``needed`` distinct sessions, moved just below it."""
    hits = list(fused)
    if needed <= 1 or not inner or not hits:
        return hits
    top = inner[0][0]
    place = next((i for i, (position, _) in enumerate(hits) if position == top), None)
    if place is None or place == 0:
        return hits
    above = hits[:place]
    kept = [h for h in above if support.get(h[0], 0) >= needed]
    demoted = [h for h in above if support.get(h[0], 0) < needed]
    return [*kept, hits[place], *demoted, *hits[place + 1 :]]
