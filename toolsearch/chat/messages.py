"""The messages of a conversation: system, user, assistant (with tool calls) and tool results.

A tool result is text for the model; a tool search's result also carries its hits as
typed data (:class:`ToolSearchHit` on :attr:`ToolResponse.search_hits`), so a provider
adapter that can reference tools natively reads the hits, never the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolResponse",
    "ToolResponseMessage",
    "ToolResultText",
    "ToolSearchHit",
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


class ToolSearchHit(_Frozen):
    """One tool a tool search found: its name, the one-line summary the index gave, and
    the index's relevance score (``None`` when the index gives none)."""

    name: str
    summary: str | None = None
    score: float | None = None


class ToolResponse(_Frozen):
    """The result of one tool call, matched to it by ``id``.

    ``search_hits`` is set on the result of a tool search (the tools it found, best first;
    ``response_data`` says the same to the model as text) and ``None`` on every other
    result. It is how the search reaches provider adapters (Anthropic's ``tool_reference``
    blocks) without their parsing the text.
    """

    id: str
    name: str
    response_data: str
    search_hits: tuple[ToolSearchHit, ...] | None = None

    @classmethod
    def of(cls, *, id: str, name: str, result: str) -> ToolResponse:
        """The response for a tool's ``result``, keeping the typed data of a
        :class:`ToolResultText`."""
        hits = result.search_hits if isinstance(result, ToolResultText) else None
        return cls(id=id, name=name, response_data=str(result), search_hits=hits)


class ToolResultText(str):
    """A tool's result text with typed data beside it.

    It is a ``str``, so a :class:`~toolsearch.tools.callback.ToolCallback` may return one
    from ``call``/``acall`` without changing its signature; the loop's
    :meth:`ToolResponse.of` copies ``search_hits`` onto the :class:`ToolResponse`. The
    built-in search tool returns one; any custom search tool can, too.
    """

    search_hits: tuple[ToolSearchHit, ...] | None

    def __new__(
        cls, text: str, *, search_hits: Sequence[ToolSearchHit] | None = None
    ) -> ToolResultText:
        value = super().__new__(cls, text)
        value.search_hits = tuple(search_hits) if search_hits is not None else None
        return value


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
