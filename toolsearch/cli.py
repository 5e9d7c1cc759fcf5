"""The ``toolsearch`` command line.

``toolsearch bench`` (needs ``toolsearch[bench]``), ``toolsearch index ...``
(``toolsearch[catalog]``) and ``toolsearch mcp ...`` (``toolsearch[mcp]``).
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsearch._quiet import quiet_model_loading

if TYPE_CHECKING:
    from toolsearch.bench.live import LiveTaskOutcome

__all__ = ["default_out", "main"]


def _app() -> Any:
    import typer
    from rich.console import Console

    app = typer.Typer(add_completion=False, help="toolsearch: tool search for LLM tool calling.")

    @app.callback()
    def root() -> None:
        """toolsearch command line."""

    from toolsearch.catalog.cli import index_app
    from toolsearch.mcp.cli import mcp_app
    from toolsearch.tuning.cli import embedder_app

    app.add_typer(index_app(), name="index")
    app.add_typer(mcp_app(), name="mcp")
    app.add_typer(embedder_app(), name="embedder")

    @app.command()
    def bench(
        datasets: list[str] = typer.Option(
            ["acme"],
            "--dataset",
            "-d",
            help="acme (bundled), livemcpbench, bfcl, nestful, tau2; repeatable",
        ),
        indexes: list[str] = typer.Option(
            ["bm25", "regex", "hybrid"],
            "--index",
            "-i",
            help="regex, bm25, vector, hybrid; vector:EMBEDDER or hybrid:EMBEDDER for "
            "another embedder (static, tuned, a model folder); repeatable",
        ),
        peers: bool = typer.Option(True, help="also measure the ported peer methods"),
        runs: int = typer.Option(5, min=1, help="repetitions of the latency measurement"),
        memory: bool = typer.Option(
            True, help="measure each index's peak memory (one child process per index)"
        ),
        provider: str = typer.Option("openai", help="request shape: openai, anthropic, gemini"),
        tokenizer: str = typer.Option("o200k_base", help="o200k_base or cl100k_base"),
        max_rounds: int = typer.Option(12, min=1, help="searches per task at most"),
        max_results: int = typer.Option(5, min=1, max=10, help="tools per search"),
        catalog_file: Path | None = typer.Option(
            None, "--catalog", help="your own catalog (JSONL: name, description, input_schema)"
        ),
        queries_file: Path | None = typer.Option(
            None, "--queries", help="your own requests (JSONL: id, text, gold) for --catalog"
        ),
        out: Path | None = typer.Option(
            None,
            help="report folder (default: a new dated folder in toolsearch's cache, "
            "printed at the end)",
            show_default=False,
        ),
        json_path: Path | None = typer.Option(None, "--json", help="also write records here"),
        live: str | None = typer.Option(
            None,
            "--live",
            help="a real model instead of the simulated agent: PROVIDER:MODEL "
            "(openai:gpt-4o-mini, anthropic:..., gemini:...); needs its API key",
        ),
        live_limit: int = typer.Option(
            50, min=0, help="live mode: the first N tasks of each dataset (0: all; each costs)"
        ),
        replay: Path | None = typer.Option(
            None,
            "--replay",
            help="score the --index indexes on the searches of this search log instead "
            "(a called tool is the relevant one); --catalog FILE searches that catalog "
            "instead of the logged tool sets",
            show_default=False,
        ),
        sessions: str | None = typer.Option(
            None,
            "--sessions",
            help="with --replay: only the sessions in part K of N, by session hash (1/2, "
            "2/2: two halves, e.g. to train on one and replay the other)",
            show_default=False,
        ),
        search_log: Path | None = typer.Option(
            None,
            "--search-log",
            help="also run the simulated agent through tool search with the first --index "
            "and append its searches and calls to this search log (JSONL)",
            show_default=False,
        ),
    ) -> None:
        """Token savings, success rate, retrieval quality and latency of tool search.

        Progress goes to stderr, the table to stdout and the report into --out. With
        --replay LOG: retrieval quality of each index on a search log's searches.
        """
        from toolsearch.bench.agent import QueryPolicy
        from toolsearch.bench.progress import PhaseProgress
        from toolsearch.bench.report import write_report
        from toolsearch.bench.runner import run_dataset

        quiet_model_loading()
        if out is None:
            out = default_out()
        given = dict(locals())
        command = _command_line(bench, given, out)
        if replay is not None:
            if queries_file is not None or live is not None or search_log is not None:
                raise _usage_error("--replay goes without --queries, --live and --search-log")
            _run_replay(
                replay,
                indexes,
                peers=peers,
                catalog_file=catalog_file,
                sessions=sessions,
                out=out,
                json_path=json_path,
                command=command,
            )
            return
        if sessions is not None:
            raise _usage_error("--sessions goes with --replay")
        if search_log is not None and (live is not None or search_log.is_dir()):
            raise _usage_error(
                "--search-log: a file to append to, and the simulated agent only (not --live)"
            )
        model_factory = _live_model_factory(live) if live is not None else None
        counter, specs, loaders = _prepare(
            datasets,
            indexes,
            peers=peers,
            provider=provider,
            tokenizer=tokenizer,
            catalog_file=catalog_file,
            queries_file=queries_file,
            out=out,
        )
        console = Console()
        if model_factory is not None:
            _run_live(
                console,
                model_factory,
                loaders,
                specs,
                max_results=max_results,
                limit=live_limit or None,
                out=out,
                json_path=json_path,
                command=command,
            )
            return
        records = []
        with PhaseProgress(Console(stderr=True)) as progress:
            for catalog, queries in _load_all(progress, loaders):
                name = catalog.name
                records += run_dataset(
                    catalog,
                    queries,
                    specs,
                    counter=counter,
                    provider=provider,  # type: ignore[arg-type]
                    policy=QueryPolicy(max_rounds),
                    max_results=max_results,
                    runs=runs,
                    on_phase=partial(progress.phase, name),
                    on_task=progress.advance,
                    memory=memory,
                )
                if search_log is not None:
                    _record_log(
                        progress, catalog, queries, specs, search_log, max_rounds, max_results
                    )
                progress.finish(name)
        _print_table(console, records)
        _write(console, write_report, records, out, command=command, json_path=json_path)

    return app


def _record_log(
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
    from toolsearch.bench.agent import QueryPolicy
    from toolsearch.bench.replay import record_simulated_log
    from toolsearch.search.search_log import JsonlSearchLog

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


def _run_replay(
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

    from toolsearch.bench.data import Catalog
    from toolsearch.bench.progress import PhaseProgress
    from toolsearch.bench.replay import (
        replay_cases,
        replay_index,
        result_row,
        write_replay_report,
    )
    from toolsearch.bench.runner import available_indexes
    from toolsearch.errors import MissingExtraError
    from toolsearch.search.search_log import parse_part, read_search_log

    if not log_path.is_file():
        raise _usage_error(f"--replay: no such file: {log_path}")
    if catalog_file is not None and not catalog_file.is_file():
        raise _usage_error(f"--catalog: no such file: {catalog_file}")
    if out.exists() and not out.is_dir():
        raise _usage_error(f"--out: {out} is a file, not a folder")
    try:
        part = parse_part(sessions) if sessions is not None else None
    except ValueError as exc:
        raise _usage_error(f"--sessions: {exc}") from None
    try:
        specs = available_indexes(indexes, peers=peers)
    except MissingExtraError as exc:
        raise _usage_error(str(exc)) from None
    except ValueError as exc:
        raise _usage_error(f"--index: {exc}") from None
    catalog = None
    if catalog_file is not None:
        try:
            catalog = Catalog.from_jsonl(catalog_file)
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            raise _usage_error(f"--catalog: {exc}") from None
    try:
        contents = read_search_log(log_path, sessions=part)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise _usage_error(f"--replay: {exc}") from None
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
        raise _usage_error(f"--replay: {log_path} has {why}")
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
    _write(
        console,
        write_replay_report,
        results,
        out,
        command=command,
        json_path=json_path,
        notes=summary,
    )


def default_out() -> Path:
    """A new folder for one run's report: ``<cache>/bench/<YYYYmmdd-HHMMSS>``.

    ``<cache>`` is toolsearch's cache folder (``$TOOLSEARCH_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/toolsearch``, else ``~/.cache/toolsearch``): never the working
    directory, so a run inside a clone leaves ``git status`` clean. A second run within
    the same second gets ``-2``, ``-3``... appended.
    """
    import time

    from toolsearch.indexes.tuned import default_cache_dir

    base = default_cache_dir() / "bench" / time.strftime("%Y%m%d-%H%M%S")
    candidate, number = base, 1
    while candidate.exists():
        number += 1
        candidate = base.with_name(f"{base.name}-{number}")
    return candidate


def _command_line(command: Any, values: dict[str, Any], out: Path) -> str:
    """The command that reproduces this run, for the report: ``toolsearch bench`` with
    every option that differs from its default (long names, in --help order), and always
    ``--out``."""
    import inspect
    import shlex

    words = ["toolsearch", "bench"]
    for name, parameter in inspect.signature(command).parameters.items():
        info = parameter.default
        if name == "out" or name not in values or values[name] == info.default:
            continue
        value = values[name]
        flag = "--" + name.replace("_", "-")
        option = max(
            (d for d in info.param_decls or () if d.startswith("--")), key=len, default=flag
        )
        if isinstance(value, bool):
            words.append(flag if value else f"--no-{flag[2:]}")
            continue
        for item in value if isinstance(value, list) else [value]:
            words += [option, str(item)]
    words += ["--out", str(out)]
    return shlex.join(words)


def _usage_error(message: str) -> Any:
    """``error: <message>`` on stderr and exit code 2: bad input, never a traceback."""
    from toolsearch._cli_errors import error_exit

    return error_exit(ValueError(message), 2)


def _prepare(
    datasets: list[str],
    indexes: list[str],
    *,
    peers: bool,
    provider: str,
    tokenizer: str,
    catalog_file: Path | None,
    queries_file: Path | None,
    out: Path,
) -> tuple[Any, list[Any], list[tuple[Any, Any]]]:
    """Check every input before any work: the token counter, the index specs and the
    datasets' loaders (``--catalog`` and ``--queries`` read and checked), or a one-line
    error and exit code 2."""
    from toolsearch.bench.loaders import DATASETS
    from toolsearch.bench.runner import available_indexes
    from toolsearch.bench.tokens import BpeTokenCounter
    from toolsearch.errors import MissingExtraError

    if (catalog_file is None) != (queries_file is None):
        given, missing = (
            ("--catalog", "--queries")
            if queries_file is None
            else (
                "--queries",
                "--catalog",
            )
        )
        raise _usage_error(f"{given} needs {missing}: a catalog and its requests go together")
    for option, path in (("--catalog", catalog_file), ("--queries", queries_file)):
        if path is not None and not path.is_file():
            raise _usage_error(f"{option}: no such file: {path}")
    if catalog_file is None:
        unknown = [d for d in datasets if d not in DATASETS]
        if unknown:
            raise _usage_error(
                f"--dataset: unknown dataset {', '.join(map(repr, unknown))}; "
                f"choose from {', '.join(DATASETS)}"
            )
    if provider not in ("openai", "anthropic", "gemini"):
        raise _usage_error(
            f"--provider: unknown request shape {provider!r}; choose openai, anthropic or gemini"
        )
    if tokenizer not in ("o200k_base", "cl100k_base"):
        raise _usage_error(
            f"--tokenizer: unknown encoding {tokenizer!r}; choose o200k_base or cl100k_base"
        )
    if out.exists() and not out.is_dir():
        raise _usage_error(f"--out: {out} is a file, not a folder")
    try:
        counter = BpeTokenCounter(tokenizer)
        specs = available_indexes(indexes, peers=peers)
    except MissingExtraError as exc:
        raise _usage_error(str(exc)) from None
    except ValueError as exc:  # an unknown index or embedder name
        raise _usage_error(f"--index: {exc}") from None
    if catalog_file is not None and queries_file is not None:
        mine = _load_user(catalog_file, queries_file)
        return counter, specs, [(mine[0].name, lambda: mine)]
    return counter, specs, [(name, DATASETS[name]) for name in dict.fromkeys(datasets)]


def _load_all(progress: Any, loaders: list[tuple[str, Any]]) -> list[tuple[Any, Any]]:
    """Every dataset, before any is run (a missing one fails now, not after the first)."""
    from toolsearch.errors import MissingExtraError

    loaded = []
    for name, loader in loaders:
        progress.phase(name, "loading", None)
        try:
            catalog, queries = loader()
        except MissingExtraError as exc:  # DatasetUnavailableError: the pip command
            progress.fail()
            raise _usage_error(str(exc)) from None
        if not len(queries):
            progress.fail()
            raise _usage_error(f"dataset {name!r} has no queries")
        loaded.append((catalog, queries))
    return loaded


def _load_user(catalog_file: Path, queries_file: Path) -> tuple[Any, Any]:
    """``--catalog`` and ``--queries``, checked: errors name the file and line or tool."""
    from toolsearch.bench.data import Catalog, QuerySet

    try:
        catalog = Catalog.from_jsonl(catalog_file)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise _usage_error(f"--catalog: {exc}") from None
    try:
        queries = QuerySet.from_jsonl(queries_file)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise _usage_error(f"--queries: {exc}") from None
    if not len(catalog):
        raise _usage_error(f"--catalog: {catalog_file} has no tools")
    if not len(queries):
        raise _usage_error(f"--queries: {queries_file} has no requests (one JSON object a line)")
    try:
        queries.validate_against(catalog)
    except ValueError as exc:
        raise _usage_error(f"--queries: {queries_file}: {exc} ({catalog_file})") from None
    return catalog, queries


_LEGEND = (
    "tokens: prompt tokens per task (mean, every request of the loop); saved: % fewer "
    "than the full loop; success: % of tasks whose needed tools were all found and "
    "called; R@5: % of needed tools in a search's top 5; p50: median search latency; "
    "MB: peak memory the index added."
)


def _print_table(console: Any, records: list[Any]) -> None:
    """One table per dataset, within the console's width (80 columns in a pipe)."""
    from rich.table import Table

    for dataset in dict.fromkeys(r.dataset for r in records):
        rows = [r for r in records if r.dataset == dataset]
        first = rows[0]
        table = Table(
            title=f"{dataset} ({first.tools} tools, {first.tasks} tasks): "
            "tool search vs the full tool loop",
        )
        for column, justify in (
            ("index", "left"),
            ("tokens", "right"),
            ("saved %", "right"),
            ("success %", "right"),
            ("R@5 %", "right"),
            ("p50 µs", "right"),
            ("MB", "right"),
        ):
            # a long index name (hybrid:minilm-tuned-openapi-only) folds, never cut
            table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for r in rows:
            table.add_row(
                "full loop" if r.mode == "full" else r.index,
                f"{r.prompt_tokens_mean:,.0f}",
                "-" if r.savings_pct is None else f"{r.savings_pct:.1f}",
                f"{r.success_rate:.1f}",
                "-" if r.recall_at_5 is None else f"{r.recall_at_5:.1f}",
                "-" if r.p50_us is None else f"{r.p50_us:,.0f}",
                _megabytes(r.peak_rss_mb),
            )
        console.print(table)
    console.print(_LEGEND, style="dim", highlight=False)


