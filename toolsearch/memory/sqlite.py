"""A chat memory repository in SQLite (standard library), faithful to every message kind.

Each message is stored as its full JSON form, so assistant tool calls and tool responses
come back exactly as they went in (the reference's JDBC store drops them).

Concurrency: every write is one ``BEGIN IMMEDIATE`` transaction. A file database is put
in WAL mode (``-wal`` and ``-shm`` files appear beside it) and waits up to ``timeout``
seconds for another writer. :meth:`SqliteChatMemoryRepository.append` adds rows after the
conversation's highest position and never rewrites the stored ones. Any number of
threads, processes and instances can therefore append to one conversation on one file
and every message is kept, each writer's messages in the order it wrote them.

Text: any Python string round-trips exactly, lone surrogates (``"\\ud800"``) included. A
message is stored as UTF-8 JSON text. A message whose strings hold surrogate code points,
which UTF-8 cannot encode, is stored as the same JSON encoded with ``surrogatepass`` (a
BLOB). Conversation ids are handled the same way. A stored row that cannot be read back
as a message raises :class:`~toolsearch.errors.ChatMemoryError`, which names the
conversation and the row's position.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from toolsearch.chat.messages import Message, message_adapter
from toolsearch.errors import ChatMemoryError
from toolsearch.memory.repository import RetainPolicy

__all__ = ["SqliteChatMemoryRepository"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_memory (
    conversation_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
)
"""

_T = TypeVar("_T")
_Sql = str | bytes


