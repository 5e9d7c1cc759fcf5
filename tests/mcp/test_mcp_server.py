"""toolsearch tools served over MCP: in-process through the SDK's client, and as a stdio
subprocess (``serve_tools``) consumed back through ``McpToolProvider``."""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp_servers.helpers import TOOLS, free_port, running

from toolsearch import ToolContext, ToolParam, tool
from toolsearch.errors import ToolExecutionError
from toolsearch.mcp import McpToolProvider, build_server
from toolsearch.tools import tool_callbacks


class Alarms:
    @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
    def set_alarm(
        self, time: Annotated[str, ToolParam(description="Time in ISO-8601 format")]
    ) -> str:
        return f"alarm set for {time}"


@tool
def multiply(a: int, b: int = 2) -> int:
    """Multiply two integers."""
    return a * b


@tool
async def greet(name: str, context: ToolContext) -> dict[str, str]:
    """Greet someone on behalf of the current user."""
    return {"greeting": f"hello {name}", "from": str(context.get("user"))}


@tool
def explode(reason: str) -> str:
    """Always raises."""
    raise RuntimeError(f"exploded: {reason}")


TOOLSET = [Alarms(), multiply, greet, explode]


def in_process(coroutine_function):
    server = build_server(*TOOLSET, name="unit", tool_context={"user": "ada"})

    async def run():
        async with Client(server) as client:
            return await coroutine_function(client)

    return asyncio.run(run())


def test_listed_tools_carry_toolsearch_schemas():
    async def listing(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in in_process(listing)}
    expected = {cb.definition.name: cb.definition for cb in tool_callbacks(*TOOLSET)}
    assert set(tools) == set(expected)
    for name, definition in expected.items():
        assert tools[name].description == definition.description
        assert tools[name].input_schema == dict(definition.input_schema)
    # the ToolContext parameter never reaches the schema
    assert set(tools["greet"].input_schema["properties"]) == {"name"}


def test_calls_convert_results_and_pass_the_tool_context():
    async def calls(client):
        alarm = await client.call_tool("set_alarm", {"time": "2026-01-01T07:00"})
        product = await client.call_tool("multiply", {"a": 6})
        greeting = await client.call_tool("greet", {"name": "bob"})
        return alarm, product, greeting

    alarm, product, greeting = in_process(calls)
    assert alarm.content[0].text == "alarm set for 2026-01-01T07:00"
    assert not alarm.is_error
    assert product.content[0].text == "12"
    assert greeting.content[0].text == '{"greeting":"hello bob","from":"ada"}'


def test_failures_are_error_results():
    async def calls(client):
        return (
            await client.call_tool("explode", {"reason": "on purpose"}),
            await client.call_tool("multiply", {"a": "six"}),
            await client.call_tool("nope", {}),
        )

    raised, invalid, unknown = in_process(calls)
    assert raised.is_error
    assert "exploded: on purpose" in raised.content[0].text
    assert invalid.is_error
    assert "multiply" in invalid.content[0].text
    assert unknown.is_error
    assert "nope" in unknown.content[0].text


def test_a_served_toolset_round_trips_through_the_provider_over_stdio():
    with McpToolProvider({"alarms": {"command": sys.executable, "args": [str(TOOLS)]}}) as p:
        tools = {cb.definition.name: cb for cb in p.tool_callbacks()}
        assert set(tools) == {"set_alarm", "multiply", "whose", "explode"}
        assert tools["set_alarm"].definition.input_schema["properties"]["time"] == {
            "description": "Time in ISO-8601 format",
            "type": "string",
        }
        assert tools["set_alarm"].call('{"time": "noon"}') == "alarm set for noon"
        assert tools["multiply"].call('{"a": 3, "b": 5}') == "15"
        assert tools["whose"].call("{}") == "ada"
        with pytest.raises(ToolExecutionError, match="exploded: now"):
            tools["explode"].call('{"reason": "now"}')


def test_serve_tools_over_streamable_http():
    port = free_port()
    with (
        running([sys.executable, str(TOOLS), "--http", str(port)], port),
        McpToolProvider({"alarms": {"url": f"http://127.0.0.1:{port}/mcp"}}) as p,
    ):
        assert p.call_tool("multiply", {"a": 7}) == "14"
