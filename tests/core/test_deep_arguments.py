"""Arguments nested past ``MAX_ARGUMENT_DEPTH`` are an error result the model reads, in the
loop and through the MCP proxy, never a RecursionError."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolsearch import AssistantMessage, ChatClient, ToolCall, ToolResponseMessage, tool
from toolsearch.errors import InvalidToolArgumentsError
from toolsearch.models import FunctionChatModel
from toolsearch.tools.schema import MAX_ARGUMENT_DEPTH, nested_deeper_than, parse_arguments


def _nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH + 1, 5_000, 200_000])
def test_too_deep_arguments_are_invalid_arguments(depth) -> None:
    with pytest.raises(InvalidToolArgumentsError, match="nested more than"):
        parse_arguments("t", _nested(depth))


def test_arguments_at_the_limit_parse() -> None:
    assert parse_arguments("t", _nested(MAX_ARGUMENT_DEPTH - 1))["a"]
    assert not nested_deeper_than({"a": [1, {"b": 2}]}, 3)
    assert nested_deeper_than({"a": [1, {"b": {}}]}, 2)


def test_the_loop_answers_too_deep_arguments_with_an_error_result() -> None:
    @tool(description="Echo a value")
    def echo(a: dict) -> str:
        return "ran"

    def script(messages, tools):
        if isinstance(messages[-1], ToolResponseMessage):
            return messages[-1].responses[0].response_data
        return AssistantMessage(
            tool_calls=[ToolCall(id="1", name="echo", arguments=_nested(10_000))]
        )

    text = ChatClient.create(FunctionChatModel(script)).prompt("go").tools(echo).call().content()
    assert "nested more than" in text


def test_the_proxy_answers_too_deep_arguments_with_an_is_error_result() -> None:
    pytest.importorskip("mcp", reason="toolsearch[mcp] is not installed (mcp)")
    from toolsearch.mcp.proxy import CALL_TOOL, SEARCH_TOOLS, McpSearchProxy

    proxy = McpSearchProxy.__new__(McpSearchProxy)  # only _handle's argument checks run
    proxy.search_tool_name, proxy.call_tool_name = SEARCH_TOOLS, CALL_TOOL

    async def no_start() -> None:
        return None

    proxy.start = no_start  # type: ignore[method-assign]
    for inner in (_nested(10_000), json.loads(_nested(MAX_ARGUMENT_DEPTH + 5))):
        result = asyncio.run(proxy._handle(CALL_TOOL, {"name": "x", "arguments": inner}))
        assert result.is_error
        assert "levels deep" in result.content[0].text
