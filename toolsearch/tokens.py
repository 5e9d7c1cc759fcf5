"""Counting tokens: the ``TokenCounter`` protocol and a dependency-free approximation.

Exact provider tokenizers arrive with the benchmark extra; until then
:class:`WhitespaceTokenCounter` gives an approximate count (words and punctuation runs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from toolsearch.chat.messages import Message
    from toolsearch.tools.definition import ToolDefinition

__all__ = ["TokenCounter", "WhitespaceTokenCounter", "render_messages", "render_tools"]

_TOKEN = re.compile(r"\w+|[^\w\s]+")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text; ``name`` says which tokenizer (and whether approximate)."""

    name: str

    def count(self, text: str) -> int: ...


class WhitespaceTokenCounter:
    """Approximate: one token per word and per run of punctuation."""

    name = "approximate-words"

    def count(self, text: str) -> int:
        return len(_TOKEN.findall(text))


def render_messages(messages: Sequence[Message]) -> str:
    """A plain-text rendering of messages, for counting."""
    parts: list[str] = []
    for message in messages:
        parts.append(f"{message.role}: {message.text}")
        for call in getattr(message, "tool_calls", ()):
            parts.append(f"call {call.name} {call.arguments}")
    return "\n".join(parts)


def render_tools(tools: Sequence[ToolDefinition]) -> str:
    """Tool definitions as compact JSON, for counting."""
    return json.dumps([t.to_dict() for t in tools], separators=(",", ":"))
