"""What ``toolsearch bench`` shares between its runs: checking the inputs before any work,
loading the datasets, the result table, where reports go and the command that made them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "command_line",
    "default_out",
    "load_all",
    "load_user",
    "prepare_run",
    "print_table",
    "usage_error",
    "write_results",
]


def default_out() -> Path:
    """A new folder for one run's report: ``<cache>/bench/<YYYYmmdd-HHMMSS>``.

    ``<cache>`` is toolsearch's cache folder (``$TOOLSEARCH_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/toolsearch``, else ``~/.cache/toolsearch``): never the working
    directory, so a run inside a clone leaves ``git status`` clean. A second run within
    the same second gets ``-2``, ``-3``... appended.
    """
    import time

    from toolsearch.indexes.embedders.tuned import default_cache_dir

    base = default_cache_dir() / "bench" / time.strftime("%Y%m%d-%H%M%S")
    candidate, number = base, 1
    while candidate.exists():
        number += 1
        candidate = base.with_name(f"{base.name}-{number}")
    return candidate


def command_line(command: Any, values: dict[str, Any], out: Path) -> str:
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


def usage_error(message: str) -> Any:
    """``error: <message>`` on stderr and exit code 2: bad input, never a traceback."""
    from toolsearch._cli_errors import error_exit

    return error_exit(ValueError(message), 2)


def prepare_run(
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
    from toolsearch.errors import MissingExtraError
    from toolsearch.tokens import BpeTokenCounter
    from toolsearch_bench.loaders import DATASETS
    from toolsearch_bench.render import REQUEST_SHAPES
    from toolsearch_bench.runner import available_indexes

    if (catalog_file is None) != (queries_file is None):
        given, missing = (
            ("--catalog", "--queries")
            if queries_file is None
            else (
                "--queries",
                "--catalog",
            )
        )
        raise usage_error(f"{given} needs {missing}: a catalog and its requests go together")
    for option, path in (("--catalog", catalog_file), ("--queries", queries_file)):
        if path is not None and not path.is_file():
            raise usage_error(f"{option}: no such file: {path}")
    if catalog_file is None:
        unknown = [d for d in datasets if d not in DATASETS]
        if unknown:
            raise usage_error(
                f"--dataset: unknown dataset {', '.join(map(repr, unknown))}; "
                f"choose from {', '.join(DATASETS)}"
            )
    if provider not in REQUEST_SHAPES:
        raise usage_error(
            f"--provider: unknown request shape {provider!r}; choose {', '.join(REQUEST_SHAPES)}"
        )
    if tokenizer not in ("o200k_base", "cl100k_base"):
        raise usage_error(
            f"--tokenizer: unknown encoding {tokenizer!r}; choose o200k_base or cl100k_base"
        )
    if out.exists() and not out.is_dir():
        raise usage_error(f"--out: {out} is a file, not a folder")
    try:
        counter = BpeTokenCounter(tokenizer)
        specs = available_indexes(indexes, peers=peers)
    except MissingExtraError as exc:
        raise usage_error(str(exc)) from None
    except ValueError as exc:  # an unknown index or embedder name
        raise usage_error(f"--index: {exc}") from None
    if catalog_file is not None and queries_file is not None:
        mine = load_user(catalog_file, queries_file)
        return counter, specs, [(mine[0].name, lambda: mine)]
    return counter, specs, [(name, DATASETS[name]) for name in dict.fromkeys(datasets)]


def load_all(progress: Any, loaders: list[tuple[str, Any]]) -> list[tuple[Any, Any]]:
    """Every dataset, before any is run (a missing one fails now, not after the first)."""
    from toolsearch.errors import MissingExtraError

    loaded = []
    for name, loader in loaders:
        progress.phase(name, "loading", None)
        try:
            catalog, queries = loader()
        except MissingExtraError as exc:  # DatasetUnavailableError: the pip command
            progress.fail()
            raise usage_error(str(exc)) from None
        if not len(queries):
            progress.fail()
            raise usage_error(f"dataset {name!r} has no queries")
        loaded.append((catalog, queries))
    return loaded


def load_user(catalog_file: Path, queries_file: Path) -> tuple[Any, Any]:
    """``--catalog`` and ``--queries``, checked: errors name the file and line or tool."""
    from toolsearch_bench.data import Catalog, QuerySet

    try:
        catalog = Catalog.from_jsonl(catalog_file)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise usage_error(f"--catalog: {exc}") from None
    try:
        queries = QuerySet.from_jsonl(queries_file)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise usage_error(f"--queries: {exc}") from None
    if not len(catalog):
        raise usage_error(f"--catalog: {catalog_file} has no tools")
    if not len(queries):
        raise usage_error(f"--queries: {queries_file} has no requests (one JSON object a line)")
    try:
        queries.validate_against(catalog)
    except ValueError as exc:
        raise usage_error(f"--queries: {queries_file}: {exc} ({catalog_file})") from None
    return catalog, queries


_LEGEND = (
    "tokens: prompt tokens per task (mean, every request of the loop); saved: % fewer "
    "than the full loop; billed: the same input with the provider's prompt cache on, in "
    "fresh-token equivalents (cached reads and writes at their prices), then % saved so; "
    "success: % of tasks whose needed tools were all found and "
    "called; R@5: % of needed tools in a search's top 5; p50: median search latency; "
    "MB: peak memory the index added."
)


_TABLE_COLUMNS = ("index", "tokens", "saved", "billed", "saved", "success", "R@5", "p50 µs", "MB")


def _cells(record: Any) -> list[str]:
    r = record
    return [
        "full loop" if r.mode == "full" else r.index,
        f"{r.prompt_tokens_mean:,.0f}",
        "-" if r.savings_pct is None else f"{r.savings_pct:.1f}",
        "-" if r.billed_tokens_mean is None else f"{r.billed_tokens_mean:,.0f}",
        "-" if r.cached_savings_pct is None else f"{r.cached_savings_pct:.1f}",
        f"{r.success_rate:.1f}",
        "-" if r.recall_at_5 is None else f"{r.recall_at_5:.1f}",
        "-" if r.p50_us is None else f"{r.p50_us:,.0f}",
        _megabytes(r.peak_rss_mb),
    ]


def print_table(console: Any, records: list[Any]) -> None:
    """One table per dataset, within the console's width (80 columns in a pipe): the
    figures never wrap; the index name takes the width left and folds beyond it."""
    from rich import box
    from rich.table import Table

    for dataset in dict.fromkeys(r.dataset for r in records):
        rows = [_cells(r) for r in records if r.dataset == dataset]
        first = next(r for r in records if r.dataset == dataset)
        table = Table(
            title=f"{dataset} ({first.tools} tools, {first.tasks} tasks): "
            "tool search vs the full tool loop",
            box=box.SIMPLE_HEAD,
            show_edge=False,
            padding=(0, 0, 0, 1),  # two spaces between columns: nine fit in 80
        )
        widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(_TABLE_COLUMNS)]
        left = console.width - sum(widths[1:]) - 2 * len(widths) + 1
        for number, column in enumerate(_TABLE_COLUMNS):
            if number == 0:  # a long name (hybrid:minilm-tuned-openapi-only) folds
                table.add_column(column, overflow="fold", min_width=max(9, min(widths[0], left)))
            else:
                table.add_column(column, justify="right", no_wrap=True)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(_LEGEND, style="dim", highlight=False)


def _megabytes(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def write_results(console: Any, writer: Any, records: Any, out: Path, **kwargs: Any) -> None:
    """Write the report and say where it went (a path on its own line, never wrapped)."""
    from toolsearch._cli_errors import error_exit

    try:
        written = writer(records, out, **kwargs)
    except OSError as exc:
        raise error_exit(exc, 1) from None
    names = ", ".join(p.name if p.parent == out else str(p) for p in written)
    console.print(f"wrote {names} to:", highlight=False)
    console.print(str(out), highlight=False, soft_wrap=True, markup=False)
