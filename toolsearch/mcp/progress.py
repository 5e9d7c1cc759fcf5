"""Progress notifications of a tool call, from an upstream MCP server to the proxy's client.

A client that wants progress sends a ``progressToken`` with its ``tools/call`` (or, calling
an in-process server, a callback). The toolsearch server answering the call
(:func:`toolsearch.mcp.server.tool_server`) makes that request's reporter available to its
tool handler as :func:`request_progress`; the SDK's reporter sends nothing when the client
asked for no progress. The proxy calls the upstream tool with a progress callback, and
every notification the upstream server sends during the call reaches the client with the
same ``progress``, ``total`` and ``message``. (The proxy always asks the upstream server
for progress: whether the client asked is not visible for in-process calls, and updates
nobody asked for end at the SDK's no-op reporter.)

The two ends run on different threads: the upstream session on the provider's loop thread
(:mod:`toolsearch.mcp.client`), the client's request on the loop serving it. A
:class:`ProgressRelay` crosses between them: the upstream callback only queues the update
onto the serving loop (``call_soon_threadsafe``, so the upstream session never waits for
the client), one task there sends the updates in arrival order, and leaving the relay
sends what is still queued before the call's result is answered, so the client gets every
notification before the result, as MCP requires (progress for a finished request is
dropped). Progress is best effort: an update that cannot be sent is logged, never an error
of the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["ProgressRelay", "ProgressReporter", "reporting", "request_progress"]

logger = logging.getLogger(__name__)

ProgressReporter = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""``await report(progress, total, message)``: send one progress notification to the
client of the request being answered."""

SEND_TIMEOUT = 5.0
"""Seconds one notification (and the final flush) may take before it is given up."""

_Update = tuple[float, "float | None", "str | None"]

_CURRENT: ContextVar[ProgressReporter | None] = ContextVar("toolsearch_mcp_progress", default=None)


def request_progress() -> ProgressReporter | None:
    """The progress reporter of the ``tools/call`` being answered (``None`` outside one);
    it sends nothing when the client asked for no progress."""
    return _CURRENT.get()


@contextlib.contextmanager
def reporting(report: ProgressReporter | None) -> Iterator[None]:
    """Make ``report`` the :func:`request_progress` of the code run inside the block."""
    token = _CURRENT.set(report)
    try:
        yield
    finally:
        _CURRENT.reset(token)


class ProgressRelay:
    """Forwards progress updates from any thread to ``report`` on the current loop, in order.

    Create it on the loop that serves the client (``async with ProgressRelay(report) as
    relay``) and give :meth:`on_progress` to the upstream call; leaving the block without
    an error waits until every queued update was sent (at most :data:`SEND_TIMEOUT` s).
    """

    def __init__(self, report: ProgressReporter) -> None:
        self._report = report
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[_Update | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        """How many updates reached ``report``."""

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The upstream call's progress callback (runs on the provider's loop): queues the
        update on the serving loop and returns at once."""
        with contextlib.suppress(RuntimeError):  # the serving loop is gone: nobody to tell
            self._loop.call_soon_threadsafe(self._queue.put_nowait, (progress, total, message))

    async def _pump(self) -> None:
        while (update := await self._queue.get()) is not None:
            try:
                await asyncio.wait_for(self._report(*update), SEND_TIMEOUT)
                self.sent += 1
            except Exception as exc:  # progress is best effort
                logger.debug("a progress notification was not forwarded: %s", exc)

    async def __aenter__(self) -> ProgressRelay:
        self._task = self._loop.create_task(self._pump(), name="mcp-progress-relay")
        return self

    async def __aexit__(self, exc_type: Any, *rest: Any) -> None:
        task = self._task
        assert task is not None
        if exc_type is not None:  # the call failed or was cancelled: no flush to wait for
            task.cancel()
            return
        self._queue.put_nowait(None)  # after every update queued so far
        try:
            await asyncio.wait_for(asyncio.shield(task), SEND_TIMEOUT)
        except TimeoutError:
            task.cancel()
            logger.debug("progress notifications still queued were dropped")
