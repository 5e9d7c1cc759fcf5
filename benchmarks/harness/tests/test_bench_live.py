"""Live mode (toolsearch_bench.live) driven by scripted models: no provider is called."""

import json

import pytest

from toolsearch.chat.messages import AssistantMessage, ToolCall, ToolResponseMessage, UserMessage
from toolsearch.chat.response import ChatResponse, Usage
from toolsearch.errors import MissingExtraError, ProviderAuthenticationError, ProviderError
from toolsearch.models import FunctionChatModel
from toolsearch.search.builtin_tools.search_tool import DEFAULT_SEARCH_TOOL_NAME
from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.live import (
    DEFAULT_SYSTEM,
    SYNTHETIC_RESULT,
    parse_live_spec,
    provider_model_factory,
    run_live,
)
from toolsearch_bench.peers import TokenOverlapIndex
from toolsearch_bench.runner import IndexSpec

SERVICES = ["invoice", "ticket", "calendar", "payment", "shipment", "report", "user", "file"]
VERBS = ["create", "delete", "list", "update"]


def _dataset() -> tuple[Catalog, QuerySet]:
    tools = tuple(
        ToolDefinition(
            f"{verb}_{service}",
            f"{verb.capitalize()} a {service} in the {service} service.",
            {"type": "object", "properties": {"id": {"type": "string"}}},
        )
        for service in SERVICES
        for verb in VERBS
    )
    queries = (
        Query("q1", "Please create a invoice for ACME", ("create_invoice",)),
        Query("q2", "Delete the ticket 42", ("delete_ticket",)),
        Query("q3", "List every shipment and update the user", ("list_shipment", "update_user")),
    )
    return Catalog("toy", tools), QuerySet("toy", queries)


GOLD = {q.text: q.gold for q in _dataset()[1]}


