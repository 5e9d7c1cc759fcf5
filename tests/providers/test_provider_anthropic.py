"""What only ``AnthropicChatModel`` does, against the real ``anthropic`` SDK over a mocked
transport.

The behaviour every adapter shares (replies, tool calls, the tool loop in every mode, usage,
options, history, errors, credentials, streams, imports) is the provider-adapter contract in
``tests/contracts/test_provider_contract.py``. Here: the exact Messages API wire format, how
turns merge, the answer budget, thinking blocks, prompt-cache breakpoints, error events
inside a stream, and the client-side tool-search shape (``defer_loading`` +
``tool_reference``). Responses are the fixtures in ``tests/fixtures/providers/anthropic``
(written from the documented Messages API format, JSON and SSE).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

anthropic = pytest.importorskip(
    "anthropic", reason="the anthropic SDK (toolsearch[anthropic]) is not installed"
)

from providers.fakes import AnthropicEndpoint as Server  # noqa: E402

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
from toolsearch.errors import ProviderError  # noqa: E402
from toolsearch.indexes import RegexToolIndex  # noqa: E402
from toolsearch.models import AnthropicChatModel  # noqa: E402
from toolsearch.models.anthropic import THINKING_METADATA_KEY  # noqa: E402
from toolsearch.tools import tool_callbacks  # noqa: E402

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


@pytest.mark.parametrize(
    ("stream", "replies"),
    [
        (False, ("message_tool_use.json", "message_final.json")),
        (True, ("stream_tool_use.sse", "stream_final.sse")),
    ],
    ids=["call", "stream"],
)
def test_the_tool_loop_sends_the_messages_api_wire_format(
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


def test_prompt_tokens_add_the_cache_reads_and_writes_to_input_tokens() -> None:
    response = Server("message_final.json").model().call(Prompt.of("hi"))
    raw = response.metadata["usage"]  # input_tokens excludes what the cache read and wrote
    assert (raw["input_tokens"], raw["cache_read_input_tokens"]) == (24, 1800)
    assert raw["cache_creation_input_tokens"] == 120
    assert response.usage.prompt_tokens == 24 + 1800 + 120
    assert response.usage.cached_tokens == 1800  # the reads only

    # streamed: message_start's counts, with message_delta's (cumulative) output tokens
    chunks = list(Server("stream_final.sse").model().stream(Prompt.of("hi")))
    assert chunks[-1].metadata["usage"]["output_tokens"] == 9
    assert chunks[-1].usage == response.usage


def test_the_answer_budget_is_always_sent_and_options_win() -> None:
    server = Server("message_final.json", "message_final.json")
    server.model().call(Prompt.of("hi"))
    assert server.requests[0]["max_tokens"] == 4096  # the API requires one: the default
    model = server.model(max_tokens=1000)
    model.call(Prompt.of("hi", ChatOptions(max_tokens=256)))
    assert server.requests[1]["max_tokens"] == 256


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


def _search_loop(mode: str, **model_options: Any) -> Server:
    server = Server("message_search.json", "message_tool_use.json", "message_final.json")
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=3)
    model = server.model(tool_search=mode, **model_options)
    client = ChatClient.builder(model).default_advisors(advisor).build()
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


def test_defer_loading_is_the_default() -> None:
    assert AnthropicChatModel("claude-sonnet-4-6").tool_search == "defer_loading"
    server = Server("message_search.json", "message_tool_use.json", "message_final.json")
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=3)
    client = ChatClient.builder(server.model()).default_advisors(advisor).build()
    client.prompt("Weather in Paris?").tools(get_weather, send_email).call()
    second = server.requests[1]
    assert second["messages"][2]["content"][0]["content"] == [
        {"type": "tool_reference", "tool_name": "get_weather"}
    ]


@pytest.mark.parametrize("side", ["sync", "async"])
def test_a_model_that_refuses_deferral_is_sent_every_tool_in_full_from_then_on(
    side: str, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio

    server = Server(
        "message_search.json",
        (400, "error_400_defer.json"),
        "message_tool_use.json",
        "message_final.json",
    )
    model = server.model()
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=3)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    spec = client.prompt("Weather in Paris?").tools(get_weather, send_email)
    with caplog.at_level("WARNING", logger="toolsearch.models.anthropic"):
        text = spec.call().content() if side == "sync" else asyncio.run(spec.acall()).content()
    assert text == "It is sunny in Paris."
    refused, resent, third = server.requests[1:]
    assert refused["tools"][1]["defer_loading"] is True
    assert resent["messages"][2]["content"][0]["content"] == '["get_weather"]'
    assert all("defer_loading" not in t for t in resent["tools"])
    assert "defer_loading" not in json.dumps(third)  # the model object stays on "none"
    assert model.tool_search == "none"
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "refused deferred tools" in caplog.records[0].message


def test_another_400_is_not_retried_without_deferral() -> None:
    server = Server("message_search.json", (400, "error_400_other.json"))
    model = server.model()
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=3)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    with pytest.raises(ProviderError, match="roles must alternate"):
        client.prompt("Weather in Paris?").tools(get_weather, send_email).call()
    assert len(server.requests) == 2
    assert model.tool_search == "defer_loading"


def test_without_defer_loading_or_the_beta_the_tools_list_changes_between_turns() -> None:
    server = _search_loop("none", tool_changes_beta=False)
    second = server.requests[1]
    assert second["messages"][2]["content"][0]["content"] == '["get_weather"]'
    assert [t["name"] for t in second["tools"]] == ["toolSearchTool", "get_weather"]
    assert all("defer_loading" not in t for t in second["tools"])


def test_without_defer_loading_the_beta_adds_a_discovery_after_the_cached_history() -> None:
    server = _search_loop("none")
    first, second = server.requests[:2]
    assert second["messages"][2]["content"][0]["content"] == '["get_weather"]'
    # the tool is declared deferred and added by a change message after the history
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert second["messages"][-1] == {
        "role": "system",
        "content": [
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_weather"}}
        ],
    }
    assert [t["name"] for t in second["tools"] if not t.get("defer_loading")] == ["toolSearchTool"]


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


def test_tool_references_and_deferred_tools_go_under_their_wire_names() -> None:
    from toolsearch.chat import ToolSearchHit
    from toolsearch.models.anthropic import anthropic_request_body
    from toolsearch.tools.function import FunctionToolCallback

    def named(name: str) -> FunctionToolCallback:
        return FunctionToolCallback.from_schema(
            lambda arguments: "ok", name=name, description=f"{name}.", input_schema={}
        )

    hits = (ToolSearchHit(name="files.read"),)
    history = [
        UserMessage(content="Read the file."),
        AssistantMessage(tool_calls=[ToolCall(id="s1", name="search.tools", arguments="{}")]),
        ToolResponseMessage(
            responses=[
                ToolResponse(id="s1", name="search.tools", response_data="", search_hits=hits)
            ]
        ),
    ]
    options = ChatOptions(tool_callbacks=[named("search.tools"), named("files.read")])
    body = anthropic_request_body(
        Prompt(history, options), model="claude", tool_search="defer_loading"
    )
    assert body["messages"][1]["content"][0]["name"] == "search_tools"
    assert body["messages"][2]["content"][0]["content"] == [
        {"type": "tool_reference", "tool_name": "files_read"}
    ]
    assert [(t["name"], t.get("defer_loading", False)) for t in body["tools"]] == [
        ("search_tools", False),
        ("files_read", True),
    ]


# -- server-side tool search: the advisor's search="native" ------------------------------------


def test_native_search_defers_every_tool_to_anthropics_bm25_search_and_echoes_its_blocks() -> None:
    server = Server("message_server_search.json", "message_final.json")
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search="native", pinned_tools=["send_email"]
    )
    client = ChatClient.builder(server.model()).default_advisors(advisor).build()
    text = client.prompt("Weather in Paris?").tools(get_weather, send_email).call().content()
    assert text == "It is sunny in Paris."
    assert weather_calls == ["Paris"]
    first, second = server.requests
    assert [(t.get("name"), t.get("defer_loading", False)) for t in first["tools"]] == [
        ("get_weather", True),
        ("send_email", False),  # pinned: in full
        ("tool_search_tool_bm25", False),
    ]
    assert first["tools"][-1]["type"] == "tool_search_tool_bm25_20251119"
    assert "toolSearchTool" not in json.dumps(first)
    # the server's blocks go back in the assistant turn, before the text and the call
    blocks = second["messages"][1]["content"]
    assert [b["type"] for b in blocks] == [
        "server_tool_use",
        "tool_search_tool_result",
        "text",
        "tool_use",
    ]
    assert blocks[1]["content"]["tool_references"] == [
        {"type": "tool_reference", "tool_name": "get_weather"}
    ]


def test_native_search_can_be_anthropics_regex_search() -> None:
    server = Server("message_final.json")
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search="native")
    model = server.model(native_search="regex")
    ChatClient.builder(model).default_advisors(advisor).build().prompt("hi").tools(
        get_weather
    ).call()
    assert server.requests[0]["tools"][-1] == {
        "type": "tool_search_tool_regex_20251119",
        "name": "tool_search_tool_regex",
    }


def test_a_streamed_server_search_keeps_its_blocks_for_the_next_turn() -> None:
    server = Server("stream_server_search.sse", "stream_final.sse")
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search="native")
    client = ChatClient.builder(server.model()).default_advisors(advisor).build()
    chunks = client.prompt("Weather in Paris?").tools(get_weather).stream().chat_responses()
    assert "".join(c.message.content or "" for c in chunks) == "It is sunny in Paris."
    blocks = server.requests[1]["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    assert blocks[0]["input"] == {"query": "weather"}


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
