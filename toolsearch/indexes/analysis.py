"""Word analysis for keyword search: tantivy's tokenizer, stop words and English stemming."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.text import STOP_WORDS, PreparedTool

__all__ = ["FieldTokens", "analyze", "field_tokens"]

_LOCAL = threading.local()


def _analyzer() -> Any:
    analyzer = getattr(_LOCAL, "analyzer", None)
    if analyzer is None:
        try:
            import tantivy
        except ImportError as exc:
            raise MissingExtraError("BM25 tool search", "bm25", "tantivy") from exc
        analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(64))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.custom_stopword(sorted(STOP_WORDS)))
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )
        _LOCAL.analyzer = analyzer
    return analyzer


def analyze(text: str) -> list[str]:
    """Lower-cased, stemmed terms of ``text`` without stop words (``en_stem``-like)."""
    if not text:
        return []
    return list(_analyzer().analyze(text))


FieldTokens = tuple[Counter[str], Counter[str], Counter[str]]
"""Term counts of a tool's name words, description and parameter text."""

_CACHE: dict[str, FieldTokens] = {}
_CACHE_LOCK = threading.Lock()


def field_tokens(fingerprint: str, prepared: PreparedTool) -> FieldTokens:
    """Term counts per field, computed once per process per tool fingerprint."""
    found = _CACHE.get(fingerprint)
    if found is not None:
        return found
    tokens = (
        Counter(analyze(f"{prepared.category_words} {prepared.name_words}")),
        Counter(analyze(prepared.description)),
        Counter(analyze(prepared.parameters)),
    )
    with _CACHE_LOCK:
        if len(_CACHE) >= 500_000:
            _CACHE.clear()
        _CACHE[fingerprint] = tokens
    return tokens
