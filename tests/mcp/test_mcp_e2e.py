"""MCP tools in the tool loop: ``ChatClient`` with a scripted ``FunctionChatModel`` and the
``ToolSearchToolCallingAdvisor``, over tools from real MCP server subprocesses, sync and
async. The scripted model decides only from what each request shows it."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp_servers.helpers import stdio

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.mcp import McpToolProvider
from toolsearch.models import FunctionChatModel

# search mechanics on a few tools: the plain search loop (tests/conftest.py, cold_search)
pytestmark = pytest.mark.cold_search

SEARCH = "toolSearchTool"


def names_in(data: str) -> list[str]:
    parsed = json.loads(data)
    if not isinstance(parsed, list):
        return []
    return [item["name"] if isinstance(item, dict) else item for item in parsed]


class Agent:
    """Search with the user's words, call the first hit with arguments from the request,
    then answer with the tool's result. Records the tool names each request carried."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def __call__(self, messages: list[Any], tools: list[Any]) -> AssistantMessage:
        self.seen.append([t.name for t in tools])
        request = next(m.content for m in reversed(messages) if isinstance(m, UserMessage))
        last = messages[-1]
        if isinstance(last, ToolResponseMessage):
            response = last.responses[0]
            if response.name != SEARCH:
                return AssistantMessage(content=f"Result: {response.response_data}")
            visible = {t.name: t for t in tools}
            hits = [n for n in names_in(response.response_data) if n in visible]
            if not hits:
                return AssistantMessage(content="no tool found")
            tool = visible[hits[0]]
            properties = tool.input_schema.get("properties", {})
            arguments: dict[str, Any] = {}
            if "city" in properties:
                arguments["city"] = re.findall(r"in (\w+)", request)[0]
            if {"a", "b"} <= set(properties):
                a, b = (int(x) for x in re.findall(r"\d+", request)[:2])
                arguments.update(a=a, b=b)
            call = ToolCall(id=f"c{len(messages)}", name=tool.name, arguments=json.dumps(arguments))
            return AssistantMessage(content=None, tool_calls=(call,))
        call = ToolCall(id="s1", name=SEARCH, arguments=json.dumps({"query": request}))
        return AssistantMessage(content=None, tool_calls=(call,))


@pytest.fixture(scope="module")
def mcp_tools():
    with McpToolProvider({"alpha": stdio("alpha"), "beta": stdio("beta")}) as provider:
        yield provider


def test_tool_search_over_mcp_tools_sync(mcp_tools):
    agent = Agent()
    client = (
        ChatClient.builder(FunctionChatModel(agent))
        .default_advisors(ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex(), max_results=3))
        .build()
    )
    answer = (
        client.prompt("What is the weather forecast in Paris?")
        .tools(mcp_tools.tool_callbacks())
        .advisors(lambda a: a.param(CONVERSATION_ID, "mcp-sync"))
        .call()
        .content()
    )
    assert answer == "Result: sunny in Paris"
    assert agent.seen[0] == [SEARCH]  # the first request carries only the search tool
    assert len(mcp_tools.tool_callbacks()) > 10
    assert set(agent.seen[-1]) <= {SEARCH, "alpha__weather_forecast", "beta__weather_forecast"}
    assert "alpha__weather_forecast" in agent.seen[-1]


def test_tool_search_over_mcp_tools_async(mcp_tools):
    agent = Agent()
    client = (
        ChatClient.builder(FunctionChatModel(agent))
        .default_advisors(ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex(), max_results=3))
        .build()
    )

    async def ask() -> str | None:
        callbacks = await mcp_tools.atool_callbacks()
        response = await (
            client.prompt("Add two integers: 19 and 23")
            .tools(callbacks)
            .advisors(lambda a: a.param(CONVERSATION_ID, "mcp-async"))
            .acall()
        )
        return response.content()

    assert asyncio.run(ask()) == "Result: 42"
    assert agent.seen[0] == [SEARCH]


def test_a_failing_mcp_tool_does_not_stop_the_loop(mcp_tools):
    def model(messages: list[Any], tools: list[Any]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, ToolResponseMessage):
            return AssistantMessage(content=last.responses[0].response_data)
        call = ToolCall(id="f1", name="alpha__fail", arguments='{"message": "quota exceeded"}')
        return AssistantMessage(content=None, tool_calls=(call,))

    answer = (
        ChatClient.create(FunctionChatModel(model))
        .prompt("Try the failing tool")
        .tools(mcp_tools.tool_callbacks())
        .call()
        .content()
    )
    # the tool raised (the ToolCallback contract); the loop made it the model's result
    assert answer.startswith("McpToolError: ")
    assert "quota exceeded" in answer
