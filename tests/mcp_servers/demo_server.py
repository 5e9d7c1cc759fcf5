"""A small MCPServer (the SDK's FastMCP successor) the MCP tests start as a subprocess.

``python demo_server.py [--name NAME] [--http PORT]``: stdio by default, streamable HTTP
on 127.0.0.1 with ``--http``. ``--name`` changes the server name and the text of
``whoami`` so tests can tell two copies apart; both copies offer ``add`` (a name clash).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os

from mcp.server.mcpserver import Context, MCPServer


def build(name: str) -> MCPServer:
    server = MCPServer(name, log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers and return the sum."""
        return a + b

    @server.tool()
    def whoami() -> str:
        """Name of this server."""
        return name

    @server.tool()
    def echo_env(variable: str) -> str:
        """The value of an environment variable of the server process."""
        return os.environ.get(variable, "<unset>")

    @server.tool()
    def http_header(header: str, ctx: Context) -> str:
        """A header of the HTTP request that carried this call (streamable HTTP only)."""
        request = ctx.request_context.request
        return "<no http>" if request is None else request.headers.get(header, "<missing>")

    @server.tool()
    def pid() -> int:
        """The process id of this server."""
        return os.getpid()

    @server.tool()
    def add_tool_quietly(tool_name: str) -> str:
        """Register a new tool at run time without announcing it."""
        server.add_tool(lambda: "quiet", name=tool_name, description=f"Quiet tool {tool_name}.")
        return "added"

    @server.tool()
    def fail(message: str) -> str:
        """Always fails with the given message."""
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError(message)

    @server.tool()
    def big(megabytes: float) -> str:
        """A text result of about this many megabytes."""
        return "x" * int(megabytes * 1_000_000)

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleeps, then answers."""
        await asyncio.sleep(seconds)
        return "done"

    @server.tool()
    def weather_forecast(city: str) -> str:
        """Get the weather forecast for a city: temperature and rain."""
        return f"sunny in {city}"

    @server.tool()
    async def add_tool(tool_name: str, ctx: Context) -> str:
        """Register a new tool at run time and announce the changed tool list."""

        def dynamic() -> str:
            return f"{tool_name} ran"

        server.add_tool(dynamic, name=tool_name, description=f"Dynamic tool {tool_name}.")
        await ctx.notify_tools_changed()  # 2026-era listeners
        with contextlib.suppress(Exception):  # handshake-era sessions: the classic notice
            await ctx.request_context.session.send_tool_list_changed()
        return "added"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="demo")
    parser.add_argument("--http", type=int, default=None)
    args = parser.parse_args()
    server = build(args.name)
    if args.http is None:
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
