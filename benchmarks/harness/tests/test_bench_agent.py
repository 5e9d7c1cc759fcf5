"""The simulated agent's query policy and the savings runner."""

from functools import partial

import pytest

from toolsearch import ChatClient, ToolSearchToolCallingAdvisor
from toolsearch.indexes import RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.testing import tool_definition
from toolsearch.tokens import WhitespaceTokenCounter
from toolsearch_bench.agent import QueryPolicy, SimulatedAgent, split_clauses
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.live import SyntheticTool
from toolsearch_bench.savings import CANNED_RESULT, run_tasks, summarize

RECORD_ID = {
    "type": "object",
    "properties": {"id": {"type": "string", "description": "Record id"}},
    "required": ["id"],
}
tool = partial(tool_definition, schema=RECORD_ID)


SEARCH_ONLY = {"preload_results": 0, "load_all": "never"}
"""The search loop alone: these tests are about its searches (the working set on this
tiny catalog would load every tool; it is tested in tests/search/test_working_set.py)."""

CATALOG = Catalog(
    "tiny",
    (
        tool("refund_payment", "Refund a card payment to the customer."),
        tool("send_email", "Send an email message to a recipient."),
        tool("create_invoice", "Create an invoice for a customer account."),
        tool("list_shipments", "List the shipments of an order."),
        *(tool(f"filler_{i}", f"Unrelated operation number {i} on widgets.") for i in range(40)),
    ),
)
REQUEST = "Refund order 8812. Then email the customer that the money is on its way."


def test_split_clauses():
    assert split_clauses(REQUEST) == [
        "Refund order 8812",
        "Then email the customer that the money is on its way",
    ]
    assert split_clauses("Create an invoice, and also list the shipments") == [
        "Create an invoice",
        "list the shipments",
    ]
    assert split_clauses("ok") == ["ok"]


def test_split_clauses_splits_at_a_plain_and_but_keeps_pieces_of_three_words():
    assert split_clauses("get payouts for May and add them to the reconciliation sheet") == [
        "get payouts for May",
        "add them to the reconciliation sheet",
    ]
    # "salt and pepper" would leave one-word pieces: they are merged back
    assert split_clauses("Find a recipe with salt and pepper") == ["Find a recipe with salt pepper"]
    assert split_clauses("Cancel sub_7012, mark deal dl_4455 lost and email their admin") == [
        "Cancel sub_7012, mark deal dl_4455 lost",
        "email their admin",
    ]


def test_default_policy_searches_every_clause_of_a_long_request():
    request = ". ".join(f"Step {i} does thing number {i}" for i in range(1, 8)) + "."
    queries = QueryPolicy().queries(request)
    assert queries[0] == request
    assert queries[1:] == [f"Step {i} does thing number {i}" for i in range(1, 8)]


def test_policy_starts_with_the_whole_request_then_clauses_up_to_max_rounds():
    assert QueryPolicy(max_rounds=4).queries(REQUEST) == [REQUEST, *split_clauses(REQUEST)]
    assert QueryPolicy(max_rounds=1).queries(REQUEST) == [REQUEST]


def test_search_queries_never_depend_on_the_gold_labels():
    """Whatever the gold tools are, the agent's searches are a prefix of the policy's
    queries for the request text."""
    policy = QueryPolicy(max_rounds=3)
    expected = policy.queries(REQUEST)
    tools = [SyntheticTool(t, CANNED_RESULT) for t in CATALOG.tools]
    for gold in (["refund_payment", "send_email"], ["filler_7"], ["create_invoice", "nope"]):
        agent = SimulatedAgent(REQUEST, gold, policy=policy)
        # the agent's own searches are the point: no pre-retrieval, no full list
        advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), **SEARCH_ONLY)
        client = ChatClient.builder(FunctionChatModel(agent)).default_advisors(advisor).build()
        client.prompt(REQUEST).tools(tools).call()
        assert agent.searches
        assert agent.searches == expected[: len(agent.searches)]


def test_full_and_search_modes_succeed_and_search_is_cheaper():
    queries = QuerySet(
        "q",
        (
            Query("q1", REQUEST, ("refund_payment", "send_email")),
            Query("q2", "Please create an invoice for account 17", ("create_invoice",)),
        ),
    )
    counter = WhitespaceTokenCounter()
    full_outcomes = run_tasks(CATALOG, queries, mode="full", counter=counter)
    search_outcomes = run_tasks(
        CATALOG,
        queries,
        mode="search",
        counter=counter,
        index_factory=RegexToolIndex,
        advisor_options=SEARCH_ONLY,
    )
    assert all(o.success for o in full_outcomes)
    assert all(o.success for o in search_outcomes)
    assert all(o.searches == 0 for o in full_outcomes)
    assert all(o.searches >= 1 for o in search_outcomes)
    full = summarize(
        full_outcomes, dataset="t", mode="full", index="-", provider="openai", tokenizer="w"
    )
    search = summarize(
        search_outcomes,
        dataset="t",
        mode="search",
        index="regex",
        provider="openai",
        tokenizer="w",
        full=full,
    )
    assert search.success_rate == 100.0
    assert search.savings_pct == pytest.approx(
        100 * (1 - search.prompt_tokens_mean / full.prompt_tokens_mean), abs=0.01
    )
    assert search.savings_pct > 50
    assert full.definition_share > search.definition_share


