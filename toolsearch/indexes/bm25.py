"""``Bm25ToolIndex``: keyword search with BM25F over name, description and parameters.

Text is analyzed with tantivy's tokenizer, stop-word filter and English stemmer (so
"forecasts" finds "forecast"). Fields are weighted (name 3, description 1, parameters 0.5
by default) and combined BM25F-style: weighted term frequencies and a weighted length feed
one Okapi BM25 formula (``k1=1.2``, ``b=0.75``). Statistics (document count, document
frequency, average length) are those of the searched session alone: a session's scores do
not depend on what other sessions indexed, and filtering happens before ranking.

Tokenizing a tool is done once per process (cached by fingerprint); a session is a set of
documents in a shared corpus, so indexing a second session with the same tools costs
hashing and a bitmap, not re-analysis.

**Normalized scores.** Raw BM25 grows with the query length and the catalog's statistics,
so a raw threshold means something different on 20 tools and on 20,000. Every hit's
``relevance_score`` is therefore ``score / max_score`` where ``max_score = Σ idf(t)·(k1+1)``
over the query's terms (the BM25 limit of a document that contains every term infinitely
often; a term no tool of the session contains counts with the largest possible idf). The
result lies in ``[0, 1)`` and reads as "how much of the query's information this tool
covers"; ``min_score`` applies to it. With ``min_score`` set, a query whose hits are all
weak returns nothing instead of padding the list up to the limit.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.indexes.analysis import analyze, field_tokens
from toolsearch.indexes.base import BaseToolIndex, SessionTools

__all__ = ["Bm25ToolIndex"]


def _numpy() -> Any:
    import numpy

    return numpy


class _Corpus:
    """Every distinct tool any session indexed: weighted postings and lengths."""

    def __init__(self, weights: tuple[float, float, float]) -> None:
        self.weights = weights
        self.doc_of: dict[str, int] = {}
        self.lengths: list[float] = []
        self.postings: dict[str, tuple[list[int], list[float]]] = {}
        self._arrays: dict[str, tuple[Any, Any, int]] = {}
        self._length_array: Any = None
        self.lock = threading.Lock()

    def add(self, snapshot: SessionTools) -> list[int]:
        ids = []
        with self.lock:
            for tool, prepared in zip(snapshot.tools, snapshot.prepared, strict=True):
                fingerprint = tool.fingerprint
                doc = self.doc_of.get(fingerprint)
                if doc is None:
                    doc = len(self.lengths)
                    weighted: dict[str, float] = {}
                    for weight, counts in zip(
                        self.weights, field_tokens(fingerprint, prepared), strict=True
                    ):
                        if weight <= 0:
                            continue  # a field switched off must not count in frequencies
                        for term, count in counts.items():
                            weighted[term] = weighted.get(term, 0.0) + weight * count
                    for term, tf in weighted.items():
                        docs, tfs = self.postings.setdefault(term, ([], []))
                        docs.append(doc)
                        tfs.append(tf)
                    self.lengths.append(sum(weighted.values()))
                    self.doc_of[fingerprint] = doc
                ids.append(doc)
            self._length_array = None
        return ids

    def term_arrays(self, term: str) -> tuple[Any, Any] | None:
        """Doc ids and weighted term frequencies of ``term`` (numpy, cached)."""
        entry = self.postings.get(term)
        if entry is None:
            return None
        cached = self._arrays.get(term)
        if cached is not None and cached[2] == len(entry[0]):
            return cached[0], cached[1]
        np = _numpy()
        with self.lock:
            docs = np.asarray(entry[0], dtype=np.int64)
            tfs = np.asarray(entry[1][: len(docs)], dtype=np.float64)
            self._arrays[term] = (docs, tfs, len(docs))
        return docs, tfs

    def length_array(self) -> Any:
        array = self._length_array
        if array is None:
            np = _numpy()
            with self.lock:
                array = np.asarray(self.lengths, dtype=np.float64)
                self._length_array = array
        return array


@dataclass(frozen=True)
class _View:
    docs: Any  # doc id per session position
    mask: Any  # bool over the corpus as it was when the view was built
    order: Any  # positions sorted by doc id
    sorted_docs: Any
    average_length: float


class Bm25ToolIndex(BaseToolIndex[_View]):
    """BM25F keyword search on tantivy's analysis; see the module docstring.

    Args:
        k1: Term-frequency saturation.
        b: Length normalization.
        name_weight: Weight of the split tool name.
        description_weight: Weight of the description.
        parameter_weight: Weight of parameter names, descriptions and enum values.
        min_score: Drop hits whose normalized score (0..1) is below this.
    """

    search_type = "bm25"

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        name_weight: float = 3.0,
        description_weight: float = 1.0,
        parameter_weight: float = 0.5,
        min_score: float = 0.0,
    ) -> None:
        if not 0.0 <= min_score <= 1.0:
            raise ValueError("min_score is a normalized score between 0 and 1")
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError("k1 must be >= 0 and b between 0 and 1")
        analyze("probe")  # fail now, naming the extra, if tantivy is missing
        super().__init__()
        self.k1 = k1
        self.b = b
        self.min_score = min_score
        self._corpus = _Corpus((name_weight, description_weight, parameter_weight))

    def _build_view(self, snapshot: SessionTools) -> _View:
        np = _numpy()
        docs = np.asarray(self._corpus.add(snapshot), dtype=np.int64)
        size = int(docs.max()) + 1 if len(docs) else 0
        mask = np.zeros(size, dtype=bool)
        mask[docs] = True
        order = np.argsort(docs, kind="stable")
        lengths = self._corpus.length_array()
        average = float(lengths[docs].mean()) if len(docs) else 0.0
        return _View(docs, mask, order, docs[order], average or 1.0)

    def _rank(
        self,
        view: _View,
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        np = _numpy()
        terms = list(dict.fromkeys(analyze(query)))
        if not terms or not len(view.docs):
            return [], 0
        mask = view.mask
        lengths = self._corpus.length_array()
        average_length = view.average_length
        if allowed is not None:  # statistics of the searched tools only
            mask = np.zeros_like(view.mask)
            chosen = view.docs[list(allowed)]
            mask[chosen] = True
            average_length = float(lengths[chosen].mean()) or 1.0
        n = float(mask.sum())
        doc_scores = None
        max_score = 0.0
        k1, b = self.k1, self.b
        for term in terms:
            arrays = self._corpus.term_arrays(term)
            selected_docs = selected_tfs = None
            df = 0.0
            if arrays is not None:
                docs, tfs = arrays
                inside = docs < len(mask)
                docs, tfs = docs[inside], tfs[inside]
                hit = mask[docs]
                selected_docs, selected_tfs = docs[hit], tfs[hit]
                df = float(len(selected_docs))
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            max_score += idf * (k1 + 1.0)
            if not df:
                continue
            norm = k1 * (1.0 - b + b * lengths[selected_docs] / average_length)
            contribution = idf * selected_tfs * (k1 + 1.0) / (selected_tfs + norm)
            if doc_scores is None:
                doc_scores = np.zeros(len(mask), dtype=np.float64)
            np.add.at(doc_scores, selected_docs, contribution)
        if doc_scores is None or max_score <= 0:
            return [], 0
        normalized = doc_scores / max_score
        matched = np.flatnonzero(normalized > 0)
        if self.min_score > 0:
            matched = matched[normalized[matched] >= self.min_score]
        total = len(matched)
        positions = view.order[np.searchsorted(view.sorted_docs, matched)]
        scores = normalized[matched]
        best = np.lexsort((positions, -scores))[:limit]  # ties: earlier registration first
        return list(zip(positions[best].tolist(), scores[best].tolist(), strict=True)), total
