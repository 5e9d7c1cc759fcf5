"""One MCP server's session: transports, the session task, reconnecting.

A :class:`Connection` runs one MCP session (stdio or streamable HTTP) inside one
long-lived task on its provider's event loop (the SDK's transports are anyio context
managers that must be entered and left by the same task). A dropped connection ends the
session; the next use starts a new one. Nothing here knows about tool names or results.

Besides tools, a connection lists and reads what the tool-search proxy forwards: prompts,
resources and resource templates (:meth:`Connection.list_all`, :meth:`Connection.request`),
and hands a tool call's progress notifications to a callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeVar

from toolsearch.errors import McpConnectionError, MissingExtraError
from toolsearch.mcp import redact
from toolsearch.mcp.config import ServerConfig, StdioServerConfig

if TYPE_CHECKING:
    from mcp.types import CallToolResult, Tool

    from toolsearch._async import LoopThread

__all__ = [
    "STOP_TIMEOUT",
    "Connection",
    "Listing",
    "ProgressCallback",
    "connection_lost",
    "leaf_message",
    "require_mcp",
    "shutdown",
    "weak_method",
]

logger = logging.getLogger(__name__)

STOP_TIMEOUT = 10.0
"""Seconds to wait for one session (and its process) to shut down before abandoning it."""

T = TypeVar("T")

ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""``await callback(progress, total, message)``: one progress notification of a call (the
SDK's ``progress_callback`` shape); it runs on the provider's loop."""

Listing = Literal["tools", "prompts", "resources", "resource_templates"]
"""What :meth:`Connection.list_all` lists: the SDK client's ``list_<listing>`` method,
whose pages hold the items under the attribute of that name."""

_LISTINGS: dict[str, str] = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "resource_templates": "resources",
}
"""The server capability each listing needs (templates are part of ``resources``)."""


def require_mcp() -> None:
    """Raise :class:`MissingExtraError` unless the ``mcp`` SDK is installed."""
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("the MCP client", "mcp", "mcp") from exc


