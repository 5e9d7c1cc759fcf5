"""What only ``OpenAIResponsesChatModel`` does, against the real ``openai`` SDK over the
strict Responses fake (``fakes.OpenAIResponsesEndpoint``: a body the API would refuse is a
400). The behaviour every adapter shares is the provider contract
(``tests/contracts/test_provider_contract.py``). Here: the input items, client-executed
tool search (blocking and streamed), the hosted search as a pass-through, the advisor's
``search="native"``, and the strict fake's own refusals."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

pytest.importorskip("openai", reason="the openai SDK (toolsearch[openai]) is not installed")

from providers.fakes import OpenAIResponsesEndpoint as Server
from providers.responses_strict import problems

from toolsearch import (
    CONVERSATION_ID,
    ChatClient,
    ChatOptions,
    Prompt,
    ToolCallingAdvisor,
    ToolSearchToolCallingAdvisor,
    tool,
)
from toolsearch.errors import ProviderError
from toolsearch.indexes import RegexToolIndex
from toolsearch.models.openai_responses import ITEMS_METADATA_KEY

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


@pytest.fixture(autouse=True)
def _reset() -> None:
    weather_calls.clear()


def _search_loop(
    server: Server, *, stream: bool = False, side: str = "sync", **advisor: Any
) -> str:
    model = server.model()
    search = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), **advisor)
    client = ChatClient.builder(model).default_advisors(search).build()
    spec = (
        client.prompt("Weather in Paris?")
        .tools(get_weather, send_email)
        .advisors(lambda a: a.param(CONVERSATION_ID, "user-1"))
    )
    if side == "async":
        return asyncio.run(spec.acall()).content() or ""
    if stream:
        return "".join(chunk.message.content or "" for chunk in spec.stream().chat_responses())
    return spec.call().content() or ""


def test_a_two_turn_tool_loop_sends_input_items_the_api_accepts() -> None:
    server = Server("response_tool_call.json", "response_final.json")
    client = ChatClient.builder(server.model()).default_advisors(ToolCallingAdvisor()).build()
    text = (
        client.prompt("Weather in Paris?").system("Be brief.").tools(get_weather).call().content()
    )
    assert text == "It is sunny in Paris."
    assert server.refused == []
    assert server.urls[0] == "http://llm.test/v1/responses"
    second = server.requests[1]
    assert second["input"] == [
        {"type": "message", "role": "system", "content": "Be brief."},
        {"type": "message", "role": "user", "content": "Weather in Paris?"},
        {
            "type": "function_call",
            "call_id": "call_weather_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_weather_1", "output": "sunny in Paris"},
    ]
    [function] = second["tools"]
    assert function["type"] == "function"
    assert function["strict"] is False


@pytest.mark.parametrize("mode", ["call", "stream", "acall"])
def test_client_tool_search_answers_the_models_tool_search_call(mode: str) -> None:
    search = "stream_tool_search.sse" if mode == "stream" else "response_tool_search.json"
    call = "stream_tool_call.sse" if mode == "stream" else "response_tool_call.json"
    final = "stream_final.sse" if mode == "stream" else "response_final.json"
    server = Server(search, call, final)
    text = _search_loop(
        server, stream=mode == "stream", side="async" if mode == "acall" else "sync"
    )
    assert text == "It is sunny in Paris."
    assert weather_calls == ["Paris"]
    assert server.refused == []
    first, second, third = server.requests
    assert [t["type"] for t in first["tools"]] == ["tool_search"]
    assert first["tools"][0]["execution"] == "client"
    output = second["input"][-1]
    assert output["type"] == "tool_search_output"
    assert output["call_id"] == "call_search_1"
    assert [t["name"] for t in output["tools"]] == ["get_weather"]
    assert output["tools"][0]["defer_loading"] is True
    # the discovered tool is loaded by the search output, never added to the tools list,
    # so every request renders the same tools and extends the one before
    for before, after in itertools.pairwise(server.requests):
        assert after["tools"] == first["tools"]
        assert after["input"][: len(before["input"])] == before["input"]
    assert third["input"][-2]["name"] == "get_weather"


def test_tool_search_none_sends_the_search_tool_as_a_function() -> None:
    server = Server("response_final.json")
    model = server.model(tool_search="none")
    search = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    ChatClient.builder(model).default_advisors(search).build().prompt("hi").tools(
        get_weather
    ).call()
    assert [(t["type"], t["name"]) for t in server.requests[0]["tools"]] == [
        ("function", "toolSearchTool")
    ]


def test_native_search_defers_every_tool_to_the_hosted_search_and_echoes_its_items() -> None:
    server = Server("response_hosted_search.json", "response_final.json")
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search="native", pinned_tools=["send_email"]
    )
    client = ChatClient.builder(server.model()).default_advisors(advisor).build()
    text = client.prompt("Weather in Paris?").tools(get_weather, send_email).call().content()
    assert text == "It is sunny in Paris."
    assert server.refused == []
    first, second = server.requests
    assert [(t["type"], t.get("name"), t.get("defer_loading")) for t in first["tools"]] == [
        ("function", "get_weather", True),
        ("function", "send_email", None),  # pinned: sent in full
        ("tool_search", None, None),
    ]
    assert "toolSearchTool" not in json.dumps(first)
    # the server's search items go back as they came, before the call they led to
    kinds = [(i["type"], i.get("execution")) for i in second["input"]]
    assert kinds == [
        ("message", None),
        ("tool_search_call", "server"),
        ("tool_search_output", "server"),
        ("function_call", None),
        ("function_call_output", None),
    ]
    assert weather_calls == ["Paris"]


def test_native_search_on_a_model_without_one_is_toolsearchs() -> None:
    from toolsearch.models import FunctionChatModel

    seen: list[list[str]] = []

    def model(messages: Any, tools: Any) -> Any:
        from toolsearch import AssistantMessage

        seen.append([t.name for t in tools])
        return AssistantMessage(content="done")

    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search="native")
    client = ChatClient.builder(FunctionChatModel(model)).default_advisors(advisor).build()
    client.prompt("hi").tools(get_weather, send_email).call()
    assert seen == [["toolSearchTool"]]


def test_hosted_items_are_kept_on_the_assistant_message() -> None:
    server = Server("response_hosted_search.json")
    model = server.model(tool_search="hosted")
    options = ChatOptions(tool_callbacks=[*get_weather_callbacks()], deferred_tools=["get_weather"])
    response = model.call(Prompt.of("Weather in Paris?", options))
    items = response.message.metadata[ITEMS_METADATA_KEY]
    assert [i["type"] for i in items] == ["tool_search_call", "tool_search_output"]
    assert response.message.tool_calls[0].name == "get_weather"


def get_weather_callbacks() -> list[Any]:
    from toolsearch.tools import tool_callbacks

    return tool_callbacks(get_weather)


def test_stop_sequences_are_refused_before_sending() -> None:
    server = Server("response_final.json")
    with pytest.raises(ValueError, match="no stop sequences"):
        server.model().call(Prompt.of("hi", ChatOptions(stop=("END",))))
    assert server.requests == []


# -- the strict fake itself --------------------------------------------------------------


def _body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "m",
        "input": [{"type": "message", "role": "user", "content": "hi"}],
        "tools": [
            {"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": False}
        ],
    }
    return {**body, **changes}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (_body(unknown_field=1), "unknown_field"),
        (
            _body(
                tools=[{"type": "function", "name": "f", "parameters": {}, "strict": False, "x": 1}]
            ),
            "tools",
        ),
        (
            _body(
                tools=[{"type": "function", "name": "bad name", "parameters": {}, "strict": False}]
            ),
            "invalid tool name",
        ),
        (
            _body(
                input=[
                    {
                        "type": "tool_search_output",
                        "call_id": "s",
                        "execution": "client",
                        "tools": [],
                    }
                ]
            ),
            "no tool search call found",
        ),
        (
            _body(
                input=[{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]
            ),
            "no tool output found",
        ),
        (
            _body(
                input=[
                    {
                        "type": "tool_search_call",
                        "call_id": "s",
                        "execution": "client",
                        "arguments": {},
                    },
                    {
                        "type": "tool_search_output",
                        "call_id": "s",
                        "execution": "client",
                        "tools": [],
                    },
                ]
            ),
            "without a client tool_search tool",
        ),
    ],
)
def test_the_strict_fake_refuses_what_the_api_refuses(body: dict[str, Any], expected: str) -> None:
    found = problems(body)
    assert found
    assert expected in " ".join(found)


def test_the_strict_fake_accepts_a_valid_body() -> None:
    assert problems(_body()) == []


def test_a_refused_body_is_a_provider_error_naming_the_problem() -> None:
    server = Server("response_final.json")
    model = server.model(options=ChatOptions(extra={"not_a_field": True}))
    with pytest.raises(ProviderError, match="not_a_field"):
        model.call(Prompt.of("hi"))


# -- live mode on the Responses API ---------------------------------------------------------


def test_live_mode_targets_the_responses_api_with_a_base_url_and_no_key(monkeypatch: Any) -> None:
    from toolsearch.models import OpenAIResponsesChatModel
    from toolsearch_bench.live import provider_model_factory

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    factory = provider_model_factory(
        "openai-responses:gpt-5.4-mini", environ={}, base_url="http://localhost:8080/v1"
    )
    model = factory()
    assert isinstance(model, OpenAIResponsesChatModel)
    assert str(model.client.base_url).rstrip("/") == "http://localhost:8080/v1"
    assert model.effective_options(Prompt.of("hi")).extra == {"tool_choice": "auto"}


def test_live_mode_runs_ours_and_the_native_search_side_by_side() -> None:
    from toolsearch.tools import tool_callbacks
    from toolsearch_bench.data import Catalog, Query
    from toolsearch_bench.live import run_live
    from toolsearch_bench.runner import IndexSpec

    catalog = Catalog("weather", tuple(cb.definition for cb in tool_callbacks(get_weather)))
    queries = [Query(id="q1", text="Weather in Paris?", gold=("get_weather",))]
    server = Server(
        "response_tool_call.json",  # full loop
        "response_final.json",
        "response_tool_search.json",  # ours: the client tool search, the call, the answer
        "response_tool_call.json",
        "response_final.json",
        "response_hosted_search.json",  # native: the hosted search and the call, the answer
        "response_final.json",
    )
    records = run_live(
        catalog,
        queries,
        server.model,
        indexes=[IndexSpec("regex", RegexToolIndex)],
        searches=("toolsearch", "native"),
    )
    assert [(r.mode, r.index, r.success_rate) for r in records] == [
        ("full", "-", 100.0),
        ("search", "regex", 100.0),
        ("search", "native", 100.0),
    ]
    assert server.refused == []
    native_first = server.requests[5]
    assert native_first["tools"][-1] == {"type": "tool_search"}


class _Categorized:
    """A tool with a category (as MCP tools carry their server's name)."""

    def __init__(self, category: str) -> None:
        from toolsearch.tools.definition import ToolDefinition, ToolMetadata

        self.definition = ToolDefinition(
            "get_weather",
            "Current weather for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}},
            category,
        )
        self.metadata = ToolMetadata()

    def call(self, input_json: str, context: Any = None) -> str:
        weather_calls.append(json.loads(input_json)["city"])
        return "sunny"

    async def acall(self, input_json: str, context: Any = None) -> str:
        return self.call(input_json)


@pytest.mark.parametrize("namespaces", [True, False])
def test_found_tools_go_in_a_namespace_per_category(namespaces: bool) -> None:
    server = Server("response_tool_search.json", "response_tool_call.json", "response_final.json")
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    model = server.model(namespaces=namespaces)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    client.prompt("Weather in Paris?").tools(_Categorized("weather service")).call()
    assert server.refused == []
    assert weather_calls == ["Paris"]
    loaded = server.requests[1]["input"][-1]["tools"]
    call = server.requests[2]["input"][-2]
    if namespaces:
        assert [(t["type"], t["name"]) for t in loaded] == [("namespace", "weather_service")]
        assert [t["name"] for t in loaded[0]["tools"]] == ["get_weather"]
        assert call["namespace"] == "weather_service"
    else:
        assert [(t["type"], t["name"]) for t in loaded] == [("function", "get_weather")]
        assert "namespace" not in call


@pytest.mark.parametrize("mode", ["call", "stream", "acall"])
def test_a_model_without_tool_search_gets_every_tool_as_a_function_from_then_on(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    final = "stream_final.sse" if mode == "stream" else "response_final.json"
    server = Server((400, "error_400_tool_search.json"), final)
    model = server.model()
    search = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    client = ChatClient.builder(model).default_advisors(search).build()
    spec = client.prompt("hi").tools(get_weather)
    with caplog.at_level("WARNING", logger="toolsearch.models.openai_responses"):
        if mode == "call":
            text = spec.call().content()
        elif mode == "acall":
            text = asyncio.run(spec.acall()).content()
        else:
            text = "".join(c.message.content or "" for c in spec.stream().chat_responses())
    assert text == "It is sunny in Paris."
    refused, resent = server.requests
    assert refused["tools"][0]["type"] == "tool_search"
    assert [(t["type"], t["name"]) for t in resent["tools"]] == [("function", "toolSearchTool")]
    assert model.tool_search == "none"
    assert len(caplog.records) == 1
    assert "refused OpenAI's tool search" in caplog.records[0].message


def test_another_400_is_raised_as_it_is() -> None:
    server = Server((400, "error_400_tool_search.json"))
    model = server.model(tool_search="none")
    with pytest.raises(ProviderError):
        model.call(Prompt.of("hi"))
    assert len(server.requests) == 1


def test_with_injection_results_the_search_tool_stays_a_function_whose_text_is_read() -> None:
    server = Server("response_final.json")
    search = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), injection="results")
    client = ChatClient.builder(server.model()).default_advisors(search).build()
    client.prompt("hi").tools(get_weather).call()
    assert [(t["type"], t["name"]) for t in server.requests[0]["tools"]] == [
        ("function", "toolSearchTool"),
        ("function", "callTool"),
    ]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
