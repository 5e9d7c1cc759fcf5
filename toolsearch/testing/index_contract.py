"""The tool-index contract (the cachetools ``CacheTestMixin`` idea): subclass
:class:`ToolIndexContract` in a test module, implement ``make_index``, and pytest runs
every check against your index.

.. code-block:: python

    class TestMyIndex(ToolIndexContract):
        search_type = "my-index"

        def make_index(self):
            return MyIndex()

The contract: sessions are isolated, an unknown or cleared session gives an empty
response, re-indexing replaces, ``index_tool`` adds or replaces one tool, an exact tool
name comes first (case-sensitive, then case-insensitive), no query string ever raises,
``max_results`` is honoured and clamped (``None`` means 10), exclusions leave the others
in their order, metadata carries the search type, the query and the time, categories
filter, obvious queries find the obvious tool, searches are deterministic, and
concurrent searches of one session are unaffected by another session re-indexing. The
toy catalog is :mod:`toolsearch.testing.index_catalog`.

A ``make_index`` that needs a fixture (a server, a temporary folder) gets it from an
autouse fixture of the subclass; one that raises ``MissingExtraError`` skips the test.
"""

from __future__ import annotations

import pytest

from toolsearch.search.types import ToolIndex
from toolsearch.testing.index_catalog import (
    BROAD_QUERY,
    CATALOG,
    CATEGORIES,
    HOSTILE_QUERIES,
    NAMES,
    OTHER_TOOLS,
)
from toolsearch.testing.index_sessions import IndexSessionsContract, search, snapshot

__all__ = ["ToolIndexContract"]


