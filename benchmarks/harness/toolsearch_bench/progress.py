"""Progress of ``toolsearch bench``: every phase of every dataset, terminal or not.

On a terminal, a rich progress bar per dataset shows the current phase (full loop, tool
search, retrieval and latency, memory), its steps and its elapsed time. When the output is
not a terminal (a log, a pipe, CI), one plain line per phase says what runs and, when it
ends, how long it took::

    [bench] acme: full loop (421 tasks) ... done in 12.3 s

The line is written up to ``...`` when the phase starts (so a stalled phase is visible in
the log) and completed when it ends; nothing is printed per step.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

__all__ = ["PhaseProgress", "format_seconds"]

PREFIX = "[bench]"


def format_seconds(seconds: float) -> str:
    """``12.3 s``, ``3 min 12 s`` or ``1 h 02 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class PhaseProgress:
    """Phases of datasets on ``console``: a live bar if it is a terminal, else lines.

    ``phase(dataset, text, total)`` starts a phase (ending the one before), ``advance()``
    counts one of its ``total`` steps (``None``: not counted), ``finish(dataset)`` ends the
    dataset's last phase. Use it as a context manager.
    """

    def __init__(self, console: Any, *, live: bool | None = None) -> None:
        self.console = console
        self.live = console.is_terminal if live is None else live
        self._progress: Any = None
        self._bars: dict[str, Any] = {}
        self._current: tuple[str, str] | None = None
        self._phase_started = 0.0
        self._dataset_started: dict[str, float] = {}

    def __enter__(self) -> PhaseProgress:
        if self.live:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
            )
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._end_phase(failed=kind is not None)
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def phase(self, dataset: str, text: str, total: int | None = None) -> None:
        """Start ``text`` of ``dataset`` (``total`` steps, or ``None`` when not counted)."""
        self._end_phase()
        self._current = (dataset, text)
        self._phase_started = time.perf_counter()
        self._dataset_started.setdefault(dataset, self._phase_started)
        if self._progress is not None:
            description = f"{dataset}: {text}"
            bar = self._bars.get(dataset)
            if bar is None:
                self._bars[dataset] = self._progress.add_task(description, total=total)
            else:
                self._progress.reset(bar, total=total, completed=0, description=description)
        else:
            self._write(f"{PREFIX} {dataset}: {text} ... ")

    def advance(self, steps: int = 1) -> None:
        """One step (or ``steps``) of the current phase done."""
        if self._progress is not None and self._current is not None:
            self._progress.advance(self._bars[self._current[0]], steps)

    def finish(self, dataset: str, summary: str = "") -> None:
        """End ``dataset``'s last phase; say how long the whole dataset took."""
        self._end_phase()
        started = self._dataset_started.get(dataset, time.perf_counter())
        took = format_seconds(time.perf_counter() - started)
        text = f"{dataset}: done in {took}" + (f" ({summary})" if summary else "")
        if self._progress is not None:
            bar = self._bars.get(dataset)
            if bar is not None:
                total = self._progress.tasks[bar].total
                self._progress.update(bar, description=text, total=total or 1, completed=total or 1)
                self._progress.stop_task(bar)
        else:
            self._write(f"{PREFIX} {text}\n")

    def fail(self) -> None:
        """End the current phase as stopped (before an error message is printed)."""
        self._end_phase(failed=True)
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _end_phase(self, *, failed: bool = False) -> None:
        if self._current is None:
            return
        self._current = None
        if self._progress is None:
            took = format_seconds(time.perf_counter() - self._phase_started)
            self._write(("stopped after " if failed else "done in ") + took + "\n")

    def _write(self, text: str) -> None:
        self.console.print(text, end="", markup=False, highlight=False, soft_wrap=True)
        flush = getattr(self.console.file, "flush", None)
        if callable(flush):
            flush()
