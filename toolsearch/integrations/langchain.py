"""LangChain 1.x agents: :class:`ToolSearchMiddleware` shows the model only the tools it found.

Give the agent every tool and add the middleware::

    from langchain.agents import create_agent
    from toolsearch.integrations.langchain import ToolSearchMiddleware

    agent = create_agent(model, tools=all_my_tools, middleware=[ToolSearchMiddleware(index="bm25")])

The model first sees ``search_tools`` (plus ``always_include``); later model calls bind the
search tool, ``always_include`` and the tools found so far, in discovery order (the list
only grows at its end). A call of an undiscovered tool is refused with a message to search
first, and the tool does not run. Tools are bound under names every provider accepts
(:data:`~toolsearch.search.sessions.PORTABLE_NAMES`: ``github.create_issue`` as
``github_create_issue``, a name over 64 characters cut and hashed), searches name them so,
and a call of such a name runs the tool itself. The middleware is a thin door onto the
search-session core (:class:`~toolsearch.search.sessions.ToolSearchSessions`,
``door="langchain"``): each hook opens a :class:`~toolsearch.search.sessions.SearchRun`,
registers the agent's tools, asks it what to show, searches or checks a call, and closes it.
Ranking, exclusions, spans, metrics, listeners and the search log are the core's.

**Sessions.** The session is ``session_id`` (a string, or a callable of the LangGraph
runtime), else the LangGraph thread id (``config={"configurable": {"thread_id": ...}}``),
else a throwaway session for this one invocation (its id kept in the graph state, dropped
when the invocation ends). Discoveries live in the core's session store (in memory, or a
``RedisSessionStore`` shared by several workers); the state key ``toolsearch_discovered``
mirrors them for the caller.

Needs ``toolsearch[langchain]`` (``langchain`` >= 1.5).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Annotated, Any, NotRequired, Unpack

from pydantic import BaseModel, Field, ValidationError

from toolsearch.integrations._common import DefinitionCache, preload, require
from toolsearch.integrations.door import ToolSearchDoorKwargs, door_sessions
from toolsearch.search.builtin_tools.search_tool import MAX_RESULTS_CAP, search_tool_definition
from toolsearch.search.options import (
    PLAIN_SEARCH_LOOP,
    ToolSearchOptions,
    UndiscoveredToolPolicy,
    options_error,
)
from toolsearch.search.sessions import (
    PORTABLE_NAMES,
    CallDecision,
    SearchResult,
    SearchRun,
    SessionRef,
    resolve_session,
)
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelCallResult,
        ModelRequest,
        ModelResponse,
        ToolCallRequest,
    )
    from langchain.agents.middleware.types import PrivateStateAttr
    from langchain.tools import ToolRuntime
    from langchain_core.messages import SystemMessage, ToolCall, ToolMessage
    from langchain_core.tools import BaseTool, StructuredTool
    from langgraph.config import get_config
    from langgraph.runtime import Runtime
    from langgraph.types import Command
except ImportError:
    require(
        "langchain.agents", extra="langchain", feature="ToolSearchMiddleware", package="langchain"
    )
    raise

from toolsearch.integrations.langgraph import renamed_tool, to_tool_definition

__all__ = [
    "DEFAULT_SYSTEM_HINT",
    "DISCOVERED_KEY",
    "SearchToolArgs",
    "ToolSearchMiddleware",
    "ToolSearchState",
]

DEFAULT_SYSTEM_HINT = (
    "Only some of your tools are loaded. To use a capability you do not see, call "
    "{search_tool_name} with a few words describing it; the tools found become callable "
    "on your next turn."
)
"""Appended to the system message (``{search_tool_name}`` filled in)."""

DISCOVERED_KEY = "toolsearch_discovered"
"""The state key mirroring the session's discoveries (the store is the source of truth)."""

_SESSION_KEY = "toolsearch_session"
_CORE_ARGS = search_tool_definition().input_schema["properties"]


