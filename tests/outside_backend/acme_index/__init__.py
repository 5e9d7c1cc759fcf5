"""``acme_index``: a tool index from outside toolsearch, as another package would write one.

It ranks a session's tools by the words they share with the query (in the tool's name,
description and parameter names), each shared word weighted by how rare it is among the
tools searched. It is written against toolsearch's public API only: the session layer
(``toolsearch.indexes.SessionIndex``) keeps the sessions, the exact-name match, categories,
exclusions and ``max_results``; this package supplies the ranker, the one seam a backend
implements. ``test_acme_index.py`` runs toolsearch's index contract against it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from toolsearch.indexes import Ranking, SessionIndex, SessionTools, split_name
from toolsearch.tools import ToolDefinition

__all__ = ["KeywordRanker", "keyword_index"]

_WORD = re.compile(r"\w+")
_STOP = frozenset(
    {"a", "an", "and", "the", "of", "to", "in", "on", "for", "or", "by", "with", "from", "is"}
)


def words(text: str) -> set[str]:
    """The lower-cased words of ``text``, camelCase and snake_case split, stop words left out."""
    found = set()
    for token in _WORD.findall(text):
        found.update(split_name(token))
        found.add(token.lower())
    return found - _STOP


def _tool_words(tool: ToolDefinition) -> set[str]:
    properties = tool.input_schema.get("properties") or {}
    names = " ".join(str(name) for name in properties) if isinstance(properties, dict) else ""
    return words(f"{tool.name} {tool.description} {names}")


class _Session:
    def __init__(self, tools: SessionTools) -> None:
        self.words = [_tool_words(tool) for tool in tools.tools]

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        positions = range(len(self.words)) if allowed is None else allowed
        asked = words(query)
        # how rare each query word is among the tools searched (the allowed ones only)
        counts = {w: sum(1 for i in positions if w in self.words[i]) for w in asked}
        weight = {w: math.log(1 + len(positions) / n) for w, n in counts.items() if n}
        hits = []
        for i in positions:
            score = sum(weight.get(w, 0.0) for w in asked & self.words[i])
            if score > 0:
                hits.append((i, score))
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return Ranking.of(hits[:limit], len(hits))


class KeywordRanker:
    """Scores a tool by the rarity-weighted words it shares with the query."""

    search_type = "acme-keyword"

    def prepare(self, tools: SessionTools) -> _Session:
        return _Session(tools)


def keyword_index() -> SessionIndex:
    """A ``ToolIndex`` over :class:`KeywordRanker`."""
    return SessionIndex(KeywordRanker())
