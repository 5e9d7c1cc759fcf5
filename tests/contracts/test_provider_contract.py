"""The provider-adapter contract, one suite over the OpenAI, Anthropic and Gemini chat models.

Every test takes ``adapter``, an :class:`Adapter` parametrized over the three: the adapter
built on its real SDK over a fake endpoint (``tests/providers/fakes.py``) that serves the
provider's fixtures and records what was sent, plus readers that turn the provider's
request body back into a neutral form (the conversation, the tools, the sampling options).
An adapter whose SDK is missing skips with the extra to install.

The contract: a text reply and a tool call come back as our ``ChatResponse`` (text, whole
tool calls, finish reasons in our vocabulary, the provider's own reason and raw usage in
the metadata); token usage means the same for every provider; the tool loop sends the
call and its result back, paired, through ``call``, ``stream``, ``acall`` and ``astream``,
async paths on the async client; history keeps its order; options and ``extra`` reach the
request (``toolsearch.`` keys never); deferred tools are sent in full by an adapter that
does not defer; HTTP failures, unreachable endpoints and missing credentials raise our typed
errors with the provider's message; an abandoned stream releases its HTTP response; the SDK
is imported only when a model is built, and a missing one names the extra.

What only one provider does (its exact wire format, OpenAI-compatible servers, Anthropic's
thinking blocks, prompt caching and ``defer_loading``, Gemini's thought signatures and
local call ids...) is tested in ``tests/providers/test_provider_<name>.py``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from providers.fakes import (
    AnthropicEndpoint,
    Endpoint,
    GeminiEndpoint,
    OpenAIEndpoint,
    OpenAIResponsesEndpoint,
)

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ChatOptions,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.chat.response import ChatResponse, Usage
from toolsearch.errors import (
    MissingExtraError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
)
from toolsearch.tools import tool_callbacks

weather_calls: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    weather_calls.append(city)
    return f"sunny in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


def _declared(function: Any) -> tuple[str, str, dict[str, Any]]:
    (callback,) = tool_callbacks(function)
    definition = callback.definition
    return definition.name, definition.description, dict(definition.input_schema)


WEATHER = _declared(get_weather)
EMAIL = _declared(send_email)
REPLY = "It is sunny in Paris."

# A conversation in neutral form: ("system" | "user" | "assistant", text),
# ("call", ref, name, arguments) and ("result", ref, text), where ``ref`` is what pairs a
# result with its call on the wire (the call id, or the tool name where the provider sent
# no id).
Item = tuple[Any, ...]
Body = dict[str, Any]


@pytest.fixture(autouse=True)
def _reset() -> None:
    weather_calls.clear()


# -- what each provider's request body says, in neutral form -----------------------------------


def _openai_conversation(body: Body) -> list[Item]:
    items: list[Item] = []
    for message in body["messages"]:
        role = message["role"]
        if role == "tool":
            items.append(("result", message["tool_call_id"], message["content"]))
            continue
        if message.get("content"):
            items.append((role, message["content"]))
        for call in message.get("tool_calls", ()):
            function = call["function"]
            arguments = json.loads(function["arguments"])
            items.append(("call", call["id"], function["name"], arguments))
    return items


def _anthropic_conversation(body: Body) -> list[Item]:
    system = body.get("system")
    if isinstance(system, list):  # with cache breakpoints: text blocks
        system = "".join(block["text"] for block in system)
    items: list[Item] = [("system", system)] if system else []
    for message in body["messages"]:
        for block in message["content"]:
            if block["type"] == "text":
                items.append((message["role"], block["text"]))
            elif block["type"] == "tool_use":
                items.append(("call", block["id"], block["name"], block["input"]))
            elif block["type"] == "tool_result":
                items.append(("result", block["tool_use_id"], block["content"]))
    return items


def _responses_conversation(body: Body) -> list[Item]:
    items: list[Item] = []
    for item in body["input"]:
        kind = item.get("type")
        if kind == "message":
            content = item["content"]
            text = content if isinstance(content, str) else "".join(p["text"] for p in content)
            items.append((item["role"], text))
        elif kind == "function_call":
            items.append(("call", item["call_id"], item["name"], json.loads(item["arguments"])))
        elif kind == "function_call_output":
            items.append(("result", item["call_id"], item["output"]))
    return items


def _responses_tools(body: Body) -> list[Item]:
    return [
        (t["name"], t.get("description"), t["parameters"])
        for t in body.get("tools", ())
        if t["type"] == "function"
    ]


def _responses_no_key() -> Any:
    from toolsearch.models import OpenAIResponsesChatModel

    return OpenAIResponsesChatModel("gpt-5.4-mini")  # the SDK refuses while building its client


def _gemini_conversation(body: Body) -> list[Item]:
    items: list[Item] = []
    if "systemInstruction" in body:
        items.append(("system", "".join(p["text"] for p in body["systemInstruction"]["parts"])))
    for content in body["contents"]:
        role = "assistant" if content["role"] == "model" else content["role"]
        for part in content["parts"]:
            if "text" in part:
                items.append((role, part["text"]))
            elif "functionCall" in part:
                call = part["functionCall"]
                ref = call.get("id", call["name"])
                items.append(("call", ref, call["name"], call.get("args", {})))
            elif "functionResponse" in part:
                result = part["functionResponse"]
                ref = result.get("id", result["name"])
                items.append(("result", ref, result["response"]["output"]))
    return items


def _openai_tools(body: Body) -> list[Item]:
    return [
        (t["function"]["name"], t["function"].get("description"), t["function"]["parameters"])
        for t in body.get("tools", ())
    ]


def _anthropic_tools(body: Body) -> list[Item]:
    return [(t["name"], t.get("description"), t["input_schema"]) for t in body.get("tools", ())]


def _gemini_tools(body: Body) -> list[Item]:
    declarations = [d for t in body.get("tools", ()) for d in t["functionDeclarations"]]
    # the SDK sends the schema in its own field spelling; the API reads both
    return [
        (
            d["name"],
            d.get("description"),
            d.get("parametersJsonSchema", d.get("parameters_json_schema")),
        )
        for d in declarations
    ]


def _sampling(body: Body, names: dict[str, str]) -> dict[str, Any]:
    return {ours: body.get(theirs) for ours, theirs in names.items()}


# -- the adapters --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorCase:
    status: int
    fixture: str
    error: type[ProviderError]
    retryable: bool

    def __str__(self) -> str:
        return f"{self.status}-{self.error.__name__}"


AUTH = (ProviderAuthenticationError, False)
RATE = (ProviderRateLimitError, True)
SERVER = (ProviderError, True)  # 5xx: retryable, even after the SDK's own retries


@dataclass(frozen=True)
class Adapter:
    """One adapter and what its fixtures and wire format say."""

    name: str
    endpoint: type[Endpoint]
    class_name: str
    package: str  # the distribution a missing SDK names
    final: str  # fixtures: a text reply, a tool call, and both streamed
    tool_call: str
    stream_final: str
    stream_tool_call: str
    reply_model: str  # what the fixtures report
    reply_id: str
    stop_reason: str
    tool_call_reason: str
    call_ref: str  # pairs the fixture's call with its result on the wire
    call_id: str | None  # None: the provider sent no id, the adapter made one up
    call_text: str | None
    usage: Usage
    raw_cached: Callable[[dict[str, Any]], int]  # the cache reads in metadata["usage"]
    errors: tuple[ErrorCase, ...]
    conversation: Callable[[Body], list[Item]]
    tools: Callable[[Body], list[Item]]
    sampling: Callable[[Body], dict[str, Any]]
    native_extra: dict[str, Any]  # provider parameters toolsearch has no option for
    read_native: Callable[[Body], dict[str, Any]]
    streamed: Callable[[str, Body], bool]  # (url, body): was this a streaming request?
    model_sent: Callable[[str, Body], str]
    credentials: tuple[str, ...]  # environment variables the SDK reads a key from
    no_key_model: Callable[[], Any]  # a model with no key configured (sends nothing)
    no_key_message: str
    separate_async_client: bool
    rule: str  # the wire-name rule in toolsearch.models.wire_names
    wire_weather: str  # the wire name of WEIRD_WEATHER
    stop: bool = True  # the API takes stop sequences (the Responses API does not)
    strict: bool = False  # the endpoint refuses what the real API refuses (unknown fields...)

    @property
    def sdk(self) -> str:
        return self.endpoint.sdk

    @property
    def extra(self) -> str:
        return self.endpoint.extra

    def __str__(self) -> str:
        return self.name


def _openai_no_key() -> Any:
    from toolsearch.models import OpenAIChatModel

    return OpenAIChatModel("gpt-4o-mini")  # the SDK refuses while building its client


def _anthropic_no_key() -> Any:
    from toolsearch.models import AnthropicChatModel

    # the SDK refuses before sending; a port nothing listens on, should it not
    return AnthropicChatModel("claude-sonnet-4-6", base_url="http://127.0.0.1:9")


def _gemini_no_key() -> Any:
    from toolsearch.models import GeminiChatModel

    return GeminiChatModel("gemini-2.5-flash")  # the SDK refuses while building its client


OPENAI = Adapter(
    name="openai",
    endpoint=OpenAIEndpoint,
    class_name="OpenAIChatModel",
    package="openai",
    final="completion_final.json",
    tool_call="completion_tool_call.json",
    stream_final="stream_final.sse",
    stream_tool_call="stream_tool_call.sse",  # the argument JSON split over four deltas
    reply_model="gpt-4o-mini-2024-07-18",
    reply_id="chatcmpl-D4e5F6",
    stop_reason="stop",
    tool_call_reason="tool_calls",
    call_ref="call_weather_1",
    call_id="call_weather_1",
    call_text=None,
    usage=Usage(prompt_tokens=2110, completion_tokens=8, cached_tokens=1920),
    raw_cached=lambda raw: raw["prompt_tokens_details"]["cached_tokens"],
    errors=(
        ErrorCase(401, "error_401.json", *AUTH),
        ErrorCase(429, "error_429.json", *RATE),
        ErrorCase(500, "error_500.json", *SERVER),
    ),
    conversation=_openai_conversation,
    tools=_openai_tools,
    # the fake endpoint is a compatible server: the answer budget goes as ``max_tokens``
    sampling=lambda body: _sampling(
        body,
        {
            "temperature": "temperature",
            "top_p": "top_p",
            "max_tokens": "max_tokens",
            "stop": "stop",
        },
    ),
    native_extra={"seed": 7, "parallel_tool_calls": False},
    read_native=lambda body: {
        "seed": body.get("seed"),
        "parallel_tool_calls": body.get("parallel_tool_calls"),
    },
    streamed=lambda url, body: body.get("stream", False) is True,
    model_sent=lambda url, body: body["model"],
    credentials=("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_BASE_URL"),
    no_key_model=_openai_no_key,
    no_key_message="OPENAI_API_KEY",
    separate_async_client=True,
    rule="OPENAI_NAMES",
    wire_weather="weather_get_now",
)

ANTHROPIC = Adapter(
    name="anthropic",
    endpoint=AnthropicEndpoint,
    class_name="AnthropicChatModel",
    package="anthropic",
    final="message_final.json",
    tool_call="message_tool_use.json",
    stream_final="stream_final.sse",
    stream_tool_call="stream_tool_use.sse",  # text, then input_json deltas
    reply_model="claude-sonnet-4-6",
    reply_id="msg_01B5xKe7GbmPvY2b",
    stop_reason="end_turn",
    tool_call_reason="tool_use",
    call_ref="toolu_01A09q90qw90lq917835lq9",
    call_id="toolu_01A09q90qw90lq917835lq9",
    call_text="I'll check the weather in Paris.",
    # input_tokens (24) excludes the cache: prompt = 24 + 1800 read + 120 written
    usage=Usage(prompt_tokens=1944, completion_tokens=9, cached_tokens=1800),
    raw_cached=lambda raw: raw["cache_read_input_tokens"],
    errors=(
        ErrorCase(401, "error_401.json", *AUTH),
        ErrorCase(429, "error_429.json", *RATE),
        ErrorCase(500, "error_500.json", *SERVER),
        ErrorCase(529, "error_529.json", *SERVER),  # overloaded
    ),
    conversation=_anthropic_conversation,
    tools=_anthropic_tools,
    sampling=lambda body: _sampling(
        body,
        {
            "temperature": "temperature",
            "top_p": "top_p",
            "max_tokens": "max_tokens",
            "stop": "stop_sequences",
        },
    ),
    native_extra={"top_k": 5, "tool_choice": {"type": "auto"}, "service_tier": "auto"},
    read_native=lambda body: {k: body.get(k) for k in ("top_k", "tool_choice", "service_tier")},
    streamed=lambda url, body: body.get("stream", False) is True,
    model_sent=lambda url, body: body["model"],
    credentials=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    no_key_model=_anthropic_no_key,
    no_key_message="authentication method",
    separate_async_client=True,
    rule="ANTHROPIC_NAMES",
    wire_weather="weather_get_now",
)

GEMINI = Adapter(
    name="gemini",
    endpoint=GeminiEndpoint,
    class_name="GeminiChatModel",
    package="google-genai",
    final="generate_final.json",
    tool_call="generate_function_call.json",
    stream_final="stream_final.sse",
    stream_tool_call="stream_function_call.sse",
    reply_model="gemini-2.5-flash",
    reply_id="qRsTuVwXyZaBcDeF",
    stop_reason="STOP",
    tool_call_reason="STOP",  # Gemini says STOP when it asks for a tool
    call_ref="get_weather",  # the call came without an id: the name pairs them
    call_id=None,
    call_text=None,
    usage=Usage(prompt_tokens=2110, completion_tokens=8, cached_tokens=1536),
    raw_cached=lambda raw: raw["cached_content_token_count"],
    errors=(
        ErrorCase(400, "error_400_api_key.json", *AUTH),  # a bad key: 400 API_KEY_INVALID
        ErrorCase(403, "error_403.json", *AUTH),
        ErrorCase(429, "error_429.json", *RATE),
        ErrorCase(500, "error_500.json", *SERVER),
    ),
    conversation=_gemini_conversation,
    tools=_gemini_tools,
    sampling=lambda body: _sampling(
        body.get("generationConfig", {}),
        {
            "temperature": "temperature",
            "top_p": "topP",
            "max_tokens": "maxOutputTokens",
            "stop": "stopSequences",
        },
    ),
    native_extra={"seed": 42, "tool_config": {"function_calling_config": {"mode": "ANY"}}},
    read_native=lambda body: {
        "seed": body["generationConfig"].get("seed"),
        "tool_config": {
            "function_calling_config": body.get("toolConfig", {}).get("functionCallingConfig")
        },
    },
    streamed=lambda url, body: url.endswith(":streamGenerateContent?alt=sse"),
    model_sent=lambda url, body: url.rsplit("/models/", 1)[1].split(":")[0],
    credentials=(
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ),
    no_key_model=_gemini_no_key,
    no_key_message="API key",
    separate_async_client=False,  # one client; its ``.aio`` serves async calls
    rule="GEMINI_NAMES",
    wire_weather="weather.get_now",  # Gemini takes dots, not slashes
)

RESPONSES = Adapter(
    name="openai-responses",
    endpoint=OpenAIResponsesEndpoint,
    class_name="OpenAIResponsesChatModel",
    package="openai",
    final="response_final.json",
    tool_call="response_tool_call.json",
    stream_final="stream_final.sse",
    stream_tool_call="stream_tool_call.sse",  # the argument JSON split over three deltas
    reply_model="gpt-5.4-mini-2026-03-17",
    reply_id="resp_final_1",
    stop_reason="completed",
    tool_call_reason="completed",
    call_ref="call_weather_1",
    call_id="call_weather_1",
    call_text=None,
    usage=Usage(prompt_tokens=2110, completion_tokens=8, cached_tokens=1920),
    raw_cached=lambda raw: raw["input_tokens_details"]["cached_tokens"],
    errors=(
        ErrorCase(401, "error_401.json", *AUTH),
        ErrorCase(429, "error_429.json", *RATE),
        ErrorCase(500, "error_500.json", *SERVER),
    ),
    conversation=_responses_conversation,
    tools=_responses_tools,
    sampling=lambda body: _sampling(
        body,
        {"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_output_tokens"},
    ),
    native_extra={"parallel_tool_calls": False, "truncation": "auto"},
    read_native=lambda body: {
        "parallel_tool_calls": body.get("parallel_tool_calls"),
        "truncation": body.get("truncation"),
    },
    streamed=lambda url, body: body.get("stream", False) is True,
    model_sent=lambda url, body: body["model"],
    credentials=("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_BASE_URL"),
    no_key_model=_responses_no_key,
    no_key_message="OPENAI_API_KEY",
    separate_async_client=True,
    rule="OPENAI_NAMES",
    wire_weather="weather_get_now",
    stop=False,
    strict=True,
)

ADAPTERS = {adapter.name: adapter for adapter in (OPENAI, ANTHROPIC, GEMINI, RESPONSES)}


@pytest.fixture(params=list(ADAPTERS))
def adapter(request: pytest.FixtureRequest) -> Adapter:
    found = ADAPTERS[request.param]
    pytest.importorskip(
        found.sdk, reason=f"the {found.sdk} SDK (toolsearch[{found.extra}]) is not installed"
    )
    return found


def _error_cases() -> list[Any]:
    return [
        pytest.param(name, case, id=f"{name}-{case}")
        for name, found in ADAPTERS.items()
        for case in found.errors
    ]


MODES = ["call", "stream", "acall", "astream"]


def run(model: Any, prompt: Prompt, mode: str) -> list[ChatResponse]:
    """What the model answers through ``mode``: the one response, or every stream chunk."""
    if mode == "call":
        return [model.call(prompt)]
    if mode == "stream":
        return list(model.stream(prompt))

    async def answer() -> list[ChatResponse]:
        if mode == "acall":
            return [await model.acall(prompt)]
        return [chunk async for chunk in model.astream(prompt)]

    return asyncio.run(answer())


def texts(chunks: list[ChatResponse]) -> list[str]:
    return [chunk.message.content for chunk in chunks if chunk.message.content]


def assert_paris_call(call: ToolCall, adapter: Adapter) -> None:
    """``call`` is the fixtures' ``get_weather(city="Paris")``, with the provider's id (or
    one made up locally when the provider sent none)."""
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "Paris"}
    assert call.id
    if adapter.call_id is not None:
        assert call.id == adapter.call_id


# -- answers -----------------------------------------------------------------------------------


def answer(spec: Any, mode: str) -> str:
    """The answer text of a prompt spec run blocking, streaming, async or async-streaming."""
    if mode == "call":
        return str(spec.call().content())
    if mode == "stream":
        return "".join(spec.stream().content())
    if mode == "acall":
        return str(asyncio.run(spec.acall()).content())

    async def streamed() -> str:
        return "".join([piece async for piece in spec.astream().content()])

    return asyncio.run(streamed())


def test_a_text_reply_is_our_response_with_the_providers_reason_kept(adapter: Adapter) -> None:
    response = adapter.endpoint(adapter.final).model().call(Prompt.of("hi"))
    assert response.text == REPLY
    assert response.message.tool_calls == ()
    assert response.finish_reason == "stop"
    assert response.metadata["provider"] == adapter.name
    assert response.metadata["model"] == adapter.reply_model
    assert response.metadata["id"] == adapter.reply_id
    assert response.metadata["provider_finish_reason"] == adapter.stop_reason


def test_a_streamed_reply_hands_on_text_as_it_arrives(adapter: Adapter) -> None:
    chunks = list(adapter.endpoint(adapter.stream_final).model().stream(Prompt.of("hi")))
    assert texts(chunks) == ["It is sunny", " in Paris."]
    last = chunks[-1]
    assert last.finish_reason == "stop"
    assert last.metadata["provider"] == adapter.name
    assert last.metadata["model"] == adapter.reply_model
    assert last.metadata["provider_finish_reason"] == adapter.stop_reason


def test_a_tool_call_is_parsed_and_finishes_as_tool_calls(adapter: Adapter) -> None:
    response = adapter.endpoint(adapter.tool_call).model().call(Prompt.of("hi"))
    (call,) = response.message.tool_calls
    assert_paris_call(call, adapter)
    assert response.message.content == adapter.call_text
    assert response.finish_reason == "tool_calls"
    assert response.metadata["provider_finish_reason"] == adapter.tool_call_reason


def test_a_streamed_tool_call_is_handed_on_whole_once(adapter: Adapter) -> None:
    chunks = list(adapter.endpoint(adapter.stream_tool_call).model().stream(Prompt.of("hi")))
    with_calls = [chunk.message.tool_calls for chunk in chunks if chunk.message.tool_calls]
    assert len(with_calls) == 1  # the deltas were joined: one chunk carries the call
    (call,) = with_calls[0]
    assert_paris_call(call, adapter)
    assert "".join(texts(chunks)) == (adapter.call_text or "")
    assert chunks[-1].finish_reason == "tool_calls"


def test_usage_counts_prompt_completion_and_cached_tokens_alike(adapter: Adapter) -> None:
    response = adapter.endpoint(adapter.final).model().call(Prompt.of("hi"))
    usage = response.usage
    assert usage == adapter.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    # the provider's own counts stay in the metadata
    assert adapter.raw_cached(response.metadata["usage"]) == adapter.usage.cached_tokens

    chunks = list(adapter.endpoint(adapter.stream_final).model().stream(Prompt.of("hi")))
    assert chunks[-1].usage == adapter.usage  # the last chunk carries the whole count


# -- the tool loop -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_the_tool_loop_sends_the_call_and_its_result_back(adapter: Adapter, mode: str) -> None:
    streaming = mode.endswith("stream")
    if streaming:
        server = adapter.endpoint(adapter.stream_tool_call, adapter.stream_final)
    else:
        server = adapter.endpoint(adapter.tool_call, adapter.final)
    spec = (
        ChatClient.create(server.model())
        .prompt("Weather in Paris?")
        .system("Answer briefly.")
        .tools(get_weather)
    )
    if mode == "call":
        response = spec.call().chat_response()
        assert response is not None
        assert response.finish_reason == "stop"
        text = response.text
    else:
        text = answer(spec, mode)

    assert text == REPLY
    assert weather_calls == ["Paris"]  # the arguments the provider sent, parsed whole
    first, second = server.requests
    asked = [("system", "Answer briefly."), ("user", "Weather in Paris?")]
    assert adapter.conversation(first) == asked
    assert adapter.tools(first) == [WEATHER]  # the JSON Schema unchanged
    said = [("assistant", adapter.call_text)] if adapter.call_text else []
    assert adapter.conversation(second) == [
        *asked,
        *said,
        ("call", adapter.call_ref, "get_weather", {"city": "Paris"}),
        ("result", adapter.call_ref, "sunny in Paris"),
    ]
    assert adapter.tools(second) == [WEATHER]
    sent = zip(server.urls, server.requests, strict=True)
    assert [adapter.streamed(url, body) for url, body in sent] == [streaming, streaming]
    side = "async" if mode.startswith("a") else "sync"
    assert server.sides == [side, side]  # async paths on the async client, sync on the sync


@pytest.mark.parametrize(
    "adapter",
    [name for name, found in ADAPTERS.items() if found.separate_async_client],
    indirect=True,
)
def test_a_model_given_only_a_sync_client_serves_async_calls_from_it(adapter: Adapter) -> None:
    server = adapter.endpoint(adapter.final, adapter.stream_final)
    model = server.model(sync_only=True)
    assert run(model, Prompt.of("hi"), "acall")[0].text == REPLY
    assert "".join(texts(run(model, Prompt.of("hi"), "astream"))) == REPLY
    assert server.sides == ["sync", "sync"]  # in a worker thread; no async client was made


def test_history_keeps_its_order_and_pairs_each_result_with_its_call(adapter: Adapter) -> None:
    server = adapter.endpoint(adapter.final)
    history = [
        SystemMessage(content="Answer briefly."),
        UserMessage(content="Paris and Rome?"),
        AssistantMessage(
            content="Checking both.",
            tool_calls=(
                ToolCall(id="a", name="get_weather", arguments='{"city":"Paris"}'),
                ToolCall(id="b", name="get_weather", arguments='{"city":"Rome"}'),
            ),
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="a", name="get_weather", response_data="sunny"),
                ToolResponse(id="b", name="get_weather", response_data="rain"),
            )
        ),
        UserMessage(content="And tomorrow?"),
    ]
    server.model().call(Prompt(history))
    assert adapter.conversation(server.requests[0]) == [
        ("system", "Answer briefly."),
        ("user", "Paris and Rome?"),
        ("assistant", "Checking both."),
        ("call", "a", "get_weather", {"city": "Paris"}),
        ("call", "b", "get_weather", {"city": "Rome"}),
        ("result", "a", "sunny"),
        ("result", "b", "rain"),
        ("user", "And tomorrow?"),
    ]


# -- tool names the provider refuses -------------------------------------------------------------

WEIRD_NAME = "weather.get/now"  # a dot and a slash, as MCP servers name tools
weird_calls: list[str] = []


@tool(name=WEIRD_NAME)
def weird_weather(city: str) -> str:
    """Current weather for a city."""
    weird_calls.append(city)
    return f"sunny in {city}"


def _renamed_fixtures(adapter: Adapter, server: Endpoint, tmp_path: Any) -> None:
    """Serve the adapter's fixtures with the model calling the tool by its wire name."""
    for source in server.fixtures.iterdir():
        text = source.read_text().replace('"get_weather"', json.dumps(adapter.wire_weather))
        (tmp_path / source.name).write_text(text)
    server.fixtures = tmp_path


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_name_the_provider_refuses_goes_under_a_wire_name_and_comes_back(
    adapter: Adapter, mode: str, tmp_path: Any
) -> None:
    weird_calls.clear()
    streaming = mode.endswith("stream")
    if streaming:
        server = adapter.endpoint(adapter.stream_tool_call, adapter.stream_final)
    else:
        server = adapter.endpoint(adapter.tool_call, adapter.final)
    _renamed_fixtures(adapter, server, tmp_path)
    spec = ChatClient.create(server.model()).prompt("Weather in Paris?").tools(weird_weather)
    text = answer(spec, mode)
    assert text == REPLY
    assert weird_calls == ["Paris"]  # the model's call, mapped back, reached the tool
    first, second = server.requests
    wire = adapter.wire_weather
    assert [name for name, _, _ in adapter.tools(first)] == [wire]
    assert [name for name, _, _ in adapter.tools(second)] == [wire]
    ref = wire if adapter.call_id is None else adapter.call_ref
    # the history goes back under the wire name: calls and (Gemini: by name) results
    assert adapter.conversation(second)[-2:] == [
        ("call", ref, wire, {"city": "Paris"}),
        ("result", ref, "sunny in Paris"),
    ]
    assert WEIRD_NAME not in json.dumps(second)


