"""Talking to a Milvus server: one lazy ``pymilvus.MilvusClient``, a bounded retry policy,
and filter expressions with every value escaped.

The same code serves the three ways to run Milvus: an embedded Milvus Lite file
(``uri="./tools.db"``: pymilvus starts a local Lite server for the file), a Milvus Lite
server (``http://127.0.0.1:PORT``) and a Standalone or Distributed cluster
(``http://host:19530`` with a ``token``). Nothing connects until the first call, so an index
can be constructed while the server is down.

Every call goes through :meth:`MilvusConnection.call`: a failure that may pass (the server
unreachable, a deadline, a rate limit) is retried under :class:`RetryPolicy`; when the
attempts are spent, or on any other server failure, it raises
:class:`~toolsearch.errors.IndexUnavailableError`, which the search tool returns to the
model as an error result instead of failing the conversation.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from toolsearch.errors import IndexUnavailableError, MissingExtraError
from toolsearch.urls import redact_url, scrub_urls

__all__ = [
    "PYMILVUS_RPC_LOGGERS",
    "MilvusConnection",
    "RetryPolicy",
    "in_filter",
    "is_transient",
    "pymilvus",
    "string_literal",
]

T = TypeVar("T")

_LOG = logging.getLogger(__name__)


def pymilvus() -> Any:
    """The ``pymilvus`` module, or :class:`MissingExtraError` naming ``toolsearch[milvus]``."""
    try:  # imported by name: pymilvus ships no type information
        module = importlib.import_module("pymilvus")
    except ImportError as exc:
        raise MissingExtraError("MilvusToolIndex", "milvus", "pymilvus") from exc
    _quiet_rpc_logs()
    return module


PYMILVUS_RPC_LOGGERS = ("pymilvus.decorators", "pymilvus.client.connection_manager")
"""pymilvus's loggers that report each failed RPC (with a traceback) and each failed
reconnection, on a console handler of its own: one outage printed hundreds of lines before
the one error toolsearch reports. :meth:`MilvusConnection.call` logs each retry (INFO) and
raises one typed error, so these are raised to CRITICAL, only where the user set no level
of their own (set one, e.g. ``logging.getLogger("pymilvus.decorators").setLevel("ERROR")``,
to see them again)."""


def _quiet_rpc_logs() -> None:
    for name in PYMILVUS_RPC_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.CRITICAL)


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried: ``attempts`` calls in all, waiting ``backoff``
    seconds after the first failure, then ``factor`` times longer each time, at most
    ``max_backoff``. ``sleep`` is what waits (tests pass a fake one)."""

    attempts: int = 3
    backoff: float = 0.2
    factor: float = 2.0
    max_backoff: float = 2.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.backoff < 0 or self.factor < 1 or self.max_backoff < 0:
            raise ValueError("backoff and max_backoff must be >= 0, factor >= 1")

    def delays(self) -> Iterable[float]:
        """The waits between attempts (one fewer than ``attempts``)."""
        delay = self.backoff
        for _ in range(self.attempts - 1):
            yield min(delay, self.max_backoff)
            delay *= self.factor


