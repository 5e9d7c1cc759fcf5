"""``toolsearch index ...``: build, search and inspect catalog indexes.

``--engine files`` (the default) builds memory-mapped artifacts in a folder (``--out``);
``--engine milvus`` writes the catalog into a Milvus collection (``--uri``, ``--collection``;
``toolsearch.catalog.milvus_cli``), which ``search`` and ``info`` then read.

User errors (missing files, malformed sources, an index that needs rebuilding, a missing
extra) print one line that says what to do and exit with a non-zero code, never a traceback:
1 for a catalog or index problem (a Milvus server that cannot be reached included), 2 for
bad command-line usage or a missing extra.

Tables fit the terminal's width (``COLUMNS``; 80 columns when it cannot be known): summaries
and values wrap, tool names stay whole while they fit and fold when longer than their
column. ``build`` reports its progress on stderr: live rows (count, time left, time spent)
on a terminal, else :class:`BuildLog` lines at most every ten seconds per stage.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from toolsearch._cli_errors import error_exit

__all__ = ["BuildLog", "index_app"]

_KINDS = ("bm25", "vector", "hybrid")
_SOURCE_KINDS = ("auto", "jsonl", "mcp", "openapi")
_ENGINES = ("files", "milvus")

Engine = Annotated[
    str,
    typer.Option("--engine", help="files (an index folder) or milvus (a collection at --uri)."),
]
Uri = Annotated[
    str,
    typer.Option(
        envvar="MILVUS_URI",
        help="Milvus: ./tools.db (embedded Lite), http://host:19530 (a server or cluster).",
    ),
]
Token = Annotated[
    str, typer.Option(envvar="MILVUS_TOKEN", help="Milvus: a cluster's token.", show_default=False)
]
Collection = Annotated[
    str | None, typer.Option(help="Milvus: the catalog's collection.", show_default=False)
]


def _engine(engine: str, collection: str | None) -> bool:
    """Whether the command runs on Milvus (checking its options)."""
    if engine not in _ENGINES:
        raise typer.BadParameter(f"choose one of {', '.join(_ENGINES)}", param_hint="--engine")
    if engine == "milvus" and not collection:
        raise typer.BadParameter("--engine milvus needs a collection", param_hint="--collection")
    return engine == "milvus"


def _human_size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


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
def _build_progress(console: Any) -> Iterator[Callable[[str, int, int | None], None]]:
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


def _results_table(rows: Sequence[tuple[str, str, str]], width: int) -> Any:
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


def _fields_table(title: str, rows: Sequence[tuple[str, str]]) -> Any:
    """A two-column table of fields and values (``index info``): the field names never
    wrap, the values wrap to the console's width (a long word, a path, folds)."""
    from rich.table import Table

    table = Table(title=title, show_header=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for field, value in rows:
        table.add_row(field, value)
    return table


def index_app() -> Any:
    from rich.console import Console
    from rich.markup import escape

    from toolsearch.errors import (
        CatalogError,
        CatalogSourceError,
        MissingExtraError,
        ToolIndexError,
    )

    app = typer.Typer(
        help="Build, search and inspect offline catalog indexes (the catalog extra).",
        no_args_is_help=True,
    )
    fail = error_exit

    @app.callback()
    def root() -> None:
        """Offline catalog indexes: build once, load fast, search many sessions."""

    @app.command()
    def build(
        sources: Annotated[
            list[Path],
            typer.Argument(
                help="Catalog files: JSONL (name, description, input_schema), MCP tools/list "
                "dumps (JSON) or OpenAPI 3 specs (JSON/YAML).",
                show_default=False,
                metavar="SOURCE",
            ),
        ],
        out: Annotated[
            Path | None,
            typer.Option("--out", "-o", help="Index folder to write, e.g. indexes/NAME."),
        ] = None,
        kind: Annotated[str, typer.Option("--kind", "-k", help="bm25, vector or hybrid.")] = "bm25",
        embedder: Annotated[
            str | None,
            typer.Option(
                "--embedder",
                "-e",
                help="For vector/hybrid: static (default; model2vec, fast), minilm "
                "(all-MiniLM-L6-v2), tuned (from toolsearch embedder finetune), a model "
                "folder, openai:MODEL or gemini:MODEL (an API, e.g. "
                "openai:text-embedding-3-small?dimensions=256, "
                "openai:MODEL?base_url=http://127.0.0.1:8080/v1; OPENAI_BASE_URL is the "
                "default URL), or hashing[-DIM] (tests).",
                show_default=False,
            ),
        ] = None,
        source_kind: Annotated[
            str,
            typer.Option("--source-kind", help="auto, jsonl, mcp or openapi: how to read SOURCE."),
        ] = "auto",
        hnsw_threshold: Annotated[
            int, typer.Option(min=1, help="Catalogs larger than this get HNSW, else a flat index.")
        ] = 10_000,
        batch_size: Annotated[int, typer.Option(min=1, help="Texts per embedding batch.")] = 256,
        workers: Annotated[
            int | None,
            typer.Option(min=1, help="Analysis processes (default: CPU count, at most 4)."),
        ] = None,
        reuse: Annotated[
            bool, typer.Option(help="Reuse embeddings of unchanged tools from the index at --out.")
        ] = True,
        engine: Engine = "files",
        uri: Uri = "./tools.db",
        token: Token = "",
        collection: Collection = None,
        catalog: Annotated[
            str | None,
            typer.Option(help="Milvus: the rows' catalog name (default: the collection's)."),
        ] = None,
        verbose: Annotated[
            bool, typer.Option("--verbose", "-v", help="Show the model libraries' own output.")
        ] = False,
    ) -> None:
        """Build an index from catalog files (or write them into a Milvus collection).

        An index at --out is replaced only when the new one is complete; a Milvus
        collection gets only the tools it lacks.
        """
        if kind not in _KINDS:
            raise typer.BadParameter(f"choose one of {', '.join(_KINDS)}", param_hint="--kind")
        if source_kind not in _SOURCE_KINDS:
            raise typer.BadParameter(
                f"choose one of {', '.join(_SOURCE_KINDS)}", param_hint="--source-kind"
            )
        if kind == "bm25" and embedder is not None:
            raise typer.BadParameter(
                "a bm25 index embeds nothing; use --kind vector or hybrid with --embedder",
                param_hint="--embedder",
            )
        missing = [str(s) for s in sources if not s.exists()]
        if missing:
            raise typer.BadParameter(
                f"no such file or folder: {', '.join(missing)}", param_hint="SOURCE"
            )
        if not verbose and kind != "bm25":
            from toolsearch._quiet import quiet_model_loading

            quiet_model_loading()
        if _engine(engine, collection):
            from toolsearch.catalog.milvus_cli import build_milvus

            try:
                line, refused = build_milvus(
                    sources,
                    uri=uri,
                    token=token,
                    collection=str(collection),
                    kind=kind,
                    embedder=embedder,
                    source_kind=source_kind,
                    batch_size=batch_size,
                    catalog=catalog,
                )
            except (MissingExtraError, CatalogSourceError, ValueError) as exc:  # bad input
                raise fail(exc, 2) from None
            except (ToolIndexError, CatalogError, OSError) as exc:
                raise fail(exc) from None
            Console().print(escape(line), highlight=False, soft_wrap=True)
            if refused:  # the others were written; a script must still see the loss
                raise typer.Exit(1)
            return
        if out is None:
            raise typer.BadParameter("an index folder to write is needed", param_hint="--out")
        embedder = embedder or "static"
        from toolsearch.catalog.index import CatalogIndex
        from toolsearch.indexes.params import VectorParams

        command = shlex.join(
            ["toolsearch", "index", "build", *map(str, sources), "--kind", kind, "--out", str(out)]
            + (["--embedder", embedder] if kind != "bm25" else [])
        )
        try:
            with _build_progress(Console(stderr=True)) as report:
                index = CatalogIndex.build(
                    [str(s) for s in sources],
                    out=out,
                    kind=kind,  # type: ignore[arg-type]
                    embedder=embedder if kind != "bm25" else None,
                    source_kind=source_kind,
                    progress=report,
                    vector=VectorParams(
                        hnsw_threshold=hnsw_threshold,
                        batch_size=batch_size,
                        query_clauses=kind == "hybrid",
                    ),
                    reuse_embeddings=reuse,
                    command=command,
                    workers=workers,
                )
        except (MissingExtraError, CatalogSourceError, ValueError) as exc:  # bad input: 2
            raise fail(exc, 2) from None
        except (ToolIndexError, CatalogError, OSError) as exc:  # an embedding API, a disk
            raise fail(exc) from None
        counts = index.manifest.counts
        size = sum(entry.size for entry in index.manifest.files.values())
        line = (
            f"built {out}: {counts.get('tools', 0):,} tools, {kind}, "
            f"{_human_size(size)} in {index.manifest.settings.get('build_seconds', 0):.1f} s"
        )
        if "embedded" in counts:
            line += (
                f" ({counts['embedded']:,} embedded, {counts.get('reused_embeddings', 0):,} reused)"
            )
        if counts.get("duplicate_names"):
            line += f"; skipped {counts['duplicate_names']:,} repeated names"
        Console().print(escape(line), highlight=False, soft_wrap=True)

    @app.command()
    def search(
        path: Annotated[
            str,
            typer.Argument(
                help="An index folder (indexes/NAME); with --engine milvus, the query.",
                metavar="[PATH] QUERY",
            ),
        ],
        query: Annotated[
            str | None,
            typer.Argument(help="What the tool should do, or a tool name.", show_default=False),
        ] = None,
        k: Annotated[int, typer.Option("-k", "--max-results", min=1, help="How many tools.")] = 10,
        category: Annotated[str | None, typer.Option(help="Only tools of this category.")] = None,
        engine: Engine = "files",
        uri: Uri = "./tools.db",
        token: Token = "",
        collection: Collection = None,
        mode: Annotated[
            str | None,
            typer.Option(
                help="Milvus: bm25, vector or hybrid (default: hybrid if it has vectors)."
            ),
        ] = None,
    ) -> None:
        """Search a built index (or a Milvus collection) and print the best tools."""
        if _engine(engine, collection):
            if query is not None:
                raise typer.BadParameter(
                    "with --engine milvus give only the query (no index folder)",
                    param_hint="QUERY",
                )
            if mode is not None and mode not in _KINDS:
                raise typer.BadParameter(f"choose one of {', '.join(_KINDS)}", param_hint="--mode")
            from toolsearch.catalog.milvus_cli import search_milvus

            query = path
            try:
                response, header = search_milvus(
                    uri, token, str(collection), query, k, category, mode
                )
            except MissingExtraError as exc:
                raise fail(exc, 2) from None
            except (ToolIndexError, CatalogError, ValueError) as exc:
                raise fail(exc) from None
        else:
            if query is None:
                raise typer.BadParameter("give an index folder and a query", param_hint="QUERY")
            from toolsearch.catalog.index import CatalogIndex

            try:
                index = CatalogIndex.load(Path(path))
                _ = index.embedder  # load the model first: the time shown is the search's
                response = index.search_catalog(query, k, category=category)
            except MissingExtraError as exc:
                raise fail(exc, 2) from None
            except (ToolIndexError, CatalogError) as exc:  # an embedding API's failure too
                raise fail(exc) from None
            header = (
                f"{response.total_matches:,} match{'' if response.total_matches == 1 else 'es'} "
                f"for {query!r} in {path} ({len(index):,} tools, "
                f"{response.metadata.search_time_ms:.2f} ms)"
            )
        out = Console()  # the terminal's width (COLUMNS; 80 when it cannot be known)
        out.print(escape(header), highlight=False, overflow="fold")
        if not response.tool_references:
            return
        rows = [
            (
                ref.tool_name,
                "" if ref.relevance_score is None else f"{ref.relevance_score:.3f}",
                ref.summary,
            )
            for ref in response.tool_references
        ]
        out.print(_results_table(rows, out.width))

    @app.command()
    def info(
        path: Annotated[
            Path | None,
            typer.Argument(help="An index folder (indexes/NAME); none with --engine milvus."),
        ] = None,
        verify: Annotated[
            bool,
            typer.Option(
                "--verify",
                help="Check every artifact's sha256, however large (small indexes always are).",
            ),
        ] = False,
        engine: Engine = "files",
        uri: Uri = "./tools.db",
        token: Token = "",
        collection: Collection = None,
    ) -> None:
        """Show what an index or Milvus collection holds; --verify checks checksums."""
        if _engine(engine, collection):
            from toolsearch.catalog.milvus_cli import info_milvus

            try:
                rows = info_milvus(uri, token, str(collection))
            except MissingExtraError as exc:
                raise fail(exc, 2) from None
            except (ToolIndexError, CatalogError, ValueError) as exc:
                raise fail(exc) from None
            title = f"milvus collection {escape(str(collection))}"
            Console().print(_fields_table(title, [(f, escape(text)) for f, text in rows]))
            return
        if path is None:
            raise typer.BadParameter("give an index folder", param_hint="PATH")
        from toolsearch.catalog.index import CatalogIndex

        try:
            index = CatalogIndex.load(path, verify=True if verify else None)
        except MissingExtraError as exc:
            raise fail(exc, 2) from None
        except CatalogError as exc:
            raise fail(exc) from None
        manifest = index.manifest
        table = _fields_table(f"catalog index {escape(str(path))}", [])
        table.add_row("kind", manifest.kind)
        table.add_row("format", str(manifest.format_version))
        table.add_row("tools", f"{manifest.tool_count:,}")
        for key, value in manifest.counts.items():
            if key != "tools":
                table.add_row(key.replace("_", " "), f"{value:,}")
        if manifest.embedder:
            table.add_row("embedder", f"{manifest.embedder_name} ({manifest.embedder_dimension}-d)")
        bm25 = manifest.settings.get("bm25")
        if bm25:
            table.add_row(
                "bm25 settings",
                f"k1 {bm25.get('k1')}, b {bm25.get('b')}; field weights: name "
                f"{bm25.get('name_weight')}, description {bm25.get('description_weight')}, "
                f"parameters {bm25.get('parameter_weight')}",
            )
        vector = manifest.settings.get("vector")
        if vector:
            structure = str(vector.get("index"))
            if structure == "hnsw":
                structure += f" (M {vector.get('hnsw_m')}, efSearch {vector.get('hnsw_ef_search')})"
            table.add_row("vector index", structure)
        hybrid = manifest.settings.get("hybrid")
        if hybrid:
            fusion = str(hybrid.get("fusion"))
            if fusion == "rrf":
                fusion += f" (k {hybrid.get('rrf_k')})"
            table.add_row(
                "fusion",
                f"{fusion}; weights bm25 {hybrid.get('bm25_weight')}, vector "
                f"{hybrid.get('vector_weight')}; {hybrid.get('candidates')} candidates each",
            )
        size = sum(entry.size for entry in manifest.files.values())
        table.add_row("size", f"{_human_size(size)} in {len(manifest.files)} files")
        table.add_row("built", f"{manifest.created_at} (toolsearch {manifest.toolsearch_version})")
        table.add_row("build time", f"{manifest.settings.get('build_seconds', 0):.1f} s")
        table.add_row("sources", escape("\n".join(manifest.sources)) or "-")
        table.add_row("rebuild", escape(manifest.build_command))
        table.add_row("checksums", "verified (sha256)" if verify else "sizes checked")
        Console().print(table)  # the terminal's width: the values wrap

    return app


if __name__ == "__main__":  # pragma: no cover
    sys.exit(index_app()())
