"""Where chat memory keeps messages: the repository protocols, the append helper and an
in-memory store.

Appends are atomic. A repository that implements :class:`AppendableChatMemoryRepository`
(both stores shipped here do) adds messages in one atomic step, so concurrent writers,
whether threads or processes, never lose each other's messages. For a custom repository
that has only the four :class:`ChatMemoryRepository` methods, :func:`append_messages`
falls back to read, append and :meth:`~ChatMemoryRepository.save_all` under a lock held
per repository object. That is atomic only among the threads of one process that write
through toolsearch, so a store shared by several processes should implement ``append``.

Text: the in-memory store keeps the message objects themselves, so every Python string
comes back unchanged, lone surrogates (``"\\ud800"``) included.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

from toolsearch.chat.messages import Message

__all__ = [
    "AppendableChatMemoryRepository",
    "ChatMemoryRepository",
    "InMemoryChatMemoryRepository",
    "RetainPolicy",
    "append_messages",
]

RetainPolicy = Callable[[Sequence[Message]], Iterable[int]]
"""Takes a conversation's whole stored list (oldest first) right after an append and
returns the positions (indices into that list) to keep. The repository deletes the others
in the same atomic step as the append, so a message that a concurrent writer stored is
always in the list the policy sees. The policy must not call the repository."""


@runtime_checkable
class ChatMemoryRepository(Protocol):
    """Stores each conversation's messages; ``save_all`` replaces what was stored.

    These four methods are all a custom store needs. To make appends atomic across
    processes as well, also implement ``append`` (see :class:`AppendableChatMemoryRepository`).
    """

    def find_conversation_ids(self) -> list[str]: ...

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]: ...

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None: ...

    def delete_by_conversation_id(self, conversation_id: str) -> None: ...


@runtime_checkable
class AppendableChatMemoryRepository(ChatMemoryRepository, Protocol):
    """A repository that appends atomically.

    ``append`` adds ``messages`` after what is stored. If ``retain`` is given, the
    repository then keeps only the positions it returns. Both steps are one atomic
    operation with respect to every other writer of the store: other threads, other
    processes, other instances on the same file.
    """

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        retain: RetainPolicy | None = None,
    ) -> None: ...


def append_messages(
    repository: ChatMemoryRepository,
    conversation_id: str,
    messages: Sequence[Message],
    *,
    retain: RetainPolicy | None = None,
) -> None:
    """Append ``messages`` to a conversation, atomically when the repository can.

    This calls ``repository.append`` when the repository has one. Otherwise it reads,
    appends, applies ``retain`` and calls ``save_all``, all under a lock held per
    repository object. That fallback is atomic only among this process's threads.
    """
    if isinstance(repository, AppendableChatMemoryRepository):
        repository.append(conversation_id, messages, retain=retain)
        return
    with _fallback_lock(repository):
        stored = repository.find_by_conversation_id(conversation_id)
        repository.save_all(conversation_id, _retained([*stored, *messages], retain))


def _retained(messages: list[Message], retain: RetainPolicy | None) -> list[Message]:
    """The messages at the positions ``retain`` keeps, in their stored order (all of them
    when ``retain`` is ``None``)."""
    if retain is None:
        return messages
    keep = {i for i in retain(messages) if 0 <= i < len(messages)}
    return [m for i, m in enumerate(messages) if i in keep]


_fallback_locks: weakref.WeakKeyDictionary[object, threading.Lock] = weakref.WeakKeyDictionary()
_fallback_locks_guard = threading.Lock()
_shared_fallback_lock = threading.Lock()


def _fallback_lock(repository: object) -> threading.Lock:
    with _fallback_locks_guard:
        try:
            lock = _fallback_locks.get(repository)
            if lock is None:
                lock = _fallback_locks[repository] = threading.Lock()
        except TypeError:  # not weak-referenceable or not hashable: one lock for all such
            return _shared_fallback_lock
        return lock


class InMemoryChatMemoryRepository:
    """A thread-safe dict of conversations; lost when the process ends. Appends are atomic
    across threads."""

    def __init__(self) -> None:
        self._store: dict[str, list[Message]] = {}
        self._lock = threading.Lock()

    def find_conversation_ids(self) -> list[str]:
        with self._lock:
            return list(self._store)

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        with self._lock:
            return list(self._store.get(conversation_id, ()))

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        with self._lock:
            self._store[conversation_id] = list(messages)

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        retain: RetainPolicy | None = None,
    ) -> None:
        new = list(messages)
        with self._lock:
            combined = [*self._store.get(conversation_id, ()), *new]
            self._store[conversation_id] = _retained(combined, retain)

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        with self._lock:
            self._store.pop(conversation_id, None)
