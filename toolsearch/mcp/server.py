"""toolsearch tools served over MCP: :func:`build_server` and :func:`serve_tools`.

Any tool ``.tools(...)`` accepts (``@tool`` functions, objects with ``@tool`` methods,
``ToolCallback`` instances) becomes an MCP tool with the same name, description and JSON
Schema. Calls run through the callback's ``acall``; under the ``ToolCallback`` contract a
failing tool or bad arguments raise, and come back as an ``isError`` result carrying the
message, as MCP clients expect.

:func:`tool_server` is the part every toolsearch MCP server shares (the tool-search proxy
too): listing definitions, schema lookup, unknown names, the server's name and version,
and the caller's progress reporter (:func:`toolsearch.mcp.progress.request_progress`,
while a handler runs; it sends nothing unless the client asked for progress). It is built
on the SDK's low-level ``Server`` so the schemas are exactly the ones toolsearch generated
(the high-level ``MCPServer`` would re-derive them from signatures).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal

from toolsearch.errors import InvalidToolArgumentsError, MissingExtraError, ToolExecutionError
from toolsearch.mcp.progress import ProgressReporter, reporting
from toolsearch.mcp.results import error_result, forwarded, text_result
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import tool_callbacks
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from mcp.types import CallToolResult

__all__ = [
    "ToolHandler",
    "bearer_guard",
    "Transport",
    "build_server",
    "mcp_tool",
    "run_server",
    "serve_tools",
    "structured_result",
    "tool_server",
]

Transport = Literal["stdio", "http"]

ToolHandler = Callable[[str, dict[str, Any]], Awaitable["CallToolResult"]]
"""``await call(tool_name, arguments) -> CallToolResult`` for a listed tool's name; while
it runs, :func:`~toolsearch.mcp.progress.request_progress` reports progress to the caller
(a no-op when the caller asked for none)."""


def tool_server(
    definitions: Sequence[ToolDefinition],
    call: ToolHandler,
    *,
    name: str,
    version: str | None = None,
    instructions: str | None = None,
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None,
) -> Any:
    """An MCP low-level ``Server`` listing ``definitions`` and answering their calls with
    ``call``; a call to any other name gets an ``isError`` result naming the tools offered.
    ``call`` gets the arguments as a dict (``{}`` when none were sent), and the client's
    progress reporter as :func:`~toolsearch.mcp.progress.request_progress`."""
    try:
        from mcp.server.lowlevel import Server
        from mcp.types import ListToolsResult
    except ImportError as exc:
        raise MissingExtraError("serving tools over MCP", "mcp", "mcp") from exc
    from toolsearch._version import __version__

    offered = {d.name: d for d in definitions}
    listed = [mcp_tool(d) for d in offered.values()]

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: Any) -> CallToolResult:
        if params.name not in offered:
            return error_result(
                f"Unknown tool: {params.name}. This server offers {sorted(offered)}"
            )
        with reporting(_progress_reporter(ctx)):
            return await call(params.name, dict(params.arguments or {}))

    def input_schema(tool_name: str) -> Mapping[str, Any] | None:
        found = offered.get(tool_name)
        return None if found is None else dict(found.input_schema)

    extra: dict[str, Any] = {} if lifespan is None else {"lifespan": lifespan}
    return Server(
        name,
        version=version or __version__,
        instructions=instructions,
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        **extra,
    )


def _progress_reporter(ctx: Any) -> ProgressReporter | None:
    """The request's own progress reporter (the session of a request context is scoped to
    that request). It is given whether or not the client asked for progress: a request
    over JSON-RPC shows its ``progressToken``, an in-process one (``mcp.Client(server)``)
    hides its progress callback, and the reporter sends nothing when there is neither."""
    session = getattr(ctx, "session", None)
    report: ProgressReporter | None = getattr(session, "report_progress", None)
    return report


def mcp_tool(definition: ToolDefinition) -> Any:
    """A definition as an MCP ``Tool``: name, description, input schema, and the title,
    annotations and output schema when the definition has them."""
    from mcp.types import Tool, ToolAnnotations

    fields: dict[str, Any] = {
        "name": definition.name,
        "description": definition.description,
        "input_schema": dict(definition.input_schema),
    }
    if definition.title is not None:
        fields["title"] = definition.title
    hints = definition.annotations.to_mcp() if definition.annotations is not None else {}
    if hints or definition.title is not None:
        fields["annotations"] = ToolAnnotations.model_validate(
            {**hints, **({"title": definition.title} if definition.title else {})}
        )
    if definition.output_schema is not None:
        fields["output_schema"] = dict(definition.output_schema)
    return Tool(**fields)


def structured_result(definition: ToolDefinition, text: str) -> CallToolResult:
    """A tool's result text as a ``CallToolResult``: with an output schema, the JSON object
    the text holds goes in ``structuredContent`` too (the text block stays, for clients
    that read only content, as MCP recommends)."""
    structured: dict[str, Any] | None = None
    if definition.output_schema is not None:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            structured = value
    return text_result(text, structured=structured)


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

    Tools are listed with their title, annotations and output schema (``@tool(title=...,
    annotations=..., output_schema=...)``; a ``dict``/model return gets its output schema
    by default), and a tool with an output schema answers with ``structuredContent``. MCP
    tools (from an :class:`~toolsearch.mcp.McpToolProvider`) are forwarded: their server's
    result, structured content included, passes through unchanged.
    """
    from toolsearch.mcp.client import McpToolCallback

    callbacks: dict[str, ToolCallback] = {cb.definition.name: cb for cb in tool_callbacks(*tools)}
    context = ToolContext(tool_context)

    async def call(tool_name: str, arguments: dict[str, Any]) -> CallToolResult:
        callback = callbacks[tool_name]
        try:
            if isinstance(callback, McpToolCallback):
                return forwarded(await callback.acall_result(arguments))
            text = await callback.acall(json.dumps(arguments), context)
        except (InvalidToolArgumentsError, ToolExecutionError) as exc:
            return error_result(str(exc))
        except Exception as exc:  # a callback outside the contract: still the caller's result
            return error_result(f"tool {tool_name!r} failed: {exc or type(exc).__name__}")
        return structured_result(callback.definition, text)

    definitions = [cb.definition for cb in callbacks.values()]
    return tool_server(definitions, call, name=name, version=version, instructions=instructions)


