"""MCP servers' tools as ``ToolCallback``s: :class:`McpToolProvider`.

The provider owns one background thread running an asyncio event loop. Every MCP session
lives on that loop, each inside one long-lived task (the SDK's transports are anyio
context managers that must be entered and left by the same task). Synchronous callers
block on a future; asynchronous callers on any other loop await it. So the loop's sync
path and its async path both work, and neither depends on the caller's event loop.

Nothing connects at import or construction: the first call that needs tools
(:meth:`McpToolProvider.tool_callbacks`, :meth:`~McpToolProvider.resolve`, a tool call) or
an explicit :meth:`~McpToolProvider.connect` starts the servers. :meth:`close` (or leaving
the ``with`` block) ends every session, which stops stdio servers' processes.

A tool's failure never raises out of a callback: an ``isError`` result, an exception from
the session, a dropped connection or a timeout all come back as the tool's result text,
starting with ``Error:``, so a model can read it and the loop goes on. Arguments that are
not a JSON object raise :class:`~toolsearch.errors.InvalidToolArgumentsError`, which the
loop also turns into a result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import sys
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeVar

from toolsearch.catalog.openapi import fit_name
from toolsearch.catalog.sources import CLASH_SEPARATOR
from toolsearch.catalog.sources import server_prefix as _catalog_prefix
from toolsearch.errors import (
    InvalidToolArgumentsError,
    McpConfigError,
    McpConnectionError,
    McpError,
    MissingExtraError,
)
from toolsearch.mcp.config import (
    HttpServerConfig,
    McpConfig,
    StdioServerConfig,
    load_mcp_config,
)
from toolsearch.tools.definition import ToolDefinition, ToolMetadata

if TYPE_CHECKING:
    from mcp.types import CallToolResult, Tool

    from toolsearch.tools.context import ToolContext

__all__ = [
    "McpToolCallback",
    "McpToolProvider",
    "PrefixMode",
    "ToolFilter",
    "result_text",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
PrefixMode = Literal["auto", "always", "never"]
ToolFilter = Callable[[str, ToolDefinition], bool]
"""``tool_filter(server_name, definition) -> bool``; the definition has the server's own name."""

ServerConfig = StdioServerConfig | HttpServerConfig
ServersArgument = McpConfig | Mapping[str, ServerConfig] | Mapping[str, Any] | str | Path

_STOP_TIMEOUT = 10.0
"""Seconds to wait for one session (and its process) to shut down before abandoning it."""

_background_tasks: set[asyncio.Task[None]] = set()
"""Fire-and-forget tasks on providers' loops, kept referenced until they finish."""


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("the MCP client", "mcp", "mcp") from exc


# -- the background event loop ---------------------------------------------------------------


