"""Tool-argument augmentation: the schema gains the fields, the consumer receives them
validated, the tool never sees them; function, from-schema and MCP tools, in the plain and
the tool-search advisors; on the span only with content capture."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Literal

import pytest
from pydantic import BaseModel, Field
from telemetry_scripts import ANSWER, CITY, USER, get_forecast, send_email

from toolsearch import (
    AssistantMessage,
    AugmentedArgumentEvent,
    AugmentedToolCallback,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolCallingAdvisor,
    ToolContext,
    ToolDefinitionError,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    augment_tools,
    telemetry,
    tool,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.tools.augment import AUGMENTED_ARGUMENTS_ATTRIBUTE

REASONING = "Reasoning-Why-8812"


class Thinking(BaseModel):
    reasoning: str = Field(description="Why you call this tool, in one sentence")
    confidence: Literal["low", "medium", "high"] | None = Field(
        None, description="How sure you are that this is the right tool"
    )


def thinking_script(arguments: dict, query: str = "weather forecast city"):
    """Calls the first non-search tool it sees with ``arguments`` plus the thinking fields
    (only when the tool's schema asks for them); searches first when it sees the search
    tool alone."""

    def script(messages, tools):
        last = messages[-1]
        if isinstance(last, ToolResponseMessage) and last.responses[0].name != "toolSearchTool":
            return ANSWER
        targets = [t for t in tools if t.name != "toolSearchTool"]
        if not targets:
            search = json.dumps({"query": query})
            return AssistantMessage(
                tool_calls=[ToolCall(id="s", name="toolSearchTool", arguments=search)]
            )
        target = targets[0]
        sent = dict(arguments)
        if "reasoning" in target.input_schema.get("properties", {}):
            sent.update(reasoning=REASONING, confidence="high")
        return AssistantMessage(
            tool_calls=[ToolCall(id="t", name=target.name, arguments=json.dumps(sent))]
        )

    return script


def recording_tool():
    seen: list[dict] = []

    @tool(description="Get the weather forecast for a city")
    def get_forecast(city: str, days: int = 1) -> str:
        seen.append({"city": city, "days": days})
        return f"sunny in {city}"

    return get_forecast, seen


# -- the schema ---------------------------------------------------------------------------


def test_schema_gains_the_fields_and_keeps_the_tool():
    (wrapped,) = augment_tools(get_forecast, arguments=Thinking)
    assert isinstance(wrapped, AugmentedToolCallback)
    schema = wrapped.definition.input_schema
    assert set(schema["properties"]) == {"city", "reasoning", "confidence"}
    assert schema["required"] == ["city", "reasoning"]
    assert schema["properties"]["reasoning"]["description"].startswith("Why you call")
    assert wrapped.definition.name == "get_forecast"
    assert wrapped.definition.description == "Get the weather forecast for a city"
    assert wrapped.augmented_fields == ("reasoning", "confidence")
    assert wrapped.metadata == wrapped.delegate.metadata


def test_a_field_the_tool_already_has_is_refused():
    class Clash(BaseModel):
        city: str

    with pytest.raises(ToolDefinitionError, match="city"):
        augment_tools(get_forecast, arguments=Clash)


def test_a_dataclass_works_too():
    @dataclass
    class Note:
        note: str

    (wrapped,) = augment_tools(get_forecast, arguments=Note)
    assert wrapped.definition.input_schema["required"] == ["city", "note"]


# -- one call -----------------------------------------------------------------------------


def test_consumer_receives_the_fields_and_the_tool_never_sees_them():
    tool_fn, seen = recording_tool()
    events: list[AugmentedArgumentEvent[Thinking]] = []
    (wrapped,) = augment_tools(tool_fn, arguments=Thinking, consumer=events.append)
    raw = json.dumps({"city": "Oslo", "days": 2, "reasoning": "needs weather"})
    context = ToolContext({"tenant": "acme"})
    assert wrapped.call(raw, context) == "sunny in Oslo"
    assert seen == [{"city": "Oslo", "days": 2}]
    (event,) = events
    assert event.arguments == Thinking(reasoning="needs weather")
    assert event.raw_input == raw
    assert event.definition is wrapped.definition
    assert event.context is context


def test_invalid_extra_arguments_are_an_argument_error_before_the_tool_runs():
    from toolsearch import InvalidToolArgumentsError

    tool_fn, seen = recording_tool()
    (wrapped,) = augment_tools(tool_fn, arguments=Thinking)
    with pytest.raises(InvalidToolArgumentsError, match="reasoning"):
        wrapped.call(json.dumps({"city": "Oslo"}))
    with pytest.raises(InvalidToolArgumentsError, match="confidence"):
        wrapped.call(json.dumps({"city": "Oslo", "reasoning": "r", "confidence": "total"}))
    assert seen == []


def test_strip_false_passes_the_fields_on():
    received: list[dict] = []
    delegate = FunctionToolCallback.from_schema(
        name="lookup",
        description="Look a city up",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        function=lambda arguments: received.append(arguments) or "ok",
    )
    (wrapped,) = augment_tools(delegate, arguments=Thinking, strip=False)
    wrapped.call(json.dumps({"city": "Oslo", "reasoning": "r"}))
    assert received == [{"city": "Oslo", "reasoning": "r"}]


def test_async_call_and_async_consumer():
    tool_fn, seen = recording_tool()
    events = []

    async def consumer(event):
        await asyncio.sleep(0)
        events.append(event.arguments.reasoning)

    (wrapped,) = augment_tools(tool_fn, arguments=Thinking, consumer=consumer)
    raw = json.dumps({"city": "Oslo", "reasoning": "async"})
    assert asyncio.run(wrapped.acall(raw)) == "sunny in Oslo"
    assert wrapped.call(raw) == "sunny in Oslo"  # an async consumer from sync code
    assert events == ["async", "async"]
    assert seen == [{"city": "Oslo", "days": 1}] * 2


def test_a_failing_consumer_fails_the_call_like_the_tool_would():
    def consumer(event):
        raise RuntimeError("consumer bug")

    tool_fn, seen = recording_tool()
    (wrapped,) = augment_tools(tool_fn, arguments=Thinking, consumer=consumer)
    model = FunctionChatModel(thinking_script({"city": CITY}))
    assert ChatClient.create(model).prompt(USER).tools(wrapped).call().content() == ANSWER
    result = model.requests[-1].messages[-1]
    assert isinstance(result, ToolResponseMessage)
    assert "consumer bug" in result.responses[0].response_data
    assert seen == []


# -- in the loops ------------------------------------------------------------------------


def test_plain_advisor_with_a_function_tool():
    tool_fn, seen = recording_tool()
    events = []
    tools = augment_tools(tool_fn, send_email, arguments=Thinking, consumer=events.append)
    model = FunctionChatModel(thinking_script({"city": "Rome"}))
    client = ChatClient.builder(model).default_advisors(ToolCallingAdvisor()).build()
    assert client.prompt(USER).tools(tools).call().content() == ANSWER
    assert [t.name for t in model.requests[0].tool_definitions] == ["get_forecast", "send_email"]
    assert "reasoning" in model.requests[0].tool_definitions[0].input_schema["properties"]
    assert seen == [{"city": "Rome", "days": 1}]
    assert [(e.definition.name, e.arguments.reasoning, e.arguments.confidence) for e in events] == [
        ("get_forecast", REASONING, "high")
    ]


def test_tool_search_advisor_with_a_from_schema_tool():
    received: list[dict] = []
    forecast = FunctionToolCallback.from_schema(
        name="get_forecast",
        description="Get the weather forecast for a city",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        function=lambda arguments: received.append(arguments) or "sunny",
    )
    events = []
    tools = augment_tools(forecast, send_email, arguments=Thinking, consumer=events.append)
    model = FunctionChatModel(thinking_script({"city": "Lima"}))
    advisor = ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex())
    client = ChatClient.builder(model).default_advisors(advisor).build()
    assert client.prompt(USER).tools(tools).call().content() == ANSWER
    # the search tool itself is not augmented; the discovered tool is
    first, second = model.requests[0], model.requests[1]
    assert [t.name for t in first.tool_definitions] == ["toolSearchTool"]
    found = next(t for t in second.tool_definitions if t.name == "get_forecast")
    assert "reasoning" in found.input_schema["properties"]
    assert received == [{"city": "Lima"}]  # additionalProperties: false, yet it ran
    assert [e.arguments.reasoning for e in events] == [REASONING]


def test_augmented_arguments_on_the_span_only_with_content_capture(otel):
    tools = augment_tools(get_forecast, arguments=Thinking)
    client = ChatClient.builder(FunctionChatModel(thinking_script({"city": CITY}))).build()
    client.prompt(USER).tools(tools).call()
    span = otel.one("execute_tool get_forecast")
    assert AUGMENTED_ARGUMENTS_ATTRIBUTE not in span.attributes
    assert all(REASONING not in str(v) for s in otel.spans() for v in s.attributes.values())
    otel.exporter.clear()
    telemetry.set_capture_content(True)
    client.prompt(USER).tools(tools).call()
    span = otel.one("execute_tool get_forecast")
    assert json.loads(span.attributes[AUGMENTED_ARGUMENTS_ATTRIBUTE]) == {
        "reasoning": REASONING,
        "confidence": "high",
    }


# -- MCP tools ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_tools():
    pytest.importorskip("mcp")
    from mcp_servers.helpers import stdio

    from toolsearch.mcp import McpToolProvider

    with McpToolProvider({"demo": stdio("demo")}) as provider:
        yield provider


def test_mcp_tool_in_both_advisors(mcp_tools):
    add = next(cb for cb in mcp_tools.tool_callbacks() if cb.definition.name == "add")
    events = []
    (wrapped,) = augment_tools(add, arguments=Thinking, consumer=events.append)
    assert "reasoning" in wrapped.definition.input_schema["properties"]
    # the MCP tool checks its arguments against its own schema: they arrive stripped
    assert wrapped.call(json.dumps({"a": 2, "b": 3, "reasoning": "sum"})) == "5"
    for advisor in (ToolCallingAdvisor(), ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex())):
        model = FunctionChatModel(thinking_script({"a": 20, "b": 22}, "add two integers"))
        client = ChatClient.builder(model).default_advisors(advisor).build()
        client.prompt("add numbers").tools(wrapped).call()
        last = model.requests[-1].messages[-1]
        assert isinstance(last, ToolResponseMessage)
        assert last.responses[0].response_data == "42"
    assert [e.arguments.reasoning for e in events] == ["sum", REASONING, REASONING]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
