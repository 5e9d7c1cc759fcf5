"""The tool-search loop's innermost link: it places the request's new tool changes where
the model receives them (see :class:`ChangeAnchor`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from toolsearch.loop.advisor import AdvisorChain, ChatClientRequest, ChatClientResponse
from toolsearch.search.working_set import ChangeTracker

__all__ = ["CHANGES_KEY", "ChangeAnchor", "anchored"]

CHANGES_KEY = "toolsearch.tool_search.changes"
"""Request-context key: the session's :class:`~toolsearch.search.working_set.ChangeTracker`,
set by the tool-search advisor on a request that carries tool changes."""


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
