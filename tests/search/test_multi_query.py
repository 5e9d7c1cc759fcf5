"""The search tool's ``queries``: several capabilities in one call (``multi_query``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsearch import ChatClient, FunctionToolCallback, ToolSearchToolCallingAdvisor
from toolsearch.chat.messages import AssistantMessage, ToolCall
from toolsearch.errors import InvalidToolArgumentsError
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search.builtin_tools.search_tool import (
    MAX_QUERIES,
    ToolSearchTool,
    search_tool_definition,
)
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.sessions import ToolSearchSessions
from toolsearch.testing import function_tool
from toolsearch_bench.agent import QueryPolicy, SimulatedAgent

SEARCH = "toolSearchTool"
DESCRIPTIONS = {
    "weather_forecast": "Get the weather forecast for a city",
    "weather_alerts": "List severe weather alerts for a region",
    "email_send": "Send an email message to a recipient",
    "email_read": "Read the unread messages in the inbox",
    "calendar_create": "Create a calendar event with attendees",
    "calendar_cancel": "Cancel a calendar event",
    "music_play": "Play a song by title or artist",
}


def _tools() -> list[FunctionToolCallback]:
    return [function_tool(name, description) for name, description in DESCRIPTIONS.items()]


def _search_tool(found: list[list[str]], *, multi_query: bool = True) -> ToolSearchTool:
    """The search tool of a run over the tools (two hits per query); ``found`` receives
    what the run discovered after each call."""
    options = ToolSearchOptions(max_results=2, multi_query=multi_query, exclude_loaded_tools=False)
    run = ToolSearchSessions(Bm25ToolIndex(), options=options).open(
        tools=[tool.definition for tool in _tools()]
    )
    tool = run.search_tool()

    class Recording:
        definition = tool.definition

        def call(self, arguments: str) -> str:
            try:
                return tool.call(arguments)
            finally:
                found.append(run.discovered)

    return Recording()  # type: ignore[return-value]


def test_the_definition_offers_queries_only_with_multi_query() -> None:
    plain = search_tool_definition()
    assert "queries" not in plain.input_schema["properties"]
    assert plain.input_schema["required"] == ["query"]
    multi = search_tool_definition(multi_query=True)
    queries = multi.input_schema["properties"]["queries"]
    assert queries["type"] == "array"
    assert queries["maxItems"] == MAX_QUERIES
    assert "required" not in multi.input_schema  # query or queries
    assert "queries" in multi.description


def test_hits_of_several_queries_are_merged_rank_by_rank_each_once() -> None:
    found: list[list[str]] = []
    tool = _search_tool(found)
    names = json.loads(tool.call(json.dumps({"queries": ["weather forecast", "send email"]})))
    assert names[:2] == ["weather_forecast", "email_send"]  # each query's best first
    assert len(names) == len(set(names)) == 4  # two per query, none twice
    assert found == [names]
    result = tool.call(json.dumps({"queries": ["weather forecast", "send email"]}))
    assert [hit.name for hit in result.search_hits] == names  # type: ignore[attr-defined]


def test_query_and_queries_together_and_repeats_searched_once() -> None:
    found: list[list[str]] = []
    tool = _search_tool(found)
    names = json.loads(
        tool.call(json.dumps({"query": "play a song", "queries": ["play a song", "cancel event"]}))
    )
    assert names[0] == "music_play"
    assert names[1] == "calendar_cancel"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "give query"),
        ({"queries": "weather"}, "a list of short queries"),
        ({"queries": ["weather", ""]}, "non-empty string"),
        ({"queries": [f"q{i}" for i in range(MAX_QUERIES + 1)]}, f"at most {MAX_QUERIES}"),
    ],
)
def test_bad_queries_are_refused_with_a_message(arguments: dict[str, Any], message: str) -> None:
    tool = _search_tool([])
    with pytest.raises(InvalidToolArgumentsError, match=message):
        tool.call(json.dumps(arguments))


def test_without_multi_query_queries_is_ignored_and_query_is_required() -> None:
    tool = _search_tool([], multi_query=False)
    with pytest.raises(InvalidToolArgumentsError, match="query"):
        tool.call(json.dumps({"queries": ["weather forecast"]}))
    names = json.loads(tool.call(json.dumps({"query": "send email", "queries": ["weather"]})))
    assert names[0] == "email_send"
    assert "weather_forecast" not in names


def test_one_turn_of_several_queries_loads_every_tool_the_task_needs() -> None:
    def agent(messages: list[Any], tools: list[Any]) -> AssistantMessage:
        visible = {t.name for t in tools}
        turn = sum(1 for m in messages if isinstance(m, AssistantMessage))
        if turn == 0:
            arguments = json.dumps({"queries": ["weather forecast", "send email"]})
            return AssistantMessage(
                tool_calls=(ToolCall(id="s", name=SEARCH, arguments=arguments),)
            )
        if turn == 1:
            assert {"weather_forecast", "email_send"} <= visible
            return AssistantMessage(
                tool_calls=(
                    ToolCall(id="a", name="weather_forecast", arguments="{}"),
                    ToolCall(id="b", name="email_send", arguments="{}"),
                )
            )
        return AssistantMessage(content="done")

    model = FunctionChatModel(agent)
    advisor = ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex(), multi_query=True)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    answer = client.prompt("forecast and mail").tools(*_tools()).call()
    assert answer.content() == "done"
    assert len(model.requests) == 3


def test_the_simulated_agent_sends_the_clauses_together_after_the_whole_request() -> None:
    request = "Get the weather forecast for Lisbon and then send an email to Bob about it"
    gold = ["weather_forecast", "email_send"]
    agent = SimulatedAgent(request, gold, policy=QueryPolicy(multi_query=True))
    search = search_tool_definition(multi_query=True)
    first = agent([], [search])
    assert json.loads(first.tool_calls[0].arguments)["query"] == request
    second = agent([first], [search])
    arguments = json.loads(second.tool_calls[0].arguments)
    assert arguments["queries"] == agent.searches[1:]
    assert len(arguments["queries"]) == 2
