"""A chat memory repository in SQLite (standard library), faithful to every message kind.

Each message is stored as its full JSON form, so assistant tool calls and tool responses
come back exactly as they went in (the reference's JDBC store drops them).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from toolsearch.chat.messages import Message, message_adapter
from toolsearch.errors import ChatMemoryError

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


class SqliteChatMemoryRepository:
    """Conversations in an SQLite file (or ``":memory:"``); safe to share across threads."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._connection = sqlite3.connect(self.path, check_same_thread=False)
            with self._connection:
                self._connection.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise ChatMemoryError(f"cannot open chat memory database {self.path!r}: {exc}") from exc

    def find_conversation_ids(self) -> list[str]:
        rows = self._query("SELECT DISTINCT conversation_id FROM chat_memory ORDER BY 1", ())
        return [row[0] for row in rows]

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        rows = self._query(
            "SELECT message FROM chat_memory WHERE conversation_id = ? ORDER BY position",
            (conversation_id,),
        )
        return [message_adapter.validate_json(row[0]) for row in rows]

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        try:
            rows = [
                (conversation_id, i, m.role, message_adapter.dump_json(m).decode("utf-8"))
                for i, m in enumerate(messages)
            ]
        except (ValueError, TypeError) as exc:  # pydantic serialization errors are ValueErrors
            raise ChatMemoryError(
                f"cannot store conversation {conversation_id!r}: a message is not JSON-"
                f"serializable ({exc})"
            ) from exc
        with self._lock:
            try:
                with self._connection:
                    self._connection.execute(
                        "DELETE FROM chat_memory WHERE conversation_id = ?", (conversation_id,)
                    )
                    self._connection.executemany(
                        "INSERT INTO chat_memory VALUES (?, ?, ?, ?)", rows
                    )
            except sqlite3.Error as exc:
                raise ChatMemoryError(
                    f"cannot save conversation {conversation_id!r}: {exc}"
                ) from exc

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        with self._lock:
            try:
                with self._connection:
                    self._connection.execute(
                        "DELETE FROM chat_memory WHERE conversation_id = ?", (conversation_id,)
                    )
            except sqlite3.Error as exc:
                raise ChatMemoryError(
                    f"cannot delete conversation {conversation_id!r}: {exc}"
                ) from exc

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def _query(self, sql: str, params: tuple[str, ...]) -> list[tuple[str]]:
        with self._lock:
            try:
                return self._connection.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise ChatMemoryError(f"cannot read chat memory: {exc}") from exc
