"""A prompt: the messages of one model request and its options."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolsearch.chat.messages import (
    Message,
    SystemMessage,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.options import ChatOptions

if TYPE_CHECKING:
    from toolsearch.tools.definition import ToolDefinition

__all__ = ["Prompt"]


@dataclass(frozen=True)
class Prompt:
    """The messages sent to a model in one request, with the request's options."""

    messages: Sequence[Message] = ()
    options: ChatOptions = field(default_factory=ChatOptions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        if self.options is None:
            object.__setattr__(self, "options", ChatOptions())

    @classmethod
    def of(cls, text: str, options: ChatOptions | None = None) -> Prompt:
        return cls((UserMessage(content=text),), options or ChatOptions())

    @property
    def system_message(self) -> SystemMessage | None:
        return next((m for m in self.messages if isinstance(m, SystemMessage)), None)

    @property
    def user_message(self) -> UserMessage | None:
        """The last user message, if any."""
        return next((m for m in reversed(self.messages) if isinstance(m, UserMessage)), None)

    @property
    def last_user_or_tool_response_message(self) -> Message | None:
        return next(
            (
                m
                for m in reversed(self.messages)
                if isinstance(m, (UserMessage, ToolResponseMessage))
            ),
            None,
        )

    @property
    def tool_definitions(self) -> list[ToolDefinition]:
        """Definitions of the tools this request sends to the model."""
        return [callback.definition for callback in self.options.tool_callbacks]

    def replace(self, **changes: Any) -> Prompt:
        return dataclasses.replace(self, **changes)

    def with_messages(self, messages: Sequence[Message]) -> Prompt:
        return dataclasses.replace(self, messages=tuple(messages))

    def with_options(self, options: ChatOptions) -> Prompt:
        return dataclasses.replace(self, options=options)

    def augment_system_message(self, suffix: str, *, separator: str = "\n\n") -> Prompt:
        """Append ``suffix`` to the system message (adding one at the front if there is none)."""
        messages = list(self.messages)
        for i, message in enumerate(messages):
            if isinstance(message, SystemMessage):
                text = f"{message.content}{separator}{suffix}" if message.content else suffix
                messages[i] = message.model_copy(update={"content": text})
                return self.with_messages(messages)
        return self.with_messages([SystemMessage(content=suffix), *messages])
