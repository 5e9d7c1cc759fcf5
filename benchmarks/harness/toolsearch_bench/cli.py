"""``toolsearch bench``: the benchmark's command (the ``toolsearch`` command line forwards
to it when this harness is installed)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from toolsearch._quiet import quiet_model_loading
from toolsearch.indexes.kinds import embedding_kind_names, kind_names
from toolsearch.models.providers import provider_names
from toolsearch_bench.cli_runs import live_model_factory, record_log, run_live_command, run_replay
from toolsearch_bench.cli_support import (
    command_line,
    default_out,
    load_all,
    prepare_run,
    print_table,
    usage_error,
    write_results,
)

__all__ = ["bench_app"]


def bench_app() -> Any:
    """The ``bench`` command as a typer app of its own."""
    import typer
    from rich.console import Console

    app = typer.Typer(add_completion=False)

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
            help=f"{', '.join(kind_names())}; "
            f"{' or '.join(f'{name}:EMBEDDER' for name in embedding_kind_names())} for "
            "another embedder (static, tuned, a model folder); milvus reads MILVUS_URI; "
            "repeatable",
        ),
        peers: bool = typer.Option(True, help="also measure the ported peer methods"),
        runs: int = typer.Option(5, min=1, help="repetitions of the latency measurement"),
        memory: bool = typer.Option(
            True, help="measure each index's peak memory (one child process per index)"
        ),
        provider: str = typer.Option(
            "openai",
            help="request shape and prompt cache: openai, openai-results (the advisor's "
            "injection='results'), openai-responses (the Responses API, client tool_search), "
            "anthropic, anthropic-defer (its defer_loading tool search), anthropic-changes "
            "(its mid-conversation tool_addition / tool_removal beta), gemini",
        ),
        tokenizer: str = typer.Option("o200k_base", help="o200k_base or cl100k_base"),
        cache_read: float | None = typer.Option(
            None,
            min=0.0,
            max=1.0,
            help="price of a cached input token as a share of a fresh one (default: the "
            "provider's current family: openai 0.1 as GPT-5.6, anthropic 0.1, gemini 0.25)",
            show_default=False,
        ),
        traffic: float = typer.Option(
            30.0,
            min=1.0,
            help="seconds between two conversations, for the cache's TTL (the report also "
            "bills every 2, 4 and 10 minutes)",
        ),
        warm_set: bool = typer.Option(
            False,
            "--warm-set",
            help="hold a warm set learned from the run's earlier tasks (as the usage memory "
            "would; off: the library's defaults)",
        ),
        max_rounds: int = typer.Option(12, min=1, help="searches per task at most"),
        max_results: int = typer.Option(5, min=1, max=10, help="tools per search"),
        multi_query: bool = typer.Option(
            False, "--multi-query", help="agent sends the clauses in one search (queries)"
        ),
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
            help="a real model instead of the simulated agent: PROVIDER:MODEL, PROVIDER one "
            f"of {', '.join(provider_names())} (openai:gpt-4o-mini...); needs its API key",
        ),
        base_url: str | None = typer.Option(
            None, "--base-url", help="live mode: the provider's endpoint (a compatible server)"
        ),
        live_search: str = typer.Option(
            "toolsearch",
            "--live-search",
            help="live mode: whose tool search runs: toolsearch (one row per index), native "
            "(the provider's own, the advisor's search='native'), or both",
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
        from toolsearch_bench.agent import QueryPolicy
        from toolsearch_bench.progress import PhaseProgress
        from toolsearch_bench.report import write_report
        from toolsearch_bench.runner import run_dataset

        quiet_model_loading()
        if out is None:
            out = default_out()
        given = dict(locals())
        command = command_line(bench, given, out)
        with _cold_embeddings():  # build times are measured cold (see _cold_embeddings)
            if replay is not None:
                if queries_file is not None or live is not None or search_log is not None:
                    raise usage_error("--replay goes without --queries, --live and --search-log")
                run_replay(
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
                raise usage_error("--sessions goes with --replay")
            if search_log is not None and (live is not None or search_log.is_dir()):
                raise usage_error(
                    "--search-log: a file to append to, and the simulated agent only (not --live)"
                )
            if live_search not in ("toolsearch", "native", "both"):
                raise usage_error("--live-search: toolsearch, native or both")
            if (base_url is not None or live_search != "toolsearch") and live is None:
                raise usage_error("--base-url and --live-search go with --live")
            model_factory = live_model_factory(live, base_url) if live is not None else None
            from toolsearch_bench.cache import Traffic, cache_shape

            counter, specs, loaders = prepare_run(
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
                run_live_command(
                    console,
                    model_factory,
                    loaders,
                    specs,
                    max_results=max_results,
                    limit=live_limit or None,
                    out=out,
                    json_path=json_path,
                    command=command,
                    searches=("toolsearch", "native") if live_search == "both" else (live_search,),
                )
                return
            records = []
            with PhaseProgress(Console(stderr=True)) as progress:
                for catalog, queries in load_all(progress, loaders):
                    name = catalog.name
                    records += run_dataset(
                        catalog,
                        queries,
                        specs,
                        counter=counter,
                        provider=provider,  # type: ignore[arg-type]
                        policy=QueryPolicy(max_rounds, multi_query=multi_query),
                        max_results=max_results,
                        runs=runs,
                        on_phase=partial(progress.phase, name),
                        on_task=progress.advance,
                        memory=memory,
                        cache=cache_shape(provider, cache_read),
                        traffic=Traffic(traffic),
                        warm_set=warm_set,
                    )
                    if search_log is not None:
                        record_log(
                            progress, catalog, queries, specs, search_log, max_rounds, max_results
                        )
                    progress.finish(name)
            print_table(console, records)
            write_results(console, write_report, records, out, command=command, json_path=json_path)

    return app


@contextlib.contextmanager
def _cold_embeddings() -> Iterator[None]:
    """Within ``toolsearch bench``: no disk embedding cache (``TOOLSEARCH_EMBEDDING_CACHE``,
    read by new embedders and the memory-measuring child processes), so local models embed
    every tool and build times are cold, unless the user names a cache (an API embedder's
    runs then reuse their paid vectors). The variable is restored afterwards, so a caller
    running the command in-process keeps its own setting."""
    name = "TOOLSEARCH_EMBEDDING_CACHE"  # toolsearch.indexes.embedders.cache.CACHE_ENV
    if name in os.environ:
        yield
        return
    os.environ[name] = "off"
    try:
        yield
    finally:
        os.environ.pop(name, None)