class ToolIndexContract(IndexSessionsContract):
    """Every check of a ``ToolIndex``: implement :meth:`make_index` (and set
    ``search_type``) in a ``Test...`` subclass."""

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
    def test_obvious_queries_find_the_obvious_tool(
        self, catalog_index: ToolIndex, query: str, expected: str
    ) -> None:
        response = search(catalog_index, "a", query, max_results=3)
        assert expected in response.tool_names, response.tool_names

    # --------------------------------------------------------------------------------------
    # Queries that must never raise
    # --------------------------------------------------------------------------------------

    @pytest.mark.parametrize("query", list(HOSTILE_QUERIES.values()), ids=list(HOSTILE_QUERIES))
    def test_no_query_string_raises(self, catalog_index: ToolIndex, query: str) -> None:
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
    def test_blank_query_does_not_return_other_sessions_tools(
        self, catalog_index: ToolIndex, query: str
    ) -> None:
        response = search(catalog_index, "b", query, max_results=50)
        assert set(response.tool_names) <= {t.name for t in OTHER_TOOLS}

    # --------------------------------------------------------------------------------------
    # max_results
    # --------------------------------------------------------------------------------------

    @pytest.mark.parametrize("limit", [1, 3, 7])
    def test_max_results_is_honoured(self, catalog_index: ToolIndex, limit: int | None) -> None:
        response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
        assert response.total_matches >= 10
        assert len(response.tool_references) == limit

    def test_max_results_none_means_ten(self, catalog_index: ToolIndex) -> None:
        response = search(catalog_index, "a", BROAD_QUERY)
        assert response.total_matches >= 10
        assert len(response.tool_references) == 10
        explicit = search(catalog_index, "a", BROAD_QUERY, max_results=10)
        assert snapshot(explicit) == snapshot(response)

    @pytest.mark.parametrize("limit", [0, -1, -100])
    def test_max_results_zero_or_negative_is_clamped_to_one(
        self, catalog_index: ToolIndex, limit: int | None
    ) -> None:
        response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
        assert len(response.tool_references) == 1
        exact = search(catalog_index, "a", "github.create-issue", max_results=limit)
        assert exact.tool_names == ["github.create-issue"]

    @pytest.mark.parametrize("limit", [len(CATALOG), len(CATALOG) + 1, 1_000, 10**9])
    def test_max_results_larger_than_the_catalog(
        self, catalog_index: ToolIndex, limit: int | None
    ) -> None:
        response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
        assert len(response.tool_references) <= len(CATALOG)
        assert len(response.tool_references) == min(response.total_matches, len(CATALOG))
        small = search(catalog_index, "b", "stock price quote", max_results=limit)
        assert 1 <= len(small.tool_references) <= len(OTHER_TOOLS)
        assert small.total_matches <= len(OTHER_TOOLS)

    @pytest.mark.parametrize("limit", [None, 1, 2, 5, 50])
    def test_results_fill_up_to_the_limit_when_enough_match(
        self, catalog_index: ToolIndex, limit: int | None
    ) -> None:
        response = search(catalog_index, "a", BROAD_QUERY, max_results=limit)
        expected = 10 if limit is None else limit
        assert len(response.tool_references) == min(expected, response.total_matches)

    # --------------------------------------------------------------------------------------
    # Exclusions (the tools a model already has)
    # --------------------------------------------------------------------------------------

    def test_excluded_tools_leave_the_others_in_their_order(self, catalog_index: ToolIndex) -> None:
        full = search(catalog_index, "a", BROAD_QUERY, max_results=50)
        skipped = frozenset(full.tool_names[:3])
        rest = search(catalog_index, "a", BROAD_QUERY, max_results=5, exclude=skipped)
        expected = [r for r in full.tool_references if r.tool_name not in skipped][:5]
        assert [(r.tool_name, r.relevance_score) for r in rest.tool_references] == [
            (r.tool_name, r.relevance_score) for r in expected
        ]

    def test_exclusions_still_fill_the_limit(self, catalog_index: ToolIndex) -> None:
        full = search(catalog_index, "a", BROAD_QUERY, max_results=50)
        if len(full.tool_references) < 8:
            pytest.skip("the broad query matches too few tools for this backend")
        skipped = frozenset(full.tool_names[:4])
        rest = search(catalog_index, "a", BROAD_QUERY, max_results=4, exclude=skipped)
        assert len(rest.tool_references) == 4
        assert not skipped & set(rest.tool_names)

    def test_an_exact_name_is_never_excluded(self, catalog_index: ToolIndex) -> None:
        response = search(
            catalog_index, "a", "send_email", max_results=3, exclude=frozenset({"send_email"})
        )
        assert response.tool_names[0] == "send_email"

    def test_excluding_unknown_names_changes_nothing(self, catalog_index: ToolIndex) -> None:
        plain = search(catalog_index, "a", "weather forecast", max_results=5)
        other = search(
            catalog_index,
            "a",
            "weather forecast",
            max_results=5,
            exclude=frozenset({"stock_quote", "no such tool"}),
        )
        assert snapshot(other)[0] == snapshot(plain)[0]

    def test_a_smaller_limit_is_a_prefix_of_a_larger_one(self, catalog_index: ToolIndex) -> None:
        # ties may break differently only if scores tie; compare names where scores differ
        big = search(catalog_index, "a", "send an email", max_results=10)
        small = search(catalog_index, "a", "send an email", max_results=3)
        assert small.tool_names[0] == big.tool_names[0]
        assert set(small.tool_names) <= set(big.tool_names)

    # --------------------------------------------------------------------------------------
    # Categories
    # --------------------------------------------------------------------------------------

    @pytest.mark.parametrize("category", CATEGORIES)
    def test_category_filter_returns_only_that_category(
        self, catalog_index: ToolIndex, category: str
    ) -> None:
        in_category = {t.name for t in CATALOG if t.category == category}
        for query in (BROAD_QUERY, "list", "send an email", "getWeatherForecast"):
            response = search(catalog_index, "a", query, max_results=50, category=category)
            assert set(response.tool_names) <= in_category, (query, response.tool_names)
            assert response.total_matches <= len(in_category)

    def test_category_filter_still_ranks_within_the_category(
        self, catalog_index: ToolIndex
    ) -> None:
        response = search(catalog_index, "a", "list calendar events", category="calendar")
        assert response.tool_names[0] == "calendar-list-events"
        exact = search(catalog_index, "a", "calendar.deleteEvent", category="calendar")
        assert exact.tool_names[0] == "calendar.deleteEvent"

    def test_exact_name_outside_the_category_is_not_returned(
        self, catalog_index: ToolIndex
    ) -> None:
        response = search(catalog_index, "a", "send_email", category="weather", max_results=50)
        assert "send_email" not in response.tool_names

    def test_unknown_category_gives_an_empty_response(self, catalog_index: ToolIndex) -> None:
        response = search(catalog_index, "a", "send an email", category="no-such-category")
        assert list(response.tool_references) == []
        assert response.total_matches == 0
