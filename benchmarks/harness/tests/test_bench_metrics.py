"""Retrieval metrics against hand-computed values."""

import math

import pytest

from toolsearch_bench.metrics import (
    complete_at,
    ndcg_at,
    percentile,
    recall_at,
    reciprocal_rank_at,
    score_rankings,
)

RANKED = ["a", "x", "b", "y", "z"]
GOLD = ["a", "b", "c"]


def test_recall():
    assert recall_at(RANKED, GOLD, 1) == pytest.approx(1 / 3)
    assert recall_at(RANKED, GOLD, 3) == pytest.approx(2 / 3)
    assert recall_at(RANKED, GOLD, 10) == pytest.approx(2 / 3)
    assert recall_at(RANKED, [], 5) == 0.0


def test_ndcg_by_hand():
    dcg = 1 / math.log2(2) + 1 / math.log2(4)  # hits at ranks 1 and 3
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # three relevant
    assert ndcg_at(RANKED, GOLD) == pytest.approx(dcg / ideal)
    assert ndcg_at(["a", "b", "c"], GOLD) == pytest.approx(1.0)
    assert ndcg_at(["q"], GOLD) == 0.0


def test_reciprocal_rank_and_completeness():
    assert reciprocal_rank_at(["x", "y", "b"], GOLD) == pytest.approx(1 / 3)
    assert reciprocal_rank_at(["x"], GOLD) == 0.0
    assert complete_at(RANKED, GOLD) == 0.0
    assert complete_at(["c", "b", "a"], GOLD) == 1.0
    assert complete_at(["x"] * 10 + ["a"], ["a"]) == 0.0  # beyond the cut-off


def test_score_rankings_averages_in_percent():
    scores = score_rankings([(["a"], ["a"]), (["x"], ["a"])])
    assert scores.queries == 2
    assert scores.recall[1] == 50.0
    assert scores.mrr10 == 50.0
    assert scores.complete10 == 50.0
    assert score_rankings([]).queries == 0


def test_percentile_interpolates():
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)
    assert percentile([5], 99) == 5
    assert percentile([], 50) == 0.0
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == pytest.approx(9.1)
