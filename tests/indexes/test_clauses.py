"""Requests read clause by clause on the vector side (indexes/clauses.py)."""

from __future__ import annotations

import numpy as np
import pytest

from toolsearch import ToolDefinition
from toolsearch.indexes import HybridToolIndex, VectorToolIndex
from toolsearch.indexes.clauses import clause_ranking, query_vectors, split_clauses
from toolsearch.indexes.embedders import HashingEmbedder
from toolsearch.indexes.params import VectorParams
from toolsearch.search import ToolSearchRequest


class CountingQueries(HashingEmbedder):
    """A hashing embedder that records how its queries were embedded."""

    def __init__(self) -> None:
        super().__init__(128)
        self.single: list[str] = []
        self.batches: list[list[str]] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.single.append(text)
        return super().embed_query(text)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.stack([super(CountingQueries, self).embed_query(t) for t in texts])


def test_a_one_clause_query_is_embedded_whole() -> None:
    embedder = CountingQueries()
    whole, clauses = query_vectors(embedder, "send an email to Ana")
    assert clauses is None
    assert embedder.single == ["send an email to Ana"]
    assert whole == pytest.approx(HashingEmbedder(128).embed_query("send an email to Ana"))


def test_several_clauses_are_embedded_in_one_batch_and_averaged() -> None:
    embedder = CountingQueries()
    request = "Find the invoice from May, then email it to Ana and add a reminder for Friday"
    whole, clauses = query_vectors(embedder, request)
    assert embedder.batches == [split_clauses(request)]
    assert embedder.single == []
    assert clauses is not None
    assert len(clauses) == 3
    mean = clauses.mean(axis=0)
    assert whole == pytest.approx(mean / np.linalg.norm(mean), abs=1e-6)


def test_clause_ranking_is_the_mean_of_the_whole_and_the_best_clause() -> None:
    lists = {
        "whole": [(0, 0.6), (1, 0.5), (2, 0.1)],
        "a": [(1, 0.9), (0, 0.2)],
        "b": [(2, 0.8), (3, 0.7)],
    }
    ranked = clause_ranking(lambda v, depth: lists[v][:depth], "whole", ["a", "b"], limit=4)
    scores = dict(ranked)
    assert scores[1] == pytest.approx((0.5 + 0.9) / 2)
    assert scores[2] == pytest.approx((0.1 + 0.8) / 2)
    assert scores[0] == pytest.approx((0.6 + 0.2) / 2)
    # 3 is missing from the whole list: it gets that list's lowest score
    assert scores[3] == pytest.approx((0.1 + 0.7) / 2)
    assert [p for p, _ in ranked] == [1, 2, 0, 3]  # 0 and 3 tie: the lower position first


TOOLS = [
    ToolDefinition(name="invoice_find", description="Find an invoice by month and customer"),
    ToolDefinition(name="email_send", description="Send an email message to a person"),
    ToolDefinition(name="reminder_add", description="Add a reminder for a day and time"),
    ToolDefinition(name="weather_get", description="Get the weather forecast for a city"),
]


def test_the_hybrid_reads_clauses_by_default_and_the_vector_index_does_not() -> None:
    assert HybridToolIndex(embedder=HashingEmbedder(64)).vector.params.query_clauses
    assert not VectorToolIndex(embedder=HashingEmbedder(64)).params.query_clauses


def test_each_clause_brings_its_tool_into_the_top_hits() -> None:
    index = VectorToolIndex(embedder=HashingEmbedder(256), query_clauses=True)
    index.index_tools("s", TOOLS)
    request = "find the invoice from May, then send an email to Ana, and add a reminder"
    response = index.search(ToolSearchRequest("s", request, 3))
    assert set(response.tool_names) == {"invoice_find", "email_send", "reminder_add"}
    assert all(-1.0 <= ref.relevance_score <= 1.0 for ref in response.tool_references)
    subset = index.search(ToolSearchRequest("s", request, 3, exclude=frozenset({"email_send"})))
    assert "email_send" not in subset.tool_names


def test_the_setting_round_trips_through_a_manifest() -> None:
    params = VectorParams(query_clauses=True)
    assert VectorParams.from_json(params.to_json()) == params
    assert "query_clauses" not in VectorParams().to_json()  # old manifests look the same
    assert not VectorParams.from_json({"hnsw_threshold": 10}).query_clauses


def test_a_hybrid_catalog_reads_clauses_like_the_session_hybrid(tmp_path) -> None:
    from toolsearch.catalog import CatalogIndex

    embedder = HashingEmbedder(256)
    catalog = CatalogIndex.build(TOOLS, out=tmp_path / "c", kind="hybrid", embedder=embedder)
    assert VectorParams.from_json(catalog.manifest.settings["vector"]).query_clauses
    vector_only = CatalogIndex.build(TOOLS, out=tmp_path / "v", kind="vector", embedder=embedder)
    assert not VectorParams.from_json(vector_only.manifest.settings["vector"]).query_clauses
    request = "find the invoice from May, then send an email to Ana, and add a reminder"
    session = HybridToolIndex(embedder=embedder)
    session.index_tools("s", TOOLS)
    expected = session.search(ToolSearchRequest("s", request, 3)).tool_names
    found = catalog.search_catalog(request, 3).tool_names
    assert found == expected
