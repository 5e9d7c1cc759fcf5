"""``Bm25ToolIndex``: keyword search with BM25F over name, description and parameters.

Text is analyzed with tantivy's tokenizer, stop-word filter and English stemmer (so
"forecasts" finds "forecast"). Fields are weighted (name 3, description 1, parameters 0.5
by default, :class:`~toolsearch.indexes.params.Bm25Params`) and scored by
:func:`toolsearch.indexes.lexical.bm25_scoring.rank`: one BM25F formula with the searched
session's own statistics, normalized to ``[0, 1)`` so ``min_score`` means the same on 20
tools and on 20,000 (see that module).

Tokenizing a tool is done once per process (cached by fingerprint); every session's tools
are documents of one shared in-memory corpus, so indexing a second session with the same
tools costs hashing and a mask, not re-analysis.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Unpack

from toolsearch.indexes.lexical import bm25_scoring
from toolsearch.indexes.lexical.analysis import analyze, tool_terms
from toolsearch.indexes.lexical.bm25_scoring import MemoryPostings, Postings, Scope, scope_of
from toolsearch.indexes.params import Bm25Options, Bm25Params
from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.session import SessionIndex, SessionTools

__all__ = ["Bm25Ranker", "Bm25Session", "Bm25ToolIndex"]


class _Corpus:
    """Every distinct tool any session indexed, as documents of one postings store."""

    def __init__(self, params: Bm25Params) -> None:
        self.params = params
        self.postings = MemoryPostings()
        self._doc_of: dict[str, int] = {}

    def documents(self, tools: SessionTools) -> list[int]:
        ids = []
        for tool, prepared in zip(tools.tools, tools.prepared, strict=True):
            fingerprint = tool.fingerprint
            doc = self._doc_of.get(fingerprint)
            if doc is None:
                doc = self.postings.add(tool_terms(prepared, self.params, fingerprint))
                self._doc_of[fingerprint] = doc
            ids.append(doc)
        return ids


@dataclass(frozen=True)
class Bm25Session:
    """BM25F over one scope of any :class:`~toolsearch.indexes.lexical.bm25_scoring.Postings`,
    its places being the session's positions (an in-memory session, a catalog session)."""

    postings: Postings
    params: Bm25Params
    scope: Scope

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        scope = self.scope
        if allowed is not None:  # statistics of the searched tools only
            picked = list(allowed)
            docs = picked if scope.docs is None else scope.docs[picked]
            scope = scope_of(self.postings, docs)
        places, scores, total = bm25_scoring.rank(
            self.postings, analyze(query), scope, self.params, limit
        )
        positions = places.tolist()
        if allowed is not None:
            positions = [picked[p] for p in positions]
        return Ranking.of(list(zip(positions, scores.tolist(), strict=True)), total)


class Bm25Ranker:
    """The BM25F ranker over an in-memory corpus shared by its sessions."""

    search_type = "bm25"

    def __init__(self, params: Bm25Params | None = None) -> None:
        analyze("probe")  # fail now, naming the extra, if tantivy is missing
        self.params = params or Bm25Params()
        self._corpus = _Corpus(self.params)
        self._lock = threading.Lock()

    def prepare(self, tools: SessionTools) -> Bm25Session:
        with self._lock:  # documents are appended in one order
            docs = self._corpus.documents(tools)
        postings = self._corpus.postings
        return Bm25Session(postings, self.params, scope_of(postings, docs))


class Bm25ToolIndex(SessionIndex):
    """BM25F keyword search on tantivy's analysis; see the module docstring.

    Takes a :class:`~toolsearch.indexes.params.Bm25Params` or its fields as keywords:
    ``k1`` (term-frequency saturation), ``b`` (length normalization), ``name_weight``,
    ``description_weight``, ``parameter_weight`` and ``min_score`` (drop hits whose
    normalized score, 0..1, is below it).
    """

    ranker: Bm25Ranker

    def __init__(self, params: Bm25Params | None = None, **options: Unpack[Bm25Options]) -> None:
        super().__init__(Bm25Ranker(dataclasses.replace(params or Bm25Params(), **options)))

    @property
    def params(self) -> Bm25Params:
        return self.ranker.params

    @property
    def k1(self) -> float:
        return self.params.k1

    @property
    def b(self) -> float:
        return self.params.b

    @property
    def min_score(self) -> float:
        return self.params.min_score
