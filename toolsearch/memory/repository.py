"""Where chat memory keeps messages: the repository protocol and an in-memory store."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolsearch.chat.messages import Message

__all__ = ["ChatMemoryRepository", "InMemoryChatMemoryRepository"]


@runtime_checkable
class ChatMemoryRepository(Protocol):
    """Stores each conversation's messages; ``save_all`` replaces what was stored."""

    def find_conversation_ids(self) -> list[str]: ...

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]: ...

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None: ...

    def delete_by_conversation_id(self, conversation_id: str) -> None: ...


class InMemoryChatMemoryRepository:
    """A thread-safe dict of conversations; lost when the process ends."""

    def __init__(self) -> None:
        self._store: dict[str, list[Message]] = {}
        self._lock = threading.Lock()

    def find_conversation_ids(self) -> list[str]:
        with self._lock:
            return list(self._store)

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        with self._lock:
            return list(self._store.get(conversation_id, ()))

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        with self._lock:
            self._store[conversation_id] = list(messages)

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        with self._lock:
            self._store.pop(conversation_id, None)