def _megabytes(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def _write(console: Any, writer: Any, records: Any, out: Path, **kwargs: Any) -> None:
    """Write the report and say where it went (a path on its own line, never wrapped)."""
    from toolsearch._cli_errors import error_exit

    try:
        written = writer(records, out, **kwargs)
    except OSError as exc:
        raise error_exit(exc, 1) from None
    names = ", ".join(p.name if p.parent == out else str(p) for p in written)
    console.print(f"wrote {names} to:", highlight=False)
    console.print(str(out), highlight=False, soft_wrap=True, markup=False)


def _live_model_factory(spec: str) -> Any:
    """The provider model factory for ``--live``, or a clear message and exit code 2."""
    from toolsearch.bench.live import provider_model_factory
    from toolsearch.errors import MissingExtraError, ProviderAuthenticationError

    try:
        return provider_model_factory(spec)
    except ValueError as exc:
        raise _usage_error(f"--live: {exc}") from None
    except (ProviderAuthenticationError, MissingExtraError) as exc:
        raise _usage_error(f"--live: {exc}") from None


def _run_live(
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
) -> None:
    """``toolsearch bench --live``: the same tasks against a real model."""
    from rich.console import Console
    from rich.table import Table

    from toolsearch.bench.live import run_live
    from toolsearch.bench.progress import PhaseProgress
    from toolsearch.bench.report import write_live_report
    from toolsearch.errors import ProviderAuthenticationError

    records = []
    try:
        with PhaseProgress(Console(stderr=True)) as progress:
            for catalog, queries in _load_all(progress, loaders):
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
                )
                progress.finish(name)
    except ProviderAuthenticationError as exc:
        raise _usage_error(f"--live: {exc}") from None
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
    _write(console, write_live_report, records, out, command=command, json_path=json_path)


def main() -> None:
    try:
        app = _app()
    except ImportError as exc:
        print(
            f"toolsearch's command line needs typer and rich ({exc.name} is missing); "
            "install the extra of the command you want: pip install 'toolsearch[catalog]' "
            "(toolsearch index), 'toolsearch[mcp]' (toolsearch mcp) or 'toolsearch[bench]' "
            "(toolsearch bench)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    app()


if __name__ == "__main__":
    main()
