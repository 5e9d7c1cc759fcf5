"""Importing toolsearch, its models and its MCP package loads no provider SDK, no MCP SDK
and no numeric library: those load when an adapter or a connection needs them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("openai", "anthropic", "google.genai", "mcp", "numpy", "anyio", "httpx", "httpx2")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    return result.stdout.split()


def test_importing_the_packages_and_their_lazy_names_loads_nothing_heavy():
    code = (
        "import toolsearch, toolsearch.models, toolsearch.mcp\n"
        "from toolsearch.models import OpenAIChatModel, AnthropicChatModel, GeminiChatModel\n"
        "from toolsearch.mcp import McpToolProvider, McpSearchProxy, McpConfig, load_mcp_config\n"
    )
    assert _loaded_after(code) == []


def test_building_an_mcp_provider_connects_and_imports_nothing():
    code = (
        "from toolsearch.mcp import McpToolProvider\n"
        "provider = McpToolProvider({'fs': {'command': 'npx', 'args': ['-y', 'server']}})\n"
        "assert not provider.connected\n"
        "provider.close()\n"
    )
    assert _loaded_after(code) == []
