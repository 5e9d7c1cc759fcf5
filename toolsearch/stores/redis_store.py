"""``RedisSessionStore``: tool-search sessions in Redis, shared by every process that uses it.

Behind a load balancer, a conversation's next request may land on another worker; with this
store that worker sees the tools the conversation discovered, and eviction works across all
workers. Per session, under one hash tag (``{<digest of the session id>}``) so that Redis
Cluster keeps a session's keys on one node and every update is one atomic Lua script:

* ``…:state`` (hash): the session id, its generation (a new one per life), whether it is
  tracked, the last use, the last tool set's fingerprints and names, an eviction request,
  the turn count (``turn``), each discovered tool's last turn of use (``u:<name>``) and the
  working set's tool changes (``changes``, JSON: at most
  :data:`~toolsearch.stores.session_store.MAX_STORED_CHANGES` changes), so they go with
  the session;
* ``…:found`` (list) and ``…:seen`` (set): discovered names in discovery order;
* ``…:leases`` (sorted set): the running requests and index calls, each scored by its
  expiry, so a crashed worker's lease runs out instead of pinning the session for ever.

One sorted set ``<namespace>:lru`` scores the tracked sessions by last use. The eviction
strategies keep their meaning: LRU keeps the ``max_sessions`` most recently used, TTL drops
sessions unused for ``ttl``, a composite does both, never keeps all, always drops a session
when its request ends. A session holding a live lease is never dropped: its eviction waits,
exactly as in :class:`~toolsearch.stores.session_store.InMemorySessionStore`. The LRU set and a
session's keys live on different cluster slots, so an eviction is two steps: pick the
oldest from the set, then drop each one in its own script only if it is idle and was not
used since it was picked (a use in between wins).

Times come from ``clock`` (``time.time`` by default: the workers' clocks must agree), so
tests inject one. Transient connection errors are retried with exponential backoff by
redis-py's own ``Retry``; what still fails raises
:class:`~toolsearch.errors.SessionStoreError`, as does stored data that does not decode
(a damaged tool set or change list).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from toolsearch.chat.options import ToolChange
from toolsearch.errors import MissingExtraError, SessionStoreError
from toolsearch.stores.eviction import (
    AlwaysEvictStrategy,
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    NeverEvictStrategy,
    TtlEvictionStrategy,
)
from toolsearch.stores.session_store import (
    MAX_STORED_CHANGES,
    Lease,
    StoredChanges,
    StoredTools,
    check_changes,
)
from toolsearch.urls import redact_url, scrub_urls

__all__ = ["DEFAULT_LEASE_SECONDS", "RedisSessionStore"]

DEFAULT_LEASE_SECONDS = 600.0
"""How long a request's hold lasts unless it ends first (a crashed worker's runs out)."""

_BEGIN = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'sid', ARGV[1], 'gen', ARGV[5], 'tracked', ARGV[4])
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[6]), ARGV[2])
redis.call('HSET', KEYS[1], 'used', ARGV[3])
local expire = tonumber(redis.call('HGET', KEYS[1], 'tracked') == '1' and ARGV[7] or ARGV[6])
for i = 1, #KEYS do
  if expire > 0 then redis.call('PEXPIRE', KEYS[i], expire) else redis.call('PERSIST', KEYS[i]) end
end
return {redis.call('HGET', KEYS[1], 'gen'), redis.call('HGET', KEYS[1], 'tracked')}
"""

_END = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
if redis.call('HGET', KEYS[1], 'gen') ~= ARGV[2] then return 'stale' end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
local tracked = redis.call('HGET', KEYS[1], 'tracked') == '1'
local idle = redis.call('ZCARD', KEYS[2]) == 0
if idle and (redis.call('HGET', KEYS[1], 'doomed') == '1' or (ARGV[4] == '1' and tracked)) then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  return 'dropped'
end
redis.call('HSET', KEYS[1], 'used', ARGV[3])
local expire = tonumber(tracked and ARGV[5] or ARGV[6])
for i = 1, #KEYS do
  if expire > 0 then redis.call('PEXPIRE', KEYS[i], expire) else redis.call('PERSIST', KEYS[i]) end
end
return 'used'
"""

_DROP = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) > 0 then
  if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'doomed', '1') end
  return 'busy'
end
if tonumber(redis.call('HGET', KEYS[1], 'used') or '0') > tonumber(ARGV[2]) then
  return 'touched'
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return 'dropped'
"""

