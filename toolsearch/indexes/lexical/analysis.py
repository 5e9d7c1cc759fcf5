"""Word analysis for keyword search: tantivy's tokenizer, stop words and English stemming."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from cachetools import LRUCache

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.lexical.bm25_scoring import weighted_terms
from toolsearch.indexes.params import Bm25Params
from toolsearch.indexes.text import STOP_WORDS, PreparedTool

__all__ = ["FIELD_TOKENS_CACHE_SIZE", "FieldTokens", "analyze", "field_tokens", "tool_terms"]

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
"""Term counts of a tool's name words (with its category), description and parameter text."""

FIELD_TOKENS_CACHE_SIZE = 200_000
"""Tools whose analyzed fields the process keeps (least recently used go first): a few
hundred bytes each, so at most some tens of MB; catalogs larger than this are built into
artifacts that hold their postings on disk."""

_CACHE: LRUCache[str, FieldTokens] = LRUCache(FIELD_TOKENS_CACHE_SIZE)
_CACHE_LOCK = threading.Lock()


def _fields(prepared: PreparedTool) -> FieldTokens:
    return (
        Counter(analyze(f"{prepared.category_words} {prepared.name_words}")),
        Counter(analyze(prepared.description)),
        Counter(analyze(prepared.parameters)),
    )


def field_tokens(fingerprint: str, prepared: PreparedTool) -> FieldTokens:
    """Term counts per field, computed once per process per tool fingerprint."""
    with _CACHE_LOCK:
        found = _CACHE.get(fingerprint)
    if found is not None:
        return found
    tokens = _fields(prepared)
    with _CACHE_LOCK:
        _CACHE[fingerprint] = tokens
    return tokens


def tool_terms(
    prepared: PreparedTool, params: Bm25Params, fingerprint: str | None = None
) -> dict[str, float]:
    """A tool's weighted term frequencies under ``params``' field weights (BM25F).

    With a ``fingerprint`` the analysis is cached for the process; a catalog build, which
    sees each tool once, passes none.
    """
    fields = field_tokens(fingerprint, prepared) if fingerprint else _fields(prepared)
    return weighted_terms(fields, params.weights)
