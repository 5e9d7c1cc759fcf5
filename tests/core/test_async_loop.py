"""The async path is native: model and tools are awaited on the caller's event loop."""

import asyncio

import pytest

from toolsearch import (
    AssistantMessage,
    ChatClient,
    MessageChatMemoryAdvisor,
    MessageWindowChatMemory,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.loop.tool_calling_advisor import LOOP_USAGE_KEY, MODEL_CALLS_KEY
from toolsearch.models import FunctionChatModel


def call_then_answer(tool_name: str):
    def script(messages, tools):
        last = messages[-1]
        if isinstance(last, UserMessage):
            return AssistantMessage(tool_calls=[ToolCall(id="1", name=tool_name)])
        assert isinstance(last, ToolResponseMessage)
        return f"answer: {last.responses[0].response_data}"

    return script


def test_async_tool_runs_on_the_callers_event_loop():
    async def main():
        caller_loop = asyncio.get_running_loop()
        ready = asyncio.Event()  # bound to the caller's loop
        ready.set()
        seen = {}

        @tool
        async def wait_until_ready() -> str:
            """Wait for the shared event."""
            seen["loop"] = asyncio.get_running_loop()
            await ready.wait()  # would fail on another loop
            return "ready"

        model = FunctionChatModel(call_then_answer("wait_until_ready"))
        response = await ChatClient.create(model).prompt("go").tools(wait_until_ready).acall()
        assert seen["loop"] is caller_loop
        return response.content()

    assert asyncio.run(main()) == "answer: ready"


def test_async_script_model_is_awaited_without_threads():
    async def main():
        caller_loop = asyncio.get_running_loop()
        loops = []

        async def script(messages, tools):
            loops.append(asyncio.get_running_loop())
            return "hello"

        response = await ChatClient.create(FunctionChatModel(script)).prompt("hi").acall()
        assert loops == [caller_loop]
        return response.content()

    assert asyncio.run(main()) == "hello"


def test_cancelling_acall_stops_the_loop():
    ran = []

    @tool
    async def slow() -> str:
        """A slow tool."""
        ran.append("start")
        await asyncio.sleep(10)
        ran.append("end")
        return "done"

    def script(messages, tools):
        return AssistantMessage(tool_calls=[ToolCall(id=str(len(messages)), name="slow")])

    async def main():
        spec = ChatClient.create(FunctionChatModel(script)).prompt("go").tools(slow)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(spec.acall(), timeout=0.2)
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert ran == ["start"]


def test_astream_runs_the_loop_and_yields_the_final_answer():
    @tool
    async def lookup() -> str:
        """Look something up."""
        return "42"

    async def main():
        model = FunctionChatModel(call_then_answer("lookup"))
        spec = ChatClient.create(model).prompt("q").tools(lookup)
        return [chunk async for chunk in spec.astream().content()]

    assert "".join(asyncio.run(main())) == "answer: 42"


def test_async_memory_advisor_inside_the_loop_keeps_tool_messages():
    @tool
    def lookup() -> str:
        """Look something up."""
        return "42"

    memory = MessageWindowChatMemory()
    model = FunctionChatModel(call_then_answer("lookup"))
    client = (
        ChatClient.builder(model)
        .default_advisors(MessageChatMemoryAdvisor(memory, order=400))
        .build()
    )

    async def main():
        return (await client.prompt("q").tools(lookup).acall()).content()

    assert asyncio.run(main()) == "answer: 42"
    assert [m.role for m in memory.get("default")] == ["user", "assistant", "tool", "assistant"]


def test_final_response_reports_usage_of_the_whole_loop():
    @tool
    def lookup() -> str:
        """Look something up."""
        return "42"

    model = FunctionChatModel(call_then_answer("lookup"))
    response = ChatClient.create(model).prompt("q").tools(lookup).call().chat_response()
    first, second = (model.requests[0], model.requests[1])
    assert first is not second
    loop_usage = response.metadata[LOOP_USAGE_KEY]
    assert response.metadata[MODEL_CALLS_KEY] == 2
    assert loop_usage.prompt_tokens > response.usage.prompt_tokens > 0
