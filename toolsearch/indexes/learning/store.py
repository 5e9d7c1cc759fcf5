"""Where a usage memory is kept: the store seam (in memory, a file, Redis).

A :class:`UsageStore` holds one usage-memory document. :meth:`UsageStore.read` gives its
catalogs; :meth:`UsageStore.merge_in` adds a memory's catalogs to what the store holds,
atomically, and returns the merged whole. Saving is therefore a merge, never an
overwrite: N workers that each learn and save into one store lose nothing of each other's
learning, and each one, after its save, also serves what the others learned.

* :class:`InMemoryUsageStore`: a document in this process (tests; several memories of one
  process sharing one state).
* :class:`FileUsageStore`: a JSON file, merged under an advisory lock beside it
  (``fcntl``; processes on one machine) and written atomically.
* :class:`~toolsearch.indexes.learning.redis_store.RedisUsageStore`: a Redis key, merged
  with an optimistic transaction (``WATCH`` / ``MULTI``), for workers on several machines.

``replace=True`` writes the memory's catalogs as they are (after
:meth:`~toolsearch.indexes.learning.memory.UsageMemory.forget_session`, so a merge does not bring
the forgotten requests back).
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from toolsearch.errors import UsageMemoryError
from toolsearch.indexes.learning.model import Catalog, UsageParams
from toolsearch.indexes.learning.persist import (
    dump_document,
    merge,
    parse,
    rebound,
    to_document,
    write_atomically,
)

__all__ = ["CLOSE_AT_EXIT", "FileUsageStore", "InMemoryUsageStore", "UsageStore"]


class _Closable(Protocol):
    def close(self) -> None: ...


@runtime_checkable
class UsageStore(Protocol):
    """One usage-memory document, shared by every memory that uses the store."""

    def read(self, params: UsageParams, now: float) -> dict[str, Catalog]:
        """The stored catalogs, re-bounded by ``params`` (empty when nothing is stored);
        :class:`UsageMemoryError` when the stored document cannot be read."""
        ...

    def merge_in(
        self,
        catalogs: Mapping[str, Catalog],
        params: UsageParams,
        now: float,
        *,
        replace: bool = False,
    ) -> dict[str, Catalog]:
        """Add ``catalogs`` to the stored ones atomically (``replace``: store them as they
        are) and return what the store now holds."""
        ...


def _dump(catalogs: Mapping[str, Catalog], params: UsageParams, now: float) -> str:
    return dump_document(to_document(catalogs, params, now))


def _combined(
    stored: dict[str, Catalog],
    catalogs: Mapping[str, Catalog],
    params: UsageParams,
    now: float,
    replace: bool,
) -> dict[str, Catalog]:
    if replace:
        stored = {}
    merge(stored, _copy(catalogs), params)
    return rebound(stored, params, now)


def _copy(catalogs: Mapping[str, Catalog]) -> dict[str, Catalog]:
    """A deep copy through the document form (the store must not share the memory's
    mutable entries)."""
    params = UsageParams()
    return parse(_dump(catalogs, params, 0.0), "a usage memory")


class InMemoryUsageStore:
    """A usage-memory document held in this process."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "InMemoryUsageStore()"

    def read(self, params: UsageParams, now: float) -> dict[str, Catalog]:
        with self._lock:
            text = self._text
        return {} if text is None else rebound(parse(text, self), params, now)

    def merge_in(
        self,
        catalogs: Mapping[str, Catalog],
        params: UsageParams,
        now: float,
        *,
        replace: bool = False,
    ) -> dict[str, Catalog]:
        with self._lock:
            stored = {} if self._text is None else parse(self._text, self)
            merged = _combined(stored, catalogs, params, now, replace)
            self._text = _dump(merged, params, now)
        return parse(self._text, self)


class FileUsageStore:
    """A usage-memory JSON file, merged under a lock file beside it and written atomically.

    A folder at the path, an unreadable file or one that is not a usage memory raise
    :class:`UsageMemoryError` naming it; such a file is never overwritten.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FileUsageStore({str(self.path)!r})"

    def read(self, params: UsageParams, now: float) -> dict[str, Catalog]:
        text = self._read_text()
        return {} if text is None else rebound(parse(text, self.path), params, now)

    def _read_text(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise UsageMemoryError(f"{self.path}: not a usage memory file (not UTF-8)") from None
        except OSError as exc:
            raise UsageMemoryError(f"{self.path}: cannot be read ({exc.strerror or exc})") from None

    def merge_in(
        self,
        catalogs: Mapping[str, Catalog],
        params: UsageParams,
        now: float,
        *,
        replace: bool = False,
    ) -> dict[str, Catalog]:
        with self._lock, _FileLock(self.path):
            text = None if replace else self._read_text()
            stored = {} if text is None else parse(text, self.path)
            merged = _combined(stored, catalogs, params, now, replace)
            try:
                write_atomically(self.path, _dump(merged, params, now))
            except OSError as exc:
                raise UsageMemoryError(
                    f"{self.path}: cannot be written ({exc.strerror or exc})"
                ) from None
        return merged


class _FileLock:
    """An advisory lock on ``.<name>.lock`` beside a file (no lock where ``fcntl`` is
    missing: one process per file there)."""

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(f".{path.name}.lock")
        self.handle: int | None = None

    def __enter__(self) -> _FileLock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise UsageMemoryError(f"{self.path}: cannot lock ({exc.strerror or exc})") from None
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            import fcntl

            fcntl.flock(self.handle, fcntl.LOCK_UN)
            os.close(self.handle)
            self.handle = None


class _AtExit:
    """The memories to save when the interpreter exits (weakly held)."""

    def __init__(self) -> None:
        self._memories: weakref.WeakSet[_Closable] = weakref.WeakSet()
        self._registered = False

    def add(self, memory: _Closable) -> None:
        self._memories.add(memory)
        if not self._registered:
            self._registered = True
            atexit.register(self.run)

    def discard(self, memory: _Closable) -> None:
        self._memories.discard(memory)

    def run(self) -> None:
        for memory in list(self._memories):
            memory.close()


CLOSE_AT_EXIT = _AtExit()
"""The memories saved at interpreter exit (weakly held: a dropped memory is not kept)."""
