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
    from rich.progress import TaskID

    from toolsearch.bench.live import LiveTaskOutcome

__all__ = ["main"]


def _app() -> Any:
    import typer
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

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
            help="regex, bm25, vector, hybrid; vector:EMBEDDER or hybrid:EMBEDDER for another "
            "embedder (static, tuned, a model folder); repeatable",
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
        out: Path = typer.Option(Path("benchmarks/results/bench"), help="report folder"),
        json_path: Path | None = typer.Option(None, "--json", help="also write records here"),
        live: str | None = typer.Option(
            None,
            "--live",
            help="run against a real model instead of the simulated agent: PROVIDER:MODEL "
            "(openai:gpt-4o-mini, anthropic:..., gemini:...); needs the provider's API key",
        ),
        live_limit: int = typer.Option(
            50, min=0, help="live mode: the first N tasks of each dataset (0: all; each costs)"
        ),
    ) -> None:
        """Token savings, success rate, retrieval quality and latency of tool search."""
        from toolsearch.bench.agent import QueryPolicy
        from toolsearch.bench.loaders import DATASETS
        from toolsearch.bench.report import write_report
        from toolsearch.bench.runner import available_indexes, run_dataset
        from toolsearch.bench.tokens import BpeTokenCounter

        console = Console(width=max(Console().width, 120))  # keep the table readable in pipes
        quiet_model_loading()
        loaders: dict[str, Any] = dict(DATASETS)
        if (catalog_file is None) != (queries_file is None):
            raise typer.BadParameter("--catalog and --queries go together")
        if catalog_file is not None and queries_file is not None:
            from toolsearch.bench.data import Catalog, QuerySet

            def load_user(catalog_file: Path = catalog_file, queries_file: Path = queries_file):
                catalog = Catalog.from_jsonl(catalog_file)
                queries = QuerySet.from_jsonl(queries_file)
                queries.validate_against(catalog)
                return catalog, queries

            loaders[catalog_file.stem] = load_user
            datasets = [catalog_file.stem]
        unknown = [d for d in datasets if d not in loaders]
        if unknown:
            raise typer.BadParameter(f"unknown dataset(s) {unknown}; choose from {list(loaders)}")
        if provider not in ("openai", "anthropic", "gemini"):
            raise typer.BadParameter("provider must be openai, anthropic or gemini")
        model_factory = _live_model_factory(live) if live is not None else None
        counter = BpeTokenCounter(tokenizer)
        try:
            specs = available_indexes(indexes, peers=peers)
        except ValueError as exc:  # an unknown index or embedder name
            raise typer.BadParameter(str(exc), param_hint="--index") from None
        if model_factory is not None:
            _run_live(
                console,
                model_factory,
                [(name, loaders[name]) for name in datasets],
                specs,
                max_results=max_results,
                limit=live_limit or None,
                out=out,
                json_path=json_path,
            )
            return
        records = []
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            for name in datasets:
                catalog, queries = loaders[name]()
                total = len(queries) * (1 + len(specs))
                bar = progress.add_task(f"{name}: full loop", total=total)

                def on_step(text: str, bar: TaskID = bar, name: str = name) -> None:
                    progress.update(bar, description=f"{name}: {text}")

                records += run_dataset(
                    catalog,
                    queries,
                    specs,
                    counter=counter,
                    provider=provider,  # type: ignore[arg-type]
                    policy=QueryPolicy(max_rounds),
                    max_results=max_results,
                    runs=runs,
                    on_step=on_step,
                    on_task=partial(progress.advance, bar),
                    memory=memory,
                )
        table = Table(title="tool search vs the full tool loop")
        for column in (
            "dataset",
            "mode",
            "index",
            "prompt tokens",
            "savings %",
            "success %",
            "R@5",
            "p50 µs",
            "peak MB",
        ):
            table.add_column(
                column,
                justify="left" if column in ("dataset", "mode", "index") else "right",
                no_wrap=column == "index",
            )
        for r in records:
            table.add_row(
                r.dataset,
                r.mode,
                r.index,
                f"{r.prompt_tokens_mean:,.0f}",
                "-" if r.savings_pct is None else f"{r.savings_pct:.1f}",
                f"{r.success_rate:.1f}",
                "-" if r.recall_at_5 is None else f"{r.recall_at_5:.1f}",
                "-" if r.p50_us is None else f"{r.p50_us:,.0f}",
                "-" if r.peak_rss_mb is None else f"{r.peak_rss_mb:,.1f}",
            )
        console.print(table)
        command = "toolsearch " + " ".join(sys.argv[1:])
        written = write_report(records, out, command=command, json_path=json_path)
        console.print("wrote " + ", ".join(str(p) for p in written))

    return app


def _live_model_factory(spec: str) -> Any:
    """The provider model factory for ``--live``, or a clear message and exit code 2."""
    import typer

    from toolsearch.bench.live import provider_model_factory
    from toolsearch.errors import MissingExtraError, ProviderAuthenticationError

    try:
        return provider_model_factory(spec)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--live") from None
    except (ProviderAuthenticationError, MissingExtraError) as exc:
        typer.echo(f"toolsearch bench --live: {exc}", err=True)
        raise typer.Exit(2) from None


def _run_live(
    console: Any,
    model_factory: Any,
    datasets: list[tuple[str, Any]],
    specs: list[Any],
    *,
    max_results: int,
    limit: int | None,
    out: Path,
    json_path: Path | None,
) -> None:
    """``toolsearch bench --live``: the same tasks against a real model."""
    import typer
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from toolsearch.bench.live import run_live
    from toolsearch.bench.report import write_live_report
    from toolsearch.errors import ProviderAuthenticationError

    records = []
    try:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            for name, loader in datasets:
                catalog, queries = loader()
                tasks = min(len(queries), limit) if limit else len(queries)
                bar = progress.add_task(f"{name}: live", total=tasks * (1 + len(specs)))

                def on_task(outcome: LiveTaskOutcome, bar: TaskID = bar, name: str = name) -> None:
                    progress.update(
                        bar, advance=1, description=f"{name}: live, {outcome.mode} {outcome.index}"
                    )

                records += run_live(
                    catalog,
                    queries,
                    model_factory,
                    indexes=specs,
                    max_results=max_results,
                    limit=limit,
                    on_task=on_task,
                )
    except ProviderAuthenticationError as exc:
        typer.echo(f"toolsearch bench --live: {exc}", err=True)
        raise typer.Exit(2) from None
    table = Table(title=f"live: tool search vs the full tool loop ({model_factory.__name__})")
    for column in ("dataset", "mode", "index", "prompt tokens", "savings %", "success %", "errors"):
        table.add_column(
            column, justify="left" if column in ("dataset", "mode", "index") else "right"
        )
    for r in records:
        table.add_row(
            r.dataset,
            r.mode,
            r.index,
            f"{r.prompt_tokens_mean:,.0f}",
            "-" if r.savings_pct is None else f"{r.savings_pct:.1f}",
            f"{r.success_rate:.1f}",
            str(r.errors),
        )
    console.print(table)
    command = "toolsearch " + " ".join(sys.argv[1:])
    written = write_live_report(records, out, command=command, json_path=json_path)
    console.print("wrote " + ", ".join(str(p) for p in written))


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
