"""A tool's vector is the renormalized mean of its views' embeddings (indexes/views.py)."""

from __future__ import annotations

import numpy as np
import pytest

from toolsearch import ToolDefinition
from toolsearch.indexes.embedders import HashingEmbedder
from toolsearch.indexes.text import prepare_tool
from toolsearch.indexes.views import embed_views

TOOL = ToolDefinition(
    name="getWeatherForecast",
    description="Get the forecast for a city. Temperature and rain for the coming days.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    category="weather",
)


def test_the_views_are_the_whole_text_name_with_description_and_name_with_summary() -> None:
    prepared = prepare_tool(TOOL)
    whole, described, summarized = prepared.embedding_views
    assert whole == prepared.full_text
    assert described == f"get weather forecast: {TOOL.description}"
    assert summarized == "weather get weather forecast: Get the forecast for a city."


def test_a_vector_is_the_renormalized_mean_of_its_views() -> None:
    embedder = HashingEmbedder(64)
    views = [("first text", "second text", "third"), ("alone",)]
    vectors = embed_views(embedder, views)
    for row, group in zip(vectors, views, strict=True):
        mean = np.asarray(embedder.embed_documents(list(group))).mean(axis=0)
        assert row == pytest.approx(mean / np.linalg.norm(mean), abs=1e-6)
        assert np.linalg.norm(row) == pytest.approx(1.0, abs=1e-6)
    assert vectors.dtype == np.float32


def test_no_tools_give_an_empty_matrix_and_a_tool_without_views_is_refused() -> None:
    embedder = HashingEmbedder(16)
    assert embed_views(embedder, []).shape == (0, 16)
    with pytest.raises(ValueError, match="at least one text"):
        embed_views(embedder, [("a",), ()])
