"""``MilvusToolIndex`` against a real Milvus server (the ``milvus_uri`` fixture): writes by
fingerprint, sessions as filters inside the search, escaping, the three modes against the
in-process index of the same method, retries and the typed error a dead server gives, and
the advisor route that turns that error into a message for the model.

Every test uses collections of its own (unique names), dropped at the end.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

import pytest

pytest.importorskip("pymilvus", reason="toolsearch[milvus] is not installed (pymilvus)")
pytest.importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
pytest.importorskip("numpy", reason="toolsearch[vector] is not installed (numpy)")

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolDefinition,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.errors import IndexUnavailableError, MissingExtraError, ToolIndexError
from toolsearch.indexes import HashingEmbedder, MilvusRanker, MilvusToolIndex
from toolsearch.indexes.milvus.client import (
    RetryPolicy,
    in_filter,
    is_transient,
    string_literal,
)
from toolsearch.models import FunctionChatModel
from toolsearch.search import ToolSearchRequest

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "contracts"))
from test_index_contract import CATALOG, OTHER_TOOLS

SEARCH = "toolSearchTool"


def make(uri: str, collection: str, mode: str = "hybrid", **options: Any) -> MilvusToolIndex:
    options.setdefault("embedder", None if mode == "bm25" else HashingEmbedder())
    return MilvusToolIndex(uri, collection=collection, mode=mode, **options)


def search(index: Any, session: str, query: str, limit: int = 10, **kw: Any) -> list[str]:
    return index.search(ToolSearchRequest(session, query, limit, **kw)).tool_names


class Recording:
    """A ``MilvusClient`` proxy that records every call by name (and its arguments)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._client, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return target(*args, **kwargs)

        return call

    def named(self, *names: str) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
        return [c for c in self.calls if c[0] in names]


def recording(uri: str) -> Recording:
    from pymilvus import MilvusClient

    return Recording(MilvusClient(uri=uri))


# -- writes by fingerprint ---------------------------------------------------------------


def test_re_registering_unchanged_tools_writes_nothing(milvus_uri, collection) -> None:
    client = recording(milvus_uri)
    index = make(milvus_uri, collection, client=client)
    index.index_tools("a", CATALOG)
    assert index.ranker.rows_written == len(CATALOG)
    assert len(client.named("upsert")) == index.ranker.write_calls >= 1
    assert index.count() == len(CATALOG)

    # a second process (another index over the same collection) and another session
    other_client = recording(milvus_uri)
    other = make(milvus_uri, collection, client=other_client)
    other.index_tools("x", CATALOG)
    other.index_tools("y", list(reversed(CATALOG)))
    assert other.ranker.rows_written == 0
    assert other_client.named("upsert") == []
    assert other_client.named("get")  # it asked which fingerprints exist
    assert other.count() == len(CATALOG)

    # one changed tool: exactly that row is written
    changed = ToolDefinition(
        name="send_email", description="Send an email, now with read receipts.", category="email"
    )
    other.index_tools("z", [*CATALOG[:3], changed])
    assert other.ranker.rows_written == 1
    assert [len(c[2]["data"]) for c in other_client.named("upsert")] == [1]
    assert search(other, "z", "read receipts", 1) == ["send_email"]
    assert search(other, "x", "send an email", 1) == ["send_email"]  # the old row still serves x


def test_upsert_tools_reports_written_and_present(milvus_uri, collection) -> None:
    index = make(milvus_uri, collection, mode="vector")
    progress: list[tuple[int, int]] = []
    first = index.upsert_tools(
        CATALOG, batch_size=10, progress=lambda d, t: progress.append((d, t)), total=len(CATALOG)
    )
    assert (first.written, first.present) == (len(CATALOG), 0)
    assert progress[-1] == (len(CATALOG), len(CATALOG))
    assert len(progress) == 4
    again = index.upsert_tools([*CATALOG, *OTHER_TOOLS], batch_size=7)
    assert (again.written, again.present) == (len(OTHER_TOOLS), len(CATALOG))


def test_delete_by_fingerprint(milvus_uri, collection) -> None:
    index = make(milvus_uri, collection, mode="bm25")
    index.index_tools("a", CATALOG)
    target = next(t for t in CATALOG if t.name == "stripe.createRefund")
    assert search(index, "a", "refund a payment", 1) == [target.name]
    assert index.delete_tools([target.fingerprint]) == 1
    assert target.name not in search(index, "a", "refund a payment", 50)
    assert index.count() == len(CATALOG) - 1
    assert index.ranker.existing([target.fingerprint]) == set()


# -- sessions are filters inside the search ---------------------------------------------


