"""When a tool-search session is dropped: LRU, TTL, both, never, or after every request.

Strategies only *decide*; the :class:`~toolsearch.search.registry.SessionRegistry` acts,
lazily on each access (no background thread), and never evicts a session while one of its
requests is running or its tools are being indexed (it waits until they end). Evicting a
session clears every index key it has (one per tool set), in the same locked step as the
decision. Built on cachetools; every strategy is thread-safe, and time-based ones take an
injectable ``clock`` for tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol, runtime_checkable

import cachetools

__all__ = [
    "AlwaysEvictStrategy",
    "CompositeEvictionStrategy",
    "EvictionStrategy",
    "LruEvictionStrategy",
    "NeverEvictStrategy",
    "TtlEvictionStrategy",
]

Clock = Callable[[], float]


@runtime_checkable
class EvictionStrategy(Protocol):
    """Tracks session use and names the sessions to evict."""

    def touch(self, session_id: str) -> None:
        """The session was used now (created or accessed)."""

    def remove(self, session_id: str) -> None:
        """The session is gone; forget it."""

    def expired(self) -> list[str]:
        """Sessions to evict now (each named once)."""

    def evict_after_request(self, session_id: str) -> bool:
        """Whether to drop the session as soon as its request ends."""


class _RecordingLRUCache(cachetools.LRUCache):  # type: ignore[type-arg]
    """An LRU cache that remembers the keys it pushed out."""

    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize)
        self.pushed_out: list[Any] = []

    def popitem(self) -> tuple[Any, Any]:
        key, value = super().popitem()
        self.pushed_out.append(key)
        return key, value


class LruEvictionStrategy:
    """Keep at most ``max_sessions``; the least recently used goes first (the default)."""

    def __init__(self, max_sessions: int = 1000) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.max_sessions = max_sessions
        self._cache = _RecordingLRUCache(max_sessions)
        self._lock = threading.Lock()

    def touch(self, session_id: str) -> None:
        with self._lock:
            if session_id in self._cache:
                self._cache[session_id]  # refreshes recency
            else:
                self._cache[session_id] = True

    def remove(self, session_id: str) -> None:
        with self._lock:
            self._cache.pop(session_id, None)

    def expired(self) -> list[str]:
        with self._lock:
            out, self._cache.pushed_out = self._cache.pushed_out, []
            return out

    def evict_after_request(self, session_id: str) -> bool:
        return False

    def __repr__(self) -> str:
        return f"LruEvictionStrategy(max_sessions={self.max_sessions})"


class TtlEvictionStrategy:
    """Evict a session ``ttl`` after its last use (seconds or a ``timedelta``)."""

    def __init__(self, ttl: float | timedelta, *, clock: Clock = time.monotonic) -> None:
        seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else float(ttl)
        if not seconds > 0 or seconds == float("inf"):  # also rejects NaN
            raise ValueError("ttl must be a positive, finite number of seconds")
        self.ttl = seconds
        self._cache: cachetools.TTLCache[str, bool] = cachetools.TTLCache(
            maxsize=float("inf"), ttl=seconds, timer=clock
        )
        self._expired: list[str] = []
        self._lock = threading.Lock()

    def touch(self, session_id: str) -> None:
        with self._lock:
            # TTLCache drops expired entries silently on writes: collect them first
            self._expired.extend(key for key, _ in self._cache.expire() if key != session_id)
            self._cache[session_id] = True  # re-setting restarts the clock

    def remove(self, session_id: str) -> None:
        with self._lock:
            self._cache.pop(session_id, None)

    def expired(self) -> list[str]:
        with self._lock:
            found = [*self._expired, *(key for key, _ in self._cache.expire())]
            self._expired = []
            return list(dict.fromkeys(found))

    def evict_after_request(self, session_id: str) -> bool:
        return False

    def __repr__(self) -> str:
        return f"TtlEvictionStrategy(ttl={self.ttl})"


class CompositeEvictionStrategy:
    """Evict when any of the strategies says so (e.g. LRU size and TTL together)."""

    def __init__(self, *strategies: EvictionStrategy) -> None:
        if not strategies:
            raise ValueError("CompositeEvictionStrategy needs at least one strategy")
        self.strategies = strategies

    def touch(self, session_id: str) -> None:
        for strategy in self.strategies:
            strategy.touch(session_id)

    def remove(self, session_id: str) -> None:
        for strategy in self.strategies:
            strategy.remove(session_id)

    def expired(self) -> list[str]:
        names: dict[str, None] = {}
        for strategy in self.strategies:
            names.update(dict.fromkeys(strategy.expired()))
        return list(names)

    def evict_after_request(self, session_id: str) -> bool:
        return any(s.evict_after_request(session_id) for s in self.strategies)

    def __repr__(self) -> str:
        return f"CompositeEvictionStrategy{self.strategies!r}"


class NeverEvictStrategy:
    """Keep every session until it is evicted explicitly."""

    def touch(self, session_id: str) -> None:
        return None

    def remove(self, session_id: str) -> None:
        return None

    def expired(self) -> list[str]:
        return []

    def evict_after_request(self, session_id: str) -> bool:
        return False


class AlwaysEvictStrategy(NeverEvictStrategy):
    """Drop every session when its request ends, so each request re-indexes (for tests)."""

    def evict_after_request(self, session_id: str) -> bool:
        return True
