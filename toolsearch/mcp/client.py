"""MCP servers' tools as ``ToolCallback``s: :class:`McpToolProvider`.

The provider owns one :class:`~toolsearch._async.LoopThread` (the package's sync/async
bridge): every MCP session lives on that loop for the provider's lifetime, each inside one
long-lived task (:mod:`toolsearch.mcp.connection`). Synchronous callers block on a future;
asynchronous callers on any other loop await it. So the loop's sync path and its async
path both work, and neither depends on the caller's event loop.

Nothing connects at import or construction: the first call that needs tools
(:meth:`McpToolProvider.tool_callbacks`, :meth:`~McpToolProvider.resolve`, a tool call) or
an explicit :meth:`~McpToolProvider.connect` starts the servers. :meth:`close` (or leaving
the ``with`` block) ends every session, which stops stdio servers' processes.

Which tools are exposed and how they are named: :mod:`toolsearch.mcp.exposure`; how
results become text and failures errors: :mod:`toolsearch.mcp.results`. Tools keep the
``ToolCallback`` error contract of :mod:`toolsearch.errors`: a failure raises (a typed
:class:`~toolsearch.errors.ToolExecutionError`, or
:class:`~toolsearch.errors.InvalidToolArgumentsError` for arguments that do not fit) and
the loop turns it into the result text the model reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TextIO, TypeVar

from toolsearch._async import LoopThread
from toolsearch._steps import Steps, adrive, drive
from toolsearch.errors import (
    InvalidToolArgumentsError,
    McpConfigError,
    McpConnectionError,
    McpError,
)
from toolsearch.mcp.config import ServerConfig, ServersArgument, as_config
from toolsearch.mcp.connection import (
    Connection,
    leaf_message,
    require_mcp,
    shutdown,
    weak_method,
)
from toolsearch.mcp.exposure import Exposed, PrefixMode, ToolFilter, expose
from toolsearch.mcp.results import (
    call_error,
    content_text,
    error_result,
    failure_text,
    result_text,
    tool_error,
)
from toolsearch.tools.definition import ToolDefinition, ToolMetadata
from toolsearch.tools.names import CLASH_SEPARATOR
from toolsearch.tools.schema import parse_arguments
from toolsearch.tools.validation import validate_json_value

if TYPE_CHECKING:
    from mcp.types import CallToolResult, Tool

    from toolsearch.mcp.connection import ProgressCallback
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


class McpToolCallback:
    """One MCP server tool as a ``ToolCallback``; it runs through its provider's sessions.

    ``call`` / ``acall`` keep the ``ToolCallback`` contract (:mod:`toolsearch.errors`):
    arguments that are not a JSON object or do not fit the tool's input schema raise
    :class:`~toolsearch.errors.InvalidToolArgumentsError` before anything is sent; an
    ``isError`` result raises :class:`~toolsearch.errors.ToolExecutionError` (``cause``:
    :class:`~toolsearch.errors.McpToolError` with the tool's text); an unreachable or lost
    server, a timeout or a closed provider raises
    :class:`~toolsearch.errors.ToolTransportError`.
    """

    def __init__(self, provider: McpToolProvider, exposed: Exposed) -> None:
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
        """Run the tool on its server and wait for its result text."""
        return self._provider._call(self._exposed, self._arguments(input_json))

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        """:meth:`call` for async code, from any event loop."""
        return await self._provider._acall(self._exposed, self._arguments(input_json))

    async def acall_result(self, arguments: Mapping[str, Any]) -> CallToolResult:
        """The server's own ``CallToolResult`` for ``arguments`` (content blocks and
        ``structuredContent`` as sent; failures as an ``isError`` result), checked against
        the input schema first: what ``serve_tools`` forwards when it re-serves this tool."""
        checked = self._arguments(json.dumps(dict(arguments)))
        return await self._provider.acall_tool_result(self.definition.name, checked)

    def _arguments(self, input_json: str) -> dict[str, Any]:
        name = self.definition.name
        arguments = parse_arguments(name, input_json)
        problems = validate_json_value(self.definition.input_schema, arguments)
        if problems:
            raise InvalidToolArgumentsError(name, "; ".join(problems))
        return arguments

    def __repr__(self) -> str:
        return (
            f"McpToolCallback(name={self.definition.name!r}, server={self.server!r}, "
            f"tool={self.tool_name!r})"
        )


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
        self.config = as_config(servers)
        self._servers: dict[str, ServerConfig] = self.config.enabled_servers
        self._tool_filter = tool_filter
        self._prefix: PrefixMode = prefix
        self._separator = separator
        self._on_connect_error = on_connect_error
        self._errlog = errlog
        self._client_name = client_name
        self._lock = threading.RLock()
        self._loop: LoopThread | None = None
        self._connections: dict[str, Connection] = {}
        self._server_tools: dict[str, list[Tool]] = {}
        self._exposed: dict[str, Exposed] = {}
        self._callbacks: dict[str, McpToolCallback] = {}
        self._failures: dict[str, str] = {}
        self._connected = False
        self._closed = False
        self._version = 0
        self._listeners: list[Callable[[], None]] = []
        self._pending_relists: set[str] = set()
        self._connect_lock: asyncio.Lock | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def server_names(self) -> list[str]:
        """The enabled servers of the config, in order."""
        return list(self._servers)

    @property
    def connected_servers(self) -> list[str]:
        """The servers with a session, in config order (not those left out at connect)."""
        return list(self._connections)

    @property
    def prefix(self) -> PrefixMode:
        """When server names prefix exposed names (``auto``, ``always``, ``never``)."""
        return self._prefix

    @property
    def separator(self) -> str:
        """Between a server's name and a prefixed name."""
        return self._separator

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

    def _ensure_loop(self) -> LoopThread:
        with self._lock:
            if self._closed:
                raise McpError("this McpToolProvider is closed")
            if self._loop is None:
                require_mcp()
                self._loop = LoopThread(f"toolsearch-mcp-{id(self):x}")
                # runs when the provider is collected, or at interpreter exit (atexit)
                self._finalizer = weakref.finalize(self, shutdown, self._loop, self._connections)
            return self._loop

    # Blocking and awaiting faces share one core each (:mod:`toolsearch._steps`): it yields
    # _CONNECT or an _OnLoop coroutine, which _perform waits for and _aperform awaits.

    def _perform(self, effect: _Effect) -> Any:
        if isinstance(effect, _OnLoop):
            return self._ensure_loop().run(effect.coroutine, timeout=effect.timeout)
        return self.connect()

    async def _aperform(self, effect: _Effect) -> Any:
        if isinstance(effect, _OnLoop):
            return await self._ensure_loop().run_async(effect.coroutine)
        return await self.aconnect()

    def connect(self) -> McpToolProvider:
        """Start every server and list its tools (idempotent). Returns ``self``."""
        return drive(self._connect_steps(), self._perform)

    async def aconnect(self) -> McpToolProvider:
        """:meth:`connect` for async code."""
        return await adrive(self._connect_steps(), self._aperform)

    def _connect_steps(self) -> Steps[_Effect, McpToolProvider]:
        if not self._connected:
            self._ensure_loop()
            yield _OnLoop(self._aconnect())
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
        on_tools_changed = weak_method(self._tools_changed)
        for name in names:
            self._connections.setdefault(
                name,
                Connection(
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
            text = "; ".join(leaf_message(e) for e in failures.values())
            raise McpConnectionError(f"MCP servers {sorted(failures)} failed: {text}")
        for name, outcome in failures.items():
            self._failures[name] = leaf_message(outcome)
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
                f"MCP server {name!r} connected but listing its tools failed: {leaf_message(exc)}"
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
        self._perform(_OnLoop(self._relist([server] if server else list(self._connections))))

    async def arefresh(self, server: str | None = None) -> None:
        await self.aconnect()
        await self._aperform(_OnLoop(self._relist([server] if server else list(self._connections))))

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

        assert self._loop is not None  # announcements arrive on the provider's loop
        self._loop.spawn(relist())

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
        exposed = expose(
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
        """Call an exposed tool by name: its result text; failures raise as
        :meth:`McpToolCallback.call` does (an unknown name raises
        :class:`~toolsearch.errors.McpError`)."""
        found = self.resolve(name)
        if found is None:
            raise McpError(f"no MCP tool is named {name!r}")
        return found.call(json.dumps(dict(arguments or {})))

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """:meth:`call_tool` for async code."""
        await self.aconnect()
        with self._lock:
            found = self._callbacks.get(name)
        if found is None:
            raise McpError(f"no MCP tool is named {name!r}")
        return await found.acall(json.dumps(dict(arguments or {})))

    async def acall_tool_result(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call an exposed tool and return the server's own ``CallToolResult`` (content
        blocks kept as they are, arguments passed on unchecked); failures become an
        ``isError`` result. An unknown name makes every server list its tools again once
        before giving up. ``await progress(progress, total, message)`` gets the server's
        progress notifications for the call, on the provider's loop thread."""
        await self.aconnect()
        assert self._loop is not None
        with self._lock:
            found = self._exposed.get(name)
        if found is None:
            await self._loop.run_async(self._relist(list(self._connections)))
            with self._lock:
                found = self._exposed.get(name)
        if found is None:
            return error_result(_unknown_tool_text(name))
        try:
            call = self._invoke(found, dict(arguments or {}), progress)
            return await self._loop.run_async(call)
        except Exception as exc:
            return error_result(failure_text(found, exc))

    async def _invoke(
        self,
        exposed: Exposed,
        arguments: dict[str, Any],
        progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        connection = self._connections.get(exposed.server)
        if connection is None:
            raise McpConnectionError(f"MCP server {exposed.server!r} is not connected")
        return await connection.call_tool(exposed.tool_name, arguments, progress)

    async def arun_on_server(
        self, server: str, operation: Callable[[Connection], Coroutine[Any, Any, T]]
    ) -> T:
        """``await operation(connection)`` with one connected server's session, on the
        provider's loop where that session lives (the proxy's prompts and resources go
        through here). Raises :class:`~toolsearch.errors.McpConnectionError` for a server
        without a session."""
        await self.aconnect()
        assert self._loop is not None
        connection = self._connections.get(server)
        if connection is None:
            raise McpConnectionError(f"MCP server {server!r} is not connected")
        return await self._loop.run_async(operation(connection))

    def _call(self, exposed: Exposed, arguments: dict[str, Any]) -> str:
        return drive(self._call_steps(exposed, arguments), self._perform)

    async def _acall(self, exposed: Exposed, arguments: dict[str, Any]) -> str:
        return await adrive(self._call_steps(exposed, arguments), self._aperform)

    def _call_steps(self, exposed: Exposed, arguments: dict[str, Any]) -> Steps[_Effect, str]:
        """One call of an exposed tool: its text, or a typed error (the blocking face
        waits ``timeout + 5`` seconds at most; the async one leaves that to its caller)."""
        timeout = self._servers[exposed.server].timeout
        try:
            self._ensure_loop()
            yield _CONNECT
            result = yield _OnLoop(self._invoke(exposed, arguments), timeout + 5.0)
        except Exception as exc:
            error = call_error(exposed, exc, timeout)
            raise error from error.cause
        return _text_or_raise(exposed, result)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "connected" if self._connected else "not connected"
        return f"McpToolProvider(servers={self.server_names!r}, {state})"


class _OnLoop(NamedTuple):
    """Effect: run ``coroutine`` on the provider's loop (blocking: ``timeout`` at most)."""

    coroutine: Coroutine[Any, Any, Any]
    timeout: float | None = None


class _Connect:
    """Effect: connect the provider (:meth:`McpToolProvider.connect` or ``aconnect``)."""


_CONNECT = _Connect()
_Effect = _OnLoop | _Connect


def _unknown_tool_text(name: str) -> str:
    return f"Error: no MCP tool is named {name!r}"


def _text_or_raise(exposed: Exposed, result: CallToolResult) -> str:
    if result.is_error:
        error = tool_error(exposed.definition.name, result)
        raise error from error.cause
    return content_text(result)
