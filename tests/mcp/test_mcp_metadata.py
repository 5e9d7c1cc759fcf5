"""MCP tool metadata (title, annotations, output schema, structured results) kept on the way
in (``McpToolProvider``), and sent on the way out (``serve_tools``/``build_server`` and the
tool-search proxy), through a real stdio server (``tests/mcp_servers/metadata_server.py``)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from pydantic import BaseModel

from toolsearch import tool
from toolsearch.indexes import RegexToolIndex
from toolsearch.mcp import McpSearchProxy, McpToolProvider, build_server
from toolsearch.tools import ToolAnnotations, ToolDefinition, tool_callbacks

SERVER = Path(__file__).parents[1] / "mcp_servers" / "metadata_server.py"
READ_HINTS = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
FILE_INFO = {"path": "/etc/motd", "size": 11, "lines": ["hello", "world"]}


@pytest.fixture(scope="module")
def provider() -> Iterator[McpToolProvider]:
    with McpToolProvider({"files": {"command": sys.executable, "args": [str(SERVER)]}}) as p:
        yield p


def _served(server: Any, scenario: Any) -> Any:
    async def run() -> Any:
        async with Client(server) as client:
            return await scenario(client)

    return asyncio.run(run())


def _listed_and_called(server: Any) -> tuple[dict[str, Any], Any]:
    async def scenario(client: Any) -> tuple[dict[str, Any], Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools, await client.call_tool("files.read", {"path": "/etc/motd"})

    return _served(server, scenario)  # type: ignore[no-any-return]


def test_an_mcp_tools_metadata_is_kept_by_the_client(provider: McpToolProvider) -> None:
    tools = {cb.definition.name: cb.definition for cb in provider.tool_callbacks()}
    read = tools["files.read"]
    assert read.title == "Read a file"
    assert read.annotations == ToolAnnotations(read_only=True, idempotent=True, open_world=False)
    assert read.output_schema is not None
    assert read.output_schema["type"] == "object"
    assert set(read.output_schema["properties"]) == {"path", "size", "lines"}
    assert tools["delete_file"].annotations == ToolAnnotations(destructive=True)
    assert tools["delete_file"].output_schema is None  # a text result declares no structure
    # metadata stays out of the fingerprint: index caches and sessions are unchanged
    plain = ToolDefinition(read.name, read.description, read.input_schema, category=read.category)
    assert plain.fingerprint == read.fingerprint


def test_serve_tools_sends_the_metadata_and_structured_content_back_out(
    provider: McpToolProvider,
) -> None:
    """Server -> McpToolProvider -> build_server (what serve_tools runs) -> MCP client."""
    tools, result = _listed_and_called(build_server(*provider.tool_callbacks(), name="again"))
    read = tools["files.read"]
    assert read.title == "Read a file"
    assert read.annotations.model_dump(by_alias=True, exclude_none=True) == {
        **READ_HINTS,
        "title": "Read a file",
    }
    assert read.output_schema == provider.tool_callbacks()[0].definition.output_schema
    assert tools["delete_file"].annotations.destructive_hint is True
    assert not result.is_error
    assert result.structured_content == FILE_INFO  # forwarded as the server sent it
    assert json.loads(result.content[0].text) == FILE_INFO


def test_the_proxy_sends_the_metadata_out(provider: McpToolProvider) -> None:
    proxy = McpSearchProxy(provider, index=RegexToolIndex())

    async def scenario(client: Any) -> tuple[Any, Any, Any]:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_tools", {"query": "files"})
        called = await client.call_tool(
            "call_tool", {"name": "files.read", "arguments": {"path": "/etc/motd"}}
        )
        return listed, found, called

    listed, found, called = _served(proxy.build_server(), scenario)
    assert listed["search_tools"].annotations.read_only_hint is True
    entries = {t["name"]: t for t in found.structured_content["tools"]}
    read = entries["files.read"]
    assert read["title"] == "Read a file"
    assert read["annotations"] == READ_HINTS
    assert read["outputSchema"]["properties"]["lines"]["type"] == "array"
    assert entries["delete_file"]["annotations"] == {"destructiveHint": True}
    assert "outputSchema" not in entries["delete_file"]
    assert called.structured_content == FILE_INFO


class Forecast(BaseModel):
    city: str
    celsius: float


@tool(title="Forecast", annotations=ToolAnnotations(read_only=True))
def forecast(city: str) -> Forecast:
    """Tomorrow's forecast for a city."""
    return Forecast(city=city, celsius=21.5)


@tool
def counts(text: str) -> dict[str, int]:
    """Word counts of a text."""
    return {word: text.split().count(word) for word in set(text.split())}


@tool
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


def test_a_dict_or_model_result_is_structured_content_with_an_output_schema() -> None:
    definitions = {cb.definition.name: cb.definition for cb in tool_callbacks(forecast, counts)}
    assert definitions["forecast"].output_schema == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["city", "celsius"],
    }
    assert definitions["counts"].output_schema == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }

    async def scenario(client: Any) -> tuple[Any, ...]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return (
            tools,
            await client.call_tool("forecast", {"city": "Oslo"}),
            await client.call_tool("counts", {"text": "a b a"}),
            await client.call_tool("shout", {"text": "hi"}),
        )

    tools, weather, counted, shouted = _served(build_server(forecast, counts, shout), scenario)
    assert tools["forecast"].title == "Forecast"
    assert tools["forecast"].output_schema == definitions["forecast"].output_schema
    assert tools["shout"].output_schema is None
    assert weather.structured_content == {"city": "Oslo", "celsius": 21.5}
    assert counted.structured_content == {"a": 2, "b": 1}
    assert shouted.structured_content is None
    assert shouted.content[0].text == "HI"
