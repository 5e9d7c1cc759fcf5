"""``toolsearch index build|search|info --engine milvus``: a catalog in a Milvus collection.

``build`` reads the same sources as an on-disk build (JSONL, MCP ``tools/list`` dumps,
OpenAPI specs, through :func:`toolsearch.catalog.pipeline.iter_source_tools`), then writes
them in batches with a progress bar. Each batch asks the server which fingerprints it
already holds and embeds and upserts only the others, so the collection is the embedding
store: a tool is embedded once, and a second run over unchanged sources writes nothing
(and says so). ``search`` and ``info`` read the embedder and BM25 settings the collection
recorded. An unreachable server is one ``error:`` line and exit code 1, like any other
index problem; a missing extra is exit code 2.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsearch.urls import redact_url

__all__ = ["build_milvus", "info_milvus", "open_milvus", "search_milvus"]


def _quiet_pymilvus() -> None:
    """pymilvus logs every failed call at ERROR with a traceback; the CLI prints one line."""
    logging.getLogger("pymilvus").setLevel(logging.CRITICAL)


def open_milvus(uri: str, token: str, collection: str, mode: str | None = None) -> Any:
    """A :class:`~toolsearch.indexes.milvus.MilvusRanker` over an existing collection, in
    ``mode`` (``None``: hybrid when the collection has vectors, else BM25)."""
    from toolsearch.errors import CatalogIndexError
    from toolsearch.indexes.milvus import MilvusRanker

    _quiet_pymilvus()
    probe = MilvusRanker(uri, collection=collection, mode="bm25", token=token)
    if not probe.exists():
        shown = redact_url(uri)
        raise CatalogIndexError(
            f"Milvus collection {collection!r} at {shown}",
            "no such collection; build it with: toolsearch index build SOURCE... "
            f"--engine milvus --uri {shown} --collection {collection}",
        )
    if mode is None:
        mode = "hybrid" if probe.settings().has_vectors else "bm25"
    if mode == "bm25":
        return probe
    probe.close()
    return MilvusRanker(uri, collection=collection, mode=mode, token=token)  # type: ignore[arg-type]


def build_milvus(
    sources: Sequence[Path],
    *,
    uri: str,
    token: str,
    collection: str,
    kind: str,
    embedder: str | None,
    source_kind: str,
    batch_size: int,
    catalog: str | None,
) -> tuple[str, int]:
    """Write the sources' tools the collection lacks; returns the line to print and how
    many tools the server refused (each named, with its reason, in the line)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from toolsearch._quiet import quiet_model_loading
    from toolsearch.catalog.pipeline import iter_source_tools
    from toolsearch.indexes.milvus import MilvusRanker
    from toolsearch.indexes.specs import resolve_embedder

    _quiet_pymilvus()
    started = time.perf_counter()
    model = None
    if kind != "bm25":
        quiet_model_loading()
        model = resolve_embedder(embedder, default="static")
    ranker = MilvusRanker(
        uri,
        collection=collection,
        mode=kind,  # type: ignore[arg-type]
        embedder=model,
        token=token,
        catalog=catalog or collection,
    )
    ranker.settings()  # an unreachable server or a mismatched collection fails now
    console = Console(stderr=True)
    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        reading = progress.add_task("files read", total=None)

        def read(stage: str, done: int, total: int | None) -> None:
            if stage == "read":
                progress.update(reading, completed=done, total=total)

        tools = list(
            iter_source_tools([str(s) for s in sources], source_kind=source_kind, progress=read)
        )
        progress.remove_task(reading)
        writing = progress.add_task("tools checked and written", total=len(tools))
        report = ranker.upsert_tools(
            tools,
            batch_size=batch_size,
            progress=lambda done, _total: progress.update(writing, completed=done),
            total=len(tools),
        )
    seconds = time.perf_counter() - started
    where = f"{collection} at {redact_url(uri)}"
    ranker.close()
    refused = ""
    if report.refused:
        shown = ", ".join(f"{r.name!r} ({r.reason})" for r in report.refused[:5])
        more = f" and {len(report.refused) - 5:,} more" if len(report.refused) > 5 else ""
        refused = f"; the server refused {len(report.refused):,}: {shown}{more}"
    if not report.written:
        return (
            f"nothing to write: all {report.total - len(report.refused):,} tools are already "
            f"in {where} ({seconds:.1f} s){refused}"
        ), len(report.refused)
    return (
        f"wrote {report.written:,} tools to {where} ({report.present:,} already there, "
        f"{kind}) in {seconds:.1f} s{refused}"
    ), len(report.refused)


def search_milvus(
    uri: str,
    token: str,
    collection: str,
    query: str,
    k: int,
    category: str | None,
    mode: str | None,
) -> tuple[Any, str]:
    """The response of a whole-collection search, and the line that describes it."""
    ranker = open_milvus(uri, token, collection, mode)
    if ranker.mode != "bm25":
        _ = ranker.embedder  # load the model first: the time shown is the search's
    response = ranker.search_catalog(query, k, category=category)
    rows = ranker.count()
    ranker.close()
    header = (
        f"{len(response.tool_references):,} of {rows:,} tools for {query!r} in {collection} "
        f"({ranker.mode}, {response.metadata.search_time_ms:.2f} ms)"
    )
    return response, header


def info_milvus(uri: str, token: str, collection: str) -> list[tuple[str, str]]:
    """What ``toolsearch index info --engine milvus`` shows, as (field, value) rows."""
    ranker = open_milvus(uri, token, collection, "bm25")
    settings = ranker.settings()
    rows = ranker.count()
    ranker.close()
    bm25 = settings.bm25
    table = [
        ("engine", "milvus"),
        ("uri", uri),
        ("collection", collection),
        ("tools", f"{rows:,}"),
        ("modes", "bm25, vector, hybrid" if settings.has_vectors else "bm25"),
        (
            "bm25 settings",
            f"k1 {bm25.k1}, b {bm25.b}; field weights: name {bm25.name_weight}, "
            f"description {bm25.description_weight}, parameters {bm25.parameter_weight} "
            "(the server's BM25 function over our analyzed text)",
        ),
    ]
    if settings.has_vectors:
        table.append(("embedder", f"{settings.embedder} ({settings.dimension}-d, COSINE)"))
    return table
