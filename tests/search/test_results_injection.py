"""``injection="results"``: the tool list never changes, search results carry the
definitions, the model calls discovered tools through the call tool, and the rendered
request keeps its prefix byte for byte across a discovery (OpenAI shape; Anthropic's
defer_loading shape for comparison)."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.errors import ToolDefinitionError
from toolsearch.indexes import RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.models.anthropic import anthropic_request_body
from toolsearch.models.openai import openai_request_body
from toolsearch.search.sessions import ToolSearchSessions

CALLS: list[tuple[str, dict[str, Any]]] = []


def tool(name: str, description: str) -> FunctionToolCallback:
    def run(arguments: dict[str, Any]) -> str:
        CALLS.append((name, arguments))
        return f"{name} done"

    return FunctionToolCallback.from_schema(
        run,
        name=name,
        description=description,
        input_schema={"type": "object", "properties": {"to": {"type": "string"}}},
    )


TOOLS = [
    tool("send_email", "Send an email message to a recipient"),
    tool("get_weather", "Get the weather forecast for a city"),
    tool("create_ticket", "Open a support ticket for a customer"),
]


def scripted(steps: Sequence[ToolCall]) -> FunctionChatModel:
    """Make the calls of ``steps`` one per request, then answer."""

    def model(messages: Sequence[Any], tools: Sequence[Any]) -> AssistantMessage:
        start = max(i for i, m in enumerate(messages) if type(m).__name__ == "UserMessage")
        done = sum(isinstance(m, ToolResponseMessage) for m in messages[start:])
        if done < len(steps):
            return AssistantMessage(content="", tool_calls=[steps[done]])
        return AssistantMessage(content="done")

    return FunctionChatModel(model)


def search(query: str, id: str = "s") -> ToolCall:
    return ToolCall(id=id, name="toolSearchTool", arguments=json.dumps({"query": query}))


def through(name: str, arguments: Any, id: str = "c") -> ToolCall:
    return ToolCall(
        id=id, name="callTool", arguments=json.dumps({"name": name, "arguments": arguments})
    )


def converse(
    advisor: ToolSearchToolCallingAdvisor, turns: Sequence[Sequence[ToolCall]]
) -> list[Any]:
    """Each turn one user message of the same conversation (its history kept by passing
    the previous turns' messages along); every request the model received."""
    requests: list[Any] = []
    history: list[Any] = []
    for steps in turns:
        model = scripted(steps)
        client = ChatClient.builder(model).default_advisors(advisor).build()
        response = (
            client.prompt()
            .messages(*history)
            .user("help")
            .tools(TOOLS)
            .advisors(lambda a: a.param(CONVERSATION_ID, "a"))
            .call()
            .chat_response()
        )
        requests.extend(model.requests)
        kept = [m for m in model.requests[-1].messages if type(m).__name__ != "SystemMessage"]
        history = [*kept, response.message]  # as chat memory keeps it
    return requests


def results_advisor(**options: Any) -> ToolSearchToolCallingAdvisor:
    return ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), injection="results", **options)


def test_the_tool_list_never_changes_and_results_carry_the_definitions() -> None:
    CALLS.clear()
    requests = converse(
        results_advisor(),
        [[search("email"), through("send_email", {"to": "ana"})], [search("weather")]],
    )
    assert {tuple(t.name for t in r.tool_definitions) for r in requests} == {
        ("toolSearchTool", "callTool")
    }
    found = [
        json.loads(response.response_data)
        for request in requests
        for message in request.messages
        if isinstance(message, ToolResponseMessage)
        for response in message.responses
        if response.name == "toolSearchTool"
    ]
    assert found[0] == [
        {
            "name": "send_email",
            "description": "Send an email message to a recipient",
            "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
        }
    ]
    assert CALLS == [("send_email", {"to": "ana"})]


def test_a_call_through_keeps_its_own_name_in_the_history() -> None:
    requests = converse(results_advisor(), [[search("email"), through("send_email", {})]])
    last = requests[-1].messages
    [call] = [
        c for m in last if isinstance(m, AssistantMessage) for c in m.tool_calls if c.id == "c"
    ]
    [answer] = [
        r for m in last if isinstance(m, ToolResponseMessage) for r in m.responses if r.id == "c"
    ]
    assert call.name == answer.name == "callTool"
    assert answer.response_data == "send_email done"


def test_the_loaded_view_shows_the_call_tool() -> None:
    advisor = results_advisor()
    converse(advisor, [[search("email"), through("send_email", {})]])
    view = advisor.loaded("a")
    assert view is not None
    assert [(t.name, t.reason) for t in view.tools] == [
        ("toolSearchTool", "search"),
        ("callTool", "call"),
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"name": "nope"}', "there is no tool named 'nope'"),
        ('{"arguments": {}}', "name: the exact name of a tool found"),
        ('{"name": "send_email", "arguments": [1]}', "arguments: an object"),
        ("not json", "callTool"),
    ],
)
def test_a_bad_call_through_is_answered_not_raised(arguments: str, expected: str) -> None:
    CALLS.clear()
    steps = [search("email"), ToolCall(id="c", name="callTool", arguments=arguments)]
    requests = converse(results_advisor(), [steps])
    [answer] = [
        r
        for m in requests[-1].messages
        if isinstance(m, ToolResponseMessage)
        for r in m.responses
        if r.id == "c"
    ]
    assert expected in answer.response_data
    assert CALLS == []


