"""toolsearch inside the agent frameworks people already run.

One module per framework, each importing its framework only when used (a missing one raises
:class:`~toolsearch.errors.MissingExtraError` naming the extra to install):

* :mod:`toolsearch.integrations.pydantic_ai` (``toolsearch[pydantic-ai]``):
  ``toolsearch_tool_search("hybrid")`` in place of pydantic-ai's ``ToolSearch()``, and
  ``ToolSearchStrategy``, the strategy callable itself;
* :mod:`toolsearch.integrations.langgraph` (``toolsearch[langgraph]``):
  ``ToolSearchToolRetriever``, LangChain tools in a toolsearch index, as
  ``langgraph-bigtool``'s ``retrieve_tools``, a LangChain retriever or a search tool, and
  ``create_agent``, bigtool's graph on the current LangGraph;
* :mod:`toolsearch.integrations.langchain` (``toolsearch[langchain]``):
  ``ToolSearchMiddleware``, tool search as a LangChain 1.x agent middleware for
  ``langchain.agents.create_agent``;
* :mod:`toolsearch.integrations.openai_agents` (``toolsearch[openai-agents]``):
  ``ToolSearchAgentTools``, an agent's tools behind a search function tool, each enabled
  once discovered;
* :mod:`toolsearch.integrations.sdk_loop` (no extra beyond the provider SDK you call):
  ``ToolSearchLoop``, the tool list to send on this turn and the search tool's result, for
  loops written over ``openai``, ``anthropic`` or ``google-genai``.

Every integration is a thin front door over the search-session core
(:class:`~toolsearch.search.sessions.ToolSearchSessions`): a tool set is indexed once per
session, discoveries live in its session store (a ``RedisSessionStore`` shares them between
processes), async doors index and rank on a worker thread, runs without a session id get
a throwaway session of their own, and every search emits the same span, metrics and
search-log records. Each door takes its own arguments, then the ones every door shares
(:class:`~toolsearch.integrations.door.ToolSearchDoorKwargs`: ``sessions=`` to share
another door's sessions, ``registry=``, ``store=``, ``search_log=``...); each framework
module's ``to_tool_definition`` turns that framework's tool into a ``ToolDefinition``.

Importing this package imports no framework.
"""

from __future__ import annotations

__all__ = ["FRAMEWORK_EXTRAS"]

FRAMEWORK_EXTRAS: dict[str, str] = {
    "pydantic_ai": "pydantic-ai",
    "langgraph": "langgraph",
    "langchain": "langchain",
    "openai_agents": "openai-agents",
    "sdk_loop": "",
}
"""Integration module -> the extra that installs its framework (none for ``sdk_loop``)."""
