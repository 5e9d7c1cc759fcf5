"""The tool-search MCP proxy, driven as an MCP client drives it: ``search_tools`` then
``call_tool``, in-process through the SDK's client and as ``python -m toolsearch.cli mcp
proxy`` over stdio and streamable HTTP. Downstream servers are real subprocesses."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp_servers.helpers import DEMO, cli_proxy, eventually, free_port, running, stdio, with_client

from toolsearch.indexes import RegexToolIndex
from toolsearch.mcp import McpSearchProxy, McpToolProvider


def search(payload) -> list[str]:
    return [t["name"] for t in json.loads(payload.content[0].text)["tools"]]


@pytest.fixture(scope="module")
def proxy():
    provider = McpToolProvider(
        {"alpha": stdio("alpha"), "beta": stdio("beta", include_tools=["whoami", "add"])}
    )
    with provider:
        yield McpSearchProxy(provider, index="bm25", max_results=3)


def test_the_client_sees_two_tools(proxy):
    async def scenario(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in with_client(proxy, scenario)}
    assert set(tools) == {"search_tools", "call_tool"}
    assert tools["search_tools"].input_schema["required"] == ["query"]
    assert "alpha" in tools["search_tools"].description  # the servers are named


def test_search_returns_names_descriptions_and_schemas_then_call_runs(proxy):
    async def scenario(client):
        found = await client.call_tool(
            "search_tools", {"query": "weather forecast for a city", "max_results": 2}
        )
        called = await client.call_tool(
            "call_tool", {"name": "weather_forecast", "arguments": {"city": "Lima"}}
        )
        return found, called

    found, called = with_client(proxy, scenario)
    payload = json.loads(found.content[0].text)
    assert payload == found.structured_content
    first = payload["tools"][0]
    assert first["name"] == "weather_forecast"
    assert first["description"].startswith("Get the weather forecast")
    assert first["input_schema"]["required"] == ["city"]
    assert first["server"] == "alpha"
    assert len(payload["tools"]) <= 2
    assert not called.is_error
    assert called.content[0].text == "sunny in Lima"


def test_prefixed_names_and_exact_name_queries(proxy):
    async def scenario(client):
        exact = await client.call_tool("search_tools", {"query": "beta__whoami"})
        called = await client.call_tool("call_tool", {"name": "beta__whoami"})
        string_arguments = await client.call_tool(
            "call_tool", {"name": "alpha__add", "arguments": '{"a": 2, "b": 2}'}
        )
        return exact, called, string_arguments

    exact, called, string_arguments = with_client(proxy, scenario)
    assert search(exact)[0] == "beta__whoami"
    assert called.content[0].text == "beta"
    assert string_arguments.content[0].text == "4"


def test_errors_are_results(proxy):
    async def scenario(client):
        return (
            await client.call_tool("call_tool", {"name": "no_such_tool", "arguments": {}}),
            await client.call_tool("call_tool", {"name": "fail", "arguments": {"message": "x"}}),
            await client.call_tool("search_tools", {"query": "  "}),
            await client.call_tool("call_tool", {"name": "alpha__add", "arguments": [1]}),
        )

    unknown, failed, empty, bad = with_client(proxy, scenario)
    assert unknown.is_error
    assert "search_tools" in unknown.content[0].text
    assert failed.is_error
    assert "x" in failed.content[0].text
    assert empty.is_error
    assert bad.is_error


def test_the_index_follows_tool_list_changes(proxy):
    async def scenario(client):
        before = proxy.rebuilds
        added = await client.call_tool(
            "call_tool", {"name": "add_tool", "arguments": {"tool_name": "zebra_counter"}}
        )
        assert added.content[0].text == "added"
        await asyncio.to_thread(eventually, lambda: proxy.rebuilds > before, 10)
        found = await client.call_tool("search_tools", {"query": "zebra counter"})
        called = await client.call_tool("call_tool", {"name": "zebra_counter"})
        return found, called

    found, called = with_client(proxy, scenario)
    assert search(found)[0] == "zebra_counter"
    assert called.content[0].text == "zebra_counter ran"


def test_an_unknown_name_relists_the_servers_once(proxy):
    async def scenario(client):
        await client.call_tool(
            "call_tool", {"name": "add_tool_quietly", "arguments": {"tool_name": "silent_owl"}}
        )
        called = await client.call_tool("call_tool", {"name": "silent_owl"})
        found = await client.call_tool("search_tools", {"query": "silent_owl"})
        return called, found

    called, found = with_client(proxy, scenario)
    assert called.content[0].text == "quiet"
    assert search(found)[0] == "silent_owl"


def test_any_tool_index_can_back_the_proxy():
    with McpToolProvider({"alpha": stdio("alpha")}) as provider:
        proxy = McpSearchProxy(provider, index=RegexToolIndex())
        asyncio.run(proxy.start())
        assert proxy.search("forecast")["tools"][0]["name"] == "weather_forecast"
        assert proxy.search("zzzz-unrelated")["tools"] == []
        assert proxy.tool_count == len(provider.current_tool_callbacks())


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "servers.toml"
    lines = []
    for name in ("alpha", "beta"):
        lines += [
            f"[servers.{name}]",
            f"command = {json.dumps(sys.executable)}",
            f"args = [{json.dumps(str(DEMO))}, '--name', '{name}']",
            "",
        ]
    lines += ["[servers.ghost]", "command = '/nonexistent/server'", ""]
    config.write_text("\n".join(lines))
    return config


async def round_trip(client: Client) -> tuple[list[str], list[str], str]:
    tools = [t.name for t in (await client.list_tools()).tools]
    found = await client.call_tool("search_tools", {"query": "add two integers sum"})
    called = await client.call_tool(
        "call_tool", {"name": "beta__add", "arguments": {"a": 20, "b": 1}}
    )
    return tools, search(found), called.content[0].text


def test_the_command_line_proxy_over_stdio(tmp_path):
    config = write_config(tmp_path)
    command = cli_proxy(config)

    async def run():
        async with Client(command, read_timeout_seconds=30) as client:
            return await round_trip(client)

    tools, found, called = asyncio.run(asyncio.wait_for(run(), 60))
    assert tools == ["search_tools", "call_tool"]
    assert {"alpha__add", "beta__add"} <= set(found)
    assert called == "21"


def test_the_command_line_proxy_over_streamable_http(tmp_path):
    config = write_config(tmp_path)
    port = free_port()
    command = [
        sys.executable, "-m", "toolsearch.cli", "mcp", "proxy", "--config", str(config),
        "--transport", "http", "--port", str(port),
    ]  # fmt: skip

    async def run():
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=30) as client:
            return await round_trip(client)

    with running(command, port):
        tools, found, called = asyncio.run(asyncio.wait_for(run(), 60))
    assert tools == ["search_tools", "call_tool"]
    assert "beta__add" in found
    assert called == "21"


def test_list_and_dump_commands(tmp_path):
    from typer.testing import CliRunner

    from toolsearch.mcp.cli import mcp_app
    from toolsearch_bench.data import Catalog

    config = write_config(tmp_path)
    runner = CliRunner()
    listed = runner.invoke(mcp_app(), ["list", "--config", str(config), "--json"])
    assert listed.exit_code == 0, listed.output
    names = [json.loads(line)["name"] for line in listed.stdout.splitlines() if line]
    assert "alpha__add" in names
    out = tmp_path / "catalog.jsonl"
    dumped = runner.invoke(mcp_app(), ["dump", "--config", str(config), "--out", str(out)])
    assert dumped.exit_code == 0, dumped.output
    catalog = Catalog.from_jsonl(out)
    assert {t.name for t in catalog.tools} == set(names)
    assert {t.category for t in catalog.tools} == {"alpha", "beta"}


def test_searches_are_answered_during_a_rebuild_and_find_the_new_tools_after_it():
    """The rebuild runs on the provider's thread while the proxy answers searches: a search
    that lands mid-rebuild is answered from the tool set built last (it does not wait),
    and every search after the rebuild sees the new tools."""
    import threading
    from types import SimpleNamespace

    from toolsearch.tools.definition import ToolDefinition

    def tool(name: str) -> SimpleNamespace:
        schema = {"type": "object", "properties": {}}
        return SimpleNamespace(definition=ToolDefinition(name, f"{name} tool", schema))

    tools = [tool("old_tool")]
    provider = SimpleNamespace(current_tool_callbacks=lambda: tools, server_names=["s"])
    building, release = threading.Event(), threading.Event()

    class Slow(RegexToolIndex):
        def index_tools(self, session_id, definitions):
            if any(d.name == "new_tool" for d in definitions):
                building.set()
                assert release.wait(10)
            super().index_tools(session_id, definitions)

    search_proxy = McpSearchProxy(provider, index=Slow())  # type: ignore[arg-type]
    search_proxy._reindex()
    tools.append(tool("new_tool"))
    rebuild = threading.Thread(target=search_proxy._reindex)
    rebuild.start()
    assert building.wait(10)
    during = [t["name"] for t in search_proxy.search("tool")["tools"]]
    release.set()
    rebuild.join(10)
    assert during == ["old_tool"]
    assert search_proxy.search("new_tool")["tools"][0]["name"] == "new_tool"


def test_searching_before_start_says_the_proxy_has_not_started() -> None:
    from toolsearch.errors import McpError, McpProxyNotStartedError

    class Provider:  # never connected: start() was not awaited
        server_names = ("demo",)
        connected_servers: dict = {}  # noqa: RUF012

        def current_tool_callbacks(self) -> list:
            return []

    proxy = McpSearchProxy(Provider(), index=RegexToolIndex())  # type: ignore[arg-type]

    with pytest.raises(McpProxyNotStartedError, match="has not started"):
        proxy.search("weather")
    with pytest.raises(McpError, match=r"await proxy\.start\(\)"):
        asyncio.run(proxy.asearch("weather"))
