"""``EmbeddingCache``: document embeddings on disk, so a catalog is embedded once per model.

An API embedder (:mod:`toolsearch.indexes.embedders.api`) pays for every text it sends, and
a catalog is rebuilt, re-registered by new processes and indexed into several backends (a
session index, a catalog index, a Milvus collection). The cache keeps each document
vector under ``(embedder name, sha256 of the text)``: the embedder name carries everything
that changes a vector (provider, endpoint, model, dimensions), and the text's digest is the
identity the catalog's own artifacts reuse rows by, so a tool is re-embedded exactly when
the text its vector comes from changed.

Storage is one SQLite file (stdlib ``sqlite3``, write-ahead log): every process and thread
opens its own connection per operation, writes one transaction per batch, and waits up to
30 s for another writer, so concurrent builds share the file safely and a build killed
mid-way keeps the batches it finished. The file is bounded (1 GiB of live pages by default):
a write past the bound removes the least recently used rows. The default folder is
``<cache dir>/embeddings`` (:func:`~toolsearch.indexes.embedders.tuned.default_cache_dir`:
``$TOOLSEARCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolsearch``, else ``~/.cache/toolsearch``);
``$TOOLSEARCH_EMBEDDING_CACHE`` names another folder, or ``off`` to use none.

The cache is an optimisation, never a reason to fail: a file that cannot be opened, read or
written is logged once and the cache turns itself off for the process (the embedder then
asks its API). Query embeddings are not stored here (they are user content): embedders keep
those in memory only.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toolsearch.indexes.embedders.tuned import default_cache_dir

__all__ = [
    "CACHE_ENV",
    "CACHE_FILE",
    "DEFAULT_MAX_BYTES",
    "MAX_BYTES_ENV",
    "CachedRows",
    "EmbeddingCache",
    "CacheOption",
    "cache_from_option",
    "cached_rows",
    "default_embedding_cache",
    "text_key",
]

_log = logging.getLogger(__name__)

CACHE_FILE = "embeddings.sqlite3"
"""The file name inside the cache folder."""

CACHE_ENV = "TOOLSEARCH_EMBEDDING_CACHE"
"""A folder for the default cache, or ``off`` (``0``, ``false``, ``none``) for no cache."""

_OFF = frozenset({"off", "0", "false", "no", "none"})
_LOOKUP_CHUNK = 500  # keys per SELECT: under SQLite's bound-parameter limit
_BUSY_TIMEOUT = 30.0  # seconds a writer waits for another one

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    " model TEXT NOT NULL, text_sha256 BLOB NOT NULL, vector BLOB NOT NULL,"
    " used INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (model, text_sha256))",
    "CREATE TABLE IF NOT EXISTS models (model TEXT PRIMARY KEY, dimension INTEGER NOT NULL)",
)
_USED_INDEX = "CREATE INDEX IF NOT EXISTS vectors_by_use ON vectors (used)"
_PAGE_SIZE = 16384
"""Pages of a new file: with vectors of a few kilobytes in a rowid table, a MiniLM row takes
about 1.75 KB on disk (2.1 KB with 4 KB pages; the first files, a WITHOUT ROWID table on
4 KB pages, took 4.7 KB, and keep working as they are)."""

MAX_BYTES_ENV = "TOOLSEARCH_EMBEDDING_CACHE_MAX_MB"
"""Megabytes the default cache may fill (default :data:`DEFAULT_MAX_BYTES`)."""

DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
"""1 GiB: about 600,000 MiniLM rows (384 floats each), 150,000 of 1,536-float API models."""

_TOUCH_AFTER = 3600  # seconds: a row read within the last hour is not rewritten as used
_EVICT_TO = 0.9  # past the bound, the least recently used rows go down to 90 % of it


def text_key(text: str) -> bytes:
    """The cache key of a text: its sha256 (what catalog artifacts reuse rows by too)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def default_embedding_cache() -> EmbeddingCache | None:
    """The cache embedders use by default: ``$TOOLSEARCH_EMBEDDING_CACHE`` (a folder, or
    ``off`` for none), else ``<cache dir>/embeddings``; bounded by
    ``$TOOLSEARCH_EMBEDDING_CACHE_MAX_MB`` (default 1 GiB)."""
    configured = os.environ.get(CACHE_ENV, "").strip()
    if configured.lower() in _OFF:
        return None
    limit = os.environ.get(MAX_BYTES_ENV, "").strip()
    try:
        max_bytes = int(float(limit) * 1024 * 1024) if limit else DEFAULT_MAX_BYTES
    except ValueError:
        raise ValueError(f"{MAX_BYTES_ENV} must be a number of megabytes, not {limit!r}") from None
    return EmbeddingCache(configured or None, max_bytes=max_bytes)


class CachedRows:
    """What :func:`cached_rows` did: the rows, and how many texts it had to embed."""

    def __init__(self, rows: Any, embedded: int) -> None:
        self.rows = rows
        self.embedded = embedded


