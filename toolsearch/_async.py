"""The package's one bridge between synchronous and asynchronous code.

Imported lazily (it loads asyncio), and built on the standard library only, because the
core's sync paths need it without any extra installed (``anyio``, whose
``BlockingPortal`` does the same job, comes only with ``toolsearch[mcp]``).

- :class:`LoopThread`: an event loop in a daemon thread for as long as its owner needs
  it. Coroutines are submitted from any thread; sync callers block on the result, async
  callers on any other loop await it. The MCP provider keeps one for its lifetime: every
  MCP session lives on it.
- :func:`run_sync`: wait for an awaitable from sync code. Without a running loop in this
  thread it is ``asyncio.run``; inside one (sync code called from async code, a notebook
  cell) it runs on a short-lived :class:`LoopThread`, so it never deadlocks the caller's
  loop.
- :func:`iterate_in_thread`: consume a blocking iterator from async code.

Both directions keep the caller's ``contextvars`` (a coroutine submitted to a loop thread
runs in a copy of the submitting thread's context).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["LoopThread", "collect", "iterate_in_thread", "resolve", "run_sync"]

_JOIN_TIMEOUT = 10.0


class LoopThread:
    """An asyncio event loop running in its own daemon thread.

    The loop is finalized as ``asyncio.run`` finalizes its own (leftover tasks cancelled,
    async generators and the default executor shut down) when :meth:`stop` is called or
    the ``with`` block ends.
    """

    def __init__(self, name: str = "toolsearch-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        with asyncio.Runner(loop_factory=lambda: self.loop):
            self.loop.run_forever()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    @property
    def in_loop_thread(self) -> bool:
        """Whether the caller runs on this loop's thread (where it must not block)."""
        return threading.current_thread() is self._thread

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coroutine`` on the loop from any thread; its future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine`` on the loop in the background (from any thread), keeping the
        task referenced until it ends; its exception, if any, is the task's alone."""

        def start() -> None:
            task = self.loop.create_task(coroutine)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        if self.in_loop_thread:
            start()
        else:
            self.loop.call_soon_threadsafe(start)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coroutine`` on the loop and wait here for its result.

        Raises :class:`TimeoutError` (the coroutine is cancelled) after ``timeout`` seconds,
        and :class:`RuntimeError` on the loop's own thread, which cannot wait for itself.
        """
        if self.in_loop_thread:
            coroutine.close()
            raise RuntimeError("a blocking call cannot run on its own event loop's thread")
        future = self.submit(coroutine)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    async def run_async(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` on this loop from any loop (this one included)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - only called from async code
            running = None
        if running is self.loop:
            return await coroutine
        return await asyncio.wrap_future(self.submit(coroutine))

    def stop(self) -> None:
        """End the loop (idempotent). From another thread this waits for the thread; from
        the loop's own thread the loop stops once the current callback returns."""
        if self.loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # closed meanwhile
            self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_loop_thread:
            self._thread.join(timeout=_JOIN_TIMEOUT)

    def __enter__(self) -> LoopThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LoopThread({self._thread.name!r}, {state})"


def run_sync(awaitable: Awaitable[T]) -> T:
    """Wait for an awaitable from synchronous code.

    Without a running event loop in this thread it uses ``asyncio.run``; inside one (sync
    code called from async code) it runs on a fresh loop in a worker thread
    (:class:`LoopThread`), so it never deadlocks the caller's loop.
    """
    coroutine = resolve(awaitable)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with LoopThread("toolsearch-run-sync") as worker:
        return worker.run(coroutine)


async def resolve(awaitable: Awaitable[T]) -> T:
    """Await anything awaitable (``asyncio.run`` only takes coroutines)."""
    return await awaitable


async def collect(iterator: AsyncIterator[T]) -> list[T]:
    """Every item of an async iterator, in a list."""
    return [item async for item in iterator]


async def iterate_in_thread(iterator: Iterator[T]) -> AsyncIterator[T]:
    """Consume a blocking iterator in worker threads, item by item, without blocking the loop."""
    done: Any = object()
    while True:
        item = await asyncio.to_thread(next, iterator, done)
        if item is done:
            return
        yield item
