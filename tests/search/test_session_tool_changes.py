"""Tool changes across the calls of one conversation (issue 44): with a chat memory inside
the tool loop, every request carries every change of the conversation so far, each at the
position where it first showed in the prompt as the model received it, so the rendered
Anthropic request's earlier messages stay byte-identical from one request to the next."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.chat.options import ToolChange
from toolsearch.indexes import RegexToolIndex
from toolsearch.memory import MessageChatMemoryAdvisor, MessageWindowChatMemory
from toolsearch.models import FunctionChatModel
from toolsearch.models.anthropic import anthropic_request_body
from toolsearch.testing import function_tool

TOOLS = [
    function_tool("send_email", "Send an email message to a recipient"),
    function_tool("get_weather", "Get the weather forecast for a city"),
    function_tool("create_ticket", "Open a support ticket for a customer"),
]
ASKS = {"weather in Paris": "get_weather", "email Bob": "send_email", "a ticket": "create_ticket"}


def _script(messages: list[Any], tools: list[Any]) -> AssistantMessage:
    """Per call: search for the tool, call it, answer."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    ask = messages[start].text
    done = sum(isinstance(m, ToolResponseMessage) for m in messages[start:])
    tool = ASKS[ask]
    if done == 0:
        query = json.dumps({"query": tool.split("_")[1]})
        return AssistantMessage(
            tool_calls=[ToolCall(id=f"s-{tool}", name="toolSearchTool", arguments=query)]
        )
    if done == 1:
        return AssistantMessage(tool_calls=[ToolCall(id=f"c-{tool}", name=tool, arguments="{}")])
    return AssistantMessage(content=f"done with {tool}")


def _client(model: FunctionChatModel, memory_order: int = 400, **options: Any) -> ChatClient:
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), **options)
    memory = MessageChatMemoryAdvisor(
        MessageWindowChatMemory(max_messages=1000), order=memory_order
    )
    return ChatClient.builder(model).default_advisors(advisor, memory).build()


def _conversation(
    asks: list[str], *, run_async: bool = False, stream: bool = False
) -> FunctionChatModel:
    model = FunctionChatModel(_script)
    client = _client(model)
    for ask in asks:
        spec = client.prompt(ask).tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "c"))
        if run_async:
            asyncio.run(spec.acall())
        elif stream:
            list(spec.stream().content())
        else:
            spec.call()
    return model


def test_each_change_keeps_its_place_in_the_whole_conversation_across_calls() -> None:
    model = _conversation(list(ASKS))
    requests = list(model.requests)
    assert [len(p.messages) for p in requests] == [2, 4, 6, 8, 10, 12, 14, 16, 18]
    weather = ToolChange("add", ("get_weather",), 4)
    email = ToolChange("add", ("send_email",), 10)
    ticket = ToolChange("add", ("create_ticket",), 16)
    assert [tuple(p.options.tool_changes) for p in requests] == [
        (),
        (weather,),
        (weather,),
        (weather,),  # the next call repeats the earlier call's change at its place
        (weather, email),
        (weather, email),
        (weather, email),
        (weather, email, ticket),
        (weather, email, ticket),
    ]
    assert {cb.definition.name for cb in requests[-1].options.tool_callbacks} == {
        "toolSearchTool",
        "get_weather",
        "send_email",
        "create_ticket",
    }


def test_the_rendered_anthropic_history_stays_a_prefix_across_calls() -> None:
    model = _conversation(list(ASKS))
    # the adapter's mid-conversation shape: search results as text, tools added by
    # ``tool_addition`` blocks (the bench's ``anthropic-changes``)
    bodies = [
        anthropic_request_body(p, model="claude-test", tool_search="none") for p in model.requests
    ]
    for before, after in itertools.pairwise(bodies):
        head = json.dumps(before["messages"], sort_keys=True)
        assert json.dumps(after["messages"][: len(before["messages"])], sort_keys=True) == head
        assert after["system"] == before["system"]
    changes = [m for m in bodies[-1]["messages"] if m["role"] == "system"]
    assert [b["content"][0]["tool"]["name"] for b in changes] == [
        "get_weather",
        "send_email",
        "create_ticket",
    ]
    # every added tool stays deferred: its definition never enters the cached prefix
    deferred = {t["name"] for t in bodies[-1]["tools"] if t.get("defer_loading")}
    assert {"get_weather", "send_email", "create_ticket"} <= deferred


