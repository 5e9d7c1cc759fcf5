"""A door built inside a running event loop starts that loop's worker threads then, so its
first requests (ten at once, each sending its search to ``asyncio.to_thread``) start no
thread on the loop: starting one waits for the new thread to take the GIL."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

from toolsearch import _first_use

WORKERS = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor's threads


@pytest.fixture
def thread_starts(monkeypatch):
    """The names of the threads started (``Thread.start``)."""
    started: list[str] = []
    real = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        real(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    return started


async def _first_requests() -> None:
    """As many concurrent first requests as the executor has threads, each holding its
    thread until all have one."""
    barrier = threading.Barrier(WORKERS, timeout=120)  # a bound for failure only
    await asyncio.gather(*(asyncio.to_thread(barrier.wait) for _ in range(WORKERS)))


def test_a_door_built_in_a_loop_leaves_no_thread_start_to_its_first_requests(thread_starts):
    async def main() -> tuple[int, int]:
        _first_use.start_loop_workers()  # what a door's constructor does, through preload()
        at_build = len(thread_starts)
        await asyncio.sleep(0.1)  # the started threads finish their short wait
        await _first_requests()
        return at_build, len(thread_starts) - at_build

    at_build, at_requests = asyncio.run(main())
    assert at_build == WORKERS  # started when the door was built
    assert at_requests == 0  # the requests found every thread started


def test_without_it_the_first_requests_start_the_threads(thread_starts):
    asyncio.run(_first_requests())
    workers = [name for name in thread_starts if name.startswith("asyncio_")]
    assert len(workers) == WORKERS  # what the test above sees at build time instead


def test_once_per_loop_and_nothing_outside_a_loop(thread_starts):
    _first_use.start_loop_workers()  # no running loop: nothing to start
    assert thread_starts == []

    async def main() -> int:
        _first_use.start_loop_workers()
        first = len(thread_starts)
        _first_use.start_loop_workers()  # a second door built in the same loop
        return len(thread_starts) - first

    assert asyncio.run(main()) == 0