def test_every_search_filters_by_the_sessions_fingerprints(milvus_uri, collection) -> None:
    client = recording(milvus_uri)
    for mode in ("bm25", "vector", "hybrid"):
        index = make(milvus_uri, collection + ("" if mode == "bm25" else "_b"), mode, client=client)
        index.index_tools("a", CATALOG)
        index.index_tools("b", OTHER_TOOLS)
        client.calls.clear()
        names = search(index, "b", "send an email weather forecast", 50)
        assert set(names) <= {t.name for t in OTHER_TOOLS}
        searches = client.named("search", "hybrid_search")
        assert len(searches) == 1
        name, args, kwargs = searches[0]
        wanted = in_filter("id", [t.fingerprint for t in OTHER_TOOLS])
        if name == "search":
            assert kwargs["filter"] == wanted
            assert kwargs["limit"] <= len(OTHER_TOOLS)  # never a global top-k
        else:
            requests = args[1]
            assert all(r.expr == wanted for r in requests)
            assert all(r.limit <= len(OTHER_TOOLS) for r in requests)


def test_category_searches_filter_by_the_allowed_fingerprints(milvus_uri, collection) -> None:
    client = recording(milvus_uri)
    index = make(milvus_uri, collection, "bm25", client=client)
    index.index_tools("a", CATALOG)
    client.calls.clear()
    names = search(index, "a", "list", 50, category="calendar")
    calendar = [t for t in CATALOG if t.category == "calendar"]
    assert names
    assert set(names) <= {t.name for t in calendar}
    (_, _, kwargs) = client.named("search")[0]
    assert kwargs["filter"] == in_filter("id", [t.fingerprint for t in calendar])


def test_same_name_in_two_sessions_and_two_indexes(milvus_uri, collection) -> None:
    one = make(milvus_uri, collection, "hybrid")
    two = make(milvus_uri, collection, "hybrid")
    one.index_tools("a", CATALOG)
    two.index_tools("b", OTHER_TOOLS)
    assert search(two, "b", "fax a document", 1) == ["send_email"]
    response = two.search(ToolSearchRequest("b", "send_email", 1))
    assert response.tool_references[0].summary.startswith("Send a fax")
    assert (
        one.search(ToolSearchRequest("a", "send_email", 1))
        .tool_references[0]
        .summary.startswith("Send an email")
    )
    assert search(one, "b", "fax") == []  # "b" is a session of the other index only


# -- escaping ------------------------------------------------------------------------------

HOSTILE = ['a"b', "c\\d", "e\\", '"', '\\"', "f'g", 'x" or id != "', "tab\there", "line\nbreak"]


def test_string_literals_escape_quotes_and_backslashes() -> None:
    assert string_literal('a"b') == '"a\\"b"'
    assert string_literal("c\\d") == '"c\\\\d"'
    assert string_literal("e\\") == '"e\\\\"'
    assert in_filter("id", ["x", 'y"']) == 'id in ["x", "y\\""]'


def test_hostile_ids_select_exactly_themselves(milvus_uri, collection) -> None:
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(uri=milvus_uri)
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=2)
    indexes = client.prepare_index_params()
    indexes.add_index("vector", index_type="AUTOINDEX", metric_type="COSINE")
    client.create_collection(collection, schema=schema, index_params=indexes)
    try:
        client.upsert(collection, [{"id": v, "vector": [1.0, 0.5]} for v in [*HOSTILE, "plain"]])
        for value in HOSTILE:
            rows = client.query(collection, filter=in_filter("id", [value]), output_fields=["id"])
            assert [r["id"] for r in rows] == [value]
        rows = client.query(collection, filter=in_filter("id", HOSTILE[:3]), output_fields=["id"])
        assert sorted(r["id"] for r in rows) == sorted(HOSTILE[:3])
    finally:
        client.drop_collection(collection)


def test_hostile_names_categories_and_catalogs(milvus_uri, collection) -> None:
    tools = [
        ToolDefinition(
            name=f"tool{i}_{value.replace(' ', '_').replace(chr(9), '_').replace(chr(10), '_')}",
            description=f"Archive ticket number {i}.",
            category=value,
        )
        for i, value in enumerate(HOSTILE)
    ]
    index = make(milvus_uri, collection, "bm25", catalog='cat"\\alog')
    index.index_tools("s", tools)
    for tool in tools:
        assert search(index, "s", tool.name, 1) == [tool.name]
        assert search(index, "s", "archive ticket", 50, category=tool.category) == [tool.name]
        found = index.search_catalog(tool.name, 3)
        assert found.tool_names[0] == tool.name
        assert index.search_catalog("archive ticket", 50, category=tool.category).tool_names == [
            tool.name
        ]
    ranker = index.ranker
    assert len(ranker.search_catalog("archive ticket", 50, catalog='cat"\\alog').tool_names) == len(
        tools
    )
    assert ranker.search_catalog("archive ticket", 50, catalog='cat"').tool_names == []


# -- the three modes against the in-process index of the same method ------------------------

