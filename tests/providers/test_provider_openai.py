"""What only ``OpenAIChatModel`` does, against the real ``openai`` SDK over a mocked transport.

The behaviour every adapter shares (replies, tool calls, the tool loop in every mode, usage,
options, history, errors, credentials, streams, imports) is the provider-adapter contract in
``tests/contracts/test_provider_contract.py``. Here: the exact chat-completions wire format,
OpenAI's streamed tool-call deltas, and what compatible servers (Ollama, vLLM...) need.
Responses are the fixtures in ``tests/fixtures/providers/openai`` (written from the
documented chat-completions format).
"""

from __future__ import annotations

import pytest

openai = pytest.importorskip(
    "openai", reason="the openai SDK (toolsearch[openai]) is not installed"
)

from providers.fakes import OpenAIEndpoint as Server  # noqa: E402

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
from toolsearch.models import OpenAIChatModel  # noqa: E402
from toolsearch.tools import tool_callbacks  # noqa: E402

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
            "content": "",  # not null: strict compatible servers refuse null (llama.cpp: 500)
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


@pytest.mark.parametrize(
    ("stream", "replies"),
    [
        (False, ("completion_tool_call.json", "completion_final.json")),
        (True, ("stream_tool_call.sse", "stream_final.sse")),
    ],
    ids=["call", "stream"],
)
def test_the_tool_loop_sends_the_chat_completions_wire_format(
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


def test_interleaved_parallel_tool_call_deltas_become_whole_calls() -> None:
    chunks = list(Server("stream_parallel_calls.sse").model().stream(Prompt.of("hi")))
    calls = [call for chunk in chunks for call in chunk.message.tool_calls]
    assert calls == [
        ToolCall(id="call_a", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="call_b", name="get_weather", arguments='{"city": "Rome"}'),
    ]
    assert chunks[-1].finish_reason == "tool_calls"


def test_max_tokens_goes_under_the_name_the_endpoint_takes() -> None:
    server = Server("completion_final.json", "completion_final.json")
    # a compatible server (the fake endpoint is not api.openai.com): the classic name
    server.model().call(Prompt.of("hi", ChatOptions(max_tokens=64)))
    assert server.requests[0]["max_tokens"] == 64
    assert "max_completion_tokens" not in server.requests[0]

    explicit = server.model(max_tokens_parameter="max_completion_tokens")
    explicit.call(Prompt.of("hi", ChatOptions(max_tokens=5)))
    assert server.requests[1]["max_completion_tokens"] == 5
    assert "max_tokens" not in server.requests[1]


def test_each_tool_result_is_a_tool_message_of_its_own() -> None:
    server = Server("completion_final.json")
    history = [
        SystemMessage(content="sys"),
        UserMessage(content="Paris and Rome?"),
        AssistantMessage(
            content="Checking both.",
            tool_calls=(
                ToolCall(id="a", name="get_weather", arguments='{"city":"Paris"}'),
                ToolCall(id="b", name="get_weather", arguments="not json"),
            ),
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="a", name="get_weather", response_data="sunny"),
                ToolResponse(id="b", name="get_weather", response_data="bad arguments"),
            )
        ),
    ]
    server.model().call(Prompt(history))
    messages = server.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[2]["content"] == "Checking both."
    # the arguments travel as the model wrote them, JSON or not
    assert messages[2]["tool_calls"][1]["function"]["arguments"] == "not json"
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


def test_an_assistant_turn_always_has_string_content_tool_calls_too() -> None:
    """``null`` content is allowed by OpenAI next to tool calls, but llama.cpp's server
    answers it with HTTP 500; ``""`` is accepted by OpenAI and every compatible server."""
    from toolsearch.models.openai import openai_messages

    rendered = openai_messages(
        [UserMessage(content="Hi"), AssistantMessage(), UserMessage(content="?")]
    )
    assert rendered[1] == {"role": "assistant", "content": ""}
    call = ToolCall(id="c1", name="get_weather", arguments="{}")
    (entry,) = openai_messages([AssistantMessage(tool_calls=[call])])
    assert entry["content"] == ""
    assert entry["tool_calls"][0]["function"]["name"] == "get_weather"
    with_text = openai_messages([AssistantMessage(content="Checking.", tool_calls=[call])])
    assert with_text[0]["content"] == "Checking."


def test_a_stream_without_a_usage_chunk_reports_usage_none(tmp_path) -> None:
    """Compatible servers that ignore ``stream_options`` send no usage: ``None``, not 0."""
    server = Server("stream_final.sse")
    lines = (server.fixtures / "stream_final.sse").read_text().split("\n\n")
    (tmp_path / "stream_final.sse").write_text(
        "\n\n".join(line for line in lines if '"usage":{' not in line)
    )
    server.fixtures = tmp_path
    chunks = list(server.model().stream(Prompt.of("hi")))
    assert chunks[-1].usage is None
    assert "".join(c.message.content or "" for c in chunks) == "It is sunny in Paris."


def test_a_stream_that_ends_with_nothing_is_a_retryable_error(tmp_path) -> None:
    """llama-cpp-python fails after answering 200 by ending the event stream: no chunk with
    content, tool calls or a finish reason. That is a failed call, not an empty answer."""
    from toolsearch.errors import ProviderError

    (tmp_path / "stream_final.sse").write_text("data: [DONE]\n\n")
    server = Server("stream_final.sse")
    server.fixtures = tmp_path
    with pytest.raises(ProviderError, match="ended without any content") as caught:
        list(server.model().stream(Prompt.of("hi")))
    assert caught.value.retryable
