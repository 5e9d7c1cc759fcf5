"""Other projects' tool-search methods, ported from their documented behaviour, so they can
be measured side by side with toolsearch's backends in the same run.

* :class:`ReferenceRegexIndex`: the reference framework's regex tool searcher. The query's
  words (lower-cased, split on spaces and punctuation, stop words and one-letter words
  dropped) become ``(?i)(w1|w2|...)`` (at most 200 characters), matched against the raw
  tool name and description only; score ``2·name matches + 1/(1+0.1·first name match)``
  plus ``description matches + 0.5/(1+0.1·first description match)``.
* :class:`TokenOverlapIndex`: keyword search by token overlap, the default of simple
  tool-search toolsets: the number of distinct query words that occur in the tool's name
  or description.
* :class:`Bm25sIndex`: the ``bm25s`` library (stemmed with PyStemmer when installed) over
  name and description.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.base import BaseToolIndex, SessionTools

__all__ = ["Bm25sIndex", "ReferenceRegexIndex", "TokenOverlapIndex"]

_REFERENCE_STOP_WORDS = frozenset(
    """a an the is are was were be been being have has had do does did will would could
    should may might must shall can need dare ought used to of in for on with at by from as
    into through during before after above below between and or but if because until while
    although this that these those what which who whom whose i me my we our you your he him
    his she her it its they them their all any both each every some no not only just also
    very too so""".split()  # noqa: SIM905
)
_REFERENCE_SPLIT = re.compile(r"[\s,;:.!?()\[\]{}\"']+")
_WORD = re.compile(r"\w+")


def reference_pattern(query: str) -> str | None:
    tokens = [t for t in _REFERENCE_SPLIT.split(query.lower()) if t]
    kept = [t for t in tokens if len(t) >= 2 and t not in _REFERENCE_STOP_WORDS] or tokens
    terms = list(dict.fromkeys(re.escape(t) for t in kept))
    if not terms:
        return None
    pattern = "(?i)(" + "|".join(terms) + ")"
    while len(pattern) > 200 and len(terms) > 1:
        terms.pop()
        pattern = "(?i)(" + "|".join(terms) + ")"
    return pattern


class ReferenceRegexIndex(BaseToolIndex[None]):
    search_type = "reference-regex"

    def _build_view(self, snapshot: SessionTools) -> None:
        return None

    def _rank(
        self,
        view: None,
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        pattern = reference_pattern(query)
        if pattern is None:
            return [], 0
        compiled = re.compile(pattern)
        scored = []
        for i, tool in enumerate(snapshot.tools):
            score = 0.0
            names = [m.start() for m in compiled.finditer(tool.name)]
            if names:
                score += 2.0 * len(names) + 1.0 / (1.0 + names[0] * 0.1)
            descriptions = [m.start() for m in compiled.finditer(tool.description)]
            if descriptions:
                score += len(descriptions) + 0.5 / (1.0 + descriptions[0] * 0.1)
            if score > 0:
                scored.append((i, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:limit], len(scored)


class TokenOverlapIndex(BaseToolIndex[list[frozenset[str]]]):
    search_type = "token-overlap"

    def _build_view(self, snapshot: SessionTools) -> list[frozenset[str]]:
        return [
            frozenset(w.lower() for w in _WORD.findall(f"{t.name} {t.description}"))
            for t in snapshot.tools
        ]

    def _rank(
        self,
        view: list[frozenset[str]],
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        words = {w.lower() for w in _WORD.findall(query)}
        scored = [(i, float(len(words & tokens))) for i, tokens in enumerate(view)]
        scored = [item for item in scored if item[1] > 0]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:limit], len(scored)


class Bm25sIndex(BaseToolIndex[Any]):
    search_type = "bm25s"

    def __init__(self) -> None:
        try:
            import bm25s
        except ImportError as exc:
            raise MissingExtraError("the bm25s peer", "bench", "bm25s") from exc
        super().__init__()
        self._bm25s = bm25s
        try:
            import Stemmer

            self._stemmer: Any = Stemmer.Stemmer("english")
        except ImportError:
            self._stemmer = None

    @property
    def stemmed(self) -> bool:
        return self._stemmer is not None

    def _build_view(self, snapshot: SessionTools) -> Any:
        corpus = [f"{t.name} {t.description}" for t in snapshot.tools]
        tokens = self._bm25s.tokenize(
            corpus, stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        retriever = self._bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return retriever

    def _rank(
        self,
        view: Any,
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        tokens = self._bm25s.tokenize(
            [query], stopwords="en", stemmer=self._stemmer, show_progress=False, return_ids=False
        )
        known = [t for t in tokens[0] if t in view.vocab_dict]
        if not known:
            return [], 0
        k = min(limit, len(snapshot.tools))
        ids, scores = view.retrieve([known], k=k, show_progress=False)
        pairs = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]
        return pairs, len(pairs)
