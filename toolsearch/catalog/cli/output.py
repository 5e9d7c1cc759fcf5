"""How ``toolsearch index`` prints: a build's progress (live rows on a terminal, counted
lines in a log) and tables that fit the terminal's width."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LOG_EVERY",
    "STAGE_LABELS",
    "BuildLog",
    "build_progress",
    "fields_table",
    "results_table",
]


STAGE_LABELS = {
    "model": "loading the embedding model",
    "scan": "files scanned for names",
    "read": "files read",
    "tools": "tools analyzed",
    "embedded": "tools embedded",
    "indexing": "vectors indexed",
}
"""What a build's progress stages are called on screen and in a log."""

LOG_EVERY = 10.0
"""Seconds between two progress lines of a stage in a log (:class:`BuildLog`)."""

_UNCOUNTED = frozenset({"model"})
"""Stages whose count means nothing to a reader (0 of 1, then 1 of 1): timed only."""


def _duration(seconds: float) -> str:
    """``0.4 s``, ``42 s``, ``3 min 12 s``, ``1 h 02 min``."""
    if seconds < 9.95:
        return f"{max(0.0, seconds):.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _rate(per_second: float) -> str:
    return f"{per_second:,.0f}/s" if per_second >= 10 else f"{per_second:.1f}/s"


@dataclass
class _Stage:
    started: float
    first_done: int
    last_line: float
    done: int = 0
    total: int | None = None
    ended: bool = False
    shown: bool = False
    """The last line written shows the current count."""


class BuildLog:
    """A build's progress as plain lines, for a log file or CI (stderr not a terminal).

    A line when a stage starts (``[build] tools embedded ...``), then at most one every
    ``every`` seconds per stage with its count, rate and, once the total is known, the
    percentage and the time left::

        [build] tools embedded 4,096 of 20,000 (20 %, 310/s, ETA 51 s)

    and one when it ends (``done == total``): ``[build] tools embedded 20,000 of 20,000
    in 1 min 04 s (312/s)``. ``close()`` writes the last count of a stage that never
    reached its total. ``clock`` (seconds, monotonic) is injectable for tests.
    """

    def __init__(
        self,
        write: Callable[[str], None],
        *,
        every: float = LOG_EVERY,
        clock: Callable[[], float] = time.monotonic,
        labels: dict[str, str] | None = None,
        prefix: str = "[build]",
    ) -> None:
        self._write = write
        self._every = every
        self._clock = clock
        self._labels = STAGE_LABELS if labels is None else labels
        self._prefix = prefix
        self._stages: dict[str, _Stage] = {}

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        now = self._clock()
        state = self._stages.get(stage)
        if state is None:
            state = self._stages[stage] = _Stage(started=now, first_done=done, last_line=now)
            self._write(f"{self._prefix} {self._label(stage)} ...")
        elif state.ended:
            return
        state.shown = state.shown and (done, total) == (state.done, state.total)
        state.done, state.total = done, total
        if total is not None and done >= total:
            state.ended = True
            self._line(stage, state, now)
        elif now - state.last_line >= self._every:
            self._line(stage, state, now)

    def close(self) -> None:
        """Write the last count of every stage whose last line does not show it."""
        now = self._clock()
        for stage, state in self._stages.items():
            if not state.ended and not state.shown:
                self._line(stage, state, now)

    def _label(self, stage: str) -> str:
        return self._labels.get(stage, stage)

    def _line(self, stage: str, state: _Stage, now: float) -> None:
        state.last_line = now
        state.shown = True
        elapsed = now - state.started
        label = self._label(stage)
        if stage in _UNCOUNTED:
            if state.ended:
                self._write(f"{self._prefix} {label}: done in {_duration(elapsed)}")
            else:
                self._write(f"{self._prefix} {label} ... {_duration(elapsed)}")
            return
        done, total = state.done, state.total
        count = f"{done:,}" if total is None else f"{done:,} of {total:,}"
        counted = done - state.first_done
        rate = counted / elapsed if counted > 0 and elapsed >= 1 else None  # else noise
        if state.ended:
            details = [f"in {_duration(elapsed)}"] if elapsed > 0 else []
            if rate is not None:
                details.append(f"({_rate(rate)})")
            self._write(" ".join([f"{self._prefix} {label} {count}", *details]))
            return
        parts = []
        if total:
            parts.append(f"{100 * done // total} %")
        if rate is not None:
            parts.append(_rate(rate))
            if total is not None:
                parts.append(f"ETA {_duration((total - done) / rate)}")
        self._write(f"{self._prefix} {label} {count}" + (f" ({', '.join(parts)})" if parts else ""))


