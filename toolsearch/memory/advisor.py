"""``MessageChatMemoryAdvisor``: adds remembered messages to each request and stores new ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from toolsearch.chat.messages import Message, SystemMessage
from toolsearch.chat.response import ChatResponse, ChatResponseAggregator
from toolsearch.loop.advisor import (
    CHAT_MEMORY_ADVISOR_ORDER,
    AdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
)
from toolsearch.loop.manager import ToolExecutionResult
from toolsearch.memory.memory import CONVERSATION_ID, DEFAULT_CONVERSATION_ID, ChatMemory

__all__ = ["MessageChatMemoryAdvisor"]


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
            self.chat_memory.add(conversation_id, [newest])
        return request.with_prompt(request.prompt.with_messages([*systems[-1:], *rest]))

    def after(self, request: ChatClientRequest, response: ChatClientResponse) -> None:
        chat_response = response.chat_response
        if chat_response is None:
            return
        message = chat_response.message
        if message.content or message.tool_calls:
            self.chat_memory.add(self.conversation_id(request), [message])

    def on_return_direct(
        self, request: ChatClientRequest, result: ToolExecutionResult, response: ChatResponse
    ) -> None:
        """Inside the loop: remember the tool results and the returned text of a return-direct
        turn, so memory never holds a tool call without its results."""
        self.chat_memory.add(
            self.conversation_id(request), [result.tool_response_message, response.message]
        )

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        response = chain.next_call(self.before(request))
        self.after(request, response)
        return response

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
