"""The messages of a conversation: system, user, assistant (with tool calls) and tool results."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolResponse",
    "ToolResponseMessage",
    "UserMessage",
    "message_adapter",
    "messages_adapter",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """A model's request to run one tool; ``arguments`` is the JSON text the model wrote."""

    id: str
    name: str
    arguments: str = "{}"


class ToolResponse(_Frozen):
    """The result of one tool call, matched to it by ``id``."""

    id: str
    name: str
    response_data: str


class SystemMessage(_Frozen):
    """Instructions for the model."""

    role: Literal["system"] = "system"
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.content


class UserMessage(_Frozen):
    """What the user said."""

    role: Literal["user"] = "user"
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.content


class AssistantMessage(_Frozen):
    """What the model answered: text, tool calls, or both."""

    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.tool_calls)

    @property
    def text(self) -> str:
        return self.content or ""


class ToolResponseMessage(_Frozen):
    """The results of the tool calls of one assistant turn."""

    role: Literal["tool"] = "tool"
    responses: tuple[ToolResponse, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(r.response_data for r in self.responses)


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResponseMessage,
    Field(discriminator="role"),
]
"""Any conversation message; ``role`` tells which."""

message_adapter: TypeAdapter[Message] = TypeAdapter(Message)
messages_adapter: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
