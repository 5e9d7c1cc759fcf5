"""The tool-search loop's innermost link: it places the request's new tool changes where
the model receives them (see :class:`ChangeAnchor`), and with ``injection="results"``
hands pre-retrieved tools over as a search exchange at that place (:class:`CarriedSearch`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    ToolSearchHit,
)
from toolsearch.chat.options import ToolChange
from toolsearch.loop.advisor import AdvisorChain, ChatClientRequest, ChatClientResponse
from toolsearch.search.working_set import ChangeTracker

__all__ = [
    "CARRIED_KEY",
    "CHANGES_KEY",
    "CarriedSearch",
    "ChangeAnchor",
    "anchored",
    "carried_search",
]

CHANGES_KEY = "toolsearch.tool_search.changes"
"""Request-context key: the session's :class:`~toolsearch.search.working_set.ChangeTracker`,
set by the tool-search advisor on a request that carries tool changes."""

CARRIED_KEY = "toolsearch.tool_search.carried"
"""Request-context key: the :class:`CarriedSearch` of a request whose additions travel as
search exchanges (``injection="results"``)."""


@dataclass(frozen=True)
class CarriedSearch:
    """Additions handed over in the messages, for ``injection="results"``: the tool list
    stays the search tool and the call tool, so pre-retrieved tools reach the model the
    way a search's would, as a call of the search tool (naming them) and its result
    (their definitions), placed where each addition first showed and repeated there on
    every later request (a chat memory never stores it), so the prefix before it and
    the exchange itself stay byte-identical and the provider's cache keeps the whole
    conversation. ``render`` gives the result text for tool names (the search result's
    own rendering)."""

    search_tool: str
    render: Callable[[Sequence[str]], str]

    def insert(self, messages: Sequence[Message], changes: Sequence[ToolChange]) -> list[Message]:
        """``messages`` with one exchange per addition at its place (from the back, so
        the earlier places keep their meaning)."""
        out = list(messages)
        adds = [(i, c) for i, c in enumerate(changes) if c.kind == "add" and c.names]
        for number, change in reversed(adds):
            at = min(max(change.after_message, 0), len(out))
            call_id = f"toolsearch_carried_{number}"
            query = json.dumps({"query": ", ".join(change.names)})
            call = ToolCall(id=call_id, name=self.search_tool, arguments=query)
            result = ToolResponse(
                id=call_id, name=self.search_tool, response_data=self.render(change.names)
            )
            pair: list[Message] = [
                AssistantMessage(tool_calls=(call,)),
                ToolResponseMessage(responses=(result,)),
            ]
            out[at:at] = pair
        return out


class ChangeAnchor:
    """The innermost link of the tool-search loop's chain (after every advisor inside the
    loop, right before the model): it sees the prompt as the model receives it, and places
    the request's new tool changes after its last message (a chat memory inside the loop
    adds the conversation's history after the tool-search advisor, which sees only the
    system prompt and the newest message). Later requests repeat each change there, so
    the rendered history before it stays byte-identical (the ``ToolChange`` contract)."""

    name = "ToolSearchChangeAnchor"
    order = 2**31 - 1

    @staticmethod
    def _anchor(request: ChatClientRequest) -> ChatClientRequest:
        tracker = request.context.get(CHANGES_KEY)
        carried = request.context.get(CARRIED_KEY)
        if isinstance(tracker, ChangeTracker) and isinstance(carried, CarriedSearch):
            messages = request.prompt.messages
            changes = tracker.anchor(len(messages))
            return request.with_prompt(
                request.prompt.with_messages(carried.insert(messages, changes))
            )
        if not isinstance(tracker, ChangeTracker) or not request.prompt.options.tool_changes:
            return request
        changes = tracker.anchor(len(request.prompt.messages))
        options = request.prompt.options.replace(tool_changes=changes)
        return request.with_prompt(request.prompt.with_options(options))

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        return chain.next_call(self._anchor(request))

    async def aadvise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        return await chain.anext_call(self._anchor(request))

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> Iterator[ChatClientResponse]:
        yield from chain.next_stream(self._anchor(request))

    async def aadvise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        async for chunk in chain.anext_stream(self._anchor(request)):
            yield chunk


def anchored(chain: AdvisorChain) -> AdvisorChain:
    """``chain`` (the rest after this advisor) with a :class:`ChangeAnchor` last."""
    return AdvisorChain([*chain.remaining, ChangeAnchor()], chain.model)


def carried_search(loop: Any) -> CarriedSearch:
    """The :class:`CarriedSearch` of an advisor's loop state (its run and search tool): the
    result text is the run's own rendering of a search that found those tools."""
    run = loop.run
    name = loop.search_tool.definition.name

    def render(names: Sequence[str]) -> str:
        from toolsearch.search.run import SearchResult

        hits = tuple(ToolSearchHit(name=n) for n in names if n in run.tools)
        return str(run.render(SearchResult(hits=hits)))

    return CarriedSearch(name, render)
