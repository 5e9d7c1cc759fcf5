"""pydantic-ai: a toolsearch index as the ``ToolSearch`` capability's strategy.

pydantic-ai hides tools marked ``defer_loading=True`` until its ``ToolSearch`` capability
discovers them; the capability takes a strategy, a callable ``(ctx, queries, tools) ->
names``, and runs it locally through its ``search_tools`` function tool. Its default
strategy scores keyword overlap. The swap is one line::

    from pydantic_ai import Agent
    from pydantic_ai.toolsets import FunctionToolset
    from toolsearch.integrations.pydantic_ai import toolsearch_tool_search

    agent = Agent(
        "openai:gpt-5.2",
        toolsets=[FunctionToolset(my_tools).defer_loading()],
        capabilities=[toolsearch_tool_search("hybrid")],  # was: ToolSearch()
    )

:class:`ToolSearchStrategy` is the strategy itself, for ``ToolSearch(strategy=...)``: a thin
front door over the search-session core (:class:`~toolsearch.search.sessions.
ToolSearchSessions`). It is **async**: pydantic-ai awaits it, and the core indexes and ranks
on a worker thread, so a hybrid index embedding a new tool set never stalls the agent's
event loop (pydantic-ai calls a sync strategy on the loop itself).

The session of a search is, in order: the ``session_id`` given to the strategy (a string or
a callable of the ``RunContext``), else pydantic-ai's own ``ctx.conversation_id`` (one per
conversation: a run continued with ``message_history`` keeps it), else a throwaway session
for that search. An agent's tool set is indexed once per session and tool set. pydantic-ai
keeps what a run discovered in its message history (``ctx.discovered_tool_names``): those
tools count as discovered, so a search returns only tools the model does not have yet
(``exclude_discovered``), as toolsearch's own search tool does. pydantic-ai itself refuses a
call to a deferred tool that was never discovered ("search for it first").

Needs ``toolsearch[pydantic-ai]`` (``pydantic-ai-slim``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Unpack

from toolsearch.integrations._common import (
    DefinitionCache,
    import_modules,
    own_name,
    renamed,
    require,
    start_loop_workers,
    warm_index,
)
from toolsearch.integrations.door import ToolSearchDoorKwargs, check_max_results, door_sessions
from toolsearch.search.builtin_tools.search_tool import MAX_RESULTS_CAP
from toolsearch.search.options import PLAIN_SEARCH_LOOP, ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.run import SearchRun
from toolsearch.search.session_ref import run_in_thread
from toolsearch.search.sessions import resolve_session
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from pydantic_ai import RunContext
    from pydantic_ai.tools import ToolDefinition as PydanticToolDefinition

    from toolsearch.integrations._pydantic_ai_toolset import ToolSearchCapability

__all__ = [
    "SEARCH_TOOL_NAME",
    "ToolSearchStrategy",
    "to_tool_definition",
    "toolsearch_tool_search",
]

SEARCH_TOOL_NAME = "search_tools"
"""The name pydantic-ai gives its local search tool, reserved once an agent has a deferred
tool: no other tool of the agent may have it (an MCP server exposing ``search_tools``, the
toolsearch MCP proxy's default, must be renamed or prefixed, e.g.
``MCPToolset(...).prefixed("proxy")``)."""

_EXTRA = "pydantic-ai"
_RENAMED = {
    "ToolsearchStrategy": "ToolSearchStrategy",
    "to_toolsearch_definition": "to_tool_definition",
}
_REMEMBERED_SESSIONS = 10_000


def _require_pydantic_ai() -> Any:
    feature = "the pydantic-ai integration"
    return require("pydantic_ai", extra=_EXTRA, feature=feature, package="pydantic-ai-slim")


def to_tool_definition(tool: PydanticToolDefinition) -> ToolDefinition:
    """A pydantic-ai ``ToolDefinition`` as the toolsearch definition an index ranks (under
    the tool's own name)."""
    return ToolDefinition(
        name=own_name(tool),
        description=tool.description or "",
        input_schema=tool.parameters_json_schema or {"type": "object", "properties": {}},
    )


class ToolSearchStrategy:
    """A pydantic-ai ``ToolSearch`` strategy backed by a toolsearch index.

    ``ToolSearch(strategy=ToolSearchStrategy("hybrid"))``. pydantic-ai awaits it with the
    run context, the model's queries and the searchable deferred tools; it answers the names
    of the best tools, best first (pydantic-ai keeps ``ToolSearch.max_results`` of them).

    Args:
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``, ``"vector:static"``)
            or ``None`` for the default index.
        session_id: The session to search in: a string, or a callable of the ``RunContext``
            (e.g. per tenant); ``None`` (default): pydantic-ai's ``ctx.conversation_id``.
        max_results: How many names a search returns at most (1-10; pydantic-ai then keeps
            its own ``max_results``).
        exclude_discovered: Leave tools the run already discovered out of the results (a
            query naming one exactly still finds it).
        **shared: The arguments every front door takes
            (:class:`~toolsearch.integrations.door.ToolSearchDoorKwargs`): ``sessions``
            (another door's, to share), ``registry``, ``store``, ``eviction_strategy``,
            ``search_listeners`` (door ``"pydantic-ai"``), ``search_log``.
    """

    def __init__(
        self,
        index: ToolIndex | str | None = None,
        *,
        session_id: str | Callable[[RunContext[Any]], str | None] | None = None,
        max_results: int = MAX_RESULTS_CAP,
        exclude_discovered: bool = True,
        **shared: Unpack[ToolSearchDoorKwargs],
    ) -> None:
        check_max_results(max_results)
        options = ToolSearchOptions(
            max_results=max_results,
            search_tool_name=SEARCH_TOOL_NAME,
            exclude_loaded_tools=exclude_discovered,
            **PLAIN_SEARCH_LOOP,  # this door does not hold the working set yet
        )
        self.sessions = door_sessions(index, options, "pydantic-ai", **shared)
        self.session_id = session_id
        self.max_results = max_results
        self.exclude_discovered = exclude_discovered
        self._definitions = DefinitionCache()
        self._searched: OrderedDict[str, list[ToolDefinition]] = OrderedDict()
        self._lock = threading.Lock()
        # what a first search would import on the event loop, imported now
        import_modules("pydantic_ai", "toolsearch.integrations._pydantic_ai_toolset")

    @property
    def registry(self) -> SessionRegistry:
        return self.sessions.registry

    @property
    def index(self) -> ToolIndex:
        return self.sessions.index

    def session_of(self, ctx: RunContext[Any]) -> str | None:
        """The session id a run context searches in (``None``: a throwaway session)."""
        given = self.session_id(ctx) if callable(self.session_id) else self.session_id
        return given or getattr(ctx, "conversation_id", None)

    async def __call__(
        self,
        ctx: RunContext[Any],
        queries: Sequence[str],
        tools: Sequence[PydanticToolDefinition],
    ) -> list[str]:
        texts = [q for q in queries if isinstance(q, str) and q.strip()]
        if not texts or not tools:
            return []
        session = resolve_session(self.session_of(ctx))
        # the names pydantic-ai lists are the wire names the model is offered (under
        # toolsearch_tool_search); the index ranks the tools' own names
        wire_of = {own_name(t): t.name for t in tools}
        own_of = {wire: own for own, wire in wire_of.items()}
        # converting 300 tool definitions is work too: it goes to the worker thread as well
        definitions: list[ToolDefinition] = []

        def open_run() -> SearchRun:
            definitions.extend(self.definitions(tools))
            return self.sessions.open(session, tools=definitions)

        run: SearchRun = await run_in_thread(open_run)
        try:
            discovered = [own_of.get(n, n) for n in getattr(ctx, "discovered_tool_names", ())]
            skipped = discovered if self.exclude_discovered else ()
            result = await run.asearch(texts, self.max_results, exclude=skipped)
        finally:
            await run.aclose()
        found = result.names[: self.max_results]
        if not session.ephemeral:  # what pydantic-ai loads next: its discoveries and these
            loaded = [run.tools[n] for n in dict.fromkeys([*discovered, *found]) if n in run.tools]
            self.sessions.note_loaded(session.session_id, loaded)
            self._remember(session.session_id, definitions)
        return [wire_of.get(n, n) for n in found]

    def _remember(self, session_id: str, definitions: list[ToolDefinition]) -> None:
        """The tool set a session searched last: a call's outcome is logged against it."""
        with self._lock:
            self._searched[session_id] = definitions
            self._searched.move_to_end(session_id)
            while len(self._searched) > _REMEMBERED_SESSIONS:
                self._searched.popitem(last=False)

    async def arecord_outcome(
        self, ctx: RunContext[Any], name: str, ok: bool, started: float
    ) -> None:
        """Report one call of the tool ``name`` (its own name) to the search log, once it
        ran: ``ok`` whether it returned. Logged against the tool set the session searched
        last (nothing without a search log, or for a session that never searched)."""
        if self.sessions.search_log is None:
            return
        session = resolve_session(self.session_of(ctx))
        with self._lock:
            definitions = self._searched.get(session.session_id)
        if session.ephemeral or not definitions or name not in {d.name for d in definitions}:
            return

        def record() -> None:
            with self.sessions.open(session, tools=definitions) as run:
                run.record_outcomes([name], [ok], started)

        await run_in_thread(record)

    async def awarm_up(self) -> None:
        """Load on a worker thread what the first search would otherwise load on the
        event loop (the index's model, pydantic-ai's modules), and start the loop's worker
        threads: call it at start-up."""
        start_loop_workers()
        await run_in_thread(self.warm_up)

    def warm_up(self) -> None:
        """Load what the first search needs (the index's model, pydantic-ai's modules)."""
        _require_pydantic_ai()
        import toolsearch.integrations._pydantic_ai_toolset  # noqa: F401

        warm_index(self.index)

    def definitions(self, tools: Sequence[PydanticToolDefinition]) -> list[ToolDefinition]:
        """The toolsearch definitions of pydantic-ai tools (each converted once)."""
        out = []
        for tool in tools:
            schema = tool.parameters_json_schema
            key = (tool.name, tool.description, id(schema))
            build = partial(to_tool_definition, tool)
            out.append(self._definitions.get((*key, own_name(tool)), schema, build))
        return out

    def __repr__(self) -> str:
        return f"ToolSearchStrategy({type(self.index).__name__})"


def toolsearch_tool_search(
    index: ToolIndex | str | ToolSearchStrategy | None = None,
    *,
    max_results: int = MAX_RESULTS_CAP,
    tool_description: str | None = None,
    parameter_description: str | None = None,
    **strategy_options: Any,
) -> ToolSearchCapability:
    """pydantic-ai's ``ToolSearch`` capability with a :class:`ToolSearchStrategy`, listing
    every tool under a name every provider accepts (``github.create_issue`` as
    ``github_create_issue``; the search results name the tools so) and reporting each
    call's outcome to the strategy's search log once it ran.

    ``capabilities=[toolsearch_tool_search("hybrid")]`` in place of ``ToolSearch()``.
    ``max_results`` is the capability's (and the strategy's); ``tool_description`` and
    ``parameter_description`` are the capability's texts for its ``search_tools`` tool;
    further keyword arguments go to :class:`ToolSearchStrategy`.
    """
    _require_pydantic_ai()
    from toolsearch.integrations._pydantic_ai_toolset import ToolSearchCapability

    if isinstance(index, ToolSearchStrategy):
        if strategy_options:
            raise TypeError("strategy options apply to a new strategy, not to a given one")
        strategy = index
    else:
        strategy = ToolSearchStrategy(index, max_results=max_results, **strategy_options)
    return ToolSearchCapability(
        strategy=strategy,
        max_results=max_results,
        tool_description=tool_description,
        parameter_description=parameter_description,
    )


def __getattr__(name: str) -> Any:
    """The names before issue 48, deprecated: ``ToolsearchStrategy``,
    ``to_toolsearch_definition``."""
    return renamed(__name__, name, _RENAMED, globals())
