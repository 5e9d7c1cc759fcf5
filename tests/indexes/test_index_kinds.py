"""The index kinds table (toolsearch.indexes.kinds): every place that names index kinds
reads it, the docs table equals it, and ``milvus`` is selectable by name."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import get_args

import pytest

from toolsearch.indexes import kinds, specs

ROOT = Path(__file__).resolve().parents[2]
NAMES = ", ".join(kinds.kind_names())
BUILT_IN = ("regex", "bm25", "vector", "hybrid", "milvus")


def _has(*modules: str) -> bool:
    try:
        for module in modules:
            __import__(module)
    except ImportError:
        return False
    return True


def _docs_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "index-engine.md").read_text()
    section = text.split("## Index kinds", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def _expected_row(kind: kinds.IndexKindRow) -> list[str]:
    takes = [f"`{form}`" for form in kind.spec_forms[1:]]
    if kind.needs_uri:
        takes.append(f"a server: `uri=` or `{kind.uri_variable}`")
    return [
        f"`{kind.name}`",
        f"`{kind.index.partition(':')[2]}`",
        f"`{kind.install}`" if kind.install else "core",
        "; ".join(takes),
        "yes" if kind.catalog else "",
        kind.summary,
    ]


def test_the_docs_table_is_the_code_table() -> None:
    assert _docs_rows() == [_expected_row(kind) for kind in kinds.KINDS]


def test_every_row_imports_and_its_extras_exist() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for kind in kinds.KINDS:
        assert callable(kind.index_class()), kind.name
        assert set(kind.extras) <= set(extras), kind.name
        if kind.build is not None:
            module, _, attribute = kind.build.partition(":")
            assert callable(getattr(__import__(module, fromlist=[attribute]), attribute))
        if not kind.needs_uri:  # a plain in-process kind gives its class
            assert specs.index_factory(kind.name) is kind.index_class()


def test_the_old_names_are_the_tables() -> None:
    assert kinds.kind_names() == specs.INDEX_KINDS
    assert [name for name in kinds.kind_names() if name in BUILT_IN] == list(BUILT_IN)
    assert kinds.embedding_kind_names() == specs.EMBEDDING_KINDS
    assert {"vector", "hybrid", "milvus"} <= set(kinds.embedding_kind_names())
    assert "milvus" in kinds.server_kind_names()


def test_the_catalog_kinds_are_the_tables() -> None:
    from toolsearch.catalog.build import IndexKind

    assert get_args(IndexKind) == kinds.catalog_kind_names()


@pytest.mark.parametrize("bad", ["nope", "BM25", "regex:x", "milvus:"])
def test_an_unknown_name_lists_the_table_everywhere(bad: str) -> None:
    from pydantic import ValidationError

    from toolsearch.mcp.config import ProxySettings
    from toolsearch.settings import ToolSearchSettings

    with pytest.raises(ValueError, match=f"choose from {NAMES}"):
        specs.index_factory(bad)
    with pytest.raises(ValueError, match=f"choose from {NAMES}"):
        specs.make_index(bad)
    name = bad.partition(":")[0]
    if name not in kinds.kind_names():
        with pytest.raises(ValueError, match=f"choose from {NAMES}"):
            kinds.index_kind(name)
        with pytest.raises(ValidationError, match=f"choose from {NAMES}"):
            ToolSearchSettings(index_type=name)
        with pytest.raises(ValidationError, match=f"choose from {NAMES}"):
            ProxySettings(index=bad)


def test_the_bench_and_the_clis_name_the_tables_kinds() -> None:
    typer_testing = pytest.importorskip("typer.testing", reason="the command lines need typer")
    from toolsearch.catalog.cli import index_app
    from toolsearch.mcp.cli import mcp_app
    from toolsearch_bench.cli import bench_app
    from toolsearch_bench.index_names import index_factory

    with pytest.raises(ValueError, match=f"choose from {NAMES}, peer: reference regex"):
        index_factory("nope")
    for app, command, listed in (
        (mcp_app(), ["proxy", "--help"], kinds.choices()),
        (bench_app(), ["--help"], NAMES),
        (index_app(), ["build", "--help"], kinds.choices(kinds.catalog_kind_names())),
    ):
        result = typer_testing.CliRunner().invoke(app, command, env={"COLUMNS": "400"})
        assert listed in " ".join(result.output.replace("│", " ").split()), command


def test_options_that_do_not_apply_are_refused() -> None:
    from pydantic import ValidationError

    from toolsearch.settings import ToolSearchSettings

    with pytest.raises(ValueError, match="uri='x' applies to index 'milvus', not 'bm25'"):
        specs.make_index("bm25", uri="x")
    with pytest.raises(ValueError, match="collection='c' applies to index 'milvus'"):
        specs.make_index("regex", collection="c")
    with pytest.raises(ValidationError, match="uri='x' applies to index_type milvus"):
        ToolSearchSettings(index_type="bm25", uri="x")
    with pytest.raises(ValidationError, match="applies to index_type vector, hybrid or milvus"):
        ToolSearchSettings(index_type="regex", embedder="static")
    with pytest.raises(ValueError, match="bm25_min_score is not supported"):
        specs.make_index("milvus", uri="http://127.0.0.1:1", bm25_min_score=0.5)


def test_milvus_without_a_uri_names_the_variable_and_the_extra(monkeypatch) -> None:
    monkeypatch.delenv("MILVUS_URI", raising=False)
    factory = specs.index_factory("milvus:hashing-32")  # nothing read or built yet
    for build in (factory, lambda: specs.make_index("milvus")):
        with pytest.raises(ValueError, match="needs a server") as info:
            build()
        message = str(info.value)
        assert "uri=" in message
        assert "MILVUS_URI" in message
        assert "toolsearch[milvus,bm25,vector]" in message


def test_milvus_without_pymilvus_names_the_extra(monkeypatch) -> None:
    from toolsearch.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "pymilvus", None)
    monkeypatch.setenv("MILVUS_URI", "http://127.0.0.1:1")
    with pytest.raises(MissingExtraError, match=r"toolsearch\[milvus\]"):
        specs.make_index("milvus")


def test_the_mcp_proxy_refuses_milvus_without_a_uri(monkeypatch, tmp_path: Path) -> None:
    typer_testing = pytest.importorskip("typer.testing", reason="typer (toolsearch[mcp])")
    from toolsearch.mcp.cli import mcp_app

    monkeypatch.delenv("MILVUS_URI", raising=False)
    config = tmp_path / "servers.toml"
    config.write_text('[servers.a]\ncommand = "x"\n')
    result = typer_testing.CliRunner().invoke(
        mcp_app(), ["proxy", "--config", str(config), "--index", "milvus"]
    )
    assert result.exit_code == 2
    assert "MILVUS_URI" in " ".join(result.output.replace("│", " ").split())


def test_the_table_is_light() -> None:
    code = (
        "import sys, toolsearch, toolsearch.indexes.kinds as k, toolsearch.indexes.specs as s\n"
        "k.KINDS; s.index_factory('milvus'); s.index_factory('hybrid:hashing')\n"
        "import toolsearch.settings\n"
        "print(' '.join(m for m in ('numpy', 'faiss', 'tantivy', 'pymilvus', 'torch')"
        " if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


# -- milvus by name, against a real server ---------------------------------------------------

needs_milvus = pytest.mark.skipif(
    not _has("pymilvus", "tantivy", "numpy"),
    reason="toolsearch[milvus,bm25,vector] is not installed (pymilvus, tantivy, numpy)",
)


@needs_milvus
def test_milvus_by_name_builds_a_milvus_index(milvus_uri: str, collection: str, monkeypatch):
    from toolsearch import ToolDefinition
    from toolsearch.indexes import MilvusToolIndex
    from toolsearch.search import ToolSearchRequest

    tools = [
        ToolDefinition(name="get_weather", description="Weather forecast for a city"),
        ToolDefinition(name="send_email", description="Send an email message"),
    ]
    index = specs.make_index("milvus:hashing-32", uri=milvus_uri, collection=collection)
    try:
        assert isinstance(index, MilvusToolIndex)
        assert (index.mode, index.collection, index.embedder.name) == (
            "hybrid",
            collection,
            "hashing-32",
        )
        index.index_tools("s", tools)
        found = index.search(ToolSearchRequest("s", "weather forecast", 2)).tool_names
        assert found[0] == "get_weather"
    finally:
        index.close()

    monkeypatch.setenv("MILVUS_URI", milvus_uri)  # by name alone: the URI from the variable
    again = specs.index_factory("milvus:hashing-32")()
    try:
        assert isinstance(again, MilvusToolIndex)
        assert again.collection == "toolsearch_tools"
        assert again.ranker.connection.uri == milvus_uri
    finally:
        again.close()


@needs_milvus
def test_milvus_from_the_settings(milvus_uri: str, collection: str) -> None:
    from toolsearch.indexes import MilvusToolIndex
    from toolsearch.settings import ToolSearchSettings, tool_search_advisor

    settings = ToolSearchSettings(
        index_type="milvus", embedder="hashing-32", uri=milvus_uri, collection=collection
    )
    index = tool_search_advisor(settings).tool_index
    try:
        assert isinstance(index, MilvusToolIndex)
        assert (index.collection, index.ranker.connection.uri) == (collection, milvus_uri)
    finally:
        index.close()
