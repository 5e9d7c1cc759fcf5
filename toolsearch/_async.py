"""Bridges between synchronous and asynchronous code (imported lazily: it loads asyncio)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["iterate_in_thread", "resolve", "run_sync"]


def run_sync(awaitable: Awaitable[T]) -> T:
    """Wait for an awaitable from synchronous code.

    Without a running event loop in this thread it uses ``asyncio.run``; inside one (sync
    code called from async code) it runs on a fresh loop in a worker thread, so it never
    deadlocks the caller's loop.
    """
    coroutine = resolve(awaitable)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def resolve(awaitable: Awaitable[T]) -> T:
    """Await anything awaitable (``asyncio.run`` only takes coroutines)."""
    return await awaitable


async def collect(iterator: AsyncIterator[T]) -> list[T]:
    return [item async for item in iterator]


async def iterate_in_thread(iterator: Iterator[T]) -> AsyncIterator[T]:
    """Consume a blocking iterator in worker threads, item by item, without blocking the loop."""
    done: Any = object()
    while True:
        item = await asyncio.to_thread(next, iterator, done)
        if item is done:
            return
        yield item
