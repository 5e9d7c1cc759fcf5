"""Rebuilding a usage memory from a search log: the records fed in order, as live learning
would have received them (:meth:`~toolsearch.indexes.learning.memory.UsageMemory.replay`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Protocol

from toolsearch.indexes.learning.model import ReplayStats
from toolsearch.search.logs.reader import iter_search_log
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch

__all__ = ["replay"]


class _Log(Protocol):
    def record_search(self, search: LoggedSearch) -> None: ...

    def record_calls(self, calls: LoggedCalls) -> None: ...


def replay(
    memory: _Log,
    records: str | os.PathLike[str] | Iterable[LoggedSearch | LoggedCalls],
    events: Callable[[], int],
    progress: Callable[[int], None] | None = None,
) -> ReplayStats:
    """Feed ``records`` (a JSONL path, or records) to ``memory`` in order; ``events``
    counts what it learned so far, ``progress`` is called with each record's count."""
    source = iter_search_log(records) if isinstance(records, str | os.PathLike) else records
    searches = calls = learned = 0
    for count, record in enumerate(source, 1):
        if isinstance(record, LoggedSearch):
            searches += 1
            memory.record_search(record)
        else:
            calls += 1
            before = events()
            memory.record_calls(record)
            learned += events() - before
        if progress is not None:
            progress(count)
    return ReplayStats(searches, calls, learned)