_TRANSIENT_GRPC = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "ABORTED"}
_TRANSIENT_WORDS = (
    "unavailable",
    "fail connecting",
    "connection refused",
    "deadline exceeded",
    "timed out",
    "rate limit",
    "socket closed",
)


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` may pass on a retry: the server unreachable or overloaded, a deadline,
    a dropped connection. A bad request or a missing collection is not."""
    if isinstance(error, (ConnectionError, TimeoutError)):
        return True
    code = getattr(error, "code", None)
    name = getattr(code() if callable(code) else code, "name", None)
    if name in _TRANSIENT_GRPC:
        return True
    module = pymilvus()
    exceptions = module.exceptions
    if isinstance(error, (exceptions.MilvusUnavailableException, exceptions.ConnectError)):
        return True
    if isinstance(error, module.MilvusException) and error.code in (2, 8):  # connect, rate
        return True
    text = str(error).lower()
    return any(word in text for word in _TRANSIENT_WORDS)


def string_literal(value: str) -> str:
    """``value`` as a double-quoted Milvus string literal: backslashes, quotes and line
    breaks escaped, so no value can end the literal or change the expression."""
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def in_filter(field_name: str, values: Iterable[str]) -> str:
    """``field in ["a", "b"]`` with every value escaped."""
    return f"{field_name} in [{', '.join(string_literal(v) for v in values)}]"


GRPC_OPTIONS = {
    "grpc.keepalive_time_ms": 360_000,
    "grpc.keepalive_permit_without_calls": False,
    "grpc.max_reconnect_backoff_ms": 5_000,
}
"""The client's channel options. Keepalive: pymilvus pings every 10 s, idle or not; a gRPC
server's default policy allows one ping in 5 minutes without calls, so an idle client (a
test suite between two Milvus files, a worker between requests) got ``GOAWAY
too_many_pings`` after about 2.5 minutes and its next call failed. Measured against Milvus
Lite: with pymilvus's defaults the GOAWAY came; with these, none over 5.5 minutes idle.
Reconnects: gRPC's backoff grows to 120 s, so after a long outage a client could wait two
minutes after the server came back; at most 5 s here."""


class MilvusConnection:
    """A lazily created ``MilvusClient`` and the retry policy around every call. Thread-safe:
    the client (a gRPC channel) is shared by the threads of a process."""

    def __init__(
        self,
        uri: str,
        *,
        token: str = "",
        db_name: str = "",
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        client: Any = None,
    ) -> None:
        pymilvus()  # name the missing extra now, not at the first search
        self.uri = uri
        self.token = token
        self.db_name = db_name
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._client = client
        self._lock = threading.Lock()
        self.calls = 0
        """Calls made to the server (attempts included): what tests count."""

    def client(self) -> Any:
        """The client, connecting on first use (not retried: :meth:`call` retries)."""
        with self._lock:
            if self._client is None:
                self._client = pymilvus().MilvusClient(
                    uri=self.uri,
                    token=self.token,
                    db_name=self.db_name,
                    timeout=self.timeout,
                    grpc_options=GRPC_OPTIONS,
                )
            return self._client

    def call(self, what: str, action: Callable[[Any], T]) -> T:
        """``action(client)``, retried while it fails transiently; any server failure left
        is an :class:`IndexUnavailableError` saying ``what`` failed and where."""
        delays = iter(self.retry.delays())
        while True:
            self.calls += 1
            try:
                return action(self.client())
            except IndexUnavailableError:
                raise
            except Exception as exc:
                if not _is_server_error(exc):
                    raise
                delay = next(delays, None) if is_transient(exc) else None
                if delay is None:
                    raise IndexUnavailableError(
                        f"Milvus at {redact_url(self.uri)} could not {what}: "
                        f"{scrub_urls(_message(exc))}"
                    ) from exc
                _LOG.info(
                    "Milvus %s failed (%s); retrying in %.2f s",
                    what,
                    scrub_urls(str(exc)),
                    delay,
                )
                self.retry.sleep(delay)

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # pragma: no cover - closing a dead connection
                _LOG.debug("closing the Milvus client failed", exc_info=True)

    def __repr__(self) -> str:
        return f"MilvusConnection({redact_url(self.uri)!r})"


def _is_server_error(error: BaseException) -> bool:
    """A failure of the server or the connection to it (pymilvus, gRPC, the network), as
    opposed to a bug of ours (a ``TypeError``...), which propagates as it is."""
    if isinstance(error, (ConnectionError, TimeoutError, OSError)):
        return True
    module = pymilvus()
    if isinstance(error, module.MilvusException):
        return True
    return type(error).__module__.startswith("grpc")


def _message(error: BaseException) -> str:
    message = getattr(error, "message", None)
    text = message if isinstance(message, str) and message else str(error)
    return text.strip() or type(error).__name__
