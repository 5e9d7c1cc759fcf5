"""MCP client, server and tool-search proxy (``toolsearch[mcp]``).

- :class:`McpToolProvider`: the tools of MCP servers (stdio or streamable HTTP, from a
  small config) as ``ToolCallback``s for the tool loop; connects on first use.
- :func:`build_server` / :func:`serve_tools`: toolsearch tools served over MCP.
- :class:`McpSearchProxy` (``toolsearch mcp proxy``): many servers behind two tools,
  ``search_tools`` and ``call_tool``.

Modules, one job each: ``config`` (which servers), ``connection`` (one server's session
and transports), ``exposure`` (which tools are exposed, under which names), ``results``
(results as text, text as results, failures as typed errors), ``client`` (the provider),
``server`` (serving tools), ``proxy`` (the search proxy, built on ``server``),
``passthrough`` (the servers' prompts and resources, as the proxy forwards them),
``progress`` (a call's progress notifications, from the server to the proxy's client),
``dump`` and ``cli``.

Importing this package does not import the ``mcp`` SDK; using a client or server does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolsearch.mcp.client import McpToolCallback, McpToolProvider, result_text
    from toolsearch.mcp.config import (
        HttpServerConfig,
        McpConfig,
        ProxySettings,
        StdioServerConfig,
        load_mcp_config,
    )
    from toolsearch.mcp.dump import write_catalog
    from toolsearch.mcp.proxy import McpSearchProxy, make_index
    from toolsearch.mcp.server import build_server, run_server, serve_tools, tool_server

_LOCATIONS = {
    "McpToolCallback": "client",
    "McpToolProvider": "client",
    "result_text": "client",
    "HttpServerConfig": "config",
    "McpConfig": "config",
    "ProxySettings": "config",
    "StdioServerConfig": "config",
    "load_mcp_config": "config",
    "write_catalog": "dump",
    "McpSearchProxy": "proxy",
    "make_index": "proxy",
    "build_server": "server",
    "run_server": "server",
    "serve_tools": "server",
    "tool_server": "server",
}

__all__ = [
    "HttpServerConfig",
    "McpConfig",
    "McpSearchProxy",
    "McpToolCallback",
    "McpToolProvider",
    "ProxySettings",
    "StdioServerConfig",
    "build_server",
    "load_mcp_config",
    "make_index",
    "result_text",
    "run_server",
    "serve_tools",
    "tool_server",
    "write_catalog",
]


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"toolsearch.mcp.{module}"), name)