class Connection:
    """One MCP session, run by a single task on the provider's loop."""

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        on_tools_changed: Callable[[str], None],
        errlog: TextIO | None,
        client_name: str,
    ) -> None:
        self.name = name
        self.config = config
        redact.remember(config)  # its secrets never reach a message or a log line
        self._on_tools_changed = on_tools_changed
        self._errlog = errlog
        self._client_name = client_name
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self.broken: str | None = None

    @property
    def connected(self) -> bool:
        return self._client is not None and self._task is not None and not self._task.done()

    def _target(self, stack: contextlib.AsyncExitStack) -> Any:
        """The SDK transport for this server; resources it does not own go on ``stack``."""
        from mcp import StdioServerParameters

        from toolsearch.mcp.stdio import stdio_transport

        config = self.config
        if isinstance(config, StdioServerConfig):
            parameters = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) or None,
                cwd=config.cwd,
            )
            return stdio_transport(
                parameters,
                errlog=self._errlog or _stderr(),
                max_message_bytes=config.max_message_bytes,
                server=self.name,
            )
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http_client = create_mcp_http_client(headers=dict(config.headers) or None)
        # the SDK leaves a client it was given open: ours is closed with the session
        stack.push_async_callback(http_client.aclose)
        return streamable_http_client(config.url, http_client=http_client)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        # an error that lands after start() gave up waiting is not "never retrieved"
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._stop = asyncio.Event()
        self.broken = None
        self._task = loop.create_task(self._run(ready), name=f"mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.connect_timeout)
        except TimeoutError:
            await self.stop()
            raise McpConnectionError(
                f"MCP server {self.name!r} did not finish connecting within "
                f"{self.config.connect_timeout:g} s ({self._describe()})"
            ) from None
        except BaseException as exc:
            await self.stop()
            if isinstance(exc, McpConnectionError | asyncio.CancelledError):
                raise
            raise McpConnectionError(
                f"MCP server {self.name!r} could not be started or reached "
                f"({self._describe()}): {leaf_message(exc)}"
            ) from exc

    def _describe(self) -> str:
        return redact.summary(self.config)

    async def _run(self, ready: asyncio.Future[None]) -> None:
        import anyio
        from mcp import Client
        from mcp.types import Implementation, ToolListChangedNotification

        from toolsearch._version import __version__

        async def on_message(message: Any) -> None:
            if isinstance(message, ToolListChangedNotification):
                self._on_tools_changed(self.name)

        try:
            async with (
                contextlib.AsyncExitStack() as stack,
                Client(
                    self._target(stack),
                    message_handler=on_message,
                    client_info=Implementation(name=self._client_name, version=__version__),
                ) as client,
            ):
                self._client = client
                async with anyio.create_task_group() as group:
                    if _listens_for_tool_changes(client):
                        group.start_soon(self._listen, client)
                    if not ready.done():
                        ready.set_result(None)
                    assert self._stop is not None
                    await self._stop.wait()
                    group.cancel_scope.cancel()
        except BaseException as exc:  # reported to whoever waits for it
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                else:
                    ready.cancel()
            elif not isinstance(exc, asyncio.CancelledError):
                self.broken = leaf_message(exc)
                logger.warning("MCP server %r disconnected: %s", self.name, self.broken)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None

    async def _listen(self, client: Any) -> None:
        """2026-era servers announce tool changes on a ``subscriptions/listen`` stream."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._on_tools_changed(self.name)
        except Exception as exc:  # the session goes on without change events
            logger.debug("MCP server %r: no tool-change subscription (%s)", self.name, exc)

    async def stop(self) -> None:
        task = self._task
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        if self._client is None and not task.done():
            task.cancel()  # still in the handshake: nothing to wind down politely
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 2.0)
        except BaseException:  # its own error was already reported
            pass
        self._task = None
        self._client = None

    async def ensure(self) -> Any:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # two callers must not start two sessions
            if not self.connected:
                await self.stop()
                await self.start()
            return self._client

    async def list_tools(self) -> list[Tool]:
        return await self.list_all("tools")

    async def supports(self, listing: Listing) -> bool:
        """Whether the server advertises the capability ``listing`` needs (the proxy skips
        servers without prompts or resources instead of sending requests they refuse)."""
        client = await self.ensure()
        try:
            capabilities = client.server_capabilities
        except Exception:  # pragma: no cover - capabilities missing: nothing advertised
            return False
        return getattr(capabilities, _LISTINGS[listing], None) is not None

    async def list_all(self, listing: Listing) -> list[Any]:
        """Every item of one listing (``tools``, ``prompts``, ``resources`` or
        ``resource_templates``), page after page, each page within the connect timeout."""
        client = await self.ensure()
        fetch = getattr(client, f"list_{listing}")
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):  # a paginator that never ends cannot hang us
            page = await asyncio.wait_for(
                fetch(cursor=cursor, cache_mode="refresh"), self.config.connect_timeout
            )
            items.extend(getattr(page, listing))
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    async def request(self, send: Callable[[Any], Awaitable[T]]) -> T:
        """``await send(client)`` with this session's SDK client (a prompt to get, a
        resource to read) within the server's call timeout; a lost connection ends the
        session, as for tool calls, and raises :class:`McpConnectionError`."""
        client = await self.ensure()
        try:
            return await asyncio.wait_for(send(client), self.config.timeout)
        except Exception as exc:
            await self._end_if_lost(exc)
            raise

    async def _end_if_lost(self, exc: BaseException) -> None:
        """When ``exc`` means the server went away: end this session (the next use starts
        a new one) and raise :class:`McpConnectionError`; otherwise return."""
        if not connection_lost(exc):
            return
        self.broken = leaf_message(exc)
        await self.stop()
        raise McpConnectionError(
            f"lost the connection to MCP server {self.name!r} ({self.broken}); "
            "it is started again on the next call"
        ) from exc

    async def call_tool(
        self, name: str, arguments: dict[str, Any], progress: ProgressCallback | None = None
    ) -> CallToolResult:
        """Call a tool; with ``progress``, the server's progress notifications for this call
        are handed to it (the SDK sends a progress token only then)."""
        client = await self.ensure()
        timeout = self.config.timeout
        try:
            return await asyncio.wait_for(
                client.call_tool(
                    name, arguments, read_timeout_seconds=timeout, progress_callback=progress
                ),
                timeout + 1.0,
            )
        except Exception as exc:
            await self._end_if_lost(exc)
            raise


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` means the session is gone (the server exited, the stream closed)."""
    import anyio
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    return isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream
    )


def _stderr() -> TextIO:
    """Where a server's stderr goes by default: ours, if it is a real file (under notebooks
    or captured test runners it may not be; then the original one, else nowhere)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    global _DEVNULL
    if _DEVNULL is None:
        _DEVNULL = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    return _DEVNULL


_DEVNULL: TextIO | None = None


def _listens_for_tool_changes(client: Any) -> bool:
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    try:
        tools = client.server_capabilities.tools
        return bool(
            client.protocol_version in MODERN_PROTOCOL_VERSIONS and tools and tools.list_changed
        )
    except Exception:  # pragma: no cover - capabilities missing: no subscription
        return False


def leaf_message(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap them in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = redact.scrub(str(exc).strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def weak_method(method: Callable[[str], None]) -> Callable[[str], None]:
    """A callback that does not keep the provider alive (so it can be collected)."""
    reference = weakref.WeakMethod(method)

    def call(server: str) -> None:
        target = reference()
        if target is not None:
            target(server)

    return call


def shutdown(loop: LoopThread, connections: dict[str, Connection]) -> None:
    """Stop every session, then the loop (an ``McpToolProvider``'s finalizer: it holds no
    reference to the provider)."""
    if loop.loop.is_closed():
        return

    async def stop_all() -> None:
        await asyncio.gather(*(c.stop() for c in list(connections.values())))

    if loop.in_loop_thread:
        # closed (or collected: the garbage collector runs on whichever thread allocates)
        # on the loop's own thread, which cannot wait for itself: stop the sessions as a
        # task, then the loop, whose thread then ends
        async def stop_then_end() -> None:
            try:
                await stop_all()
            finally:
                loop.loop.stop()

        loop.spawn(stop_then_end())
        return
    try:
        loop.run(stop_all(), timeout=STOP_TIMEOUT + 5.0)
    except Exception:  # pragma: no cover - best effort at shutdown
        logger.warning("MCP sessions did not all stop in time", exc_info=True)
    loop.stop()
