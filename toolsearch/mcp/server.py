"""toolsearch tools served over MCP: :func:`build_server` and :func:`serve_tools`.

Any tool ``.tools(...)`` accepts (``@tool`` functions, objects with ``@tool`` methods,
``ToolCallback`` instances) becomes an MCP tool with the same name, description and JSON
Schema. Calls run through the callback's ``acall``; a failing tool or bad arguments come
back as an ``isError`` result carrying the message, as MCP clients expect.

It is built on the SDK's low-level ``Server`` so the schemas are exactly the ones
toolsearch generated (the high-level ``MCPServer`` would re-derive them from signatures).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from toolsearch.errors import InvalidToolArgumentsError, MissingExtraError, ToolExecutionError
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import tool_callbacks
from toolsearch.tools.context import ToolContext

__all__ = ["Transport", "build_server", "run_server", "serve_tools"]

Transport = Literal["stdio", "http"]


def build_server(
    *tools: Any,
    name: str = "toolsearch",
    version: str | None = None,
    instructions: str | None = None,
    tool_context: Mapping[str, Any] | None = None,
) -> Any:
    """An MCP low-level ``Server`` exposing ``tools``; run it with :func:`run_server`.

    ``tool_context`` is passed to tools that take a ``ToolContext`` parameter. In tests,
    ``mcp.Client(build_server(...))`` talks to it in-process.
    """
    try:
        from mcp.server.lowlevel import Server
        from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool
    except ImportError as exc:
        raise MissingExtraError("serving tools over MCP", "mcp", "mcp") from exc
    from toolsearch import __version__

    callbacks: dict[str, ToolCallback] = {cb.definition.name: cb for cb in tool_callbacks(*tools)}
    listed = [
        Tool(
            name=cb.definition.name,
            description=cb.definition.description,
            input_schema=dict(cb.definition.input_schema),
        )
        for cb in callbacks.values()
    ]
    context = ToolContext(tool_context)

    def error(text: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: Any) -> CallToolResult:
        callback = callbacks.get(params.name)
        if callback is None:
            return error(f"Unknown tool: {params.name}")
        arguments = json.dumps(params.arguments or {})
        try:
            text = await callback.acall(arguments, context)
        except (InvalidToolArgumentsError, ToolExecutionError) as exc:
            return error(str(exc))
        except Exception as exc:  # a tool's failure is the caller's result, not a crash
            return error(f"tool {params.name!r} failed: {exc or type(exc).__name__}")
        return CallToolResult(content=[TextContent(type="text", text=text)])

    def input_schema(tool_name: str) -> Mapping[str, Any] | None:
        callback = callbacks.get(tool_name)
        return None if callback is None else dict(callback.definition.input_schema)

    return Server(
        name,
        version=version or __version__,
        instructions=instructions,
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def run_server(
    server: Any,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    log_level: str = "warning",
) -> None:
    """Serve an MCP low-level ``Server`` until stopped: over stdin/stdout, or streamable
    HTTP at ``http://host:port/path`` (local hosts get the SDK's DNS-rebinding guard)."""
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return
    if transport != "http":
        raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
    await uvicorn.Server(config).serve()


def serve_tools(
    *tools: Any,
    name: str = "toolsearch",
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    instructions: str | None = None,
    tool_context: Mapping[str, Any] | None = None,
) -> None:
    """Serve ``tools`` as an MCP server (blocks until the client disconnects or Ctrl-C).

    ``serve_tools(MyTools(), get_weather, name="my-tools")`` over stdio, or
    ``transport="http", port=8000`` for streamable HTTP at ``http://127.0.0.1:8000/mcp``.
    """
    import anyio

    server = build_server(*tools, name=name, instructions=instructions, tool_context=tool_context)
    anyio.run(lambda: run_server(server, transport=transport, host=host, port=port, path=path))
