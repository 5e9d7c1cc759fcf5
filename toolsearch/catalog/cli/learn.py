"""``toolsearch index learn LOG --out FILE``: rebuild a usage memory from a search log.

The command replays a JSONL search log (``JsonlSearchLog``) into a
:class:`~toolsearch.indexes.learning.memory.UsageMemory` in file order, exactly as the memory would
have learned live as the advisor's search log, and saves it atomically to ``--out`` (the
file ``LearnedToolIndex`` reads, kept beside the index it serves). Only searches followed
by a *successful* call of one of their hits count; a log written before outcomes were
recorded teaches nothing unless ``--count-unknown`` says to trust its calls.

The memory file holds user request text (the search queries): store it like the log.

``--evaluate`` is the shadow evaluation: the log's last ``--holdout`` share of labeled
searches is held back, the memory learns from what came before, and each tool set's tail
is scored R@k cold and learned with the ``--index`` inner index; it prints both, and a tool
set whose learned ranking scores worse is saved as *not served* (a learned index answers
cold for it and keeps learning). The memory written to ``--out`` still learns the whole
log.

Register it on a Typer app with ``app.command("learn")(learn_command)``. User errors (a
missing or malformed log, an unreadable ``--out`` with ``--append``) print one line and
exit with 1; bad options exit with 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from toolsearch._cli_errors import error_exit

__all__ = ["learn_command"]


def _count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def learn_command(
    log: Annotated[
        Path,
        typer.Argument(help="A JSONL search log (JsonlSearchLog).", show_default=False),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="The usage memory file to write (JSON).", show_default=False
        ),
    ],
    half_life_days: Annotated[
        float | None,
        typer.Option(help="Weights halve every this many days (0: no time decay)."),
    ] = 90.0,
    half_life_events: Annotated[
        float | None,
        typer.Option(help="Weights halve every this many later learned requests of a tool set."),
    ] = None,
    max_per_tool: Annotated[int, typer.Option(help="Distinct requests kept per tool.")] = 32,
    per_session_per_tool: Annotated[
        int, typer.Option(help="Requests one session may teach one tool.")
    ] = 3,
    min_sessions: Annotated[
        int, typer.Option(help="A tool's requests are searched once this many sessions taught it.")
    ] = 1,
    count_unknown: Annotated[
        bool,
        typer.Option(
            "--count-unknown",
            help="Also learn from calls whose success the log did not record (older logs).",
        ),
    ] = False,
    append: Annotated[
        bool,
        typer.Option("--append", help="Learn on top of the memory already in --out."),
    ] = False,
    evaluate: Annotated[
        bool,
        typer.Option(
            "--evaluate",
            help="Replay a held-back tail: R@k cold vs learned; a tool set that gets worse "
            "is saved as not served.",
        ),
    ] = False,
    holdout: Annotated[
        float, typer.Option(help="--evaluate: the share of labeled searches held back.")
    ] = 0.2,
    index: Annotated[
        str, typer.Option(help="--evaluate: the inner index spec (bm25, vector, hybrid...).")
    ] = "vector",
    k: Annotated[int, typer.Option("-k", help="--evaluate: R@k.")] = 5,
) -> None:
    """Rebuild a usage memory (the requests that led to successful calls) from a search log."""
    from rich.console import Console
    from rich.table import Table

    from toolsearch.catalog.cli.output import build_progress
    from toolsearch.indexes.learning.memory import UsageMemory, UsageMemoryError, UsageParams

    try:
        params = UsageParams(
            max_per_tool=max_per_tool,
            per_session_per_tool=per_session_per_tool,
            min_sessions=min_sessions,
            half_life_days=half_life_days or None,
            half_life_events=half_life_events or None,
            count_unknown_outcomes=count_unknown,
        )
    except ValueError as exc:
        raise error_exit(exc, 2) from None
    if not log.is_file():
        raise error_exit(FileNotFoundError(f"no search log at {log}"))
    try:
        memory = UsageMemory(out if append else None, params=params)
        total = _count_lines(log)
        with build_progress(Console(stderr=True)) as report:
            stats = memory.replay(
                log,
                progress=lambda done: report("records", done, total) if done % 500 == 0 else None,
            )
            report("records", total, total)
        verdicts = _evaluate(log, params, holdout, index, k) if evaluate else []
        for verdict in verdicts:
            memory.set_serving(verdict.tool_set, verdict.serve)
        memory.save(out)
    except (UsageMemoryError, ValueError, OSError) as exc:
        raise error_exit(exc) from None
    held = memory.stats()
    table = Table(title=f"usage memory {out}", show_header=False, title_justify="left")
    for label, value in [
        ("searches read", stats.searches),
        ("call turns read", stats.calls),
        ("requests learned", stats.learned),
        ("tool sets", held["tool_sets"]),
        ("tools with requests", held["tools"]),
        ("requests held", held["requests"]),
        ("sessions (hashed)", held["sessions"]),
    ]:
        table.add_row(label, f"{value:,}")
    console = Console()
    console.print(table)
    console.print(
        "It holds user request text (search queries): store it like the search log.",
        highlight=False,
    )
    if evaluate:
        _print_evaluation(console, verdicts, holdout, k)
    if stats.calls and not stats.learned and not count_unknown:
        console.print(
            "Nothing learned: no call in the log is recorded as a success (a log written "
            "before outcomes were recorded needs --count-unknown).",
            highlight=False,
        )


def _evaluate(log: Path, params: Any, holdout: float, spec: str, k: int) -> list[Any]:
    from toolsearch.indexes import make_index
    from toolsearch.indexes.learning.evaluate import evaluate_log

    if k < 1:
        raise ValueError("-k must be at least 1")
    return evaluate_log(log, lambda: make_index(spec), params=params, holdout=holdout, k=k)


def _print_evaluation(console: Any, verdicts: list[Any], holdout: float, k: int) -> None:
    from rich.table import Table

    if not verdicts:
        console.print(
            "Nothing to evaluate: no labeled search in the held-back tail has its tool set "
            "in the log.",
            highlight=False,
        )
        return
    table = Table(title=f"held-back tail ({holdout:.0%} of labeled searches), R@{k}")
    for column in ("tool set", "scored", "cold", "learned", "served"):
        table.add_column(column, justify="left" if column == "tool set" else "right")
    for v in verdicts:
        table.add_row(
            v.tool_set[:16],
            str(v.scored),
            f"{v.cold:.1f}",
            f"{v.learned:.1f} ({v.learned - v.cold:+.1f})",
            "yes" if v.serve else "no (shadow)",
        )
    console.print(table)
