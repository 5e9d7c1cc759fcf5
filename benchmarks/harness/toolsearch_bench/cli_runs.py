"""The ``toolsearch bench`` runs besides the main one: ``--replay`` (logged searches),
``--search-log`` (record a log from the simulated agent) and ``--live`` (a real model)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsearch_bench.cli_support import load_all, usage_error, write_results

if TYPE_CHECKING:
    from toolsearch_bench.live import LiveTaskOutcome

__all__ = ["live_model_factory", "record_log", "run_live_command", "run_replay"]


def record_log(
    progress: Any,
    catalog: Any,
    queries: Any,
    specs: list[Any],
    path: Path,
    max_rounds: int,
    max_results: int,
) -> None:
    """``--search-log``: the simulated agent's tool-search runs, recorded into ``path``."""
    from toolsearch._cli_errors import error_exit
    from toolsearch.search.logs.sink import JsonlSearchLog
    from toolsearch_bench.agent import QueryPolicy
    from toolsearch_bench.replay import record_simulated_log

    spec = next(s for s in specs if not s.peer)
    tasks = f"{len(queries)} task{'s' if len(queries) != 1 else ''}"
    progress.phase(catalog.name, f"search log: {spec.name} ({tasks})", len(queries))
    try:
        with JsonlSearchLog(path) as log:
            record_simulated_log(
                catalog,
                queries,
                spec.factory,
                log,
                policy=QueryPolicy(max_rounds),
                max_results=max_results,
                on_task=progress.advance,
            )
    except OSError as exc:
        progress.fail()
        raise error_exit(exc, 1) from None


def run_replay(
    log_path: Path,
    indexes: list[str],
    *,
    peers: bool,
    catalog_file: Path | None,
    sessions: str | None,
    out: Path,
    json_path: Path | None,
    command: str,
) -> None:
    """``toolsearch bench --replay LOG``: every index on the log's labelled searches."""
    from rich.console import Console
    from rich.table import Table

    from toolsearch.errors import MissingExtraError
    from toolsearch.search.logs.reader import parse_part, read_search_log
    from toolsearch_bench.data import Catalog
    from toolsearch_bench.progress import PhaseProgress
    from toolsearch_bench.replay import (
        replay_cases,
        replay_index,
        result_row,
        write_replay_report,
    )
    from toolsearch_bench.runner import available_indexes

    if not log_path.is_file():
        raise usage_error(f"--replay: no such file: {log_path}")
    if catalog_file is not None and not catalog_file.is_file():
        raise usage_error(f"--catalog: no such file: {catalog_file}")
    if out.exists() and not out.is_dir():
        raise usage_error(f"--out: {out} is a file, not a folder")
    try:
        part = parse_part(sessions) if sessions is not None else None
    except ValueError as exc:
        raise usage_error(f"--sessions: {exc}") from None
    try:
        specs = available_indexes(indexes, peers=peers)
    except MissingExtraError as exc:
        raise usage_error(str(exc)) from None
    except ValueError as exc:
        raise usage_error(f"--index: {exc}") from None
    catalog = None
    if catalog_file is not None:
        try:
            catalog = Catalog.from_jsonl(catalog_file)
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            raise usage_error(f"--catalog: {exc}") from None
    try:
        contents = read_search_log(log_path, sessions=part)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise usage_error(f"--replay: {exc}") from None
    cases, tool_sets, notes = replay_cases(contents, catalog=catalog.tools if catalog else None)
    if not cases:
        searches = len(contents.searches)
        why = (
            "no searches (an empty log, or no session in --sessions)"
            if not searches
            else f"no labelled searches: the model called none of the hits of its {searches:,} "
            "searches"
        )
        if searches and notes["no_tools"]:
            why = (
                f"no tool definitions for {notes['no_tools']:,} labelled searches (a log "
                "written with tools=False): give the tools with --catalog FILE"
            )
        elif searches and notes["not_in_catalog"]:
            why = (
                f"none of the called tools of {notes['not_in_catalog']:,} searches is in --catalog"
            )
        raise usage_error(f"--replay: {log_path} has {why}")
    name = log_path.stem
    results = []
    with PhaseProgress(Console(stderr=True)) as progress:
        for spec in specs:
            progress.phase(name, f"replay: {spec.name} ({len(cases):,} searches)", len(cases))
            results.append(
                replay_index(
                    spec.name,
                    spec.factory,
                    cases,
                    tool_sets,
                    log=str(log_path),
                    on_case=progress.advance,
                )
            )
        progress.finish(name)
    console = Console()
    table = Table(
        title=f"{name}: {len(cases):,} labelled searches of {len(contents.searches):,}, "
        f"{len(tool_sets)} tool set{'s' if len(tool_sets) != 1 else ''}"
    )
    columns = ("index", "searches", "R@1 %", "R@5 %", "R@10 %", "MRR@10 %", "p50 ms")
    for column in columns:
        table.add_column(column, justify="left" if column == "index" else "right", overflow="fold")
    for result in results:
        table.add_row(*result_row(result).values())
    console.print(table)
    console.print(
        "R@k: % of the tools the model called that a search's top k holds (the tools it "
        "already had left out); MRR@10: mean reciprocal rank of the first; p50: median "
        "search latency. The index that wrote the log scores high by construction.",
        style="dim",
        highlight=False,
    )
    summary = {
        "log": str(log_path),
        "sessions": sessions,
        "searches": len(contents.searches),
        "labelled": len(cases),
        **notes,
    }
    write_results(
        console,
        write_replay_report,
        results,
        out,
        command=command,
        json_path=json_path,
        notes=summary,
    )


