"""The OpenAI Agents SDK: a search function tool plus tools enabled once discovered.

The route: every tool stays an ordinary ``FunctionTool`` of the agent, gated by the SDK's
own ``is_enabled`` callable, and one more function tool searches them. A turn's request
carries the search tool, the pinned tools and the tools the conversation discovered, with
their real schemas (strict JSON schemas included), and the runner calls them as it calls
any tool: no subprocess, no second call indirection, any model provider the SDK supports::

    from agents import Agent, SQLiteSession
    from toolsearch.integrations.openai_agents import ToolSearchAgentTools

    search = ToolSearchAgentTools(my_tools, index="hybrid")
    agent = Agent(name="assistant", tools=search.tools)  # was: tools=my_tools
    result = await search.run(agent, "...", session=SQLiteSession("conv-A"))

This is a thin front door over the search-session core (:class:`~toolsearch.search.sessions.
ToolSearchSessions`): indexing, searching (on a worker thread: the event loop never waits
for ranking or embedding), discoveries, spans, metrics and search logs are the core's.

**Sessions.** The SDK does not hand a run's ``session=`` to tools, so :meth:`~
ToolSearchAgentTools.run` (and ``run_sync``, ``run_streamed``) take the SDK's own arguments,
``session=`` included, and make the SDK session's ``session_id`` the search session too;
:meth:`~ToolSearchAgentTools.bound` does the same around a ``Runner`` call of your own. The
session of a run is, in order: the ``session_id`` given to the constructor (a string or a
callable of the run context), the bound SDK session, a ``session_id`` in the run's
``context`` (a mapping key or an attribute, or the context itself when it is a string),
else **a throwaway session of that run alone** (never one shared by unrelated runs; it is
dropped when the run's context is freed).

**Names.** Tool names go to the model in a form every provider accepts (``github.create_issue``
is sent as ``github_create_issue``; a 70-character name is shortened with a hash), and the
search results name the tools exactly as the tool list does.

**Undiscovered calls.** A tool the run has not discovered is not enabled, so the SDK refuses
a call to it; :meth:`~ToolSearchAgentTools.run` sets ``RunConfig(tool_not_found_behavior=
"return_error_to_model")`` unless you chose, so the model reads the refusal and the run
goes on.

Why not the other routes: the SDK's ``ToolSearchTool`` is a hosted Responses API tool that
searches deferred tools with OpenAI's own search on the server, so a toolsearch index cannot
answer it; and the toolsearch MCP proxy through the SDK's MCP client works, but runs a
subprocess, and the model then calls every tool through the proxy's call tool.

Needs ``toolsearch[openai-agents]`` (``openai-agents``).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import logging
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Unpack

from toolsearch.errors import InvalidToolArgumentsError
from toolsearch.integrations._common import preload, renamed, require, take_turn
from toolsearch.integrations.door import (
    ToolSearchDoorKwargs,
    check_max_results,
    check_tool_names,
    door_sessions,
)
from toolsearch.models.wire_names import WireNames
from toolsearch.search.builtin_tools.search_tool import MAX_RESULTS_CAP
from toolsearch.search.options import PLAIN_SEARCH_LOOP, ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.run import SearchRun
from toolsearch.search.sessions import PORTABLE_NAMES, resolve_session
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from agents import FunctionTool, RunContextWrapper

__all__ = [
    "DEFAULT_SEARCH_TOOL_NAME",
    "ToolSearchAgentTools",
    "context_session_id",
    "to_tool_definition",
]

_EXTRA = "openai-agents"
_RENAMED = {
    "ToolsearchAgentTools": "ToolSearchAgentTools",
    "to_toolsearch_definition": "to_tool_definition",
}

DEFAULT_SEARCH_TOOL_NAME = "search_tools"

SEARCH_TOOL_DESCRIPTION = (
    "Search the tools available to you and load the best matches. Describe the capability "
    "you need in a few words (e.g. 'send email', 'weather forecast', 'create github "
    "issue') or give an exact tool name. The tools found become callable on your next "
    "turn; the result lists their names. Tools you already have are not listed again."
)

_log = logging.getLogger(__name__)

_ORDERED_MARK = "_toolsearch_ordered_by"
_INVOKER_MARKERS = ("__agents_sync_function_tool__",)
_DEFAULT_FAILURE_TEXT = "An error occurred while running the tool."


def _sdk_failure(ctx: Any, result: Any) -> bool:
    """Whether the SDK answered a tool's failure itself (its default failure function)."""
    import agents.tool as sdk_tool

    flag = getattr(sdk_tool, "_DEFAULT_FAILURE_HANDLED_ATTR", None)
    if flag is not None and getattr(ctx, flag, False):
        return True
    return isinstance(result, str) and result.startswith(_DEFAULT_FAILURE_TEXT)