def test_the_async_loop_anchors_the_changes_the_same_way() -> None:
    sync = _conversation(list(ASKS)[:2])
    run = _conversation(list(ASKS)[:2], run_async=True)
    assert [tuple(p.options.tool_changes) for p in run.requests] == [
        tuple(p.options.tool_changes) for p in sync.requests
    ]


def test_the_streaming_loop_anchors_the_changes_the_same_way() -> None:
    sync = _conversation(list(ASKS)[:2])
    streamed = _conversation(list(ASKS)[:2], stream=True)
    assert [tuple(p.options.tool_changes) for p in streamed.requests] == [
        tuple(p.options.tool_changes) for p in sync.requests
    ]
    assert streamed.requests[-1].options.tool_changes[-1].after_message == 10


def test_memory_outside_the_loop_counts_the_same_messages_the_model_sees() -> None:
    model = FunctionChatModel(_script)
    client = _client(model, memory_order=200)
    for ask in list(ASKS)[:2]:
        client.prompt(ask).tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "o")).call()
    for prompt in model.requests:
        for change in prompt.options.tool_changes:
            assert change.after_message <= len(prompt.messages)
    last = model.requests[-1]
    # the memory outside the loop keeps the user's message and the answer only
    assert len(model.requests[3].messages) == 4
    assert tuple(last.options.tool_changes) == (
        ToolChange("add", ("get_weather",), 4),
        ToolChange("add", ("send_email",), 6),
    )


def test_a_removed_tool_stays_declared_and_its_removal_keeps_its_place() -> None:
    model = FunctionChatModel(_script)
    client = _client(model, unload_idle_turns=1)
    for ask in ASKS:
        client.prompt(ask).tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "r")).call()
    removals = [c for c in model.requests[-1].options.tool_changes if c.kind == "remove"]
    assert removals  # idle tools were unloaded on a later call
    last = model.requests[-1]
    shown = {cb.definition.name for cb in last.options.tool_callbacks}
    declared = {d.name for d in last.options.deferred_tools if not isinstance(d, str)}
    for change in last.options.tool_changes:
        assert set(change.names) <= shown | declared  # every change names a declared tool
    bodies = [
        anthropic_request_body(p, model="claude-test", tool_search="none") for p in model.requests
    ]
    for before, after in itertools.pairwise(bodies):
        head = json.dumps(before["messages"], sort_keys=True)
        assert json.dumps(after["messages"][: len(before["messages"])], sort_keys=True) == head


def test_an_evicted_session_forgets_its_changes() -> None:
    model = FunctionChatModel(_script)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(max_messages=1000), order=400)
    client = ChatClient.builder(model).default_advisors(advisor, memory).build()
    ask = "weather in Paris"
    client.prompt(ask).tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "e")).call()
    assert advisor.sessions.change_tracker("e").changes
    advisor.registry.evict_session("e")
    assert advisor.sessions.change_tracker("e").changes == []


def test_throwaway_sessions_leave_no_change_list_behind() -> None:
    model = FunctionChatModel(_script)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    client = ChatClient.builder(model).default_advisors(advisor).build()
    for _ in range(3):  # no conversation id: a throwaway session per call
        client.prompt("weather in Paris").tools(TOOLS).call()
    assert any(p.options.tool_changes for p in model.requests)
    assert len(advisor.registry) == 0
    assert advisor.sessions._changes == {}


def test_the_tracker_anchors_only_the_latest_requests_new_changes() -> None:
    from toolsearch.search.working_set import ChangeTracker

    tracker = ChangeTracker(["search"])
    tracker.update(["search", "a"], 2)
    assert tracker.anchor(9) == (ToolChange("add", ("a",), 9),)
    tracker.update(["search", "b"], 2)  # a removal and an addition on one request
    assert tracker.anchor(13) == (
        ToolChange("add", ("a",), 9),
        ToolChange("remove", ("a",), 13),
        ToolChange("add", ("b",), 13),
    )
    tracker.update(["search", "b"], 2)  # nothing new: the earlier places stay
    assert tracker.anchor(20)[-1] == ToolChange("add", ("b",), 13)


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
