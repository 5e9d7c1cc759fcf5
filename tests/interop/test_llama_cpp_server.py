"""toolsearch against llama.cpp's real OpenAI-compatible server (``llama-cpp-python``).

Everything goes through toolsearch's own ``OpenAIChatModel(base_url=...)`` and the real
``ChatClient`` loop. What is checked is the wire, not the model: a 270M model does not
choose tools reliably, so each loop *forces* its tool calls with ``tool_choice`` (set per
model call by :class:`ToolChoicePlan`, an advisor inside the loop) and asks for text with
``tool_choice="none"`` once the plan is done. The assertions are about request shapes the
server accepts (an assistant tool-call turn with ``content: ""`` followed by a ``tool``
message), tool calls parsed into ``ToolCall``s, usage, and error mapping.

What this server does that a test pins (``llama-cpp-python`` 0.3.36):

* ``chatml-function-calling`` renders tools only when ``tool_choice`` is ``"auto"`` or names
  a function; without one, tools are ignored.
* It sends no usage in streams (``stream_options.include_usage`` is ignored).
* It answers HTTP 500 for request errors other than a too-long prompt (a validation error,
  an unknown forced tool); the over-long prompt is its one 400.

Run: ``python -m pytest -m interop tests/interop`` (deselected from the normal run).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import llama_server as servers
import pytest

from toolsearch import (
    AssistantMessage,
    BaseAdvisor,
    ChatClient,
    ChatOptions,
    ChatResponse,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingAdvisor,
    ToolCallingManager,
    ToolResponse,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    Usage,
    UserMessage,
    tool,
    tool_callbacks,
)
from toolsearch.chat.response import ChatResponseAggregator
from toolsearch.errors import (
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
)
from toolsearch.indexes import RegexToolIndex
from toolsearch.loop.advisor import AdvisorChain, ChatClientRequest, ChatClientResponse
from toolsearch.models import OpenAIChatModel
from toolsearch.search.builtin_tools.search_tool import DEFAULT_SEARCH_TOOL_NAME

pytestmark = pytest.mark.interop

SYSTEM = "You are a helpful assistant. Use the tools when they help."
DETERMINISTIC = ChatOptions(temperature=0.0, max_tokens=48, extra={"seed": 7})


class WeatherTools:
    """Tools that record how they were called."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    @tool(description="Current weather for a city.")
    def get_weather(self, city: str) -> str:
        self.calls.append({"tool": "get_weather", "city": city})
        return f"sunny, 21 C in {city}"

    @tool(description="Set an alarm at a time given in ISO-8601 format.")
    def set_alarm(self, time: str) -> str:
        self.calls.append({"tool": "set_alarm", "time": time})
        return f"alarm set for {time}"


class ToolChoicePlan(BaseAdvisor):
    """Inside the tool loop (order above the loop's 300): the k-th model call of a loop is
    forced to call ``plan[k]`` (when the request offers that tool), every later one gets
    ``tool_choice="none"``, so a loop is call -> result -> text whatever the model prefers.
    ``k`` is the number of tool-call turns already in the history. Every ``tool_choice``
    sent is kept in ``sent``, every usage a response (or streamed chunk) reported in
    ``usages``."""

    def __init__(self, *plan: str) -> None:
        super().__init__(order=400)
        self.plan = plan
        self.sent: list[Any] = []
        self.usages: list[Usage] = []

    def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        prompt = request.prompt
        done = sum(1 for m in prompt.messages if isinstance(m, AssistantMessage) and m.tool_calls)
        offered = {cb.definition.name for cb in prompt.options.tool_callbacks}
        choice: Any = "none"
        if done < len(self.plan) and self.plan[done] in offered:
            choice = {"type": "function", "function": {"name": self.plan[done]}}
        self.sent.append(choice)
        extra = {**prompt.options.extra, "tool_choice": choice}
        return request.with_prompt(prompt.with_options(prompt.options.replace(extra=extra)))

    def after(self, response: ChatClientResponse, chain: AdvisorChain) -> ChatClientResponse:
        if response.chat_response is not None and response.chat_response.usage is not None:
            self.usages.append(response.chat_response.usage)
        return response


