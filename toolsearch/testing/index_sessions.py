"""The tool-index contract, part one: the protocol, sessions, exact names, concurrency.

:class:`IndexSessionsContract` is the half of :class:`~toolsearch.testing.ToolIndexContract`
about state; subclass ``ToolIndexContract`` (which adds the query half), not this.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import pytest

from toolsearch.errors import MissingExtraError
from toolsearch.search.types import (
    ToolIndex,
    ToolReference,
    ToolSearchRequest,
    ToolSearchResponse,
)
from toolsearch.testing.index_catalog import (
    CATALOG,
    CONCURRENT_QUERIES,
    ISOLATION_QUERIES,
    NAMES,
    OTHER_ONLY,
    OTHER_TOOLS,
    obj,
    string,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = ["IndexSessionsContract", "check_response", "search", "snapshot"]


def _tool(name: str, description: str, schema: dict[str, Any], category: str) -> ToolDefinition:
    return ToolDefinition(
        name=name, description=description, input_schema=schema, category=category
    )


def search(index: ToolIndex, session: str, query: str, **kwargs: Any) -> ToolSearchResponse:
    """``index.search`` of one request, its response checked with :func:`check_response`."""
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


def snapshot(response: ToolSearchResponse) -> tuple[Any, ...]:
    """What two equal searches must give alike: names, summaries, scores and the total."""
    return (
        tuple((r.tool_name, r.summary, r.relevance_score) for r in response.tool_references),
        response.total_matches,
    )


class IndexSessionsContract:
    """The protocol, sessions, exact names and concurrency of a ``ToolIndex``."""

    search_type: ClassVar[str | None] = None
    """The ``search_type`` the index reports (``None``: any non-empty string)."""

    def make_index(self) -> ToolIndex:
        """A fresh, empty index of the backend under test (called several times a test)."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_index()")

    def new_index(self) -> ToolIndex:
        """:meth:`make_index`, skipping the test when the backend's extra is missing."""
        try:
            return self.make_index()
        except MissingExtraError as exc:  # pragma: no cover - depends on the machine
            pytest.skip(str(exc))

    def expected_search_type(self, index: ToolIndex) -> str | None:
        """``search_type``, else the index's own ``search_type`` attribute (if it has one)."""
        if self.search_type is not None:
            return self.search_type
        return getattr(index, "search_type", None)

    @pytest.fixture
    def catalog_index(self) -> ToolIndex:
        """An index with ``CATALOG`` in session "a" and ``OTHER_TOOLS`` in session "b"."""
        index = self.new_index()
        index.index_tools("a", CATALOG)
        index.index_tools("b", OTHER_TOOLS)
        return index

    def test_lone_surrogates_in_tool_text_index_and_search(self) -> None:
        """A JSON ``"\\ud800"`` escape in a catalog file (or a Python string) leaves a lone
        surrogate in a tool's text, which UTF-8 engines (tantivy, RE2) cannot encode: the tool
        is indexed with U+FFFD in its place, found like any other, and named as it was given."""
        odd = ToolDefinition(
            "refund\ud800payment",
            "Refund \ud800 a card payment to the customer",
            {"type": "object", "properties": {"amo\udc00unt": {"description": "How \ud800 much"}}},
            category="pay\udfffments",
        )
        index = self.new_index()
        index.index_tools("s", [odd, *CATALOG[:5]])
        found = search(index, "s", "refund a card payment").tool_names
        assert "refund\ud800payment" in found
        exact = index.search(ToolSearchRequest(session_id="s", query="refund\ud800payment"))
        assert exact.tool_names[0] == "refund\ud800payment"
        assert exact.metadata.query == "refund\ufffdpayment"  # as the engine read it

    # --------------------------------------------------------------------------------------
    # The protocol
    # --------------------------------------------------------------------------------------

    def test_backend_implements_the_tool_index_protocol(self) -> None:
        index = self.new_index()
        assert isinstance(index, ToolIndex)
        if self.search_type is not None:
            assert getattr(index, "search_type", self.search_type) == self.search_type

    def test_metadata_has_search_type_query_and_time(self, catalog_index: ToolIndex) -> None:
        response = search(catalog_index, "a", "send an email")
        expected = self.expected_search_type(catalog_index)
        if expected is None:
            assert isinstance(response.metadata.search_type, str)
            assert response.metadata.search_type
        else:
            assert response.metadata.search_type == expected
        assert response.metadata.query == "send an email"
        assert response.metadata.search_time_ms >= 0

    def test_summary_is_the_first_sentence_of_the_description(
        self, catalog_index: ToolIndex
    ) -> None:
        response = search(catalog_index, "a", "send_email")
        assert response.tool_references[0].tool_name == "send_email"
        assert response.tool_references[0].summary.startswith("Send an email message")

    # --------------------------------------------------------------------------------------
    # Sessions
    # --------------------------------------------------------------------------------------

    @pytest.mark.parametrize("query", ISOLATION_QUERIES)
    def test_sessions_never_see_each_others_tools(
        self, catalog_index: ToolIndex, query: str
    ) -> None:
        a = search(catalog_index, "a", query, max_results=50)
        assert set(a.tool_names) <= set(NAMES)
        assert not set(a.tool_names) & OTHER_ONLY
        b = search(catalog_index, "b", query, max_results=50)
        assert set(b.tool_names) <= {t.name for t in OTHER_TOOLS}
        assert b.total_matches <= len(OTHER_TOOLS)
        assert a.total_matches <= len(CATALOG)

    def test_same_tool_name_in_two_sessions_keeps_each_sessions_description(
        self, catalog_index: ToolIndex
    ) -> None:
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
    def test_unknown_session_gives_an_empty_response(
        self, catalog_index: ToolIndex, query: str
    ) -> None:
        response = search(catalog_index, "no-such-session", query)
        assert list(response.tool_references) == []
        assert response.total_matches == 0

    def test_fresh_index_gives_an_empty_response(self) -> None:
        response = search(self.new_index(), "a", "send an email")
        assert list(response.tool_references) == []
        assert response.total_matches == 0

    def test_session_with_no_tools_gives_an_empty_response(self) -> None:
        index = self.new_index()
        index.index_tools("empty", [])
        for query in ("send an email", "send_email", "*"):
            response = search(index, "empty", query)
            assert list(response.tool_references) == []
            assert response.total_matches == 0

    def test_clear_index_empties_only_that_session(self, catalog_index: ToolIndex) -> None:
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

    def test_index_keeps_its_own_copy_of_the_tool_list(self) -> None:
        index = self.new_index()
        tools = list(CATALOG)
        index.index_tools("a", tools)
        tools.clear()
        assert "send_email" in search(index, "a", "send an email", max_results=3).tool_names
        assert search(index, "a", "send_email").tool_names[0] == "send_email"

    def test_reindexing_a_session_replaces_its_tools(self, catalog_index: ToolIndex) -> None:
        replacement = (
            *OTHER_TOOLS[:1],
            _tool(
                "translateText",  # same name as before, new meaning
                "Order a pizza for home delivery.",
                obj({"topping": string("Pizza topping", enum=["margherita", "funghi"])}),
                "food",
            ),
            _tool("ping_host", "Ping a network host.", obj({"host": string("Host")}), "dev"),
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
            search(catalog_index, "b", "send_email")
            .tool_references[0]
            .summary.startswith("Send a fax")
        )

    def test_index_tool_adds_one_tool(self, catalog_index: ToolIndex) -> None:
        new = _tool(
            "zoom.scheduleMeeting",
            "Schedule a Zoom video meeting and return the join link.",
            obj({"topic": string("Meeting topic")}),
            "calendar",
        )
        catalog_index.index_tool("a", new)
        assert search(catalog_index, "a", "zoom.scheduleMeeting").tool_names[0] == new.name
        assert (
            new.name in search(catalog_index, "a", "zoom video meeting", max_results=3).tool_names
        )
        # the others are still there
        for name in ("send_email", "github.create-issue", "getWeatherForecast"):
            assert search(catalog_index, "a", name).tool_names[0] == name
        total = search(catalog_index, "a", "meeting", max_results=100).tool_names
        assert len(total) <= len(CATALOG) + 1
        # not visible elsewhere
        assert (
            new.name
            not in search(catalog_index, "b", "zoom video meeting", max_results=50).tool_names
        )

    def test_index_tool_replaces_a_tool_of_the_same_name(self, catalog_index: ToolIndex) -> None:
        changed = _tool(
            "set_alarm",
            "Feed the aquarium fish automatically.",
            obj({"grams": {"type": "number"}}),
            "home",
        )
        catalog_index.index_tool("a", changed)
        response = search(catalog_index, "a", "feed the aquarium fish")
        assert response.tool_names[0] == "set_alarm"
        assert response.tool_references[0].summary == "Feed the aquarium fish automatically."
        names = search(catalog_index, "a", "set_alarm", max_results=100).tool_names
        assert names.count("set_alarm") == 1

    def test_concurrent_index_tool_calls_keep_every_tool(self) -> None:
        index = self.new_index()
        index.index_tools("a", CATALOG[:4])
        added = [
            _tool(f"plugin_{i}.runTask", f"Run task number {i} of plugin {i}.", obj({}), "plugins")
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

    def test_index_tool_on_a_new_session_creates_it(self) -> None:
        index = self.new_index()
        index.index_tool("fresh", CATALOG[3])
        response = search(index, "fresh", "send an email")
        assert response.tool_names == ["send_email"]

    # --------------------------------------------------------------------------------------
    # Exact names
    # --------------------------------------------------------------------------------------

    @pytest.mark.parametrize("name", NAMES)
    def test_exact_tool_name_comes_first(self, catalog_index: ToolIndex, name: str) -> None:
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
    def test_exact_tool_name_case_insensitive(self, catalog_index: ToolIndex, name: str) -> None:
        for variant in (name.upper(), name.lower(), name.swapcase()):
            assert search(catalog_index, "a", variant).tool_names[0] == name, variant

    def test_exact_name_prefers_the_case_sensitive_match(self) -> None:
        index = self.new_index()
        tools = [
            _tool("fetchData", "Fetch data from the warehouse.", obj({}), "data"),
            _tool("FetchData", "Fetch data from the cache.", obj({}), "data"),
            _tool("fetch_data_v2", "Fetch data, second version.", obj({}), "data"),
        ]
        index.index_tools("s", tools)
        assert search(index, "s", "fetchData").tool_names[0] == "fetchData"
        assert search(index, "s", "FetchData").tool_names[0] == "FetchData"
        assert search(index, "s", "fetch_data_v2").tool_names[0] == "fetch_data_v2"
        assert search(index, "s", "FETCHDATA").tool_names[0] in {"fetchData", "FetchData"}

    def test_exact_name_of_a_tool_in_another_session_is_not_found(
        self, catalog_index: ToolIndex
    ) -> None:
        response = search(catalog_index, "a", "kubernetes.scaleDeployment", max_results=50)
        assert "kubernetes.scaleDeployment" not in response.tool_names

    # --------------------------------------------------------------------------------------

    # --------------------------------------------------------------------------------------
    # Determinism and concurrency
    # --------------------------------------------------------------------------------------

    def test_searches_are_deterministic(self, catalog_index: ToolIndex) -> None:
        for query in CONCURRENT_QUERIES:
            first = search(catalog_index, "a", query)
            second = search(catalog_index, "a", query)
            assert snapshot(first) == snapshot(second)

    def test_other_sessions_do_not_change_a_sessions_results(self) -> None:
        alone = self.new_index()
        alone.index_tools("a", CATALOG)
        crowded = self.new_index()
        crowded.index_tools("x", OTHER_TOOLS)
        crowded.index_tools("a", CATALOG)
        crowded.index_tools("y", [*OTHER_TOOLS, *CATALOG[:10]])
        for query in CONCURRENT_QUERIES:
            assert snapshot(search(crowded, "a", query)) == snapshot(search(alone, "a", query))

    def test_concurrent_searches_while_another_session_reindexes(
        self, catalog_index: ToolIndex
    ) -> None:
        index = catalog_index
        variant = (
            *OTHER_TOOLS,
            _tool("pager_duty_alert", "Page the on-call engineer.", obj({}), "dev"),
            _tool("getWeatherForecast", "A weather forecast in session b only.", obj({}), "x"),
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
                        errors.append(
                            f"session a changed for {query!r}: {got} != {baseline[query]}"
                        )

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