@pytest.mark.parametrize("mode", MODES)
def test_the_models_call_carries_the_tools_own_name(
    adapter: Adapter, mode: str, tmp_path: Any
) -> None:
    reply = adapter.stream_tool_call if mode.endswith("stream") else adapter.tool_call
    server = adapter.endpoint(reply)
    _renamed_fixtures(adapter, server, tmp_path)
    prompt = Prompt.of("hi", ChatOptions(tool_callbacks=tool_callbacks(weird_weather)))
    chunks = run(server.model(), prompt, mode)
    calls = [call for chunk in chunks for call in chunk.message.tool_calls]
    assert [call.name for call in calls] == [WEIRD_NAME]


def test_two_names_that_map_to_one_wire_name_get_distinct_wire_names(adapter: Adapter) -> None:
    from toolsearch.models import wire_names

    rule = getattr(wire_names, adapter.rule)
    server = adapter.endpoint(adapter.final)
    tools = [
        ToolDefinition(name=name, description=f"Tool {name}.", input_schema={"type": "object"})
        for name in ("files/read", "files_read", "files\\read", "x" * 70, "météo")
    ]
    callbacks = [ToolCallbackStub(definition) for definition in tools]
    server.model().call(Prompt.of("hi", ChatOptions(tool_callbacks=callbacks)))
    sent = [name for name, _, _ in adapter.tools(server.requests[0])]
    assert len(set(sent)) == len(sent) == 5
    assert all(rule.accepts(name) for name in sent)
    assert sent[1] == "files_read"  # a name the provider takes is kept
    assert sent[4] == "meteo"
    assert len(sent[3]) == 64
    again = adapter.endpoint(adapter.final)
    again.model().call(Prompt.of("hi", ChatOptions(tool_callbacks=callbacks[::-1])))
    assert [name for name, _, _ in adapter.tools(again.requests[0])] == sent[::-1]  # stable