_BOUND_SESSION: ContextVar[str | None] = ContextVar("toolsearch_agents_session", default=None)


def _require_agents() -> Any:
    return require(
        "agents", extra=_EXTRA, feature="the OpenAI Agents SDK integration", package="openai-agents"
    )


def context_session_id(ctx: RunContextWrapper[Any]) -> str | None:
    """The run context's ``session_id`` (a mapping key or an attribute), the context itself
    when it is a string, else ``None``."""
    context = getattr(ctx, "context", None)
    if isinstance(context, str) and context:
        return context
    found = context.get("session_id") if isinstance(context, Mapping) else None
    if found is None:
        found = getattr(context, "session_id", None)
    return str(found) if found else None


def to_tool_definition(tool: FunctionTool) -> ToolDefinition:
    """An Agents SDK ``FunctionTool`` as the toolsearch definition an index ranks."""
    return ToolDefinition(
        name=tool.name,
        description=tool.description or "",
        input_schema=tool.params_json_schema or {"type": "object", "properties": {}},
    )


class ToolSearchAgentTools:
    """An agent's tools behind a toolsearch search tool.

    Args:
        tools: ``FunctionTool`` objects (``@function_tool`` functions) or plain functions
            (wrapped with ``function_tool``); other tools (hosted ones) pass through and stay
            always enabled.
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``...) or ``None`` for
            the default index.
        max_results: How many tools one search loads by default (the model may ask for 1-10
            with ``maxResults``).
        pinned: Names of tools always enabled (never searched for).
        session_id: The run's session: a fixed string or a callable of the run context
            returning one (or ``None`` to go on down the list in the module docstring).
        search_tool_name: The search tool's name.
        **shared: The arguments every front door takes
            (:class:`~toolsearch.integrations.door.ToolSearchDoorKwargs`): ``sessions``
            (another door's, to share), ``registry``, ``store``, ``eviction_strategy``,
            ``search_listeners`` (door ``"openai-agents"``), ``search_log``.
    """

    def __init__(
        self,
        tools: Iterable[Any],
        *,
        index: ToolIndex | str | None = None,
        max_results: int = 5,
        pinned: Iterable[str] = (),
        session_id: str | Callable[[RunContextWrapper[Any]], str | None] | None = None,
        search_tool_name: str = DEFAULT_SEARCH_TOOL_NAME,
        **shared: Unpack[ToolSearchDoorKwargs],
    ) -> None:
        agents = _require_agents()
        check_max_results(max_results)
        function_tools: list[FunctionTool] = []
        others: list[Any] = []
        for tool in tools:
            if isinstance(tool, agents.FunctionTool):
                function_tools.append(tool)
            elif inspect.isfunction(tool) or inspect.ismethod(tool):
                function_tools.append(agents.function_tool(tool))
            else:
                others.append(tool)
        names = [t.name for t in function_tools]
        self.pinned = frozenset(check_tool_names(names, search_tool_name, pinned))
        options = ToolSearchOptions(
            max_results=max_results,
            search_tool_name=search_tool_name,
            pinned_tools=tuple(n for n in names if n in self.pinned),
            **PLAIN_SEARCH_LOOP,  # this door does not hold the working set yet
        )
        self.sessions = door_sessions(index, options, "openai-agents", **shared)
        self.max_results = max_results
        self.session_id = session_id
        self.search_tool_name = search_tool_name
        self.definitions: tuple[ToolDefinition, ...] = tuple(
            to_tool_definition(t) for t in function_tools
        )
        self.wire_names = WireNames(PORTABLE_NAMES, [search_tool_name, *names])
        """Each tool's own name and the name the model sees (valid for every provider)."""
        self._runs: dict[int, asyncio.Future[SearchRun]] = {}
        self._visible_sets: weakref.WeakKeyDictionary[
            SearchRun, tuple[tuple[str, ...], frozenset[str]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        gated = [self._gate(t) for t in function_tools]
        self.tools: list[Any] = [self._search_tool(agents), *gated, *others]
        """What to give ``Agent(tools=...)``: the search tool, then every tool, gated."""
        preload()  # what a first run would load on the event loop, loaded now

    @property
    def registry(self) -> SessionRegistry:
        return self.sessions.registry

    # -- sessions -----------------------------------------------------------------------------

    def session_of(self, ctx: RunContextWrapper[Any]) -> str | None:
        """The session a run context belongs to (``None``: a throwaway one for the run)."""
        given = self.session_id(ctx) if callable(self.session_id) else self.session_id
        return given or _BOUND_SESSION.get() or context_session_id(ctx)

    @contextmanager
    def bound(self, session: Any) -> Iterator[None]:
        """Within the block, runs search in the SDK session ``session`` (its
        ``session_id``, or the value itself as a string): wrap your own ``Runner`` call."""
        sid = getattr(session, "session_id", session)
        token = _BOUND_SESSION.set(str(sid) if sid else None)
        try:
            yield
        finally:
            _BOUND_SESSION.reset(token)

    async def run(self, agent: Any, input: Any, *, session: Any = None, **kwargs: Any) -> Any:
        """``Runner.run(agent, input, session=session, **kwargs)``, searching in the SDK
        session's id (a throwaway session per run without one)."""
        from agents import Runner

        # a run's start walks every tool synchronously (the SDK hashes each tool's identity):
        # concurrent runs start one per loop iteration, not all in one
        await take_turn()
        with self.bound(session):
            return await Runner.run(
                self.ordered(agent), input, session=session, **self._run_kwargs(kwargs)
            )

    def run_sync(self, agent: Any, input: Any, *, session: Any = None, **kwargs: Any) -> Any:
        """``Runner.run_sync`` with the session bound as in :meth:`run`."""
        from agents import Runner

        with self.bound(session):
            return Runner.run_sync(
                self.ordered(agent), input, session=session, **self._run_kwargs(kwargs)
            )

    def run_streamed(self, agent: Any, input: Any, *, session: Any = None, **kwargs: Any) -> Any:
        """``Runner.run_streamed`` with the session bound as in :meth:`run` (the run's task
        starts inside, so it keeps the binding)."""
        from agents import Runner

        with self.bound(session):
            return Runner.run_streamed(
                self.ordered(agent), input, session=session, **self._run_kwargs(kwargs)
            )

    @staticmethod
    def _run_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
        from agents import RunConfig

        config = kwargs.get("run_config") or RunConfig()
        if "tool_not_found_behavior" not in getattr(config, "__dataclass_fields__", {}):
            return kwargs
        if config.tool_not_found_behavior == "raise_error" and kwargs.get("run_config") is None:
            config = dataclasses.replace(config, tool_not_found_behavior="return_error_to_model")
        return {**kwargs, "run_config": config}

    def discovered(self, session_id: str) -> list[str]:
        """The tools a session discovered, in discovery order."""
        return self.sessions.discovered(session_id)

    def search(self, session_id: str, query: str, max_results: int | None = None) -> list[str]:
        """Search as the model's search tool does: the names found (the tools' own), now
        enabled for the session."""
        with self.sessions.open(session_id, tools=self.definitions) as run:
            return run.search(query, max_results).names

    # -- internals ------------------------------------------------------------------------

    async def _run_of(self, ctx: Any) -> SearchRun:
        """The core's run for the SDK run of ``ctx``: opened once, at its first use, on a
        worker thread (the SDK asks every tool's gate at once: they all wait for that one
        opening), and closed when the run's usage object is freed."""
        usage = getattr(ctx, "usage", ctx)
        key = id(usage)
        with self._lock:
            opening = self._runs.get(key)
            if opening is None:
                opening = self._runs[key] = asyncio.ensure_future(self._open(ctx))
        try:
            return await asyncio.shield(opening)
        except BaseException:
            with self._lock:
                if self._runs.get(key) is opening and opening.done():
                    del self._runs[key]  # a failed opening is tried again next time
            raise

    def _opened(self, ctx: Any) -> SearchRun | None:
        """The core's run for the SDK run of ``ctx`` if it is open already, else ``None``."""
        with self._lock:
            opening = self._runs.get(id(getattr(ctx, "usage", ctx)))
        if opening is None or not opening.done() or opening.cancelled():
            return None
        return None if opening.exception() is not None else opening.result()

    async def _open(self, ctx: Any) -> SearchRun:
        usage = getattr(ctx, "usage", ctx)
        run = await self.sessions.aopen(
            resolve_session(self.session_of(ctx)), tools=self.definitions, provider=PORTABLE_NAMES
        )
        try:
            weakref.finalize(usage, self._finish, id(usage))
        except TypeError:  # pragma: no cover - a usage object that takes no weak reference
            _log.debug("the run's usage object takes no weak reference; closing its run now")
            run.close()
        # the run's 301 gates wake when this returns: concurrent runs' openings that finish
        # together on their worker threads wake their gates one run per loop iteration
        await take_turn()
        return run

    def _finish(self, key: int) -> None:
        """The SDK run ended (its usage object was freed): close the core's run, on the
        thread that freed it (a throwaway session's index keys are dropped there)."""
        with self._lock:
            opening = self._runs.pop(key, None)
        done = opening is not None and opening.done() and not opening.cancelled()
        if done and opening is not None and opening.exception() is None:
            opening.result().close()

    def _gate(self, tool: FunctionTool) -> FunctionTool:
        """A copy of ``tool`` under its wire name, enabled when pinned or discovered (and
        its own gate agrees)."""
        gated = copy.copy(tool)
        original = tool.is_enabled
        name = tool.name
        gated.name = self.wire_names.wire(name)

        def enabled_in(run: SearchRun, ctx: RunContextWrapper[Any], agent: Any) -> Any:
            if name not in self._visible(run):
                return False
            if isinstance(original, bool):
                return original
            return original(ctx, agent)  # a bool, or an awaitable the SDK awaits

        async def once_open(ctx: RunContextWrapper[Any], agent: Any) -> bool:
            result = enabled_in(await self._run_of(ctx), ctx, agent)
            if inspect.isawaitable(result):
                result = await result
            return bool(result)

        def is_enabled(ctx: RunContextWrapper[Any], agent: Any) -> Any:
            """A bool once the run's search run is open (the SDK asks 301 gates per turn
            of each run: an answer that needs no await spares the loop 301 extra task
            steps, each shielding the opening), else an awaitable that opens it."""
            run = self._opened(ctx)
            return once_open(ctx, agent) if run is None else enabled_in(run, ctx, agent)

        gated.is_enabled = is_enabled
        gated.on_invoke_tool = self._reporting(name, gated.on_invoke_tool)
        return gated

    def _visible(self, run: SearchRun) -> frozenset[str]:
        """The run's visible tools, computed once per state of its discoveries: the SDK asks
        every tool's gate on every turn (301 gates, ten runs: 3,010 questions a turn, which
        each recomputed the list and its loaded view on the event loop)."""
        key = tuple(run.discovered)
        with self._lock:
            found = self._visible_sets.get(run)
        if found is not None and found[0] == key:
            return found[1]
        names = frozenset(run.visible_names())
        with self._lock:
            self._visible_sets[run] = (key, names)
        return names

    def _reporting(
        self, name: str, invoke: Callable[[Any, str], Awaitable[Any]]
    ) -> Callable[[Any, str], Awaitable[Any]]:
        """``invoke`` (a tool's ``on_invoke_tool``), reporting each call to the search log
        with its outcome once it ran: a call fails when it raises or when the SDK answered
        its failure for it (the tool raised and its failure function wrote the text)."""

        async def on_invoke_tool(ctx: Any, arguments: str) -> Any:
            started, ok = time.time(), False
            try:
                result = await invoke(ctx, arguments)
                ok = not _sdk_failure(ctx, result)
                return result
            finally:
                await self._record(ctx, name, ok, started)

        for marker in _INVOKER_MARKERS:  # what the SDK reads off an invoker (sync tools)
            if getattr(invoke, marker, False):
                setattr(on_invoke_tool, marker, True)
        return on_invoke_tool

    async def _record(self, ctx: Any, name: str, ok: bool, started: float) -> None:
        if self.sessions.search_log is None:
            return
        run = await self._run_of(ctx)

        def record() -> None:
            run.record_calls([name], defer_log=True)
            run.record_outcomes([name], [ok], started)

        await asyncio.to_thread(record)

    def ordered(self, agent: Any) -> Any:
        """A copy of ``agent`` whose requests list the enabled tools in the order the model
        got them (the search tool and the pinned tools, then the discoveries in discovery
        order, as :meth:`~toolsearch.search.sessions.ToolSearchSessions.loaded` reports
        them): a later discovery lands at the end of the list, so the provider's cached
        prompt prefix stays. :meth:`run`, ``run_sync`` and ``run_streamed`` use it; wrap an
        agent you give ``Runner`` yourself the same way."""
        if getattr(agent, _ORDERED_MARK, None) is self:
            return agent
        copy_of = agent.clone()
        every = type(agent).get_all_tools
        wire_of = self.wire_names.wire

        async def get_all_tools(run_context: Any) -> list[Any]:
            tools = await every(copy_of, run_context)
            run = await self._run_of(run_context)
            rank = {wire_of(n): i for i, n in enumerate(run.visible_names())}
            slots = [i for i, t in enumerate(tools) if getattr(t, "name", None) in rank]
            moved = sorted((tools[i] for i in slots), key=lambda t: rank[t.name])
            out = list(tools)
            for i, tool in zip(slots, moved, strict=True):
                out[i] = tool
            return out

        object.__setattr__(copy_of, "get_all_tools", get_all_tools)
        object.__setattr__(copy_of, _ORDERED_MARK, self)
        return copy_of

    def _search_tool(self, agents: Any) -> FunctionTool:
        schema = {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool should do, or an exact tool name.",
                },
                "maxResults": {
                    "type": ["integer", "null"],
                    "description": f"How many tools to load (1-{MAX_RESULTS_CAP}).",
                },
            },
            "required": ["query", "maxResults"],
            "additionalProperties": False,
        }

        async def invoke(ctx: Any, arguments: str) -> str:
            run = await self._run_of(ctx)
            try:
                queries, limit = run.search_tool().arguments(arguments)
            except InvalidToolArgumentsError as exc:
                return f"Error: {exc}"
            return run.render(await run.asearch(queries, limit))

        tool: FunctionTool = agents.FunctionTool(
            name=self.search_tool_name,
            description=SEARCH_TOOL_DESCRIPTION,
            params_json_schema=schema,
            on_invoke_tool=invoke,
            strict_json_schema=True,
        )
        return tool

    def __repr__(self) -> str:
        return f"ToolSearchAgentTools({len(self.definitions)} tools)"


def __getattr__(name: str) -> Any:
    """The names before issue 48, deprecated: ``ToolsearchAgentTools``,
    ``to_toolsearch_definition``."""
    return renamed(__name__, name, _RENAMED, globals())