class SqliteChatMemoryRepository:
    """Conversations in an SQLite file (or ``":memory:"``), safe to share across threads,
    processes and instances on one file.

    ``timeout`` is how long, in seconds, a write waits for another writer before it raises
    :class:`~toolsearch.errors.ChatMemoryError`.
    """

    def __init__(self, path: str | Path = ":memory:", *, timeout: float = 30.0) -> None:
        self.path = str(path)
        self.timeout = timeout
        self._lock = threading.Lock()
        try:
            self._connection = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise ChatMemoryError(f"cannot open chat memory database {self.path!r}: {exc}") from exc
        try:
            self._enable_wal()
            exists = self._connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chat_memory'"
            ).fetchall()
            if not exists:  # a read: opening never waits for a writer of an existing file
                self._write(lambda db: db.execute(_SCHEMA), "cannot create its table")
        except (sqlite3.Error, ChatMemoryError) as exc:
            self._connection.close()
            raise ChatMemoryError(f"cannot open chat memory database {self.path!r}: {exc}") from exc

    def _enable_wal(self) -> None:
        """Switch the file to WAL (a no-op for ``":memory:"`` and a file already in WAL).

        The switch can fail at once with "database is locked" while another process opens
        the same new file (SQLite's busy handler does not cover it), so it is retried until
        ``timeout``."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                self._connection.execute("PRAGMA journal_mode=WAL").fetchall()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)

    def find_conversation_ids(self) -> list[str]:
        rows = self._read(
            "SELECT DISTINCT CAST(conversation_id AS BLOB) FROM chat_memory ORDER BY 1", ()
        )
        ids = []
        for (raw,) in rows:
            try:
                ids.append(bytes(raw).decode("utf-8", "surrogatepass"))
            except (TypeError, ValueError) as exc:
                raise ChatMemoryError(
                    f"chat memory holds an unreadable conversation id {raw!r}"
                ) from exc
        return ids

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        rows = self._read(
            "SELECT position, CAST(message AS BLOB) FROM chat_memory"
            " WHERE conversation_id = ? ORDER BY position",
            (_sql_text(conversation_id),),
        )
        return [_decode(conversation_id, position, raw) for position, raw in rows]

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        retain: RetainPolicy | None = None,
    ) -> None:
        """Add ``messages`` after the stored ones in one transaction. With ``retain``, then
        delete the rows it does not keep, in the same transaction."""
        key = _sql_text(conversation_id)
        encoded = [_encode(conversation_id, m) for m in messages]

        def run(db: sqlite3.Connection) -> None:
            (last,) = db.execute(
                "SELECT COALESCE(MAX(position), -1) FROM chat_memory WHERE conversation_id = ?",
                (key,),
            ).fetchone()
            db.executemany(
                "INSERT INTO chat_memory VALUES (?, ?, ?, ?)",
                [(key, last + 1 + i, role, text) for i, (role, text) in enumerate(encoded)],
            )
            if retain is not None:
                rows = db.execute(
                    "SELECT position, CAST(message AS BLOB) FROM chat_memory"
                    " WHERE conversation_id = ? ORDER BY position",
                    (key,),
                ).fetchall()
                stored = [_decode(conversation_id, position, raw) for position, raw in rows]
                keep = set(retain(stored))
                dropped = [(key, rows[i][0]) for i in range(len(rows)) if i not in keep]
                db.executemany(
                    "DELETE FROM chat_memory WHERE conversation_id = ? AND position = ?", dropped
                )

        self._write(run, f"cannot append to conversation {conversation_id!r}")

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        key = _sql_text(conversation_id)
        rows = [(key, i, *_encode(conversation_id, m)) for i, m in enumerate(messages)]

        def run(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM chat_memory WHERE conversation_id = ?", (key,))
            db.executemany("INSERT INTO chat_memory VALUES (?, ?, ?, ?)", rows)

        self._write(run, f"cannot save conversation {conversation_id!r}")

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        key = _sql_text(conversation_id)
        self._write(
            lambda db: db.execute("DELETE FROM chat_memory WHERE conversation_id = ?", (key,)),
            f"cannot delete conversation {conversation_id!r}",
        )

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def _write(
        self, action: Callable[[sqlite3.Connection], _T], what: str = "cannot write chat memory"
    ) -> _T:
        """Run ``action`` in one ``BEGIN IMMEDIATE`` transaction: it takes the database's
        write lock first (waiting up to ``timeout``), so no other writer interleaves."""
        with self._lock:
            db = self._connection
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    result = action(db)
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise ChatMemoryError(f"{what}: {exc}") from exc
            return result

    def _read(self, sql: str, params: tuple[_Sql, ...]) -> list[Any]:
        with self._lock:
            try:
                return self._connection.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise ChatMemoryError(f"cannot read chat memory: {exc}") from exc


def _sql_text(text: str) -> _Sql:
    """``text`` as SQLite can bind it: itself, or its ``surrogatepass`` UTF-8 bytes when it
    holds surrogate code points (which UTF-8 cannot encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _encode(conversation_id: str, message: Message) -> tuple[str, _Sql]:
    try:
        # Python mode keeps every string as it is (JSON mode mangles surrogates in dict
        # keys); pydantic's JSON conversion then handles values ``json`` cannot
        data = message_adapter.dump_python(message)
        text = json.dumps(data, ensure_ascii=False, default=to_jsonable_python)
    except (ValueError, TypeError, RecursionError) as exc:  # pydantic's are ValueErrors
        raise ChatMemoryError(
            f"cannot store conversation {conversation_id!r}: a message is not JSON-"
            f"serializable ({exc})"
        ) from exc
    return message.role, _sql_text(text)


def _decode(conversation_id: str, position: int, raw: object) -> Message:
    where = f"conversation {conversation_id!r}: the stored message at position {position}"
    try:
        if not isinstance(raw, bytes):
            raise TypeError(f"the stored value is {type(raw).__name__}, not text")
        data = json.loads(raw.decode("utf-8", "surrogatepass"))
    except (ValueError, TypeError, RecursionError) as exc:  # bad UTF-8 or JSON, a NULL
        raise ChatMemoryError(f"{where} cannot be decoded ({type(exc).__name__}: {exc})") from exc
    try:
        return message_adapter.validate_python(data)
    except ValidationError as exc:
        reason = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'message'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise ChatMemoryError(f"{where} is not a valid message ({reason})") from exc
