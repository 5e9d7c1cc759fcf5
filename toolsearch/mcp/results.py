"""MCP tool results as text, text as MCP results, and failures as errors.

- :func:`result_text`: what a model reads for a ``CallToolResult`` (text blocks joined,
  other blocks as short placeholders, structured content as JSON).
- :func:`text_result` / :func:`error_result`: text as a ``CallToolResult`` (what the
  server and the proxy answer), :func:`forwarded`: a downstream result passed on.
- :func:`call_error`: an exception from calling an MCP tool as the
  :class:`~toolsearch.errors.ToolExecutionError` the ``ToolCallback`` contract promises:
  an ``isError`` result is the tool's own failure, a dropped connection, a timeout or a
  closed provider is a :class:`~toolsearch.errors.ToolTransportError`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolsearch.errors import McpError, McpToolError, ToolExecutionError, ToolTransportError
from toolsearch.mcp import redact
from toolsearch.mcp.connection import connection_lost, leaf_message

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from toolsearch.mcp.exposure import Exposed

__all__ = [
    "call_error",
    "content_text",
    "error_result",
    "failure_text",
    "forwarded",
    "result_text",
    "text_result",
    "tool_error",
]

_REQUEST_TIMEOUT = -32001
"""The SDK's JSON-RPC code for a request that got no answer in time."""


def content_text(result: CallToolResult) -> str:
    """The text of a result's content blocks, joined by newlines.

    Images, audio and binary resources become a short placeholder naming their type and
    size; with no content blocks the structured content is given as JSON.
    """
    parts: list[str] = []
    for block in result.content or ():
        if block.type == "text":
            parts.append(block.text)
        elif block.type in ("image", "audio"):
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[{block.type}: {getattr(block, 'mime_type', '?')}, ~{size} bytes]")
        elif block.type == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[resource: {resource.uri}]")
        elif block.type == "resource_link":
            parts.append(f"[resource link: {block.uri}]")
        else:
            parts.append(str(block))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def result_text(result: CallToolResult) -> str:
    """The text a model reads for an MCP tool result (see :func:`content_text`);
    ``isError`` results start with ``Error:``.

    ``McpToolCallback`` raises for ``isError`` results instead (see :func:`tool_error`);
    this is for code that holds a ``CallToolResult`` and wants one string either way.
    """
    text = content_text(result)
    if result.is_error:
        if not text:
            return "Error: the tool reported an error without a message"
        return text if text.lower().startswith("error") else f"Error: {text}"
    return text


def tool_error(tool_name: str, result: CallToolResult) -> ToolExecutionError:
    """An ``isError`` result as the tool's own failure (``cause``: :class:`McpToolError`)."""
    text = content_text(result) or "the tool reported an error without a message"
    return ToolExecutionError(tool_name, McpToolError(text))


def _where(exposed: Exposed) -> str:
    return f"tool {exposed.tool_name!r} on MCP server {exposed.server!r}"


def call_error(
    exposed: Exposed, exc: BaseException, timeout: float | None = None
) -> ToolExecutionError:
    """What calling an exposed tool raises when the call itself failed (see
    :func:`_call_error`), its message scrubbed of the servers' secrets."""
    error = _call_error(exposed, exc, timeout)
    error.args = tuple(redact.scrub(a) if isinstance(a, str) else a for a in error.args)
    return error


def _call_error(
    exposed: Exposed, exc: BaseException, timeout: float | None = None
) -> ToolExecutionError:
    """What calling an exposed tool raises when the call itself failed.

    Transport failures (ours: a closed provider, an unreachable or lost server; a timeout;
    the SDK's closed-connection and request-timeout errors; OS errors) become a
    :class:`ToolTransportError`; anything else the server answered with (a JSON-RPC error
    to ``tools/call``) is the tool's failure, a :class:`ToolExecutionError`.
    """
    name = exposed.definition.name
    if isinstance(exc, ToolExecutionError):
        return exc
    code = getattr(exc, "code", None)
    if isinstance(exc, TimeoutError) or code == _REQUEST_TIMEOUT:
        after = f" after {timeout:g} s" if timeout is not None else ""
        cause: BaseException = TimeoutError(f"{_where(exposed)} timed out{after}")
        cause.__cause__ = exc
        return ToolTransportError(name, cause)
    if isinstance(exc, McpError | OSError) or _lost(exc):
        return ToolTransportError(name, exc)
    cause = McpToolError(f"{_where(exposed)} failed: {leaf_message(exc)}")
    cause.__cause__ = exc
    return ToolExecutionError(name, cause)


def _lost(exc: BaseException) -> bool:
    try:
        return connection_lost(exc)
    except ImportError:  # pragma: no cover - no SDK, so no SDK error either
        return False


def failure_text(exposed: Exposed, exc: BaseException) -> str:
    """A failed call as the text of an ``isError`` result (what the proxy forwards)."""
    where = _where(exposed)
    if isinstance(exc, TimeoutError):
        return f"Error: {where} timed out"
    if getattr(exc, "code", None) == _REQUEST_TIMEOUT:
        return f"Error: {where} timed out: {exc}"
    return f"Error: {where} failed: {leaf_message(exc)}"


def text_result(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    """A successful ``CallToolResult`` with one text block (and structured content)."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def error_result(text: str) -> CallToolResult:
    """An ``isError`` ``CallToolResult`` carrying ``text``."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def forwarded(result: CallToolResult) -> CallToolResult:
    """A downstream server's result with its envelope (``_meta``, its server stamp) left
    behind: content blocks, structured content and ``isError`` unchanged."""
    from mcp.types import CallToolResult

    return CallToolResult(
        content=result.content,
        structured_content=result.structured_content,
        is_error=result.is_error,
    )
