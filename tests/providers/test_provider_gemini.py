"""``GeminiChatModel`` against the real ``google-genai`` SDK over a mocked HTTP transport.

``google-genai`` takes custom httpx clients through ``HttpOptions(httpx_client=...,
httpx_async_client=...)``; the tests hand it clients whose transport serves the fixtures
in ``tests/fixtures/providers/gemini`` (written from the documented ``generateContent`` /
``streamGenerateContent?alt=sse`` formats) and record every request.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

genai = pytest.importorskip(
    "google.genai", reason="the google-genai SDK (toolsearch[gemini]) is not installed"
)
try:  # google-genai takes an httpx2 or an httpx client
    import httpx2
except ImportError:  # pragma: no cover - older SDK stacks
    import httpx as httpx2  # type: ignore[no-redef]

from provider_server import FixtureServer  # noqa: E402

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
    MissingExtraError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
)
from toolsearch.models import GeminiChatModel  # noqa: E402
from toolsearch.models.gemini import SIGNATURES_METADATA_KEY  # noqa: E402
from toolsearch.tools import tool_callbacks  # noqa: E402

FIXTURES = Path(__file__).parents[1] / "fixtures" / "providers" / "gemini"
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


class Server(FixtureServer):
    fixtures = FIXTURES
    http = httpx2

    def model(self, **kwargs: Any) -> GeminiChatModel:
        client = genai.Client(
            api_key="gemini-test-key",
            http_options=genai.types.HttpOptions(
                httpx_client=httpx2.Client(transport=httpx2.MockTransport(self)),
                httpx_async_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self)),
            ),
        )
        return GeminiChatModel("gemini-2.5-flash", client=client, **kwargs)


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


def test_tool_loop_call_through_chat_client() -> None:
    server = Server("generate_function_call.json", "generate_final.json")
    response = (
        ChatClient.create(server.model())
        .prompt("Weather in Paris?")
        .system("Answer briefly.")
        .tools(get_weather)
        .call()
        .chat_response()
    )
    assert response is not None
    assert response.text == "It is sunny in Paris."
    assert response.finish_reason == "stop"
    assert weather_calls == ["Paris"]
    _assert_tool_loop_requests(server, stream=False)


def test_tool_loop_stream_through_chat_client() -> None:
    server = Server("stream_function_call.sse", "stream_final.sse")
    chunks = list(
        ChatClient.create(server.model())
        .prompt("Weather in Paris?")
        .system("Answer briefly.")
        .tools(get_weather)
        .stream()
        .content()
    )
    assert "".join(chunks) == "It is sunny in Paris."
    assert weather_calls == ["Paris"]
    _assert_tool_loop_requests(server, stream=True)


def test_async_call_and_stream_use_the_async_client() -> None:
    server = Server(
        "generate_function_call.json",
        "generate_final.json",
        "stream_function_call.sse",
        "stream_final.sse",
    )
    model = server.model()

    async def run() -> tuple[str | None, str]:
        client = ChatClient.create(model)
        spec = client.prompt("Weather in Paris?").system("Answer briefly.").tools(get_weather)
        called = (await spec.acall()).content()
        spec = client.prompt("Weather in Paris?").system("Answer briefly.").tools(get_weather)
        streamed = "".join([piece async for piece in spec.astream().content()])
        return called, streamed

    called, streamed = asyncio.run(run())
    assert called == streamed == "It is sunny in Paris."
    assert weather_calls == ["Paris", "Paris"]
    assert server.urls[2].endswith(":streamGenerateContent?alt=sse")


def test_usage_maps_prompt_completion_thoughts_and_cached_tokens() -> None:
    response = Server("generate_final.json").model().call(Prompt.of("hi"))
    assert response.usage.prompt_tokens == 2110
    assert response.usage.completion_tokens == 8
    assert response.usage.cached_tokens == 1536
    assert response.metadata["model"] == "gemini-2.5-flash"

    thinking = Server("generate_function_call.json").model().call(Prompt.of("hi"))
    assert thinking.usage.completion_tokens == 75  # 15 candidates + 60 thinking tokens
    assert thinking.metadata["usage"]["thoughts_token_count"] == 60
    assert thinking.finish_reason == "tool_calls"  # Gemini says STOP; it asked for a tool

    chunks = list(Server("stream_final.sse").model().stream(Prompt.of("hi")))
    assert chunks[-1].usage == response.usage


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


@pytest.mark.parametrize(
    ("status", "fixture", "error_type"),
    [
        (400, "error_400_api_key.json", ProviderAuthenticationError),
        (403, "error_403.json", ProviderAuthenticationError),
        (429, "error_429.json", ProviderRateLimitError),
        (500, "error_500.json", ProviderError),
    ],
)
def test_http_errors_become_our_types_with_the_provider_message(
    status: int, fixture: str, error_type: type[ProviderError]
) -> None:
    expected = json.loads((FIXTURES / fixture).read_text())["error"]["message"]
    runs = {
        "call": lambda m: m.call(Prompt.of("hi")),
        "stream": lambda m: list(m.stream(Prompt.of("hi"))),
        "acall": lambda m: asyncio.run(m.acall(Prompt.of("hi"))),
    }
    for run in runs.values():
        model = Server((status, fixture)).model()
        with pytest.raises(error_type) as caught:
            run(model)
        assert type(caught.value) is error_type
        assert caught.value.status_code == status
        assert caught.value.provider == "gemini"
        assert caught.value.provider_message == expected


def test_unreachable_endpoint_is_a_connection_error() -> None:
    model = Server(httpx2.ConnectError("connection refused")).model()
    with pytest.raises(ProviderConnectionError):
        model.call(Prompt.of("hi"))


def test_options_reach_the_generation_config() -> None:
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


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    with pytest.raises(MissingExtraError) as caught:
        GeminiChatModel("gemini-2.5-flash")
    assert caught.value.extra == "gemini"
    assert caught.value.package == "google-genai"


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
