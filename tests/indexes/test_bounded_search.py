"""Every search does bounded work, whatever the query (property tests with Hypothesis).

Bounds are asserted on the work done, not on wall time: the session layer hands a ranker
at most ``MAX_QUERY_LENGTH`` characters of any query; the natural-language regex is built
in one pass and never longer than its limit; a model-written pattern consumes at most
``MAX_MATCHES_PER_FIELD["pattern"]`` matches per field of each tool. No query raises
anything but the documented typed errors.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from toolsearch import ToolDefinition  # noqa: E402
from toolsearch.errors import InvalidPatternError, PatternTooLongError  # noqa: E402
from toolsearch.indexes.session import MAX_QUERY_LENGTH, SessionIndex, clean_query  # noqa: E402
from toolsearch.search.types import ToolSearchRequest  # noqa: E402

WORDS = [
    "weather", "forecast", "send", "email", "github", "issue", "refund", "payment",
    "calendar", "event", "search", "file", "archive", "ticket", "translate", "text",
]  # fmt: skip


def _tool(i: int) -> ToolDefinition:
    words = [WORDS[(i * 7 + j) % len(WORDS)] for j in range(60)]
    return ToolDefinition(
        name=f"{WORDS[i % len(WORDS)]}_{WORDS[(i * 3) % len(WORDS)]}_{i}",
        description=" ".join(words),
        input_schema={
            "type": "object",
            "properties": {
                f"{WORDS[(i + k) % len(WORDS)]}Id": {"type": "string", "description": "x " * 20}
                for k in range(3)
            },
        },
    )


TOOLS = [_tool(i) for i in range(60)]

QUERIES = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=string.printable, max_size=2_000),
    st.lists(st.sampled_from([*WORDS, "the", "a", ".", "getWeatherForecast"]), max_size=400).map(
        " ".join
    ),
    st.builds(
        lambda c, n: c * n,
        st.sampled_from(["a", "ab ", ".,", "\ud800", " "]),
        st.integers(0, 60_000),
    ),
)  # fmt: skip

ADVERSARIAL_PATTERNS = [
    "(a+)+$", "(a|aa)*b", "(.*a){20}", ".", "\\C", "(a*)*", "(" * 30 + "a*" + ")*" * 30,
    "(?i)(send|email)", "[", "((((", "a{1000}", "(a{100}){100}", "\\p{L}+", "[^\\x00-\\x{10FFFF}]",
    "(?P<x>a)(?P=x)", "\\", "x" * 199, "x" * 201, "", " ", "q\ud800", "(?s).*", "^$", "\\b\\B",
]  # fmt: skip


class SpyRanker:
    """Wraps a ranker and records the length of every query it is asked to rank."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.search_type = inner.search_type
        self.lengths: list[int] = []

    def prepare(self, tools: Any) -> Any:
        prepared = self.inner.prepare(tools)
        spy = self

        class _Session:
            def rank(self, query: str, limit: int, allowed: Any = None) -> Any:
                spy.lengths.append(len(query))
                return prepared.rank(query, limit, allowed)

        return _Session()


def _rankers() -> dict[str, Callable[[], Any]]:
    from toolsearch import indexes

    made: dict[str, Callable[[], Any]] = {"regex": lambda: indexes.RegexRanker()}
    try:
        import tantivy  # noqa: F401

        made["bm25"] = lambda: indexes.Bm25Ranker()
    except ImportError:  # pragma: no cover - depends on the machine
        pass
    try:
        import faiss  # noqa: F401

        made["vector-hashing"] = lambda: indexes.VectorRanker(indexes.HashingEmbedder())
        if "bm25" in made:
            made["hybrid-hashing"] = lambda: indexes.HybridRanker(
                indexes.Bm25Ranker(), indexes.VectorRanker(indexes.HashingEmbedder())
            )
    except ImportError:  # pragma: no cover - depends on the machine
        pass
    return made


RANKERS = _rankers()


@pytest.fixture(scope="module", params=sorted(RANKERS))
def spied(request: pytest.FixtureRequest) -> tuple[SessionIndex, SpyRanker]:
    spy = SpyRanker(RANKERS[request.param]())
    index = SessionIndex(spy)
    index.index_tools("s", TOOLS)
    return index, spy


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=QUERIES, limit=st.integers(-3, 50))
def test_any_query_is_answered_with_bounded_input_to_the_ranker(spied, query, limit) -> None:
    index, spy = spied
    spy.lengths.clear()
    response = index.search(ToolSearchRequest("s", query, limit))
    assert len(response.tool_references) <= max(1, limit)
    assert all(length <= MAX_QUERY_LENGTH for length in spy.lengths)
    assert response.metadata.query == clean_query(query)  # as given, surrogates replaced