async def run_server(
    server: Any,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    log_level: str = "warning",
    auth_token: str | None = None,
) -> None:
    """Serve an MCP low-level ``Server`` until stopped: over stdin/stdout, or streamable
    HTTP at ``http://host:port/path`` (local hosts get the SDK's DNS-rebinding guard).

    With ``auth_token`` (HTTP only), every HTTP request must carry ``Authorization: Bearer
    <auth_token>``; any other gets ``401`` (see :func:`bearer_guard`)."""
    if auth_token is not None and transport != "http":
        raise ValueError("auth_token needs the http transport")
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return
    if transport != "http":
        raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=path, host=host)
    if auth_token is not None:
        app = bearer_guard(app, auth_token)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
    await uvicorn.Server(config).serve()


def bearer_guard(app: Any, token: str) -> Any:
    """An ASGI app that passes to ``app`` only the HTTP requests whose ``Authorization``
    header is ``Bearer <token>`` (compared in constant time) and answers every other one
    with ``401`` and ``WWW-Authenticate: Bearer``; lifespan events pass through."""
    if not token:
        raise ValueError("the bearer token is empty")
    expected = token.encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await app(scope, receive, send)
            return
        given = b""
        for key, value in scope.get("headers") or ():
            if key.lower() == b"authorization":
                given = value
                break
        scheme, _, credentials = given.partition(b" ")
        # the scheme is case-insensitive (RFC 7235); the token is compared in constant time
        if scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), expected):
            await app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = b'{"error": "unauthorized", "error_description": "missing or wrong bearer token"}'
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="toolsearch"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return guarded


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
