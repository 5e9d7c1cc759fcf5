"""The registry of names (toolsearch.indexes.specs): embedder specs and index specs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolsearch.indexes import specs
from toolsearch.indexes.embedders import HashingEmbedder
from toolsearch.indexes.embedders import specs as embedder_specs


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


needs_faiss = pytest.mark.skipif(not _has("faiss"), reason="vector indexes need [vector]")
needs_tantivy = pytest.mark.skipif(not _has("tantivy"), reason="bm25 indexes need [bm25]")


class _Loads:
    """Stands in for SentenceTransformerEmbedder and counts the models loaded."""

    def __init__(self) -> None:
        self.loaded: list[str] = []

    def __call__(self, model: object = None) -> HashingEmbedder:
        self.loaded.append(str(model))
        return HashingEmbedder(16)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> _Loads:
    fake = _Loads()
    monkeypatch.setattr(embedder_specs, "SentenceTransformerEmbedder", fake)
    return fake


# -- embedder specs ----------------------------------------------------------------------


def test_every_embedder_spec_gives_a_factory_without_loading(tmp_path: Path, loads) -> None:
    assert specs.embedder_factory("hashing") is HashingEmbedder
    assert specs.embedder_factory(" static ") == embedder_specs.StaticEmbedder.from_packaged_minilm
    assert (
        specs.embedder_factory("minilm") is embedder_specs.minilm_embedder
    )  # ONNX where installed
    assert (
        specs.embedder_factory("sentence-transformers/all-MiniLM-L6-v2")
        is embedder_specs.minilm_embedder
    )
    assert specs.embedder_factory("minilm-torch") is loads
    assert callable(specs.embedder_factory("minilm-onnx"))
    for spec in (
        "hashing-32",
        "model2vec/static-all-MiniLM-L6-v2-pca128",
        "sentence-transformers/some/model#0123456789abcdef",
        "tuned",
        str(tmp_path),
    ):
        assert callable(specs.embedder_factory(spec))
    assert loads.loaded == []  # nothing was loaded


def test_embedder_factories_load_what_the_spec_names(tmp_path: Path, loads) -> None:
    assert specs.embedder_factory("hashing-32")().name == "hashing-32"
    assert specs.load_embedder("hashing").name == "hashing-256"
    specs.embedder_factory("sentence-transformers/some/model#0123456789abcdef")()
    specs.embedder_factory(str(tmp_path))()
    assert loads.loaded == ["some/model", str(tmp_path)]


def test_an_unknown_embedder_names_the_valid_ones() -> None:
    for bad in ("nope", "", "hashing-x", "/no/such/folder"):
        with pytest.raises(ValueError, match="unknown embedder") as info:
            specs.embedder_factory(bad)
        assert "minilm, minilm-onnx, minilm-torch, static, tuned, hashing" in str(info.value)


def test_tuned_without_a_model_says_how_to_make_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path))
    factory = specs.embedder_factory("tuned")  # no error yet: nothing is loaded
    with pytest.raises(ValueError, match="toolsearch embedder finetune") as info:
        factory()
    assert str(tmp_path / "models" / "all-MiniLM-L6-v2-tools") in str(info.value)
    index = specs.index_factory("hybrid:tuned")  # nor here
    with pytest.raises(ValueError, match="no fine-tuned embedder"):
        index()


def test_tuned_loads_the_model_in_the_default_folder(tmp_path: Path, monkeypatch, loads) -> None:
    from toolsearch.indexes.embedders.tuned import default_tuned_model_path

    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path))
    folder = default_tuned_model_path()
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    specs.load_embedder("tuned")
    assert loads.loaded == [str(folder)]


def test_resolve_embedder_passes_objects_and_defaults() -> None:
    mine = HashingEmbedder(8)
    assert specs.resolve_embedder(mine) is mine
    assert specs.resolve_embedder("hashing-12").name == "hashing-12"
    assert specs.resolve_embedder(None, default="hashing-16").name == "hashing-16"
    assert specs.resolve_embedder("", default="hashing-16").name == "hashing-16"
    with pytest.raises(ValueError, match="unknown embedder"):
        specs.resolve_embedder("no-such-model")


def test_the_old_homes_of_the_names_still_work() -> None:
    import toolsearch.indexes as indexes
    import toolsearch_bench.tuning as tuning
    from toolsearch.indexes import embedders, tuned

    assert indexes.load_embedder is specs.load_embedder
    assert embedders.default_cache_dir is tuned.default_cache_dir
    assert tuning.RECORD_FILE == tuned.RECORD_FILE == "toolsearch-finetune.json"
    assert tuning.default_tuned_model_path is tuned.default_tuned_model_path
    assert tuning.TUNED_MODEL_NAME == tuned.TUNED_MODEL_NAME


def test_a_fine_tuned_record_names_the_weights(tmp_path: Path) -> None:
    from toolsearch.indexes.embedders.tuned import RECORD_FILE, recorded_model_id

    assert recorded_model_id(tmp_path) is None
    (tmp_path / RECORD_FILE).write_text("not json")
    assert recorded_model_id(tmp_path) is None
    (tmp_path / RECORD_FILE).write_text('{"model_id": "0123456789abcdef"}')
    assert recorded_model_id(tmp_path) == "0123456789abcdef"


# -- index specs -------------------------------------------------------------------------


def test_plain_kinds_give_their_classes() -> None:
    from toolsearch.indexes import (
        Bm25ToolIndex,
        HybridToolIndex,
        RegexToolIndex,
        VectorToolIndex,
    )

    assert specs.index_factory("regex") is RegexToolIndex
    assert specs.index_factory("bm25") is Bm25ToolIndex
    assert specs.index_factory("vector") is VectorToolIndex
    assert specs.index_factory("hybrid") is HybridToolIndex


@pytest.mark.parametrize("bad", ["nope", "bm25:hashing", "regex:x", "vector:", "", "BM25"])
def test_an_unknown_index_names_the_valid_ones(bad: str) -> None:
    with pytest.raises(ValueError, match="unknown index") as info:
        specs.index_factory(bad)
    assert f"choose from {', '.join(specs.INDEX_KINDS)}" in str(info.value)
    assert "vector:EMBEDDER, hybrid:EMBEDDER" in str(info.value)
    with pytest.raises(ValueError, match="unknown index"):
        specs.make_index(bad)


def test_an_unknown_embedder_in_an_index_spec_fails_before_building() -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        specs.index_factory("hybrid:no-such-embedder")


def test_extra_names_come_first_and_are_listed() -> None:
    def mine() -> object:
        return object()

    assert specs.index_factory("mine", extra={"mine": mine}) is mine  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=f"choose from {', '.join([*specs.INDEX_KINDS, 'mine'])}"):
        specs.index_factory("other", extra={"mine": mine})  # type: ignore[dict-item]


def test_an_embedder_spec_factory_loads_nothing_until_called(tmp_path: Path, loads) -> None:
    factory = specs.index_factory(f"vector:{tmp_path}")
    assert factory is specs.index_factory(f"vector:{tmp_path}")  # rebuilt by name, same one
    assert loads.loaded == []


@needs_faiss
def test_one_model_per_embedder_spec_and_process(tmp_path: Path, loads) -> None:
    spec = f"vector:{tmp_path}"
    first, second = specs.index_factory(spec)(), specs.index_factory(spec)()
    assert first is not second
    assert first.embedder is second.embedder
    assert specs.make_index(spec).embedder is first.embedder
    assert specs.make_index("vector", embedder=str(tmp_path)).embedder is first.embedder
    assert loads.loaded == [str(tmp_path)]


@needs_faiss
@needs_tantivy
def test_index_specs_with_an_embedder_build_vector_and_hybrid() -> None:
    from toolsearch.indexes import HybridToolIndex, VectorToolIndex

    vector = specs.index_factory("vector:hashing-24")()
    assert isinstance(vector, VectorToolIndex)
    assert vector.embedder.name == "hashing-24"
    hybrid = specs.index_factory("hybrid:hashing-24")()
    assert isinstance(hybrid, HybridToolIndex)
    assert hybrid.vector.embedder is vector.embedder


@needs_faiss
@needs_tantivy
def test_make_index_takes_the_settings_options() -> None:
    from toolsearch.indexes import (
        Bm25ToolIndex,
        FunctionReranker,
        HybridToolIndex,
        RegexToolIndex,
        RerankingToolIndex,
    )

    assert isinstance(specs.make_index("regex"), RegexToolIndex)
    bm25 = specs.make_index("bm25", bm25_min_score=0.3)
    assert isinstance(bm25, Bm25ToolIndex)
    assert bm25.min_score == 0.3
    hybrid = specs.make_index("hybrid", embedder="hashing-32", bm25_min_score=0.2)
    assert isinstance(hybrid, HybridToolIndex)
    assert hybrid.bm25.min_score == 0.2
    assert hybrid.vector.embedder.name == "hashing-32"
    mine = HashingEmbedder(8)
    assert specs.make_index("vector", embedder=mine).embedder is mine
    reranker = FunctionReranker(lambda query, document: 0.0, name="zero")
    reranked = specs.make_index("regex", reranker=reranker)
    assert isinstance(reranked, RerankingToolIndex)
    assert isinstance(reranked.first_stage, RegexToolIndex)
    assert reranked.reranker is reranker


def test_make_index_refuses_options_that_do_not_apply(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match="applies to index 'vector', 'hybrid' or 'milvus', not 'bm25'"
    ):
        specs.make_index("bm25", embedder="minilm")
    with pytest.raises(ValueError, match="names its embedder"):
        specs.make_index("hybrid:hashing", embedder="hashing-8")
    with pytest.raises(ValueError, match="unknown embedder"):
        specs.make_index("vector", embedder="no-such-model")
    with pytest.raises(ValueError, match="no reranker folder"):
        specs.make_index("regex", reranker=tmp_path / "missing")


def test_the_mcp_proxy_names_its_indexes_through_the_registry() -> None:
    pytest.importorskip("mcp", reason="the proxy needs toolsearch[mcp]")
    from toolsearch.indexes import RegexToolIndex
    from toolsearch.mcp.proxy import make_index

    assert isinstance(make_index("regex"), RegexToolIndex)
    with pytest.raises(ValueError, match=f"must be one of {', '.join(specs.INDEX_KINDS)}, not"):
        make_index("nope")


def test_the_registry_is_light_and_does_not_import_tuning() -> None:
    code = (
        "import sys, toolsearch.indexes.specs as s\n"
        "s.index_factory('hybrid:hashing'); s.embedder_factory('tuned')\n"
        "loaded = ('numpy', 'torch', 'toolsearch_bench.tuning')\n"
        "print(' '.join(m for m in loaded if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_a_reranker_folder_is_loaded_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsearch.indexes import rerank

    loaded: list[str] = []

    def fake_load(name: str) -> rerank.FunctionReranker:
        loaded.append(str(name))
        return rerank.FunctionReranker(lambda query, document: 0.0, name=str(name))

    monkeypatch.setattr(rerank, "load_reranker", fake_load)
    index = specs.make_index("regex", reranker="/models/ce")
    assert isinstance(index, rerank.RerankingToolIndex)
    assert index.reranker.name == "/models/ce"
    assert loaded == ["/models/ce"]


def test_only_the_unnamed_default_falls_back_and_it_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """One rule for a missing [bm25]: a named index raises; the default degrades to regex
    with a warning (the advisor's default and the settings' default alike)."""
    import logging

    from toolsearch.errors import MissingExtraError
    from toolsearch.indexes import RegexToolIndex
    from toolsearch.search import ToolSearchToolCallingAdvisor
    from toolsearch.settings import ToolSearchSettings, tool_search_advisor

    def without_tantivy(self: object, *args: object, **kwargs: object) -> None:
        raise MissingExtraError("BM25 tool search", "bm25", "tantivy")

    monkeypatch.setattr("toolsearch.indexes.lexical.bm25.Bm25ToolIndex.__init__", without_tantivy)
    specs._warn_fallback.cache_clear()
    with caplog.at_level(logging.WARNING, logger="toolsearch.indexes.specs"):
        assert isinstance(ToolSearchToolCallingAdvisor().tool_index, RegexToolIndex)
        settings_default = tool_search_advisor(ToolSearchSettings())
        assert isinstance(settings_default.tool_index, RegexToolIndex)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1  # once per process
    assert "toolsearch[bm25]" in warnings[0]
    with pytest.raises(MissingExtraError, match=r"toolsearch\[bm25\]"):
        tool_search_advisor(ToolSearchSettings(index_type="bm25"))
    with pytest.raises(MissingExtraError, match=r"toolsearch\[bm25\]"):
        specs.make_index("bm25")
    specs._warn_fallback.cache_clear()
