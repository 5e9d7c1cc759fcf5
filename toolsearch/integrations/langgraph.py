"""LangGraph and LangChain: ``retrieve_tools`` for ``langgraph-bigtool``, a retriever, a tool.

:class:`ToolSearchToolRetriever` indexes LangChain tools (``BaseTool`` objects, or the plain
functions a ``langgraph-bigtool`` registry may hold) in a toolsearch index, once, and
answers searches in the shape each consumer wants:

* :meth:`~ToolSearchToolRetriever.retrieve_tools_function` and
  :meth:`~ToolSearchToolRetriever.retrieve_tools_coroutine`: ``retrieve_tools(query) ->
  list of tool ids`` for ``langgraph_bigtool.create_agent(llm, registry,
  retrieve_tools_function=..., retrieve_tools_coroutine=...)``, instead of the default
  semantic search over a LangGraph store (no store, no embeddings service needed);
* :meth:`~ToolSearchToolRetriever.search_tools`: the ``BaseTool`` objects themselves,
  best first, and :meth:`~ToolSearchToolRetriever.search` their names;
* :meth:`~ToolSearchToolRetriever.as_retriever`: a LangChain ``BaseRetriever`` whose
  documents are the tools (``page_content`` the description, ``metadata`` the name and id);
* :meth:`~ToolSearchToolRetriever.as_tool`: a LangChain tool the model calls to search
  (it answers the names found), for agents that bind tools themselves.

:func:`create_agent` builds ``langgraph-bigtool``'s graph (the model starts with the
retrieval tool; each retrieval binds the tools found, which accumulate in the state's
``selected_tool_ids``) over a retriever, on the current LangGraph: ``langgraph-bigtool``
0.0.3 calls ``ToolNode.inject_tool_args``, which ``langgraph-prebuilt`` 1.0 removed (the
node now injects state and store itself), so its agent fails with ``AttributeError`` as soon
as the model calls a retrieved tool there. Its retrieval step works, and so do the
``retrieve_tools`` callables with it on ``langgraph-prebuilt`` < 1.

Needs ``toolsearch[langgraph]`` (``langchain-core``; ``langgraph`` and ``langgraph-bigtool``
for ``create_agent``).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from toolsearch.integrations._common import (
    BuiltOnce,
    import_modules,
    renamed,
    require,
    start_loop_workers,
    warm_index,
)
from toolsearch.integrations.door import ToolSearchDoorKwargs, check_max_results, door_sessions
from toolsearch.models.wire_names import WireNames
from toolsearch.search.options import PLAIN_SEARCH_LOOP, ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.sessions import (
    PORTABLE_NAMES,
    SessionRef,
    ToolSearchSessions,
    resolve_session,
)
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool

__all__ = [
    "RETRIEVE_TOOLS_DESCRIPTION",
    "ToolSearchToolRetriever",
    "create_agent",
    "to_tool_definition",
]

_EXTRA = "langgraph"
_RENAMED = {
    "ToolsearchToolRetriever": "ToolSearchToolRetriever",
    "to_toolsearch_definition": "to_tool_definition",
}
_GRAPH_MODULES = (
    "langchain_core.tools",
    "langchain_core.messages",
    "langchain_core.runnables",
    "langchain_core.utils.function_calling",
    "langchain_core.retrievers",
    "langchain_core.documents",
    "langgraph.graph",
    "langgraph.graph.message",
    "langgraph.prebuilt",
    "langgraph.types",
    "toolsearch.tools.validation",
)

RETRIEVE_TOOLS_DESCRIPTION = (
    "Search the tools available to you and load the best matches. Describe the capability "
    "you need in a few words (e.g. 'send email', 'weather forecast') or give an exact tool "
    "name. The tools found become callable on your next turn."
)


def _require_langchain() -> Any:
    return require(
        "langchain_core",
        extra=_EXTRA,
        feature="the LangChain integration",
        package="langchain-core",
    )


def to_tool_definition(tool: Any, name: str | None = None) -> ToolDefinition:
    """A LangChain tool (a ``BaseTool``, a function, a pydantic model) as a toolsearch
    definition: its OpenAI function schema's name, description and parameters."""
    _require_langchain()
    from langchain_core.utils.function_calling import convert_to_openai_tool

    function = convert_to_openai_tool(tool)["function"]
    return ToolDefinition(
        name=name or function["name"],
        description=function.get("description") or "",
        input_schema=function.get("parameters") or {"type": "object", "properties": {}},
    )


