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
* :class:`PlainDenseIndex`: one embedding per tool of one text (``"{name}: {description}"``
  by default, the common dense baseline) and exact cosine search; with ``text=`` any other
  single text, such as the whole prepared text toolsearch embedded before it averaged
  views.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.session import SessionIndex, SessionTools
from toolsearch.tools.definition import ToolDefinition

__all__ = ["Bm25sIndex", "PlainDenseIndex", "ReferenceRegexIndex", "TokenOverlapIndex"]

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


@dataclass(frozen=True)
class _ReferenceRegexSession:
    tools: SessionTools

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        pattern = reference_pattern(query)
        if pattern is None:
            return Ranking()
        compiled = re.compile(pattern)
        scored = []
        for i, tool in enumerate(self.tools.tools):
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
        return Ranking.of(scored[:limit], len(scored))


class _ReferenceRegexRanker:
    search_type = "reference-regex"

    def prepare(self, tools: SessionTools) -> _ReferenceRegexSession:
        return _ReferenceRegexSession(tools)


class ReferenceRegexIndex(SessionIndex):
    def __init__(self) -> None:
        super().__init__(_ReferenceRegexRanker())


@dataclass(frozen=True)
class _TokenOverlapSession:
    tokens: list[frozenset[str]]

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        words = {w.lower() for w in _WORD.findall(query)}
        scored = [(i, float(len(words & tokens))) for i, tokens in enumerate(self.tokens)]
        scored = [item for item in scored if item[1] > 0]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return Ranking.of(scored[:limit], len(scored))


class _TokenOverlapRanker:
    search_type = "token-overlap"

    def prepare(self, tools: SessionTools) -> _TokenOverlapSession:
        return _TokenOverlapSession(
            [
                frozenset(w.lower() for w in _WORD.findall(f"{t.name} {t.description}"))
                for t in tools.tools
            ]
        )


class TokenOverlapIndex(SessionIndex):
    def __init__(self) -> None:
        super().__init__(_TokenOverlapRanker())


@dataclass(frozen=True)
class _Bm25sSession:
    ranker: _Bm25sRanker
    retriever: Any
    size: int

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        bm25s, stemmer = self.ranker.bm25s, self.ranker.stemmer
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False
        )
        known = [t for t in tokens[0] if t in self.retriever.vocab_dict]
        if not known:
            return Ranking()
        k = min(limit, self.size)
        ids, scores = self.retriever.retrieve([known], k=k, show_progress=False)
        pairs = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]
        return Ranking.of(pairs, len(pairs))


class _Bm25sRanker:
    search_type = "bm25s"

    def __init__(self) -> None:
        try:
            import bm25s
        except ImportError as exc:
            raise MissingExtraError("the bm25s peer", "bench", "bm25s") from exc
        self.bm25s = bm25s
        try:
            import Stemmer

            self.stemmer: Any = Stemmer.Stemmer("english")
        except ImportError:
            self.stemmer = None

    def prepare(self, tools: SessionTools) -> _Bm25sSession:
        corpus = [f"{t.name} {t.description}" for t in tools.tools]
        tokens = self.bm25s.tokenize(
            corpus, stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        retriever = self.bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return _Bm25sSession(self, retriever, len(tools))


class Bm25sIndex(SessionIndex):
    ranker: _Bm25sRanker

    def __init__(self) -> None:
        super().__init__(_Bm25sRanker())

    @property
    def stemmed(self) -> bool:
        return self.ranker.stemmer is not None


def name_and_description(tool: ToolDefinition) -> str:
    return f"{tool.name}: {tool.description}"


@dataclass(frozen=True)
class _DenseSession:
    embedder: Any
    vectors: Any

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        import numpy as np

        positions = np.arange(len(self.vectors)) if allowed is None else np.asarray(allowed)
        scores = self.vectors[positions] @ np.asarray(self.embedder.embed_query(query))
        order = np.lexsort((positions, -scores))[:limit]
        hits = [(int(positions[i]), float(scores[i])) for i in order]
        return Ranking.of(hits, len(positions))


class _DenseRanker:
    search_type = "dense"

    def __init__(self, embedder: Any, text: Callable[[ToolDefinition], str]) -> None:
        self.embedder = embedder
        self.text = text

    def prepare(self, tools: SessionTools) -> _DenseSession:
        import numpy as np

        texts = [self.text(tool) for tool in tools.tools]
        vectors = np.asarray(self.embedder.embed_documents(texts), dtype=np.float32)
        return _DenseSession(self.embedder, vectors.reshape(len(texts), -1))


class PlainDenseIndex(SessionIndex):
    """One vector per tool from one text (see the module docstring)."""

    ranker: _DenseRanker

    def __init__(
        self, embedder: Any, text: Callable[[ToolDefinition], str] = name_and_description
    ) -> None:
        super().__init__(_DenseRanker(embedder, text))

    @property
    def embedder(self) -> Any:
        return self.ranker.embedder
