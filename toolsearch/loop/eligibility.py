"""Deciding whether the loop should execute a response's tool calls."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from toolsearch.chat.options import ChatOptions
from toolsearch.chat.response import ChatResponse

__all__ = ["DefaultToolExecutionEligibilityChecker", "ToolExecutionEligibilityChecker"]


@runtime_checkable
class ToolExecutionEligibilityChecker(Protocol):
    def is_tool_execution_required(self, options: ChatOptions, response: ChatResponse) -> bool: ...


class DefaultToolExecutionEligibilityChecker:
    """Execute when the response has tool calls, unless the options turned execution off."""

    def is_tool_execution_required(self, options: ChatOptions, response: ChatResponse) -> bool:
        return response.has_tool_calls and options.internal_tool_execution_enabled is not False
