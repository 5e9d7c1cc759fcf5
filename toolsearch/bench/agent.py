"""An offline agent that drives the real tool loop, for the token-savings benchmark.

:class:`SimulatedAgent` is the scripted model behind a ``FunctionChatModel``. It acts like
a competent model that knows which tools the task needs (the gold tools) but can only call
tools it can *see*:

* with every tool visible (the full loop), it calls the gold tools in order, then answers;
* with tool search, it searches with queries taken from the task text alone, never from
  the gold labels (:class:`QueryPolicy`: the whole request first, then its clauses one by
  one, up to ``max_rounds``, 12 by default), calls each gold tool once it has been
  discovered, and answers when the gold tools are done or the queries run out. With
  ``QueryPolicy(multi_query=True)`` the clauses go in one call (``queries``, up to five a
  call) after the whole request, as a model splits a multi-tool request in one turn.

A task succeeds when every gold tool was called.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from toolsearch.chat.messages import AssistantMessage, Message, ToolCall
from toolsearch.indexes.clauses import split_clauses
from toolsearch.models.samples import sample_arguments
from toolsearch.search.search_tool import DEFAULT_SEARCH_TOOL_NAME, MAX_QUERIES
from toolsearch.tools.definition import ToolDefinition

__all__ = ["QueryPolicy", "SimulatedAgent", "split_clauses"]


@dataclass(frozen=True)
class QueryPolicy:
    """Which searches the agent makes for a request: the whole text, then its clauses.

    ``max_rounds`` caps the searches per task. The default, 12, is high enough to search
    every clause of nearly every request of the development sets (the figures:
    docs/benchmark.md, "How the query policy was chosen"); the agent stops earlier once
    it has every tool it needs.
    """

    max_rounds: int = 12
    multi_query: bool = False
    """Send the clauses together (the search tool's ``queries``) instead of one a turn;
    the advisor must have ``multi_query`` on."""

    def queries(self, text: str) -> list[str]:
        queries = [text.strip()]
        for clause in split_clauses(text):
            if clause not in queries:
                queries.append(clause)
        return queries[: max(1, self.max_rounds)]


class SimulatedAgent:
    """The scripted model of one task (see the module docstring)."""

    def __init__(
        self,
        request: str,
        gold: Sequence[str],
        *,
        policy: QueryPolicy | None = None,
        search_tool_name: str = DEFAULT_SEARCH_TOOL_NAME,
        max_results: int = 5,
    ) -> None:
        self._policy = policy or QueryPolicy()
        self._queries = self._policy.queries(request)
        self._gold = list(dict.fromkeys(gold))
        self._search_tool_name = search_tool_name
        self._max_results = max_results
        self.searches: list[str] = []
        """The queries this agent sent, in order (for reports and tests)."""

    def __call__(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage:
        visible = {t.name: t for t in tools}
        called = {
            call.name
            for message in messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls
        }
        turn = sum(1 for m in messages if isinstance(m, AssistantMessage))
        for name in self._gold:
            if name not in called and name in visible:
                arguments = json.dumps(sample_arguments(visible[name].input_schema))
                return AssistantMessage(
                    tool_calls=(ToolCall(id=f"call_{turn}", name=name, arguments=arguments),)
                )
        pending = [name for name in self._gold if name not in called]
        if (
            pending
            and self._search_tool_name in visible
            and len(self.searches) < len(self._queries)
        ):
            arguments = json.dumps(self._next_search())
            return AssistantMessage(
                tool_calls=(
                    ToolCall(id=f"search_{turn}", name=self._search_tool_name, arguments=arguments),
                )
            )
        done = [name for name in self._gold if name in called]
        return AssistantMessage(content=f"Done with {len(done)} of {len(self._gold)} steps.")

    def _next_search(self) -> dict[str, object]:
        """The next search's arguments: one query, or (multi-query, after the whole
        request) the next clauses together."""
        start = len(self.searches)
        if not self._policy.multi_query or start == 0:
            self.searches.append(self._queries[start])
            return {"query": self._queries[start], "maxResults": self._max_results}
        batch = self._queries[start : start + MAX_QUERIES]
        self.searches.extend(batch)
        return {"queries": batch, "maxResults": self._max_results}
