"""The vector artifact of a catalog index: embeddings (``.npy``) and a FAISS index.

* ``embeddings.npy``: one unit-length float32 row per tool, in catalog order, embedded from
  the same views ``VectorToolIndex`` embeds (``PreparedTool.embedding_views``). Loaded
  memory-mapped. A rebuild copies the rows whose text is unchanged from the previous index
  (same embedder) and embeds only the rest, in batches.
* ``embedded_texts.npy``: the sha256 of each row's views, what a rebuild matches rows by
  (a changed definition changes its text; so does a change to the text preparation).
* ``vectors.faiss``: ``IndexFlatIP`` (exact) for catalogs of up to ``hnsw_threshold`` tools
  (10,000 by default, ``VectorToolIndex``'s threshold), ``IndexHNSWFlat`` with inner product
  above it (read memory-mapped where FAISS supports it). A flat catalog is searched with
  numpy over ``embeddings.npy`` (the same exact ranking as ``IndexFlatIP``, without FAISS's
  per-query thread start-up); its ``vectors.faiss`` is written for other FAISS readers.

A session's subset is searched inside the index, before top-k: subsets of up to
``hnsw_threshold`` tools are ranked exactly over their own rows (gathered once per session,
a 500-tool subset is a 500-by-d matrix), larger subsets search the catalog's FAISS index with
an ``IDSelectorBitmap``, so FAISS only ever returns tools of the subset (exact for a flat
index, approximate like any HNSW search otherwise).

Threads: a FAISS search runs with ``query_threads`` OpenMP threads (one by default,
``TOOLSEARCH_QUERY_THREADS`` to change it; :mod:`toolsearch.indexes.threads`), the numpy
ranking on the calling thread; building (embedding batches, adding to FAISS) uses every core.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.params import VectorParams
from toolsearch.indexes.threads import faiss_query_threads
from toolsearch.indexes.views import embed_views

__all__ = ["VectorArtifact", "VectorScope", "VectorSettings", "VectorWriter"]

EMBEDDINGS_FILE = "embeddings.npy"
TEXT_KEYS_FILE = "embedded_texts.npy"
"""sha256 of the text each row embeds (``S32``, catalog order): what a rebuild reuses by."""
FAISS_FILE = "vectors.faiss"


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise MissingExtraError("vector catalog indexes", "vector", "faiss-cpu") from exc
    return faiss


VectorSettings = VectorParams
"""The catalog's name for :class:`~toolsearch.indexes.params.VectorParams`."""


