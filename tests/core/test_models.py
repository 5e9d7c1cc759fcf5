"""Offline chat models, chat value types and token usage.

Covers ``FunctionChatModel`` (every shape of script function), ``TestChatModel``,
``sample_arguments``, ``ChatResponseAggregator``, ``Usage`` and ``Prompt`` helpers, and
the low-level rule that per-request tool callbacks replace a model's default ones.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ChatModelError,
    ChatOptions,
    ChatResponse,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolParam,
    ToolResponseMessage,
    Usage,
    UserMessage,
    tool,
)
from toolsearch.chat import BaseChatModel, ChatModel, ChatResponseAggregator, FinishReason
from toolsearch.models import FunctionChatModel, TestChatModel
from toolsearch.models.samples import sample_arguments
from toolsearch.testing import function_tool
from toolsearch.tokens import WhitespaceTokenCounter
from toolsearch.tools import tool_callbacks
from toolsearch.tools.validation import validate_json_value

# -- helpers ---------------------------------------------------------------------------


_callback = partial(
    function_tool, schema={"type": "object", "properties": {"q": {"type": "string"}}}
)


def _names(tools: list[ToolDefinition]) -> list[str]:
    return [t.name for t in tools]


# -- FunctionChatModel: shapes of the script function ----------------------------------


def test_function_model_is_a_chat_model() -> None:
    model = FunctionChatModel(lambda messages, tools: "hi")
    assert isinstance(model, ChatModel)
    assert isinstance(model, BaseChatModel)


def test_function_model_str_return_becomes_the_reply_text() -> None:
    model = FunctionChatModel(lambda messages, tools: "Hello there, friend")
    response = model.call(Prompt.of("hi"))
    assert isinstance(response, ChatResponse)
    assert response.message.content == "Hello there, friend"
    assert response.text == "Hello there, friend"
    assert response.message.tool_calls == ()
    assert response.finish_reason == FinishReason.STOP


def test_function_model_assistant_message_return_with_tool_calls() -> None:
    call = ToolCall(id="c1", name="lookup", arguments='{"q": "x"}')
    model = FunctionChatModel(lambda messages, tools: AssistantMessage(tool_calls=[call]))
    response = model.call(Prompt.of("hi"))
    assert response.message.tool_calls == (call,)
    assert response.has_tool_calls
    assert response.finish_reason == FinishReason.TOOL_CALLS
    assert not response.message.content


def test_function_model_receives_messages_and_visible_tools() -> None:
    seen: dict[str, Any] = {}

    def script(messages: list, tools: list[ToolDefinition]) -> str:
        seen["messages"] = messages
        seen["tools"] = tools
        return "ok"

    model = FunctionChatModel(script)
    prompt = Prompt(
        [SystemMessage(content="be brief"), UserMessage(content="hello")],
        ChatOptions(tool_callbacks=[_callback("alpha"), _callback("beta")]),
    )
    model.call(prompt)
    assert seen["messages"] == [SystemMessage(content="be brief"), UserMessage(content="hello")]
    assert all(isinstance(t, ToolDefinition) for t in seen["tools"])
    assert _names(seen["tools"]) == ["alpha", "beta"]


def test_function_model_async_function() -> None:
    async def script(messages: list, tools: list) -> str:
        await asyncio.sleep(0)
        return f"async answer to {messages[-1].content}"

    model = FunctionChatModel(script)
    assert model.call(Prompt.of("q1")).message.content == "async answer to q1"
    chunks = list(model.stream(Prompt.of("q2")))
    assert "".join(c.text for c in chunks) == "async answer to q2"
    assert asyncio.run(model.acall(Prompt.of("q3"))).message.content == "async answer to q3"


def test_function_model_async_function_returning_assistant_message() -> None:
    async def script(messages: list, tools: list) -> AssistantMessage:
        return AssistantMessage(tool_calls=[ToolCall(id="a", name="t", arguments="{}")])

    response = FunctionChatModel(script).call(Prompt.of("x"))
    assert response.message.tool_calls == (ToolCall(id="a", name="t", arguments="{}"),)


def test_function_model_generator_streams_its_chunks() -> None:
    def script(messages: list, tools: list):
        yield "Hel"
        yield "lo"
        yield AssistantMessage(content=" world")

    model = FunctionChatModel(script)
    chunks = list(model.stream(Prompt.of("hi")))
    assert [c.text for c in chunks] == ["Hel", "lo", " world"]
    assert chunks[-1].finish_reason == FinishReason.STOP
    assert model.call(Prompt.of("hi")).message.content == "Hello world"


def test_function_model_async_generator_streams_its_chunks() -> None:
    async def script(messages: list, tools: list):
        yield "a"
        await asyncio.sleep(0)
        yield "b"

    model = FunctionChatModel(script)
    assert [c.text for c in model.stream(Prompt.of("hi"))] == ["a", "b"]

    async def collect() -> list[str]:
        return [c.text async for c in model.astream(Prompt.of("hi"))]

    assert asyncio.run(collect()) == ["a", "b"]


def test_function_model_whole_reply_streams_as_several_chunks_that_join_back() -> None:
    text = "one two three four"
    chunks = list(FunctionChatModel(lambda m, t: text).stream(Prompt.of("hi")))
    assert len(chunks) > 1
    assert "".join(c.text for c in chunks) == text
    # only the last chunk carries the finish reason and usage
    assert all(c.finish_reason is None for c in chunks[:-1])
    assert chunks[-1].finish_reason == FinishReason.STOP
    assert chunks[-1].usage.total_tokens > 0


def test_function_model_generator_tool_call_deltas_aggregate_in_call() -> None:
    def script(messages: list, tools: list):
        yield AssistantMessage(tool_calls=[ToolCall(id="c1", name="x", arguments="")])
        yield AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments='{"a":')])
        yield AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments="1}")])

    response = FunctionChatModel(script).call(Prompt.of("go"))
    assert response.message.tool_calls == (ToolCall(id="c1", name="x", arguments='{"a":1}'),)
    assert json.loads(response.message.tool_calls[0].arguments) == {"a": 1}
    assert response.finish_reason == FinishReason.TOOL_CALLS


def test_function_model_records_requests_with_effective_options() -> None:
    model = FunctionChatModel(
        lambda m, t: "ok", default_options=ChatOptions(model="m-default", temperature=0.1)
    )
    model.call(Prompt.of("first", ChatOptions(temperature=0.7)))
    model.call(Prompt.of("second"))
    assert len(model.requests) == 2
    assert model.requests[0].options.temperature == 0.7
    assert model.requests[0].options.model == "m-default"
    assert model.requests[1].options.temperature == 0.1
    assert model.requests[0].messages == (UserMessage(content="first"),)


# -- failures --------------------------------------------------------------------------


def test_failing_function_raises_chat_model_error() -> None:
    def script(messages: list, tools: list) -> str:
        raise RuntimeError("backend down")

    model = FunctionChatModel(script)
    with pytest.raises(ChatModelError, match="backend down"):
        model.call(Prompt.of("hi"))


def test_failing_function_through_client_raises_chat_model_error() -> None:
    def script(messages: list, tools: list) -> str:
        raise RuntimeError("backend down")

    with pytest.raises(ChatModelError):
        ChatClient.create(FunctionChatModel(script)).prompt("hi").call().content()


def test_failing_async_function_raises_chat_model_error() -> None:
    async def script(messages: list, tools: list) -> str:
        raise RuntimeError("async backend down")

    model = FunctionChatModel(script)
    with pytest.raises(ChatModelError, match="async backend down"):
        model.call(Prompt.of("hi"))


def test_failing_generator_function_raises_chat_model_error() -> None:
    def script(messages: list, tools: list):
        yield "partial"
        raise RuntimeError("stream broke")

    model = FunctionChatModel(script)
    with pytest.raises(ChatModelError, match="stream broke"):
        model.call(Prompt.of("hi"))


def test_function_returning_unsupported_type_raises_chat_model_error() -> None:
    model = FunctionChatModel(lambda m, t: 42)
    with pytest.raises(ChatModelError):
        model.call(Prompt.of("hi"))


def test_chat_model_error_is_a_toolsearch_error() -> None:
    from toolsearch import ToolsearchError

    assert issubclass(ChatModelError, ToolsearchError)


# -- usage -----------------------------------------------------------------------------


def test_usage_reported_and_prompt_tokens_grow_with_tools() -> None:
    model = FunctionChatModel(lambda m, t: "a short reply of several words")
    bare = model.call(Prompt.of("what is the weather"))
    with_tools = model.call(
        Prompt.of(
            "what is the weather",
            ChatOptions(tool_callbacks=[_callback("get_weather", "Weather for a city")]),
        )
    )
    assert bare.usage.prompt_tokens > 0
    assert bare.usage.completion_tokens > 0
    assert bare.usage.total_tokens == bare.usage.prompt_tokens + bare.usage.completion_tokens
    assert with_tools.usage.prompt_tokens > bare.usage.prompt_tokens
    more_tools = model.call(
        Prompt.of(
            "what is the weather",
            ChatOptions(
                tool_callbacks=[
                    _callback("get_weather", "Weather for a city"),
                    _callback("get_forecast", "Forecast for a city"),
                ]
            ),
        )
    )
    assert more_tools.usage.prompt_tokens > with_tools.usage.prompt_tokens


def test_usage_completion_tokens_count_tool_calls() -> None:
    model = FunctionChatModel(
        lambda m, t: AssistantMessage(
            tool_calls=[ToolCall(id="1", name="lookup", arguments='{"q": "x"}')]
        )
    )
    assert model.call(Prompt.of("hi")).usage.completion_tokens > 0


def test_usage_longer_reply_more_completion_tokens() -> None:
    short = FunctionChatModel(lambda m, t: "ok").call(Prompt.of("hi"))
    long = FunctionChatModel(lambda m, t: "ok " * 20).call(Prompt.of("hi"))
    assert long.usage.completion_tokens > short.usage.completion_tokens


def test_usage_uses_pluggable_token_counter() -> None:
    class FixedCounter:
        name = "fixed"

        def count(self, text: str) -> int:
            return 7

    response = FunctionChatModel(lambda m, t: "x", token_counter=FixedCounter()).call(
        Prompt.of("hi")
    )
    assert response.usage == Usage(prompt_tokens=7, completion_tokens=7)


def test_whitespace_token_counter() -> None:
    counter = WhitespaceTokenCounter()
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    assert counter.count("a, b!") == 4


def test_usage_arithmetic() -> None:
    a = Usage(prompt_tokens=10, completion_tokens=3, cached_tokens=2)
    b = Usage(prompt_tokens=5, completion_tokens=1)
    total = a + b
    assert total == Usage(prompt_tokens=15, completion_tokens=4, cached_tokens=2)
    assert total.total_tokens == 19
    assert Usage().total_tokens == 0
    assert sum([a, b], Usage()) == total


# -- low-level path: per-request tool callbacks replace the model's defaults ------------


def _recording_model(default_tools: list) -> tuple[FunctionChatModel, list[list[str]]]:
    seen: list[list[str]] = []

    def script(messages: list, tools: list[ToolDefinition]) -> str:
        seen.append(_names(tools))
        return "ok"

    model = FunctionChatModel(script, default_options=ChatOptions(tool_callbacks=default_tools))
    return model, seen


def test_request_tool_callbacks_replace_model_defaults() -> None:
    model, seen = _recording_model([_callback("default_tool")])
    model.call(Prompt.of("hi", ChatOptions(tool_callbacks=[_callback("request_tool")])))
    assert seen == [["request_tool"]]
    assert [cb.definition.name for cb in model.requests[0].options.tool_callbacks] == [
        "request_tool"
    ]


def test_model_default_tool_callbacks_visible_without_request_tools() -> None:
    model, seen = _recording_model([_callback("default_tool")])
    model.call(Prompt.of("hi"))
    model.call(Prompt.of("hi", ChatOptions(temperature=0.2)))
    assert seen == [["default_tool"], ["default_tool"]]


def test_request_options_merge_settings_and_tool_context_over_defaults() -> None:
    defaults = ChatOptions(model="base", temperature=0.1, tool_context={"a": 1, "b": 1})
    merged = defaults.merged_with(ChatOptions(temperature=0.9, tool_context={"b": 2}))
    assert merged.model == "base"
    assert merged.temperature == 0.9
    assert dict(merged.tool_context) == {"a": 1, "b": 2}


# -- TestChatModel ---------------------------------------------------------------------


class Unit(Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Address(BaseModel):
    street: str
    city: str
    zip_code: int


@dataclass
class Window:
    start: int
    end: int


def test_test_chat_model_calls_every_tool_once_with_valid_arguments() -> None:
    received: dict[str, dict[str, Any]] = {}

    @tool
    def get_weather(
        city: Annotated[str, ToolParam(description="City name")],
        unit: Unit,
        mode: Literal["brief", "full"],
        days: int = 3,
    ) -> str:
        """Weather for a city."""
        received["get_weather"] = {"city": city, "unit": unit, "mode": mode, "days": days}
        return f"sunny in {city}"

    @tool
    def ship(address: Address, window: Window, tags: list[str], note: str | None = None) -> str:
        """Ship a parcel."""
        received["ship"] = {"address": address, "window": window, "tags": tags, "note": note}
        return "shipped"

    @tool
    def ping() -> str:
        """Ping."""
        received["ping"] = {}
        return "pong"

    model = TestChatModel()
    answer = ChatClient.create(model).prompt("do it all").tools(get_weather, ship, ping).call()
    text = answer.content()

    assert set(received) == {"get_weather", "ship", "ping"}
    weather = received["get_weather"]
    assert isinstance(weather["city"], str)
    assert isinstance(weather["unit"], Unit)
    assert weather["mode"] in ("brief", "full")
    assert isinstance(weather["days"], int)
    shipped = received["ship"]
    assert isinstance(shipped["address"], Address)
    assert isinstance(shipped["address"].zip_code, int)
    assert isinstance(shipped["window"], Window)
    assert isinstance(shipped["tags"], list)
    assert all(isinstance(t, str) for t in shipped["tags"])

    # one tool turn with a call per tool, then the summary
    assert len(model.requests) == 2
    tool_turn = [m for m in model.requests[1].messages if isinstance(m, AssistantMessage)]
    assert len(tool_turn) == 1
    assert sorted(c.name for c in tool_turn[0].tool_calls) == ["get_weather", "ping", "ship"]
    assert len({c.id for c in tool_turn[0].tool_calls}) == 3
    responses = [m for m in model.requests[1].messages if isinstance(m, ToolResponseMessage)]
    assert all("Error" not in r.response_data for r in responses[0].responses)

    assert text is not None
    assert "sunny in" in text
    assert "shipped" in text
    assert "pong" in text


class Inner(BaseModel):
    level: Literal[1, 2, 3]
    label: str = Field(min_length=10)


def test_test_chat_model_generated_arguments_fit_each_schema() -> None:
    @tool
    def nested(inner: Inner, items: list[Inner], ratio: float, flag: bool) -> str:
        """Nested."""
        return "ok"

    callbacks = tool_callbacks(nested)
    model = TestChatModel()
    response = model.call(Prompt.of("go", ChatOptions(tool_callbacks=callbacks)))
    (call,) = response.message.tool_calls
    arguments = json.loads(call.arguments)
    assert validate_json_value(callbacks[0].definition.input_schema, arguments) == []
    assert callbacks[0].call(call.arguments) == "ok"


def test_test_chat_model_without_tools_answers() -> None:
    model = TestChatModel()
    response = model.call(Prompt.of("hello"))
    assert not response.message.tool_calls
    assert response.message.content
    assert response.usage.prompt_tokens > 0
    assert response.usage.completion_tokens > 0


def test_test_chat_model_does_not_call_a_tool_twice_per_user_turn() -> None:
    calls: list[str] = []

    @tool
    def once() -> str:
        """Once."""
        calls.append("once")
        return "done"

    client = ChatClient.create(TestChatModel())
    client.prompt("first").tools(once).call().content()
    assert calls == ["once"]


# -- sample_arguments ------------------------------------------------------------------


SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {}},
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 12},
            "count": {"type": "integer", "minimum": 5, "maximum": 9},
            "score": {"type": "number"},
            "ok": {"type": "boolean"},
            "color": {"enum": ["red", "green"]},
            "kind": {"const": "fixed"},
        },
        "required": ["name", "count", "score", "ok", "color", "kind"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                "required": ["x", "y"],
            }
        },
        "properties": {
            "origin": {"$ref": "#/$defs/Point"},
            "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}, "minItems": 2},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "required": ["origin", "path"],
    },
    {
        "type": "object",
        "properties": {
            "one": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "both": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
                ]
            },
            "nullable": {"type": ["string", "null"]},
        },
        "required": ["one", "both", "nullable"],
    },
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=["empty", "scalars", "refs", "combinators"])
def test_sample_arguments_validate(schema: dict[str, Any]) -> None:
    value = sample_arguments(schema)
    assert isinstance(value, dict)
    assert validate_json_value(schema, value) == []
    for name in schema.get("required", []):
        assert name in value


def test_sample_arguments_from_generated_tool_schema() -> None:
    @tool
    def book(address: Address, unit: Unit, window: Window, when: str | None = None) -> str:
        """Book."""
        return "ok"

    (callback,) = tool_callbacks(book)
    schema = callback.definition.input_schema
    arguments = sample_arguments(schema)
    assert validate_json_value(schema, arguments) == []
    assert callback.call(json.dumps(arguments)) == "ok"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"code": {"type": "string", "maxLength": 2}}},
        {"type": "object", "properties": {"n": {"type": "integer", "maximum": -1}}},
        {"type": "object", "properties": {"p": {"type": "number", "maximum": 0.5}}},
    ],
    ids=["short-string", "negative-int", "small-number"],
)
def test_sample_arguments_respect_upper_bounds(schema: dict[str, Any]) -> None:
    value = sample_arguments(schema)
    assert validate_json_value(schema, value) == []


# -- ChatResponseAggregator ------------------------------------------------------------


def test_aggregator_joins_text_and_keeps_last_usage_and_finish_reason() -> None:
    chunks = [
        ChatResponse(AssistantMessage(content="Hel"), metadata={"id": "r1"}),
        ChatResponse(AssistantMessage(content="lo"), metadata={"model": "m"}),
        ChatResponse(
            AssistantMessage(content="!"),
            finish_reason="stop",
            usage=Usage(prompt_tokens=4, completion_tokens=2),
        ),
    ]
    result = ChatResponseAggregator.aggregate(chunks)
    assert result.message.content == "Hello!"
    assert result.message.tool_calls == ()
    assert result.finish_reason == "stop"
    assert result.usage == Usage(prompt_tokens=4, completion_tokens=2)
    assert dict(result.metadata) == {"id": "r1", "model": "m"}


def test_aggregator_empty_usage_does_not_overwrite() -> None:
    aggregator = ChatResponseAggregator()
    aggregator.add(ChatResponse(AssistantMessage(content="a"), usage=Usage(3, 4)))
    aggregator.add(ChatResponse(AssistantMessage(content="b")))
    assert aggregator.result().usage == Usage(3, 4)


def test_aggregator_merges_tool_call_deltas() -> None:
    aggregator = ChatResponseAggregator()
    assert not aggregator.has_tool_calls
    aggregator.add(
        ChatResponse(AssistantMessage(tool_calls=[ToolCall(id="c1", name="x", arguments="")]))
    )
    assert aggregator.has_tool_calls
    aggregator.add(
        ChatResponse(AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments='{"a":')]))
    )
    aggregator.add(
        ChatResponse(AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments="1}")]))
    )
    result = aggregator.result()
    assert result.message.tool_calls == (ToolCall(id="c1", name="x", arguments='{"a":1}'),)
    assert result.finish_reason == FinishReason.TOOL_CALLS


def test_aggregator_separate_ids_make_separate_calls() -> None:
    result = ChatResponseAggregator.aggregate(
        [
            ChatResponse(
                AssistantMessage(tool_calls=[ToolCall(id="c1", name="a", arguments='{"x":')])
            ),
            ChatResponse(
                AssistantMessage(tool_calls=[ToolCall(id="c1", name="a", arguments="1}")])
            ),
            ChatResponse(AssistantMessage(tool_calls=[ToolCall(id="c2", name="b", arguments="")])),
        ]
    )
    assert result.message.tool_calls == (
        ToolCall(id="c1", name="a", arguments='{"x":1}'),
        ToolCall(id="c2", name="b", arguments="{}"),
    )


def test_aggregator_text_and_tool_calls_together() -> None:
    result = ChatResponseAggregator.aggregate(
        [
            ChatResponse(AssistantMessage(content="Let me check. ")),
            ChatResponse(
                AssistantMessage(tool_calls=[ToolCall(id="c1", name="x", arguments="{}")])
            ),
        ]
    )
    assert result.message.content == "Let me check. "
    assert len(result.message.tool_calls) == 1


def test_aggregator_of_nothing() -> None:
    result = ChatResponseAggregator.aggregate([])
    assert result.message.content is None
    assert result.message.tool_calls == ()
    assert result.finish_reason == FinishReason.STOP
    assert result.usage is None  # nothing reported: not a made-up zero


# -- Prompt ----------------------------------------------------------------------------


def test_augment_system_message_appends_to_existing() -> None:
    prompt = Prompt([SystemMessage(content="Be nice."), UserMessage(content="hi")])
    augmented = prompt.augment_system_message("Use tools.")
    assert augmented.messages == (
        SystemMessage(content="Be nice.\n\nUse tools."),
        UserMessage(content="hi"),
    )
    # the original is unchanged
    assert prompt.messages[0] == SystemMessage(content="Be nice.")
    assert augmented.options is prompt.options


def test_augment_system_message_adds_one_when_missing() -> None:
    augmented = Prompt.of("hi").augment_system_message("Use tools.")
    assert augmented.messages == (SystemMessage(content="Use tools."), UserMessage(content="hi"))


def test_augment_system_message_custom_separator_and_only_first_system() -> None:
    prompt = Prompt(
        [
            SystemMessage(content="A"),
            UserMessage(content="hi"),
            SystemMessage(content="B"),
        ]
    )
    augmented = prompt.augment_system_message("S", separator=" | ")
    assert augmented.messages[0] == SystemMessage(content="A | S")
    assert augmented.messages[2] == SystemMessage(content="B")


def test_prompt_accessors() -> None:
    options = ChatOptions(tool_callbacks=[_callback("t1")])
    prompt = Prompt(
        [
            SystemMessage(content="sys"),
            UserMessage(content="first"),
            AssistantMessage(content="answer"),
            UserMessage(content="second"),
        ],
        options,
    )
    assert prompt.system_message == SystemMessage(content="sys")
    assert prompt.user_message == UserMessage(content="second")
    assert prompt.last_user_or_tool_response_message == UserMessage(content="second")
    assert _names(prompt.tool_definitions) == ["t1"]
    assert isinstance(prompt.messages, tuple)
    assert Prompt.of("x").messages == (UserMessage(content="x"),)


# -- typed data beside tool results, deferred tools, layering ---------------------------------


def test_a_tool_result_text_carries_search_hits_onto_the_tool_response() -> None:
    from toolsearch.chat import ToolResponse, ToolResultText, ToolSearchHit

    hits = [ToolSearchHit(name="a", summary="Does a.", score=1.5), ToolSearchHit(name="b")]
    text = ToolResultText('["a", "b"]', search_hits=hits)
    assert isinstance(text, str)
    assert text == '["a", "b"]'
    response = ToolResponse.of(id="1", name="search", result=text)
    assert type(response.response_data) is str
    assert response.search_hits == tuple(hits)
    assert ToolResponse.of(id="1", name="t", result="plain").search_hits is None
    # the hits survive a memory round trip
    assert ToolResponse.model_validate_json(response.model_dump_json()) == response


def test_deferred_tools_are_a_typed_option_that_overrides_replace() -> None:
    definition = ToolDefinition(name="archive", description="Archive.", input_schema={})
    base = ChatOptions(deferred_tools=["a", definition])
    assert base.deferred_tools == ("a", definition)
    assert base.merged_with(ChatOptions()).deferred_tools == ("a", definition)
    assert base.merged_with(ChatOptions(deferred_tools=["b"])).deferred_tools == ("b",)
    assert "deferred_tools" not in base.model_settings()


def test_the_model_adapters_import_nothing_from_the_search_layer() -> None:
    """Adapters read typed data from chat types; they never import toolsearch.search
    (lazy imports inside functions included)."""
    import ast
    from pathlib import Path

    import toolsearch.models

    offenders = []
    for path in Path(toolsearch.models.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("toolsearch.search")]
    assert offenders == []
