"""``ChatMemory``: what a conversation remembers, and a sliding window over it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolsearch.chat.messages import Message, SystemMessage, ToolResponseMessage
from toolsearch.loop.advisor import CONVERSATION_ID
from toolsearch.memory.repository import (
    ChatMemoryRepository,
    InMemoryChatMemoryRepository,
    append_messages,
)

__all__ = [
    "CONVERSATION_ID",
    "DEFAULT_CONVERSATION_ID",
    "ChatMemory",
    "MessageWindowChatMemory",
]

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

    ``add`` appends through the repository's atomic ``append`` (see
    :func:`~toolsearch.memory.repository.append_messages`) and trims in the same step,
    deleting only messages that have left the window. A message leaves the window only
    when newer ones push it out, so trimming never drops a message that a concurrent
    writer has just stored. ``get`` applies the window when it reads, so a repository
    also written by other means still yields a valid window.
    """

    def __init__(
        self, repository: ChatMemoryRepository | None = None, *, max_messages: int = 20
    ) -> None:
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self.repository = repository if repository is not None else InMemoryChatMemoryRepository()
        self.max_messages = max_messages

    def add(self, conversation_id: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        append_messages(self.repository, conversation_id, list(messages), retain=self._retain)

    def get(self, conversation_id: str) -> list[Message]:
        return self._window(self.repository.find_by_conversation_id(conversation_id))

    def clear(self, conversation_id: str) -> None:
        self.repository.delete_by_conversation_id(conversation_id)

    def _positions(self, messages: Sequence[Message]) -> tuple[int | None, list[int]]:
        """The position of the newest system message and those of the windowed others."""
        system: int | None = None
        others: list[int] = []
        for i, message in enumerate(messages):
            if isinstance(message, SystemMessage):
                system = i
            else:
                others.append(i)
        kept = others[-self.max_messages :]
        start = 0
        while start < len(kept) and isinstance(messages[kept[start]], ToolResponseMessage):
            start += 1
        return system, kept[start:]

    def _retain(self, messages: Sequence[Message]) -> list[int]:
        system, kept = self._positions(messages)
        return kept if system is None else [system, *kept]

    def _window(self, messages: Sequence[Message]) -> list[Message]:
        system, kept = self._positions(messages)
        head = [] if system is None else [messages[system]]
        return [*head, *(messages[i] for i in kept)]
