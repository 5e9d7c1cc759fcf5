"""Streaming and async: ``.stream()``, ``.astream()``, ``.acall()`` over the tool loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ChatResponse,
    SystemMessage,
    ToolCall,
    ToolCallingAdvisor,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.loop import ChatClientRequest, ChatClientResponse, ToolExecutionResult
from toolsearch.loop.advisor import AdvisorChain
from toolsearch.models import FunctionChatModel

# search mechanics on a few tools: the plain search loop (tests/conftest.py, cold_search)
pytestmark = pytest.mark.cold_search

# -- helpers ---------------------------------------------------------------------------

calls: list[dict[str, Any]] = []


@pytest.fixture(autouse=True)
def _reset() -> None:
    calls.clear()


@tool
def x(a: int) -> str:
    """Tool x."""
    calls.append({"x": a})
    return f"x got {a}"


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    calls.append({"get_weather": city})
    return f"sunny in {city}"


@tool(return_direct=True)
def direct(n: int) -> str:
    """Return-direct tool."""
    calls.append({"direct": n})
    return f"direct result {n}"


def _has_tool_result(messages: list) -> bool:
    return any(isinstance(m, ToolResponseMessage) for m in messages)


def weather_then_answer() -> FunctionChatModel:
    """Calls get_weather(Oslo), then answers in several word chunks."""

    def script(messages: list, tools: list) -> AssistantMessage | str:
        if not _has_tool_result(messages):
            return AssistantMessage(
                tool_calls=[ToolCall(id="w1", name="get_weather", arguments='{"city": "Oslo"}')]
            )
        result = [m for m in messages if isinstance(m, ToolResponseMessage)][-1].text
        return f"The weather: {result}."

    return FunctionChatModel(script)


# -- stream ----------------------------------------------------------------------------


def test_stream_without_tools_yields_chunks() -> None:
    model = FunctionChatModel(lambda m, t: "one two three")
    chunks = list(ChatClient.create(model).prompt("hi").stream().content())
    assert len(chunks) > 1
    assert "".join(chunks) == "one two three"


def test_stream_runs_the_tool_loop_and_yields_only_the_final_answer() -> None:
    model = weather_then_answer()
    chunks = list(ChatClient.create(model).prompt("weather?").tools(get_weather).stream().content())
    assert "".join(chunks) == "The weather: sunny in Oslo."
    assert len(chunks) > 1  # still streamed, not one blob
    assert calls == [{"get_weather": "Oslo"}]
    assert len(model.requests) == 2


def test_stream_chat_responses_carry_no_tool_call_chunks() -> None:
    responses = list(
        ChatClient.create(weather_then_answer())
        .prompt("weather?")
        .tools(get_weather)
        .stream()
        .chat_responses()
    )
    assert responses
    assert all(isinstance(r, ChatResponse) for r in responses)
    assert not any(r.message.tool_calls for r in responses)


def test_stream_hides_text_of_tool_call_iterations() -> None:
    """Text the model streams before its tool calls belongs to a tool turn, not the answer."""

    def script(messages: list, tools: list):
        if not _has_tool_result(messages):
            yield "Let me "
            yield "check. "
            yield AssistantMessage(
                tool_calls=[ToolCall(id="w1", name="get_weather", arguments='{"city": "Rome"}')]
            )
        else:
            yield "Final "
            yield "answer."

    chunks = list(
        ChatClient.create(FunctionChatModel(script))
        .prompt("weather?")
        .tools(get_weather)
        .stream()
        .content()
    )
    assert calls == [{"get_weather": "Rome"}]
    assert chunks == ["Final ", "answer."]


def test_stream_aggregates_tool_call_deltas() -> None:
    def script(messages: list, tools: list):
        if not _has_tool_result(messages):
            yield AssistantMessage(tool_calls=[ToolCall(id="c1", name="x", arguments="")])
            yield AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments='{"a":')])
            yield AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments="1}")])
        else:
            result = [m for m in messages if isinstance(m, ToolResponseMessage)][-1]
            yield f"done: {result.text}"

    model = FunctionChatModel(script)
    chunks = list(ChatClient.create(model).prompt("go").tools(x).stream().content())
    assert calls == [{"x": 1}]
    assert "".join(chunks) == "done: x got 1"
    assistant = [m for m in model.requests[1].messages if isinstance(m, AssistantMessage)]
    assert assistant[0].tool_calls == (ToolCall(id="c1", name="x", arguments='{"a":1}'),)
    assert json.loads(assistant[0].tool_calls[0].arguments) == {"a": 1}
    tool_results = [m for m in model.requests[1].messages if isinstance(m, ToolResponseMessage)]
    assert tool_results[0].responses[0].id == "c1"
    assert tool_results[0].responses[0].name == "x"


def test_call_aggregates_streamed_tool_call_deltas_too() -> None:
    def script(messages: list, tools: list):
        if not _has_tool_result(messages):
            yield AssistantMessage(tool_calls=[ToolCall(id="c1", name="x", arguments="")])
            yield AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments='{"a":')])
            yield AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments="1}")])
        else:
            yield "ok"

    text = ChatClient.create(FunctionChatModel(script)).prompt("go").tools(x).call().content()
    assert text == "ok"
    assert calls == [{"x": 1}]


def test_stream_two_tool_iterations() -> None:
    def script(messages: list, tools: list) -> AssistantMessage | str:
        done = sum(isinstance(m, ToolResponseMessage) for m in messages)
        if done < 2:
            return AssistantMessage(
                tool_calls=[ToolCall(id=f"c{done}", name="x", arguments=json.dumps({"a": done}))]
            )
        return "all done now"

    chunks = list(
        ChatClient.create(FunctionChatModel(script)).prompt("go").tools(x).stream().content()
    )
    assert "".join(chunks) == "all done now"
    assert calls == [{"x": 0}, {"x": 1}]


def test_stream_return_direct() -> None:
    model = FunctionChatModel(
        lambda m, t: AssistantMessage(
            tool_calls=[ToolCall(id="d1", name="direct", arguments='{"n": 5}')]
        )
    )
    chunks = list(ChatClient.create(model).prompt("go").tools(direct).stream().content())
    assert "".join(chunks) == "direct result 5"
    assert calls == [{"direct": 5}]
    assert len(model.requests) == 1


def test_stream_return_direct_finish_reason() -> None:
    model = FunctionChatModel(
        lambda m, t: AssistantMessage(
            tool_calls=[ToolCall(id="d1", name="direct", arguments='{"n": 2}')]
        )
    )
    responses = list(ChatClient.create(model).prompt("go").tools(direct).stream().chat_responses())
    assert responses[-1].finish_reason == "return_direct"
    assert not any(r.message.tool_calls for r in responses)


def test_call_return_direct_matches_stream() -> None:
    model = FunctionChatModel(
        lambda m, t: AssistantMessage(
            tool_calls=[ToolCall(id="d1", name="direct", arguments='{"n": 3}')]
        )
    )
    assert ChatClient.create(model).prompt("go").tools(direct).call().content() == "direct result 3"


def test_stream_with_system_and_default_tools() -> None:
    model = weather_then_answer()
    client = ChatClient.builder(model).default_system("sys").default_tools(get_weather).build()
    assert "".join(client.prompt("weather?").stream().content()) == "The weather: sunny in Oslo."
    assert model.requests[0].messages == (
        SystemMessage(content="sys"),
        UserMessage(content="weather?"),
    )


# -- hooks under stream ----------------------------------------------------------------


class HookRecorder(ToolCallingAdvisor):
    """Overrides only the blocking hooks; the stream twins must fall back to them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log: list[str] = []

    def do_initialize_loop(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientRequest:
        self.log.append("initialize")
        return request

    def do_before_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        self.log.append("before")
        return request

    def do_after_call(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        self.log.append("after")
        return response

    def do_get_next_instructions_for_tool_call(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        result: ToolExecutionResult,
    ) -> list:
        self.log.append("next")
        return super().do_get_next_instructions_for_tool_call(request, response, result)

    def do_finalize_loop(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        self.log.append("finalize")
        return response


def test_stream_hook_twins_default_to_blocking_hooks() -> None:
    advisor = HookRecorder()
    chunks = list(
        ChatClient.create(weather_then_answer())
        .prompt("weather?")
        .tools(get_weather)
        .advisors(advisor)
        .stream()
        .content()
    )
    assert "".join(chunks) == "The weather: sunny in Oslo."
    assert advisor.log == ["initialize", "before", "after", "next", "before", "after", "finalize"]


def test_stream_and_call_run_the_same_hooks() -> None:
    streamed = HookRecorder()
    called = HookRecorder()
    list(
        ChatClient.create(weather_then_answer())
        .prompt("w")
        .tools(get_weather)
        .advisors(streamed)
        .stream()
        .content()
    )
    ChatClient.create(weather_then_answer()).prompt("w").tools(get_weather).advisors(
        called
    ).call().content()
    assert streamed.log == called.log


def test_stream_before_hook_changes_visible_tools() -> None:
    from toolsearch import tool_callbacks

    seen: list[list[str]] = []

    def script(messages: list, tools: list) -> str:
        seen.append([t.name for t in tools])
        return "ok"

    class OnlyX(ToolCallingAdvisor):
        def do_before_call(
            self, request: ChatClientRequest, chain: AdvisorChain
        ) -> ChatClientRequest:
            options = request.prompt.options.replace(tool_callbacks=tool_callbacks(x))
            return request.with_prompt(request.prompt.with_options(options))

    list(
        ChatClient.create(FunctionChatModel(script))
        .prompt("go")
        .tools(get_weather)
        .advisors(OnlyX())
        .stream()
        .content()
    )
    assert seen == [["x"]]


def test_stream_finalize_hook_result_is_what_return_direct_yields() -> None:
    class Tag(ToolCallingAdvisor):
        def do_finalize_loop(
            self, response: ChatClientResponse, chain: AdvisorChain
        ) -> ChatClientResponse:
            assert response.chat_response is not None
            text = response.chat_response.text + " (tagged)"
            return response.with_chat_response(ChatResponse(AssistantMessage(content=text)))

    model = FunctionChatModel(
        lambda m, t: AssistantMessage(
            tool_calls=[ToolCall(id="d1", name="direct", arguments='{"n": 1}')]
        )
    )
    chunks = list(
        ChatClient.create(model).prompt("go").tools(direct).advisors(Tag()).stream().content()
    )
    assert "".join(chunks) == "direct result 1 (tagged)"


def test_stream_history_disabled() -> None:
    def script(messages: list, tools: list) -> AssistantMessage | str:
        ids = [r.id for m in messages if isinstance(m, ToolResponseMessage) for r in m.responses]
        if not ids:
            return AssistantMessage(tool_calls=[ToolCall(id="1", name="x", arguments='{"a": 1}')])
        if ids[-1] == "1":
            return AssistantMessage(tool_calls=[ToolCall(id="2", name="x", arguments='{"a": 2}')])
        return "finished"

    model = FunctionChatModel(script)
    text = "".join(
        ChatClient.create(model)
        .prompt("go")
        .system("sys")
        .tools(x)
        .advisors(ToolCallingAdvisor(conversation_history_enabled=False))
        .stream()
        .content()
    )
    assert text == "finished"
    assert [[m.role for m in p.messages] for p in model.requests] == [
        ["system", "user"],
        ["system", "tool"],
        ["system", "tool"],
    ]


# -- async twins -----------------------------------------------------------------------


def test_acall_content() -> None:
    async def main() -> str | None:
        spec = ChatClient.create(weather_then_answer()).prompt("weather?").tools(get_weather)
        response = await spec.acall()
        return response.content()

    assert asyncio.run(main()) == "The weather: sunny in Oslo."
    assert calls == [{"get_weather": "Oslo"}]


def test_astream_content() -> None:
    async def main() -> list[str]:
        spec = ChatClient.create(weather_then_answer()).prompt("weather?").tools(get_weather)
        return [chunk async for chunk in spec.astream().content()]

    chunks = asyncio.run(main())
    assert "".join(chunks) == "The weather: sunny in Oslo."
    assert len(chunks) > 1
    assert calls == [{"get_weather": "Oslo"}]


def test_async_script_and_async_tool_under_acall_and_astream() -> None:
    async_calls: list[str] = []

    @tool
    async def lookup(key: str) -> str:
        """Async lookup."""
        await asyncio.sleep(0)
        async_calls.append(key)
        return f"value of {key}"

    async def script(messages: list, tools: list) -> AssistantMessage | str:
        await asyncio.sleep(0)
        if not _has_tool_result(messages):
            return AssistantMessage(
                tool_calls=[ToolCall(id="k1", name="lookup", arguments='{"key": "k"}')]
            )
        return "got " + [m for m in messages if isinstance(m, ToolResponseMessage)][-1].text

    async def main() -> tuple[str | None, str]:
        client = ChatClient.create(FunctionChatModel(script))
        called = (await client.prompt("q").tools(lookup).acall()).content()
        streamed = "".join([c async for c in client.prompt("q").tools(lookup).astream().content()])
        return called, streamed

    called, streamed = asyncio.run(main())
    assert called == "got value of k"
    assert streamed == "got value of k"
    assert async_calls == ["k", "k"]


def test_async_generator_script_under_astream() -> None:
    async def script(messages: list, tools: list):
        if not _has_tool_result(messages):
            yield AssistantMessage(tool_calls=[ToolCall(id="c1", name="x", arguments="")])
            yield AssistantMessage(tool_calls=[ToolCall(id="", name="", arguments='{"a": 4}')])
        else:
            yield "async "
            yield "final"

    async def main() -> list[str]:
        spec = ChatClient.create(FunctionChatModel(script)).prompt("go").tools(x)
        return [c async for c in spec.astream().content()]

    assert asyncio.run(main()) == ["async ", "final"]
    assert calls == [{"x": 4}]


def test_async_tool_under_sync_call_and_stream() -> None:
    @tool
    async def aweather(city: str) -> str:
        """Async weather."""
        await asyncio.sleep(0)
        return f"cloudy in {city}"

    def script(messages: list, tools: list) -> AssistantMessage | str:
        if not _has_tool_result(messages):
            return AssistantMessage(
                tool_calls=[ToolCall(id="1", name="aweather", arguments='{"city": "Bergen"}')]
            )
        return messages[-1].text

    client = ChatClient.create(FunctionChatModel(script))
    assert client.prompt("w").tools(aweather).call().content() == "cloudy in Bergen"
    assert "".join(client.prompt("w").tools(aweather).stream().content()) == "cloudy in Bergen"


def test_astream_return_direct() -> None:
    model = FunctionChatModel(
        lambda m, t: AssistantMessage(
            tool_calls=[ToolCall(id="d1", name="direct", arguments='{"n": 9}')]
        )
    )

    async def main() -> str:
        spec = ChatClient.create(model).prompt("go").tools(direct)
        return "".join([c async for c in spec.astream().content()])

    assert asyncio.run(main()) == "direct result 9"


# -- typed search hits in the streaming and async loops -----------------------------------


def _search_then_answer() -> FunctionChatModel:
    def script(messages: list, tools: list) -> AssistantMessage | str:
        if not _has_tool_result(messages):
            return AssistantMessage(
                tool_calls=[
                    ToolCall(id="s1", name="toolSearchTool", arguments='{"query": "weather"}')
                ]
            )
        return "found"

    return FunctionChatModel(script)


@pytest.mark.parametrize("mode", ["stream", "astream", "acall"])
def test_search_hits_reach_the_model_in_streaming_and_async_loops(mode: str) -> None:
    from toolsearch import ToolSearchToolCallingAdvisor
    from toolsearch.indexes import RegexToolIndex

    model = _search_then_answer()
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    spec = ChatClient.builder(model).default_advisors(advisor).build().prompt("w")
    spec = spec.tools(get_weather, x)
    if mode == "stream":
        assert "".join(spec.stream().content()) == "found"
    elif mode == "astream":

        async def collect() -> str:
            return "".join([part async for part in spec.astream().content()])

        assert asyncio.run(collect()) == "found"
    else:
        assert asyncio.run(spec.acall()).content() == "found"
    [result] = [m for m in model.requests[1].messages if isinstance(m, ToolResponseMessage)]
    [response] = result.responses
    assert response.search_hits is not None
    assert [hit.name for hit in response.search_hits] == ["get_weather"]
