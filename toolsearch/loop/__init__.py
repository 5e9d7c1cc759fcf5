"""The tool loop: chat client, advisor chain, tool-calling advisor and manager."""

from toolsearch.loop.advisor import (
    CHAT_MEMORY_ADVISOR_ORDER,
    HIGHEST_PRECEDENCE,
    LOWEST_PRECEDENCE,
    TOOL_CALLING_ADVISOR_ORDER,
    Advisor,
    AdvisorChain,
    BaseAdvisor,
    CallAdvisor,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisor,
)
from toolsearch.loop.client import (
    AdvisorSpec,
    CallResponse,
    ChatClient,
    ChatClientBuilder,
    ChatClientRequestSpec,
    StreamResponse,
)
from toolsearch.loop.eligibility import (
    DefaultToolExecutionEligibilityChecker,
    ToolExecutionEligibilityChecker,
)
from toolsearch.loop.exceptions import (
    DefaultToolExecutionExceptionProcessor,
    ToolExecutionExceptionProcessor,
)
from toolsearch.loop.limits import LimitExceededAction, ToolCallLimits
from toolsearch.loop.manager import ToolCallingManager, ToolExecutionResult
from toolsearch.loop.resolver import (
    DelegatingToolCallbackResolver,
    StaticToolCallbackResolver,
    ToolCallbackResolver,
)
from toolsearch.loop.tool_calling_advisor import ToolCallingAdvisor

__all__ = [
    "CHAT_MEMORY_ADVISOR_ORDER",
    "HIGHEST_PRECEDENCE",
    "LOWEST_PRECEDENCE",
    "TOOL_CALLING_ADVISOR_ORDER",
    "Advisor",
    "AdvisorChain",
    "AdvisorSpec",
    "BaseAdvisor",
    "CallAdvisor",
    "CallResponse",
    "ChatClient",
    "ChatClientBuilder",
    "ChatClientRequest",
    "ChatClientRequestSpec",
    "ChatClientResponse",
    "DefaultToolExecutionEligibilityChecker",
    "DefaultToolExecutionExceptionProcessor",
    "DelegatingToolCallbackResolver",
    "LimitExceededAction",
    "StaticToolCallbackResolver",
    "StreamAdvisor",
    "StreamResponse",
    "ToolCallLimits",
    "ToolCallbackResolver",
    "ToolCallingAdvisor",
    "ToolCallingManager",
    "ToolExecutionEligibilityChecker",
    "ToolExecutionExceptionProcessor",
    "ToolExecutionResult",
]