@contextmanager
def build_progress(console: Any) -> Iterator[Callable[[str, int, int | None], None]]:
    """A build's ``progress(stage, done, total)`` on ``console``: live rows on a terminal
    (count, time left once the total is known, time spent), else :class:`BuildLog`
    lines."""
    if not console.is_terminal:

        def write(line: str) -> None:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
            flush = getattr(console.file, "flush", None)
            if callable(flush):
                flush()

        log = BuildLog(write, every=LOG_EVERY)
        try:
            yield log
        finally:
            log.close()
        return
    from rich.progress import (
        Progress,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Count(ProgressColumn):
        """``1,234`` while the total is unknown, ``1,234 of 2,639`` once it is."""

        def render(self, task: Any) -> Text:
            if task.fields.get("uncounted"):
                return Text("")
            total = "" if task.total is None else f" of {task.total:,.0f}"
            return Text(f"{task.completed:,.0f}{total}")

    class Remaining(TimeRemainingColumn):
        """``ETA 0:00:51`` while a stage with a known total runs."""

        def render(self, task: Any) -> Text:
            if task.total is None or task.finished or task.fields.get("uncounted"):
                return Text("")
            return Text.assemble(("ETA ", "progress.remaining"), super().render(task))

    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        Count(),
        Remaining(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        tasks: dict[str, Any] = {}

        def report(stage: str, done: int, total: int | None) -> None:
            task = tasks.get(stage)
            if task is None:  # no total yet: None, not rich's default of 100
                task = tasks[stage] = progress.add_task(
                    STAGE_LABELS.get(stage, stage), total=total, uncounted=stage in _UNCOUNTED
                )
            progress.update(task, completed=done, total=total)

        yield report


_TABLE_OVERHEAD = 3
"""Per column of a boxed rich table: a border and one space of padding on each side (plus
one border for the table)."""


def results_table(rows: Sequence[tuple[str, str, str]], width: int) -> Any:
    """The ``index search`` table for a console ``width`` columns wide: rank and score
    never wrap, a tool name stays whole while the summary keeps a readable width (a name
    longer than its column folds), the summary wraps (a long word folds)."""
    from rich.cells import cell_len
    from rich.markup import escape
    from rich.table import Table

    rank_width = len(str(len(rows)))
    score_width = max([len("score"), *(len(score) for _, score, _ in rows)])
    name_width = max([len("tool"), *(cell_len(name) for name, _, _ in rows)])
    summary_width = max(
        [len("summary"), *(cell_len(line) for *_, text in rows for line in text.splitlines())]
    )
    room = width - 1 - _TABLE_OVERHEAD * 4 - rank_width - score_width
    summary_floor = min(summary_width, 20)
    tool_width = max(min(name_width, room - summary_floor), min(name_width, 12))
    table = Table()
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("tool", width=tool_width, overflow="fold")
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("summary", overflow="fold")
    for rank, (name, score, summary) in enumerate(rows, start=1):
        table.add_row(str(rank), escape(name), score, escape(summary))
    return table


def fields_table(title: str, rows: Sequence[tuple[str, str]]) -> Any:
    """A two-column table of fields and values (``index info``): the field names never
    wrap, the values wrap to the console's width (a long word, a path, folds)."""
    from rich.table import Table

    table = Table(title=title, show_header=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for field, value in rows:
        table.add_row(field, value)
    return table
