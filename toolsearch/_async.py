"""Running coroutines from synchronous code, and the reverse."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["run_sync", "to_thread"]


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code.

    Without a running event loop in this thread it uses ``asyncio.run``; inside one (a sync
    tool called from async code) it runs the coroutine on a fresh loop in a worker thread,
    so it never deadlocks the caller's loop.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def to_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking ``fn`` in a worker thread without blocking the event loop."""
    return await asyncio.to_thread(fn, *args, **kwargs)


def is_awaitable(value: object) -> bool:
    return isinstance(value, Awaitable)
