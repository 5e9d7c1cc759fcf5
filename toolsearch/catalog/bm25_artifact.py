"""The BM25 artifact of a catalog index: memory-mapped postings scored like ``Bm25ToolIndex``.

Why not a tantivy index directory: per-session search scores with BM25F (weighted fields
fed into one BM25 formula) and *normalized* scores in ``[0, 1)`` computed from the searched
tools' own statistics; ``min_score`` and the hybrid's convex fusion rely on that scale. A
tantivy index scores fields separately with catalog-wide statistics, so a catalog-backed
session would rank its 500 tools differently from the same 500 tools in a
``Bm25ToolIndex``. Instead the build analyzes every tool with the same tantivy analyzer
(:func:`toolsearch.indexes.analysis.analyze`) and writes the weighted postings as ``.npy``
files that load memory-mapped (on disk, paged in on use, shared between processes):

* ``bm25_terms.txt``: the vocabulary, sorted, one term per line;
* ``bm25_offsets.npy``: where each term's postings start (int64, one more than terms);
* ``bm25_docs.npy`` / ``bm25_tfs.npy``: catalog ids (int32) and weighted term frequencies
  (float32; weights and counts are small multiples of 0.5, so float32 is exact);
* ``bm25_lengths.npy``: each tool's weighted length (float32, exact for the same reason);
* ``bm25_impacts.npy``: per posting, its BM25 term weight without the idf
  (``tf·(k1+1)/(tf + k1·(1-b+b·len/avglen))``) under the whole catalog's statistics (float32).

Scoring repeats ``Bm25ToolIndex``'s formula term for term, so a search over a session's
subset (statistics of that subset alone, filtering before ranking) returns exactly what a
``Bm25ToolIndex`` over the same tools returns. A search over the whole catalog uses the
precomputed impacts (one multiply-add per posting instead of a dozen array operations: the
difference between ~2 ms and well under 1 ms for a common term at 125k tools); its scores
equal ``Bm25ToolIndex``'s to float32 precision.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolsearch.indexes.analysis import analyze
from toolsearch.indexes.text import PreparedTool

__all__ = ["Bm25Artifact", "Bm25Settings", "Bm25Writer", "Extra", "Scope"]

TERMS_FILE = "bm25_terms.txt"
OFFSETS_FILE = "bm25_offsets.npy"
DOCS_FILE = "bm25_docs.npy"
TFS_FILE = "bm25_tfs.npy"
LENGTHS_FILE = "bm25_lengths.npy"
IMPACTS_FILE = "bm25_impacts.npy"


@dataclass(frozen=True, slots=True)
class Bm25Settings:
    """BM25F parameters; the defaults are ``Bm25ToolIndex``'s."""

    k1: float = 1.2
    b: float = 0.75
    name_weight: float = 3.0
    description_weight: float = 1.0
    parameter_weight: float = 0.5
    min_score: float = 0.0

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Bm25Settings:
        return cls(**{k: float(v) for k, v in dict(data or {}).items()})

    @classmethod
    def matching_session_index(cls) -> Bm25Settings:
        """``Bm25ToolIndex``'s current defaults (they are tuned over time; a new catalog
        build follows them, a built catalog keeps the settings in its manifest)."""
        from toolsearch.indexes.bm25 import Bm25ToolIndex

        return cls(**_defaults_of(Bm25ToolIndex, cls))


def tool_terms(prepared: PreparedTool, settings: Bm25Settings) -> dict[str, float]:
    """A tool's weighted term frequencies (the same fields and weights as ``Bm25ToolIndex``)."""
    fields = (
        f"{prepared.category_words} {prepared.name_words}",
        prepared.description,
        prepared.parameters,
    )
    weights = (settings.name_weight, settings.description_weight, settings.parameter_weight)
    weighted: dict[str, float] = {}
    for weight, text in zip(weights, fields, strict=True):
        if weight <= 0:
            continue
        for term, count in Counter(analyze(text)).items():
            weighted[term] = weighted.get(term, 0.0) + weight * count
    return weighted


def _defaults_of(index: type, settings: type) -> dict[str, Any]:
    """The keyword defaults of ``index.__init__`` that ``settings`` has fields for."""
    import inspect

    parameters = inspect.signature(index.__init__).parameters
    return {
        name: parameters[name].default
        for name in settings.__dataclass_fields__
        if name in parameters and parameters[name].default is not inspect.Parameter.empty
    }


