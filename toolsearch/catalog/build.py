"""Building a catalog index: stream, analyze, store, embed, then swap the folder in.

The sources are streamed (a tool is prepared, analyzed, stored and queued for embedding,
then dropped; :mod:`toolsearch.catalog.pipeline` runs the analysis in worker processes),
embedded in batches, and written into a temporary folder next to the target that replaces
it only once complete (:mod:`toolsearch.catalog.swap`). Rebuilding over an existing index
with the same embedder re-embeds only tools whose embedded text changed.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import os
import shlex
import shutil
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from toolsearch.catalog.bm25_artifact import Bm25Writer
from toolsearch.catalog.manifest import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    FileEntry,
    Manifest,
    file_sha256,
    read_manifest,
    verify_files,
)
from toolsearch.catalog.pipeline import (
    BATCH,
    AnalysisJob,
    BuildProgress,
    analyze_sources,
    count_records,
)
from toolsearch.catalog.store import ToolStoreWriter
from toolsearch.catalog.swap import clean_stale, swap_into_place
from toolsearch.catalog.vector_artifact import (
    EMBEDDINGS_FILE,
    TEXT_KEYS_FILE,
    PreviousEmbeddings,
    VectorWriter,
)
from toolsearch.errors import CatalogIndexError, CatalogSourceError
from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.kinds import catalog_kind_names, choices
from toolsearch.indexes.params import Bm25Params, FusionParams, VectorParams
from toolsearch.indexes.specs import resolve_embedder
from toolsearch.tools.definition import ToolDefinition

_log = logging.getLogger(__name__)

__all__ = ["IndexKind", "build_index", "embedder_option"]

IndexKind = Literal["bm25", "vector", "hybrid"]
"""The catalog kinds (``catalog=True`` in :data:`toolsearch.indexes.kinds.KINDS`; a test
keeps the two equal)."""


def _previous_embeddings(out: Path, embedder: Embedder) -> PreviousEmbeddings | None:
    import numpy as np

    try:
        manifest = read_manifest(out)
        if manifest.embedder_name != embedder.name:
            return None
        if manifest.embedder_dimension != embedder.dimension:
            return None
        verify_files(out, manifest)
        keys = np.load(out / TEXT_KEYS_FILE, mmap_mode="r")
        embeddings = np.load(out / EMBEDDINGS_FILE, mmap_mode="r")
    except (CatalogIndexError, OSError, ValueError) as exc:
        _log.warning("the previous embeddings in %s cannot be reused (%s); embedding all", out, exc)
        return None  # nothing reusable: embed everything
    if embeddings.shape != (len(keys), embedder.dimension):
        return None
    return PreviousEmbeddings(keys, embeddings)


def _default_command(sources: Sequence[str], kind: str, out: Path, embedder: str | None) -> str:
    words = ["toolsearch", "index", "build", *sources, "--kind", kind, "--out", str(out)]
    if embedder:
        words += ["--embedder", embedder]
    command = shlex.join(words)
    return command if sources else command.replace("build --kind", "build SOURCE... --kind", 1)


def embedder_option(embedder: Embedder) -> str | None:
    name = embedder.name
    if name.startswith("model2vec/static-all-MiniLM-L6-v2-pca256"):
        return "static"
    if name == "sentence-transformers/all-MiniLM-L6-v2":
        return "minilm"
    if name.startswith(("hashing-", "openai:", "gemini:")):  # API embedder names are specs
        return name
    return None


def build_index(
    sources: Iterable[str | os.PathLike[str] | ToolDefinition] | str | os.PathLike[str],
    *,
    out: str | os.PathLike[str],
    kind: IndexKind = "bm25",
    embedder: Embedder | str | None = None,
    source_kind: str = "auto",
    progress: BuildProgress | None = None,
    bm25: Bm25Params | None = None,
    vector: VectorParams | None = None,
    hybrid: FusionParams | None = None,
    reuse_embeddings: bool = True,
    command: str | None = None,
    workers: int | None = None,
) -> tuple[Path, Embedder | None]:
    """Build an index of ``sources`` at ``out``; returns the folder and the embedder used
    (what ``CatalogIndex.build`` loads it with).

    Args:
        sources: Paths of JSONL catalogs, MCP ``tools/list`` dumps or OpenAPI specs,
            and/or ``ToolDefinition`` objects (streamed).
        out: The index folder; replaced only when the new build is complete.
        kind: ``bm25``, ``vector`` or ``hybrid``.
        embedder: For ``vector``/``hybrid``: an ``Embedder`` or a name: ``static``
            (default), ``minilm``, ``hashing``, ``openai:MODEL``, ``gemini:MODEL``...
            (:mod:`toolsearch.indexes.specs`).
        source_kind: ``auto``, or force one reader (``jsonl``, ``mcp``, ``openapi``).
        progress: Called as ``progress(stage, done, total)``.
        reuse_embeddings: Copy unchanged tools' vectors from the index at ``out``.
        command: The rebuild command recorded in the manifest (the CLI passes its own).
        workers: Processes that prepare and analyze tools (default: the CPU count, at
            most 4; catalogs under 2,048 tools are analyzed in this process).
    """
    if kind not in catalog_kind_names():
        raise ValueError(f"kind must be {choices(catalog_kind_names())}, not {kind!r}")
    target = Path(out)
    if target.exists() and (
        not target.is_dir() or (any(target.iterdir()) and not (target / MANIFEST_NAME).exists())
    ):
        raise CatalogIndexError(
            str(target), "exists and is not a catalog index; refusing to replace it"
        )
    # the parameter objects the session indexes use, so a catalog ranks like a session
    # index would (a hybrid's vector side reads clauses, as HybridToolIndex's default
    # does); the manifest records what was used
    bm25_settings = bm25 or Bm25Params()
    vector_settings = vector or VectorParams(query_clauses=kind == "hybrid")
    hybrid_settings = hybrid or FusionParams()
    started = time.perf_counter()  # the build's real time: model loading included
    model = None
    if kind != "bm25":
        if progress is not None:
            progress("model", 0, 1)
        model = resolve_embedder(embedder)
        if progress is not None:
            progress("model", 1, 1)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatalogIndexError(
            str(target), f"cannot create its parent folder ({exc.strerror or exc})"
        ) from exc
    clean_stale(target)
    previous = None
    if model is not None and reuse_embeddings and (target / MANIFEST_NAME).exists():
        previous = _previous_embeddings(target, model)
    staging = target.with_name(f".{target.name}.build-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        staging.mkdir()
    except OSError as exc:
        raise CatalogIndexError(
            str(target), f"cannot write in {target.parent} ({exc.strerror or exc})"
        ) from exc
    source_names: list[str] = []
    if not isinstance(sources, (str, os.PathLike)):
        sources = list(sources) if isinstance(sources, (list, tuple)) else sources
    if isinstance(sources, (str, os.PathLike)):
        source_names = [str(sources)]
    elif isinstance(sources, list):
        source_names = [str(s) for s in sources if not isinstance(s, ToolDefinition)]
    try:
        store = ToolStoreWriter(staging)
        keywords = Bm25Writer(bm25_settings) if kind != "vector" else None
        # totals: the sources' tool count when cheap to know (JSONL, a list of tools);
        # rows to embed are the tools less repeated names, exactly known once all are read
        records = count_records(sources, source_kind) if progress is not None else None
        seen = 0  # tools analyzed, repeated names included
        clashes = 0
        rows: int | None = None  # rows to embed, once every tool is read

        def embedded(done: int) -> None:
            if progress is not None:
                total = rows
                if total is None and records is not None:
                    total = records - clashes
                progress("embedded", done, None if total is None else max(total, done))

        vectors = (
            VectorWriter(staging, model, vector_settings, previous=previous, on_batch=embedded)
            if model is not None
            else None
        )
        job = AnalysisJob(bm25_settings if keywords is not None else None, vectors is not None)
        names: set[str] = set()
        for tool in analyze_sources(sources, source_kind, job, workers, progress):
            seen += 1
            if progress is not None and (seen == 1 or seen % BATCH == 0):
                progress("tools", seen, None if records is None else max(records, seen))
                if seen == 1 and vectors is not None:  # the stages start with the first tool
                    progress("embedded", 0, records)
            name = tool.name
            if name in names:
                clashes += 1  # the first definition of a name wins, as in a session
                continue
            names.add(name)
            doc = store.add_analyzed(
                name, tool.category, tool.fingerprint, tool.summary, tool.definition
            )
            if keywords is not None:
                keywords.add_terms(doc, tool.terms or {})
            if vectors is not None:
                vectors.add(tool.text)
        del names
        if store.count == 0:
            raise CatalogSourceError(
                ", ".join(source_names) or "<tools>", "no tools found in the sources"
            )
        if progress is not None:
            progress("tools", seen, seen)
        rows = store.count
        if progress is not None and vectors is not None and vectors.count == rows:
            progress("embedded", rows, rows)  # else the last batch, in finish, says so
        digests = store.close()
        counts: dict[str, int] = {"tools": store.count, "duplicate_names": clashes}
        settings: dict[str, Any] = {}
        if keywords is not None:
            counts.update(keywords.finish(staging))
            settings["bm25"] = bm25_settings.to_json()
        embedder_info = None
        if vectors is not None and model is not None:

            def indexing(done: int, total: int) -> None:
                if progress is not None:
                    progress("indexing", done, total)

            details = vectors.finish(on_progress=indexing)
            counts["embedded"] = details["embedded"]
            counts["reused_embeddings"] = details["reused"]
            settings["vector"] = {**vector_settings.to_json(), "index": details["index"]}
            embedder_info = {"name": model.name, "dimension": int(model.dimension)}
        if kind == "hybrid":
            settings["hybrid"] = hybrid_settings.to_json()
        settings["build_seconds"] = round(time.perf_counter() - started, 3)
        files = {}
        for path in sorted(staging.rglob("*")):
            if path.is_file():
                name = path.relative_to(staging).as_posix()
                files[name] = FileEntry(path.stat().st_size, file_sha256(path))
        from toolsearch._version import __version__

        manifest = Manifest(
            format_version=FORMAT_VERSION,
            kind=kind,
            embedder=embedder_info,
            counts=counts,
            settings=settings,
            files=files,
            fingerprints_digest=hashlib.sha256(digests).hexdigest(),
            sources=tuple(source_names),
            build_command=command
            or _default_command(
                source_names, kind, target, embedder_option(model) if model else None
            ),
            created_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            toolsearch_version=__version__,
        )
        manifest.write(staging)
        del previous
        swap_into_place(staging, target)
        _log.info(
            "built %s index %s: %d tools in %.1f s",
            kind,
            target,
            store.count,
            settings["build_seconds"],
        )
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target, model