class ToolCallbackStub:
    def __init__(self, definition: ToolDefinition) -> None:
        self.definition = definition

    @property
    def metadata(self) -> Any:
        from toolsearch.tools.definition import ToolMetadata

        return ToolMetadata()

    def call(self, input_json: str, context: Any = None) -> str:
        return "ok"

    async def acall(self, input_json: str, context: Any = None) -> str:
        return "ok"


# -- options -------------------------------------------------------------------------------------


def test_options_and_extra_reach_the_request(adapter: Adapter) -> None:
    server = adapter.endpoint(adapter.final)
    defaults = ChatOptions(temperature=0.2, max_tokens=1000, extra=adapter.native_extra)
    model = server.model(options=defaults)
    options = ChatOptions(
        max_tokens=64,  # the request's options win over the model's defaults
        top_p=0.9,
        stop=("END",) if adapter.stop else (),
        extra={
            "brand_new_field": {"on": True},  # unknown to the SDK: sent in the body as is
            "toolsearch.internal": "never sent",
        },
    )
    try:
        model.call(Prompt.of("hi", options))
    except ProviderError:  # a strict endpoint refuses the unknown field, as the API would
        assert adapter.strict
        assert "brand_new_field" in server.refused[0][0]
    body = server.requests[0]
    expected = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 64}
    assert adapter.sampling(body) == {**expected, **({"stop": ["END"]} if adapter.stop else {})}
    assert adapter.read_native(body) == adapter.native_extra
    assert body["brand_new_field"] == {"on": True}
    sent = json.dumps(body)
    assert "toolsearch" not in sent
    assert "never sent" not in sent


