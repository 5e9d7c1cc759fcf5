"""``OpenAIChatModel`` against the real ``openai`` SDK over a mocked HTTP transport.

Responses are the fixtures in ``tests/fixtures/providers/openai`` (written from the
documented chat-completions format); every request the SDK sends is recorded so the tests
can check what went over the wire.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip(
    "openai", reason="the openai SDK (toolsearch[openai]) is not installed"
)
# the HTTP library this SDK version is built on (httpx2 in current releases, httpx before)
httpx2 = getattr(
    importlib.import_module("openai._base_client"),
    "httpx2",
    None,
) or importlib.import_module("httpx")

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
from toolsearch.models import OpenAIChatModel  # noqa: E402
from toolsearch.tools import tool_callbacks  # noqa: E402

FIXTURES = Path(__file__).parents[1] / "fixtures" / "providers" / "openai"

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

    def model(self, **kwargs: Any) -> OpenAIChatModel:
        client = openai.OpenAI(
            api_key="sk-test",
            base_url="http://llm.test/v1",
            http_client=httpx2.Client(transport=httpx2.MockTransport(self)),
            max_retries=0,
        )
        async_client = openai.AsyncOpenAI(
            api_key="sk-test",
            base_url="http://llm.test/v1",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self)),
            max_retries=0,
        )
        return OpenAIChatModel("gpt-4o-mini", client=client, async_client=async_client, **kwargs)


def _assert_tool_loop_requests(server: Server, *, stream: bool) -> None:
    first, second = server.requests
    assert server.urls[0] == "http://llm.test/v1/chat/completions"
    assert first["model"] == "gpt-4o-mini"
    assert first["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "parameters": WEATHER_SCHEMA,
            },
        }
    ]
    assert second["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_weather_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_weather_1", "content": "sunny in Paris"},
    ]
    for body in server.requests:
        assert body.get("stream", False) is stream
        if stream:
            assert body["stream_options"] == {"include_usage": True}


def test_tool_loop_call_through_chat_client() -> None:
    server = Server("completion_tool_call.json", "completion_final.json")
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


def test_tool_loop_stream_aggregates_tool_call_deltas() -> None:
    server = Server("stream_tool_call.sse", "stream_final.sse")
    chunks = list(
        ChatClient.create(server.model())
        .prompt("Weather in Paris?")
        .system("Answer briefly.")
        .tools(get_weather)
        .stream()
        .content()
    )
    assert "".join(chunks) == "It is sunny in Paris."
    assert weather_calls == ["Paris"]  # the split argument JSON was joined before running
    _assert_tool_loop_requests(server, stream=True)


def test_async_call_and_stream_use_the_async_client() -> None:
    server = Server(
        "completion_tool_call.json",
        "completion_final.json",
        "stream_tool_call.sse",
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
    assert [r.get("stream", False) for r in server.requests] == [False, False, True, True]


def test_usage_maps_prompt_completion_and_cached_tokens() -> None:
    response = Server("completion_final.json").model().call(Prompt.of("hi"))
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (2110, 8)
    assert response.usage.cached_tokens == 1920
    assert response.metadata["provider"] == "openai"
    assert response.metadata["model"] == "gpt-4o-mini-2024-07-18"
    assert response.metadata["usage"]["prompt_tokens_details"]["cached_tokens"] == 1920

    chunks = list(Server("stream_final.sse").model().stream(Prompt.of("hi")))
    assert chunks[-1].usage.cached_tokens == 1920
    assert chunks[-1].usage.total_tokens == 2118


def test_interleaved_parallel_tool_call_deltas_become_whole_calls() -> None:
    chunks = list(Server("stream_parallel_calls.sse").model().stream(Prompt.of("hi")))
    calls = [call for chunk in chunks for call in chunk.message.tool_calls]
    assert calls == [
        ToolCall(id="call_a", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="call_b", name="get_weather", arguments='{"city": "Rome"}'),
    ]
    assert chunks[-1].finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("status", "fixture", "error_type"),
    [
        (401, "error_401.json", ProviderAuthenticationError),
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
        assert caught.value.provider == "openai"
        assert caught.value.provider_message == expected
        assert expected in str(caught.value)


def test_unreachable_endpoint_is_a_connection_error() -> None:
    model = Server(httpx2.ConnectError("connection refused")).model()
    with pytest.raises(ProviderConnectionError) as caught:
        model.call(Prompt.of("hi"))
    assert caught.value.retryable
    assert caught.value.status_code is None


def test_options_reach_the_request() -> None:
    server = Server("completion_final.json", "completion_final.json", "completion_final.json")
    defaults = ChatOptions(temperature=0.2, extra={"seed": 7})
    model = server.model(options=defaults)
    model.call(
        Prompt.of(
            "hi",
            ChatOptions(
                max_tokens=64,
                top_p=0.9,
                stop=("END",),
                extra={
                    "parallel_tool_calls": False,
                    "top_k": 40,  # not a chat-completions parameter: goes into the body
                    "toolsearch.internal": "never sent",
                },
            ),
        )
    )
    body = server.requests[0]
    assert body["temperature"] == 0.2
    assert body["seed"] == 7
    assert body["top_p"] == 0.9
    assert body["stop"] == ["END"]
    assert body["max_tokens"] == 64  # a compatible server: the classic name
    assert body["parallel_tool_calls"] is False
    assert body["top_k"] == 40
    assert not any(key.startswith("toolsearch") for key in body)

    model.call(Prompt.of("hi", ChatOptions(model="gpt-4.1", max_tokens=5)))
    assert server.requests[1]["model"] == "gpt-4.1"

    explicit = server.model(max_tokens_parameter="max_completion_tokens")
    explicit.call(Prompt.of("hi", ChatOptions(max_tokens=5)))
    assert server.requests[2]["max_completion_tokens"] == 5
    assert "max_tokens" not in server.requests[2]


def test_history_with_parallel_calls_and_results_is_rendered_in_order() -> None:
    server = Server("completion_final.json")
    history = [
        SystemMessage(content="sys"),
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
    ]
    server.model().call(Prompt(history))
    messages = server.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[2]["content"] == "Checking both."
    assert [m["tool_call_id"] for m in messages[3:]] == ["a", "b"]


def test_compatible_endpoint_needs_no_key_and_no_network_to_construct(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = OpenAIChatModel("llama3.1", base_url="http://localhost:11434/v1")
    assert str(model.client.base_url) == "http://localhost:11434/v1/"
    assert model.client.api_key == "unused"
    assert model._max_tokens_key() == "max_tokens"
    assert OpenAIChatModel("gpt-4o-mini", api_key="sk-x")._max_tokens_key() == (
        "max_completion_tokens"
    )


def test_sync_client_only_serves_async_calls_in_a_thread() -> None:
    server = Server("completion_final.json")
    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://llm.test/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        max_retries=0,
    )
    model = OpenAIChatModel("gpt-4o-mini", client=client)
    assert asyncio.run(model.acall(Prompt.of("hi"))).text == "It is sunny in Paris."


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingExtraError) as caught:
        OpenAIChatModel("gpt-4o-mini")
    assert caught.value.extra == "openai"
    assert "toolsearch[openai]" in str(caught.value)


def test_importing_the_models_package_imports_no_provider_sdk() -> None:
    import subprocess

    code = (
        "import sys, toolsearch.models as m\n"
        "from toolsearch.models import OpenAIChatModel, AnthropicChatModel, GeminiChatModel\n"
        "print(sorted(k for k in ('openai', 'anthropic', 'google.genai') if k in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


class _TrackedBody(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body that records whether the SDK released it."""

    def __init__(self, data: bytes) -> None:
        self.lines = data.splitlines(keepends=True)
        self.closed = False

    def __iter__(self) -> Any:
        yield from self.lines

    async def __aiter__(self) -> Any:
        for line in self.lines:
            yield line

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


