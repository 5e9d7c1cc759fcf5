"""toolsearch: register hundreds or thousands of tools; send the model only the few it needs.

The core is a complete tool-calling loop (``@tool`` functions, ``ChatClient`` with an
ordered advisor chain, ``ToolCallingAdvisor`` and ``ToolCallingManager``, chat memory).
"""

from typing import TYPE_CHECKING, Any

# first, before anything can load torch or FAISS: OpenMP's idle threads sleep instead of
# spinning against other processes (OMP_WAIT_POLICY=PASSIVE unless set; see the module)
import toolsearch.indexes.threads  # noqa: F401  (standard library only)
from toolsearch._version import __version__
from toolsearch.chat import (
    AssistantMessage,
    ChatModel,
    ChatOptions,
    ChatResponse,
    Message,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    ToolResultText,
    ToolSearchHit,
    Usage,
    UserMessage,
)
from toolsearch.errors import (
    AdvisorChainError,
    ChatMemoryError,
    ChatModelError,
    DuplicateToolNameError,
    InvalidToolArgumentsError,
    MissingExtraError,
    ToolCallLimitExceededError,
    ToolDefinitionError,
    ToolExecutionError,
    ToolLoopLimitError,
    ToolsearchError,
    ToolTransportError,
)
from toolsearch.loop import (
    BaseAdvisor,
    ChatClient,
    ChatClientRequest,
    ChatClientResponse,
    DefaultToolExecutionExceptionProcessor,
    LimitExceededAction,
    ToolCallingAdvisor,
    ToolCallingManager,
    ToolCallLimits,
    ToolExecutionResult,
)
from toolsearch.loop.client import set_auto_tool_advisor_provider as _set_auto_advisor
from toolsearch.memory import (
    CONVERSATION_ID,
    InMemoryChatMemoryRepository,
    MessageChatMemoryAdvisor,
    MessageWindowChatMemory,
)
from toolsearch.search import ToolSearchToolCallingAdvisor
from toolsearch.search.options import ToolSearchOptions
from toolsearch.telemetry.observer import instrument as _instrument_telemetry
from toolsearch.tools import (
    AugmentedArgumentEvent,
    AugmentedToolCallback,
    FunctionToolCallback,
    JsonResultConverter,
    ResultConverter,
    ToolCallback,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    ToolParam,
    augment_tools,
    tool,
    tool_callbacks,
)

if TYPE_CHECKING:
    from toolsearch.memory.sqlite import SqliteChatMemoryRepository


def _advisor_from_settings() -> ToolSearchToolCallingAdvisor | None:
    from toolsearch.settings import configured_advisor  # read when a client is built

    return configured_advisor()


# ``ChatClient.builder(model).build()`` asks this hook for the tool advisor of a chain that
# has none: the loop layer honours TOOLSEARCH_TOOL_SEARCH__ENABLED without importing the
# search layer or the settings; the package wires the two together here.
_set_auto_advisor(_advisor_from_settings)

# The core emits through toolsearch.observe and imports no observer; the package attaches
# OpenTelemetry tracing here, so spans need no setup (each hook is a no-op without
# opentelemetry-api installed, which is not imported until a hook first runs).
_instrument_telemetry()

__all__ = [
    "CONVERSATION_ID",
    "AdvisorChainError",
    "AssistantMessage",
    "AugmentedArgumentEvent",
    "AugmentedToolCallback",
    "BaseAdvisor",
    "ChatClient",
    "ChatClientRequest",
    "ChatClientResponse",
    "ChatMemoryError",
    "ChatModel",
    "ChatModelError",
    "ChatOptions",
    "ChatResponse",
    "DefaultToolExecutionExceptionProcessor",
    "DuplicateToolNameError",
    "FunctionToolCallback",
    "InMemoryChatMemoryRepository",
    "InvalidToolArgumentsError",
    "JsonResultConverter",
    "LimitExceededAction",
    "Message",
    "MessageChatMemoryAdvisor",
    "MessageWindowChatMemory",
    "MissingExtraError",
    "Prompt",
    "ResultConverter",
    "SqliteChatMemoryRepository",
    "SystemMessage",
    "ToolCall",
    "ToolCallLimitExceededError",
    "ToolCallLimits",
    "ToolCallback",
    "ToolCallingAdvisor",
    "ToolCallingManager",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolLoopLimitError",
    "ToolMetadata",
    "ToolParam",
    "ToolResponse",
    "ToolResponseMessage",
    "ToolResultText",
    "ToolSearchHit",
    "ToolSearchOptions",
    "ToolSearchToolCallingAdvisor",
    "ToolTransportError",
    "ToolsearchError",
    "Usage",
    "UserMessage",
    "__version__",
    "augment_tools",
    "tool",
    "tool_callbacks",
]


def __getattr__(name: str) -> Any:
    # names whose modules pull in heavier standard-library parts load on first use
    if name == "SqliteChatMemoryRepository":
        from toolsearch.memory.sqlite import SqliteChatMemoryRepository

        return SqliteChatMemoryRepository
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
