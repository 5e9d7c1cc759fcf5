"""The ``ChatModel`` protocol: one request in, one answer (or a stream of chunks) out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol, runtime_checkable

from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.observe import model_class_defined

__all__ = ["BaseChatModel", "ChatModel"]


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. It answers with text and/or tool calls; it never executes tools."""

    def call(self, prompt: Prompt) -> ChatResponse: ...

    def stream(self, prompt: Prompt) -> Iterator[ChatResponse]: ...

    async def acall(self, prompt: Prompt) -> ChatResponse: ...

    def astream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]: ...


class BaseChatModel(ABC):
    """Shared plumbing for chat models: default options and async/stream fallbacks.

    A request's options are merged over the model's ``default_options``: settings set in
    the request win, and tool callbacks given in the request **replace** the defaults.

    Every subclass is shown to the observer when it is defined
    (:func:`toolsearch.observe.model_class_defined`); with :mod:`toolsearch.telemetry`
    attached its ``call``/``stream``/``acall``/``astream`` run under one OpenTelemetry
    ``chat {model}`` span per model call (a no-op without OpenTelemetry installed). A model
    that calls its own other methods (``call`` over ``stream``) still makes one span.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        model_class_defined(cls)

    def __init__(self, *, default_options: ChatOptions | None = None) -> None:
        self._default_options = default_options or ChatOptions()

    @property
    def default_options(self) -> ChatOptions:
        return self._default_options

    def effective_options(self, prompt: Prompt) -> ChatOptions:
        """The request's options over this model's defaults."""
        return self._default_options.merged_with(prompt.options)

    @abstractmethod
    def call(self, prompt: Prompt) -> ChatResponse: ...

    def stream(self, prompt: Prompt) -> Iterator[ChatResponse]:
        """Default: the whole answer as one chunk."""
        yield self.call(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """Default: :meth:`call` in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.call, prompt)

    async def astream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Default: :meth:`stream` consumed in a worker thread, chunk by chunk."""
        from toolsearch._async import iterate_in_thread

        async for chunk in iterate_in_thread(iter(self.stream(prompt))):
            yield chunk


model_class_defined(BaseChatModel)  # its stream/acall/astream fallbacks are model calls too
