"""Issue 45: the user's request of the turn reaches the search log beside each search (the
advisor notes it), so the usage memory learns the user's own words for a tool the model
found by searching in other words."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolDefinition,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.indexes.learning.memory import UsageMemory, UsageParams, catalog_digest
from toolsearch.models import FunctionChatModel
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    ToolDefinition(name=n, description=d, input_schema=SCHEMA)
    for n, d in [
        ("get_weather", "Get the weather forecast in a city"),
        ("send_email", "Send an email to a recipient"),
        ("book_flight", "Book a flight between two airports"),
    ]
]
USER = "will I need an umbrella in Lyon tomorrow"


class Recording:
    """A search log that keeps what it was given."""

    def __init__(self) -> None:
        self.searches: list[LoggedSearch] = []
        self.calls: list[LoggedCalls] = []

    def record_search(self, search: LoggedSearch) -> None:
        self.searches.append(search)

    def record_calls(self, calls: LoggedCalls) -> None:
        self.calls.append(calls)


def run(search_log: Any) -> None:
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), search_log=search_log, max_results=3
    )

    def script(messages: list[Any], _tools: list[ToolDefinition]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn == 0:
            query = json.dumps({"query": "weather forecast"})
            return AssistantMessage(
                tool_calls=(ToolCall(id="a", name="toolSearchTool", arguments=query),)
            )
        if turn == 1:
            return AssistantMessage(
                tool_calls=(ToolCall(id="b", name="get_weather", arguments="{}"),)
            )
        return AssistantMessage(content="done")

    callbacks = [
        FunctionToolCallback.from_schema(
            lambda _, n=t.name: f"{n} ok",
            name=t.name,
            description=t.description,
            input_schema=SCHEMA,
        )
        for t in TOOLS
    ]
    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    client.prompt(USER).tools(callbacks).advisors(
        lambda a: a.param(CONVERSATION_ID, "user-1")
    ).call()


def test_each_logged_search_carries_the_users_request():
    log = Recording()
    run(log)
    assert log.searches, "the model's search was logged"
    assert {s.request for s in log.searches} == {USER}


def test_the_memory_learns_the_users_words_for_the_called_tool():
    memory = UsageMemory(params=UsageParams(half_life_days=None))
    run(memory)
    learned = {r.text for r in memory.requests(catalog_digest(TOOLS), "get_weather")}
    assert USER in learned


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
