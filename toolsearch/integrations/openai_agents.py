"""The OpenAI Agents SDK: a search function tool plus tools enabled once discovered.

The route: every tool stays an ordinary ``FunctionTool`` of the agent, gated by the SDK's
own ``is_enabled`` callable, and one more function tool searches them. A turn's request
carries the search tool, the pinned tools and the tools the conversation discovered, with
their real schemas (strict JSON schemas included), and the runner calls them as it calls
any tool: no subprocess, no second call indirection, any model provider the SDK supports::

    from agents import Agent
    from toolsearch.integrations.openai_agents import ToolsearchAgentTools

    search = ToolsearchAgentTools(my_tools, index="hybrid")
    agent = Agent(name="assistant", tools=search.tools)  # was: tools=my_tools

Why not the other routes: the SDK's ``ToolSearchTool`` is a hosted Responses API tool that
searches deferred tools with OpenAI's own search on the server (``execution="client"`` is
not executed by the runner), so a toolsearch index cannot answer it; and the toolsearch MCP
proxy through the SDK's MCP client (``MCPServerStdio``) works, but it runs a subprocess, and
the model then calls every discovered tool through the proxy's call tool, with the arguments
nested in one JSON object, instead of as a function tool with its own schema.

Discoveries live in a :class:`~toolsearch.search.registry.SessionRegistry` session (in its
:class:`~toolsearch.search.store.SessionStore`: a ``RedisSessionStore`` shares them between
workers). The session of a run is ``session_id(ctx)``: by default the run context's
``session_id`` (``Runner.run(agent, input, context={"session_id": "c-42"})``, or an object
with that attribute, or the context itself when it is a string), else
:data:`DEFAULT_SESSION_ID`, which every run without one shares. The tool set is indexed once
per session, at its first search.

Needs ``toolsearch[openai-agents]`` (``openai-agents``).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from toolsearch.integrations._common import ToolSearcher, require
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.search_tool import MAX_RESULTS_CAP
from toolsearch.search.store import SessionStore
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from agents import FunctionTool, RunContextWrapper

__all__ = [
    "DEFAULT_SEARCH_TOOL_NAME",
    "DEFAULT_SESSION_ID",
    "ToolsearchAgentTools",
    "default_session_id",
    "to_toolsearch_definition",
]

_EXTRA = "openai-agents"

DEFAULT_SESSION_ID = "openai-agents"
"""The session of runs whose context names none."""

DEFAULT_SEARCH_TOOL_NAME = "search_tools"

SEARCH_TOOL_DESCRIPTION = (
    "Search the tools available to you and load the best matches. Describe the capability "
    "you need in a few words (e.g. 'send email', 'weather forecast', 'create github "
    "issue') or give an exact tool name. The tools found become callable on your next "
    "turn; the result lists their names. Tools you already have are not listed again."
)

_MAX_CACHED_SESSIONS = 1024


def _require_agents() -> Any:
    return require(
        "agents", extra=_EXTRA, feature="the OpenAI Agents SDK integration", package="openai-agents"
    )


def default_session_id(ctx: RunContextWrapper[Any]) -> str:
    """The run context's ``session_id`` (a mapping key or an attribute), the context itself
    when it is a string, else :data:`DEFAULT_SESSION_ID`."""
    context = getattr(ctx, "context", None)
    if isinstance(context, str) and context:
        return context
    found = context.get("session_id") if isinstance(context, Mapping) else None
    if found is None:
        found = getattr(context, "session_id", None)
    return str(found) if found else DEFAULT_SESSION_ID


def to_toolsearch_definition(tool: FunctionTool) -> ToolDefinition:
    """An Agents SDK ``FunctionTool`` as the toolsearch definition an index ranks."""
    return ToolDefinition(
        name=tool.name,
        description=tool.description or "",
        input_schema=tool.params_json_schema or {"type": "object", "properties": {}},
    )


class ToolsearchAgentTools:
    """An agent's tools behind a toolsearch search tool.

    Args:
        tools: ``FunctionTool`` objects (``@function_tool`` functions) or plain functions
            (wrapped with ``function_tool``); other tools (hosted ones) pass through and stay
            always enabled.
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``...) or ``None`` for
            BM25.
        max_results: How many tools one search loads by default (the model may ask for 1-10
            with ``maxResults``).
        pinned: Names of tools always enabled (never searched for).
        session_id: The run's session: a callable of the run context
            (:func:`default_session_id` by default) or a fixed string.
        search_tool_name: The search tool's name.
        registry: A ``SessionRegistry`` to share (instead of ``index`` and ``store``).
        store: The session store of a new registry (``RedisSessionStore`` for several
            workers).
    """

    def __init__(
        self,
        tools: Iterable[Any],
        *,
        index: ToolIndex | str | None = None,
        max_results: int = 5,
        pinned: Iterable[str] = (),
        session_id: str | Callable[[RunContextWrapper[Any]], str] = default_session_id,
        search_tool_name: str = DEFAULT_SEARCH_TOOL_NAME,
        registry: SessionRegistry | None = None,
        store: SessionStore | None = None,
    ) -> None:
        agents = _require_agents()
        if not 1 <= max_results <= MAX_RESULTS_CAP:
            raise ValueError(f"max_results must be between 1 and {MAX_RESULTS_CAP}")
        self.searcher = ToolSearcher(index, registry=registry, store=store)
        self.max_results = max_results
        self.pinned = frozenset(pinned)
        self.session_id = session_id
        self.search_tool_name = search_tool_name
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
        if search_tool_name in names:
            raise ValueError(
                f"a tool is named {search_tool_name!r}, the search tool's name: rename it or "
                "pass search_tool_name=..."
            )
        if len(set(names)) != len(names):
            raise ValueError("two tools have the same name")
        unknown = self.pinned - set(names)
        if unknown:
            raise ValueError(f"pinned tools that are not among the tools: {sorted(unknown)}")
        self.definitions: tuple[ToolDefinition, ...] = tuple(
            to_toolsearch_definition(t) for t in function_tools
        )
        self._seen: OrderedDict[str, tuple[Any, int, frozenset[str]]] = OrderedDict()
        self._lock = threading.Lock()
        gated = [self._gate(t) for t in function_tools]
        self.tools: list[Any] = [self._search_tool(agents), *gated, *others]
        """What to give ``Agent(tools=...)``: the search tool, then every tool, gated."""

    @property
    def registry(self) -> SessionRegistry:
        return self.searcher.registry

    def session_of(self, ctx: RunContextWrapper[Any]) -> str:
        """The session a run context belongs to."""
        return self.session_id(ctx) if callable(self.session_id) else self.session_id

    def discovered(self, session_id: str) -> list[str]:
        """The tools a session discovered, in discovery order."""
        return self.searcher.discovered(session_id)

    def search(self, session_id: str, query: str, max_results: int | None = None) -> list[str]:
        """Search as the model's search tool does: the names found, now enabled for the
        session (the tools it has already are left out, unless named exactly)."""
        loaded = [*self.pinned, *self.discovered(session_id)]
        found = self.searcher.search(
            session_id,
            self.definitions,
            [query],
            limit=max_results or self.max_results,
            exclude=loaded,
            record=True,
        )
        with self._lock:
            self._seen.pop(session_id, None)
        return found

    # -- internals --------------------------------------------------------------------------

    def _enabled(self, ctx: RunContextWrapper[Any]) -> frozenset[str]:
        """The session's discoveries, read from the store once per model request of a run
        (each tool's gate asks; the answer is shared until the run's next request)."""
        session = self.session_of(ctx)
        requests = getattr(getattr(ctx, "usage", None), "requests", 0)
        with self._lock:
            cached = self._seen.get(session)
            if cached is not None and cached[0]() is ctx and cached[1] == requests:
                self._seen.move_to_end(session)
                return cached[2]
        names = frozenset(self.discovered(session))
        try:
            owner: Any = weakref.ref(ctx)
        except TypeError:  # pragma: no cover - a context that takes no weak reference
            owner = lambda: None  # noqa: E731
        with self._lock:
            self._seen[session] = (owner, requests, names)
            self._seen.move_to_end(session)
            while len(self._seen) > _MAX_CACHED_SESSIONS:
                self._seen.popitem(last=False)
        return names

    def _gate(self, tool: FunctionTool) -> FunctionTool:
        """A copy of ``tool`` enabled when pinned or discovered (and its own gate agrees)."""
        gated = copy.copy(tool)
        original = tool.is_enabled
        name = tool.name
        pinned = name in self.pinned

        async def is_enabled(ctx: RunContextWrapper[Any], agent: Any) -> bool:
            if not (pinned or name in self._enabled(ctx)):
                return False
            if isinstance(original, bool):
                return original
            result = original(ctx, agent)
            if inspect.isawaitable(result):
                result = await result
            return bool(result)

        gated.is_enabled = is_enabled
        return gated

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
            try:
                parsed = json.loads(arguments or "{}")
            except json.JSONDecodeError:
                parsed = None
            query = parsed.get("query") if isinstance(parsed, dict) else None
            if not isinstance(query, str) or not query.strip():
                return "Error: query must be a non-empty string describing the tool you need."
            wanted = parsed.get("maxResults")
            limit = self.max_results
            if isinstance(wanted, int) and not isinstance(wanted, bool):
                limit = max(1, min(MAX_RESULTS_CAP, wanted))
            found = await asyncio.to_thread(self.search, self.session_of(ctx), query, limit)
            return json.dumps(found)

        tool: FunctionTool = agents.FunctionTool(
            name=self.search_tool_name,
            description=SEARCH_TOOL_DESCRIPTION,
            params_json_schema=schema,
            on_invoke_tool=invoke,
            strict_json_schema=True,
        )
        return tool

    def __repr__(self) -> str:
        return f"ToolsearchAgentTools({len(self.definitions)} tools)"
