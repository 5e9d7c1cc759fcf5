"""The MCP servers config: TOML and JSON files, desktop-assistant JSON, ``${VAR}`` expansion,
and errors that name the file, the server and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsearch.errors import McpConfigError
from toolsearch.mcp.config import (
    HttpServerConfig,
    McpConfig,
    StdioServerConfig,
    load_mcp_config,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "servers.toml"

TOML = """
[proxy]
index = "regex"
max_results = 3

[servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
exclude_tools = ["write_*"]

[servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_PERSONAL_ACCESS_TOKEN = "${TEST_GH_TOKEN}" }
timeout = 20

[servers.remote]
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer ${TEST_REMOTE_TOKEN:-anonymous}" }
"""


def test_toml_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_GH_TOKEN", "ghp_secret")
    monkeypatch.delenv("TEST_REMOTE_TOKEN", raising=False)
    path = tmp_path / "servers.toml"
    path.write_text(TOML)
    config = load_mcp_config(path)
    assert list(config.servers) == ["files", "github", "remote"]
    files = config.servers["files"]
    assert isinstance(files, StdioServerConfig)
    assert files.args == ("-y", "@modelcontextprotocol/server-filesystem", "/tmp")
    assert not files.exposes("write_file")
    assert files.exposes("read_file")
    github = config.servers["github"]
    assert github.env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}
    assert github.timeout == 20
    remote = config.servers["remote"]
    assert isinstance(remote, HttpServerConfig)
    assert remote.headers == {"Authorization": "Bearer anonymous"}
    assert config.proxy.index == "regex"
    assert config.proxy.max_results == 3


def test_desktop_assistant_json(tmp_path):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "memory": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-memory"],
                    },
                    "web": {"type": "streamable-http", "url": "http://127.0.0.1:9000/mcp"},
                }
            }
        )
    )
    config = McpConfig.from_file(path)
    assert isinstance(config.servers["memory"], StdioServerConfig)
    assert isinstance(config.servers["web"], HttpServerConfig)


def test_a_missing_environment_variable_names_the_server_and_variable(monkeypatch):
    monkeypatch.delenv("TEST_GH_TOKEN", raising=False)
    with pytest.raises(McpConfigError, match=r"'github'.*'TEST_GH_TOKEN'"):
        load_mcp_config({"servers": {"github": {"command": "x", "env": {"T": "${TEST_GH_TOKEN}"}}}})


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"args": ["a"]}, "needs 'command'"),
        ({"command": "x", "url": "http://h/mcp"}, "both 'command' and 'url'"),
        ({"url": "ftp://host"}, "http:// or https://"),
        ({"type": "sse", "url": "http://h/sse"}, "SSE"),
        ({"command": "x", "timeout": -1}, "field 'timeout'"),
        ({"command": "x", "colour": "red"}, "field 'colour'"),
    ],
)
def test_invalid_servers_are_named(server, message):
    with pytest.raises(McpConfigError, match="'bad'") as error:
        load_mcp_config({"servers": {"bad": server}})
    assert message in str(error.value)


def test_bad_server_names_and_files(tmp_path):
    with pytest.raises(McpConfigError, match="server name"):
        load_mcp_config({"servers": {"has space": {"command": "x"}}})
    with pytest.raises(McpConfigError, match="no such MCP config file"):
        load_mcp_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[servers.x\n")
    with pytest.raises(McpConfigError, match="not valid TOML"):
        load_mcp_config(broken)


def test_disabled_servers_are_not_started():
    config = load_mcp_config(
        {"servers": {"on": {"command": "x"}, "off": {"command": "y", "enabled": False}}}
    )
    assert list(config.enabled_servers) == ["on"]


def test_the_example_config_loads(monkeypatch):
    monkeypatch.setenv("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_example")
    config = load_mcp_config(EXAMPLE)
    assert config.servers
    assert config.proxy.index in ("bm25", "regex", "vector", "hybrid")
