"""Issue 47, item 11: a bound on the tool calls of one model answer
(``ToolCallLimits.per_answer``, default 200), enforced before any call is looked up, run or
answered with a per-call message: an answer of 10,000 calls used to take 103-179 s, most
of it spent writing each unknown call an error that lists every offered tool and carrying
all of that into the next request. Calls past the bound get one short error result each
and the loop goes on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ChatOptions,
    ChatResponse,
    Prompt,
    ToolCall,
    ToolCallingAdvisor,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
    tool,
    tool_callbacks,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.loop import ToolCallingManager, ToolCallLimits
from toolsearch.loop.limits import DEFAULT_PER_ANSWER
from toolsearch.models import FunctionChatModel

runs: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    runs.append(city)
    return f"sunny in {city}"


@pytest.fixture(autouse=True)
def _reset() -> None:
    runs.clear()


def _calls(count: int, name: str = "get_weather") -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=f"c{i}", name=name, arguments=json.dumps({"city": f"c{i}"}))
        for i in range(count)
    )


def test_the_default_bound_is_documented_and_positive() -> None:
    assert ToolCallLimits().per_answer == DEFAULT_PER_ANSWER
    assert DEFAULT_PER_ANSWER == 200
    assert (ToolCallLimits().total or 0) < DEFAULT_PER_ANSWER  # the total limit speaks first
    with pytest.raises(ValueError, match="per_answer"):
        ToolCallLimits(per_answer=0)


def test_calls_past_the_bound_are_answered_with_an_error_and_not_run() -> None:
    manager = ToolCallingManager(limits=ToolCallLimits(per_tool=None, total=None, per_answer=5))
    prompt = Prompt(
        [UserMessage(content="weather")],
        ChatOptions(tool_callbacks=tool_callbacks(get_weather)),
    )
    answer = ChatResponse(AssistantMessage(tool_calls=_calls(12)))
    result = manager.execute_tool_calls(prompt, answer)
    assert runs == [f"c{i}" for i in range(5)]
    responses = result.tool_response_message.responses
    assert [r.id for r in responses] == [f"c{i}" for i in range(12)]  # every call answered
    assert all(r.response_data.startswith("sunny") for r in responses[:5])
    for response in responses[5:]:
        assert "12 tool calls" in response.response_data
        assert "ToolCallLimits.per_answer" in response.response_data
    assert not result.return_direct  # the loop goes on: the model reads the errors
    assert result.call_counts == {"get_weather": 5}  # calls past the bound are not counted


def test_unknown_calls_past_the_bound_do_not_list_the_tools() -> None:
    """The unknown-tool error names every offered tool; past the bound it is not written."""
    manager = ToolCallingManager(limits=ToolCallLimits(per_answer=3))
    prompt = Prompt(
        [UserMessage(content="weather")],
        ChatOptions(tool_callbacks=tool_callbacks(get_weather)),
    )
    answer = ChatResponse(AssistantMessage(tool_calls=_calls(10, name="nope")))
    texts = [
        r.response_data
        for r in manager.execute_tool_calls(prompt, answer).tool_response_message.responses
    ]
    assert all("Available tools: get_weather" in text for text in texts[:3])
    assert not any("Available tools" in text for text in texts[3:])


def _flood_agent(count: int, *, search: bool) -> Any:
    state = {"turn": 0}

    def agent(messages: list[Any], tools: list[Any]) -> AssistantMessage:
        state["turn"] += 1
        if search and state["turn"] == 1:
            query = json.dumps({"query": "weather city"})
            return AssistantMessage(
                tool_calls=(ToolCall(id="s", name="toolSearchTool", arguments=query),)
            )
        last = messages[-1]
        if isinstance(last, ToolResponseMessage) and last.responses[0].name == "get_weather":
            refused = sum("per_answer" in r.response_data for r in last.responses)
            return AssistantMessage(content=f"refused {refused} of {len(last.responses)}")
        return AssistantMessage(tool_calls=_calls(count))

    return agent


@pytest.mark.parametrize("search", [False, True], ids=["tool-calling", "tool-search"])
def test_an_answer_of_10000_calls_runs_at_most_the_bound(search: bool) -> None:
    advisor = (
        ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex()) if search else ToolCallingAdvisor()
    )
    model = FunctionChatModel(_flood_agent(10_000, search=search))
    client = ChatClient.builder(model).default_advisors(advisor).build()
    answer = (
        client.prompt("weather everywhere")
        .tools(get_weather)
        .advisors(lambda a: a.param(CONVERSATION_ID, "flood"))
        .call()
        .content()
    )
    assert answer == f"refused {10_000 - DEFAULT_PER_ANSWER} of 10000"
    assert len(runs) <= DEFAULT_PER_ANSWER