class Bm25Writer:
    """Collects postings during a build (compact arrays, not Python lists)."""

    def __init__(self, settings: Bm25Settings) -> None:
        self.settings = settings
        self._postings: dict[str, tuple[array[int], array[float]]] = {}
        self._lengths = array("f")

    def add(self, doc: int, prepared: PreparedTool) -> None:
        self.add_terms(doc, tool_terms(prepared, self.settings))

    def add_terms(self, doc: int, weighted: dict[str, float]) -> None:
        """Add a tool's weighted terms (from :func:`tool_terms`), in catalog order."""
        if doc != len(self._lengths):
            raise ValueError("documents must be added in catalog order")
        postings = self._postings
        for term, tf in weighted.items():
            entry = postings.get(term)
            if entry is None:
                entry = postings[term] = (array("i"), array("f"))
            entry[0].append(doc)
            entry[1].append(tf)
        self._lengths.append(sum(weighted.values()))

    def _write_impacts(self, folder: Path, lengths: Any, total: int) -> None:
        import numpy as np

        k1, b = self.settings.k1, self.settings.b
        average = float(lengths.astype(np.float64).mean()) if len(lengths) else 0.0
        average = average or 1.0
        docs = np.load(folder / DOCS_FILE, mmap_mode="r")
        tfs = np.load(folder / TFS_FILE, mmap_mode="r")
        impacts = np.lib.format.open_memmap(folder / IMPACTS_FILE, "w+", np.float32, (total,))
        step = 1 << 20
        for start in range(0, total, step):
            tf = np.asarray(tfs[start : start + step], dtype=np.float64)
            length = lengths[np.asarray(docs[start : start + step])].astype(np.float64)
            norm = k1 * (1.0 - b + b * length / average)
            impacts[start : start + step] = tf * (k1 + 1.0) / (tf + norm)
        impacts.flush()
        del impacts, docs, tfs

    def finish(self, folder: Path) -> dict[str, int]:
        """Write the files; returns counts for the manifest."""
        import numpy as np

        terms = sorted(self._postings)
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        for i, term in enumerate(terms):
            offsets[i + 1] = offsets[i] + len(self._postings[term][0])
        total = int(offsets[-1])
        docs = np.lib.format.open_memmap(folder / DOCS_FILE, "w+", np.int32, (total,))
        tfs = np.lib.format.open_memmap(folder / TFS_FILE, "w+", np.float32, (total,))
        for i, term in enumerate(terms):
            term_docs, term_tfs = self._postings.pop(term)  # free as we go
            start, end = offsets[i], offsets[i + 1]
            docs[start:end] = np.frombuffer(term_docs, dtype=np.int32)
            tfs[start:end] = np.frombuffer(term_tfs, dtype=np.float32)
        docs.flush()
        tfs.flush()
        del docs, tfs
        np.save(folder / OFFSETS_FILE, offsets)
        lengths = np.frombuffer(self._lengths, dtype=np.float32)
        np.save(folder / LENGTHS_FILE, lengths)
        self._write_impacts(folder, lengths, total)
        (folder / TERMS_FILE).write_text("\n".join(terms), encoding="utf-8")
        return {"terms": len(terms), "postings": total}


@dataclass(frozen=True)
class Scope:
    """The catalog tools a search may return.

    ``docs`` are catalog ids in the session's order (``None``: the whole catalog, in catalog
    order); ``mask`` marks them over the catalog; ``order``/``sorted_docs`` map a catalog id
    back to its place in ``docs``; ``average_length`` is the subset's mean weighted length
    and ``total_length`` the sum (exact: weighted lengths are multiples of 0.5).
    """

    size: int
    docs: Any = None
    mask: Any = None
    order: Any = None
    sorted_docs: Any = None
    average_length: float = 1.0
    total_length: float = 0.0


@dataclass(frozen=True)
class Extra:
    """Tools searched with a scope that the catalog does not hold (a session's own):
    their weighted terms (:func:`tool_terms`) and weighted lengths. They take the places
    after the scope's, and share its statistics."""

    terms: tuple[dict[str, float], ...]
    lengths: Any  # float64, one per tool

    @classmethod
    def of(cls, terms: list[dict[str, float]]) -> Extra:
        import numpy as np

        lengths = np.asarray([sum(t.values()) for t in terms], dtype=np.float64)
        return cls(tuple(terms), lengths)

    def pick(self, indexes: list[int]) -> Extra:
        return Extra(tuple(self.terms[i] for i in indexes), self.lengths[indexes])


