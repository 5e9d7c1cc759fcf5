"""Chat: messages, prompts, options, responses and the ``ChatModel`` protocol."""

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    ToolResultText,
    ToolSearchHit,
    UserMessage,
)
from toolsearch.chat.model import BaseChatModel, ChatModel
from toolsearch.chat.options import ChatOptions, ToolChange
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse, ChatResponseAggregator, FinishReason, Usage

__all__ = [
    "AssistantMessage",
    "BaseChatModel",
    "ChatModel",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseAggregator",
    "FinishReason",
    "Message",
    "Prompt",
    "SystemMessage",
    "ToolCall",
    "ToolChange",
    "ToolResponse",
    "ToolResponseMessage",
    "ToolResultText",
    "ToolSearchHit",
    "Usage",
    "UserMessage",
]
