"""The tool-search MCP proxy: many MCP servers behind two tools.

An MCP client (a desktop assistant, an IDE) connected to the proxy sees only
``search_tools(query, max_results)`` and ``call_tool(name, arguments)``, instead of every
definition of every server. ``search_tools`` answers with the names, descriptions and
input schemas of the best matches; ``call_tool`` forwards a call to the server that owns
the tool and passes its result (content blocks, ``isError``) through unchanged. This is
progressive disclosure for clients that do not implement tool search themselves.

The index (any :class:`~toolsearch.search.ToolIndex`) is built once at start-up and
rebuilt whenever the exposed tools change: a server's ``tools/list_changed``
notification, or a ``call_tool`` for a name the proxy does not know, which makes every
server list its tools again once. Searching goes through the search-session core
(:class:`~toolsearch.search.sessions.ToolSearchSessions`), the path every front door
uses: the ``tool_search`` span and metrics, listeners and the search log come with it, and
a search (or a rebuild's indexing) runs on a worker thread, so one client's search never
blocks the proxy's other clients. Every client searches the same tool set, and a search's
results never depend on an earlier one (the proxy hands out schemas; no tool is "loaded"),
so nothing one client discovers reaches another.

The proxy is an MCP server like any other toolsearch one: :func:`toolsearch.mcp.server.
tool_server` lists its two tools and routes their calls, :func:`~toolsearch.mcp.server.
run_server` serves it, and :mod:`toolsearch.mcp.results` builds and forwards the results.

Besides tools it forwards the servers' prompts and resources (:mod:`toolsearch.mcp.
passthrough`: prefixed prompt names, ``toolsearch://<server>/<uri>`` resource URIs) and,
during a ``call_tool``, the called server's progress notifications to a client that sent
a progress token (:mod:`toolsearch.mcp.progress`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

from toolsearch._first_use import preload
from toolsearch.errors import McpProxyNotStartedError, ToolIndexError
from toolsearch.mcp.client import McpToolProvider
from toolsearch.mcp.config import validate_tool_names
from toolsearch.mcp.passthrough import Passthrough
from toolsearch.mcp.progress import ProgressRelay, ProgressReporter, request_progress
from toolsearch.mcp.results import error_result, forwarded, text_result
from toolsearch.mcp.server import Transport, run_server, tool_server
from toolsearch.search.events import SearchListener
from toolsearch.search.logs.sink import SearchLog
from toolsearch.search.options import PLAIN_SEARCH_LOOP, ToolSearchOptions
from toolsearch.search.run import SearchResult
from toolsearch.search.session_ref import run_in_thread
from toolsearch.search.sessions import ToolSearchSessions
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolAnnotations, ToolDefinition
from toolsearch.tools.schema import MAX_ARGUMENT_DEPTH, nested_deeper_than

if TYPE_CHECKING:
    from mcp.types import CallToolResult

__all__ = [
    "CALL_TOOL",
    "SEARCH_TOOLS",
    "IndexKind",
    "McpSearchProxy",
    "make_index",
    "validate_tool_names",
]

logger = logging.getLogger(__name__)

SEARCH_TOOLS = "search_tools"
CALL_TOOL = "call_tool"
_SESSION = "mcp-proxy"

IndexKind: TypeAlias = str
"""An index spec: a kind of :data:`toolsearch.indexes.kinds.KINDS` (``"bm25"``,
``"milvus"``...), with an embedder after a colon where the kind takes one."""


def make_index(kind: IndexKind) -> ToolIndex:
    """A default-configured index of the given kind (the extras each needs, and whether it
    takes an embedder as ``hybrid:static`` or a server as ``milvus`` with ``MILVUS_URI``:
    :mod:`toolsearch.indexes.kinds`); see :mod:`toolsearch.indexes.specs`."""
    from toolsearch.indexes import kinds, specs

    if kinds.find_kind(kind.partition(":")[0]) is None:  # installed packages' kinds too
        raise ValueError(f"index must be one of {', '.join(kinds.kind_names())}, not {kind!r}")
    return specs.make_index(kind)


class McpSearchProxy:
    """Search and call the tools of an :class:`McpToolProvider` through two MCP tools.

    Args:
        provider: The servers to aggregate (connected by :meth:`start`, not before).
        index: A ``ToolIndex`` or an index spec (``"bm25"``, ``"hybrid:static"``,
            ``"milvus"``...: :mod:`toolsearch.indexes.kinds`).
        max_results: What ``search_tools`` returns when the caller gives no
            ``max_results`` (callers may ask for 1 to 10).
        name: The proxy's MCP server name.
        search_tool_name: The name of the search tool (``search_tools`` by default; some
            clients reserve that name, pydantic-ai among them).
        call_tool_name: The name of the call tool (``call_tool`` by default).
        search_listeners: Called with a ``ToolSearchEvent`` after every search (door
            ``"mcp-proxy"``).
        search_log: A ``SearchLog`` receiving every search, and every ``call_tool`` call of
            a server's tool with its outcome once it ran (learning from use reads it).

    :meth:`search` and :meth:`asearch` before :meth:`start` raise
    :class:`~toolsearch.errors.McpProxyNotStartedError` (the MCP tools start the proxy
    themselves).

    Tool names follow MCP's rule (1 to 128 of ``A-Z a-z 0-9 _ - .``) and must differ.
    """

    def __init__(
        self,
        provider: McpToolProvider,
        *,
        index: ToolIndex | IndexKind = "bm25",
        max_results: int = 5,
        name: str = "toolsearch-proxy",
        search_tool_name: str = SEARCH_TOOLS,
        call_tool_name: str = CALL_TOOL,
        search_listeners: Sequence[SearchListener] = (),
        search_log: SearchLog | None = None,
    ) -> None:
        if not 1 <= max_results <= 10:
            raise ValueError("max_results must be between 1 and 10")
        validate_tool_names(search_tool_name, call_tool_name)
        self.search_tool_name = search_tool_name
        self.call_tool_name = call_tool_name
        self.provider = provider
        self.sessions = ToolSearchSessions(
            make_index(index) if isinstance(index, str) else index,
            options=ToolSearchOptions(
                max_results=max_results,
                search_tool_name=search_tool_name,
                exclude_loaded_tools=False,
                **PLAIN_SEARCH_LOOP,  # the proxy does not hold the working set yet
            ),
            search_listeners=search_listeners,
            search_log=search_log,
            door="mcp-proxy",
        )
        self.max_results = max_results
        self.name = name
        self._definitions: dict[str, ToolDefinition] = {}
        self._tool_set: list[ToolDefinition] = []
        """The tool set searches run over: the one indexed last (a rebuild builds the next
        one first, so no search waits for it)."""
        self.passthrough = Passthrough(provider)
        """The servers' prompts and resources, as the proxy forwards them."""
        self._started = False
        self._starting: Any = None  # the start-up task, shared by concurrent first requests
        self.rebuilds = 0
        """How many times the index was built (start-up counts as one)."""
        preload()  # what a first request would load on the event loop, loaded now

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect every server, build the index, follow tool-list changes, and find which
        servers offer prompts and resources. The index is built on a worker thread (a hybrid
        index embeds every tool), and concurrent first requests share one start."""
        if self._started:
            return
        if self._starting is None:
            import asyncio

            self._starting = asyncio.ensure_future(self._start())
        await self._starting

    async def _start(self) -> None:
        import asyncio

        await self.provider.aconnect()
        self.provider.add_listener(self._reindex)
        await asyncio.to_thread(self._reindex)
        await self.passthrough.discover()
        self._started = True

    def _reindex(self) -> None:
        # runs on the provider's loop thread while searches go on: every name either index
        # may answer with keeps its definition until the new index is in place
        definitions = {cb.definition.name: cb.definition for cb in self._current()}
        self._definitions = {**self._definitions, **definitions}
        tool_set = list(definitions.values())
        with self.sessions.open(_SESSION, tools=tool_set):
            self._tool_set = tool_set  # built: searches move to it (until then, the old one)
        self._definitions = definitions
        self.rebuilds += 1
        logger.info("tool-search proxy indexed %d tools", len(definitions))

    def _current(self) -> list[Any]:
        return self.provider.current_tool_callbacks()

    @property
    def index(self) -> ToolIndex:
        return self.sessions.index

    @property
    def tool_count(self) -> int:
        return len(self._definitions)

    # -- the two tools ------------------------------------------------------------------------

    def search(self, query: str, max_results: int | None = None) -> dict[str, Any]:
        """What ``search_tools`` answers: ``{"tools": [{name, description, input_schema,
        server}], "total_matches": n}``, best first; a tool's ``title``, ``annotations``
        and ``outputSchema`` are included when its server gave them."""
        self._require_started()
        limit = self.max_results if max_results is None else max(1, min(10, int(max_results)))
        definitions, tool_set = self._definitions, self._tool_set
        with self.sessions.open(_SESSION, tools=tool_set) as run:
            return self._answer(run.search(str(query), limit), definitions)

    async def asearch(self, query: str, max_results: int | None = None) -> dict[str, Any]:
        """:meth:`search` on a worker thread (its indexing and ranking never block the
        event loop): the one search, not a second copy of it."""
        self._require_started()
        answer: dict[str, Any] = await run_in_thread(self.search, query, max_results)
        return answer

    def _require_started(self) -> None:
        """Searching before :meth:`start` would search no tools and answer that nothing
        matched: say what is wrong instead (once the tools were indexed, it searches)."""
        if not self._started and self.rebuilds == 0:
            raise McpProxyNotStartedError(
                "the MCP search proxy has not started: await proxy.start() (it connects the "
                "servers and indexes their tools) before searching"
            )

    @staticmethod
    def _answer(result: SearchResult, definitions: Mapping[str, ToolDefinition]) -> dict[str, Any]:
        if result.error is not None:
            raise ToolIndexError(str(result.error.get("message") or result.error))
        found = []
        for hit in result.hits:
            definition = definitions.get(hit.name)
            if definition is None:
                continue
            entry: dict[str, Any] = {
                "name": definition.name,
                "description": definition.description,
                "input_schema": dict(definition.input_schema),
                "server": definition.category,
            }
            # the MCP metadata of the tool, when its server gave it (MCP's spelling)
            if definition.title is not None:
                entry["title"] = definition.title
            if definition.annotations is not None and definition.annotations.to_mcp():
                entry["annotations"] = definition.annotations.to_mcp()
            if definition.output_schema is not None:
                entry["outputSchema"] = dict(definition.output_schema)
            found.append(entry)
        answer: dict[str, Any] = {"tools": found, "total_matches": result.total_matches}
        if not found:
            answer["hint"] = "No tool matched; try other words, or fewer of them."
        return answer

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        progress: ProgressReporter | None = None,
    ) -> CallToolResult:
        """What ``call_tool`` answers: the server's own result, or an ``isError`` result.

        With ``progress``, every progress notification the server sends during the call is
        passed to ``await progress(progress, total, message)`` on this loop, in order, all
        before this returns (the call itself runs on the provider's loop thread)."""
        started, ok = time.time(), False
        try:
            if progress is None:
                result = await self.provider.acall_tool_result(name, arguments)
            else:
                async with ProgressRelay(progress) as relay:
                    result = await self.provider.acall_tool_result(
                        name, arguments, progress=relay.on_progress
                    )
            ok = not result.is_error
        finally:
            await self._record_outcome(name, ok, started)
        if result.is_error and name not in self._definitions:
            text = (
                f"Unknown tool {name!r}. Call {self.search_tool_name} first and use a name "
                "it returns."
            )
            return error_result(text)
        return forwarded(result)

    async def _record_outcome(self, name: str, ok: bool, started: float) -> None:
        """One call of a server's tool, with its outcome, to the search log (on a worker
        thread; a name no server has is not a tool call worth learning from)."""
        tool_set = self._tool_set
        if self.sessions.search_log is None or name not in self._definitions or not tool_set:
            return

        import asyncio

        def record() -> None:
            with self.sessions.open(_SESSION, tools=tool_set) as run:
                run.record_outcomes([name], [ok], started)

        await asyncio.to_thread(record)

    def tool_definitions(self) -> list[ToolDefinition]:
        """The two tools the proxy offers, as toolsearch definitions (for token counting)."""
        servers = ", ".join(self.provider.server_names) or "none"
        return [
            ToolDefinition(
                name=self.search_tool_name,
                title="Search tools",
                annotations=ToolAnnotations(
                    read_only=True, destructive=False, idempotent=True, open_world=False
                ),
                description=(
                    "Search the tools of the connected MCP servers "
                    f"({servers}) by what you want to do. Returns the best matching tools "
                    "with their names, descriptions and input schemas; then run one with "
                    f"{self.call_tool_name}."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "string",
                            "description": "What the tool should do, in a few keywords",
                        },
                        "max_results": {
                            "type": "integer",
                            "description": "How many tools to return (1-10)",
                            "minimum": 1,
                            "maximum": 10,
                            "default": self.max_results,
                        },
                    },
                    "required": ["query"],
                },
            ),
            ToolDefinition(
                name=self.call_tool_name,
                title="Call a tool",
                description=(
                    f"Run a tool found with {self.search_tool_name}, by its exact name, with "
                    "arguments that fit its input schema."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The tool's exact name"},
                        "arguments": {
                            "type": "object",
                            "description": "The tool's arguments",
                            "additionalProperties": True,
                        },
                    },
                    "required": ["name"],
                },
            ),
        ]

    # -- the MCP server -----------------------------------------------------------------------

    async def _handle(self, tool_name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Answer a call to one of the two tools (arguments as the MCP client sent them)."""
        await self.start()
        if tool_name == self.search_tool_name:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                return error_result(f"{self.search_tool_name} needs a non-empty 'query' string")
            try:
                found = await self.asearch(query, _as_int(arguments.get("max_results")))
            except Exception as exc:  # e.g. an index error: the model reads it
                return error_result(f"search failed: {exc}")
            return text_result(json.dumps(found, ensure_ascii=False), structured=found)
        name = arguments.get("name")
        if not isinstance(name, str) or not name:
            return error_result(f"{self.call_tool_name} needs the tool's 'name'")
        inner = arguments.get("arguments") or {}
        too_deep = f"'arguments' nest more than {MAX_ARGUMENT_DEPTH} levels deep"
        if isinstance(inner, str):
            try:
                inner = json.loads(inner) if inner.strip() else {}
            except json.JSONDecodeError as exc:
                return error_result(f"'arguments' is not valid JSON: {exc.msg}")
            except RecursionError:
                return error_result(too_deep)
        if nested_deeper_than(inner, MAX_ARGUMENT_DEPTH):
            return error_result(too_deep)
        if not isinstance(inner, dict):
            return error_result("'arguments' must be an object")
        return await self.call(name, inner, request_progress())

    def build_server(self) -> Any:
        """The proxy as an MCP low-level ``Server`` (its lifespan calls :meth:`start`).

        It offers prompts and resources when some server does; built before :meth:`start`
        (which :meth:`serve` runs first), it offers both, as it cannot know yet."""

        @asynccontextmanager
        async def lifespan(server: Any) -> AsyncIterator[dict[str, Any]]:
            await self.start()
            yield {}

        server = tool_server(
            self.tool_definitions(),
            self._handle,
            name=self.name,
            instructions=(
                f"Tools of several MCP servers are reachable through {self.search_tool_name} and "
                f"{self.call_tool_name}: search first, then call a tool by the exact name found."
            ),
            lifespan=lifespan,
        )
        self.passthrough.register(server)
        return server

    async def serve(
        self,
        *,
        transport: Transport = "stdio",
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        auth_token: str | None = None,
    ) -> None:
        """Connect the servers, index their tools, then serve until the client leaves.

        With ``auth_token`` (HTTP only) every request needs ``Authorization: Bearer
        <auth_token>``; others get ``401``."""
        await self.start()
        await run_server(
            self.build_server(),
            transport=transport,
            host=host,
            port=port,
            path=path,
            auth_token=auth_token,
        )


def _as_int(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