def test_a_tool_never_discovered_is_never_called():
    queries = QuerySet("q", (Query("q1", "zzz qqq", ("refund_payment",)),))
    (outcome,) = run_tasks(
        CATALOG,
        queries,
        mode="search",
        counter=WhitespaceTokenCounter(),
        index_factory=RegexToolIndex,
        advisor_options=SEARCH_ONLY,
    )
    assert not outcome.success
    assert outcome.searches == 1


def test_search_mode_needs_an_index():
    with pytest.raises(ValueError, match="index_factory"):
        run_tasks(CATALOG, (), mode="search", counter=WhitespaceTokenCounter())


def test_the_loops_are_billed_under_the_providers_prompt_cache():
    """Each task is a conversation of one cache shared by the run: from the second request
    on, the full loop reads its unchanged tool list from the cache; raw counts stay as
    they were, and with no cache shape nothing is billed."""
    from dataclasses import replace

    from toolsearch_bench.cache import CACHE_SHAPES

    queries = QuerySet(
        "q",
        (
            Query("q1", REQUEST, ("refund_payment", "send_email")),
            Query("q2", "Please create an invoice for account 17", ("create_invoice",)),
        ),
    )
    counter = WhitespaceTokenCounter()
    shape = replace(CACHE_SHAPES["openai"], minimum=1, step=1, write=1.0)  # tiny; no fee
    raw = run_tasks(CATALOG, queries, mode="full", counter=counter, cache=None)
    full = run_tasks(CATALOG, queries, mode="full", counter=counter, cache=shape)
    assert [o.prompt_tokens for o in full] == [o.prompt_tokens for o in raw]
    assert all(o.billed_tokens is None for o in raw)
    assert all(o.cache_read_tokens > 0 for o in full)  # q1's second request; q2 at once
    for outcome in full:
        expected = (
            outcome.prompt_tokens - outcome.cache_read_tokens + 0.1 * outcome.cache_read_tokens
        )
        assert outcome.billed_tokens == pytest.approx(expected)
    search = run_tasks(
        CATALOG,
        queries,
        mode="search",
        counter=counter,
        index_factory=RegexToolIndex,
        cache=shape,
        advisor_options=SEARCH_ONLY,
    )
    common = {"dataset": "t", "provider": "openai", "tokenizer": "w"}
    full_summary = summarize(full, mode="full", index="-", **common)
    summary = summarize(search, mode="search", index="regex", full=full_summary, **common)
    assert summary.billed_tokens_mean == pytest.approx(
        sum(o.billed_tokens for o in search) / 2, abs=0.1
    )
    assert summary.cached_savings_pct == pytest.approx(
        100 * (1 - summary.billed_tokens_mean / full_summary.billed_tokens_mean), abs=0.01
    )
    assert summary.cached_savings_pct < summary.savings_pct  # the cache favours the full loop


def test_the_results_shape_calls_discovered_tools_through_the_call_tool(monkeypatch):
    """``openai-results``: the loop runs with ``injection="results"``; the agent calls the
    tools the searches carried through the call tool and succeeds as in the tools shape,
    and every request's tool list is the same two tools."""
    queries = QuerySet("q", (Query("q1", REQUEST, ("refund_payment", "send_email")),))
    captured: list[list[str]] = []
    from toolsearch_bench import savings

    real = savings.FunctionChatModel

    class Capturing(real):  # type: ignore[misc, valid-type]
        def call(self, prompt):  # type: ignore[no-untyped-def]
            captured.append([t.name for t in prompt.tool_definitions])
            return super().call(prompt)

    monkeypatch.setattr(savings, "FunctionChatModel", Capturing)
    (outcome,) = run_tasks(
        CATALOG,
        queries,
        mode="search",
        counter=WhitespaceTokenCounter(),
        index_factory=RegexToolIndex,
        provider="openai-results",
        advisor_options=SEARCH_ONLY,
    )
    assert outcome.success
    assert {tuple(names) for names in captured} == {("toolSearchTool", "callTool")}


def test_the_agent_counts_a_call_through_as_a_call_of_the_tool_it_names():
    from toolsearch.chat.messages import AssistantMessage, ToolCall
    from toolsearch_bench.agent import called_tools

    message = AssistantMessage(
        tool_calls=(
            ToolCall(id="1", name="callTool", arguments='{"name": "send_email", "arguments": {}}'),
            ToolCall(id="2", name="refund_payment", arguments="{}"),
            ToolCall(id="3", name="callTool", arguments="not json"),
        )
    )
    assert called_tools([message]) == {"send_email", "refund_payment", "callTool"}
