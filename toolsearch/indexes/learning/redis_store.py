"""``RedisUsageStore``: one usage memory in Redis, shared by every worker that uses it.

The document is one string key (``<namespace>:usage``, JSON as in a file). A save is a
merge in an optimistic transaction: ``WATCH`` the key, read it, merge this worker's
catalogs in, ``MULTI`` / ``SET`` / ``EXEC``; when another worker wrote in between, the
transaction fails and the merge is done again on what it wrote. So no worker's learning
is lost to another's save, and each save also brings this worker what the others
learned. Redis keeps the key across worker restarts (and across its own, with
persistence on).

Redis errors (after redis-py's own retries of transient connection errors) and a
document that cannot be read raise :class:`~toolsearch.errors.UsageMemoryError`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from toolsearch.errors import MissingExtraError, UsageMemoryError
from toolsearch.indexes.learning.model import Catalog, UsageParams
from toolsearch.indexes.learning.persist import parse, rebound
from toolsearch.indexes.learning.store import _combined, _dump
from toolsearch.urls import redact_url

__all__ = ["RedisUsageStore"]

MAX_ATTEMPTS = 50
"""Merges tried before a save gives up (each one lost a race to another worker's save)."""


class RedisUsageStore:
    """A usage-memory document under ``<namespace>:usage`` in Redis.

    Args:
        url: The Redis URL (``redis://host:6379/0``); or ``client``, a ``redis.Redis``.
        namespace: The key prefix (one memory per namespace).
        retries: redis-py's retries of a transient connection error.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Any = None,
        namespace: str = "toolsearch",
        retries: int = 3,
    ) -> None:
        try:
            import redis
            from redis.backoff import ExponentialBackoff
            from redis.retry import Retry
        except ImportError as exc:
            raise MissingExtraError("RedisUsageStore", "redis", "redis") from exc
        if (url is None) == (client is None):
            raise TypeError("give a Redis url or a client, not both or neither")
        if not namespace:
            raise ValueError("namespace must be non-empty")
        self.key = f"{namespace}:usage"
        self._where = redact_url(url) if url is not None else repr(client)
        self._redis = redis
        if client is None:
            assert url is not None
            client = redis.Redis.from_url(
                url,
                retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), retries),
                retry_on_error=[redis.ConnectionError, redis.TimeoutError],
                socket_connect_timeout=5,
                socket_timeout=5,
            )
        self.client = client

    def __repr__(self) -> str:
        return f"RedisUsageStore({self._where!r}, key={self.key!r})"

    def _fail(self, exc: BaseException) -> UsageMemoryError:
        return UsageMemoryError(f"{self!r}: {type(exc).__name__}: {exc}"[:500])

    def read(self, params: UsageParams, now: float) -> dict[str, Catalog]:
        try:
            raw = self.client.get(self.key)
        except self._redis.RedisError as exc:
            raise self._fail(exc) from None
        return {} if raw is None else rebound(parse(raw, self), params, now)

    def merge_in(
        self,
        catalogs: Mapping[str, Catalog],
        params: UsageParams,
        now: float,
        *,
        replace: bool = False,
    ) -> dict[str, Catalog]:
        redis = self._redis
        try:
            for attempt in range(MAX_ATTEMPTS):
                with self.client.pipeline() as pipe:
                    try:
                        pipe.watch(self.key)
                        raw = None if replace else pipe.get(self.key)
                        stored = {} if raw is None else parse(raw, self)
                        merged = _combined(stored, catalogs, params, now, replace)
                        pipe.multi()
                        pipe.set(self.key, _dump(merged, params, now))
                        pipe.execute()
                        return merged
                    except redis.WatchError:
                        time.sleep(min(0.2, 0.005 * (attempt + 1)))
        except redis.RedisError as exc:
            raise self._fail(exc) from None
        raise UsageMemoryError(f"{self!r}: gave up merging after {MAX_ATTEMPTS} conflicting saves")

    def clear(self) -> None:
        """Delete the stored document."""
        try:
            self.client.delete(self.key)
        except self._redis.RedisError as exc:
            raise self._fail(exc) from None
