"""pydantic-ai: a toolsearch index as the ``ToolSearch`` capability's strategy.

pydantic-ai hides tools marked ``defer_loading=True`` until its ``ToolSearch`` capability
discovers them; the capability takes a strategy, a callable ``(ctx, queries, tools) ->
names``, and runs it locally through its ``search_tools`` function tool (and through the
provider's client-executed tool search on Anthropic and OpenAI Responses). Its default
strategy scores keyword overlap. The swap is one line::

    from pydantic_ai import Agent
    from pydantic_ai.toolsets import FunctionToolset
    from toolsearch.integrations.pydantic_ai import toolsearch_tool_search

    agent = Agent(
        "openai:gpt-5.2",
        toolsets=[FunctionToolset(my_tools).defer_loading()],
        capabilities=[toolsearch_tool_search("hybrid")],  # was: ToolSearch()
    )

:class:`ToolsearchStrategy` is the strategy itself, for ``ToolSearch(strategy=...)``. It
keeps one :class:`~toolsearch.search.registry.SessionRegistry` over its index: an agent's
tool set is indexed once (under ``f"{session_id}#{digest of the tools}"``), at its first
search, and every later run with the same tools searches that key; a run whose tool set
differs (a dynamic toolset) gets its own key, at most four per session (least recently used
out). pydantic-ai keeps what a run discovered in its message history, so the strategy leaves
the tools already discovered out of the results (``exclude_discovered``), as toolsearch's
own search tool does: every hit is a tool the model did not have.

Needs ``toolsearch[pydantic-ai]`` (``pydantic-ai-slim``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from toolsearch.integrations._common import ToolSearcher, require
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.store import SessionStore
from toolsearch.search.types import ToolIndex
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import ToolSearch
    from pydantic_ai.tools import ToolDefinition as PydanticToolDefinition

__all__ = [
    "DEFAULT_SESSION_ID",
    "SEARCH_TOOL_NAME",
    "ToolsearchStrategy",
    "to_toolsearch_definition",
    "toolsearch_tool_search",
]

DEFAULT_SESSION_ID = "pydantic-ai"
"""The registry session an agent's tool sets are indexed under unless told otherwise."""

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

    ``ToolSearch(strategy=ToolsearchStrategy("hybrid"))``. pydantic-ai calls it with the run
    context, the model's queries and the searchable deferred tools; it answers the names of
    the best tools, best first (pydantic-ai keeps ``ToolSearch.max_results`` of them).

    Args:
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``, ``"vector:static"``)
            or ``None`` for BM25.
        session_id: The registry session to index under: a string (default
            :data:`DEFAULT_SESSION_ID`, one per strategy object is enough: tool sets are
            keyed by their content), or a callable of the ``RunContext`` (e.g. per tenant).
        max_results: How many names a search returns at most (pydantic-ai then keeps its
            own ``max_results``).
        exclude_discovered: Leave tools the run already discovered out of the results (a
            query naming one exactly still finds it).
        registry: A ``SessionRegistry`` to share with other strategies or integrations
            (instead of ``index`` and ``store``).
        store: The session store of the strategy's registry (``RedisSessionStore`` to share
            session state between workers).
    """

    def __init__(
        self,
        index: ToolIndex | str | None = None,
        *,
        session_id: str | Callable[[RunContext[Any]], str] = DEFAULT_SESSION_ID,
        max_results: int = 10,
        exclude_discovered: bool = True,
        registry: SessionRegistry | None = None,
        store: SessionStore | None = None,
    ) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1")
        self.searcher = ToolSearcher(index, registry=registry, store=store)
        self.session_id = session_id
        self.max_results = max_results
        self.exclude_discovered = exclude_discovered

    @property
    def registry(self) -> SessionRegistry:
        return self.searcher.registry

    @property
    def index(self) -> ToolIndex:
        return self.searcher.index

    def __call__(
        self,
        ctx: RunContext[Any],
        queries: Sequence[str],
        tools: Sequence[PydanticToolDefinition],
    ) -> list[str]:
        session = self.session_id(ctx) if callable(self.session_id) else self.session_id
        definitions = self.definitions(tools)
        discovered = getattr(ctx, "discovered_tool_names", None) or ()
        return self.searcher.search(
            str(session),
            definitions,
            queries,
            limit=self.max_results,
            exclude=discovered if self.exclude_discovered else (),
        )

    def definitions(self, tools: Sequence[PydanticToolDefinition]) -> list[ToolDefinition]:
        """The toolsearch definitions of pydantic-ai tools (each converted once)."""
        out = []
        for tool in tools:
            schema = tool.parameters_json_schema
            key = (tool.name, tool.description, id(schema))
            out.append(
                self.searcher.definition(key, schema, partial(to_toolsearch_definition, tool))
            )
        return out

    def __repr__(self) -> str:
        return f"ToolsearchStrategy({type(self.index).__name__})"


def toolsearch_tool_search(
    index: ToolIndex | str | ToolsearchStrategy | None = None,
    *,
    max_results: int = 10,
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