def text_key(text: str) -> bytes:
    """The reuse key of an embedded text (a tool's views joined by NUL): its sha256."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class PreviousEmbeddings:
    """The rows of an earlier build, by the sha256 of the text they embed.

    Keyed by text rather than by tool fingerprint: a tool is re-embedded exactly when the
    text its vector comes from changed, also when the definition is the same but the text
    preparation (``prepare_tool``) changed between toolsearch versions."""

    def __init__(self, keys: Any, embeddings: Any) -> None:
        # numpy's S32 drops a digest's trailing NUL bytes on the way out: pad them back
        self._rows = {bytes(k).ljust(32, b"\0"): i for i, k in enumerate(keys.tolist())}
        self._embeddings = embeddings

    def row(self, key: bytes) -> Any:
        found = self._rows.get(key)
        return None if found is None else self._embeddings[found]


class VectorWriter:
    """Embeds tools in batches during a build, reusing rows of a previous build."""

    def __init__(
        self,
        folder: Path,
        embedder: Embedder,
        settings: VectorSettings,
        *,
        previous: PreviousEmbeddings | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> None:
        self._folder = folder
        self._embedder = embedder
        self._settings = settings
        self._previous = previous
        self._on_batch = on_batch
        self._raw = open(folder / "embeddings.f32.tmp", "wb")  # noqa: SIM115 - closed in finish
        self._pending: list[tuple[tuple[str, ...] | None, Any]] = []
        self._keys = bytearray()
        self.count = 0
        self.embedded = 0
        self.reused = 0

    def add(self, views: Sequence[str]) -> None:
        """Queue the next tool's row: ``views`` are what it embeds (``embedding_views``)."""
        key = text_key("\x00".join(views))
        self._keys += key
        row = self._previous.row(key) if self._previous is not None else None
        self._pending.append((None, row) if row is not None else (tuple(views), None))
        if len(self._pending) >= self._settings.batch_size:
            self._flush()

    def _flush(self) -> None:
        import numpy as np

        if not self._pending:
            return
        texts = [text for text, _ in self._pending if text is not None]
        fresh = embed_views(self._embedder, texts) if texts else None
        dimension = self._embedder.dimension  # asked after: an API embedder learns it then
        block = np.zeros((len(self._pending), dimension), dtype=np.float32)
        next_fresh = 0
        for i, (text, row) in enumerate(self._pending):
            if text is None:
                block[i] = row
                self.reused += 1
            else:
                assert fresh is not None  # a row to embed means ``texts`` was not empty
                block[i] = fresh[next_fresh]
                next_fresh += 1
        self.embedded += len(texts)
        self.count += len(self._pending)
        self._raw.write(np.ascontiguousarray(block, dtype=np.float32).tobytes())
        self._pending.clear()
        if self._on_batch is not None:
            self._on_batch(self.count)

    def finish(self, *, on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Write ``embeddings.npy`` and ``vectors.faiss``; returns manifest details."""
        import numpy as np

        self._flush()
        self._raw.close()
        dimension = self._embedder.dimension
        raw_path = self._folder / "embeddings.f32.tmp"
        raw = np.memmap(raw_path, dtype=np.float32, mode="r", shape=(self.count, dimension))
        target = np.lib.format.open_memmap(
            self._folder / EMBEDDINGS_FILE, "w+", np.float32, (self.count, dimension)
        )
        step = 8192
        for start in range(0, self.count, step):
            target[start : start + step] = raw[start : start + step]
        target.flush()
        del raw
        raw_path.unlink()
        np.save(self._folder / TEXT_KEYS_FILE, np.frombuffer(bytes(self._keys), dtype="S32"))
        structure = _write_faiss(self._folder, target, self._settings, on_progress)
        del target
        return {"index": structure, "embedded": self.embedded, "reused": self.reused}


def _write_faiss(
    folder: Path,
    vectors: Any,
    settings: VectorSettings,
    on_progress: Callable[[int, int], None] | None,
) -> str:
    import numpy as np

    faiss = _faiss()
    count, dimension = vectors.shape
    if count > settings.hnsw_threshold:
        index = faiss.IndexHNSWFlat(dimension, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings.hnsw_ef_construction
        index.hnsw.efSearch = settings.hnsw_ef_search
        structure = "hnsw"
    else:
        index = faiss.IndexFlatIP(dimension)
        structure = "flat"
    step = 10_000
    for start in range(0, count, step):
        index.add(np.ascontiguousarray(vectors[start : start + step], dtype=np.float32))
        if on_progress is not None:
            on_progress(min(count, start + step), count)
    faiss.write_index(index, str(folder / FAISS_FILE))
    return structure


_MADV_POPULATE_READ = 22  # Linux 5.14+; Python's mmap module does not name it yet


def prefetch(array: Any) -> None:
    """Map a memory-mapped array's pages now (``MADV_POPULATE_READ``; read-ahead where that
    is unsupported): a new session then gathers its 500 rows without 500 page faults, which
    cost several milliseconds on a busy machine. The pages stay shared between processes."""
    import mmap

    handle = getattr(array, "_mmap", None)
    if handle is None:
        return
    try:
        handle.madvise(_MADV_POPULATE_READ)
    except (OSError, ValueError, OverflowError):
        advice = getattr(mmap, "MADV_WILLNEED", None)
        if advice is not None:
            with contextlib.suppress(OSError, ValueError):
                handle.madvise(advice)


@dataclass(frozen=True)
class VectorScope:
    """A subset for vector search: its own rows (exact) or a FAISS selector (large)."""

    size: int
    rows: Any = None
    bitmap: Any = None
    order: Any = None
    sorted_docs: Any = None


class VectorArtifact:
    """Read side: ranks a query vector over the whole catalog or a subset."""

    def __init__(self, folder: Path, settings: VectorSettings, structure: str) -> None:
        import numpy as np

        faiss = _faiss()
        self.settings = settings
        self.structure = structure
        self.embeddings = np.load(folder / EMBEDDINGS_FILE, mmap_mode="r")
        prefetch(self.embeddings)
        self._faiss = faiss
        self._index: Any = None
        self._whole: VectorScope | None = None
        if structure == "hnsw":
            flag = getattr(faiss, "IO_FLAG_MMAP_IFC", 0)
            try:
                self._index = faiss.read_index(str(folder / FAISS_FILE), flag)
            except RuntimeError:
                self._index = faiss.read_index(str(folder / FAISS_FILE))
            self._index.hnsw.efSearch = settings.hnsw_ef_search
        else:
            # a flat catalog is ranked exactly with numpy over the memory-mapped rows: the
            # same result as IndexFlatIP without FAISS's per-query thread start-up, which
            # dominates single-query latency on a busy machine
            self._whole = VectorScope(len(self.embeddings), rows=self.embeddings)

    @property
    def dimension(self) -> int:
        return int(self.embeddings.shape[1])

    def scope(self, docs: Any, order: Any, sorted_docs: Any) -> VectorScope:
        import numpy as np

        if len(docs) <= self.settings.hnsw_threshold:
            rows = np.ascontiguousarray(self.embeddings[docs], dtype=np.float32)
            return VectorScope(len(docs), rows=rows)
        count = len(self.embeddings)
        bitmap = np.zeros((count + 7) // 8, dtype=np.uint8)
        np.bitwise_or.at(bitmap, docs >> 3, (1 << (docs & 7)).astype(np.uint8))
        return VectorScope(len(docs), bitmap=bitmap, order=order, sorted_docs=sorted_docs)

    def rank(self, vector: Any, limit: int, scope: VectorScope | None) -> tuple[Any, Any, int]:
        """Best first: places in the scope (catalog ids for ``None``), cosine scores, and the
        number of tools searched."""
        import numpy as np

        vector = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, -1)
        if scope is None and self._whole is not None:
            scope = self._whole
        if scope is not None and scope.rows is not None:
            if not scope.size:
                return np.zeros(0, dtype=np.int64), np.zeros(0), 0
            # einsum, not BLAS: a single mat-vec gains nothing from BLAS threads, and their
            # start-up and spinning dominate the latency on a busy machine
            scores = np.einsum("ij,j->i", scope.rows, vector[0])
            places = np.arange(scope.size)
            if scope.size > limit:
                threshold = np.partition(scores, scope.size - limit)[scope.size - limit]
                keep = np.flatnonzero(scores >= threshold)
                places = keep
            best = np.lexsort((places, -scores[places]))[:limit]
            return places[best], scores[places][best].astype(np.float64), scope.size
        total = len(self.embeddings) if scope is None else scope.size
        if not total:
            return np.zeros(0, dtype=np.int64), np.zeros(0), 0
        k = min(limit, total)
        params = None
        if scope is not None:
            selector = self._faiss.IDSelectorBitmap(
                len(self.embeddings), self._faiss.swig_ptr(scope.bitmap)
            )
            if self.structure == "hnsw":
                params = self._faiss.SearchParametersHNSW(
                    sel=selector, efSearch=max(self.settings.hnsw_ef_search, k)
                )
            else:
                params = self._faiss.SearchParameters(sel=selector)
        elif self.structure == "hnsw":
            # per-search parameters, never the shared index's efSearch: searches run on
            # many threads at once
            params = self._faiss.SearchParametersHNSW(efSearch=max(self.settings.hnsw_ef_search, k))
        with faiss_query_threads():
            distances, ids = self._index.search(vector, k, params=params)
        found = ids[0] >= 0
        docs, scores = ids[0][found].astype(np.int64), distances[0][found].astype(np.float64)
        if scope is not None:
            docs = scope.order[np.searchsorted(scope.sorted_docs, docs)]
        return docs, scores, total