def test_a_hundred_thousand_characters_reach_the_ranker_as_the_maximum(spied) -> None:
    index, spy = spied
    spy.lengths.clear()
    query = ("weather forecast " * 7_000)[:100_000]
    response = index.search(ToolSearchRequest("s", query, 5))
    assert spy.lengths == [MAX_QUERY_LENGTH]
    assert response.tool_references  # the words within the limit still match
    assert response.metadata.query == query  # reported as given


def test_a_query_blank_within_the_limit_is_blank() -> None:
    spy = SpyRanker(RANKERS["regex"]())
    index = SessionIndex(spy)
    index.index_tools("s", TOOLS)
    response = index.search(ToolSearchRequest("s", " " * MAX_QUERY_LENGTH + "weather", 5))
    assert response.tool_references == ()
    assert spy.lengths == []


# -- the natural-language pattern: one pass, never longer than its limit -------------------


def _reference_pattern(query: str, max_length: int) -> str | None:
    """The earlier (quadratic) construction, as the oracle on small inputs."""
    from toolsearch.indexes.text import query_terms

    terms = query_terms(query)
    while len(terms) > 1:
        pattern = "(" + "|".join(re.escape(t) for t in terms) + ")"
        if len(pattern) <= max_length:
            return pattern
        terms.pop()
    if not terms:
        return None
    term = terms[0]
    while len(re.escape(term)) + 2 > max_length:
        term = term[:-1]
    return f"({re.escape(term)})" if term else None


@settings(max_examples=300, deadline=None)
@given(query=st.text(max_size=400), max_length=st.integers(3, 250))
def test_natural_language_pattern_matches_the_reference_and_its_limit(query, max_length) -> None:
    from toolsearch.indexes.lexical.regex import natural_language_pattern

    pattern = natural_language_pattern(query, max_length)
    assert pattern == _reference_pattern(query, max_length)
    if pattern is not None:
        assert len(pattern) <= max_length
        re.compile(pattern)


# -- pattern mode: typed errors only, and a bounded number of matches ----------------------


@pytest.fixture(scope="module")
def pattern_index() -> Any:
    pytest.importorskip("re2", reason="toolsearch[regex] is not installed (google-re2)")
    from toolsearch.indexes import RegexToolIndex

    index = RegexToolIndex(mode="pattern")
    index.index_tools("s", TOOLS)
    return index


@pytest.mark.parametrize("pattern", ADVERSARIAL_PATTERNS)
def test_adversarial_patterns_give_results_or_typed_errors(pattern_index, pattern, monkeypatch):
    from toolsearch.indexes.lexical import regex

    consumed = [0]
    compile_pattern = regex._compile_model_pattern

    def counting(text: str) -> Any:
        finder = compile_pattern(text)

        def counted(field: str) -> Any:
            for start in finder(field):
                consumed[0] += 1
                yield start

        return counted

    monkeypatch.setattr(regex, "_compile_model_pattern", counting)
    try:
        response = pattern_index.search(ToolSearchRequest("s", pattern, 5))
    except (InvalidPatternError, PatternTooLongError) as exc:
        error = exc.to_tool_result()["error"]
    else:
        error = None
        assert len(response.tool_references) <= 5
    assert error in (None, "invalid_pattern", "pattern_too_long")
    assert consumed[0] <= len(TOOLS) * 3 * regex.MAX_MATCHES_PER_FIELD["pattern"]


def test_a_lone_surrogate_is_not_a_regex_operator(pattern_index) -> None:
    """``q\\ud800`` must not run as ``q?`` (which matches every tool)."""
    response = pattern_index.search(ToolSearchRequest("s", "q\ud800", 5))
    assert response.tool_names == []


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pattern=st.text(alphabet="()[]{}|*+?.^$\\aAbB01,-:ipsxuCdDwW<>=!P", max_size=220))
def test_random_patterns_never_raise_untyped_errors(pattern_index, pattern) -> None:
    try:
        response = pattern_index.search(ToolSearchRequest("s", pattern, 5))
    except (InvalidPatternError, PatternTooLongError):
        return
    assert len(response.tool_references) <= 5


# -- through the advisor --------------------------------------------------------------------


def test_the_search_tool_passes_a_huge_query_within_the_bound() -> None:
    from toolsearch.search.sessions import ToolSearchSessions

    spy = SpyRanker(RANKERS["regex"]())
    run = ToolSearchSessions(SessionIndex(spy)).open("s", tools=TOOLS)
    tool = run.search_tool()

    result = json.loads(tool.call(json.dumps({"query": "refund payment " * 20_000})))
    assert result
    assert run.discovered == result
    assert spy.lengths == [MAX_QUERY_LENGTH]
