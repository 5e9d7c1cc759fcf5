"""Chat memory: conversation stores (in memory, SQLite) and the memory advisor.

Nothing is lost under concurrency: appends are atomic across threads, and for SQLite
across processes too (one ``BEGIN IMMEDIATE`` transaction in WAL mode, rows appended,
never rewritten). The window trims only messages that have left it. Any Python string
round-trips, lone surrogates included. A stored row that cannot be read back raises
:class:`~toolsearch.errors.ChatMemoryError`, which names the conversation and the row.
"""

from typing import TYPE_CHECKING, Any

from toolsearch.memory.advisor import MessageChatMemoryAdvisor
from toolsearch.memory.memory import (
    CONVERSATION_ID,
    DEFAULT_CONVERSATION_ID,
    ChatMemory,
    MessageWindowChatMemory,
)
from toolsearch.memory.repository import (
    AppendableChatMemoryRepository,
    ChatMemoryRepository,
    InMemoryChatMemoryRepository,
    RetainPolicy,
    append_messages,
)

if TYPE_CHECKING:
    from toolsearch.memory.sqlite import SqliteChatMemoryRepository

__all__ = [
    "CONVERSATION_ID",
    "AppendableChatMemoryRepository",
    "DEFAULT_CONVERSATION_ID",
    "ChatMemory",
    "ChatMemoryRepository",
    "InMemoryChatMemoryRepository",
    "MessageChatMemoryAdvisor",
    "MessageWindowChatMemory",
    "RetainPolicy",
    "SqliteChatMemoryRepository",
    "append_messages",
]


def __getattr__(name: str) -> Any:
    # sqlite3 is imported only when the SQLite store is used
    if name == "SqliteChatMemoryRepository":
        from toolsearch.memory.sqlite import SqliteChatMemoryRepository

        return SqliteChatMemoryRepository
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
