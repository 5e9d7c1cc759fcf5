"""``MessageChatMemoryAdvisor``: adds remembered messages to each request and stores new ones.

Text never fails a call. The shipped stores keep any Python string, lone surrogates
(``"\\ud800"``) included. If a custom store raises :class:`~toolsearch.errors.ChatMemoryError`
for a message that holds surrogate code points, the advisor stores it once more with each
of them replaced by U+FFFD (and logs a warning) instead of failing the call.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, ClassVar

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResponseMessage,
    message_adapter,
)
from toolsearch.chat.response import ChatResponse, ChatResponseAggregator
from toolsearch.errors import ChatMemoryError
from toolsearch.loop.advisor import (
    CHAT_MEMORY_ADVISOR_ORDER,
    AdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
)
from toolsearch.loop.manager import ToolExecutionResult
from toolsearch.memory.memory import CONVERSATION_ID, DEFAULT_CONVERSATION_ID, ChatMemory

__all__ = ["MessageChatMemoryAdvisor"]

_log = logging.getLogger(__name__)
_SURROGATE = re.compile("[\ud800-\udfff]")


class MessageChatMemoryAdvisor:
    """Prepends the conversation's memory to each request and remembers the exchange.

    The conversation id comes from the advisor param ``CONVERSATION_ID`` (else
    ``conversation_id``). At the default order (200) it sits outside the tool loop and
    stores only the user message and the final answer; with an order above the tool
    advisor's (300) it runs on every loop iteration and also stores tool calls and tool
    results, and the tool loop then stops resending the history itself.
    """

    is_chat_memory_advisor: ClassVar[bool] = True

    def __init__(
        self,
        chat_memory: ChatMemory,
        *,
        conversation_id: str = DEFAULT_CONVERSATION_ID,
        order: int = CHAT_MEMORY_ADVISOR_ORDER,
        name: str | None = None,
    ) -> None:
        self.chat_memory = chat_memory
        self.default_conversation_id = conversation_id
        self._order = order
        self._name = name or type(self).__name__

    @property
    def name(self) -> str:
        return self._name

    @property
    def order(self) -> int:
        return self._order

    def conversation_id(self, request: ChatClientRequest) -> str:
        return str(request.context.get(CONVERSATION_ID, self.default_conversation_id))

    def before(self, request: ChatClientRequest) -> ChatClientRequest:
        conversation_id = self.conversation_id(request)
        remembered = self.chat_memory.get(conversation_id)
        incoming = list(request.prompt.messages)
        combined: list[Message] = [*remembered, *incoming]
        systems = [m for m in combined if isinstance(m, SystemMessage)]
        rest = [m for m in combined if not isinstance(m, SystemMessage)]
        newest = request.prompt.last_user_or_tool_response_message
        if newest is not None:
            self._remember(conversation_id, [newest])
        messages = _drop_unanswered_tool_calls([*systems[-1:], *rest])
        return request.with_prompt(request.prompt.with_messages(messages))

    def after(self, request: ChatClientRequest, response: ChatClientResponse) -> None:
        chat_response = response.chat_response
        if chat_response is None:
            return
        message = chat_response.message
        if message.content or message.tool_calls:
            self._remember(self.conversation_id(request), [message])

    def on_return_direct(
        self, request: ChatClientRequest, result: ToolExecutionResult, response: ChatResponse
    ) -> None:
        """Inside the loop: remember the tool results and the returned text of a return-direct
        turn, so memory never holds a tool call without its results."""
        self._remember(
            self.conversation_id(request), [result.tool_response_message, response.message]
        )

    def _remember(self, conversation_id: str, messages: Sequence[Message]) -> None:
        try:
            self.chat_memory.add(conversation_id, messages)
        except ChatMemoryError:
            if not any(_has_surrogates(m) for m in messages):
                raise
            _log.warning(
                "chat memory cannot store surrogate code points in conversation %r; "
                "storing them as U+FFFD",
                conversation_id,
            )
            self.chat_memory.add(conversation_id, [_without_surrogates(m) for m in messages])

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        response = chain.next_call(self.before(request))
        self.after(request, response)
        return response

    async def aadvise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        response = await chain.anext_call(self.before(request))
        self.after(request, response)
        return response

    async def aadvise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        aggregator = ChatResponseAggregator()
        last: ChatClientResponse | None = None
        async for chunk in chain.anext_stream(self.before(request)):
            if chunk.chat_response is not None:
                aggregator.add(chunk.chat_response)
            last = chunk
            yield chunk
        if last is not None:
            self.after(request, last.with_chat_response(aggregator.result()))

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> Iterator[ChatClientResponse]:
        aggregator = ChatResponseAggregator()
        last: ChatClientResponse | None = None
        for chunk in chain.next_stream(self.before(request)):
            if chunk.chat_response is not None:
                aggregator.add(chunk.chat_response)
            last = chunk
            yield chunk
        if last is not None:
            self.after(request, last.with_chat_response(aggregator.result()))


def _drop_unanswered_tool_calls(messages: list[Message]) -> list[Message]:
    """Remove tool calls that no tool response follows (a turn that failed half-way leaves
    one in memory, and providers reject a history with an unanswered call). An assistant
    message with text keeps its text."""
    cleaned: list[Message] = []
    for i, message in enumerate(messages):
        following = messages[i + 1] if i + 1 < len(messages) else None
        if (
            isinstance(message, AssistantMessage)
            and message.tool_calls
            and not isinstance(following, ToolResponseMessage)
        ):
            if message.content:
                cleaned.append(message.model_copy(update={"tool_calls": ()}))
            continue
        cleaned.append(message)
    return cleaned


def _has_surrogates(message: Message) -> bool:
    def walk(value: Any) -> bool:
        if isinstance(value, str):
            return _SURROGATE.search(value) is not None
        if isinstance(value, dict):
            return any(walk(k) or walk(v) for k, v in value.items())
        if isinstance(value, list | tuple):
            return any(walk(v) for v in value)
        return False

    return walk(message.model_dump())


def _without_surrogates(message: Message) -> Message:
    """``message`` with every surrogate code point in its strings replaced by U+FFFD."""
    return message_adapter.validate_python(_replace_surrogates(message.model_dump()))


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_replace_surrogates(v) for v in value)
    return value
