"""``ChatMemory``: what a conversation remembers, and a sliding window over it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolsearch.chat.messages import Message, SystemMessage, ToolResponseMessage
from toolsearch.memory.repository import ChatMemoryRepository, InMemoryChatMemoryRepository

__all__ = [
    "CONVERSATION_ID",
    "DEFAULT_CONVERSATION_ID",
    "ChatMemory",
    "MessageWindowChatMemory",
]

CONVERSATION_ID = "chat_memory_conversation_id"
"""The advisor-context key (``.advisors(lambda a: a.param(CONVERSATION_ID, ...))``) that
names the conversation, and the session id of the tool-search advisor."""
DEFAULT_CONVERSATION_ID = "default"


@runtime_checkable
class ChatMemory(Protocol):
    def add(self, conversation_id: str, messages: Sequence[Message]) -> None: ...

    def get(self, conversation_id: str) -> list[Message]: ...

    def clear(self, conversation_id: str) -> None: ...


class MessageWindowChatMemory:
    """Keeps the last ``max_messages`` messages of each conversation.

    System messages are kept (the newest one only) and do not count towards the window.
    The window never starts with tool results whose tool calls were cut off, since
    providers reject such a history.
    """

    def __init__(
        self, repository: ChatMemoryRepository | None = None, *, max_messages: int = 20
    ) -> None:
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self.repository = repository or InMemoryChatMemoryRepository()
        self.max_messages = max_messages
        self._lock = threading.Lock()

    def add(self, conversation_id: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        with self._lock:
            stored = self.repository.find_by_conversation_id(conversation_id)
            self.repository.save_all(conversation_id, self._window([*stored, *messages]))

    def get(self, conversation_id: str) -> list[Message]:
        return self.repository.find_by_conversation_id(conversation_id)

    def clear(self, conversation_id: str) -> None:
        self.repository.delete_by_conversation_id(conversation_id)

    def _window(self, messages: list[Message]) -> list[Message]:
        systems = [m for m in messages if isinstance(m, SystemMessage)]
        others = [m for m in messages if not isinstance(m, SystemMessage)]
        kept = others[-self.max_messages :]
        while kept and isinstance(kept[0], ToolResponseMessage):
            kept = kept[1:]
        return [*systems[-1:], *kept]
