"""A model's answer, its token usage, and joining streamed chunks into one answer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsearch.chat.messages import AssistantMessage, ToolCall

__all__ = ["ChatResponse", "ChatResponseAggregator", "FinishReason", "Usage"]


class FinishReason:
    """Common finish reasons (providers' own strings pass through unchanged)."""

    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    RETURN_DIRECT = "return_direct"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one request; ``cached_tokens`` is the part of the prompt served from cache."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True)
class ChatResponse:
    """One model answer (or one streamed chunk of it).

    ``usage`` is ``None`` when the provider reported no token counts (a stream without a
    usage chunk, a compatible server that sends none; every chunk but a stream's last),
    never a made-up ``Usage(0, 0, 0)``: a reported zero and no report differ.
    """

    message: AssistantMessage = field(default_factory=AssistantMessage)
    finish_reason: str | None = None
    usage: Usage | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_tool_calls(self) -> bool:
        return self.message.has_tool_calls

    @property
    def text(self) -> str:
        return self.message.content or ""


class ChatResponseAggregator:
    """Joins streamed chunks into one response.

    Text is concatenated. A tool call with neither ``id`` nor ``name``, or one repeating the
    previous call's id in a later chunk, continues that call (its argument fragment is
    appended): that is how providers stream argument deltas, the first chunk of a call
    carrying its id and name with ``arguments=""``. Calls within one chunk are always
    separate calls, even with empty or equal ids (providers without call ids send parallel
    calls that way). The last non-empty usage and finish reason win (a reported zero only
    when nothing else was reported; no report at all is ``usage=None``); metadata merges.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: list[dict[str, Any]] = []
        self._chunks = 0
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._metadata: dict[str, Any] = {}
        self._message_metadata: dict[str, Any] = {}

    def add(self, chunk: ChatResponse) -> None:
        if chunk.message.content:
            self._text.append(chunk.message.content)
        self._chunks += 1
        for call in chunk.message.tool_calls:
            last = self._calls[-1] if self._calls else None
            fragment = not call.id and not call.name
            same_call_later = (
                last is not None
                and bool(call.id)
                and call.id == last["id"]
                and last["chunk"] != self._chunks
            )
            if last is not None and (fragment or same_call_later):
                last["arguments"] += call.arguments
                last["chunk"] = self._chunks
            else:
                self._calls.append(
                    {
                        "id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                        "chunk": self._chunks,
                    }
                )
        if chunk.finish_reason:
            self._finish_reason = chunk.finish_reason
        usage = chunk.usage
        if usage is not None and (usage.total_tokens or usage.cached_tokens or self._usage is None):
            self._usage = usage
        self._metadata.update(chunk.metadata)
        self._message_metadata.update(chunk.message.metadata)

    @property
    def has_tool_calls(self) -> bool:
        return bool(self._calls)

    def result(self) -> ChatResponse:
        calls = tuple(
            ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"] or "{}")
            for c in self._calls
        )
        text = "".join(self._text)
        message = AssistantMessage(
            content=text or None, tool_calls=calls, metadata=self._message_metadata
        )
        finish = self._finish_reason or ("tool_calls" if calls else "stop")
        return ChatResponse(message, finish, self._usage, dict(self._metadata))

    @classmethod
    def aggregate(cls, chunks: Iterable[ChatResponse]) -> ChatResponse:
        aggregator = cls()
        for chunk in chunks:
            aggregator.add(chunk)
        return aggregator.result()
