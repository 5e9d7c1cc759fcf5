"""Peak memory of an index, measured in a child process (toolsearch_bench.memory)."""

import sys

import pytest

from toolsearch.search.types import ToolSearchResponse
from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench import memory as memory_module
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.memory import measure_peak_memory
from toolsearch_bench.runner import IndexSpec, index_factory, run_dataset

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the VmHWM method needs Linux /proc"
)


def _dataset(n: int = 20) -> tuple[Catalog, QuerySet]:
    tools = tuple(
        ToolDefinition(f"tool_{i}", f"does thing number {i}", {"type": "object", "properties": {}})
        for i in range(n)
    )
    queries = tuple(Query(f"q{i}", f"thing number {i}", (f"tool_{i}",)) for i in range(n))
    return Catalog("tiny", tools), QuerySet("tiny", queries)


class _HungryIndex:
    """Holds 64 MiB while indexed: the measurement must see it."""

    def __init__(self) -> None:
        self.ballast = b""

    def index_tools(self, session_id, tools):
        self.ballast = b"\x01" * (64 * 1024 * 1024)  # written, so resident

    def search(self, request):
        return ToolSearchResponse([], 0, {})

    def clear_index(self, session_id):
        self.ballast = b""


@linux_only
def test_the_child_measures_what_the_index_allocates(tmp_path, monkeypatch):
    catalog, queries = _dataset()
    catalog.to_jsonl(tmp_path / "tools.jsonl")
    queries.to_jsonl(tmp_path / "queries.jsonl")
    monkeypatch.setattr(memory_module, "index_factory", lambda name: _HungryIndex)
    result = memory_module._child(
        str(tmp_path / "tools.jsonl"), str(tmp_path / "queries.jsonl"), "x"
    )
    assert result["method"] == "VmHWM"
    assert 60 <= result["peak_mb"] < 200
    assert result["baseline_mb"] > 0


@linux_only
def test_measure_peak_memory_runs_a_child_per_index():
    catalog, queries = _dataset()
    result = measure_peak_memory("peer: token overlap", catalog, queries)
    assert result.index == "peer: token overlap"
    assert result.method == "VmHWM"
    assert 0 <= result.peak_mb < 50  # a pure-Python index over 20 tools
    assert result.baseline_mb > 0


def test_an_unknown_index_fails_with_the_childs_error():
    catalog, queries = _dataset(2)
    with pytest.raises(RuntimeError, match="unknown index"):
        measure_peak_memory("no such index", catalog, queries)


def test_index_factory_knows_indexes_and_peers_without_building_them():
    from toolsearch.indexes import RegexToolIndex
    from toolsearch_bench.peers import TokenOverlapIndex

    assert index_factory("regex") is RegexToolIndex
    assert index_factory("peer: token overlap") is TokenOverlapIndex
    with pytest.raises(ValueError, match="unknown index"):
        index_factory("nope")


def test_run_dataset_records_memory_only_for_indexes_it_can_rebuild(monkeypatch):
    from toolsearch.tokens import BpeTokenCounter
    from toolsearch_bench.peers import TokenOverlapIndex

    pytest.importorskip("bpe_openai", reason="bpe-openai is not installed (the harness)")
    measured = []

    def fake_measure(name, catalog, queries):
        measured.append(name)
        return memory_module.MemoryResult(name, 12.5, 30.0, "VmHWM")

    monkeypatch.setattr(memory_module, "measure_peak_memory", fake_measure)
    catalog, queries = _dataset(5)
    specs = [
        IndexSpec("peer: token overlap", TokenOverlapIndex, peer=True),
        IndexSpec("peer: token overlap", lambda: TokenOverlapIndex()),  # custom factory
    ]
    records = run_dataset(
        catalog, queries, specs, counter=BpeTokenCounter("o200k_base"), runs=1, memory=True
    )
    assert [r.peak_rss_mb for r in records] == [None, 12.5, None]
    assert measured == ["peer: token overlap"]
    without = run_dataset(
        catalog, queries, specs[:1], counter=BpeTokenCounter("o200k_base"), runs=1
    )
    assert without[1].peak_rss_mb is None
