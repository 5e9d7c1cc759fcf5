"""``MilvusToolIndex`` under faults, against real Milvus Lite servers: a server restart (the
collection comes back released), a collection released under a live index, tools whose
text Milvus cannot hold as given, a row the server refuses, and pymilvus's own per-RPC
logging during an outage."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pymilvus", reason="toolsearch[milvus] is not installed (pymilvus)")
pytest.importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
pytest.importorskip("numpy", reason="toolsearch[vector] is not installed (numpy)")

import services

from toolsearch import ToolDefinition
from toolsearch.errors import IndexUnavailableError
from toolsearch.indexes import HashingEmbedder, MilvusToolIndex
from toolsearch.indexes.milvus.client import RetryPolicy
from toolsearch.search import ToolSearchRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))
from test_index_contract import CATALOG


def make(uri: str, collection: str, mode: str = "hybrid", **options: Any) -> MilvusToolIndex:
    options.setdefault("embedder", None if mode == "bm25" else HashingEmbedder())
    return MilvusToolIndex(uri, collection=collection, mode=mode, **options)


def names(index: MilvusToolIndex, session: str, query: str, limit: int = 5) -> list[str]:
    return index.search(ToolSearchRequest(session, query, limit)).tool_names


def milvus_lite() -> str:
    program = shutil.which("milvus-lite") or str(Path(sys.executable).with_name("milvus-lite"))
    if not Path(program).exists():
        pytest.skip("milvus-lite (extra [milvus]) is not installed")
    return program


# -- a restart, a released collection ----------------------------------------------------


def test_an_index_searches_again_after_its_server_restarts(tmp_path, caplog) -> None:
    """A restarted Milvus Lite server has the collection back released; the live index loads
    it again on its next search instead of answering ``index_unavailable`` for ever."""
    program, port = milvus_lite(), services.free_port()
    command = [program, "server", "--data-dir", str(tmp_path), "--host", "127.0.0.1"]
    command += ["--port", str(port)]
    uri = f"http://127.0.0.1:{port}"
    with services._server(command, port, "milvus-lite server"):
        index = make(uri, "restarted")  # the default retries: a channel reconnects in them
        index.index_tools("a", CATALOG)
        assert names(index, "a", "refund a payment", 1) == ["stripe.createRefund"]
    with pytest.raises(IndexUnavailableError):  # down: the model reads index_unavailable
        names(index, "a", "refund a payment", 1)
    with services._server(command, port, "milvus-lite server"), caplog.at_level(logging.WARNING):
        deadline = time.monotonic() + 60  # the client's channel reconnects on its own backoff
        while True:
            try:
                first = names(index, "a", "refund a payment", 1)
                break
            except IndexUnavailableError:
                assert time.monotonic() < deadline, "the index never searched again"
        found = [names(index, "a", "refund a payment", 1) for _ in range(5)]
        assert [first, *found] == [["stripe.createRefund"]] * 6
        index.close()
    assert sum("was released" in r.getMessage() for r in caplog.records) == 1


def test_a_collection_released_under_a_live_index_is_loaded_again(
    milvus_uri, collection, caplog
) -> None:
    from pymilvus import MilvusClient

    index = make(milvus_uri, collection, "bm25")
    index.index_tools("a", CATALOG)
    other = MilvusClient(uri=milvus_uri)
    other.release_collection(collection)
    with caplog.at_level(logging.WARNING):
        assert names(index, "a", "refund a payment", 1) == ["stripe.createRefund"]
        # a new session's writes look up fingerprints (a query): they need it loaded too
        other.release_collection(collection)
        index.index_tools("b", CATALOG[:3])
        assert names(index, "b", CATALOG[0].name, 1) == [CATALOG[0].name]
    other.close()
    assert sum("was released" in r.getMessage() for r in caplog.records) == 2


# -- tools Milvus cannot hold as given ----------------------------------------------------


def test_tools_with_text_milvus_cannot_hold_are_stored_and_found(
    milvus_uri, collection, caplog
) -> None:
    """A name longer than a VARCHAR (65,535 bytes) and lone surrogates are stored in a form
    Milvus holds; the session finds them and names them as they were given."""
    long_name = "refund_" + "x" * 70_000
    odd = [
        ToolDefinition(long_name, "Refund a long-named ledger entry", {"type": "object"}),
        ToolDefinition(
            "pay\ud800out",
            "Send \udc00 a payout to a seller",
            {"type": "object", "properties": {"amo\udfffunt": {"type": "number"}}},
        ),
    ]
    index = make(milvus_uri, collection)
    with caplog.at_level(logging.WARNING):
        index.index_tools("a", [*CATALOG[:5], *odd])
        assert long_name in names(index, "a", "long-named ledger entry")
        assert names(index, "a", "send a payout to a seller", 1) == ["pay\ud800out"]
        assert names(index, "a", CATALOG[2].name, 1) == [CATALOG[2].name]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    report = index.upsert_tools(odd)
    assert (report.written, report.present, report.refused) == (0, 2, ())
    shown = index.search_catalog("send a payout to a seller", 1).tool_references[0]
    assert shown.tool_name == "pay\ufffdout"  # the stored form


class Refusing:
    """A real ``MilvusClient`` that refuses, as a server limit would, any upsert holding a
    row whose name contains ``marker`` (the whole batch, as the server fails a batch)."""

    def __init__(self, client: Any, marker: str) -> None:
        self._client = client
        self.marker = marker

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def upsert(self, collection: str, data: list[dict[str, Any]], **kwargs: Any) -> Any:
        from pymilvus import MilvusException

        if any(self.marker in row["name"] for row in data):
            raise MilvusException(code=1100, message="the JSON field exceeds its maximum size")
        return self._client.upsert(collection, data=data, **kwargs)


def test_a_tool_the_server_refuses_costs_only_itself(milvus_uri, collection, caplog) -> None:
    from pymilvus import MilvusClient

    client = Refusing(MilvusClient(uri=milvus_uri), "oversized")
    bad = ToolDefinition("oversized_tool", "An oversized refund tool", {"type": "object"})
    index = make(milvus_uri, collection, "bm25", client=client)
    with caplog.at_level(logging.WARNING):
        index.index_tools("a", [*CATALOG, bad])
        assert names(index, "a", "refund a payment", 1) == ["stripe.createRefund"]
        assert "oversized_tool" not in names(index, "a", "oversized refund tool")
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "refused to store tool 'oversized_tool'" in warnings[0]
    assert "exceeds its maximum size" in warnings[0]
    assert "unavailable" not in warnings[0]
    report = index.upsert_tools([CATALOG[0], bad])
    assert (report.present, report.written) == (1, 0)
    assert [(r.name, r.fingerprint) for r in report.refused] == [
        ("oversized_tool", bad.fingerprint)
    ]


def test_a_server_that_fails_a_write_transiently_is_not_a_refused_tool(
    milvus_uri, collection
) -> None:
    """An outage during a write is the server's, not a tool's: the write is not split into
    refusals, and the session's first search raises ``index_unavailable`` (and writes)."""
    from pymilvus import MilvusClient, MilvusException

    class Down(Refusing):
        def upsert(self, collection: str, data: list[dict[str, Any]], **kwargs: Any) -> Any:
            if self.marker:
                raise MilvusException(code=2, message="Fail connecting to server")
            return self._client.upsert(collection, data=data, **kwargs)

    client = Down(MilvusClient(uri=milvus_uri), "down")
    index = make(milvus_uri, collection, "bm25", client=client, retry=RetryPolicy(attempts=1))
    with pytest.raises(IndexUnavailableError, match="Fail connecting"):
        index.upsert_tools(CATALOG)
    index.index_tools("a", CATALOG)  # logs; the first search writes
    with pytest.raises(IndexUnavailableError):
        names(index, "a", "refund a payment", 1)
    client.marker = ""
    assert names(index, "a", "refund a payment", 1) == ["stripe.createRefund"]