def test_the_requests_model_overrides_the_adapters(adapter: Adapter) -> None:
    server = adapter.endpoint(adapter.final, adapter.final)
    model = server.model()
    model.call(Prompt.of("hi"))
    model.call(Prompt.of("hi", ChatOptions(model="another-model")))
    sent = [adapter.model_sent(u, b) for u, b in zip(server.urls, server.requests, strict=True)]
    assert sent == [adapter.endpoint.model_name, "another-model"]


def test_deferred_tools_are_sent_in_full_by_an_adapter_that_does_not_defer(
    adapter: Adapter,
) -> None:
    """Every adapter but Anthropic's never defers; Anthropic's does not with
    ``tool_search="none"`` (its default defers: ``tests/providers``)."""
    server = adapter.endpoint(adapter.final)
    settings = {"tool_search": "none"} if adapter.name == "anthropic" else {}
    archive = ToolDefinition(
        name="archive", description="Archive a ticket.", input_schema={"type": "object"}
    )
    options = ChatOptions(
        tool_callbacks=tool_callbacks([get_weather, send_email]),
        deferred_tools=["send_email", archive, "not_registered"],
    )
    server.model(**settings).call(Prompt.of("hi", options))
    body = server.requests[0]
    assert adapter.tools(body) == [WEATHER, EMAIL]  # a catalog-only tool is not sent
    assert "defer_loading" not in json.dumps(body)
    assert not any(key.startswith("toolsearch") for key in body)


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("adapter", "case"), _error_cases(), indirect=["adapter"])
def test_http_errors_become_our_types_with_the_providers_message(
    adapter: Adapter, case: ErrorCase, mode: str
) -> None:
    server = adapter.endpoint((case.status, case.fixture))
    expected = json.loads((server.fixtures / case.fixture).read_text())["error"]["message"]
    with pytest.raises(ProviderError) as caught:
        run(server.model(), Prompt.of("hi"), mode)
    error = caught.value
    assert type(error) is case.error
    assert error.status_code == case.status
    assert error.provider == adapter.name
    assert error.provider_message == expected
    assert expected in str(error)
    assert error.retryable is case.retryable