def _union(left: list[str] | None, right: list[str] | None) -> list[str]:
    """The reducer of :data:`DISCOVERED_KEY`: ``left``, then the names of ``right`` it lacks
    (``operator.add`` would repeat a name on every search that reports it)."""
    return list(dict.fromkeys([*(left or []), *(right or [])]))


class ToolSearchState(AgentState[Any]):
    """The agent-state keys the middleware adds."""

    toolsearch_discovered: NotRequired[Annotated[list[str], _union]]
    toolsearch_session: NotRequired[Annotated[str, PrivateStateAttr]]


class SearchToolArgs(BaseModel):
    """The search tool's arguments (the core's texts, in LangChain's snake case)."""

    query: str = Field(description=_CORE_ARGS["query"]["description"])
    max_results: int | None = Field(
        default=None, ge=1, le=MAX_RESULTS_CAP, description=_CORE_ARGS["maxResults"]["description"]
    )


def _thread_id(runtime: Any) -> str | None:
    """The LangGraph thread id of the running invocation, if it has one."""
    thread = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
    if not thread:
        config = getattr(runtime, "config", None)
        if config is None:
            try:
                config = get_config()
            except RuntimeError:  # outside a runnable context
                return None
        thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread else None


class ToolSearchMiddleware(AgentMiddleware[ToolSearchState, Any, Any]):
    """Agent middleware that binds only the search tool and the tools the model found.

    Keyword-only arguments, as ``LLMToolSelectorMiddleware``'s:

    Args:
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``...) or ``None`` for
            the default index (BM25 with ``toolsearch[bm25]``, else regex).
        max_results: Tools per search when the model does not say (1-10).
        always_include: Names of tools always bound (searches leave them out); each must be
            among the agent's tools (``ValueError`` otherwise).
        search_tool_name: The search tool's name.
        session_id: The session: a string, or a callable of the LangGraph runtime
            (``Runtime`` in model calls, ``ToolRuntime`` in tool calls; both carry
            ``context`` and ``execution_info``) returning one. ``None`` or an empty result:
            the thread id, else a throwaway session for the invocation.
        undiscovered_tool_policy: ``"hint"`` refuses a call of an undiscovered tool with a
            message (the default here); ``"execute"`` runs it and counts it discovered.
        system_hint: Text appended to the system message (``None``: none).
        **shared: The arguments every front door takes
            (:class:`~toolsearch.integrations.door.ToolSearchDoorKwargs`): ``sessions``
            (another door's, to share), ``registry``, ``store``, ``eviction_strategy``,
            ``search_listeners`` (door ``"langchain"``), ``search_log``.
    """

    state_schema = ToolSearchState

    def __init__(
        self,
        *,
        index: ToolIndex | str | None = None,
        max_results: int = 5,
        always_include: Sequence[str] | None = None,
        search_tool_name: str = "search_tools",
        session_id: str | Callable[[Any], str | None] | None = None,
        undiscovered_tool_policy: UndiscoveredToolPolicy = "hint",
        system_hint: str | None = DEFAULT_SYSTEM_HINT,
        **shared: Unpack[ToolSearchDoorKwargs],
    ) -> None:
        super().__init__()
        try:
            options = ToolSearchOptions(
                max_results=max_results,
                search_tool_name=search_tool_name,
                undiscovered_tool_policy=undiscovered_tool_policy,
                pinned_tools=tuple(dict.fromkeys(always_include or ())),
                **PLAIN_SEARCH_LOOP,  # this door does not hold the working set yet
            )
        except ValidationError as error:
            raise options_error(error) from None
        self.sessions = door_sessions(index, options, "langchain", **shared)
        self.session_id = session_id
        self.system_hint = system_hint
        self.search_tool: BaseTool = StructuredTool.from_function(
            func=self._search,
            coroutine=self._asearch,
            name=search_tool_name,
            description=self.sessions.search_definition().description,
            args_schema=SearchToolArgs,
        )
        self.tools = [self.search_tool]
        self._cache = DefinitionCache()
        self._last: tuple[tuple[BaseTool, ...], list[ToolDefinition]] = ((), [])
        preload()  # what a first request would load on the event loop, loaded now

    @property
    def search_tool_name(self) -> str:
        return self.sessions.search_tool_name

    # -- sessions ---------------------------------------------------------------------------

    def _explicit(self, runtime: Any) -> object:
        given = self.session_id
        return given(runtime) if callable(given) else given

    def _session(self, state: Any, runtime: Any) -> SessionRef:
        stored = state.get(_SESSION_KEY) if isinstance(state, Mapping) else None
        return resolve_session(self._explicit(runtime), _thread_id(runtime), stored)

    def _throwaway(self, state: Any, runtime: Any) -> str | None:
        """The invocation's own session id, when neither ``session_id`` nor a thread id
        names one."""
        stored = state.get(_SESSION_KEY) if isinstance(state, Mapping) else None
        if stored and resolve_session(self._explicit(runtime), _thread_id(runtime)).ephemeral:
            return str(stored)
        return None

    def before_agent(self, state: ToolSearchState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Give an invocation without a session or thread id a session of its own (its id
        in the state, so every hook of this invocation, and only those, shares it)."""
        ref = resolve_session(self._explicit(runtime), _thread_id(runtime))
        return {_SESSION_KEY: ref.session_id} if ref.ephemeral else None

    def after_agent(self, state: ToolSearchState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Drop the invocation's throwaway session (its discoveries and index keys)."""
        throwaway = self._throwaway(state, runtime)
        if throwaway is not None:
            self._drop(throwaway)
        return None

    def _drop(self, session_id: str) -> None:
        """A throwaway session's discoveries, index keys and loaded view, all gone."""
        self.sessions.registry.evict_session(session_id)
        self.sessions.forget_loaded(session_id)

    async def aafter_agent(
        self, state: ToolSearchState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        throwaway = self._throwaway(state, runtime)
        if throwaway is not None:  # a shared store's eviction is I/O: off the event loop
            await asyncio.to_thread(self._drop, throwaway)
        return None

    # -- runs -------------------------------------------------------------------------------

    def _known(self, tools: Sequence[BaseTool]) -> list[ToolDefinition] | None:
        """The definitions of the last tool list converted, if ``tools`` is that list (the
        usual case: an agent's tools are the same objects on every call)."""
        last = self._last
        if len(last[0]) == len(tools) and all(a is b for a, b in zip(last[0], tools, strict=True)):
            return last[1]
        return None

    def _definitions(self, tools: Sequence[BaseTool]) -> list[ToolDefinition]:
        """The toolsearch definitions of LangChain tools, each converted once."""
        known = self._known(tools)
        if known is not None:
            return known
        definitions = [self._cache.get(id(t), t, partial(to_tool_definition, t)) for t in tools]
        self._last = (tuple(tools), definitions)  # holds the tools: their ids stay theirs
        return definitions

    async def _adefinitions(self, tools: Sequence[BaseTool]) -> list[ToolDefinition]:
        known = self._known(tools)
        return known if known is not None else await asyncio.to_thread(self._definitions, tools)

    def _open(self, state: Any, runtime: Any, tools: Sequence[BaseTool]) -> SearchRun:
        definitions = self._definitions(tools)
        return self.sessions.open(
            self._session(state, runtime), tools=definitions or None, provider=PORTABLE_NAMES
        )

    async def _aopen(self, state: Any, runtime: Any, tools: Sequence[BaseTool]) -> SearchRun:
        definitions = await self._adefinitions(tools)
        return await self.sessions.aopen(
            self._session(state, runtime), tools=definitions or None, provider=PORTABLE_NAMES
        )

    def _split(
        self, tools: Sequence[BaseTool | dict[str, Any]]
    ) -> tuple[list[BaseTool], list[Any]]:
        """The searchable tools (every ``BaseTool`` but the search tool) and the provider's
        own dict tools (kept as they are, as ``LLMToolSelectorMiddleware`` keeps them)."""
        own = [t for t in tools if not isinstance(t, dict) and t is not self.search_tool]
        return own, [t for t in tools if isinstance(t, dict)]

    def _agent_tools(self, runtime: Any) -> list[BaseTool]:
        """The tools the agent can run (the ``ToolNode``'s), for searches and call checks."""
        return self._split(list(getattr(runtime, "tools", None) or ()))[0]

    # -- the search tool --------------------------------------------------------------------

    def _search(
        self, query: str, runtime: ToolRuntime, max_results: int | None = None
    ) -> Command[Any]:
        with self._open(runtime.state, runtime, self._agent_tools(runtime)) as run:
            run.visible_names()  # the event reports how many tools the model sees
            return self._found(run, run.search(query, max_results), runtime.tool_call_id)

    async def _asearch(
        self, query: str, runtime: ToolRuntime, max_results: int | None = None
    ) -> Command[Any]:
        run = await self._aopen(runtime.state, runtime, self._agent_tools(runtime))
        try:
            run.visible_names()
            return self._found(run, await run.asearch(query, max_results), runtime.tool_call_id)
        finally:
            await run.aclose()

    def _found(self, run: SearchRun, result: SearchResult, call_id: str | None) -> Command[Any]:
        """The search's answer for the model (wire names), and the discoveries mirrored into
        the state (the tools' own names)."""
        message = ToolMessage(
            run.render(result),
            tool_call_id=call_id or "",
            name=run.wire(self.search_tool_name),
            status="error" if result.error is not None else "success",
        )
        return Command(update={"messages": [message], DISCOVERED_KEY: run.discovered})

    # -- model calls ------------------------------------------------------------------------

    def _narrow(
        self, request: ModelRequest[Any], run: SearchRun, own: list[BaseTool], provider: list[Any]
    ) -> ModelRequest[Any]:
        """The request with the search tool and the visible tools, each under its wire name
        (a renamed copy when the tool's own name is not portable)."""
        by_name = {tool.name: tool for tool in own}
        shown = [by_name[name] for name in run.visible_names() if name in by_name]
        search = run.wire(self.search_tool_name)
        return request.override(
            tools=[
                renamed_tool(self.search_tool, search),
                *(renamed_tool(tool, run.wire(tool.name)) for tool in shown),
                *provider,
            ],
            system_message=self._hinted(request.system_message, search),
        )

    def _checked(self, own: list[BaseTool]) -> None:
        names = {tool.name for tool in own}
        missing = [name for name in self.sessions.options.pinned_tools if name not in names]
        if missing:
            raise ValueError(f"Tools in always_include not found in request: {missing}")

    def _hinted(self, message: SystemMessage | None, search: str) -> SystemMessage | None:
        if self.system_hint is None:
            return message
        hint = self.system_hint.replace("{search_tool_name}", search)
        if message is None:
            return SystemMessage(hint)
        content = message.content
        if isinstance(content, str):
            new: str | list[Any] = f"{content}\n\n{hint}" if content else hint
        else:
            new = [*content, {"type": "text", "text": hint}]
        return message.model_copy(update={"content": new})

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Bind the search tool, ``always_include`` and the discovered tools."""
        own, provider = self._split(request.tools)
        if not own:  # nothing to search: no search tool either
            return handler(request.override(tools=provider))
        self._checked(own)
        with self._open(request.state, request.runtime, own) as run:
            narrowed = self._narrow(request, run, own, provider)
        return handler(narrowed)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        own, provider = self._split(request.tools)
        if not own:
            return await handler(request.override(tools=provider))
        self._checked(own)
        run = await self._aopen(request.state, request.runtime, own)
        try:
            narrowed = self._narrow(request, run, own, provider)
        finally:
            await run.aclose()
        return await handler(narrowed)

    # -- tool calls -------------------------------------------------------------------------

    def _gate(
        self, run: SearchRun, request: ToolCallRequest
    ) -> tuple[CallDecision, ToolCallRequest | None]:
        """The core's decision on a call, and the request that runs the tool itself (its own
        name and ``BaseTool``; a wire name is no tool of the ``ToolNode``)."""
        call = request.tool_call
        decision = run.check_call(call["name"])
        if not decision.allowed:
            return decision, None
        run.record_calls([decision.name], defer_log=True)  # logged once it ran (_outcome)
        if decision.name == call["name"]:
            return decision, request
        tools = [self.search_tool, *self._agent_tools(request.runtime)]
        tool = next((t for t in tools if t.name == decision.name), None)
        if tool is None:  # not the ToolNode's: it answers that no such tool exists
            return decision, request
        real = ToolCall(name=decision.name, args=call["args"], id=call["id"], type="tool_call")
        return decision, request.override(tool=tool, tool_call=real)

    @staticmethod
    def _refused(decision: CallDecision, request: ToolCallRequest) -> ToolMessage:
        call = request.tool_call
        return ToolMessage(
            decision.message or "", tool_call_id=call["id"] or "", name=call["name"], status="error"
        )

    @staticmethod
    def _ran(
        decision: CallDecision, request: ToolCallRequest, result: ToolMessage | Command[Any]
    ) -> ToolMessage | Command[Any]:
        """The tool's answer under the name the model called (the ``ToolNode`` names it after
        the tool); a call the ``"execute"`` policy let through also joins the state's mirror."""
        name, call_id = request.tool_call["name"], request.tool_call["id"]

        def named(message: Any) -> Any:
            if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
                return message.model_copy(update={"name": name})
            return message

        if isinstance(result, Command) and isinstance(result.update, dict):
            messages = result.update.get("messages")
            if isinstance(messages, list):
                update = {**result.update, "messages": [named(m) for m in messages]}
                result = dataclasses.replace(result, update=update)
        result = named(result)
        if decision.kind == "discovered_by_call" and isinstance(result, ToolMessage):
            return Command(update={"messages": [result], DISCOVERED_KEY: [decision.name]})
        return result

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the search tool and the visible tools (a wire name mapped back to the tool);
        refuse the others with the core's message (filtering the bound tools alone does
        not stop the ``ToolNode``)."""
        if request.tool_call["name"] == self.search_tool_name:
            return handler(request)
        with self._open(request.state, request.runtime, self._agent_tools(request.runtime)) as run:
            decision, real = self._gate(run, request)
        if real is None:
            return self._refused(decision, request)
        started, result = time.time(), None
        try:
            result = handler(real)
        finally:
            self._outcome(run, decision.name, result, started)
        return self._ran(decision, request, result)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        if request.tool_call["name"] == self.search_tool_name:
            return await handler(request)
        run = await self._aopen(request.state, request.runtime, self._agent_tools(request.runtime))
        try:
            decision, real = self._gate(run, request)
        finally:
            await run.aclose()
        if real is None:
            return self._refused(decision, request)
        started, result = time.time(), None
        try:
            result = await handler(real)
        finally:
            if self.sessions.search_log is not None:  # a log's write is I/O: off the loop
                await asyncio.to_thread(self._outcome, run, decision.name, result, started)
        return self._ran(decision, request, result)

    def _outcome(
        self,
        run: SearchRun,
        name: str,
        result: ToolMessage | Command[Any] | None,
        started: float,
    ) -> None:
        """A tool call's outcome, to the search log, once the tool ran: a failure when the
        tool raised (``result`` ``None``) or the ``ToolNode`` answered an error message."""
        if self.sessions.search_log is None:
            return
        messages: list[Any] = [result]
        if isinstance(result, Command) and isinstance(result.update, dict):
            messages = list(result.update.get("messages") or [])
        ok = result is not None and not any(
            isinstance(m, ToolMessage) and m.status == "error" for m in messages
        )
        run.record_outcomes([name], [ok], started)

    def __repr__(self) -> str:
        return f"ToolSearchMiddleware({type(self.sessions.index).__name__})"