QUERIES = [
    "send an email",
    "weather forecast",
    "create a github issue",
    "list calendar events",
    "refund a payment",
    "merge the pull request",
    "read a file",
    "upload to s3",
]


def test_bm25_ranks_like_the_in_process_bm25(milvus_uri, collection) -> None:
    """One session, a collection holding only its tools: the engine's statistics are the
    session's, so BM25F by repetition ranks exactly like ``Bm25ToolIndex``."""
    from toolsearch.indexes import Bm25ToolIndex

    local = Bm25ToolIndex()
    local.index_tools("a", CATALOG)
    remote = make(milvus_uri, collection, "bm25")
    remote.index_tools("a", CATALOG)
    for query in QUERIES:
        mine = local.search(ToolSearchRequest("a", query, 5))
        theirs = remote.search(ToolSearchRequest("a", query, 5))
        assert theirs.tool_names == mine.tool_names, query
        assert theirs.total_matches == mine.total_matches, query


def test_vector_ranks_like_the_in_process_vector(milvus_uri, collection) -> None:
    pytest.importorskip("faiss", reason="toolsearch[vector] is not installed (faiss-cpu)")
    from toolsearch.indexes import VectorToolIndex

    local = VectorToolIndex(embedder=HashingEmbedder())
    local.index_tools("a", CATALOG)
    remote = make(milvus_uri, collection, "vector")
    remote.index_tools("a", CATALOG)
    for query in QUERIES:
        mine = local.search(ToolSearchRequest("a", query, 5)).tool_references
        theirs = remote.search(ToolSearchRequest("a", query, 5)).tool_references
        assert [r.tool_name for r in theirs] == [r.tool_name for r in mine], query
        for a, b in zip(theirs, mine, strict=True):
            assert a.relevance_score == pytest.approx(b.relevance_score, abs=1e-4)


def test_hybrid_fuses_with_the_engines_rrf(milvus_uri, collection) -> None:
    pytest.importorskip("faiss", reason="toolsearch[vector] is not installed (faiss-cpu)")
    from toolsearch.indexes import Bm25ToolIndex, HybridToolIndex, VectorToolIndex

    local = HybridToolIndex(
        bm25=Bm25ToolIndex(), vector=VectorToolIndex(embedder=HashingEmbedder())
    )
    local.index_tools("a", CATALOG)
    remote = make(milvus_uri, collection, "hybrid")
    remote.index_tools("a", CATALOG)
    for query in QUERIES:
        mine = local.search(ToolSearchRequest("a", query, 3)).tool_references
        theirs = remote.search(ToolSearchRequest("a", query, 3)).tool_references
        assert theirs[0].tool_name == mine[0].tool_name, query
        assert theirs[0].relevance_score == pytest.approx(mine[0].relevance_score, abs=1e-6)
    assert remote.search_type == "milvus-hybrid"


def test_a_query_of_stop_words_only_finds_nothing_by_bm25(milvus_uri, collection) -> None:
    index = make(milvus_uri, collection, "bm25")
    index.index_tools("a", CATALOG)
    response = index.search(ToolSearchRequest("a", "the of and to is", 5))
    assert response.tool_names == []
    assert response.total_matches == 0


def test_settings_travel_with_the_collection(milvus_uri, collection) -> None:
    pytest.importorskip("faiss", reason="toolsearch[vector] is not installed (faiss-cpu)")
    writer = make(milvus_uri, collection, "vector", embedder=HashingEmbedder(64))
    writer.index_tools("a", CATALOG)
    reader = MilvusToolIndex(milvus_uri, collection=collection, mode="hybrid")  # no embedder
    assert reader.embedder.name == "hashing-64"
    reader.index_tools("a", CATALOG)
    assert reader.ranker.rows_written == 0
    assert search(reader, "a", "weather forecast", 1) == ["getWeatherForecast"]
    wrong = make(milvus_uri, collection, "vector", embedder=HashingEmbedder(32))
    with pytest.raises(ValueError, match="holds vectors of hashing-64"):
        wrong.index_tools("a", CATALOG)
    keyword_only = make(milvus_uri, collection + "_b", "bm25")
    keyword_only.index_tools("a", CATALOG[:3])
    semantic = MilvusToolIndex(milvus_uri, collection=collection + "_b", mode="vector")
    with pytest.raises(ValueError, match="holds no vectors"):
        semantic.index_tools("a", CATALOG[:3])


def test_bad_arguments_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="collection name"):
        MilvusToolIndex("http://127.0.0.1:1", collection="1 bad-name")
    with pytest.raises(ValueError, match="mode"):
        MilvusToolIndex("http://127.0.0.1:1", mode="regex")  # type: ignore[arg-type]
    from toolsearch.indexes import FusionParams

    with pytest.raises(ValueError, match="no weights"):
        MilvusToolIndex("http://127.0.0.1:1", fusion=FusionParams(bm25_weight=2.0))


