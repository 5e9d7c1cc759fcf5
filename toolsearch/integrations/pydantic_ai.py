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

:class:`ToolsearchStrategy` is the strategy itself, for ``ToolSearch(strategy=...)``: a thin
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

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from toolsearch.integrations._common import DefinitionCache, require
from toolsearch.search.events import SearchListener
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.run import SearchRun
from toolsearch.search.search_log import SearchLog
from toolsearch.search.search_tool import MAX_RESULTS_CAP
from toolsearch.search.session_ref import run_in_thread
from toolsearch.search.sessions import ToolSearchSessions, resolve_session
from toolsearch.search.store import SessionStore
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import ToolSearch
    from pydantic_ai.tools import ToolDefinition as PydanticToolDefinition

__all__ = [
    "SEARCH_TOOL_NAME",
    "ToolsearchStrategy",
    "to_toolsearch_definition",
    "toolsearch_tool_search",
]

SEARCH_TOOL_NAME = "search_tools"
"""The name pydantic-ai gives its local search tool, reserved once an agent has a deferred
tool: no other tool of the agent may have it (an MCP server exposing ``search_tools``, the
toolsearch MCP proxy's default, must be renamed or prefixed, e.g.
``MCPToolset(...).prefixed("proxy")``)."""

_EXTRA = "pydantic-ai"


def _require_pydantic_ai() -> Any:
    feature = "the pydantic-ai integration"
    return require("pydantic_ai", extra=_EXTRA, feature=feature, package="pydantic-ai-slim")


def to_toolsearch_definition(tool: PydanticToolDefinition) -> ToolDefinition:
    """A pydantic-ai ``ToolDefinition`` as the toolsearch definition an index ranks."""
    return ToolDefinition(
        name=tool.name,
        description=tool.description or "",
        input_schema=tool.parameters_json_schema or {"type": "object", "properties": {}},
    )


class ToolsearchStrategy:
    """A pydantic-ai ``ToolSearch`` strategy backed by a toolsearch index.

    ``ToolSearch(strategy=ToolsearchStrategy("hybrid"))``. pydantic-ai awaits it with the
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
        registry: A ``SessionRegistry`` to share with other front doors (instead of
            ``index`` and ``store``).
        store: The session store of the strategy's registry (``RedisSessionStore`` to share
            session state between workers).
        search_listeners: Called with a ``ToolSearchEvent`` after every search (door
            ``"pydantic-ai"``).
        search_log: A ``SearchLog`` receiving every search.
    """

    def __init__(
        self,
        index: ToolIndex | str | None = None,
        *,
        session_id: str | Callable[[RunContext[Any]], str | None] | None = None,
        max_results: int = MAX_RESULTS_CAP,
        exclude_discovered: bool = True,
        registry: SessionRegistry | None = None,
        store: SessionStore | None = None,
        search_listeners: Sequence[SearchListener] = (),
        search_log: SearchLog | None = None,
    ) -> None:
        if not 1 <= max_results <= MAX_RESULTS_CAP:
            raise ValueError(f"max_results must be between 1 and {MAX_RESULTS_CAP}")
        options = ToolSearchOptions(
            max_results=max_results,
            search_tool_name=SEARCH_TOOL_NAME,
            exclude_loaded_tools=exclude_discovered,
        )
        self.sessions = ToolSearchSessions(
            index,
            registry=registry,
            store=store,
            options=options,
            search_listeners=search_listeners,
            search_log=search_log,
            door="pydantic-ai",
        )
        self.session_id = session_id
        self.max_results = max_results
        self.exclude_discovered = exclude_discovered
        self._definitions = DefinitionCache()

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
        # converting 300 tool definitions is work too: it goes to the worker thread as well
        run: SearchRun = await run_in_thread(
            lambda: self.sessions.open(session, tools=self.definitions(tools))
        )
        try:
            discovered = getattr(ctx, "discovered_tool_names", None) or ()
            skipped = discovered if self.exclude_discovered else ()
            result = await run.asearch(texts, self.max_results, exclude=skipped)
        finally:
            await run.aclose()
        found = result.names[: self.max_results]
        if not session.ephemeral:  # what pydantic-ai loads next: its discoveries and these
            loaded = [run.tools[n] for n in dict.fromkeys([*discovered, *found]) if n in run.tools]
            self.sessions.note_loaded(session.session_id, loaded)
        return found

    def definitions(self, tools: Sequence[PydanticToolDefinition]) -> list[ToolDefinition]:
        """The toolsearch definitions of pydantic-ai tools (each converted once)."""
        out = []
        for tool in tools:
            schema = tool.parameters_json_schema
            key = (tool.name, tool.description, id(schema))
            out.append(self._definitions.get(key, schema, partial(to_toolsearch_definition, tool)))
        return out

    def __repr__(self) -> str:
        return f"ToolsearchStrategy({type(self.index).__name__})"


def toolsearch_tool_search(
    index: ToolIndex | str | ToolsearchStrategy | None = None,
    *,
    max_results: int = MAX_RESULTS_CAP,
    tool_description: str | None = None,
    parameter_description: str | None = None,
    **strategy_options: Any,
) -> ToolSearch[Any]:
    """pydantic-ai's ``ToolSearch`` capability with a :class:`ToolsearchStrategy`.

    ``capabilities=[toolsearch_tool_search("hybrid")]`` in place of ``ToolSearch()``.
    ``max_results`` is the capability's (and the strategy's); ``tool_description`` and
    ``parameter_description`` are the capability's texts for its ``search_tools`` tool;
    further keyword arguments go to :class:`ToolsearchStrategy`.
    """
    _require_pydantic_ai()
    from pydantic_ai.capabilities import ToolSearch

    if isinstance(index, ToolsearchStrategy):
        if strategy_options:
            raise TypeError("strategy options apply to a new strategy, not to a given one")
        strategy = index
    else:
        strategy = ToolsearchStrategy(index, max_results=max_results, **strategy_options)
    return ToolSearch(
        strategy=strategy,
        max_results=max_results,
        tool_description=tool_description,
        parameter_description=parameter_description,
    )
