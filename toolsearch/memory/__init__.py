"""Chat memory: conversation stores (in memory, SQLite) and the memory advisor."""

from toolsearch.memory.advisor import MessageChatMemoryAdvisor
from toolsearch.memory.memory import (
    CONVERSATION_ID,
    DEFAULT_CONVERSATION_ID,
    ChatMemory,
    MessageWindowChatMemory,
)
from toolsearch.memory.repository import ChatMemoryRepository, InMemoryChatMemoryRepository
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
