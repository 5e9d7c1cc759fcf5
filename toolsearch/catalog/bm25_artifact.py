"""The BM25 artifact of a catalog index: memory-mapped postings, scored by the one BM25F.

Why not a tantivy index directory: per-session search scores with BM25F (weighted fields
fed into one BM25 formula) and *normalized* scores in ``[0, 1)`` computed from the searched
tools' own statistics; ``min_score`` and the hybrid's convex fusion rely on that scale. A
tantivy index scores fields separately with catalog-wide statistics, so a catalog-backed
session would rank its 500 tools differently from the same 500 tools in a
``Bm25ToolIndex``. Instead the build analyzes every tool with the same tantivy analyzer
(:func:`toolsearch.indexes.lexical.analysis.analyze`) and writes the weighted postings as ``.npy``
files that load memory-mapped (on disk, paged in on use, shared between processes):

* ``bm25_terms.txt``: the vocabulary, sorted, one term per line;
* ``bm25_offsets.npy``: where each term's postings start (int64, one more than terms);
* ``bm25_docs.npy`` / ``bm25_tfs.npy``: catalog ids (int32) and weighted term frequencies
  (float32; weights and counts are small multiples of 0.5, so float32 is exact);
* ``bm25_lengths.npy``: each tool's weighted length (float32, exact for the same reason);
* ``bm25_impacts.npy``: per posting, its BM25 term weight without the idf
  (``tf·(k1+1)/(tf + k1·(1-b+b·len/avglen))``) under the whole catalog's statistics (float32).

:class:`MappedPostings` serves them as :class:`~toolsearch.indexes.lexical.bm25_scoring.Postings`,
and :func:`toolsearch.indexes.lexical.bm25_scoring.rank` scores them exactly as it scores a
``Bm25ToolIndex``'s in-memory postings, so a search over a session's subset (statistics of
that subset alone, filtering before ranking) returns exactly what a ``Bm25ToolIndex`` over
the same tools returns. A search over the whole catalog uses the precomputed impacts (one
multiply-add per posting instead of a dozen array operations, which is most of the work
for a common term in a large catalog); its scores equal
``Bm25ToolIndex``'s to float32 precision.
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

from toolsearch.indexes.lexical.analysis import tool_terms
from toolsearch.indexes.lexical.bm25_scoring import TermPostings
from toolsearch.indexes.params import Bm25Params
from toolsearch.indexes.text import PreparedTool

__all__ = ["Bm25Settings", "Bm25Writer", "MappedPostings", "tool_terms"]

TERMS_FILE = "bm25_terms.txt"
OFFSETS_FILE = "bm25_offsets.npy"
DOCS_FILE = "bm25_docs.npy"
TFS_FILE = "bm25_tfs.npy"
LENGTHS_FILE = "bm25_lengths.npy"
IMPACTS_FILE = "bm25_impacts.npy"

Bm25Settings = Bm25Params
"""The catalog's name for :class:`~toolsearch.indexes.params.Bm25Params`."""


class Bm25Writer:
    """Collects postings during a build (compact arrays, not Python lists)."""

    def __init__(self, settings: Bm25Params) -> None:
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


class MappedPostings:
    """Read side: the built postings, memory-mapped, as
    :class:`~toolsearch.indexes.lexical.bm25_scoring.Postings` (catalog ids are document ids)."""

    def __init__(self, folder: Path, settings: Bm25Params) -> None:
        import numpy as np

        self.settings = settings
        text = (folder / TERMS_FILE).read_text(encoding="utf-8")
        terms = text.split("\n") if text else []
        self._term_ids = dict(zip(terms, range(len(terms)), strict=True))
        self._offsets = np.load(folder / OFFSETS_FILE, mmap_mode="r")
        self._docs = np.load(folder / DOCS_FILE, mmap_mode="r")
        self._tfs = np.load(folder / TFS_FILE, mmap_mode="r")
        self._lengths = np.load(folder / LENGTHS_FILE, mmap_mode="r")
        self._impacts = np.load(folder / IMPACTS_FILE, mmap_mode="r")

    @property
    def size(self) -> int:
        return len(self._lengths)

    @property
    def term_count(self) -> int:
        return len(self._term_ids)

    def term(self, term: str) -> TermPostings | None:
        """The term's memory-mapped postings as they are stored (int32 ids, float32
        frequencies, float32 impacts): no copy until a search reads them."""
        term_id = self._term_ids.get(term)
        if term_id is None:
            return None
        start, end = int(self._offsets[term_id]), int(self._offsets[term_id + 1])
        return TermPostings(self._docs[start:end], self._tfs[start:end], self._impacts[start:end])

    def lengths_of(self, docs: Any) -> Any:
        import numpy as np

        return self._lengths[docs].astype(np.float64)