def make_model(llama: servers.LlamaServer, **kwargs: Any) -> OpenAIChatModel:
    return OpenAIChatModel(
        llama.model,
        base_url=llama.base_url,
        api_key=kwargs.pop("api_key", llama.api_key),
        options=DETERMINISTIC,
        **kwargs,
    )


def client_for(model: OpenAIChatModel, plan: ToolChoicePlan, loop: Any = None) -> ChatClient:
    return (
        ChatClient.builder(model)
        .default_system(SYSTEM)
        .default_advisors(loop or ToolCallingAdvisor(max_iterations=4), plan)
        .build()
    )


def assert_weather_call(tools: WeatherTools) -> None:
    """The forced call reached the tool with a string ``city`` (parsed from the model's
    JSON and validated against the tool's schema by the loop)."""
    assert [c["tool"] for c in tools.calls] == ["get_weather"]
    assert isinstance(tools.calls[0]["city"], str)


def assert_final_text(response: ChatResponse | None, *, calls: int) -> None:
    assert response is not None
    assert not response.has_tool_calls
    assert isinstance(response.text, str)
    assert response.finish_reason in ("stop", "length")
    assert response.metadata["model_calls"] == calls


# -- (a) a two-turn tool loop -------------------------------------------------------------


def test_two_turn_tool_loop(llama: servers.LlamaServer) -> None:
    tools = WeatherTools()
    plan = ToolChoicePlan("get_weather")
    spec = client_for(make_model(llama), plan).prompt("What is the weather in Paris?")
    response = spec.tools(tools).call().chat_response()

    assert_weather_call(tools)
    # turn 2 sent the assistant tool-call turn (content "") and the tool result: HTTP 200
    assert_final_text(response, calls=2)
    assert plan.sent == [{"type": "function", "function": {"name": "get_weather"}}, "none"]
    assert response is not None
    assert response.metadata["provider"] == "openai"
    assert response.metadata["provider_finish_reason"] == "stop"


def test_two_turn_tool_loop_async(llama: servers.LlamaServer) -> None:
    tools = WeatherTools()
    spec = client_for(make_model(llama), ToolChoicePlan("get_weather")).prompt(
        "What is the weather in Lyon?"
    )
    response = asyncio.run(spec.tools(tools).acall()).chat_response()

    assert_weather_call(tools)
    assert_final_text(response, calls=2)


