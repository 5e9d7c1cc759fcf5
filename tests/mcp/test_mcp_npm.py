"""Real MCP servers from npm (optional): list and call their tools over stdio.

Skips with the reason when node/npm are missing or the npm registry cannot be reached
and the packages are not installed yet. Packages install once into a cache folder
(``TOOLSEARCH_NPM_CACHE``, default ``~/.cache/toolsearch/npm-mcp``) with a time limit,
with ``--ignore-scripts`` so nothing else is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from toolsearch.mcp import McpToolProvider

CACHE = Path(
    os.environ.get("TOOLSEARCH_NPM_CACHE", Path.home() / ".cache" / "toolsearch" / "npm-mcp")
)
INSTALL_TIMEOUT = 240


def installed(name: str, package: str) -> list[str]:
    """``node <bin>`` of ``package`` installed under ``CACHE/name``; skips when it cannot be."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not on PATH")
    prefix = CACHE / name
    package_dir = prefix / "node_modules" / package
    if not (package_dir / "package.json").is_file():
        try:
            probe = subprocess.run(
                [npm, "view", package, "version"], capture_output=True, text=True, timeout=30
            )
        except subprocess.TimeoutExpired:
            pytest.skip("the npm registry did not answer within 30 s")
        if probe.returncode != 0:
            pytest.skip(f"the npm registry is not reachable: {probe.stderr.strip()[:200]}")
        prefix.mkdir(parents=True, exist_ok=True)
        command = [
            npm, "install", "--prefix", str(prefix), "--ignore-scripts", "--no-audit",
            "--no-fund", "--no-save", "--loglevel=error", package,
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {package} took longer than {INSTALL_TIMEOUT} s")
        if done.returncode != 0:
            pytest.skip(f"npm install {package} failed: {done.stderr.strip()[:200]}")
    meta = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    bins = meta["bin"]
    script = bins if isinstance(bins, str) else next(iter(bins.values()))
    return [node, str((package_dir / script).resolve())]


def test_memory_and_everything_servers_list_and_call(tmp_path):
    memory = installed("memory", "@modelcontextprotocol/server-memory")
    everything = installed("everything", "@modelcontextprotocol/server-everything")
    servers = {
        "memory": {
            "command": memory[0],
            "args": memory[1:],
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.json")},
        },
        "everything": {"command": everything[0], "args": [*everything[1:], "stdio"]},
    }
    log = (tmp_path / "stderr.log").open("w")
    with McpToolProvider(servers, errlog=log) as provider:
        tools = {cb.definition.name: cb for cb in provider.tool_callbacks()}
        assert {"create_entities", "read_graph", "search_nodes"} <= set(tools)
        assert tools["create_entities"].server == "memory"
        assert "echo" in tools
        assert tools["create_entities"].definition.input_schema["type"] == "object"
        created = tools["create_entities"].call(
            json.dumps(
                {"entities": [{"name": "Ada", "entityType": "person", "observations": ["math"]}]}
            )
        )
        assert "Ada" in created
        assert "Ada" in tools["read_graph"].call("{}")
        assert "hello npm" in tools["echo"].call('{"message": "hello npm"}')
    log.close()
