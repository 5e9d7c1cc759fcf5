"""Chat memory: conversation stores (in memory, SQLite) and the memory advisor."""

from typing import TYPE_CHECKING, Any

from toolsearch.memory.advisor import MessageChatMemoryAdvisor
from toolsearch.memory.memory import (
    CONVERSATION_ID,
    DEFAULT_CONVERSATION_ID,
    ChatMemory,
    MessageWindowChatMemory,
)
from toolsearch.memory.repository import ChatMemoryRepository, InMemoryChatMemoryRepository

if TYPE_CHECKING:
    from toolsearch.memory.sqlite import SqliteChatMemoryRepository

__all__ = [
    "CONVERSATION_ID",
    "DEFAULT_CONVERSATION_ID",
    "ChatMemory",
    "ChatMemoryRepository",
    "InMemoryChatMemoryRepository",
    "MessageChatMemoryAdvisor",
    "MessageWindowChatMemory",
    "SqliteChatMemoryRepository",
]


def __getattr__(name: str) -> Any:
    # sqlite3 is imported only when the SQLite store is used
    if name == "SqliteChatMemoryRepository":
        from toolsearch.memory.sqlite import SqliteChatMemoryRepository

        return SqliteChatMemoryRepository
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