def _agent(messages, tools):
    """A stand-in for a real model: searches with the request, calls the gold tools it
    can see, then answers."""
    request = next(m.content for m in messages if isinstance(m, UserMessage))
    visible = {t.name for t in tools}
    called = {c.name for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    turn = len([m for m in messages if isinstance(m, AssistantMessage)])
    for name in GOLD[request]:
        if name in visible and name not in called:
            return AssistantMessage(
                tool_calls=[ToolCall(id=f"c{turn}", name=name, arguments='{"id": "1"}')]
            )
    if DEFAULT_SEARCH_TOOL_NAME in visible and DEFAULT_SEARCH_TOOL_NAME not in called:
        arguments = json.dumps({"query": request})
        return AssistantMessage(
            tool_calls=[ToolCall(id=f"s{turn}", name=DEFAULT_SEARCH_TOOL_NAME, arguments=arguments)]
        )
    return "done"


def _spec():
    return IndexSpec("peer: token overlap", TokenOverlapIndex, peer=True)


def test_full_loop_and_tool_search_with_usage_from_the_responses():
    catalog, queries = _dataset()
    made = []

    def factory():
        made.append(FunctionChatModel(_agent))
        return made[-1]

    seen = []
    records = run_live(catalog, queries, factory, indexes=[_spec()], on_task=seen.append)
    full, search = records
    assert (full.mode, full.index, search.mode, search.index) == (
        "full",
        "-",
        "search",
        "peer: token overlap",
    )
    assert full.tasks == search.tasks == 3
    assert full.success_rate == 100.0
    assert search.success_rate == 100.0
    assert full.searches_per_task == 0
    assert search.searches_per_task == 1
    assert full.errors == search.errors == 0
    assert len(made) == 6  # a fresh model per task and mode
    # usage is what the model reported, summed over the task's requests
    first_full = seen[0]
    assert first_full.prompt_tokens > 0
    assert first_full.requests == 2  # one tool call, then the answer
    assert first_full.called == ("create_invoice",)
    assert full.prompt_tokens_mean > search.prompt_tokens_mean
    assert search.savings_pct == pytest.approx(
        100 * (1 - search.prompt_tokens_mean / full.prompt_tokens_mean), abs=0.01
    )
    # the system message and the synthetic results reached the model
    prompt = made[0].requests[-1]
    assert prompt.messages[0].content == DEFAULT_SYSTEM
    results = [m for m in prompt.messages if isinstance(m, ToolResponseMessage)]
    assert results[0].responses[0].response_data == SYNTHETIC_RESULT
    assert len(prompt.options.tool_callbacks) == len(catalog)


class _FixedUsage:
    """Calls the request's first gold tool once, then answers; fixed usage per call."""

    def __init__(self, usage):
        self.usage = usage
        self.calls = 0

    def call(self, prompt):
        self.calls += 1
        if self.calls == 1:
            message = AssistantMessage(
                tool_calls=[ToolCall(id="c1", name="create_invoice", arguments="{}")]
            )
        else:
            message = AssistantMessage(content="ok")
        return ChatResponse(message, usage=self.usage)

    def stream(self, prompt):
        yield self.call(prompt)

    async def acall(self, prompt):
        return self.call(prompt)

    async def astream(self, prompt):
        yield self.call(prompt)


def test_tokens_are_summed_from_reported_usage():
    catalog, queries = _dataset()
    records = run_live(
        catalog,
        queries.queries[:1],
        lambda: _FixedUsage(Usage(prompt_tokens=1000, completion_tokens=7, cached_tokens=300)),
    )
    (full,) = records
    assert full.prompt_tokens_mean == 2000
    assert full.completion_tokens_mean == 14
    assert full.cached_tokens_mean == 600
    assert full.requests_per_task == 2
    assert full.success_rate == 100.0
    assert full.savings_pct is None


def test_a_runaway_loop_is_a_failed_task_not_a_crash():
    catalog, queries = _dataset()

    def forever(messages, tools):
        return AssistantMessage(tool_calls=[ToolCall(id="x", name="list_file", arguments="{}")])

    records = run_live(
        catalog, queries.queries[:2], lambda: FunctionChatModel(forever), max_iterations=3
    )
    assert records[0].errors == 2
    assert records[0].success_rate == 0.0
    assert records[0].requests_per_task == 3


def test_rejected_credentials_stop_the_run():
    catalog, queries = _dataset()

    def rejected(messages, tools):
        raise ProviderAuthenticationError("openai", "bad key", status_code=401)

    with pytest.raises(ProviderAuthenticationError):
        run_live(catalog, queries, lambda: FunctionChatModel(rejected))


def test_other_provider_errors_count_as_errors():
    catalog, queries = _dataset()

    def broken(messages, tools):
        raise ProviderError("openai", "overloaded", status_code=529)

    (record,) = run_live(catalog, queries, lambda: FunctionChatModel(broken))
    assert record.errors == 3
    assert record.success_rate == 0.0


def test_limit_and_gold_alternatives():
    catalog, _ = _dataset()
    query = Query(
        "alt",
        "Please create a invoice for ACME",
        ("create_report",),
        {"gold_alternatives": {"create_report": ["create_invoice"]}},
    )
    other = Query("skipped", "Delete the ticket 42", ("delete_ticket",))
    (record,) = run_live(catalog, [query, other], lambda: FunctionChatModel(_agent), limit=1)
    assert record.tasks == 1
    assert record.success_rate == 100.0  # create_invoice stands for create_report


def test_parse_live_spec():
    assert parse_live_spec("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert parse_live_spec("Anthropic:claude-x:1") == ("anthropic", "claude-x:1")
    for bad in ("gpt-4o-mini", "openai:", "mistral:large"):
        with pytest.raises(ValueError, match="PROVIDER:MODEL"):
            parse_live_spec(bad)


def test_missing_credentials_are_named_before_anything_is_imported(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "toolsearch.models.gemini", None)
    with pytest.raises(ProviderAuthenticationError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        provider_model_factory("gemini:gemini-2.5-flash", environ={})
    with pytest.raises(ProviderAuthenticationError, match="OPENAI_API_KEY"):
        provider_model_factory("openai:gpt-4o-mini", environ={"ANTHROPIC_API_KEY": "k"})


def test_a_missing_adapter_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "toolsearch.models.gemini", None)
    with pytest.raises(MissingExtraError, match=r"toolsearch\[gemini\]"):
        provider_model_factory("gemini:gemini-2.5-flash", environ={"GOOGLE_API_KEY": "k"})


def test_the_factory_builds_the_adapter_without_a_request():
    pytest.importorskip("openai", reason="openai is not installed ([openai])")
    pytest.importorskip("toolsearch.models.openai", reason="the OpenAI adapter is not here")
    from toolsearch.models.openai import OpenAIChatModel

    factory = provider_model_factory("openai:gpt-4o-mini", environ={"OPENAI_API_KEY": "sk-x"})
    model = factory()
    assert isinstance(model, OpenAIChatModel)
    assert model.model == "gpt-4o-mini"
    assert factory.__name__ == "openai:gpt-4o-mini"
