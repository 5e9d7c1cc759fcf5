"""What only ``GeminiChatModel`` does, against the real ``google-genai`` SDK over a mocked
transport.

The behaviour every adapter shares (replies, tool calls, the tool loop in every mode, usage,
options, history, errors, credentials, streams, imports) is the provider-adapter contract in
``tests/contracts/test_provider_contract.py``. Here: the exact ``generateContent`` wire
format, thought signatures and thinking tokens, call ids made up locally (and never sent
back), how turns merge, which ``extra`` keys go into the generation config, Gemini's finish
reasons, and the failures only its SDK has (aiohttp, Vertex AI credentials, a config it
rejects). ``google-genai`` takes custom httpx clients through ``HttpOptions(httpx_client=...,
httpx_async_client=...)``; they serve the fixtures in ``tests/fixtures/providers/gemini``
(written from the documented ``generateContent`` / ``streamGenerateContent?alt=sse``
formats).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from typing import Any

import pytest

genai = pytest.importorskip(
    "google.genai", reason="the google-genai SDK (toolsearch[gemini]) is not installed"
)

from providers.fakes import GeminiEndpoint as Server  # noqa: E402

from toolsearch import (  # noqa: E402
    AssistantMessage,
    ChatClient,
    ChatOptions,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.errors import (  # noqa: E402
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
)
from toolsearch.models import GeminiChatModel  # noqa: E402
from toolsearch.models.gemini import SIGNATURES_METADATA_KEY  # noqa: E402
from toolsearch.tools import tool_callbacks  # noqa: E402

SIGNATURE = "Q2lZQmNxMnVHYnN0dGVzdHNpZ25hdHVyZQ=="

weather_calls: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    weather_calls.append(city)
    return f"sunny in {city}"


WEATHER_SCHEMA = tool_callbacks(get_weather)[0].definition.input_schema


@pytest.fixture(autouse=True)
def _reset() -> None:
    weather_calls.clear()


def _assert_tool_loop_requests(server: Server, *, stream: bool) -> None:
    first, second = server.requests
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    assert all(url.endswith(f"/models/gemini-2.5-flash:{method}") for url in server.urls)
    assert server.headers[0]["x-goog-api-key"] == "gemini-test-key"
    assert first["systemInstruction"]["parts"] == [{"text": "Answer briefly."}]
    assert first["contents"] == [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]
    (declaration,) = first["tools"][0]["functionDeclarations"]
    # the SDK sends declarations in its own field spelling; the API reads both
    schema = declaration.pop("parametersJsonSchema", None) or declaration.pop(
        "parameters_json_schema"
    )
    assert schema == WEATHER_SCHEMA  # the JSON Schema, unchanged
    assert declaration == {"name": "get_weather", "description": "Current weather for a city."}
    model_turn, results = second["contents"][1:]
    assert model_turn == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                "thoughtSignature": SIGNATURE,
            }
        ],
    }
    assert results == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "get_weather",
                    "response": {"output": "sunny in Paris"},
                }
            }
        ],
    }


@pytest.mark.parametrize(
    ("stream", "replies"),
    [
        (False, ("generate_function_call.json", "generate_final.json")),
        (True, ("stream_function_call.sse", "stream_final.sse")),
    ],
    ids=["call", "stream"],
)
def test_the_tool_loop_sends_the_generate_content_wire_format(
    stream: bool, replies: tuple[str, str]
) -> None:
    server = Server(*replies)
    spec = (
        ChatClient.create(server.model())
        .prompt("Weather in Paris?")
        .system("Answer briefly.")
        .tools(get_weather)
    )
    text = "".join(spec.stream().content()) if stream else spec.call().content()
    assert text == "It is sunny in Paris."
    _assert_tool_loop_requests(server, stream=stream)


def test_thinking_tokens_count_as_completion_tokens() -> None:
    thinking = Server("generate_function_call.json").model().call(Prompt.of("hi"))
    assert thinking.usage.completion_tokens == 75  # 15 candidates + 60 thinking tokens
    assert thinking.metadata["usage"]["thoughts_token_count"] == 60

    chunks = list(Server("stream_function_call.sse").model().stream(Prompt.of("hi")))
    assert chunks[-1].usage == thinking.usage


def test_calls_without_ids_get_local_ids_that_are_never_sent_back() -> None:
    server = Server("generate_function_call.json", "generate_final.json")
    model = server.model()
    response = model.call(Prompt.of("hi"))
    (call,) = response.message.tool_calls
    assert call.id
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "Paris"}
    assert response.message.metadata[SIGNATURES_METADATA_KEY] == {call.id: SIGNATURE}
    result = ToolResponseMessage(
        responses=(ToolResponse(id=call.id, name=call.name, response_data="sunny"),)
    )
    model.call(Prompt([UserMessage(content="hi"), response.message, result]))
    model_turn, results = server.requests[1]["contents"][1:]
    assert "id" not in model_turn["parts"][0]["functionCall"]
    assert "id" not in results["parts"][0]["functionResponse"]


def test_parallel_calls_with_ids_round_trip_in_one_turn() -> None:
    server = Server("generate_parallel_calls.json", "generate_final.json")
    text = ChatClient.create(server.model()).prompt("Paris and Rome?").tools(get_weather).call()
    assert text.content() == "It is sunny in Paris."
    assert weather_calls == ["Paris", "Rome"]
    model_turn, results = server.requests[1]["contents"][1:]
    assert [p["functionCall"]["id"] for p in model_turn["parts"]] == ["fc-paris", "fc-rome"]
    assert [p["functionResponse"]["id"] for p in results["parts"]] == ["fc-paris", "fc-rome"]
    assert results["parts"][1]["functionResponse"]["response"] == {"output": "sunny in Rome"}


def test_extra_config_fields_go_into_the_config_and_other_keys_into_the_body() -> None:
    server = Server("generate_final.json")
    model = server.model(options=ChatOptions(temperature=0.1))
    model.call(
        Prompt.of(
            "hi",
            ChatOptions(
                max_tokens=128,
                top_p=0.5,
                stop=("END",),
                extra={
                    "seed": 42,
                    "tool_config": {"function_calling_config": {"mode": "ANY"}},
                    "cachedContent": "cachedContents/abc",  # not a config field: body
                    "toolsearch.internal": 1,
                },
            ),
        )
    )
    body = server.requests[0]
    assert body["generationConfig"] == {
        "temperature": 0.1,
        "topP": 0.5,
        "maxOutputTokens": 128,
        "stopSequences": ["END"],
        "seed": 42,
    }
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert body["cachedContent"] == "cachedContents/abc"
    assert not any("toolsearch" in key for key in body)


def test_history_rendering_merges_turns_and_keeps_signatures() -> None:
    server = Server("generate_final.json")
    history = [
        SystemMessage(content="one"),
        UserMessage(content="Paris?"),
        AssistantMessage(
            content="Looking.",
            tool_calls=(ToolCall(id="x1", name="get_weather", arguments="{bad"),),
            metadata={SIGNATURES_METADATA_KEY: {"x1": SIGNATURE}},
        ),
        ToolResponseMessage(
            responses=(ToolResponse(id="x1", name="get_weather", response_data="oops"),)
        ),
        UserMessage(content="Thanks"),
    ]
    server.model().call(Prompt(history))
    contents = server.requests[0]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"][0] == {"text": "Looking."}
    assert contents[1]["parts"][1]["functionCall"]["args"] == {"arguments": "{bad"}
    assert base64.b64decode(contents[1]["parts"][1]["thoughtSignature"]) == base64.b64decode(
        SIGNATURE
    )
    assert [list(p) for p in contents[2]["parts"]] == [["functionResponse"], ["text"]]


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("SAFETY", "content_filter"),
        ("MAX_TOKENS", "length"),
        ("MALFORMED_FUNCTION_CALL", "malformed_function_call"),
    ],
)
def test_finish_reasons_use_our_vocabulary(reason: str, expected: str) -> None:
    from google.genai import types

    answer = types.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {"finish_reason": reason, "content": {"role": "model", "parts": [{"text": "x"}]}}
            ]
        }
    )
    response = GeminiChatModel("gemini-2.5-flash", api_key="k")._response(answer)
    assert response.finish_reason == expected
    assert response.metadata["provider_finish_reason"] == reason


def test_a_connection_failure_of_the_aiohttp_transport_is_a_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """google-genai's async client uses aiohttp when it is installed; its connection
    errors are ours too (a stand-in module: aiohttp is not a dependency)."""
    import types

    class ClientConnectionError(Exception):
        pass

    monkeypatch.setitem(
        sys.modules, "aiohttp", types.SimpleNamespace(ClientConnectionError=ClientConnectionError)
    )
    model = GeminiChatModel("gemini-2.5-flash", api_key="k")

    async def refused(**_: Any) -> Any:
        raise ClientConnectionError("Cannot connect to host generativelanguage.googleapis.com")

    monkeypatch.setattr(model.client.aio.models, "generate_content", refused)
    with pytest.raises(ProviderConnectionError, match="Cannot connect"):
        asyncio.run(model.acall(Prompt.of("hi")))


def test_vertex_ai_credential_failures_are_authentication_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from google.auth import exceptions

    model = GeminiChatModel("gemini-2.5-flash")

    def no_credentials(**_: Any) -> Any:
        raise exceptions.DefaultCredentialsError("Your default credentials were not found.")

    monkeypatch.setattr(model._genai, "Client", no_credentials)
    with pytest.raises(ProviderAuthenticationError, match="default credentials"):
        model.call(Prompt.of("hi"))


def test_an_option_the_generation_config_rejects_is_a_provider_error() -> None:
    model = GeminiChatModel("gemini-2.5-flash", api_key="k")
    prompt = Prompt.of("hi", ChatOptions(extra={"seed": "not a number"}))
    with pytest.raises(ProviderError, match=r"invalid generation config.*seed"):
        model.call(prompt)


def test_a_rate_limit_with_retry_info_says_how_long_to_wait(tmp_path) -> None:
    from toolsearch.errors import ProviderRateLimitError

    body = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}],
        }
    }
    (tmp_path / "error_429_retry.json").write_text(json.dumps(body))
    server = Server((429, "error_429_retry.json"))
    server.fixtures = tmp_path
    with pytest.raises(ProviderRateLimitError) as caught:
        server.model().call(Prompt.of("hi"))
    assert caught.value.retry_after == 17.0
    assert caught.value.retryable
