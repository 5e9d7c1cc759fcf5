"""``TestChatModel``: calls every visible tool once, then summarizes. Offline, deterministic."""

from __future__ import annotations

import json

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.options import ChatOptions
from toolsearch.models.function import FunctionChatModel
from toolsearch.models.samples import sample_arguments
from toolsearch.tokens import TokenCounter
from toolsearch.tools.definition import ToolDefinition

__all__ = ["TestChatModel"]


class TestChatModel(FunctionChatModel):
    """A model for tests: each turn it calls every visible tool it has not called yet since
    the last user message (all in one turn, arguments generated to fit each schema); when
    none is left it answers with a summary of the tool results it received.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        default_options: ChatOptions | None = None,
        token_counter: TokenCounter | None = None,
    ) -> None:
        super().__init__(_script, default_options=default_options, token_counter=token_counter)


def _script(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage:
    start = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1)
    turn = messages[start + 1 :]
    called = {call.name for m in turn if isinstance(m, AssistantMessage) for call in m.tool_calls}
    total_calls = sum(len(m.tool_calls) for m in messages if isinstance(m, AssistantMessage))
    pending = [t for t in tools if t.name not in called]
    if pending:
        return AssistantMessage(
            tool_calls=tuple(
                ToolCall(
                    id=f"call_{total_calls + i + 1}",
                    name=t.name,
                    arguments=json.dumps(sample_arguments(t.input_schema)),
                )
                for i, t in enumerate(pending)
            )
        )
    results = [
        f"{r.name}: {r.response_data}"
        for m in turn
        if isinstance(m, ToolResponseMessage)
        for r in m.responses
    ]
    if not results:
        return AssistantMessage(content="No tools were called.")
    return AssistantMessage(content="Tool results:\n" + "\n".join(results))