def live_model_factory(spec: str, base_url: str | None = None) -> Any:
    """The provider model factory for ``--live``, or a clear message and exit code 2."""
    from toolsearch.errors import MissingExtraError, ProviderAuthenticationError
    from toolsearch_bench.live import provider_model_factory

    try:
        return provider_model_factory(spec, base_url=base_url)
    except ValueError as exc:
        raise usage_error(f"--live: {exc}") from None
    except (ProviderAuthenticationError, MissingExtraError) as exc:
        raise usage_error(f"--live: {exc}") from None


def run_live_command(
    console: Any,
    model_factory: Any,
    loaders: list[tuple[str, Any]],
    specs: list[Any],
    *,
    max_results: int,
    limit: int | None,
    out: Path,
    json_path: Path | None,
    command: str,
    searches: tuple[str, ...] = ("toolsearch",),
) -> None:
    """``toolsearch bench --live``: the same tasks against a real model."""
    from rich.console import Console
    from rich.table import Table

    from toolsearch.errors import ProviderAuthenticationError
    from toolsearch_bench.live import run_live
    from toolsearch_bench.progress import PhaseProgress
    from toolsearch_bench.report import write_live_report

    records = []
    try:
        with PhaseProgress(Console(stderr=True)) as progress:
            for catalog, queries in load_all(progress, loaders):
                name = catalog.name
                tasks = min(len(queries), limit) if limit else len(queries)
                current: list[tuple[str, str]] = []

                def start(mode: str, index: str, name: str = name, tasks: int = tasks) -> None:
                    label = "full loop" if mode == "full" else f"tool search: {index}"
                    count = f"{tasks} task{'s' if tasks != 1 else ''}"
                    progress.phase(name, f"live, {label} ({count})", tasks)

                start("full", "-")
                current.append(("full", "-"))

                def on_task(
                    outcome: LiveTaskOutcome,
                    current: list[tuple[str, str]] = current,
                    start: Any = start,
                ) -> None:
                    key = (outcome.mode, outcome.index)
                    if key != current[-1]:
                        current.append(key)
                        start(*key)
                    progress.advance()

                records += run_live(
                    catalog,
                    queries,
                    model_factory,
                    indexes=specs,
                    max_results=max_results,
                    limit=limit,
                    on_task=on_task,
                    searches=searches,
                )
                progress.finish(name)
    except ProviderAuthenticationError as exc:
        raise usage_error(f"--live: {exc}") from None
    title = f"live ({model_factory.__name__}): tool search vs the full tool loop"
    for dataset in dict.fromkeys(r.dataset for r in records):
        table = Table(title=f"{dataset}, {title}")
        for column in ("index", "tokens", "saved %", "success %", "errors"):
            table.add_column(column, justify="left" if column == "index" else "right")
        for r in (r for r in records if r.dataset == dataset):
            table.add_row(
                "full loop" if r.mode == "full" else r.index,
                f"{r.prompt_tokens_mean:,.0f}",
                "-" if r.savings_pct is None else f"{r.savings_pct:.1f}",
                f"{r.success_rate:.1f}",
                str(r.errors),
            )
        console.print(table)
    console.print(
        "tokens: prompt tokens per task (mean, as the provider reported them); saved: % "
        "fewer than the full loop; success: % of tasks whose needed tools were all called; "
        "errors: tasks whose loop failed.",
        style="dim",
        highlight=False,
    )
    write_results(console, write_live_report, records, out, command=command, json_path=json_path)