def test_the_history_the_second_turn_sends(llama: servers.LlamaServer) -> None:
    """The exact second-turn history, sent by hand: the model's own call back as an
    assistant turn, then its result; the server accepts it (and returns text)."""
    model = make_model(llama)
    tools = WeatherTools()
    forced = ChatOptions(
        tool_callbacks=tool_callbacks(tools),
        extra={"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    )
    first = model.call(
        Prompt([SystemMessage(content=SYSTEM), UserMessage(content="Weather in Rome?")], forced)
    )
    assert first.finish_reason == "tool_calls"
    (call,) = first.message.tool_calls
    assert call.name == "get_weather"
    assert call.id  # the server's id, sent back with the result
    assert isinstance(json.loads(call.arguments)["city"], str)

    prompt = Prompt([SystemMessage(content=SYSTEM), UserMessage(content="Weather in Rome?")])
    prompt = prompt.with_options(forced.replace(extra={"tool_choice": "none"}))
    result = ToolCallingManager().execute_tool_calls(prompt, first)
    second = model.call(prompt.with_messages(result.conversation_history))
    assert not second.has_tool_calls
    assert second.finish_reason in ("stop", "length")
    assert second.usage is not None
    assert second.usage.prompt_tokens > 0


# -- (b) streaming with tool calls ---------------------------------------------------------


def test_streamed_tool_call_is_assembled(llama: servers.LlamaServer) -> None:
    """The server streams the call's argument JSON in fragments (repeating the name and id
    in every delta); the adapter hands on one whole ``ToolCall`` with parseable JSON."""
    model = make_model(llama)
    options = ChatOptions(
        tool_callbacks=tool_callbacks(WeatherTools()),
        extra={"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    )
    prompt = Prompt([SystemMessage(content=SYSTEM), UserMessage(content="Weather in Oslo?")])
    chunks = list(model.stream(prompt.with_options(options)))
    with_calls = [c for c in chunks if c.has_tool_calls]
    assert len(with_calls) == 1  # handed on whole, once
    aggregator = ChatResponseAggregator()
    for chunk in chunks:
        aggregator.add(chunk)
    response = aggregator.result()
    (call,) = response.message.tool_calls
    assert call.name == "get_weather"
    assert call.id.startswith("call_")
    arguments = json.loads(call.arguments)
    assert isinstance(arguments, dict)
    assert isinstance(arguments["city"], str)
    assert response.finish_reason == "tool_calls"


def test_streaming_tool_loop(llama: servers.LlamaServer) -> None:
    tools = WeatherTools()
    plan = ToolChoicePlan("get_weather")
    spec = client_for(make_model(llama), plan).prompt("What is the weather in Madrid?")
    responses = list(spec.tools(tools).stream().chat_responses())

    assert_weather_call(tools)
    assert responses
    assert not any(r.has_tool_calls for r in responses)  # tool turns are executed, not shown
    assert responses[-1].finish_reason in ("stop", "length")
    assert plan.sent == [{"type": "function", "function": {"name": "get_weather"}}, "none"]


def test_async_streaming_tool_loop(llama: servers.LlamaServer) -> None:
    tools = WeatherTools()
    plan = ToolChoicePlan("get_weather")
    spec = client_for(make_model(llama), plan).prompt("What is the weather in Vienna?")

    async def run() -> list[ChatResponse]:
        return [r async for r in spec.tools(tools).astream().chat_responses()]

    responses = asyncio.run(run())
    assert_weather_call(tools)
    assert responses[-1].finish_reason in ("stop", "length")
    assert len(plan.sent) == 2


def test_auto_tool_choice_in_a_blocking_call(llama: servers.LlamaServer) -> None:
    """``tool_choice="auto"`` (what live mode sends): the server lets the model pick a
    function or a message; either way the answer maps cleanly."""
    model = make_model(llama)
    options = ChatOptions(
        tool_callbacks=tool_callbacks(WeatherTools()), extra={"tool_choice": "auto"}
    )
    prompt = Prompt([SystemMessage(content=SYSTEM), UserMessage(content="Weather in Nice?")])
    response = model.call(prompt.with_options(options))
    assert response.usage is not None
    if response.has_tool_calls:
        assert response.finish_reason == "tool_calls"
        assert {c.name for c in response.message.tool_calls} <= {"get_weather", "set_alarm"}
        assert all(isinstance(json.loads(c.arguments), dict) for c in response.message.tool_calls)
    else:
        assert response.finish_reason == "stop"


def test_a_stream_the_server_abandons_is_an_error(llama: servers.LlamaServer) -> None:
    """llama-cpp-python fails *inside* a stream after answering HTTP 200: its event stream
    then ends with no chunk and no ``[DONE]``. ``tool_choice="auto"`` with ``stream`` is such
    a case ("Automatic streaming tool choice is not supported"; a too-long prompt is another).
    Such a stream raises a retryable ``ProviderError``, not an empty answer."""
    model = make_model(llama)
    options = ChatOptions(
        tool_callbacks=tool_callbacks(WeatherTools()), extra={"tool_choice": "auto"}
    )
    prompt = Prompt([SystemMessage(content=SYSTEM), UserMessage(content="Weather in Nice?")])
    with pytest.raises(ProviderError, match="ended without any content") as caught:
        list(model.stream(prompt.with_options(options)))
    assert caught.value.retryable


def test_without_tool_choice_the_server_ignores_the_tools(llama: servers.LlamaServer) -> None:
    """The ``chatml-function-calling`` handler renders the tool list only for ``"auto"`` or a
    named function: without ``tool_choice`` the prompt is the same as with no tools."""
    model = make_model(llama)
    prompt = Prompt([SystemMessage(content=SYSTEM), UserMessage(content="Weather in Nice?")])
    plain = model.call(prompt)
    with_tools = model.call(
        prompt.with_options(ChatOptions(tool_callbacks=tool_callbacks(WeatherTools())))
    )
    auto = ChatOptions(tool_callbacks=tool_callbacks(WeatherTools()), extra={"tool_choice": "auto"})
    offered = model.call(prompt.with_options(auto))
    assert plain.usage is not None
    assert with_tools.usage is not None
    assert offered.usage is not None
    assert with_tools.usage.prompt_tokens == plain.usage.prompt_tokens
    assert offered.usage.prompt_tokens > plain.usage.prompt_tokens
    assert not with_tools.has_tool_calls


def test_the_server_leaves_tool_results_out_of_the_prompt(llama: servers.LlamaServer) -> None:
    """Its template renders no ``tool`` message: a long result costs no prompt token."""
    model = make_model(llama)
    call = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Nice"}')
    history = [
        SystemMessage(content=SYSTEM),
        UserMessage(content="Weather in Nice?"),
        AssistantMessage(tool_calls=(call,)),
    ]

    def prompt_tokens(result: str) -> int:
        answer = ToolResponse(id="call_1", name="get_weather", response_data=result)
        messages = [*history, ToolResponseMessage(responses=(answer,))]
        usage = model.call(Prompt(messages)).usage
        assert usage is not None
        return usage.prompt_tokens

    assert prompt_tokens("sunny") == prompt_tokens("sunny, " * 200)


# -- (c) usage ----------------------------------------------------------------------------


def test_usage_in_blocking_calls(llama: servers.LlamaServer) -> None:
    tools = WeatherTools()
    plan = ToolChoicePlan("get_weather")
    spec = client_for(make_model(llama), plan).prompt("What is the weather in Berlin?")
    response = spec.tools(tools).call().chat_response()
    assert response is not None
    assert len(plan.usages) == 2  # both model calls reported usage
    assert all(u.prompt_tokens > 0 and u.completion_tokens > 0 for u in plan.usages)
    assert all(u.cached_tokens == 0 for u in plan.usages)  # the server sends no cache details
    usage = response.usage
    assert usage == plan.usages[-1]
    assert response.metadata["loop_usage"] == plan.usages[0] + plan.usages[1]
    assert response.metadata["calls_without_usage"] == 0
    assert response.metadata["usage"]["total_tokens"] == (
        usage.prompt_tokens + usage.completion_tokens
    )


def test_usage_in_streams(llama: servers.LlamaServer) -> None:
    """The adapter asks for usage (``stream_options.include_usage``); llama-cpp-python 0.3.36
    sends none in streams, so every streamed turn ends with ``usage=None`` (never a made-up
    zero). A server version that honours ``include_usage`` passes too."""
    tools = WeatherTools()
    plan = ToolChoicePlan("get_weather")
    spec = client_for(make_model(llama), plan).prompt("What is the weather in Prague?")
    responses = list(spec.tools(tools).stream().chat_responses())
    assert len(plan.sent) == 2
    if plan.usages:  # a server that reports usage in streams: on each turn's last chunk
        assert len(plan.usages) == 2
        assert all(u.prompt_tokens > 0 for u in plan.usages)
    else:
        assert all(r.usage is None for r in responses)


def test_usage_none_from_a_stream_is_counted_by_the_live_benchmark(
    llama: servers.LlamaServer,
) -> None:
    """The live benchmark's recording model counts a streamed turn without usage as a
    request without usage (its token figures leave it out) instead of adding a zero."""
    from toolsearch_bench.live import _RecordingModel

    recorder = _RecordingModel(make_model(llama))
    chunks = list(recorder.stream(Prompt.of("Say hello.")))
    assert chunks
    assert recorder.requests == 1
    if chunks[-1].usage is None:
        assert recorder.requests_without_usage == 1
        assert recorder.usage == Usage()
    else:
        assert recorder.requests_without_usage == 0


# -- (d) errors ---------------------------------------------------------------------------


def test_an_over_long_prompt_is_a_non_retryable_400(llama: servers.LlamaServer) -> None:
    model = make_model(llama)
    words = " ".join(["weather"] * 5000)  # more tokens than the server's 4,096 context
    with pytest.raises(ProviderError) as caught:
        model.call(Prompt.of(words))
    error = caught.value
    assert type(error) is ProviderError
    assert error.status_code == 400
    assert error.retryable is False
    assert error.provider == "openai"
    assert "context length" in error.provider_message


def test_a_wrong_key_is_an_authentication_error(llama: servers.LlamaServer) -> None:
    model = make_model(llama, api_key="not-the-key")
    with pytest.raises(ProviderAuthenticationError) as caught:
        model.call(Prompt.of("hello"))
    assert caught.value.status_code == 401
    assert caught.value.retryable is False
    assert llama.api_key == servers.SUITE_API_KEY


def test_an_unknown_forced_tool_is_a_server_error(llama: servers.LlamaServer) -> None:
    """llama-cpp-python reports request errors other than the context length as HTTP 500
    (here: ``tool_choice`` naming a tool the request does not carry), so they map to a
    retryable ``ProviderError`` although a retry cannot succeed; the message says why."""
    model = make_model(llama)
    options = ChatOptions(
        tool_callbacks=tool_callbacks(WeatherTools()),
        extra={"tool_choice": {"type": "function", "function": {"name": "no_such_tool"}}},
    )
    with pytest.raises(ProviderError) as caught:
        model.call(Prompt.of("hello", options))
    assert caught.value.status_code == 500
    assert caught.value.retryable is True
    assert "no_such_tool" in caught.value.provider_message


def test_a_stopped_server_is_a_retryable_connection_error() -> None:
    """A server of its own: one request succeeds, the server stops, the next request on
    the same model is a ``ProviderConnectionError`` (after the SDK's own retries)."""
    servers.require_packages()
    with servers.llama_server(n_ctx=512) as server:
        model = make_model(server)
        assert model.call(Prompt.of("Say hi.")).usage is not None
        server.stop()
        with pytest.raises(ProviderConnectionError) as caught:
            model.call(Prompt.of("Say hi again."))
    assert caught.value.retryable is True
    assert caught.value.status_code is None


# -- the tool-search advisor ---------------------------------------------------------------


def test_tool_search_loop(llama: servers.LlamaServer) -> None:
    """One ``ToolSearchToolCallingAdvisor`` loop: search (forced), then the weather tool when
    the search found it (forced), then text. Which tools a 270M model's query finds is the
    model's business; the request shapes are the test's."""
    tools = WeatherTools()
    plan = ToolChoicePlan(DEFAULT_SEARCH_TOOL_NAME, "get_weather")
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), max_results=2, max_iterations=5
    )
    spec = client_for(make_model(llama), plan, advisor).prompt("What is the weather in Paris?")
    response = spec.tools(tools).call().chat_response()

    forced = [c["function"]["name"] for c in plan.sent if isinstance(c, dict)]
    assert forced[0] == DEFAULT_SEARCH_TOOL_NAME
    assert plan.sent[-1] == "none"
    assert response is not None
    assert not response.has_tool_calls
    assert response.metadata["model_calls"] == len(plan.sent)
    found_weather = forced[1:] == ["get_weather"]
    assert [c["tool"] for c in tools.calls] == (["get_weather"] if found_weather else [])