def test_an_embedded_lite_file(tmp_path) -> None:
    pytest.importorskip("milvus_lite", reason="milvus-lite is not installed")
    index = make(str(tmp_path / "tools.db"), "embedded", "hybrid")
    index.index_tools("a", CATALOG)
    assert search(index, "a", "refund a payment", 1) == ["stripe.createRefund"]
    again = make(str(tmp_path / "tools.db"), "embedded", "hybrid")
    again.index_tools("a", CATALOG)
    assert again.ranker.rows_written == 0
    index.close()
    again.close()


# -- a dead or failing server ----------------------------------------------------------------


def closed_port_uri() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there once the socket is closed


def test_a_dead_server_is_retried_then_unavailable() -> None:
    waits: list[float] = []
    retry = RetryPolicy(attempts=4, backoff=0.5, factor=2.0, max_backoff=1.5, sleep=waits.append)
    index = make(closed_port_uri(), "dead", "bm25", retry=retry, timeout=2.0)
    index.index_tools("a", CATALOG)  # does not raise: the first search writes
    assert waits == [0.5, 1.0, 1.5]
    waits.clear()
    with pytest.raises(IndexUnavailableError) as caught:
        index.search(ToolSearchRequest("a", "send an email", 3))
    assert waits == [0.5, 1.0, 1.5]
    assert caught.value.code == "index_unavailable"
    assert "Milvus at http://127.0.0.1:" in str(caught.value)
    assert isinstance(caught.value, ToolIndexError)


class Flaky:
    """Fails the first ``failures`` calls with a transient error, then delegates."""

    def __init__(self, client: Any, failures: int, error: Exception) -> None:
        self._client = client
        self.failures = failures
        self.error = error

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.failures:
                self.failures -= 1
                raise self.error
            return target(*args, **kwargs)

        return call


def test_a_transient_failure_is_retried_and_passes(milvus_uri, collection) -> None:
    from pymilvus import MilvusClient, MilvusException

    waits: list[float] = []
    unavailable = MilvusException(code=2, message="Fail connecting to server, server unavailable")
    flaky = Flaky(MilvusClient(uri=milvus_uri), 2, unavailable)
    index = make(
        milvus_uri, collection, "bm25", client=flaky, retry=RetryPolicy(sleep=waits.append)
    )
    index.index_tools("a", CATALOG)
    assert waits == [0.2, 0.4]
    flaky.failures = 1
    assert search(index, "a", "refund a payment", 1) == ["stripe.createRefund"]
    assert len(waits) == 3


def test_a_non_transient_failure_is_not_retried(milvus_uri, collection) -> None:
    from pymilvus import MilvusClient, MilvusException

    waits: list[float] = []
    broken = MilvusException(code=1100, message="invalid parameter")
    assert not is_transient(broken)
    flaky = Flaky(MilvusClient(uri=milvus_uri), 1, broken)
    ranker = MilvusRanker(
        milvus_uri,
        collection=collection,
        mode="bm25",
        client=flaky,
        retry=RetryPolicy(sleep=waits.append),
    )
    with pytest.raises(IndexUnavailableError, match="invalid parameter"):
        ranker.count()
    assert waits == []


def test_missing_pymilvus_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pymilvus", None)
    with pytest.raises(MissingExtraError, match=r"toolsearch\[milvus\]"):
        MilvusToolIndex("http://127.0.0.1:1")


def test_a_dead_server_reaches_the_model_as_an_error_message() -> None:
    """Through ``ToolSearchToolCallingAdvisor``: the search tool's result is the typed error,
    the conversation goes on, and nothing raises."""
    index = make(
        closed_port_uri(), "dead", "hybrid", retry=RetryPolicy(attempts=2, sleep=lambda _: None)
    )
    tools = [
        FunctionToolCallback.from_schema(
            lambda _: "ok", name=t.name, description=t.description, input_schema=t.input_schema
        )
        for t in CATALOG[:5]
    ]
    results: list[str] = []

    def script(messages: list[Any], offered: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage):
            query = json.dumps({"query": "send an email"})
            return AssistantMessage(tool_calls=[ToolCall(id="1", name=SEARCH, arguments=query)])
        assert isinstance(last, ToolResponseMessage)
        results.append(last.responses[0].response_data)
        return AssistantMessage(content="searched")

    advisor = ToolSearchToolCallingAdvisor(tool_index=index, max_results=3)
    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    text = (
        client.prompt("email alice")
        .tools(tools)
        .advisors(lambda a: a.param(CONVERSATION_ID, "c1"))
        .call()
        .content()
    )
    assert text == "searched"
    error = json.loads(results[0])
    assert error["error"] == "index_unavailable"
    assert "Milvus at" in error["message"]