# -- pymilvus's own logging ----------------------------------------------------------------


def test_an_outage_prints_no_pymilvus_tracebacks(tmp_path) -> None:
    """pymilvus logs every failed RPC with its traceback on a console handler of its own (461
    lines before one CLI error); through toolsearch a server that dies under a live index
    costs one line: the typed error (here printed by the script)."""
    program, port = milvus_lite(), services.free_port()
    command = [program, "server", "--data-dir", str(tmp_path), "--host", "127.0.0.1"]
    script = textwrap.dedent(
        f"""
        import sys
        from toolsearch import ToolDefinition
        from toolsearch.indexes import MilvusToolIndex
        from toolsearch.indexes.milvus.client import RetryPolicy
        from toolsearch.search import ToolSearchRequest
        from toolsearch.errors import IndexUnavailableError
        index = MilvusToolIndex("http://127.0.0.1:{port}", mode="bm25", timeout=2.0,
                                collection="outage", retry=RetryPolicy(backoff=0.05))
        index.index_tools("a", [ToolDefinition("refund", "Refund a payment", {{}})])
        print(index.search(ToolSearchRequest("a", "refund", 3)).tool_names, flush=True)
        sys.stdin.readline()  # the server is stopped meanwhile
        try:
            index.search(ToolSearchRequest("a", "refund", 3))
        except IndexUnavailableError as exc:
            print("unavailable:", exc.code)
        """
    )
    with services._server([*command, "--port", str(port)], port, "milvus-lite server"):
        child = subprocess.Popen(
            [sys.executable, "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "['refund']"
    out, err = child.communicate("go\n", timeout=120)
    assert out.strip() == "unavailable: index_unavailable", err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert len(err.splitlines()) <= 2, err[-2000:]