@pytest.mark.parametrize(
    ("header", "value", "seconds"),
    [("retry-after", "7", 7.0), ("retry-after-ms", "1500", 1.5)],
)
def test_a_rate_limit_says_how_long_to_wait(
    adapter: Adapter, header: str, value: str, seconds: float
) -> None:
    (case,) = [c for c in adapter.errors if c.status == 429]
    server = adapter.endpoint((429, case.fixture))
    server.reply_headers = {header: value}
    with pytest.raises(ProviderRateLimitError) as caught:
        server.model().call(Prompt.of("hi"))
    assert caught.value.retry_after == pytest.approx(seconds)
    assert caught.value.retryable


def test_an_error_without_retry_after_says_none(adapter: Adapter) -> None:
    (case,) = [c for c in adapter.errors if c.status == 429]
    server = adapter.endpoint((429, case.fixture))
    with pytest.raises(ProviderRateLimitError) as caught:
        server.model().call(Prompt.of("hi"))
    assert caught.value.retry_after is None


_USAGE_KEYS = ("usage", "usageMetadata")


def _without_usage(server: Endpoint, tmp_path: Any, *names: str) -> None:
    """Serve the fixtures ``names`` with their usage removed (a server that reports none)."""
    for source in server.fixtures.iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    for name in names:
        body = json.loads((server.fixtures / name).read_text())
        for key in _USAGE_KEYS:
            body.pop(key, None)
        (tmp_path / name).write_text(json.dumps(body))
    server.fixtures = tmp_path