_LRU = """
if ARGV[1] == '1' then
  local top = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local score = tonumber(ARGV[3])
  if top[1] and top[1] ~= ARGV[2] and tonumber(top[2]) >= score then
    score = tonumber(top[2]) + 0.001
  elseif top[1] and tonumber(top[2]) > score then
    score = tonumber(top[2])
  end
  redis.call('ZADD', KEYS[1], score, ARGV[2])
end
local due = {}
if ARGV[5] ~= '' then
  for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[5])) do
    due[#due + 1] = name
    due[#due + 1] = ARGV[5]
  end
end
local size = tonumber(ARGV[4])
if size >= 0 then
  local excess = redis.call('ZCARD', KEYS[1]) - size
  if excess > 0 then
    for _, item in ipairs(redis.call('ZRANGE', KEYS[1], 0, excess - 1, 'WITHSCORES')) do
      due[#due + 1] = item
    end
  end
end
return due
"""

_MARK = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local turn = redis.call('HGET', KEYS[1], 'turn') or '0'
local added = {}
for i = 1, #ARGV do
  if redis.call('SADD', KEYS[3], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i])
    redis.call('HSET', KEYS[1], 'u:' .. ARGV[i], turn)
    added[#added + 1] = ARGV[i]
  end
end
local expire = redis.call('PTTL', KEYS[1])
if expire > 0 then
  redis.call('PEXPIRE', KEYS[2], expire)
  redis.call('PEXPIRE', KEYS[3], expire)
end
return added
"""


_TURN = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], 'turn', 1)
"""

_USE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local turn = redis.call('HGET', KEYS[1], 'turn') or '0'
for i = 1, #ARGV do
  if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], 'u:' .. ARGV[i], turn)
  end
end
return 1
"""

_UNLOAD = """
local gone = {}
for i = 1, #ARGV do
  if redis.call('SREM', KEYS[3], ARGV[i]) == 1 then
    redis.call('LREM', KEYS[2], 0, ARGV[i])
    redis.call('HDEL', KEYS[1], 'u:' .. ARGV[i])
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
"""

_SET_IF_LIVE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

_USE_PREFIX = "u:"


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise ValueError(f"expected a list of names, got {value!r:.80}")
    return tuple(value)


def _encode_changes(changes: StoredChanges) -> str:
    return json.dumps(
        {
            "held": None if changes.held is None else list(changes.held),
            "changes": [[c.kind, list(c.names), c.after_message] for c in changes.changes],
            "carried": list(changes.carried),
        },
        separators=(",", ":"),
    )


def _decode_changes(raw: str) -> StoredChanges:
    """The stored change list; ``ValueError`` for data that does not decode."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("not an object")
    held, items = data.get("held"), data.get("changes")
    if not isinstance(items, list) or len(items) > MAX_STORED_CHANGES:
        raise ValueError(f"expected at most {MAX_STORED_CHANGES} changes")
    changes = []
    for item in items:
        if not isinstance(item, list) or len(item) != 3:
            raise ValueError(f"expected [kind, names, position], got {item!r:.80}")
        kind, names, after = item
        if kind not in ("add", "remove") or type(after) is not int:
            raise ValueError(f"not a tool change: {item!r:.80}")
        changes.append(ToolChange(kind, _names(names), after))
    return StoredChanges(
        None if held is None else _names(held), tuple(changes), _names(data.get("carried"))
    )


@dataclass(frozen=True)
class _Policy:
    """An eviction strategy as Redis carries it out."""

    max_sessions: int | None = None
    ttl: float | None = None
    after_request: bool = False


def _policy(strategy: EvictionStrategy) -> _Policy:
    if isinstance(strategy, LruEvictionStrategy):
        return _Policy(max_sessions=strategy.max_sessions)
    if isinstance(strategy, TtlEvictionStrategy):
        return _Policy(ttl=strategy.ttl)
    if isinstance(strategy, AlwaysEvictStrategy):
        return _Policy(after_request=True)
    if isinstance(strategy, NeverEvictStrategy):
        return _Policy()
    if isinstance(strategy, CompositeEvictionStrategy):
        parts = [_policy(s) for s in strategy.strategies]
        sizes = [p.max_sessions for p in parts if p.max_sessions is not None]
        ttls = [p.ttl for p in parts if p.ttl is not None]
        return _Policy(
            max_sessions=min(sizes) if sizes else None,
            ttl=min(ttls) if ttls else None,
            after_request=any(p.after_request for p in parts),
        )
    raise TypeError(
        f"RedisSessionStore carries out the built-in strategies (LRU, TTL, composite, never, "
        f"always), not {type(strategy).__name__}: its decisions must be made inside Redis to "
        "hold across processes"
    )


