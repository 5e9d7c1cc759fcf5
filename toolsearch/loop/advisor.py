"""Advisors and the advisor chain: ordered interceptors around every model call.

An advisor with a lower ``order`` runs outer (first on the way in, last on the way out).
The chain ends in the model call. A chain is immutable: ``next_call`` hands the next
advisor a chain positioned after it, so an advisor can call the rest of the chain as
often as it likes (the tool-calling loop does exactly that).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.errors import AdvisorChainError

if TYPE_CHECKING:
    from toolsearch.chat.model import ChatModel

__all__ = [
    "CHAT_MEMORY_ADVISOR_ORDER",
    "HIGHEST_PRECEDENCE",
    "LOWEST_PRECEDENCE",
    "TOOL_CALLING_ADVISOR_ORDER",
    "Advisor",
    "AdvisorChain",
    "BaseAdvisor",
    "CallAdvisor",
    "ChatClientRequest",
    "ChatClientResponse",
    "StreamAdvisor",
    "build_advisor_chain",
    "is_chat_memory_advisor",
    "is_tool_advisor",
]

HIGHEST_PRECEDENCE = 0
"""The lowest ``order`` value: runs outermost."""
LOWEST_PRECEDENCE = 2**31 - 1
"""The highest ``order`` value: runs innermost, next to the model."""
TOOL_CALLING_ADVISOR_ORDER = HIGHEST_PRECEDENCE + 300
"""Default order of the tool-calling advisors."""
CHAT_MEMORY_ADVISOR_ORDER = HIGHEST_PRECEDENCE + 200
"""Default order of the memory advisor: outside the tool loop."""


CONVERSATION_ID = "chat_memory_conversation_id"
"""The advisor-context key (``.advisors(lambda a: a.param(CONVERSATION_ID, ...))``) that
names the conversation: the memory's conversation, the tool-search advisor's session, and
the ``gen_ai.conversation.id`` the observer is told."""


@dataclass(frozen=True)
class ChatClientRequest:
    """A prompt on its way through the advisor chain, with the advisors' shared context."""

    prompt: Prompt
    context: Mapping[str, Any] = field(default_factory=dict)

    def with_prompt(self, prompt: Prompt) -> ChatClientRequest:
        return dataclasses.replace(self, prompt=prompt)

    def with_context(self, **updates: Any) -> ChatClientRequest:
        return dataclasses.replace(self, context={**self.context, **updates})

    @property
    def conversation_id(self) -> str | None:
        """The conversation the request names (:data:`CONVERSATION_ID`), if any."""
        value = self.context.get(CONVERSATION_ID)
        return None if value is None else str(value)


@dataclass(frozen=True)
class ChatClientResponse:
    """A model's response on its way back out of the chain, with the shared context."""

    chat_response: ChatResponse | None
    context: Mapping[str, Any] = field(default_factory=dict)

    def with_chat_response(self, chat_response: ChatResponse | None) -> ChatClientResponse:
        return dataclasses.replace(self, chat_response=chat_response)


@runtime_checkable
class Advisor(Protocol):
    """Anything in the chain: it has a ``name`` and an ``order``."""

    @property
    def name(self) -> str: ...

    @property
    def order(self) -> int: ...


@runtime_checkable
class CallAdvisor(Advisor, Protocol):
    """Intercepts blocking calls: do work, call ``chain.next_call(request)``, do more work."""

    def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse: ...


@runtime_checkable
class StreamAdvisor(Advisor, Protocol):
    """Intercepts streaming calls: yields the responses (chunks) of ``chain.next_stream``."""

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> Iterator[ChatClientResponse]: ...


class BaseAdvisor:
    """An advisor made of ``before`` (on the request) and ``after`` (on each response).

    Subclass and override either; streaming applies ``after`` to every chunk. Works on the
    blocking, streaming and async paths alike.
    """

    def __init__(self, *, order: int = HIGHEST_PRECEDENCE + 1000, name: str | None = None) -> None:
        self._order = order
        self._name = name or type(self).__name__

    @property
    def name(self) -> str:
        return self._name

    @property
    def order(self) -> int:
        return self._order

    def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        return request

    def after(self, response: ChatClientResponse, chain: AdvisorChain) -> ChatClientResponse:
        return response

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        return self.after(chain.next_call(self.before(request, chain)), chain)

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> Iterator[ChatClientResponse]:
        for response in chain.next_stream(self.before(request, chain)):
            yield self.after(response, chain)

    async def aadvise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        return self.after(await chain.anext_call(self.before(request, chain)), chain)

    async def aadvise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        async for response in chain.anext_stream(self.before(request, chain)):
            yield self.after(response, chain)