def test_an_answer_without_usage_has_usage_none_and_the_loop_counts_it(
    adapter: Adapter, tmp_path: Any
) -> None:
    from toolsearch.loop.tool_calling_advisor import (
        CALLS_WITHOUT_USAGE_KEY,
        LOOP_USAGE_KEY,
        MODEL_CALLS_KEY,
    )

    server = adapter.endpoint(adapter.final)
    _without_usage(server, tmp_path, adapter.final)
    assert server.model().call(Prompt.of("hi")).usage is None  # not Usage(0, 0, 0)

    server = adapter.endpoint(adapter.tool_call, adapter.final)
    _without_usage(server, tmp_path, adapter.tool_call)
    response = (
        ChatClient.create(server.model()).prompt("Weather?").tools(get_weather).call()
    ).chat_response()
    assert response is not None
    assert response.metadata[MODEL_CALLS_KEY] == 2
    assert response.metadata[CALLS_WITHOUT_USAGE_KEY] == 1
    assert response.metadata[LOOP_USAGE_KEY] == adapter.usage  # the one call that reported


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("failure", ["ConnectError", "ConnectTimeout"])
def test_an_unreachable_endpoint_is_a_retryable_connection_error(
    adapter: Adapter, failure: str, mode: str
) -> None:
    server = adapter.endpoint()
    server.replies.append(getattr(server.http, failure)("connection refused or timed out"))
    with pytest.raises(ProviderConnectionError) as caught:
        run(server.model(), Prompt.of("hi"), mode)
    assert caught.value.provider == adapter.name
    assert caught.value.retryable
    assert caught.value.status_code is None


