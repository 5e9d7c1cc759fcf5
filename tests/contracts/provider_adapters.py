"""The four toolsearch adapters as ``toolsearch.testing.AdapterSpec``: what each one's
fixtures (``tests/fixtures/providers/<provider>``) and wire format say, and readers that
turn the provider's request body back into a neutral form (the conversation, the tools,
the sampling options). Used by ``test_provider_contract.py``.
"""

from __future__ import annotations

import json
from typing import Any

from providers.fakes import (
    AnthropicEndpoint,
    GeminiEndpoint,
    OpenAIEndpoint,
    OpenAIResponsesEndpoint,
)

from toolsearch.chat.response import Usage
from toolsearch.testing import AUTH, RATE, SERVER, AdapterSpec, Body, ErrorCase, Item

SDKS = ("openai", "anthropic", "google.genai")
"""Importing any adapter loads none of these."""

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


# -- the adapters ------------------------------------------------------------------------------


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


OPENAI = AdapterSpec(
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
    unimported=SDKS,
)

ANTHROPIC = AdapterSpec(
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
    unimported=SDKS,
    # its default defers tools (tests/providers): not with tool_search="none"
    no_defer_settings={"tool_search": "none"},
)

GEMINI = AdapterSpec(
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
    unimported=SDKS,
)

RESPONSES = AdapterSpec(
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
    unimported=SDKS,
    stop=False,
    strict=True,
)
