"""``toolsearch index build|search|info --engine milvus`` against a real Milvus server (the
``milvus_uri`` fixture): what users type, what they see, idempotent re-runs, exit codes.
Each test writes a collection of its own, dropped afterwards."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("typer", reason="the command line needs toolsearch[catalog]")
pytest.importorskip("tantivy", reason="catalog indexes need toolsearch[bm25]")
pytest.importorskip("pymilvus", reason="toolsearch[milvus] is not installed (pymilvus)")

from typer.testing import CliRunner

from toolsearch.cli import _app
from toolsearch.indexes.milvus import MilvusRanker

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def collection(milvus_uri: str) -> Iterator[str]:
    name = f"cli_{uuid.uuid4().hex[:16]}"
    yield name
    ranker = MilvusRanker(milvus_uri, collection=name, mode="bm25")
    if ranker.exists():
        ranker.drop()
    ranker.close()


def invoke(runner: CliRunner, *args: str):
    return runner.invoke(_app(), ["index", *args], catch_exceptions=False)


def milvus(uri: str, collection: str) -> tuple[str, ...]:
    return ("--engine", "milvus", "--uri", uri, "--collection", collection)


def test_build_search_info_and_an_idempotent_rerun(runner, catalog, milvus_uri, collection):
    where = milvus(milvus_uri, collection)
    args = ("build", str(catalog), "--kind", "hybrid", "--embedder", "hashing-32", *where)
    first = invoke(runner, *args)
    assert first.exit_code == 0, first.output
    assert "wrote 3 tools" in first.output
    assert "0 already there" in first.output

    again = invoke(runner, *args)
    assert again.exit_code == 0, again.output
    assert "nothing to write: all 3 tools are already in" in again.output

    searched = invoke(runner, "search", "refund a payment", "-k", "2", *where)
    assert searched.exit_code == 0, searched.output
    assert "billing_refund_payment" in searched.output
    assert "hybrid" in searched.output
    bm25 = invoke(runner, "search", "weather forecast", "-k", "1", "--mode", "bm25", *where)
    assert bm25.exit_code == 0, bm25.output
    assert "weather_get_forecast" in bm25.output
    assert "calendar" not in bm25.output
    exact = invoke(runner, "search", "calendar_create_event", "-k", "1", *where)
    assert "calendar_create_event" in exact.output

    info = invoke(runner, "info", *where)
    assert info.exit_code == 0, info.output
    for text in ("milvus", collection, "hashing-32", "bm25, vector, hybrid", "k1 1.2"):
        assert text in info.output
    assert MilvusRanker(milvus_uri, collection=collection, mode="bm25").count() == 3


def test_more_sources_add_only_their_tools(runner, catalog, milvus_uri, collection):
    where = milvus(milvus_uri, collection)
    first = invoke(runner, "build", str(catalog), "--kind", "bm25", *where)
    assert first.exit_code == 0, first.output
    sources = [str(catalog), str(FIXTURES / "mcp"), str(FIXTURES / "openapi" / "petstore.json")]
    more = invoke(runner, "build", *sources, "--kind", "bm25", "--batch-size", "4", *where)
    assert more.exit_code == 0, more.output
    assert "3 already there" in more.output
    total = MilvusRanker(milvus_uri, collection=collection, mode="bm25").count()
    assert total > 3
    assert (
        f"nothing to write: all {total:,} tools"
        in invoke(runner, "build", *sources, "--kind", "bm25", *where).output
    )
    info = invoke(runner, "info", *where)
    assert f"{total:,}" in info.output
    assert "bm25" in info.output
    vector = invoke(runner, "search", "pets", "--mode", "vector", *where)
    assert vector.exit_code == 1
    assert "holds no vectors" in vector.output


def test_user_errors_exit_cleanly(runner, catalog, milvus_uri, collection):
    no_collection = invoke(runner, "build", str(catalog), "--engine", "milvus", "--uri", "x.db")
    assert no_collection.exit_code == 2
    assert "--collection" in no_collection.output
    missing = invoke(runner, "search", "weather", *milvus(milvus_uri, collection))
    assert missing.exit_code == 1
    assert "no such collection" in missing.output
    assert "toolsearch index build" in missing.output
    two = invoke(runner, "search", "folder", "weather", *milvus(milvus_uri, collection))
    assert two.exit_code == 2
    bad_mode = invoke(runner, "search", "weather", "--mode", "regex", *milvus(milvus_uri, "c"))
    assert bad_mode.exit_code == 2
    info = invoke(runner, "info", *milvus(milvus_uri, collection))
    assert info.exit_code == 1
    assert "no such collection" in info.output


def test_an_unreachable_server_is_one_line_and_exit_code_1(runner, catalog):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    for args in (
        ("build", str(catalog), "--kind", "bm25", *milvus(dead, "tools")),
        ("search", "weather", *milvus(dead, "tools")),
        ("info", *milvus(dead, "tools")),
    ):
        result = invoke(runner, *args)
        assert result.exit_code == 1, result.output
        assert "error:" in result.output
        assert f"Milvus at {dead}" in result.output
        assert "Traceback" not in result.output
