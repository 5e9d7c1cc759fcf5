"""Options of the tool-search MCP proxy: the two tools' names (argument, config file,
command line) and the bearer token of the HTTP transport (``--auth-token-env``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import httpx
from mcp import Client
from mcp_servers.helpers import DEMO, free_port, running, stdio

from toolsearch.errors import McpConfigError
from toolsearch.mcp import McpConfig, McpSearchProxy, McpToolProvider
from toolsearch.mcp.server import bearer_guard


@pytest.fixture(scope="module")
def provider():
    with McpToolProvider({"alpha": stdio("alpha")}) as provider:
        yield provider


def test_the_two_tool_names_are_configurable(provider):
    proxy = McpSearchProxy(provider, search_tool_name="find_tools", call_tool_name="run_tool")

    async def scenario():
        async with Client(proxy.build_server()) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            found = await client.call_tool("find_tools", {"query": "weather forecast"})
            called = await client.call_tool(
                "run_tool", {"name": "weather_forecast", "arguments": {"city": "Oslo"}}
            )
            unknown = await client.call_tool("run_tool", {"name": "nope"})
            old = await client.call_tool("search_tools", {"query": "weather"})
            return tools, found, called, unknown, old

    tools, found, called, unknown, old = asyncio.run(scenario())
    assert set(tools) == {"find_tools", "run_tool"}
    assert "run_tool" in tools["find_tools"].description
    assert "find_tools" in tools["run_tool"].description
    assert json.loads(found.content[0].text)["tools"][0]["name"] == "weather_forecast"
    assert called.content[0].text == "sunny in Oslo"
    assert unknown.is_error
    assert "find_tools" in unknown.content[0].text
    assert old.is_error  # the default names are gone


def test_the_default_names_are_unchanged(provider):
    names = [d.name for d in McpSearchProxy(provider).tool_definitions()]
    assert names == ["search_tools", "call_tool"]


@pytest.mark.parametrize(
    ("search", "call"),
    [("", "call_tool"), ("search tools", "call_tool"), ("x" * 129, "c"), ("same", "same")],
)
def test_invalid_tool_names_are_refused(provider, search, call):
    with pytest.raises(ValueError, match=r"search_tool_name|call_tool_name"):
        McpSearchProxy(provider, search_tool_name=search, call_tool_name=call)
    with pytest.raises(McpConfigError):
        McpConfig.from_dict({"proxy": {"search_tool_name": search, "call_tool_name": call}})


def test_the_config_file_names_the_tools_and_the_token_variable():
    settings = McpConfig.from_dict(
        {"proxy": {"search_tool_name": "find", "auth_token_env": "PROXY_TOKEN"}}
    ).proxy
    assert (settings.search_tool_name, settings.call_tool_name) == ("find", "call_tool")
    assert settings.auth_token_env == "PROXY_TOKEN"
    with pytest.raises(McpConfigError, match="auth_token_env"):
        McpConfig.from_dict({"proxy": {"auth_token_env": "not a name"}})


def test_an_empty_token_is_refused():
    with pytest.raises(ValueError, match="empty"):
        bearer_guard(lambda *a: None, "")


def write_config(tmp_path: Path, proxy_lines: list[str]) -> Path:
    config = tmp_path / "servers.toml"
    lines = [
        "[servers.alpha]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(DEMO))}, '--name', 'alpha']",
        "",
        "[proxy]",
        *proxy_lines,
    ]
    config.write_text("\n".join(lines) + "\n")
    return config


def test_http_proxy_with_a_bearer_token_and_configured_names(tmp_path, monkeypatch):
    config = write_config(tmp_path, ["search_tool_name = 'find_tools'"])
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    monkeypatch.setenv("TOOLSEARCH_TEST_PROXY_TOKEN", "s3cret-token")
    command = [
        sys.executable, "-m", "toolsearch.cli", "mcp", "proxy", "--config", str(config),
        "--transport", "http", "--port", str(port), "--call-tool-name", "run_tool",
        "--auth-token-env", "TOOLSEARCH_TEST_PROXY_TOKEN",
    ]  # fmt: skip
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}

    def post(**headers: str) -> httpx.Response:
        return httpx.post(url, json=initialize, headers={**accept, **headers}, timeout=30)

    with running(command, port):
        missing = post()
        wrong = post(Authorization="Bearer wrong-token")
        not_bearer = post(Authorization="s3cret-token")
        right = post(Authorization="Bearer s3cret-token")
        with McpToolProvider(
            {"proxy": {"url": url, "headers": {"Authorization": "Bearer s3cret-token"}}},
            prefix="never",
        ) as through:
            names = sorted(d.name for d in through.tool_definitions())
            found = json.loads(through.call_tool("find_tools", {"query": "weather forecast"}))
            called = through.call_tool(
                "run_tool", {"name": "weather_forecast", "arguments": {"city": "Rome"}}
            )
    for refused in (missing, wrong, not_bearer):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "s3cret" not in refused.text
    assert right.status_code == 200
    assert names == ["find_tools", "run_tool"]
    assert found["tools"][0]["name"] == "weather_forecast"
    assert called == "sunny in Rome"


def test_the_token_option_needs_http_and_a_set_variable(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from toolsearch.mcp.cli import mcp_app

    config = write_config(tmp_path, [])
    monkeypatch.delenv("TOOLSEARCH_TEST_UNSET", raising=False)
    runner = CliRunner()
    base = ["proxy", "--config", str(config), "--auth-token-env", "TOOLSEARCH_TEST_UNSET"]
    unset = runner.invoke(mcp_app(), [*base, "--transport", "http"])
    assert unset.exit_code == 2
    assert "TOOLSEARCH_TEST_UNSET" in unset.output
    monkeypatch.setenv("TOOLSEARCH_TEST_UNSET", "x")
    stdio_transport = runner.invoke(mcp_app(), base)
    assert stdio_transport.exit_code == 2
    assert "http" in stdio_transport.output
    same = runner.invoke(
        mcp_app(), ["proxy", "--config", str(config), "--search-tool-name", "call_tool"]
    )
    assert same.exit_code == 2
    assert os.environ["TOOLSEARCH_TEST_UNSET"] == "x"
