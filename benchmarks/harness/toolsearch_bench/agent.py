"""An offline agent that drives the real tool loop, for the token-savings benchmark.

:class:`SimulatedAgent` is the scripted model behind a ``FunctionChatModel``. It acts like
a competent model that knows which tools the task needs (the gold tools) but can only call
tools it can *see*:

* with every tool visible (the full loop), it calls the gold tools in order, then answers;
* with tool search, it searches with queries taken from the task text alone, never from
  the gold labels (:class:`QueryPolicy`: the whole request first, then its clauses one by
  one, up to ``max_rounds``, 12 by default), calls each gold tool once it has been
  discovered, and answers when the gold tools are done or the queries run out. With the
  advisor's ``injection="results"`` a discovered tool is not in the tool list: the agent
  calls it through the call tool, with arguments from the definition the search returned. With
  ``QueryPolicy(multi_query=True)`` the clauses go in one call (``queries``, up to five a
  call) after the whole request, as a model splits a multi-tool request in one turn.

A task succeeds when every gold tool was called.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.chat.messages import AssistantMessage, Message, ToolCall, ToolResponseMessage
from toolsearch.indexes.clauses import split_clauses
from toolsearch.models.samples import sample_arguments
from toolsearch.search.builtin_tools.call_tool import DEFAULT_CALL_TOOL_NAME
from toolsearch.search.builtin_tools.search_tool import DEFAULT_SEARCH_TOOL_NAME, MAX_QUERIES
from toolsearch.tools.definition import ToolDefinition

__all__ = ["QueryPolicy", "SimulatedAgent", "called_tools", "split_clauses"]


def called_tools(
    messages: Sequence[Message], call_tool_name: str = DEFAULT_CALL_TOOL_NAME
) -> set[str]:
    """The tools the assistant messages call, a call through the call tool counted as a
    call of the tool it names."""
    called = set()
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.tool_calls:
            if call.name == call_tool_name:
                try:
                    named = json.loads(call.arguments).get("name")
                except (ValueError, AttributeError):
                    named = None
                if isinstance(named, str):
                    called.add(named)
                    continue
            called.add(call.name)
    return called


def _carried(messages: Sequence[Message], search_tool_name: str) -> dict[str, dict[str, Any]]:
    """The definitions search results carried (``injection="results"``): name -> schema."""
    found: dict[str, dict[str, Any]] = {}
    for message in messages:
        if not isinstance(message, ToolResponseMessage):
            continue
        for response in message.responses:
            if response.name != search_tool_name:
                continue
            try:
                items = json.loads(response.response_data)
            except ValueError:
                continue
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict) and isinstance(item.get("parameters"), dict):
                    found[str(item.get("name"))] = item["parameters"]
    return found


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

    def __call__(
        self,
        messages: list[Message],
        tools: list[ToolDefinition],
        *,
        earlier: Sequence[Message] = (),
    ) -> AssistantMessage:
        """The next message of the task whose conversation ``messages`` is; ``earlier``:
        the conversation before the task's request (in a long conversation), read only
        for the definitions earlier searches carried."""
        visible = {t.name: t for t in tools}
        called = called_tools(messages)
        turn = sum(1 for m in messages if isinstance(m, AssistantMessage))
        carried = (
            _carried([*earlier, *messages], self._search_tool_name)
            if DEFAULT_CALL_TOOL_NAME in visible
            else {}
        )
        for name in self._gold:
            if name not in called and name in visible:
                arguments = json.dumps(sample_arguments(visible[name].input_schema))
                return AssistantMessage(
                    tool_calls=(ToolCall(id=f"call_{turn}", name=name, arguments=arguments),)
                )
            if name not in called and name in carried:
                through = {"name": name, "arguments": sample_arguments(carried[name])}
                return AssistantMessage(
                    tool_calls=(
                        ToolCall(
                            id=f"call_{turn}",
                            name=DEFAULT_CALL_TOOL_NAME,
                            arguments=json.dumps(through),
                        ),
                    )
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