def cached_rows(
    cache: EmbeddingCache | None,
    model: str,
    dimension: int,
    texts: Sequence[str],
    embed: Any,
) -> CachedRows:
    """Document rows for ``texts``: those ``cache`` holds for ``model``, the rest from
    ``embed(missing_texts)`` (each distinct text once), stored for the next process. With
    no cache, ``embed(texts)`` as it is. Rows come back in the order of ``texts``."""
    import numpy as np

    if cache is None or not texts:
        rows = embed(list(texts))
        return CachedRows(rows, len(texts))
    keys = [text_key(text) for text in texts]
    found = cache.get_many(model, list(dict.fromkeys(keys)), dimension)
    missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
    if missing:
        fresh = embed(list(missing.values()))
        cache.put_many(model, list(missing), fresh)
        found.update(zip(missing, fresh, strict=True))
    rows = np.stack([found[key] for key in keys]).astype(np.float32, copy=False)
    return CachedRows(np.ascontiguousarray(rows), len(missing))


class EmbeddingCache:
    """Unit-length float32 document vectors per ``(model name, text sha256)`` in SQLite.

    Args:
        folder: Where ``embeddings.sqlite3`` lives; ``None`` for ``<cache dir>/embeddings``.
            Created on the first write.
        max_bytes: The most the file's live pages may hold. A write that takes it past
            this removes the least recently used rows (written or read; reads are recorded
            at most once an hour per row) down to 90 % of it, so the file stops growing
            (SQLite reuses the freed pages).
        clock: Seconds since the epoch, for the rows' last use (tests inject their own).

    Thread- and process-safe; see the module docs. Each model's vector length is recorded
    once (:meth:`dimension`), and a stored row of another length is never returned.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, not {max_bytes}")
        self.max_bytes = max_bytes
        self._clock = clock
        self.folder = Path(folder).expanduser() if folder is not None else _default_folder()
        self.path = self.folder / CACHE_FILE
        self._ready = False
        self._broken = False
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        """False once the file turned out unusable (the process then runs without it)."""
        return not self._broken

    # -- reading ---------------------------------------------------------------------------

    def get_many(self, model: str, keys: Sequence[bytes], dimension: int) -> dict[bytes, Any]:
        """The stored vectors of ``keys`` (those found, as float32 arrays of ``dimension``).

        A stored row that is not a BLOB of the right length, or holds a non-finite number,
        is a miss: the text is embedded again and the write replaces the row."""
        import numpy as np

        found: dict[bytes, Any] = {}
        if not keys or not self.path.exists():
            return found
        width = dimension * 4
        unique = list(dict.fromkeys(keys))
        with self._connection("read") as db:
            if db is None:
                return found
            for start in range(0, len(unique), _LOOKUP_CHUNK):
                chunk = unique[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT text_sha256, vector FROM vectors WHERE model = ? "
                    f"AND text_sha256 IN ({marks})",
                    [model, *chunk],
                ).fetchall()
                for key, blob in rows:
                    # a row that is not a BLOB (SQLite columns take any type: a damaged or
                    # hand-edited file) is a miss, embedded again and replaced on write;
                    # a row of another length is not this model's
                    if not isinstance(blob, bytes) or len(blob) != width:
                        continue
                    if not isinstance(key, bytes):
                        continue
                    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                    if np.isfinite(vector).all():  # a damaged row is embedded again
                        found[bytes(key)] = vector
            if found:
                self._touch(db, model, list(found))
        return found

    def _touch(self, db: Any, model: str, keys: Sequence[bytes]) -> None:
        """Record that ``keys`` were read (eviction removes the least recently used rows);
        a row touched within the hour is left alone, and a writer holding the file only
        means this read goes unrecorded."""
        import sqlite3

        now = int(self._clock())
        with contextlib.suppress(sqlite3.OperationalError), db:
            db.executemany(
                "UPDATE vectors SET used = ? WHERE model = ? AND text_sha256 = ? AND used < ?",
                [(now, model, key, now - _TOUCH_AFTER) for key in keys],
            )

    def dimension(self, model: str) -> int | None:
        """The vector length recorded for ``model``, or ``None``."""
        if not self.path.exists():
            return None
        row = None
        with self._connection("read") as db:
            if db is not None:
                row = db.execute("SELECT dimension FROM models WHERE model = ?", [model]).fetchone()
        return int(row[0]) if row else None

    def count(self, model: str | None = None) -> int:
        """How many vectors are stored (for ``model``, or for all)."""
        if not self.path.exists():
            return 0
        row = None
        with self._connection("read") as db:
            if db is None:
                return 0
            if model is None:
                row = db.execute("SELECT COUNT(*) FROM vectors").fetchone()
            else:
                row = db.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", [model]).fetchone()
        return int(row[0]) if row else 0

    # -- writing ---------------------------------------------------------------------------

    def put_many(self, model: str, keys: Sequence[bytes], vectors: Any) -> None:
        """Store one vector per key (rows of ``vectors``) and the model's vector length, in
        one transaction; an existing row is replaced."""
        import numpy as np

        if not len(keys):
            return
        matrix = np.ascontiguousarray(vectors, dtype="<f4")
        if matrix.ndim != 2 or matrix.shape[0] != len(keys):
            raise ValueError(f"{len(keys)} keys for vectors of shape {matrix.shape}")
        now = int(self._clock())
        rows = [(model, key, matrix[i].tobytes(), now) for i, key in enumerate(keys)]
        with self._connection("write") as db:
            if db is None:
                return
            with db:  # one transaction
                db.execute(
                    "INSERT OR REPLACE INTO models (model, dimension) VALUES (?, ?)",
                    [model, int(matrix.shape[1])],
                )
                db.executemany(
                    "INSERT OR REPLACE INTO vectors (model, text_sha256, vector, used)"
                    " VALUES (?, ?, ?, ?)",
                    rows,
                )
                self._evict(db)

    def live_bytes(self) -> int:
        """Bytes in the file's pages that hold data (what :attr:`max_bytes` bounds)."""
        if not self.path.exists():
            return 0
        with self._connection("read") as db:
            return 0 if db is None else _live_bytes(db)

    def _evict(self, db: Any) -> None:
        """Past :attr:`max_bytes`, delete the least recently used rows down to 90 % of it
        (the bytes per row estimated from the file's live pages)."""
        used = _live_bytes(db)
        if used <= self.max_bytes:
            return
        (rows,) = db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        if not rows:
            return
        keep = int(self.max_bytes * _EVICT_TO / (used / rows))
        db.execute(
            "DELETE FROM vectors WHERE (model, text_sha256) IN"
            " (SELECT model, text_sha256 FROM vectors ORDER BY used LIMIT ?)",
            [max(1, rows - keep)],
        )
        _log.info(
            "the embedding cache %s passed %d bytes: %d rows removed",
            self.path,
            self.max_bytes,
            max(1, rows - keep),
        )

    def clear(self, model: str | None = None) -> None:
        """Forget the vectors (and vector length) of ``model``, or of every model."""
        if not self.path.exists():
            return
        with self._connection("write") as db:
            if db is None:
                return
            with db:
                if model is None:
                    db.execute("DELETE FROM vectors")
                    db.execute("DELETE FROM models")
                else:
                    db.execute("DELETE FROM vectors WHERE model = ?", [model])
                    db.execute("DELETE FROM models WHERE model = ?", [model])

    # -- plumbing --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _connection(self, what: str) -> Iterator[Any]:
        """A fresh connection, or ``None`` once the cache is off; SQLite and file-system
        errors, opening or inside the block, switch the cache off instead of propagating."""
        import sqlite3

        db = None
        if not self._broken:
            try:
                if what == "write":
                    self.folder.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT)
                self._prepare(db)
            except (sqlite3.Error, OSError) as exc:
                if db is not None:
                    db.close()
                    db = None
                self._disable(what, exc)
        try:
            yield db
        except (sqlite3.Error, OSError) as exc:
            self._disable(what, exc)
        finally:
            if db is not None:
                db.close()

    def _prepare(self, db: Any) -> None:
        """Write-ahead logging (readers never wait for a writer) and the tables, once per
        object. Switching the journal mode needs the file to itself and does not wait for
        it: when another connection holds it, that one's process switches it (the mode
        is stored in the file), and the rollback journal meanwhile is just as safe."""
        import sqlite3

        if self._ready:
            return
        with self._lock:
            if not self._ready:
                db.execute(f"PRAGMA page_size={_PAGE_SIZE}")  # a new, empty file only
                with contextlib.suppress(sqlite3.OperationalError):
                    db.execute("PRAGMA journal_mode=WAL")
                for statement in _SCHEMA:
                    db.execute(statement)
                columns = {row[1] for row in db.execute("PRAGMA table_info(vectors)")}
                if "used" not in columns:  # a cache written before rows were bounded
                    with contextlib.suppress(sqlite3.OperationalError):  # another process won
                        db.execute("ALTER TABLE vectors ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
                db.execute(_USED_INDEX)
                db.commit()
                self._ready = True

    def _disable(self, what: str, exc: BaseException) -> None:
        if not self._broken:
            self._broken = True
            _log.warning(
                "the embedding cache %s cannot %s (%s); embedding without it for this process",
                self.path,
                what,
                exc,
            )

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.folder)!r})"


CacheOption = EmbeddingCache | str | os.PathLike[str] | bool
"""What an embedder's ``cache`` argument takes (:func:`cache_from_option`)."""


def cache_from_option(option: CacheOption) -> EmbeddingCache | None:
    """An embedder's ``cache`` argument as a cache: ``True`` the default cache
    (:func:`default_embedding_cache`), ``False`` none, a cache as it is, else a folder."""
    if option is True:
        return default_embedding_cache()
    if option is False:
        return None
    if isinstance(option, EmbeddingCache):
        return option
    return EmbeddingCache(option)


def _live_bytes(db: Any) -> int:
    (pages,) = db.execute("PRAGMA page_count").fetchone()
    (free,) = db.execute("PRAGMA freelist_count").fetchone()
    (size,) = db.execute("PRAGMA page_size").fetchone()
    return int((pages - free) * size)


def _default_folder() -> Path:
    return default_cache_dir() / "embeddings"