def is_tool_advisor(advisor: object) -> bool:
    """Whether ``advisor`` runs the tool loop (``handles_tool_execution = True``)."""
    return bool(getattr(advisor, "handles_tool_execution", False))


def is_chat_memory_advisor(advisor: object) -> bool:
    """Whether ``advisor`` keeps conversation memory (``is_chat_memory_advisor = True``)."""
    return bool(getattr(advisor, "is_chat_memory_advisor", False))


class AdvisorChain:
    """The rest of the chain from one position on, ending in the model call."""

    __slots__ = ("_advisors", "_model", "_position")

    def __init__(self, advisors: Sequence[Any], model: ChatModel, position: int = 0) -> None:
        self._advisors = tuple(advisors)
        self._model = model
        self._position = position

    @property
    def advisors(self) -> tuple[Any, ...]:
        """Every advisor of the chain, in order."""
        return self._advisors

    @property
    def remaining(self) -> tuple[Any, ...]:
        """The advisors that still run after this point, in order."""
        return self._advisors[self._position :]

    @property
    def model(self) -> ChatModel:
        return self._model

    def _next(self, *methods: str) -> tuple[Any, bool, AdvisorChain] | None:
        """The first advisor from this point that has one of ``methods`` (each advisor is
        asked for them in turn): its method, whether it is the first of ``methods``, and
        the chain after it; ``None`` when only the model is left. The one walk of the four
        ``next_*`` faces."""
        for index in range(self._position, len(self._advisors)):
            advisor = self._advisors[index]
            for method in methods:
                if hasattr(advisor, method):
                    rest = AdvisorChain(self._advisors, self._model, index + 1)
                    return getattr(advisor, method), method == methods[0], rest
        return None

    def next_call(self, request: ChatClientRequest) -> ChatClientResponse:
        found = self._next("advise_call")
        if found is not None:
            advise, _, rest = found
            return advise(request, rest)  # type: ignore[no-any-return]
        return ChatClientResponse(self._model.call(request.prompt), request.context)

    def next_stream(self, request: ChatClientRequest) -> Iterator[ChatClientResponse]:
        found = self._next("advise_stream")
        if found is not None:
            advise, _, rest = found
            yield from advise(request, rest)
            return
        for chunk in self._model.stream(request.prompt):
            yield ChatClientResponse(chunk, request.context)

    async def anext_call(self, request: ChatClientRequest) -> ChatClientResponse:
        """Async twin of :meth:`next_call`. An advisor without ``aadvise_call`` runs its
        blocking ``advise_call`` in a worker thread; the model is awaited (``acall``)."""
        import asyncio

        found = self._next("aadvise_call", "advise_call")
        if found is not None:
            advise, awaitable, rest = found
            if awaitable:
                return await advise(request, rest)  # type: ignore[no-any-return]
            return await asyncio.to_thread(advise, request, rest)
        model = self._model
        if hasattr(model, "acall"):
            response = await model.acall(request.prompt)
        else:
            response = await asyncio.to_thread(model.call, request.prompt)
        return ChatClientResponse(response, request.context)

    async def anext_stream(self, request: ChatClientRequest) -> AsyncIterator[ChatClientResponse]:
        """Async twin of :meth:`next_stream`."""
        from toolsearch._async import iterate_in_thread

        found = self._next("aadvise_stream", "advise_stream")
        if found is not None:
            advise, asynchronous, rest = found
            items = advise(request, rest)
            async for item in items if asynchronous else iterate_in_thread(iter(items)):
                yield item
            return
        model = self._model
        chunks = (
            model.astream(request.prompt)
            if hasattr(model, "astream")
            else iterate_in_thread(iter(model.stream(request.prompt)))
        )
        async for chunk in chunks:
            yield ChatClientResponse(chunk, request.context)


def build_advisor_chain(advisors: Sequence[Any], model: ChatModel) -> AdvisorChain:
    """Sort advisors stably by ``order`` and check that at most one runs the tool loop."""
    for advisor in advisors:
        methods = ("advise_call", "advise_stream", "aadvise_call", "aadvise_stream")
        if not any(hasattr(advisor, m) for m in methods):
            raise AdvisorChainError(
                f"{advisor!r} is not an advisor: it has none of {', '.join(methods)}"
            )
    tool_advisors = [a for a in advisors if is_tool_advisor(a)]
    if len(tool_advisors) > 1:
        names = ", ".join(getattr(a, "name", type(a).__name__) for a in tool_advisors)
        raise AdvisorChainError(
            f"the chain holds {len(tool_advisors)} tool-calling advisors ({names}); "
            "keep exactly one"
        )
    ordered = sorted(advisors, key=lambda a: getattr(a, "order", LOWEST_PRECEDENCE))
    return AdvisorChain(ordered, model)