class RedisSessionStore:
    """Session state in Redis: discoveries, the last tool set, leases, LRU and TTL.

    Args:
        url: A Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS, credentials in
            the URL). Or give ``client``.
        client: A ``redis.Redis`` (or ``RedisCluster``) to use instead of ``url``; it must
            decode responses (``decode_responses=True``).
        eviction_strategy: LRU of 1,000 sessions by default; any built-in strategy.
        lease_seconds: How long one request's hold lasts if it never ends (a crashed
            worker); a request running longer may see its session evicted when idle
            sessions are due.
        namespace: Prefix of every key, so several applications share one Redis.
        clock: Wall-clock seconds shared by the workers (``time.time``).
        retries: Retries of a command after a connection error or timeout (exponential
            backoff), before :class:`~toolsearch.errors.SessionStoreError`.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Any = None,
        eviction_strategy: EvictionStrategy | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        namespace: str = "toolsearch",
        clock: Callable[[], float] = time.time,
        retries: int = 3,
    ) -> None:
        try:
            import redis
            from redis.backoff import ExponentialBackoff
            from redis.retry import Retry
        except ImportError as exc:
            raise MissingExtraError("RedisSessionStore", "redis", "redis") from exc
        if (url is None) == (client is None):
            raise TypeError("give a Redis url or a client, not both or neither")
        if not lease_seconds > 0:
            raise ValueError("lease_seconds must be positive")
        if not namespace or "{" in namespace or "}" in namespace:
            raise ValueError("namespace must be non-empty and contain no '{' or '}'")
        self.eviction_strategy = eviction_strategy or LruEvictionStrategy()
        self._policy = _policy(self.eviction_strategy)
        self.lease_seconds = float(lease_seconds)
        self.namespace = namespace
        self._clock = clock
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        if client is None:
            assert url is not None
            retry = Retry(ExponentialBackoff(cap=1.0, base=0.05), retries)
            client = redis.Redis.from_url(
                url,
                decode_responses=True,
                retry=retry,
                retry_on_error=[redis.ConnectionError, redis.TimeoutError],
                socket_connect_timeout=5,
                socket_timeout=5,
            )
        self.client = client
        self._where = redact_url(url) if url else repr(client)
        self._begin = client.register_script(_BEGIN)
        self._end = client.register_script(_END)
        self._drop_script = client.register_script(_DROP)
        self._mark = client.register_script(_MARK)
        self._lru_script = client.register_script(_LRU)
        self._turn = client.register_script(_TURN)
        self._use = client.register_script(_USE)
        self._unload = client.register_script(_UNLOAD)
        self._set_if_live = client.register_script(_SET_IF_LIVE)
        self._lru = f"{namespace}:lru"
        self._dropped: list[str] = []
        self._lock = threading.Lock()

    # -- holds --------------------------------------------------------------------------

    def begin(self, session_id: str, *, tracked: bool = True) -> Lease:
        """One round trip: the session's script and, for a tracked session, the LRU note
        and the choice of sessions due for eviction, in one pipeline."""
        now = self._now_ms()
        lease_id = uuid.uuid4().hex
        argv = [session_id, lease_id, now, int(tracked), uuid.uuid4().hex]
        pipe = self.client.pipeline(transaction=False)
        self._begin(
            keys=self._keys(session_id), args=[*argv, *reversed(self._expiries())], client=pipe
        )
        if tracked:
            self._note_use(pipe, session_id, now)
        replies = self._call(pipe.execute)
        generation, stored_tracked = replies[0]
        if tracked and stored_tracked != "1":  # an untracked session stays out of the LRU
            self._call(self.client.zrem, self._lru, session_id)
        elif tracked:
            self._drop_due(replies[1])
        return Lease(session_id, lease_id, str(generation), stored_tracked == "1")

    def end(self, lease: Lease, *, request: bool = True) -> None:
        """One round trip, as :meth:`begin`; a second only when the session was dropped."""
        now = self._now_ms()
        after = int(request and self._policy.after_request)
        pipe = self.client.pipeline(transaction=False)
        self._end(
            keys=self._keys(lease.session_id),
            args=[lease.lease_id, lease.generation, now, after, *self._expiries()],
            client=pipe,
        )
        if lease.tracked:
            self._note_use(pipe, lease.session_id, now)
        replies = self._call(pipe.execute)
        outcome = replies[0]
        if outcome == "dropped":
            self._forgot(lease.session_id)
        if outcome in ("dropped", "missing") and lease.tracked:  # take back the note
            self._call(self.client.zrem, self._lru, lease.session_id)
        elif lease.tracked:
            self._drop_due(replies[1])

    # -- state ----------------------------------------------------------------------------

    def record_tools(self, session_id: str, tools: StoredTools) -> None:
        state = self._keys(session_id)[0]
        fields = {
            "fingerprints": json.dumps(sorted(tools.fingerprints)),
            "names": json.dumps(list(tools.names)),
        }
        pipe = self.client.pipeline(transaction=True)
        pipe.exists(state)
        pipe.hset(state, mapping=fields)
        exists, _ = self._call(pipe.execute)
        if not exists:  # the session was dropped meanwhile: do not resurrect a husk
            self._call(self.client.delete, state)

    def tools(self, session_id: str) -> StoredTools | None:
        fingerprints, names = self._call(
            self.client.hmget, self._keys(session_id)[0], ["fingerprints", "names"]
        )
        if fingerprints is None:
            return None
        try:
            found, named = json.loads(fingerprints), _names(json.loads(names))
            return StoredTools(frozenset(_names(found)), named)
        except (ValueError, TypeError) as exc:
            raise self._damaged("tool set", exc) from exc

    def record_tool_changes(self, session_id: str, changes: StoredChanges) -> None:
        """One round trip; a session dropped meanwhile keeps nothing (no husk)."""
        check_changes(changes)
        state = self._keys(session_id)[0]
        self._call(self._set_if_live, keys=[state], args=["changes", _encode_changes(changes)])

    def tool_changes(self, session_id: str) -> StoredChanges | None:
        raw = self._call(self.client.hget, self._keys(session_id)[0], "changes")
        if raw is None:
            return None
        try:
            return _decode_changes(raw)
        except (ValueError, TypeError) as exc:
            raise self._damaged("tool changes", exc) from exc

    def mark_discovered(self, session_id: str, names: Iterable[str]) -> list[str]:
        fresh = list(dict.fromkeys(names))
        if not fresh:
            return []
        keys = self._keys(session_id)
        return list(self._call(self._mark, keys=[keys[0], keys[2], keys[3]], args=fresh))

    def discovered(self, session_id: str) -> list[str]:
        return list(self._call(self.client.lrange, self._keys(session_id)[2], 0, -1))

    def begin_turn(self, session_id: str) -> int:
        return int(self._call(self._turn, keys=self._keys(session_id)[:1], args=[]))

    def mark_used(self, session_id: str, names: Iterable[str]) -> None:
        used = list(dict.fromkeys(names))
        if used:
            keys = self._keys(session_id)
            self._call(self._use, keys=[keys[0], keys[3]], args=used)

    def last_used(self, session_id: str) -> dict[str, int]:
        state = self._call(self.client.hgetall, self._keys(session_id)[0])
        return {
            field[len(_USE_PREFIX) :]: int(value)
            for field, value in state.items()
            if field.startswith(_USE_PREFIX)
        }

    def unload(self, session_id: str, names: Iterable[str]) -> list[str]:
        gone = list(dict.fromkeys(names))
        if not gone:
            return []
        keys = self._keys(session_id)
        return list(self._call(self._unload, keys=[keys[0], keys[2], keys[3]], args=gone))

    # -- eviction -------------------------------------------------------------------------

    def evict(self, session_id: str) -> None:
        self._drop(session_id, max_used=float("inf"), doom=True)

    def evict_expired(self) -> list[str]:
        return self._evict_due(self._now_ms())

    def take_dropped(self) -> list[str]:
        with self._lock:
            out, self._dropped = list(dict.fromkeys(self._dropped)), []
            return out

    def session_ids(self) -> list[str]:
        """The tracked sessions, least recently used first."""
        return list(self._call(self.client.zrange, self._lru, 0, -1))

    def __contains__(self, session_id: object) -> bool:
        if not isinstance(session_id, str):
            return False
        return bool(self._call(self.client.exists, self._keys(session_id)[0]))

    def __len__(self) -> int:
        """The number of tracked sessions."""
        return int(self._call(self.client.zcard, self._lru))

    def clear(self) -> None:
        """Drop every session of this namespace (for tests and resets; not atomic)."""
        keys = self._call(lambda: list(self.client.scan_iter(match=f"{self.namespace}:*")))
        if keys:
            self._call(self.client.delete, *keys)

    def __repr__(self) -> str:
        return f"RedisSessionStore({self._where}, {self.eviction_strategy!r})"

    # -- internals ------------------------------------------------------------------------

    def _keys(self, session_id: str) -> list[str]:
        """The session's keys, one hash tag: ``state``, ``leases``, ``found``, ``seen``."""
        tag = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        base = f"{self.namespace}:{{{tag}}}"
        return [f"{base}:state", f"{base}:leases", f"{base}:found", f"{base}:seen"]

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)

    def _expiries(self) -> tuple[int, int]:
        """The keys' expiry for a tracked session and for a throwaway one."""
        return self._expire_ms(), self._lease_ms()

    def _expire_ms(self) -> int:
        """The keys' own expiry, a backstop for a session no sweep reaches (0: none).

        Under a policy that drops a session after each request (``AlwaysEvictStrategy``),
        a session outlives no request: a worker that crashed mid-request leaves keys that
        expire with its lease, instead of keys with no expiry at all."""
        if self._policy.after_request:
            ttl = self._policy.ttl
            return self._lease_ms() + (0 if ttl is None else int(ttl * 1000))
        if self._policy.ttl is None:
            return 0
        return int((self._policy.ttl + self.lease_seconds) * 1000)

    def _note_use(self, pipe: Any, session_id: str | None, now: int) -> None:
        """Queue the LRU script: note a use of ``session_id`` in the LRU set (ordered after
        every earlier use, even in the same millisecond) and pick the sessions the policy
        says are due (LRU beyond the bound, TTL past), as name/limit pairs."""
        policy = self._policy
        cutoff = "" if policy.ttl is None else str(now - int(policy.ttl * 1000))
        size = -1 if policy.max_sessions is None else policy.max_sessions
        argv = [int(session_id is not None), session_id or "", now, size, cutoff]
        self._lru_script(keys=[self._lru], args=argv, client=pipe)

    def _evict_due(self, now: int) -> list[str]:
        pipe = self.client.pipeline(transaction=False)
        self._note_use(pipe, None, now)
        return self._drop_due(self._call(pipe.execute)[0])

    def _drop_due(self, due: list[str]) -> list[str]:
        """Drop each due session in its own script, if it is idle and was not used since it
        was picked (a use in between wins)."""
        dropped: list[str] = []
        for session_id, max_used in zip(due[::2], due[1::2], strict=True):
            if session_id not in dropped and self._drop(session_id, max_used=float(max_used)):
                dropped.append(session_id)
        return dropped

    def _drop(self, session_id: str, *, max_used: float, doom: bool = False) -> bool:
        """Drop one session if it is idle and unused since ``max_used`` (``doom``: else
        drop it when its last lease ends); returns whether it was dropped."""
        limit = "+inf" if max_used == float("inf") else repr(max_used)
        outcome = self._call(
            self._drop_script,
            keys=self._keys(session_id),
            args=[self._now_ms(), limit, int(doom)],
        )
        if outcome in ("dropped", "missing"):
            self._call(self.client.zrem, self._lru, session_id)
        if outcome == "dropped":
            self._forgot(session_id)
            return True
        return False

    def _forgot(self, session_id: str) -> None:
        with self._lock:
            self._dropped.append(session_id)

    def _damaged(self, what: str, exc: Exception) -> SessionStoreError:
        return SessionStoreError(
            f"the Redis session store at {self._where} holds a session's {what} that does "
            f"not decode (damaged or written by another version): {type(exc).__name__}: {exc}"
        )

    def _call(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one Redis command or script; its failure is a :class:`SessionStoreError`."""
        try:
            return function(*args, **kwargs)
        except self._errors as exc:
            raise SessionStoreError(
                f"the Redis session store at {self._where} failed: "
                f"{type(exc).__name__}: {scrub_urls(str(exc))}"
            ) from exc