@pytest.mark.parametrize("mode", MODES)
def test_no_credentials_is_an_authentication_error_on_first_use(
    adapter: Adapter, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in adapter.credentials:
        monkeypatch.delenv(variable, raising=False)
    model = adapter.no_key_model()  # builds fine: the SDK client is made on first use
    with pytest.raises(ProviderAuthenticationError, match=adapter.no_key_message) as caught:
        run(model, Prompt([UserMessage(content="Hi")]), mode)
    assert caught.value.provider == adapter.name
    assert not caught.value.retryable


# -- resources and imports -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_abandoned_early_releases_its_http_response(adapter: Adapter, mode: str) -> None:
    server = adapter.endpoint(adapter.stream_final)
    model = server.model()
    prompt = Prompt([UserMessage(content="Weather?")])
    if mode == "stream":
        pieces = model.stream(prompt)
        first = next(pieces)
        assert not server.bodies[0].closed
        kept = pieces  # the caller still holds the generator: only close() may release it
        kept.close()
    else:

        async def read_one() -> ChatResponse:
            chunks = model.astream(prompt)
            piece = await anext(chunks)
            assert not server.bodies[0].closed
            await chunks.aclose()
            return piece

        first = asyncio.run(read_one())
    assert first.message.content == "It is sunny"
    assert server.bodies[0].closed


def test_importing_the_adapter_imports_no_provider_sdk(adapter: Adapter) -> None:
    code = (
        "import sys\n"
        f"from toolsearch.models import {adapter.class_name}\n"
        "print(sorted(k for k in ('openai', 'anthropic', 'google.genai') if k in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_missing_sdk_names_the_extra_to_install(
    adapter: Adapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolsearch.models

    model_class = getattr(toolsearch.models, adapter.class_name)
    monkeypatch.setitem(sys.modules, adapter.sdk, None)
    with pytest.raises(MissingExtraError) as caught:
        model_class("some-model", api_key="k")
    assert caught.value.extra == adapter.extra
    assert caught.value.package == adapter.package
    assert f"toolsearch[{adapter.extra}]" in str(caught.value)
