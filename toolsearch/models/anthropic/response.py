"""The Messages API's answers as toolsearch responses: a message, its usage (cache reads
included) and its thinking blocks, whole or folded from a stream of events."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolsearch.chat.messages import AssistantMessage, ToolCall
from toolsearch.chat.response import ChatResponse, FinishReason, Usage
from toolsearch.models._provider import dump_arguments
from toolsearch.models.wire_names import WireNames

__all__ = [
    "SERVER_BLOCKS_METADATA_KEY",
    "THINKING_METADATA_KEY",
    "StreamState",
    "response_from_message",
    "usage_from_anthropic",
]

PROVIDER = "anthropic"

THINKING_METADATA_KEY = "anthropic_thinking"
"""``AssistantMessage.metadata`` key holding the turn's thinking blocks, sent back with it
(extended thinking with tool use requires them)."""

SERVER_BLOCKS_METADATA_KEY = "anthropic_server_blocks"
"""``AssistantMessage.metadata`` key holding the turn's server-side tool-search blocks
(``server_tool_use``, ``tool_search_tool_result``), sent back with it."""

_SERVER_BLOCKS = frozenset({"server_tool_use", "tool_search_tool_result"})

_STOP_REASONS = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "refusal": "content_filter",  # as OpenAI names a blocked answer
}


def usage_from_anthropic(usage: Any) -> tuple[Usage | None, dict[str, Any]]:
    """Our ``Usage``: prompt tokens are *all* input tokens (Anthropic's ``input_tokens``
    excludes cache reads and writes; we add them so prompt tokens mean the same for every
    provider); ``cached_tokens`` are the cache reads. Also returns the raw counts;
    ``None`` when the answer carried no usage."""
    if usage is None:
        return None, {}
    counts = usage if isinstance(usage, Mapping) else usage.model_dump(exclude_none=True)
    read = counts.get("cache_read_input_tokens") or 0
    written = counts.get("cache_creation_input_tokens") or 0
    return (
        Usage(
            prompt_tokens=(counts.get("input_tokens") or 0) + read + written,
            completion_tokens=counts.get("output_tokens") or 0,
            cached_tokens=read,
        ),
        dict(counts),
    )


def _finish(reason: str | None, has_calls: bool) -> str:
    if reason is None:
        return FinishReason.TOOL_CALLS if has_calls else FinishReason.STOP
    return _STOP_REASONS.get(reason, reason)


def _thinking(block: Any) -> dict[str, Any] | None:
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return None


def response_from_message(message: Any, names: WireNames | None = None) -> ChatResponse:
    """An Anthropic ``Message`` as our ``ChatResponse``; the names of the model's calls are
    the tools' own again (``names``: the request's wire names)."""
    real = names.real if names is not None else str
    text: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, Any]] = []
    server: list[dict[str, Any]] = []
    for block in message.content:
        if block.type in _SERVER_BLOCKS:
            server.append(block.model_dump(exclude_none=True))
        elif block.type == "text":
            text.append(block.text)
        elif block.type == "tool_use":
            calls.append(
                ToolCall(id=block.id, name=real(block.name), arguments=dump_arguments(block.input))
            )
        elif (kept := _thinking(block)) is not None:
            thinking.append(kept)
    usage, raw = usage_from_anthropic(message.usage)
    metadata = {
        "provider": PROVIDER,
        "model": message.model,
        "id": message.id,
        "provider_finish_reason": message.stop_reason,
        "usage": raw,
    }
    return ChatResponse(
        AssistantMessage(
            content="".join(text) or None,
            tool_calls=tuple(calls),
            metadata=_kept(thinking, server),
        ),
        _finish(message.stop_reason, bool(calls)),
        usage,
        metadata,
    )


def _kept(thinking: list[dict[str, Any]], server: list[dict[str, Any]]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    if thinking:
        kept[THINKING_METADATA_KEY] = thinking
    if server:
        kept[SERVER_BLOCKS_METADATA_KEY] = server
    return kept


class StreamState:
    """Folds raw stream events: text passes on at once; each ``tool_use`` block is handed on
    whole when it stops; stop reason, usage and thinking blocks come in the last chunk."""

    def __init__(self, names: WireNames | None = None) -> None:
        self.names = names
        self.blocks: dict[int, dict[str, Any]] = {}
        self.thinking: list[dict[str, Any]] = []
        self.server: list[dict[str, Any]] = []
        self.stop_reason: str | None = None
        self.had_calls = False
        self.usage: Any = None
        self.delta_usage: dict[str, Any] = {}
        self.metadata: dict[str, Any] = {"provider": PROVIDER}

    def feed(self, event: Any) -> ChatResponse | None:
        kind = event.type
        if kind == "message_start":
            self.metadata["model"] = event.message.model
            self.metadata["id"] = event.message.id
            self.usage = event.message.usage
        elif kind == "content_block_start":
            block = event.content_block
            slot: dict[str, Any] = {"type": block.type, "json": ""}
            if block.type == "tool_use":
                slot.update(id=block.id, name=block.name, input=block.input)
            elif block.type == "thinking":
                slot.update(thinking=block.thinking or "", signature=block.signature or "")
            elif block.type == "redacted_thinking":
                slot.update(data=block.data)
            elif block.type in _SERVER_BLOCKS:
                slot.update(raw=block.model_dump(exclude_none=True))
            self.blocks[event.index] = slot
            if block.type == "text" and getattr(block, "text", ""):
                return ChatResponse(AssistantMessage(content=block.text))
        elif kind == "content_block_delta":
            slot = self.blocks.setdefault(event.index, {"type": "text", "json": ""})
            delta = event.delta
            if delta.type == "text_delta":
                return ChatResponse(AssistantMessage(content=delta.text)) if delta.text else None
            if delta.type == "input_json_delta":
                slot["json"] += delta.partial_json
            elif delta.type == "thinking_delta":
                slot["thinking"] = slot.get("thinking", "") + delta.thinking
            elif delta.type == "signature_delta":
                slot["signature"] = slot.get("signature", "") + delta.signature
        elif kind == "content_block_stop":
            slot = self.blocks.pop(event.index, {})
            if slot.get("type") == "tool_use":
                arguments = slot["json"] or dump_arguments(slot.get("input") or {})
                name = self.names.real(slot["name"]) if self.names is not None else slot["name"]
                call = ToolCall(id=slot["id"], name=name, arguments=arguments)
                self.had_calls = True
                return ChatResponse(AssistantMessage(tool_calls=(call,)))
            if slot.get("type") == "thinking":
                self.thinking.append(
                    {
                        "type": "thinking",
                        "thinking": slot.get("thinking", ""),
                        "signature": slot.get("signature", ""),
                    }
                )
            elif slot.get("type") == "redacted_thinking":
                self.thinking.append({"type": "redacted_thinking", "data": slot.get("data")})
            elif slot.get("type") in _SERVER_BLOCKS:
                raw = dict(slot["raw"])
                if slot["json"]:  # a server_tool_use's input, streamed as JSON deltas
                    raw["input"] = json.loads(slot["json"])
                self.server.append(raw)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            if event.usage is not None:
                self.delta_usage.update(event.usage.model_dump(exclude_none=True))
        return None

    def finish(self) -> ChatResponse:
        merged: dict[str, Any] = {}
        if self.usage is not None:
            merged = self.usage.model_dump(exclude_none=True)
        merged.update(self.delta_usage)  # message_delta counts are cumulative
        usage, _ = usage_from_anthropic(merged or None)
        self.metadata["provider_finish_reason"] = self.stop_reason
        if merged:
            self.metadata["usage"] = merged
        return ChatResponse(
            AssistantMessage(metadata=_kept(self.thinking, self.server)),
            _finish(self.stop_reason, self.had_calls),
            usage,
            {k: v for k, v in self.metadata.items() if v is not None},
        )