class _LoopThread:
    """An asyncio loop in a daemon thread; coroutines are submitted from any thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    @property
    def in_loop_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run on the loop and wait here (never from the loop's own thread)."""
        if self.in_loop_thread:
            coroutine.close()
            raise RuntimeError("a synchronous MCP call cannot run on the provider's own loop")
        future = self.submit(coroutine)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    async def run_async(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await from any loop (the provider's own included)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - only called from async code
            running = None
        if running is self.loop:
            return await coroutine
        return await asyncio.wrap_future(self.submit(coroutine))

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_loop_thread:
            self._thread.join(timeout=_STOP_TIMEOUT)


# -- one server's session --------------------------------------------------------------------


class _Connection:
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
        from mcp import StdioServerParameters, stdio_client

        config = self.config
        if isinstance(config, StdioServerConfig):
            parameters = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) or None,
                cwd=config.cwd,
            )
            return stdio_client(parameters, errlog=self._errlog or _stderr())
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
                f"({self._describe()}): {_leaf_message(exc)}"
            ) from exc

    def _describe(self) -> str:
        config = self.config
        if isinstance(config, StdioServerConfig):
            return "command " + " ".join([config.command, *config.args])
        return f"url {config.url}"

    async def _run(self, ready: asyncio.Future[None]) -> None:
        import anyio
        from mcp import Client
        from mcp.types import Implementation, ToolListChangedNotification

        from toolsearch import __version__

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
                self.broken = _leaf_message(exc)
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
            await asyncio.wait_for(asyncio.shield(task), _STOP_TIMEOUT)
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
        client = await self.ensure()
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(1000):  # a paginator that never ends cannot hang us
            page = await asyncio.wait_for(
                client.list_tools(cursor=cursor, cache_mode="refresh"),
                self.config.connect_timeout,
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        client = await self.ensure()
        timeout = self.config.timeout
        try:
            return await asyncio.wait_for(
                client.call_tool(name, arguments, read_timeout_seconds=timeout), timeout + 1.0
            )
        except Exception as exc:
            if _connection_lost(exc):
                # the server went away: end this session; the next use starts a new one
                self.broken = _leaf_message(exc)
                await self.stop()
                raise McpConnectionError(
                    f"lost the connection to MCP server {self.name!r} ({self.broken}); "
                    "it is started again on the next call"
                ) from exc
            raise


def _connection_lost(exc: BaseException) -> bool:
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


def _leaf_message(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap them in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- results as text -------------------------------------------------------------------------


def result_text(result: CallToolResult) -> str:
    """The text a model reads for an MCP tool result.

    Text blocks are joined by newlines; images, audio and binary resources become a short
    placeholder naming their type and size; with no content blocks the structured content
    is given as JSON. ``isError`` results start with ``Error:``.
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
    text = "\n".join(parts)
    if result.is_error:
        if not text:
            return "Error: the tool reported an error without a message"
        return text if text.lower().startswith("error") else f"Error: {text}"
    return text


# -- exposed tools ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Exposed:
    server: str
    tool_name: str
    definition: ToolDefinition


class McpToolCallback:
    """One MCP server tool as a ``ToolCallback``; it runs through its provider's sessions."""

    def __init__(self, provider: McpToolProvider, exposed: _Exposed) -> None:
        self._provider = provider
        self._exposed = exposed

    @property
    def definition(self) -> ToolDefinition:
        return self._exposed.definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    @property
    def server(self) -> str:
        """The name of the server (from the config) that offers this tool."""
        return self._exposed.server

    @property
    def tool_name(self) -> str:
        """The tool's name on its server (without a prefix)."""
        return self._exposed.tool_name

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        arguments = _parse_arguments(self.definition.name, input_json)
        return self._provider._call_text(self._exposed, arguments)

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        arguments = _parse_arguments(self.definition.name, input_json)
        return await self._provider._acall_text(self._exposed, arguments)

    def __repr__(self) -> str:
        return (
            f"McpToolCallback(name={self.definition.name!r}, server={self.server!r}, "
            f"tool={self.tool_name!r})"
        )


def _parse_arguments(tool_name: str, input_json: str) -> dict[str, Any]:
    try:
        value = json.loads(input_json) if input_json and input_json.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidToolArgumentsError(tool_name, f"not valid JSON: {exc.msg}") from exc
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidToolArgumentsError(tool_name, "the arguments must be a JSON object")
    return value


# -- the provider ----------------------------------------------------------------------------


class McpToolProvider:
    """The tools of several MCP servers as ``ToolCallback``s.

    Args:
        servers: An :class:`~toolsearch.mcp.config.McpConfig`, a path to a TOML/JSON config,
            a mapping in the config's shape (``{"servers": {...}}``), or a mapping of server
            name to :class:`StdioServerConfig` / :class:`HttpServerConfig` / dict.
        tool_filter: ``tool_filter(server_name, definition) -> bool`` decides which tools
            are exposed (after each server's ``include_tools`` / ``exclude_tools``).
        prefix: ``"auto"`` prefixes a tool name with its server's name only when several
            servers offer that name; ``"always"`` prefixes every tool; ``"never"`` keeps the
            first server's tool (in config order) and drops the others with a warning.
        separator: Between the server name and the tool name (``github__create_issue``).
            The default, two underscores, is the catalog's (``toolsearch.catalog`` sources,
            ``toolsearch mcp dump``, the LiveMCPBench loader), so one server's tools get the
            same names everywhere. Server names are reduced to ``[A-Za-z0-9_-]`` as the
            catalog does. An exposed name longer than 64 characters (the limit of OpenAI
            and Anthropic tool names) is cut deterministically, as the catalog cuts names:
            its head plus ``_`` and 8 hex digits of a hash of the whole name.
            ``callback.tool_name`` keeps the server's own name, which calls use.
        on_connect_error: ``"raise"`` fails :meth:`connect` with
            :class:`~toolsearch.errors.McpConnectionError` when any server cannot be
            reached; ``"skip"`` leaves that server out (see :attr:`failures`).
        errlog: Where stdio servers' stderr goes (default: this process's stderr).

    Use it as a context manager, or call :meth:`close`, so sessions and server processes
    end::

        with McpToolProvider("servers.toml") as mcp_tools:
            client.prompt("...").tools(mcp_tools.tool_callbacks()).call()
    """

    def __init__(
        self,
        servers: ServersArgument,
        *,
        tool_filter: ToolFilter | None = None,
        prefix: PrefixMode = "auto",
        separator: str = CLASH_SEPARATOR,
        on_connect_error: Literal["raise", "skip"] = "raise",
        errlog: TextIO | None = None,
        client_name: str = "toolsearch",
    ) -> None:
        if prefix not in ("auto", "always", "never"):
            raise McpConfigError(f"prefix must be 'auto', 'always' or 'never', not {prefix!r}")
        if on_connect_error not in ("raise", "skip"):
            raise McpConfigError("on_connect_error must be 'raise' or 'skip'")
        self.config = _as_config(servers)
        self._servers: dict[str, ServerConfig] = self.config.enabled_servers
        self._tool_filter = tool_filter
        self._prefix: PrefixMode = prefix
        self._separator = separator
        self._on_connect_error = on_connect_error
        self._errlog = errlog
        self._client_name = client_name
        self._lock = threading.RLock()
        self._loop: _LoopThread | None = None
        self._connections: dict[str, _Connection] = {}
        self._server_tools: dict[str, list[Tool]] = {}
        self._exposed: dict[str, _Exposed] = {}
        self._callbacks: dict[str, McpToolCallback] = {}
        self._failures: dict[str, str] = {}
        self._connected = False
        self._closed = False
        self._version = 0
        self._listeners: list[Callable[[], None]] = []
        self._pending_relists: set[str] = set()
        self._connect_lock: asyncio.Lock | None = None
        self._finalizer: weakref.finalize | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def server_names(self) -> list[str]:
        """The enabled servers of the config, in order."""
        return list(self._servers)

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def failures(self) -> dict[str, str]:
        """Servers left out because they could not be reached (``on_connect_error="skip"``)."""
        return dict(self._failures)

    @property
    def version(self) -> int:
        """Goes up every time the exposed tools change (connect, refresh, list changes)."""
        return self._version

    def _ensure_loop(self) -> _LoopThread:
        with self._lock:
            if self._closed:
                raise McpError("this McpToolProvider is closed")
            if self._loop is None:
                _require_mcp()
                self._loop = _LoopThread(f"toolsearch-mcp-{id(self):x}")
                # runs when the provider is collected, or at interpreter exit (atexit)
                self._finalizer = weakref.finalize(self, _shutdown, self._loop, self._connections)
            return self._loop

    def connect(self) -> McpToolProvider:
        """Start every server and list its tools (idempotent). Returns ``self``."""
        if self._connected:
            return self
        loop = self._ensure_loop()
        loop.run(self._aconnect())
        return self

    async def aconnect(self) -> McpToolProvider:
        """:meth:`connect` for async code."""
        if self._connected:
            return self
        loop = self._ensure_loop()
        await loop.run_async(self._aconnect())
        return self

    async def _aconnect(self) -> None:
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()  # created on the provider's loop
        async with self._connect_lock:  # concurrent first uses connect once
            await self._aconnect_once()

    async def _aconnect_once(self) -> None:
        if self._connected:
            return
        names = list(self._servers)
        on_tools_changed = _weak_method(self._tools_changed)
        for name in names:
            self._connections.setdefault(
                name,
                _Connection(
                    name,
                    self._servers[name],
                    on_tools_changed=on_tools_changed,
                    errlog=self._errlog,
                    client_name=self._client_name,
                ),
            )
        outcomes = await asyncio.gather(
            *(self._start_and_list(name) for name in names), return_exceptions=True
        )
        failures = {name: outcome for name, outcome in zip(names, outcomes, strict=True) if outcome}
        for outcome in failures.values():
            if isinstance(outcome, asyncio.CancelledError):
                raise outcome
        if failures and self._on_connect_error == "raise":
            await self._stop_all()
            first = next(iter(failures.values()))
            if len(failures) == 1 and isinstance(first, McpConnectionError):
                raise first
            text = "; ".join(_leaf_message(e) for e in failures.values())
            raise McpConnectionError(f"MCP servers {sorted(failures)} failed: {text}")
        for name, outcome in failures.items():
            self._failures[name] = _leaf_message(outcome)
            logger.warning("left out MCP server %r: %s", name, self._failures[name])
            self._connections.pop(name, None)
        self._rebuild()
        self._connected = True

    async def _start_and_list(self, name: str) -> BaseException | None:
        connection = self._connections[name]
        try:
            await connection.start()
            self._server_tools[name] = await connection.list_tools()
        except BaseException as exc:  # collected, reported by the caller
            await connection.stop()
            if isinstance(exc, McpConnectionError | asyncio.CancelledError):
                return exc
            wrapped = McpConnectionError(
                f"MCP server {name!r} connected but listing its tools failed: {_leaf_message(exc)}"
            )
            wrapped.__cause__ = exc
            return wrapped
        return None

    def close(self) -> None:
        """End every session (stdio servers' processes stop) and the background loop."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._finalizer is not None:
            self._finalizer()
        self._connected = False

    async def aclose(self) -> None:
        """:meth:`close` for async code (it blocks only a worker thread)."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> McpToolProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> McpToolProvider:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _stop_all(self) -> None:
        await asyncio.gather(*(c.stop() for c in self._connections.values()))

    # -- tools --------------------------------------------------------------------------------

    def tool_callbacks(self) -> list[McpToolCallback]:
        """Every exposed tool as a ``ToolCallback`` (connects on first use)."""
        self.connect()
        with self._lock:
            return list(self._callbacks.values())

    async def atool_callbacks(self) -> list[McpToolCallback]:
        await self.aconnect()
        with self._lock:
            return list(self._callbacks.values())

    def current_tool_callbacks(self) -> list[McpToolCallback]:
        """The tools exposed right now, without connecting (empty before :meth:`connect`)."""
        with self._lock:
            return list(self._callbacks.values())

    def tool_definitions(self) -> list[ToolDefinition]:
        """The definitions of every exposed tool (connects on first use)."""
        return [cb.definition for cb in self.tool_callbacks()]

    def resolve(self, tool_name: str) -> McpToolCallback | None:
        """The tool exposed under ``tool_name``, or ``None`` (a ``ToolCallbackResolver``)."""
        self.connect()
        with self._lock:
            return self._callbacks.get(tool_name)

    def refresh(self, server: str | None = None) -> None:
        """List the tools again (of one server, or all) and update the exposed tools."""
        self.connect()
        assert self._loop is not None
        self._loop.run(self._relist([server] if server else list(self._connections)))

    async def arefresh(self, server: str | None = None) -> None:
        await self.aconnect()
        assert self._loop is not None
        await self._loop.run_async(self._relist([server] if server else list(self._connections)))

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` (on the provider's loop thread) after the exposed tools change."""
        self._listeners.append(listener)

    def _tools_changed(self, server: str) -> None:
        """A server said its tool list changed: list it again in the background."""
        if server in self._pending_relists:
            return  # one announcement often arrives twice (notification and subscription)
        self._pending_relists.add(server)
        logger.info("MCP server %r changed its tools; listing them again", server)

        async def relist() -> None:
            await asyncio.sleep(0.05)
            self._pending_relists.discard(server)
            await self._relist([server])

        task = asyncio.get_running_loop().create_task(relist())
        _background_tasks.add(task)
        task.add_done_callback(_background_tasks.discard)

    async def _relist(self, servers: Iterable[str]) -> None:
        for name in servers:
            connection = self._connections.get(name)
            if connection is None:
                continue
            try:
                self._server_tools[name] = await connection.list_tools()
            except Exception as exc:
                logger.warning("listing the tools of MCP server %r failed: %s", name, exc)
        self._rebuild()

    def _rebuild(self) -> None:
        exposed = _expose(
            {name: self._server_tools.get(name, []) for name in self._connections},
            self._servers,
            self._tool_filter,
            self._prefix,
            self._separator,
        )
        with self._lock:
            self._exposed = exposed
            self._callbacks = {name: McpToolCallback(self, e) for name, e in exposed.items()}
            self._version += 1
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                logger.exception("an MCP tool-change listener failed")

    # -- calls --------------------------------------------------------------------------------

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """Call an exposed tool by name; the result (or the error) as text."""
        found = self.resolve(name)
        if found is None:
            return _unknown_tool_text(name)
        return self._call_text(found._exposed, dict(arguments or {}))

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        await self.aconnect()
        with self._lock:
            found = self._callbacks.get(name)
        if found is None:
            return _unknown_tool_text(name)
        return await self._acall_text(found._exposed, dict(arguments or {}))

    async def acall_tool_result(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> CallToolResult:
        """Call an exposed tool and return the server's own ``CallToolResult`` (content
        blocks kept as they are); failures become an ``isError`` result. An unknown name
        makes every server list its tools again once before giving up."""
        from mcp.types import CallToolResult, TextContent

        await self.aconnect()
        assert self._loop is not None
        with self._lock:
            found = self._exposed.get(name)
        if found is None:
            await self._loop.run_async(self._relist(list(self._connections)))
            with self._lock:
                found = self._exposed.get(name)
        if found is None:
            return CallToolResult(
                content=[TextContent(type="text", text=_unknown_tool_text(name))], is_error=True
            )
        try:
            return await self._loop.run_async(self._invoke(found, dict(arguments or {})))
        except Exception as exc:
            return CallToolResult(
                content=[TextContent(type="text", text=_failure_text(found, exc))],
                is_error=True,
            )

    async def _invoke(self, exposed: _Exposed, arguments: dict[str, Any]) -> CallToolResult:
        connection = self._connections.get(exposed.server)
        if connection is None:
            raise McpConnectionError(f"MCP server {exposed.server!r} is not connected")
        return await connection.call_tool(exposed.tool_name, arguments)

    def _call_text(self, exposed: _Exposed, arguments: dict[str, Any]) -> str:
        timeout = self._servers[exposed.server].timeout + 5.0
        try:
            loop = self._ensure_loop()
            self.connect()
            result = loop.run(self._invoke(exposed, arguments), timeout=timeout)
        except Exception as exc:
            return _failure_text(exposed, exc)
        return result_text(result)

    async def _acall_text(self, exposed: _Exposed, arguments: dict[str, Any]) -> str:
        try:
            loop = self._ensure_loop()
            await self.aconnect()
            result = await loop.run_async(self._invoke(exposed, arguments))
        except Exception as exc:
            return _failure_text(exposed, exc)
        return result_text(result)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "connected" if self._connected else "not connected"
        return f"McpToolProvider(servers={self.server_names!r}, {state})"


def _weak_method(method: Callable[[str], None]) -> Callable[[str], None]:
    """A callback that does not keep the provider alive (so it can be collected)."""
    reference = weakref.WeakMethod(method)

    def call(server: str) -> None:
        target = reference()
        if target is not None:
            target(server)

    return call


def _unknown_tool_text(name: str) -> str:
    return f"Error: no MCP tool is named {name!r}"


def _failure_text(exposed: _Exposed, exc: BaseException) -> str:
    where = f"tool {exposed.tool_name!r} on MCP server {exposed.server!r}"
    if isinstance(exc, TimeoutError):
        return f"Error: {where} timed out"
    code = getattr(exc, "code", None)
    if code == -32001:  # the SDK's REQUEST_TIMEOUT
        return f"Error: {where} timed out: {exc}"
    return f"Error: {where} failed: {_leaf_message(exc)}"


def _shutdown(loop: _LoopThread, connections: dict[str, _Connection]) -> None:
    """Stop every session, then the loop (a finalizer: holds no reference to the provider)."""
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

        task = loop.loop.create_task(stop_then_end())
        _background_tasks.add(task)
        task.add_done_callback(_background_tasks.discard)
        return
    try:
        loop.run(stop_all(), timeout=_STOP_TIMEOUT + 5.0)
    except Exception:  # pragma: no cover - best effort at shutdown
        logger.warning("MCP sessions did not all stop in time", exc_info=True)
    loop.stop()


def _as_config(servers: ServersArgument) -> McpConfig:
    if isinstance(servers, McpConfig | str | Path):
        return load_mcp_config(servers)
    if not isinstance(servers, Mapping):
        raise McpConfigError(
            "servers must be an McpConfig, a config file path or a mapping of server name "
            f"to server config, not {type(servers).__name__}"
        )
    if "servers" in servers or "mcpServers" in servers:
        return load_mcp_config(servers)
    entries: dict[str, Any] = {}
    for name, entry in servers.items():
        if isinstance(entry, StdioServerConfig | HttpServerConfig):
            entries[name] = entry.model_dump()
        else:
            entries[name] = entry
    return load_mcp_config({"servers": entries})


def _exposed_name(server: str, tool_name: str, *, prefixed: bool, separator: str) -> str:
    """The name a server's tool is exposed under: ``<server><separator><tool>`` when
    prefixed (the server name reduced as the catalog reduces it), then cut to 64
    characters by the catalog's rule (:func:`toolsearch.catalog.openapi.fit_name`)."""
    name = f"{_catalog_prefix(server)}{separator}{tool_name}" if prefixed else tool_name
    return fit_name(name)


def _expose(
    tools: Mapping[str, Sequence[Tool]],
    configs: Mapping[str, ServerConfig],
    tool_filter: ToolFilter | None,
    prefix: PrefixMode,
    separator: str,
) -> dict[str, _Exposed]:
    """Which tools are exposed and under which names (config order, then server order)."""
    candidates: list[tuple[str, ToolDefinition]] = []
    for server, server_tools in tools.items():
        config = configs[server]
        seen: set[str] = set()
        for tool in server_tools:
            if tool.name in seen or not config.exposes(tool.name):
                continue
            seen.add(tool.name)
            definition = _definition(tool, server)
            if definition is None:
                continue
            if tool_filter is not None and not tool_filter(server, definition):
                continue
            candidates.append((server, definition))
    counts = Counter(d.name for _, d in candidates)
    exposed: dict[str, _Exposed] = {}
    for server, definition in candidates:
        prefixed = prefix == "always" or (prefix == "auto" and counts[definition.name] > 1)
        name = _exposed_name(server, definition.name, prefixed=prefixed, separator=separator)
        if name in exposed:
            other = exposed[name].server
            logger.warning(
                "MCP tool %r of server %r is left out: server %r already exposes that name%s",
                definition.name,
                server,
                other,
                " (use prefix='auto')" if prefix == "never" else "",
            )
            continue
        renamed = ToolDefinition(
            name=name,
            description=definition.description,
            input_schema=definition.input_schema,
            category=server,
        )
        exposed[name] = _Exposed(server, definition.name, renamed)
    return exposed


def _definition(tool: Tool, server: str) -> ToolDefinition | None:
    schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
    schema = dict(schema) or {"type": "object", "properties": {}}
    description = tool.description or tool.title or ""
    try:
        return ToolDefinition(
            name=tool.name, description=description, input_schema=schema, category=server
        )
    except Exception as exc:
        logger.warning("MCP server %r: tool %r is left out: %s", server, tool.name, exc)
        return None