def test_an_undiscovered_tool_is_refused_under_hint_and_run_under_execute() -> None:
    CALLS.clear()
    steps = [through("get_weather", {})]
    hinted = converse(results_advisor(undiscovered_tool_policy="hint"), [steps])
    [answer] = [
        r for m in hinted[-1].messages if isinstance(m, ToolResponseMessage) for r in m.responses
    ]
    assert "not loaded yet" in answer.response_data
    assert CALLS == []
    converse(results_advisor(), [steps])
    assert CALLS == [("get_weather", {})]


def test_arguments_given_as_a_json_string_are_accepted() -> None:
    CALLS.clear()
    call = ToolCall(
        id="c",
        name="callTool",
        arguments=json.dumps({"name": "send_email", "arguments": '{"to": "bo"}'}),
    )
    converse(results_advisor(), [[search("email"), call]])
    assert CALLS == [("send_email", {"to": "bo"})]


def test_the_async_loop_calls_through_too() -> None:
    CALLS.clear()
    advisor = results_advisor()
    model = scripted([search("email"), through("send_email", {"to": "cy"})])
    client = ChatClient.builder(model).default_advisors(advisor).build()

    async def main() -> None:
        await client.prompt("help").tools(TOOLS).acall()

    asyncio.run(main())
    assert CALLS == [("send_email", {"to": "cy"})]


def test_a_tool_named_like_the_call_tool_is_refused() -> None:
    clash = tool("callTool", "clash")
    model = scripted([])
    client = ChatClient.builder(model).default_advisors(results_advisor()).build()
    with pytest.raises(ToolDefinitionError, match="call tool's name"):
        client.prompt("help").tools([*TOOLS, clash]).call()


def test_other_front_doors_refuse_results_injection() -> None:
    from toolsearch.search import ToolSearchOptions

    with pytest.raises(ValueError, match="tool-search advisor's"):
        ToolSearchSessions(
            RegexToolIndex(), options=ToolSearchOptions(injection="results"), door="langgraph"
        )


# -- the rendered prefix across a discovery -----------------------------------------------


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def prefix_kept(
    before: dict[str, Any], after: dict[str, Any], head: Sequence[str], log: str
) -> bool:
    """Whether ``after`` renders ``before``'s head keys byte for byte and extends its
    ``log`` list (the conversation) at its end."""
    same_head = all(compact(before.get(k)) == compact(after.get(k)) for k in head)
    old, new = before[log], after[log]
    return same_head and compact(new[: len(old)]) == compact(old)


DISCOVERY_TURNS = [
    [search("email"), through("send_email", {})],
    [search("weather"), through("get_weather", {})],
]


def openai_bodies(requests: Sequence[Any]) -> list[dict[str, Any]]:
    return [openai_request_body(r, model="m") for r in requests]


def test_openai_results_injection_keeps_the_prefix_across_every_discovery() -> None:
    bodies = openai_bodies(converse(results_advisor(), DISCOVERY_TURNS))
    assert len(bodies) >= 5
    for before, after in itertools.pairwise(bodies):
        assert prefix_kept(before, after, ["tools"], "messages")


def test_openai_tools_injection_changes_the_prefix_at_a_discovery() -> None:
    turns = [[search("email"), ToolCall(id="c", name="send_email", arguments="{}")]]
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    bodies = openai_bodies(converse(advisor, turns))
    assert not prefix_kept(bodies[0], bodies[1], ["tools"], "messages")


def test_anthropic_defer_loading_keeps_the_read_prefix_across_a_discovery() -> None:
    turns = [
        [search("email"), ToolCall(id="c", name="send_email", arguments="{}")],
        [search("weather")],
    ]
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    requests = converse(advisor, turns)
    bodies = [anthropic_request_body(r, model="m", tool_search="defer_loading") for r in requests]
    for before, after in itertools.pairwise(bodies):
        loaded_before = [t for t in before["tools"] if not t.get("defer_loading")]
        loaded_after = [t for t in after["tools"] if not t.get("defer_loading")]
        assert compact(loaded_before) == compact(loaded_after)
        assert prefix_kept(before, after, ["system"], "messages")


def test_other_front_doors_refuse_the_native_search() -> None:
    from toolsearch.search import ToolSearchOptions

    with pytest.raises(ValueError, match="search='native' is the tool-search advisor's"):
        ToolSearchSessions(
            RegexToolIndex(), options=ToolSearchOptions(search="native"), door="mcp-proxy"
        )


def test_the_call_tool_called_directly_runs_the_named_tool_or_answers_the_refusal() -> None:
    from toolsearch.search import ToolSearchOptions

    CALLS.clear()
    sessions = ToolSearchSessions(RegexToolIndex(), options=ToolSearchOptions(injection="results"))
    callbacks = {t.definition.name: t for t in TOOLS}
    with sessions.open("s", tools=[t.definition for t in TOOLS]) as run:
        call_tool = run.call_tool(callbacks.get)
        assert call_tool is not None
        assert call_tool.definition.name == "callTool"
        run.search("email")
        assert (
            call_tool.call('{"name": "send_email", "arguments": {"to": "di"}}') == "send_email done"
        )
        assert "no tool named 'nope'" in call_tool.call('{"name": "nope"}')
        assert asyncio.run(call_tool.acall('{"name": "send_email"}')) == "send_email done"
    assert CALLS == [("send_email", {"to": "di"}), ("send_email", {})]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
