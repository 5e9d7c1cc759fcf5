"""Latency suites (pytest-benchmark). Not part of CI; run them on a quiet machine:

    pytest benchmarks/test_latency.py --benchmark-only --benchmark-columns=median,iqr,ops

* search latency per backend at 100 / 1,000 / 10,000 tools;
* the tool-search advisor's overhead per loop iteration at 500 tools, beside the plain
  advisor on the same tools, measured in the same run;
* the cost of a new session over 500 tools the index already knows.
"""

from __future__ import annotations

import itertools
import json

import pytest

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolCallingAdvisor,
    ToolDefinition,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder, RegexToolIndex, VectorToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import ToolSearchRequest
from toolsearch_bench.loaders import load_bundled
from toolsearch_bench.savings import CANNED_RESULT, SyntheticTool

CATALOG, QUERIES = load_bundled()
QUERY_TEXTS = [q.text for q in QUERIES]


def synthetic(size: int) -> list[ToolDefinition]:
    """``size`` distinct tools made from the bundled catalog's (renamed, re-described)."""
    base = CATALOG.tools
    return [
        ToolDefinition(
            name=f"{base[i % len(base)].name}_{i}",
            description=f"{base[i % len(base)].description} Variant {i}.",
            input_schema=base[i % len(base)].input_schema,
            category=base[i % len(base)].category,
        )
        for i in range(size)
    ]


BACKENDS = {
    "regex": RegexToolIndex,
    "bm25": Bm25ToolIndex,
    "vector-hashing": lambda: VectorToolIndex(embedder=HashingEmbedder()),
}


@pytest.mark.parametrize("size", [100, 1_000, 10_000])
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_search_latency(benchmark, backend, size):
    index = BACKENDS[backend]()
    index.index_tools("s", synthetic(size))
    queries = itertools.cycle(QUERY_TEXTS)
    benchmark.extra_info.update({"backend": backend, "tools": size})
    benchmark(lambda: index.search(ToolSearchRequest("s", next(queries), 5)))


def _one_turn_script(messages, tools):
    """Calls one visible tool, then answers: two model calls per loop."""
    if isinstance(messages[-1], UserMessage):
        name = next(t.name for t in tools if t.name != "toolSearchTool")
        return AssistantMessage(tool_calls=[ToolCall(id="1", name=name, arguments="{}")])
    return "done"


@pytest.mark.parametrize("advisor", ["plain", "tool-search"])
def test_loop_overhead_at_500_tools(benchmark, advisor):
    tools = [SyntheticTool(t, CANNED_RESULT) for t in synthetic(500)]
    chosen = (
        ToolCallingAdvisor()
        if advisor == "plain"
        else ToolSearchToolCallingAdvisor(
            tool_index=Bm25ToolIndex(), pinned_tools=[tools[0].definition.name]
        )
    )
    client = (
        ChatClient.builder(FunctionChatModel(_one_turn_script, count_usage=False))
        .default_advisors(chosen)
        .build()
    )
    benchmark.extra_info.update({"advisor": advisor, "tools": 500, "model_calls": 2})
    benchmark(lambda: client.prompt("do it").tools(tools).call())


def test_new_session_over_500_known_tools(benchmark):
    index = Bm25ToolIndex()
    tools = synthetic(500)
    index.index_tools("warm", tools)
    sessions = (f"s{i}" for i in itertools.count())
    benchmark.extra_info.update({"tools": 500})
    benchmark(lambda: index.index_tools(next(sessions), tools))


def test_search_tool_result_is_json(benchmark):
    """Guard for the suite itself: the search tool answers with a JSON list."""
    index = Bm25ToolIndex()
    index.index_tools("s", synthetic(100))
    response = benchmark(lambda: index.search(ToolSearchRequest("s", "refund a payment", 5)))
    assert json.loads(json.dumps(response.tool_names))


@pytest.mark.parametrize("clauses", ["whole request", "clause by clause"])
def test_hybrid_minilm_latency_with_and_without_clauses(benchmark, clauses):
    """The hybrid's vector side reading long requests clause by clause (the default) beside
    whole-request scoring, on the bundled catalog's requests (cold: the query-embedding
    cache is cleared before each search). Run the two cases in one call."""
    pytest.importorskip("sentence_transformers")
    from toolsearch.indexes import HybridToolIndex, SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    vector = VectorToolIndex(embedder=embedder, query_clauses=clauses != "whole request")
    index = HybridToolIndex(vector=vector)
    index.index_tools("s", list(CATALOG.tools))
    queries = itertools.cycle(QUERY_TEXTS)

    def search() -> None:
        embedder.clear_query_cache()
        index.search(ToolSearchRequest("s", next(queries), 5))

    benchmark.extra_info.update({"clauses": clauses, "tools": len(CATALOG.tools)})
    benchmark.pedantic(search, rounds=len(QUERY_TEXTS), warmup_rounds=3)