class ToolSearchToolRetriever:
    """LangChain tools in a toolsearch index, searched by text.

    Args:
        tools: The tools: a sequence of ``BaseTool`` (ids are their names) or a
            ``langgraph-bigtool`` registry ``{id: BaseTool | function}``.
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``...) or ``None`` for
            BM25.
        limit: How many tools a search returns (``langgraph-bigtool``'s ``limit``: 2 there
            by default; here 3).
        session_id: The registry session the tools are indexed under (a new one per
            retriever by default; the tool set's key is the session plus a digest of the
            tools, so retrievers sharing a ``registry`` and a session index a set once).
        **shared: The arguments every front door takes
            (:class:`~toolsearch.integrations.door.ToolSearchDoorKwargs`): ``sessions``
            (another door's, to share), ``registry``, ``store``, ``eviction_strategy``,
            ``search_listeners`` (door ``"langgraph"``), ``search_log``.
    """

    def __init__(
        self,
        tools: Sequence[Any] | Mapping[str, Any],
        *,
        index: ToolIndex | str | None = None,
        limit: int = 3,
        session_id: str | None = None,
        **shared: Unpack[ToolSearchDoorKwargs],
    ) -> None:
        _require_langchain()
        # what create_agent and the first search would import on an event loop (0.5-3.5 s
        # for langgraph.graph), imported now, with the framework
        import_modules(*_GRAPH_MODULES)
        check_max_results(limit, "limit")
        items = list(tools.items()) if isinstance(tools, Mapping) else [(None, t) for t in tools]
        options = ToolSearchOptions(
            max_results=limit, exclude_loaded_tools=False, **PLAIN_SEARCH_LOOP
        )
        self.sessions = door_sessions(index, options, "langgraph", **shared)
        self.limit = limit
        self.session_id = session_id or f"langchain-{uuid.uuid4().hex[:12]}"
        self._tools: dict[str, Any] = {}  # id -> tool
        self._ids: dict[str, str] = {}  # indexed name -> id
        # (indexed name, tool, definition if converted): a BaseTool's schema is converted at
        # the first search, off the loop (300 tools: 50-200 ms of pydantic schema building)
        order: list[tuple[str, Any, ToolDefinition | None]] = []
        from langchain_core.tools import BaseTool

        for given_id, tool in items:
            definition = None if isinstance(tool, BaseTool) else to_tool_definition(tool)
            own = tool.name if definition is None else definition.name
            tool_id = given_id if given_id is not None else own
            if tool_id in self._tools:
                raise ValueError(f"two tools with the id {tool_id!r}")
            name = own
            if name in self._ids:  # two registry entries with one tool name: index the id
                name = tool_id.replace(" ", "_")
            self._tools[tool_id] = tool
            self._ids[name] = tool_id
            order.append((name, tool, definition))
        self._converted = BuiltOnce(
            lambda: tuple(_named(d or to_tool_definition(t), n) for n, t, d in order)
        )

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The tools as the index ranks them (indexed names), converted once, at the first
        search or :meth:`warm_up` (both on a worker thread in async code)."""
        return self._converted.get()

    @property
    def registry(self) -> SessionRegistry:
        return self.sessions.registry

    def warm_up(self) -> None:
        """Index the tools and load what the first search needs (the index's model, the
        graph's modules), so that the first request does none of it: call it at start-up,
        or ``await retriever.awarm_up()`` inside a running event loop."""
        import_modules(*_GRAPH_MODULES)
        warm_index(self.sessions.index)
        with self.sessions.open(self.session_id, tools=self.definitions):
            pass

    async def awarm_up(self) -> None:
        """:meth:`warm_up` on a worker thread (the loop's worker threads started first)."""
        start_loop_workers()
        await asyncio.to_thread(self.warm_up)

    def tool_id(self, name: str) -> str | None:
        """The id of the tool indexed under ``name`` (``None`` for no such tool)."""
        return self._ids.get(name)

    @property
    def tool_registry(self) -> dict[str, Any]:
        """``{id: tool}``, the registry to give ``langgraph_bigtool.create_agent``."""
        return dict(self._tools)

    # -- searching ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int | None = None,
        *,
        exclude: Sequence[str] = (),
        session_id: str | SessionRef | None = None,
    ) -> list[str]:
        """The ids of the best tools for ``query``, best first, leaving out the tools of
        ``exclude`` (ids the model has already; a query naming one exactly still finds it).
        ``session_id``: the search session (the retriever's own by default; a throwaway
        :class:`~toolsearch.search.sessions.SessionRef` is dropped after the search)."""
        with self.sessions.open(session_id or self.session_id, tools=self.definitions) as run:
            result = run.search(query, limit, exclude=self._names_of(exclude))
        return [self._ids[n] for n in result.names if n in self._ids]

    def _names_of(self, ids: Sequence[str]) -> list[str]:
        by_id = {tool_id: name for name, tool_id in self._ids.items()}
        return [by_id[i] for i in ids if i in by_id]

    def search_tools(self, query: str, limit: int | None = None) -> list[Any]:
        """The best tools for ``query`` themselves, best first."""
        return [self._tools[i] for i in self.search(query, limit)]

    async def asearch(
        self,
        query: str,
        limit: int | None = None,
        *,
        exclude: Sequence[str] = (),
        session_id: str | SessionRef | None = None,
    ) -> list[str]:
        """:meth:`search` on a worker thread (ranking and embedding never block the loop)."""
        import asyncio
        from functools import partial

        search = partial(self.search, exclude=exclude, session_id=session_id)
        return await asyncio.to_thread(search, query, limit)

    # -- langgraph-bigtool ----------------------------------------------------------------

    def retrieve_tools_function(self) -> Callable[[str], list[str]]:
        """``retrieve_tools(query) -> tool ids`` for ``create_agent(...,
        retrieve_tools_function=...)``; its docstring is the tool description the model
        reads."""

        def retrieve_tools(query: str) -> list[str]:
            return self.search(query)

        retrieve_tools.__doc__ = RETRIEVE_TOOLS_DESCRIPTION
        return retrieve_tools

    def retrieve_tools_coroutine(self) -> Callable[[str], Coroutine[Any, Any, list[str]]]:
        """The async twin of :meth:`retrieve_tools_function` (``retrieve_tools_coroutine``)."""

        async def retrieve_tools(query: str) -> list[str]:
            return await self.asearch(query)

        retrieve_tools.__doc__ = RETRIEVE_TOOLS_DESCRIPTION
        return retrieve_tools

    def bigtool_kwargs(self) -> dict[str, Any]:
        """``create_agent(llm, **retriever.bigtool_kwargs())``: the registry, both retrieval
        callables and the limit."""
        return {
            "tool_registry": self.tool_registry,
            "retrieve_tools_function": self.retrieve_tools_function(),
            "retrieve_tools_coroutine": self.retrieve_tools_coroutine(),
            "limit": self.limit,
        }

    # -- LangChain objects ----------------------------------------------------------------

    def as_retriever(self, limit: int | None = None) -> BaseRetriever:
        """A LangChain ``BaseRetriever``: ``invoke(query)`` returns one ``Document`` per tool
        found (``page_content`` its description, ``metadata`` ``{"id", "name"}``)."""
        from langchain_core.callbacks import (
            AsyncCallbackManagerForRetrieverRun,
            CallbackManagerForRetrieverRun,
        )
        from langchain_core.documents import Document
        from langchain_core.retrievers import BaseRetriever

        owner = self
        default_k = limit or self.limit

        def documents(ids: list[str]) -> list[Document]:
            by_id = {owner._ids[d.name]: d for d in owner.definitions}  # converted: searched
            return [
                Document(
                    page_content=by_id[i].description or by_id[i].name,
                    metadata={"id": i, "name": by_id[i].name},
                )
                for i in ids
            ]

        class _ToolRetriever(BaseRetriever):
            k: int = default_k

            def _get_relevant_documents(
                self, query: str, *, run_manager: CallbackManagerForRetrieverRun
            ) -> list[Document]:
                return documents(owner.search(query, self.k))

            async def _aget_relevant_documents(
                self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
            ) -> list[Document]:
                return documents(await owner.asearch(query, self.k))

        return _ToolRetriever()

    def as_tool(self, name: str = "search_tools", limit: int | None = None) -> BaseTool:
        """A LangChain tool that searches: ``{"query": ...}`` in, a JSON list of the ids
        found out."""
        from langchain_core.tools import StructuredTool

        def run(query: str) -> str:
            return json.dumps(self.search(query, limit))

        async def arun(query: str) -> str:
            return json.dumps(await self.asearch(query, limit))

        return StructuredTool.from_function(
            func=run, coroutine=arun, name=name, description=RETRIEVE_TOOLS_DESCRIPTION
        )

    def __repr__(self) -> str:
        return f"ToolSearchToolRetriever({len(self._tools)} tools, limit={self.limit})"


def create_agent(
    llm: Any,
    retriever: ToolSearchToolRetriever,
    *,
    retrieve_tool_name: str = "retrieve_tools",
) -> Any:
    """``langgraph-bigtool``'s agent graph (an uncompiled ``StateGraph``) over ``retriever``.

    The model first sees one tool, ``retrieve_tool_name``; each call of it searches the
    retriever (on a worker thread in the async graph), leaving out the tools already
    selected, and binds the tools found on the next turn (they accumulate in the state's
    ``selected_tool_ids``, in retrieval order); calls of selected tools run in a
    ``ToolNode``; a call of a tool that was never retrieved is refused with a message naming
    the retrieval tool, and nothing runs. Tools are bound under names every provider accepts
    (``github.create_issue`` as ``github_create_issue``), and the retrieval results name them
    so. The search session is the LangGraph thread (``configurable.thread_id``), else one per
    retrieval. ``.compile()`` it (with a checkpointer for conversations). Needs
    ``langgraph``.
    """
    require("langgraph", extra=_EXTRA, feature="create_agent", package="langgraph")
    from typing import Annotated

    from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig, RunnableLambda
    from langchain_core.tools import StructuredTool
    from langgraph.graph import END, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode
    from langgraph.types import Send
    from typing_extensions import TypedDict

    # nothing here walks the tools' schemas: the tools are converted at the first search (a
    # worker thread's work in the async graph), the ToolNode is built at the first tool call
    registry = retriever.tool_registry
    indexed = dict(retriever._ids)  # {indexed name: id}, known without converting a schema
    # (the nodes call converted.get(): LangChain evaluates the attributes a RunnableLambda's
    # function reads, and retriever.definitions would convert every tool right here)
    converted = retriever._converted
    names = WireNames(PORTABLE_NAMES, [retrieve_tool_name, *indexed])
    by_id = {tool_id: name for name, tool_id in indexed.items()}
    calls_of = ToolSearchSessions(
        registry=retriever.registry,
        options=ToolSearchOptions(
            search_tool_name=retrieve_tool_name,
            undiscovered_tool_policy="hint",
            **PLAIN_SEARCH_LOOP,
        ),
        search_log=retriever.sessions.search_log,
        door="langgraph",
    )
    bound_tools: dict[str, Any] = {}  # id -> the tool under its wire name, made when needed

    def bound_tool(tool_id: str) -> Any:
        found = bound_tools.get(tool_id)
        if found is None:
            found = renamed_tool(registry[tool_id], names.wire(by_id[tool_id]))
            found = bound_tools.setdefault(tool_id, found)
        return found

    def retrieve_tools(query: str) -> list[str]:  # the model's view; the nodes search
        return retriever.search(query)

    retrieve_tools.__doc__ = RETRIEVE_TOOLS_DESCRIPTION
    retrieve = StructuredTool.from_function(
        func=retrieve_tools, name=retrieve_tool_name, description=RETRIEVE_TOOLS_DESCRIPTION
    )

    def add_new(left: list[str], right: list[str]) -> list[str]:
        return left + [item for item in right if item not in set(left)]

    # the functional form: this module's annotations are strings, a class body's would not
    # resolve here
    State = TypedDict(  # noqa: UP013
        "State",
        {
            "messages": Annotated[list[AnyMessage], add_messages],
            "selected_tool_ids": Annotated[list[str], add_new],
        },
    )

    retrieve_definition = ToolDefinition(
        retrieve_tool_name,
        RETRIEVE_TOOLS_DESCRIPTION,
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    )

    def bound(state: dict[str, Any], config: RunnableConfig | None) -> Any:
        ids = [i for i in state.get("selected_tool_ids", []) if i in registry]
        session = session_of(config)
        if session is not None and ids:  # what the model sees, for retriever.sessions.loaded()
            definition_of = {retriever.tool_id(d.name): d for d in converted.get()}
            retriever.sessions.note_loaded(
                session, [definition_of[i] for i in ids], search_tool=retrieve_definition
            )
        return llm.bind_tools([retrieve, *(bound_tool(i) for i in ids)])

    def call_model(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [bound(state, config).invoke(state["messages"])]}

    async def acall_model(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        if state.get("selected_tool_ids"):  # converted by the search that selected them,
            await converted.aget()  # unless restored from a checkpoint
        return {"messages": [await bound(state, config).ainvoke(state["messages"])]}

    def session_of(config: RunnableConfig | None) -> str | None:
        configurable = (config or {}).get("configurable") or {}
        thread = configurable.get("thread_id")
        return str(thread) if thread else None

    def selected(calls: list[dict[str, Any]], found: list[list[str]]) -> dict[str, Any]:
        messages = []
        ids: list[str] = []
        for call, batch in zip(calls, found, strict=True):
            shown = [names.wire(by_id[i]) for i in batch]
            messages.append(ToolMessage(f"Available tools: {shown}", tool_call_id=call["id"]))
            ids.extend(batch)
        return {"messages": messages, "selected_tool_ids": ids}

    def _query(call: dict[str, Any]) -> str:
        return str(call["args"].get("query", ""))

    def select_tools(payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        calls, have = payload["calls"], payload["selected"]
        sid = resolve_session(session_of(config))  # without a thread: dropped after
        found = [retriever.search(_query(c), exclude=have, session_id=sid) for c in calls]
        return selected(calls, found)

    async def aselect_tools(payload: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        calls, have = payload["calls"], payload["selected"]
        sid = resolve_session(session_of(config))  # without a thread: dropped after
        found = [await retriever.asearch(_query(c), exclude=have, session_id=sid) for c in calls]
        return selected(calls, found)

    def refuse(payload: dict[str, Any]) -> dict[str, Any]:
        visible = [by_id[i] for i in payload["selected"] if i in by_id]
        out = []
        with calls_of.open(tools=converted.get(), provider=PORTABLE_NAMES) as run:
            for call in payload["calls"]:
                decision = run.check_call(call["name"], visible=visible)
                out.append(
                    ToolMessage(
                        decision.message or "",
                        tool_call_id=call["id"],
                        name=call["name"],
                        status="error",
                    )
                )
        return {"messages": out}

    def route(state: dict[str, Any]) -> Any:
        last = state["messages"][-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return END
        have = list(state.get("selected_tool_ids", []))
        allowed = {names.wire(by_id[i]) for i in have if i in by_id}
        sends = []
        for call in last.tool_calls:
            if call["name"] == retrieve_tool_name:
                sends.append(Send("select_tools", {"calls": [call], "selected": have}))
            elif call["name"] in allowed:
                sends.append(Send("tools", [call]))
            else:
                sends.append(Send("refuse", {"calls": [call], "selected": have}))
        return sends

    builder: Any = StateGraph(State)  # nodes typed by the functional State: Any here
    builder.add_node("agent", RunnableLambda(call_model, afunc=acall_model))
    builder.add_node("select_tools", RunnableLambda(select_tools, afunc=aselect_tools))
    builder.add_node("refuse", RunnableLambda(refuse))

    def record(call: Any, result: Any, started: float) -> None:
        """A selected tool's call, with its outcome, to the search log once it ran."""
        own = names.real(call["name"])
        config = getattr(getattr(call, "runtime", None), "config", None)
        session = resolve_session(session_of(config))
        if own not in indexed or calls_of.search_log is None or session.ephemeral:
            return  # without a thread, each retrieval searched a session of its own
        ok = result is not None and getattr(result, "status", "success") != "error"
        with calls_of.open(session, tools=converted.get()) as run:
            run.record_outcomes([own], [ok], started)

    def wrap_tool_call(request: Any, execute: Any) -> Any:
        started, result = time.time(), None
        try:
            result = execute(request)
            return result
        finally:
            record(_CallOf(request), result, started)

    async def awrap_tool_call(request: Any, execute: Any) -> Any:
        started, result = time.time(), None
        try:
            result = await execute(request)
            return result
        finally:
            if calls_of.search_log is not None:  # the log's write is I/O: off the loop
                await asyncio.to_thread(record, _CallOf(request), result, started)

    tool_node = BuiltOnce(  # the ToolNode over every tool, built at the first tool call
        lambda: ToolNode(
            [bound_tool(i) for i in registry],
            wrap_tool_call=wrap_tool_call,
            awrap_tool_call=awrap_tool_call,
        )
    )

    def run_tools(calls: Any, config: RunnableConfig) -> Any:
        return tool_node.get().invoke(calls, config)

    async def arun_tools(calls: Any, config: RunnableConfig) -> Any:
        return await (await tool_node.aget()).ainvoke(calls, config)

    builder.add_node("tools", RunnableLambda(run_tools, afunc=arun_tools))
    builder.set_entry_point("agent")
    builder.add_conditional_edges("agent", route, path_map=["select_tools", "tools", "refuse", END])
    builder.add_edge("tools", "agent")
    builder.add_edge("select_tools", "agent")
    builder.add_edge("refuse", "agent")
    return builder


class _CallOf(dict[str, Any]):
    """A ``ToolNode`` call request's tool call, with the request's runtime beside it."""

    def __init__(self, request: Any) -> None:
        super().__init__(request.tool_call)
        self.runtime = getattr(request, "runtime", None)


def _named(definition: ToolDefinition, name: str) -> ToolDefinition:
    if definition.name == name:
        return definition
    return ToolDefinition(name, definition.description, definition.input_schema)


def renamed_tool(tool: Any, name: str) -> Any:
    """``tool`` under ``name`` (a copy; the tool itself when the name is unchanged): a
    ``BaseTool`` is copied, a plain function is wrapped as a tool first."""
    from langchain_core.tools import BaseTool, StructuredTool

    if not isinstance(tool, BaseTool):
        tool = StructuredTool.from_function(tool)
    if tool.name == name:
        return tool
    return tool.model_copy(update={"name": name})


def __getattr__(name: str) -> Any:
    """The names before issue 48, deprecated: ``ToolsearchToolRetriever``,
    ``to_toolsearch_definition``."""
    return renamed(__name__, name, _RENAMED, globals())
