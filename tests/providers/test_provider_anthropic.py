"""``AnthropicChatModel`` against the real ``anthropic`` SDK over a mocked HTTP transport.

Responses are the fixtures in ``tests/fixtures/providers/anthropic`` (written from the
documented Messages API format, JSON and SSE); every request is recorded so the tests can
check the wire format, including the client-side tool-search shape (``defer_loading`` +
``tool_reference``).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

anthropic = pytest.importorskip(
    "anthropic", reason="the anthropic SDK (toolsearch[anthropic]) is not installed"
)
# the HTTP library this SDK version is built on (httpx2 in current releases, httpx before)
httpx2 = getattr(
    importlib.import_module("anthropic._base_client"),
    "httpx2",
    None,
) or importlib.import_module("httpx")

from provider_server import FixtureServer  # noqa: E402

from toolsearch import (  # noqa: E402
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ChatOptions,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolResponse,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
    tool,
)
from toolsearch.chat import ToolSearchHit  # noqa: E402
from toolsearch.errors import (  # noqa: E402
    MissingExtraError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
)
from toolsearch.indexes import RegexToolIndex  # noqa: E402
from toolsearch.models import AnthropicChatModel  # noqa: E402
from toolsearch.models.anthropic import THINKING_METADATA_KEY  # noqa: E402
from toolsearch.tools import tool_callbacks  # noqa: E402

FIXTURES = Path(__file__).parents[1] / "fixtures" / "providers" / "anthropic"

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


@tool
def create_ticket(title: str) -> str:
    """Open a support ticket in the helpdesk."""
    return "T-1"


WEATHER_SCHEMA = tool_callbacks(get_weather)[0].definition.input_schema


@pytest.fixture(autouse=True)
def _reset() -> None:
    weather_calls.clear()


class Server(FixtureServer):
    fixtures = FIXTURES
    http = httpx2

    def model(self, **kwargs: Any) -> AnthropicChatModel:
        client = anthropic.Anthropic(
            api_key="sk-ant-test",
            base_url="http://claude.test",
            http_client=httpx2.Client(transport=httpx2.MockTransport(self)),
            max_retries=0,
        )
        async_client = anthropic.AsyncAnthropic(
            api_key="sk-ant-test",
            base_url="http://claude.test",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self)),
            max_retries=0,
        )
        return AnthropicChatModel(
            "claude-sonnet-4-6", client=client, async_client=async_client, **kwargs
        )


def _assert_tool_loop_requests(server: Server, *, stream: bool) -> None:
    first, second = server.requests
    assert server.urls[0] == "http://claude.test/v1/messages"
    headers = server.headers[0]
    assert (
        "sk-ant-test"
        in (headers.get("x-api-key", ""), headers.get("authorization", ""))[
            "x-api-key" not in headers
        ]
    )
    assert first["model"] == "claude-sonnet-4-6"
    assert first["max_tokens"] == 4096
    assert first["system"] == "Answer briefly."
    assert first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
    ]
    assert first["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": WEATHER_SCHEMA,
        }
    ]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll check the weather in Paris."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": "sunny in Paris",
                }
            ],
        },
    ]
    for body in server.requests:
        assert body.get("stream", False) is stream


def test_tool_loop_call_through_chat_client() -> None:
    server = Server("message_tool_use.json", "message_final.json")
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
    assert response.metadata["provider_finish_reason"] == "end_turn"
    assert weather_calls == ["Paris"]
    _assert_tool_loop_requests(server, stream=False)


def test_tool_loop_stream_joins_input_json_deltas() -> None:
    server = Server("stream_tool_use.sse", "stream_final.sse")
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
        "message_tool_use.json", "message_final.json", "stream_tool_use.sse", "stream_final.sse"
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


def test_usage_counts_cache_reads_and_writes_in_prompt_tokens() -> None:
    response = Server("message_final.json").model().call(Prompt.of("hi"))
    # input_tokens (24) excludes the cache: prompt = 24 + 1800 read + 120 written
    assert response.usage.prompt_tokens == 1944
    assert response.usage.cached_tokens == 1800
    assert response.usage.completion_tokens == 9
    assert response.metadata["usage"]["cache_creation_input_tokens"] == 120

    chunks = list(Server("stream_final.sse").model().stream(Prompt.of("hi")))
    assert chunks[-1].usage == response.usage  # message_start counts + message_delta output
    assert chunks[-1].finish_reason == "stop"


def test_stream_hands_on_text_at_once_and_each_tool_call_whole() -> None:
    chunks = list(Server("stream_tool_use.sse").model().stream(Prompt.of("hi")))
    texts = [c.message.content for c in chunks if c.message.content]
    assert texts == ["I'll check the weather", " in Paris."]
    calls = [call for c in chunks for call in c.message.tool_calls]
    assert calls == [
        ToolCall(
            id="toolu_01A09q90qw90lq917835lq9", name="get_weather", arguments='{"city": "Paris"}'
        )
    ]
    assert chunks[-1].finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("status", "fixture", "error_type"),
    [
        (401, "error_401.json", ProviderAuthenticationError),
        (429, "error_429.json", ProviderRateLimitError),
        (500, "error_500.json", ProviderError),
        (529, "error_529.json", ProviderError),
    ],
)
def test_http_errors_become_our_types_with_the_provider_message(
    status: int, fixture: str, error_type: type[ProviderError]
) -> None:
    expected = json.loads((FIXTURES / fixture).read_text())["error"]["message"]
    runs = {
        "call": lambda m: m.call(Prompt.of("hi")),
        "stream": lambda m: list(m.stream(Prompt.of("hi"))),
        "astream": lambda m: asyncio.run(_drain(m.astream(Prompt.of("hi")))),
    }
    for run in runs.values():
        model = Server((status, fixture)).model()
        with pytest.raises(error_type) as caught:
            run(model)
        assert type(caught.value) is error_type
        assert caught.value.status_code == status
        assert caught.value.provider == "anthropic"
        assert caught.value.provider_message == expected


async def _drain(iterator: Any) -> list[Any]:
    return [item async for item in iterator]


def test_unreachable_endpoint_is_a_connection_error() -> None:
    model = Server(httpx2.ConnectTimeout("timed out")).model()
    with pytest.raises(ProviderConnectionError):
        model.call(Prompt.of("hi"))


def test_options_reach_the_request() -> None:
    server = Server("message_final.json")
    model = server.model(max_tokens=1000, options=ChatOptions(temperature=0.3))
    model.call(
        Prompt.of(
            "hi",
            ChatOptions(
                max_tokens=256,
                stop=("END",),
                extra={
                    "top_k": 5,
                    "tool_choice": {"type": "auto"},
                    "service_tier": "auto",
                    "brand_new_field": {"on": True},
                    "toolsearch.internal": 1,
                },
            ),
        )
    )
    body = server.requests[0]
    assert body["max_tokens"] == 256
    assert body["temperature"] == 0.3
    assert body["stop_sequences"] == ["END"]
    assert body["top_k"] == 5
    assert body["tool_choice"] == {"type": "auto"}
    assert body["brand_new_field"] == {"on": True}
    assert "toolsearch.internal" not in body


def test_history_merges_tool_results_and_user_text_into_one_turn() -> None:
    server = Server("message_final.json")
    history = [
        SystemMessage(content="one"),
        SystemMessage(content="two"),
        UserMessage(content="Paris and Rome?"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="a", name="get_weather", arguments='{"city":"Paris"}'),
                ToolCall(id="b", name="get_weather", arguments="not json"),
            )
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="a", name="get_weather", response_data="sunny"),
                ToolResponse(id="b", name="get_weather", response_data="bad arguments"),
            )
        ),
        UserMessage(content="And tomorrow?"),
    ]
    server.model().call(Prompt(history))
    body = server.requests[0]
    assert body["system"] == "one\n\ntwo"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][1]["input"] == {"arguments": "not json"}
    last = body["messages"][2]["content"]
    assert [block["type"] for block in last] == ["tool_result", "tool_result", "text"]


def test_thinking_blocks_are_kept_and_sent_back_with_the_tool_use() -> None:
    server = Server("message_thinking_tool_use.json", "message_final.json")
    model = server.model(
        options=ChatOptions(extra={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    )
    text = ChatClient.create(model).prompt("Weather?").tools(get_weather).call().content()
    assert text == "It is sunny in Paris."
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assistant = server.requests[1]["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "redacted_thinking", "tool_use"]
    assert assistant[0]["signature"] == "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"
    assert assistant[1]["data"] == "EmwKAhgBEgy3va3pzix/LafPsn4a"


def test_thinking_metadata_survives_call() -> None:
    response = Server("message_thinking_tool_use.json").model().call(Prompt.of("hi"))
    assert [b["type"] for b in response.message.metadata[THINKING_METADATA_KEY]] == [
        "thinking",
        "redacted_thinking",
    ]


def test_cache_prompt_places_breakpoints_on_tools_system_and_newest_message() -> None:
    server = Server("message_final.json")
    model = server.model(cache_prompt=True)
    options = ChatOptions(tool_callbacks=tool_callbacks([get_weather, send_email]))
    model.call(Prompt([SystemMessage(content="sys"), UserMessage(content="hi")], options))
    body = server.requests[0]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"] == [
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


# -- client-side tool search: defer_loading + tool_reference ------------------------------------


def _search_loop(mode: str) -> Server:
    server = Server("message_search.json", "message_tool_use.json", "message_final.json")
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=3)
    client = ChatClient.builder(server.model(tool_search=mode)).default_advisors(advisor).build()
    text = (
        client.prompt("Weather in Paris?")
        .system("Answer briefly.")
        .tools(get_weather, send_email, create_ticket)
        .advisors(lambda a: a.param(CONVERSATION_ID, f"user-{mode}"))
        .call()
        .content()
    )
    assert text == "It is sunny in Paris."
    assert weather_calls == ["Paris"]
    return server


def test_defer_loading_returns_search_hits_as_tool_references() -> None:
    server = _search_loop("defer_loading")
    first, second, third = server.requests
    assert [t["name"] for t in first["tools"]] == ["toolSearchTool"]
    # the search result became a tool_reference; the tool it names is sent deferred
    result = second["messages"][2]["content"][0]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_01Search",
        "content": [{"type": "tool_reference", "tool_name": "get_weather"}],
    }
    assert second["tools"][1] == {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": WEATHER_SCHEMA,
        "defer_loading": True,
    }
    # the rendered prefix (system + always-loaded tools) never changed: the cache holds
    for later in (second, third):
        assert later["system"] == first["system"]
        assert [t for t in later["tools"] if not t.get("defer_loading")] == first["tools"]
        assert later["messages"][: len(first["messages"])] == first["messages"]
    assert third["messages"][:3] == second["messages"]  # the history only grows


def test_without_defer_loading_the_tools_list_changes_between_turns() -> None:
    server = _search_loop("none")
    second = server.requests[1]
    assert second["messages"][2]["content"][0]["content"] == '["get_weather"]'
    assert [t["name"] for t in second["tools"]] == ["toolSearchTool", "get_weather"]
    assert all("defer_loading" not in t for t in second["tools"])


def test_forced_deferred_tools_and_catalog_definitions() -> None:
    server = Server("message_final.json")
    model = server.model(tool_search="defer_loading")
    archive = ToolDefinition(
        name="archive", description="Archive a ticket.", input_schema={"type": "object"}
    )
    options = ChatOptions(
        tool_callbacks=tool_callbacks([get_weather, send_email]),
        deferred_tools=["send_email", archive, "not_registered"],
    )
    model.call(Prompt.of("hi", options))
    tools = server.requests[0]["tools"]
    assert [(t["name"], t.get("defer_loading", False)) for t in tools] == [
        ("get_weather", False),
        ("send_email", True),
        ("archive", True),
    ]
    assert not any(key.startswith("toolsearch") for key in server.requests[0])


def test_deferred_tools_are_ignored_without_defer_loading() -> None:
    model = AnthropicChatModel("claude-sonnet-4-6")
    options = ChatOptions(
        tool_callbacks=tool_callbacks([get_weather]), deferred_tools=["get_weather"]
    )
    arguments = model.request_arguments(Prompt.of("hi", options))
    assert "defer_loading" not in arguments["tools"][0]


def test_the_old_extra_key_for_deferred_tools_is_refused_not_ignored() -> None:
    model = AnthropicChatModel("claude-sonnet-4-6", tool_search="defer_loading")
    options = ChatOptions(extra={"toolsearch.deferred_tools": ["get_weather"]})
    with pytest.raises(ValueError, match="deferred_tools"):
        model.request_arguments(Prompt.of("hi", options))


def _searched(response: ToolResponse, *tools: Any) -> Prompt:
    return Prompt(
        [
            UserMessage(content="hi"),
            AssistantMessage(tool_calls=(ToolCall(id="s", name=response.name, arguments="{}"),)),
            ToolResponseMessage(responses=(response,)),
        ],
        ChatOptions(tool_callbacks=tool_callbacks(list(tools or [get_weather]))),
    )


def _hits(*names: str) -> tuple[ToolSearchHit, ...]:
    return tuple(ToolSearchHit(name=n, score=1.0) for n in names)


def test_search_results_without_usable_hits_stay_text() -> None:
    server = Server("message_final.json", "message_final.json", "message_final.json")
    model = server.model(tool_search="defer_loading")
    error = '{"error": "invalid_pattern", "message": "bad"}'
    cases = [
        ToolResponse(id="s", name="toolSearchTool", response_data=error),  # no hits: an error
        ToolResponse(  # a tool this request does not carry
            id="s",
            name="toolSearchTool",
            response_data='["get_weather", "gone_tool"]',
            search_hits=_hits("get_weather", "gone_tool"),
        ),
        ToolResponse(id="s", name="toolSearchTool", response_data="[]", search_hits=()),
    ]
    for response in cases:
        model.call(_searched(response))
    for body, response in zip(server.requests, cases, strict=True):
        assert body["messages"][2]["content"][0]["content"] == response.response_data
        assert "defer_loading" not in body["tools"][0]


def test_result_text_is_never_parsed_for_tool_names() -> None:
    """A list of names as text, with no typed hits, is an ordinary tool result."""
    model = AnthropicChatModel("claude-sonnet-4-6", tool_search="defer_loading")
    text = '["get_weather"]'
    prompt = _searched(ToolResponse(id="s", name="toolSearchTool", response_data=text))
    arguments = model.request_arguments(prompt)
    assert arguments["messages"][2]["content"][0]["content"] == text
    assert "defer_loading" not in arguments["tools"][0]


def test_hits_of_any_search_tool_become_references_whatever_its_text() -> None:
    model = AnthropicChatModel("claude-sonnet-4-6", tool_search="defer_loading")
    response = ToolResponse(
        id="s",
        name="findTools",  # a custom search tool: no name to configure in the adapter
        response_data="Found: get_weather (Current weather for a city.)",
        search_hits=_hits("get_weather", "get_weather"),
    )
    arguments = model.request_arguments(_searched(response))
    assert arguments["messages"][2]["content"][0]["content"] == [
        {"type": "tool_reference", "tool_name": "get_weather"}
    ]
    assert arguments["tools"][0]["defer_loading"] is True


def test_a_tool_whose_results_carry_hits_is_never_deferred() -> None:
    @tool
    def findTools(query: str) -> str:
        """Find tools."""
        return "[]"

    model = AnthropicChatModel("claude-sonnet-4-6", tool_search="defer_loading")
    response = ToolResponse(
        id="s", name="findTools", response_data='["get_weather"]', search_hits=_hits("get_weather")
    )
    prompt = _searched(response, findTools, get_weather)
    prompt = prompt.with_options(
        prompt.options.replace(deferred_tools=["findTools", "get_weather"])
    )
    tools = model.request_arguments(prompt)["tools"]
    assert [(t["name"], t.get("defer_loading", False)) for t in tools] == [
        ("findTools", False),
        ("get_weather", True),
    ]


def test_invalid_tool_search_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="tool_search"):
        AnthropicChatModel("claude-sonnet-4-6", tool_search="server")  # type: ignore[arg-type]


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(MissingExtraError) as caught:
        AnthropicChatModel("claude-sonnet-4-6")
    assert caught.value.extra == "anthropic"


def test_error_event_inside_a_stream_keeps_its_type_and_message() -> None:
    model = Server("stream_overloaded.sse").model()
    chunks = model.stream(Prompt.of("hi"))
    assert next(chunks).text == "Let me"  # text already streamed reaches the caller first
    with pytest.raises(ProviderError) as caught:
        next(chunks)
    assert caught.value.status_code == 529
    assert caught.value.provider_message == "Overloaded"


def test_search_results_with_summaries_become_references_too() -> None:
    """The built-in search tool with summaries: its typed hits, not its text, decide."""
    server = Server("message_search.json", "message_tool_use.json", "message_final.json")
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), max_results=3, search_results_with_summaries=True
    )
    model = server.model(tool_search="defer_loading")
    client = ChatClient.builder(model).default_advisors(advisor).build()
    client.prompt("Weather in Paris?").tools(get_weather, send_email).call()
    assert server.requests[1]["messages"][2]["content"][0]["content"] == [
        {"type": "tool_reference", "tool_name": "get_weather"}
    ]


def test_no_api_key_is_an_authentication_error_not_a_bare_type_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    # a port nothing listens on: the SDK refuses before sending, and nothing leaves if not
    model = AnthropicChatModel("claude-sonnet-4-6", base_url="http://127.0.0.1:9")
    prompt = Prompt([UserMessage(content="Hi")])
    with pytest.raises(ProviderAuthenticationError, match="authentication method"):
        model.call(prompt)
    with pytest.raises(ProviderAuthenticationError):
        list(model.stream(prompt))
    with pytest.raises(ProviderAuthenticationError):
        asyncio.run(model.acall(prompt))


def test_tool_results_open_their_user_turn_and_empty_user_text_is_left_out() -> None:
    call = ToolCall(id="toolu_1", name="get_weather", arguments='{"city": "Oslo"}')
    model = AnthropicChatModel("claude-sonnet-4-6", api_key="k")
    arguments = model.request_arguments(
        Prompt(
            [
                UserMessage(content="Weather?"),
                AssistantMessage(tool_calls=[call]),
                UserMessage(content="Please hurry."),  # arrived before the result
                ToolResponseMessage(
                    responses=[ToolResponse(id="toolu_1", name="get_weather", response_data="ok")]
                ),
                UserMessage(content=""),
            ]
        )
    )
    last = arguments["messages"][-1]
    assert last["role"] == "user"
    assert [block["type"] for block in last["content"]] == ["tool_result", "text"]
    assert last["content"][1]["text"] == "Please hurry."