def test_a_stream_abandoned_early_releases_its_http_response() -> None:
    bodies: list[_TrackedBody] = []

    def serve(request: Any) -> Any:
        body = _TrackedBody((FIXTURES / "stream_final.sse").read_bytes())
        bodies.append(body)
        return httpx2.Response(200, stream=body, headers={"content-type": "text/event-stream"})

    sync = openai.OpenAI(
        api_key="sk-test",
        base_url="http://llm.test/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(serve)),
        max_retries=0,
    )
    asynchronous = openai.AsyncOpenAI(
        api_key="sk-test",
        base_url="http://llm.test/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(serve)),
        max_retries=0,
    )
    model = OpenAIChatModel("gpt-4o-mini", client=sync, async_client=asynchronous)
    prompt = Prompt([UserMessage(content="Weather?")])

    pieces = model.stream(prompt)
    first = next(pieces)
    assert first.message.content == "It is sunny"
    kept = pieces  # the caller still holds the generator: only close() may release it
    kept.close()
    assert bodies[0].closed

    async def read_one() -> str | None:
        chunks = model.astream(prompt)
        piece = await anext(chunks)
        await chunks.aclose()
        return piece.message.content

    assert asyncio.run(read_one()) == "It is sunny"
    assert bodies[1].closed


def test_no_api_key_is_an_authentication_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    model = OpenAIChatModel("gpt-4o-mini")  # builds fine: the client is made on first use
    prompt = Prompt([UserMessage(content="Hi")])
    with pytest.raises(ProviderAuthenticationError, match="OPENAI_API_KEY"):
        model.call(prompt)
    with pytest.raises(ProviderAuthenticationError):
        asyncio.run(model.acall(prompt))


def test_tool_calls_with_finish_reason_stop_finish_as_tool_calls() -> None:
    from toolsearch.models.openai import response_from_completion

    # what Ollama and some other compatible servers send with a tool call
    completion = openai.types.chat.ChatCompletion.model_validate(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "llama3.1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                            }
                        ],
                    },
                }
            ],
        }
    )
    response = response_from_completion(completion)
    assert response.finish_reason == "tool_calls"
    assert response.metadata["provider_finish_reason"] == "stop"
    assert response.message.tool_calls[0].name == "get_weather"


def test_an_empty_assistant_turn_is_sent_with_empty_text_not_null() -> None:
    from toolsearch.models.openai import openai_messages

    rendered = openai_messages(
        [UserMessage(content="Hi"), AssistantMessage(), UserMessage(content="?")]
    )
    assert rendered[1] == {"role": "assistant", "content": ""}
    call = ToolCall(id="c1", name="get_weather", arguments="{}")
    assert openai_messages([AssistantMessage(tool_calls=[call])])[0]["content"] is None
