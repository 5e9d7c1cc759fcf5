"""``FunctionChatModel``: a scripted, offline chat model driven by a Python function."""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from toolsearch.chat.messages import AssistantMessage, Message
from toolsearch.chat.model import BaseChatModel
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse, ChatResponseAggregator, FinishReason, Usage
from toolsearch.errors import ChatModelError
from toolsearch.tokens import TokenCounter, WhitespaceTokenCounter, render_messages, render_tools
from toolsearch.tools.definition import ToolDefinition

__all__ = ["FunctionChatModel", "ScriptFunction"]

ScriptFunction = Callable[[list[Message], list[ToolDefinition]], Any]
"""``fn(messages, tools)`` returning an ``AssistantMessage`` or ``str`` (or awaiting one),
or yielding chunks (``str`` or ``AssistantMessage``) to stream."""

_WORD_CHUNKS = re.compile(r"\s*\S+\s*|\s+")


class FunctionChatModel(BaseChatModel):
    """A chat model whose answers come from ``fn(messages, tools)``.

    ``fn`` receives the messages of one request and the tool definitions visible in it, and
    returns the reply: an ``AssistantMessage`` (text and/or tool calls) or a plain string.
    It may be ``async``, and it may be a (sync or async) generator that yields chunks, which
    :meth:`stream` passes on one by one. A reply returned whole streams word by word; a
    reply with tool calls streams as a single chunk.

    Usage is counted with ``token_counter`` (approximate by default) over the rendered
    messages and tool definitions of the request; ``count_usage=False`` skips it (for
    timing the loop itself).
    """

    def __init__(
        self,
        fn: ScriptFunction,
        *,
        default_options: ChatOptions | None = None,
        token_counter: TokenCounter | None = None,
        count_usage: bool = True,
    ) -> None:
        super().__init__(default_options=default_options)
        self._fn = fn
        self._counter = token_counter or WhitespaceTokenCounter()
        self._count_usage = count_usage
        self.requests: list[Prompt] = []
        """Every prompt this model received, with its effective options (for tests)."""

    def _invoke(self, prompt: Prompt) -> tuple[Any, Prompt]:
        options = self.effective_options(prompt)
        effective = prompt.with_options(options)
        self.requests.append(effective)
        tools = [callback.definition for callback in options.tool_callbacks]
        with _script_errors():
            return self._fn(list(prompt.messages), tools), effective

    def call(self, prompt: Prompt) -> ChatResponse:
        return ChatResponseAggregator.aggregate(self.stream(prompt))

    def stream(self, prompt: Prompt) -> Iterator[ChatResponse]:
        result, effective = self._invoke(prompt)
        with _script_errors():
            if inspect.isasyncgen(result):
                from toolsearch._async import collect, run_sync

                result = run_sync(collect(result))
            elif inspect.isawaitable(result):
                from toolsearch._async import run_sync

                result = run_sync(result)
            chunks = list(self._chunks(result, effective))
        yield from chunks

    async def acall(self, prompt: Prompt) -> ChatResponse:
        aggregator = ChatResponseAggregator()
        async for chunk in self.astream(prompt):
            aggregator.add(chunk)
        return aggregator.result()

    async def astream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        result, effective = self._invoke(prompt)
        with _script_errors():
            if inspect.isasyncgen(result):
                result = [item async for item in result]
            elif inspect.isawaitable(result):
                result = await result
            chunks = list(self._chunks(result, effective))
        for chunk in chunks:
            yield chunk

    def _chunks(self, result: Any, prompt: Prompt) -> Iterator[ChatResponse]:
        if isinstance(result, (str, AssistantMessage)) or result is None:
            pieces: list[AssistantMessage] = _split(_as_message(result))
        elif inspect.isgenerator(result) or isinstance(result, (list, tuple, Iterator)):
            pieces = [_as_message(item) for item in result]
        else:
            raise ChatModelError(
                "the scripted model function must return an AssistantMessage or a str, "
                f"or yield them; got {type(result).__name__}"
            )
        reply = ChatResponseAggregator.aggregate(ChatResponse(p) for p in pieces).message
        usage: Usage | None = None  # count_usage=False: no usage reported
        if self._count_usage:
            usage = Usage(
                prompt_tokens=self._counter.count(
                    render_messages(prompt.messages) + "\n" + render_tools(prompt.tool_definitions)
                ),
                completion_tokens=self._counter.count(render_messages([reply])),
            )
        finish = FinishReason.TOOL_CALLS if reply.tool_calls else FinishReason.STOP
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            yield ChatResponse(
                piece, finish if last else None, usage if last else None, {"model": "function"}
            )


@contextmanager
def _script_errors() -> Iterator[None]:
    """Report a failure of the script function (when called, awaited or iterated) as a
    ``ChatModelError``, as a provider failure would be."""
    try:
        yield
    except ChatModelError:
        raise
    except Exception as exc:
        raise ChatModelError(f"the scripted model function failed: {exc}") from exc


def _as_message(item: Any) -> AssistantMessage:
    if isinstance(item, AssistantMessage):
        return item
    if isinstance(item, str):
        return AssistantMessage(content=item)
    if item is None:
        return AssistantMessage(content="")
    raise ChatModelError(
        f"the scripted model produced {type(item).__name__}; expected AssistantMessage or str"
    )


def _split(message: AssistantMessage) -> list[AssistantMessage]:
    if message.tool_calls or not message.content:
        return [message]
    return [AssistantMessage(content=piece) for piece in _WORD_CHUNKS.findall(message.content)]