class Bm25Artifact:
    """Read side: scores a query over a :class:`Scope`."""

    def __init__(self, folder: Path, settings: Bm25Settings) -> None:
        import numpy as np

        self.settings = settings
        text = (folder / TERMS_FILE).read_text(encoding="utf-8")
        terms = text.split("\n") if text else []
        self._term_ids = dict(zip(terms, range(len(terms)), strict=True))
        self._offsets = np.load(folder / OFFSETS_FILE, mmap_mode="r")
        self._docs = np.load(folder / DOCS_FILE, mmap_mode="r")
        self._tfs = np.load(folder / TFS_FILE, mmap_mode="r")
        self.lengths = np.load(folder / LENGTHS_FILE, mmap_mode="r")
        self._impacts = np.load(folder / IMPACTS_FILE, mmap_mode="r")
        count = len(self.lengths)
        lengths = self.lengths.astype(np.float64)
        average = float(lengths.mean()) if count else 0.0
        self.whole = Scope(count, average_length=average or 1.0, total_length=float(lengths.sum()))

    @property
    def term_count(self) -> int:
        return len(self._term_ids)

    def scope(self, docs: Any) -> Scope:
        """The scope of a subset (catalog ids in session order, no repeats)."""
        import numpy as np

        docs = np.asarray(docs, dtype=np.int64)
        mask = np.zeros(len(self.lengths), dtype=bool)
        mask[docs] = True
        order = np.argsort(docs, kind="stable")
        lengths = self.lengths[docs].astype(np.float64)
        average = float(lengths.mean()) if len(docs) else 0.0
        total = float(lengths.sum())
        return Scope(len(docs), docs, mask, order, docs[order], average or 1.0, total)

    def rank(
        self,
        query: str,
        limit: int,
        scope: Scope,
        extra: Extra | None = None,
        tiebreak: Any = None,
    ) -> tuple[Any, Any, int]:
        """Best first: places in ``scope.docs`` (catalog ids for the whole catalog),
        normalized scores, and how many tools matched. Statistics are the scope's own.

        ``extra`` tools (not in the catalog) are scored with the scope, under the statistics
        of both together, at places ``scope.size + i``. Ties go to the lower ``tiebreak``
        of a place (default: the place itself)."""
        import numpy as np

        empty = (np.zeros(0, dtype=np.int64), np.zeros(0), 0)
        terms = list(dict.fromkeys(analyze(query)))
        extras = len(extra.terms) if extra is not None else 0
        size = scope.size + extras
        if not terms or not size:
            return empty
        k1, b = self.settings.k1, self.settings.b
        n = float(size)
        average_length = scope.average_length
        if extra is not None and extras:  # the mean over both, as one session index has it
            average_length = (scope.total_length + float(extra.lengths.sum())) / size or 1.0
        scores: Any = None
        max_score = 0.0
        for term in terms:
            term_id = self._term_ids.get(term) if scope.size else None
            df = 0.0
            extra_hits = (
                [(i, t[term]) for i, t in enumerate(extra.terms) if term in t]
                if extra is not None
                else []
            )
            if term_id is not None:
                start, end = int(self._offsets[term_id]), int(self._offsets[term_id + 1])
                docs = np.asarray(self._docs[start:end])
                if scope.mask is not None:
                    hit = scope.mask[docs]
                    docs = docs[hit]
                    tfs = np.asarray(self._tfs[start:end], dtype=np.float64)[hit]
                df = float(len(docs))
            catalog_df = df
            df += len(extra_hits)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            max_score += idf * (k1 + 1.0)
            if not df:
                continue
            if scores is None:
                scores = np.zeros(size, dtype=np.float64)
            for i, tf in extra_hits:
                norm = k1 * (1.0 - b + b * float(extra.lengths[i]) / average_length)  # type: ignore[union-attr]
                scores[scope.size + i] += idf * tf * (k1 + 1.0) / (tf + norm)
            if not catalog_df:
                continue
            if scope.docs is None and extra is None:  # the whole catalog: precomputed impacts
                contribution = idf * np.asarray(self._impacts[start:end], dtype=np.float64)
                scores[docs] += contribution
                continue
            if scope.mask is None:  # the whole catalog with extra tools: the formula
                tfs = np.asarray(self._tfs[start:end], dtype=np.float64)
            lengths = self.lengths[docs].astype(np.float64)
            norm = k1 * (1.0 - b + b * lengths / average_length)
            contribution = idf * tfs * (k1 + 1.0) / (tfs + norm)
            places = (
                docs
                if scope.docs is None
                else scope.order[np.searchsorted(scope.sorted_docs, docs)]
            )
            scores[places] += contribution  # a term lists each tool once: no repeats
        if scores is None or max_score <= 0:
            return empty
        # every contribution is positive: the matched tools are the non-zero scores (found
        # without dividing the whole array first; the same division, element by element)
        matched = np.flatnonzero(scores)
        values = scores[matched] / max_score
        if self.settings.min_score > 0:
            keep = values >= self.settings.min_score
            matched, values = matched[keep], values[keep]
        total = len(matched)
        if len(matched) > limit:  # keep every tool tied with the limit-th, then sort those
            threshold = np.partition(values, len(values) - limit)[len(values) - limit]
            keep = values >= threshold
            matched, values = matched[keep], values[keep]
        order = matched if tiebreak is None else np.asarray(tiebreak)[matched]
        best = np.lexsort((order, -values))[:limit]  # ties: earlier registration first
        return matched[best], values[best], total
