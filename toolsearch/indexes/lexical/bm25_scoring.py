"""BM25F scoring, written once: pure functions over a :class:`Postings` interface.

Every keyword search in the package runs :func:`rank`: the in-process ``Bm25ToolIndex``
over :class:`MemoryPostings` (tools any session registered), a built catalog over its
memory-mapped postings (``toolsearch.catalog.bm25_artifact``), and a catalog session that
adds tools of its own over :class:`ChainedPostings` (both at once, one corpus).

The formula: a tool's fields are weighted (:class:`~toolsearch.indexes.params.Bm25Params`)
and their term counts summed into one weighted term frequency ``tf`` and one weighted
length per tool (BM25F); each query term then adds
``idf · tf · (k1 + 1) / (tf + k1 · (1 - b + b · length / average length))`` with
``idf = ln(1 + (n - df + 0.5) / (df + 0.5))``. ``n``, ``df`` and the average length are
those of the searched tools alone (a :class:`Scope`), so a session's scores do not depend
on what else the corpus holds, and filtering happens before ranking.

Scores are normalized: divided by ``Σ idf · (k1 + 1)`` over the query's terms (the limit
of a tool containing every term infinitely often; a term no searched tool contains counts
with its largest idf), so they lie in ``[0, 1)`` and read as "how much of the query this
tool covers" whatever the catalog's size; ``min_score`` applies to them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from toolsearch.indexes.params import Bm25Params

__all__ = [
    "ChainedPostings",
    "MemoryPostings",
    "Postings",
    "Scope",
    "TermPostings",
    "rank",
    "scope_of",
]


def _numpy() -> Any:
    import numpy

    return numpy


class TermPostings(NamedTuple):
    """One term's postings: document ids (increasing; any integer dtype), weighted term
    frequencies (float32 or float64: both hold the weighted counts exactly) and, for a
    built catalog, each posting's precomputed whole-corpus weight without the idf
    (``tf·(k1+1)/(tf+norm)``). Stored arrays are handed over as they are (memory-mapped
    views): scoring converts only what a search reads."""

    docs: Any
    tfs: Any
    impacts: Any = None


class Postings(Protocol):
    """Weighted postings of a corpus of tools, by integer document id."""

    @property
    def size(self) -> int:
        """One more than the largest document id."""
        ...

    def term(self, term: str) -> TermPostings | None:
        """The postings of ``term``, or None when no document has it."""
        ...

    def lengths_of(self, docs: Any) -> Any:
        """The weighted lengths (float64) of documents ``docs``."""
        ...


@dataclass(frozen=True)
class Scope:
    """The documents a search ranks, and the statistics they bring.

    ``docs`` are document ids in *place* order (a session's registration order): hits are
    reported as places. ``docs=None`` is the whole corpus, places being document ids.
    ``mask`` marks ``docs`` over the id space, ``order`` / ``sorted_docs`` map an id back to
    its place.
    """

    size: int
    average_length: float
    docs: Any = None
    mask: Any = None
    order: Any = None
    sorted_docs: Any = None


def scope_of(postings: Postings, docs: Any) -> Scope:
    """The scope of ``docs`` (document ids in place order, no repeats)."""
    np = _numpy()
    docs = np.asarray(docs, dtype=np.int64)
    mask = np.zeros(postings.size, dtype=bool)
    mask[docs] = True
    order = np.argsort(docs, kind="stable")
    average = float(postings.lengths_of(docs).mean()) if len(docs) else 0.0
    return Scope(len(docs), average or 1.0, docs, mask, order, docs[order])


def whole_scope(postings: Postings) -> Scope:
    """Every document of ``postings``, places being document ids."""
    np = _numpy()
    lengths = postings.lengths_of(np.arange(postings.size))
    average = float(lengths.mean()) if postings.size else 0.0
    return Scope(postings.size, average or 1.0)


def rank(
    postings: Postings,
    terms: Iterable[str],
    scope: Scope,
    params: Bm25Params,
    limit: int,
) -> tuple[Any, Any, int]:
    """The best ``limit`` places of ``scope`` for the (analyzed) query ``terms``: places,
    normalized scores (best first; ties: the lower place first), and how many matched."""
    np = _numpy()
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0), 0)
    terms = list(dict.fromkeys(terms))
    if not terms or not scope.size:
        return empty
    k1, b = params.k1, params.b
    n = float(scope.size)
    scores: Any = None
    max_score = 0.0
    for term in terms:
        found = postings.term(term)
        docs: Any = None
        tfs: Any = None
        impacts: Any = None
        df = 0.0
        if found is not None:
            docs, tfs, impacts = found
            if scope.mask is not None:
                if len(scope.mask) < postings.size:  # the corpus grew since the scope
                    inside = docs < len(scope.mask)
                    docs, tfs = docs[inside], tfs[inside]
                hit = scope.mask[docs]
                docs, tfs = docs[hit], tfs[hit]
            df = float(len(docs))
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        max_score += idf * (k1 + 1.0)
        if not df:
            continue
        if scores is None:
            scores = np.zeros(scope.size, dtype=np.float64)
        if scope.docs is None and impacts is not None:  # the whole corpus: one multiply-add
            scores[docs] += idf * np.asarray(impacts, dtype=np.float64)
            continue
        tfs = np.asarray(tfs, dtype=np.float64)
        norm = k1 * (1.0 - b + b * postings.lengths_of(docs) / scope.average_length)
        contribution = idf * tfs * (k1 + 1.0) / (tfs + norm)
        places = (
            docs if scope.docs is None else scope.order[np.searchsorted(scope.sorted_docs, docs)]
        )
        scores[places] += contribution  # a term lists each document once: no repeats
    if scores is None or max_score <= 0:
        return empty
    # every contribution is positive: the matched tools are the non-zero scores
    matched = np.flatnonzero(scores)
    values = scores[matched] / max_score
    if params.min_score > 0:
        keep = values >= params.min_score
        matched, values = matched[keep], values[keep]
    total = len(matched)
    if len(matched) > limit:  # keep every tool tied with the limit-th, then sort those
        threshold = np.partition(values, len(values) - limit)[len(values) - limit]
        keep = values >= threshold
        matched, values = matched[keep], values[keep]
    best = np.lexsort((matched, -values))[:limit]
    return matched[best], values[best], total


def weighted_terms(
    field_counts: Iterable[Mapping[str, int]], weights: tuple[float, ...]
) -> dict[str, float]:
    """One tool's weighted term frequencies from its per-field term counts (BM25F)."""
    weighted: dict[str, float] = {}
    for weight, counts in zip(weights, field_counts, strict=True):
        if weight <= 0:
            continue  # a field switched off must not count in frequencies
        for term, count in counts.items():
            weighted[term] = weighted.get(term, 0.0) + weight * count
    return weighted


class MemoryPostings:
    """Postings in memory, appended document by document (thread-safe)."""

    def __init__(self) -> None:
        self._postings: dict[str, tuple[list[int], list[float]]] = {}
        self._arrays: dict[str, tuple[Any, Any, int]] = {}
        self._lengths: list[float] = []
        self._length_array: Any = None
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return len(self._lengths)

    def add(self, weighted: Mapping[str, float]) -> int:
        """Add one document's weighted terms; returns its id."""
        with self._lock:
            doc = len(self._lengths)
            for term, tf in weighted.items():
                docs, tfs = self._postings.setdefault(term, ([], []))
                docs.append(doc)
                tfs.append(tf)
            self._lengths.append(sum(weighted.values()))
            self._length_array = None
        return doc

    def term(self, term: str) -> TermPostings | None:
        entry = self._postings.get(term)
        if entry is None:
            return None
        cached = self._arrays.get(term)
        if cached is not None and cached[2] == len(entry[0]):
            return TermPostings(cached[0], cached[1])
        np = _numpy()
        with self._lock:
            docs = np.asarray(entry[0], dtype=np.int64)
            tfs = np.asarray(entry[1][: len(docs)], dtype=np.float64)
            self._arrays[term] = (docs, tfs, len(docs))
        return TermPostings(docs, tfs)

    def lengths_of(self, docs: Any) -> Any:
        array = self._length_array
        if array is None or len(array) < len(self._lengths):
            np = _numpy()
            with self._lock:
                array = np.asarray(self._lengths, dtype=np.float64)
                self._length_array = array
        return array[docs]


class ChainedPostings:
    """Two corpora searched as one: ``second``'s ids follow ``first``'s (a catalog and the
    tools a session adds to it)."""

    def __init__(self, first: Postings, second: Postings) -> None:
        self.first = first
        self.second = second
        self._offset = first.size

    @property
    def size(self) -> int:
        return self._offset + self.second.size

    def term(self, term: str) -> TermPostings | None:
        np = _numpy()
        a, b = self.first.term(term), self.second.term(term)
        if a is None and b is None:
            return None
        parts = [(p.docs, p.tfs) for p in (a, b) if p is not None]
        if b is not None:
            parts[-1] = (np.asarray(b.docs, dtype=np.int64) + self._offset, b.tfs)
        docs = np.concatenate([np.asarray(d, dtype=np.int64) for d, _ in parts])
        tfs = np.concatenate([np.asarray(t, dtype=np.float64) for _, t in parts])
        return TermPostings(docs, tfs)  # no impacts: the chain is never the whole catalog

    def lengths_of(self, docs: Any) -> Any:
        np = _numpy()
        docs = np.asarray(docs, dtype=np.int64)
        out = np.empty(len(docs), dtype=np.float64)
        low = docs < self._offset
        out[low] = self.first.lengths_of(docs[low])
        out[~low] = self.second.lengths_of(docs[~low] - self._offset)
        return out
