"""``toolsearch index ...``: build, search and inspect catalog indexes.

``--engine files`` (the default) builds memory-mapped artifacts in a folder (``--out``);
``--engine milvus`` writes the catalog into a Milvus collection (``--uri``, ``--collection``;
``toolsearch.catalog.cli.milvus``), which ``search`` and ``info`` then read.

User errors (missing files, malformed sources, an index that needs rebuilding, a missing
extra) print one line that says what to do and exit with a non-zero code, never a traceback:
1 for a catalog or index problem (a Milvus server that cannot be reached included), 2 for
bad command-line usage or a missing extra.

Tables fit the terminal's width (``COLUMNS``; 80 columns when it cannot be known): summaries
and values wrap, tool names stay whole while they fit and fold when longer than their
column. ``build`` reports its progress on stderr: live rows (count, time left, time spent)
on a terminal, else counted lines at most every ten seconds per stage
(:mod:`toolsearch.catalog.cli.output`).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolsearch._cli_errors import error_exit
from toolsearch.catalog.cli.output import build_progress, fields_table, results_table
from toolsearch.indexes.kinds import (
    IndexKindRow,
    catalog_kind_names,
    choices,
    find_kind,
    writable_kind_names,
)

__all__ = ["index_app"]

_KINDS = catalog_kind_names()
"""What ``build --kind`` writes: the catalog kinds of :mod:`toolsearch.indexes.kinds`."""
_MODES = ("bm25", "vector", "hybrid")
"""``search --engine milvus --mode``: the modes of :class:`~toolsearch.indexes.MilvusRanker`."""
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


def _plugin_kind(kind: str) -> IndexKindRow:
    """The row of an installed package's kind that ``build`` can write (one with a
    writer), else a usage error listing what ``--kind`` takes."""
    from toolsearch.errors import PluginError

    try:
        row = find_kind(kind)
    except PluginError as exc:
        raise error_exit(exc) from None
    if row is None or row.writer is None:
        raise typer.BadParameter(
            f"choose one of {', '.join(writable_kind_names())}", param_hint="--kind"
        )
    return row


def _write_plugin_kind(
    row: IndexKindRow, sources: list[Path], out: Path, source_kind: str, embedder: str | None
) -> None:
    """``build --kind`` for an installed package's kind: the sources' tools, read as for a
    catalog index, handed to the kind's writer, which writes ``out``."""
    from rich.console import Console
    from rich.markup import escape

    from toolsearch.catalog.sources import iter_tools
    from toolsearch.errors import CatalogSourceError, MissingExtraError, ToolsearchError
    from toolsearch.indexes.kinds import IndexOptions
    from toolsearch.indexes.specs import resolve_embedder

    try:
        model = resolve_embedder(embedder) if embedder is not None and row.embedder else None
        tools = list(iter_tools(sources, kind=source_kind))  # type: ignore[arg-type]
        row.write(tools, out, IndexOptions(embedder=model))
    except (MissingExtraError, CatalogSourceError, ValueError) as exc:  # bad input: 2
        raise error_exit(exc, 2) from None
    except (ToolsearchError, OSError) as exc:  # the plugin's own failure included
        raise error_exit(exc) from None
    line = f"built {out}: {len(tools):,} tools, {row.name}"
    Console().print(escape(line), highlight=False, soft_wrap=True)


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
        kind: Annotated[
            str,
            typer.Option(
                "--kind",
                "-k",
                help=f"{choices(_KINDS)}, or a kind an installed package registers with a "
                "writer (toolsearch.plugins).",
            ),
        ] = "bm25",
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
        plugin_kind = None if kind in _KINDS else _plugin_kind(kind)
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
        if plugin_kind is not None:
            if _engine(engine, collection):
                raise typer.BadParameter(
                    f"--engine milvus writes {choices(_KINDS)} only", param_hint="--engine"
                )
            if out is None:
                raise typer.BadParameter("an index folder to write is needed", param_hint="--out")
            _write_plugin_kind(plugin_kind, sources, out, source_kind, embedder)
            return
        if not verbose and kind != "bm25":
            from toolsearch._quiet import quiet_model_loading

            quiet_model_loading()
        if _engine(engine, collection):
            from toolsearch.catalog.cli.milvus import build_milvus

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
            with build_progress(Console(stderr=True)) as report:
                index = CatalogIndex.build(
                    [str(s) for s in sources],
                    out=out,
                    kind=kind,
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
                metavar="PATH",
                show_default=False,
            ),
        ],
        query: Annotated[
            str | None,
            typer.Argument(
                help="What the tool should do, or a tool name.",
                metavar="QUERY",
                show_default=False,
            ),
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
        """Search a built index (or a Milvus collection) and print the best tools: PATH
        QUERY, or with --engine milvus the QUERY alone."""
        if _engine(engine, collection):
            if query is not None:
                raise typer.BadParameter(
                    "with --engine milvus give only the query (no index folder)",
                    param_hint="QUERY",
                )
            if mode is not None and mode not in _MODES:
                raise typer.BadParameter(f"choose one of {', '.join(_MODES)}", param_hint="--mode")
            from toolsearch.catalog.cli.milvus import search_milvus

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
        out.print(results_table(rows, out.width))

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
            from toolsearch.catalog.cli.milvus import info_milvus

            try:
                rows = info_milvus(uri, token, str(collection))
            except MissingExtraError as exc:
                raise fail(exc, 2) from None
            except (ToolIndexError, CatalogError, ValueError) as exc:
                raise fail(exc) from None
            title = f"milvus collection {escape(str(collection))}"
            Console().print(fields_table(title, [(f, escape(text)) for f, text in rows]))
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
        table = fields_table(f"catalog index {escape(str(path))}", [])
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

    from toolsearch.catalog.cli.learn import learn_command

    app.command("learn")(learn_command)
    return app


if __name__ == "__main__":  # pragma: no cover
    sys.exit(index_app()())
