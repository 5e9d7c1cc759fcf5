"""``CatalogIndex``: build a large catalog's index once, load it fast, serve many sessions.

Layout of a built index folder (``indexes/NAME/``)::

    manifest.json           format version, kind, embedder, counts, settings, checksums
    tools.sqlite            definitions, summaries, names (exact lookup)
    fingerprints.npy        raw sha256 fingerprint per tool, catalog order
    fingerprints_sorted.npy, fingerprint_order.npy
                            the same sorted, and their catalog ids (session lookup)
    bm25_*.{txt,npy}        postings (bm25 and hybrid), memory-mapped
    embeddings.npy          unit vectors (vector and hybrid), memory-mapped on load
    vectors.faiss           IndexFlatIP up to 10,000 tools, IndexHNSWFlat above

**Why postings, not a tantivy index directory.** Keyword search is BM25F with the
*searched tools' own* statistics and normalized scores, as in ``Bm25ToolIndex``; a tantivy
index scores fields separately with whole-index statistics, so a session over 500 catalog
tools would rank them differently from a ``Bm25ToolIndex`` over the same 500. The build
analyzes text with the same tantivy analyzer and stores the weighted postings as
memory-mapped ``.npy`` arrays; a session's search recomputes the statistics over its subset
and returns exactly ``Bm25ToolIndex``'s hits and scores (see
:mod:`toolsearch.catalog.bm25_artifact` and ``indexes/README.md``).

**Builds** stream their sources (a tool is prepared, analyzed, stored and queued for
embedding, then dropped), embed in batches, and write everything into a temporary folder
next to the target (``.NAME.build-PID-...``) that replaces the target only once complete:
a killed build leaves the previous index as it was (killed between the two renames of the
swap, the previous index is moved back by the next ``load`` or ``build``). Rebuilding over
an existing index with the same embedder re-embeds only tools whose embedded text changed
(the sha256 of each row's text is stored: an edited definition, or a new version of the
text preparation, re-embeds; an unchanged tool reuses its row).

**Sessions.** A ``CatalogIndex`` is a ``ToolIndex``: ``index_tools(session, tools)`` looks
the tools' fingerprints up in the catalog (a memory-mapped binary search, no re-indexing),
and the session searches only those tools (the BM25 statistics and the vector ranking are
restricted to the subset before top-k). Tools the catalog does not hold go to a
fallback: BM25 analyzes them when the session registers and scores them together with the
session's catalog tools (one corpus, the whole session's statistics), vector search merges
the catalog's cosines with a per-session ``VectorToolIndex``'s, and a hybrid catalog fuses
those complete lists as ``HybridToolIndex`` does. A mixed session thus ranks like one
session index over all its tools (BM25: identical hits and scores, tested). An exact tool
name as query comes first, as in every backend. Searches are thread-safe, also while other
sessions register.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import shlex
import shutil
import signal
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolsearch.catalog.bm25_artifact import (
    Bm25Artifact,
    Bm25Settings,
    Bm25Writer,
    Extra,
    Scope,
    tool_terms,
)
from toolsearch.catalog.manifest import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    FileEntry,
    Manifest,
    file_sha256,
    read_manifest,
    rebuild_command,
    verify_files,
)
from toolsearch.catalog.store import ToolStore, ToolStoreWriter, definition_json
from toolsearch.catalog.vector_artifact import (
    EMBEDDINGS_FILE,
    TEXT_KEYS_FILE,
    PreviousEmbeddings,
    VectorArtifact,
    VectorScope,
    VectorSettings,
    VectorWriter,
)
from toolsearch.errors import (
    CatalogIndexError,
    CatalogSourceError,
    IndexCorruptedError,
    IndexNotFoundError,
    ManifestMismatchError,
    MissingExtraError,
)
from toolsearch.indexes import text as _text
from toolsearch.indexes.embedders import Embedder, embedder_factory
from toolsearch.search.types import (
    SearchMetadata,
    ToolReference,
    ToolSearchRequest,
    ToolSearchResponse,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "BuildProgress",
    "CatalogIndex",
    "HybridSettings",
    "IndexKind",
    "iter_source_tools",
    "resolve_embedder",
]

IndexKind = Literal["bm25", "vector", "hybrid"]
BuildProgress = Callable[[str, int, "int | None"], None]
"""``progress(stage, done, total)``: stages ``scan`` and ``read`` (source files: names
collected in a first pass when several MCP dumps or OpenAPI specs are read, then tools
read; not called for JSONL-only builds), ``tools`` (read, prepared and stored),
``embedded`` (rows embedded or reused) and ``indexing`` (rows added to FAISS)."""

# prepare without filling the process-wide cache: a build sees each tool once
_prepare = getattr(_text, "_prepare", _text.prepare_tool)


@dataclass(frozen=True, slots=True)
class HybridSettings:
    """Fusion settings; the defaults are ``HybridToolIndex``'s."""

    fusion: Literal["rrf", "convex"] = "rrf"
    rrf_k: float = 5.0
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    candidates: int = 50

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def matching_session_index(cls) -> HybridSettings:
        """``HybridToolIndex``'s current defaults (fusion, rrf_k, weights, candidates)."""
        from toolsearch.catalog.bm25_artifact import _defaults_of
        from toolsearch.indexes.hybrid import HybridToolIndex

        return cls(**_defaults_of(HybridToolIndex, cls))

    @classmethod
    def from_json(cls, data: Any) -> HybridSettings:
        raw = dict(data or {})
        return cls(
            fusion=raw.get("fusion", "rrf"),
            rrf_k=float(raw.get("rrf_k", 5.0)),
            bm25_weight=float(raw.get("bm25_weight", 1.0)),
            vector_weight=float(raw.get("vector_weight", 1.0)),
            candidates=int(raw.get("candidates", 50)),
        )


# -- embedders by name -----------------------------------------------------------------


def resolve_embedder(spec: str | Embedder | None) -> Embedder:
    """An embedder from a short name or a manifest's embedder name.

    ``static`` (default): the model2vec static all-MiniLM-L6-v2 (fast enough for 125k tools
    on a laptop); ``minilm``: the packaged all-MiniLM-L6-v2 via sentence-transformers;
    ``tuned``: the model ``toolsearch embedder finetune`` saved at its default place; the
    path of a sentence-transformers model folder; ``hashing`` / ``hashing-DIM``: the
    dependency-light test embedder. Manifest names
    (``model2vec/static-all-MiniLM-L6-v2-pca256``, ``sentence-transformers/...``,
    ``hashing-256``) resolve to the embedder that wrote them.
    """
    if spec is not None and not isinstance(spec, str):
        return spec
    return embedder_factory(spec or "static")()


# -- sources ---------------------------------------------------------------------------


def _paths_tools(
    paths: list[Path], kind: str, progress: BuildProgress | None = None
) -> Iterator[ToolDefinition]:
    for path in paths:
        if not path.exists():
            raise CatalogSourceError(str(path), "no such file or folder")
    from toolsearch.catalog.sources import CatalogReader

    yield from CatalogReader(paths, kind=kind, progress=progress)  # type: ignore[arg-type]


def iter_source_tools(
    sources: Iterable[str | os.PathLike[str] | ToolDefinition] | str | os.PathLike[str],
    *,
    source_kind: str = "auto",
    progress: BuildProgress | None = None,
) -> Iterator[ToolDefinition]:
    """Tools from files (JSONL, MCP ``tools/list`` dumps, OpenAPI specs) and/or
    ``ToolDefinition`` objects, streamed in order. Consecutive paths are read together, so
    MCP dumps can prefix clashing names by server. ``progress(stage, files done, files)``
    is called per file: stage ``scan`` (a first pass that collects names, when several
    files are read) and ``read``."""
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    pending: list[Path] = []
    for item in sources:
        if isinstance(item, ToolDefinition):
            if pending:
                yield from _paths_tools(pending, source_kind, progress)
                pending = []
            yield item
        else:
            pending.append(Path(item))
    if pending:
        yield from _paths_tools(pending, source_kind, progress)


# -- building --------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _leftovers(out: Path) -> Iterator[tuple[str, Path]]:
    """``(build|old, folder)`` of the temporary folders next to ``out`` whose build process
    is gone (killed): ``.NAME.build-PID-*`` (a new index being written) and
    ``.NAME.old-PID-*`` (the previous index, moved aside while swapping)."""
    if not out.parent.is_dir():
        return
    for candidate in sorted(out.parent.glob(f".{out.name}.*-*")):
        parts = candidate.name[len(out.name) + 2 :].split("-")
        if (
            len(parts) >= 2
            and parts[0] in ("build", "old")
            and parts[1].isdigit()
            and not _pid_alive(int(parts[1]))
        ):
            yield parts[0], candidate


def _recover_interrupted_swap(out: Path) -> bool:
    """Put the previous index back when a build was killed between its two renames
    (``out`` moved aside, the new one not yet in place). Returns whether it did."""
    if out.exists():
        return False
    for stage, candidate in _leftovers(out):
        if stage == "old" and (candidate / MANIFEST_NAME).is_file():
            try:
                os.replace(candidate, out)
            except OSError:
                continue
            return True
    return False


def _clean_stale(out: Path) -> None:
    """Recover from a swap that was killed halfway, then remove what killed builds left."""
    _recover_interrupted_swap(out)
    for _stage, candidate in _leftovers(out):
        shutil.rmtree(candidate, ignore_errors=True)


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
    except (CatalogIndexError, OSError, ValueError):
        return None  # nothing reusable: embed everything
    if embeddings.shape != (len(keys), embedder.dimension):
        return None
    return PreviousEmbeddings(keys, embeddings)


def _swap_into_place(staging: Path, out: Path) -> None:
    """Replace ``out`` with ``staging``: two renames; the old index stays whole until the
    new one is complete, and is deleted only after the new one is in place. An error
    between the renames moves the old index back; a process killed between them leaves it
    at ``.NAME.old-PID-*``, which the next ``load`` or ``build`` of ``out`` moves back."""
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        os.replace(out, old)
        try:
            os.replace(staging, out)
        except BaseException:
            os.replace(old, out)  # the previous index goes back where it was
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, out)


def _default_command(sources: Sequence[str], kind: str, out: Path, embedder: str | None) -> str:
    words = ["toolsearch", "index", "build", *sources, "--kind", kind, "--out", str(out)]
    if embedder:
        words += ["--embedder", embedder]
    command = shlex.join(words)
    return command if sources else command.replace("build --kind", "build SOURCE... --kind", 1)


def _embedder_option(embedder: Embedder) -> str | None:
    name = embedder.name
    if name.startswith("model2vec/static-all-MiniLM-L6-v2-pca256"):
        return "static"
    if name == "sentence-transformers/all-MiniLM-L6-v2":
        return "minilm"
    if name.startswith("hashing-"):
        return name
    return None


# -- parallel analysis ---------------------------------------------------------------
#
# Preparing and analyzing a tool (and, for JSONL sources, parsing and validating it) is
# most of a build's CPU time. Batches go to worker processes; the main process keeps the
# order, drops repeated names (first wins) and writes the artifacts. Results cross the
# process boundary as plain tuples (``_Analyzed``), never as ``ToolDefinition`` objects.

_BATCH = 512
"""Tools per analysis batch (what one worker handles at a time)."""

_PARALLEL_FROM = 2048
"""Catalogs smaller than this are analyzed in the calling process (no workers to start)."""

# name, fingerprint, category, definition JSON, summary, BM25 terms, embedding text
_Analyzed = tuple[str, str, "str | None", str, str, "dict[str, float] | None", str]


@dataclass(frozen=True, slots=True)
class _Shape:
    """What ``prepare_tool`` reads of a definition (rebuilt from JSON in a worker: cheaper
    than shipping and re-validating a ``ToolDefinition``)."""

    name: str
    description: str
    input_schema: Any
    category: str | None


class _WorkerError(Exception):
    """A source error inside a worker, carried back as plain text (picklable)."""


def _jsonl_tool(record: Any, where: str) -> ToolDefinition:
    """One JSONL record as a tool, by the sources module's rules (the worker just parsed
    it: the definition keeps the schema instead of copying it)."""
    from toolsearch.catalog.sources import jsonl_record_tool

    return jsonl_record_tool(record, where, parsed=True)


@dataclass(frozen=True)
class _Job:
    """Analyze a batch: ``("tools", [definition JSON...])`` of tools already read, or
    ``("jsonl", [(where, line)...])`` of raw JSONL lines to parse first."""

    bm25: Bm25Settings | None
    text: bool

    def __call__(self, batch: tuple[str, list[Any]]) -> list[_Analyzed]:
        import json

        form, items = batch
        out: list[_Analyzed] = []
        for item in items:
            if form == "jsonl":
                where, line = item
                try:
                    tool = _jsonl_tool(json.loads(line), where)
                except json.JSONDecodeError as exc:
                    raise _WorkerError(where, f"not valid JSON ({exc.msg})") from None
                except CatalogSourceError as exc:
                    raise _WorkerError(exc.source, exc.problem) from None
                definition = definition_json(tool)
                subject: Any = tool
            else:
                definition = item
                record = json.loads(definition)
                subject = tool = _Shape(
                    record["name"],
                    record.get("description") or "",
                    record.get("input_schema") or {},
                    record.get("category"),
                )
            prepared = _prepare(subject)
            out.append(
                (
                    tool.name,
                    tool.fingerprint if form == "jsonl" else "",  # type: ignore[union-attr]
                    tool.category,
                    definition,
                    prepared.summary,
                    tool_terms(prepared, self.bm25) if self.bm25 is not None else None,
                    prepared.full_text if self.text else "",
                )
            )
        return out


def _jsonl_only(sources: Any, source_kind: str) -> list[Path] | None:
    """The paths when every source is a JSONL file (read in the workers), else None."""
    if source_kind not in ("auto", "jsonl") or not isinstance(sources, list) or not sources:
        return None
    paths = []
    for item in sources:
        if isinstance(item, ToolDefinition):
            return None
        path = Path(item)
        if not path.is_file() or path.suffix.lower() not in (".jsonl", ".ndjson"):
            return None
        paths.append(path)
    return paths


def _jsonl_batches(paths: list[Path]) -> Iterator[tuple[str, list[Any]]]:
    batch: list[tuple[str, str]] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8-sig") as handle:
                for number, line in enumerate(handle, 1):
                    if line.strip():
                        batch.append((f"{path}:{number}", line))
                        if len(batch) >= _BATCH:
                            yield "jsonl", batch
                            batch = []
        except OSError as exc:
            raise CatalogSourceError(str(path), f"cannot read the file ({exc})") from exc
        except UnicodeDecodeError as exc:
            raise CatalogSourceError(str(path), f"not UTF-8 text ({exc})") from exc
    if batch:
        yield "jsonl", batch


_Meta = tuple[str, str, "str | None"]
"""What the main process keeps of a tool read outside the workers: name, fingerprint,
category (the workers analyze its definition JSON)."""


def _tool_batches(
    tools: Iterable[ToolDefinition],
) -> Iterator[tuple[tuple[str, list[Any]], list[_Meta]]]:
    batch: list[ToolDefinition] = []
    for tool in tools:
        batch.append(tool)
        if len(batch) >= _BATCH:
            yield _tools_batch(batch)
            batch = []
    if batch:
        yield _tools_batch(batch)


def _tools_batch(batch: list[ToolDefinition]) -> tuple[tuple[str, list[Any]], list[_Meta]]:
    metas = [(t.name, t.fingerprint, t.category) for t in batch]
    return ("tools", [definition_json(t) for t in batch]), metas


def _only_paths(sources: Any) -> bool:
    if isinstance(sources, (str, os.PathLike)):
        return True
    return isinstance(sources, list) and all(isinstance(s, (str, os.PathLike)) for s in sources)


def _produce(sources: Any, source_kind: str, queue: Any, with_progress: bool) -> None:
    """The reader process of a build from MCP dumps or OpenAPI specs: parsing the files is
    most of such a build's CPU time, so it runs beside the main process (which stores and
    indexes) and the analysis workers, instead of in front of them. Sends ``("batch",
    [(meta, definition JSON)...])``, ``("progress", stage, done, total)``, then ``("done",)``
    or the error."""
    _die_with_parent()

    def report(stage: str, done: int, total: int | None) -> None:
        queue.put(("progress", stage, done, total))

    try:
        for (_, definitions), metas in _tool_batches(
            iter_source_tools(
                sources, source_kind=source_kind, progress=report if with_progress else None
            )
        ):
            queue.put(("batch", list(zip(metas, definitions, strict=True))))
        queue.put(("done",))
    except CatalogSourceError as exc:
        queue.put(("source", exc.source, exc.problem))
    except MissingExtraError as exc:
        queue.put(("missing", exc.feature, exc.extra, exc.package))
    except BaseException as exc:  # carried to the main process as text
        queue.put(("failed", f"{type(exc).__name__}: {exc}"))


def _read_beside(
    sources: Any, source_kind: str, progress: BuildProgress | None, context: Any
) -> Iterator[tuple[tuple[str, list[Any]], list[_Meta]]]:
    """:func:`_tool_batches` of the sources, read in a process of their own."""
    import queue as queues

    channel = context.Queue(maxsize=8)
    reader = context.Process(
        target=_produce,
        args=(sources, source_kind, channel, progress is not None),
        name="toolsearch-source-reader",
        daemon=True,
    )
    reader.start()
    try:
        while True:
            try:
                message = channel.get(timeout=0.5)
            except queues.Empty:
                if not reader.is_alive() and channel.empty():
                    raise CatalogIndexError(
                        "<build>", f"the source reader process died (exit {reader.exitcode})"
                    ) from None
                continue
            if message[0] == "batch":
                items = message[1]
                yield ("tools", [d for _, d in items]), [m for m, _ in items]
            elif message[0] == "progress":
                if progress is not None:
                    progress(*message[1:])
            elif message[0] == "done":
                return
            elif message[0] == "source":
                raise CatalogSourceError(message[1], message[2])
            elif message[0] == "missing":
                raise MissingExtraError(*message[1:])
            else:
                raise CatalogIndexError("<build>", f"reading the sources failed: {message[1]}")
    finally:
        if reader.is_alive():
            reader.terminate()
        reader.join(timeout=10)
        channel.close()


def _die_with_parent() -> None:
    """Workers of a killed build must not linger: ask Linux to kill them with the parent."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _analyze_all(
    sources: Any,
    source_kind: str,
    job: _Job,
    workers: int | None,
    progress: BuildProgress | None = None,
) -> Iterator[_Analyzed]:
    """Every source tool analyzed, in order (repeated names not yet dropped)."""
    import collections
    import itertools
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    count = workers if workers is not None else min(os.cpu_count() or 1, 4)
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    paths = _jsonl_only(sources, source_kind)
    tagged: Iterator[tuple[tuple[str, list[Any]], list[_Meta] | None]]
    if paths is not None:  # the workers parse the lines themselves
        tagged = ((batch, None) for batch in _jsonl_batches(paths))
    elif count > 1 and _only_paths(sources):  # files to parse: a reader process of their own
        tagged = _read_beside(sources, source_kind, progress, context)
    else:
        tagged = _tool_batches(
            iter_source_tools(sources, source_kind=source_kind, progress=progress)
        )

    def merge(results: list[_Analyzed], metas: list[_Meta] | None) -> list[_Analyzed]:
        if metas is None:
            return results
        return [(*m, *r[3:]) for m, r in zip(metas, results, strict=True)]

    first = list(itertools.islice(tagged, _PARALLEL_FROM // _BATCH))
    stream = itertools.chain(first, tagged)
    try:
        if count <= 1 or len(first) * _BATCH < _PARALLEL_FROM:
            for batch, metas in stream:
                yield from merge(job(batch), metas)
            return
        with ProcessPoolExecutor(
            max_workers=count, mp_context=context, initializer=_die_with_parent
        ) as pool:
            pending: collections.deque[Any] = collections.deque()
            for batch, metas in stream:
                pending.append((pool.submit(job, batch), metas))
                if len(pending) >= count * 2:  # bounded: the build keeps streaming
                    future, done = pending.popleft()
                    yield from merge(future.result(), done)
            while pending:
                future, done = pending.popleft()
                yield from merge(future.result(), done)
    except _WorkerError as exc:
        raise CatalogSourceError(*exc.args) from None
    finally:
        close = getattr(tagged, "close", None)
        if close is not None:
            close()  # a reader process stops with the build


# -- sessions --------------------------------------------------------------------------


@dataclass
class _View:
    """One set of session tools over the catalog (shared by sessions with the same tools)."""

    tools: tuple[ToolDefinition, ...]
    by_name: dict[str, int]
    by_lower_name: dict[str, int]
    positions: Any  # session positions of the tools the catalog holds (increasing)
    docs: Any  # their catalog ids
    fallback: tuple[ToolDefinition, ...]
    scope: Scope | None  # None: the session is the whole catalog, in catalog order
    vector_scope: VectorScope | None
    extra: Extra | None = None  # the fallback tools' BM25 terms (bm25 and hybrid)
    extra_positions: Any = None  # the fallback tools' session positions
    users: int = 0
    summaries: dict[int, str] = field(default_factory=dict)

    def exact(self, query: str) -> int | None:
        text = query.strip()
        found = self.by_name.get(text)
        return found if found is not None else self.by_lower_name.get(text.lower())


class CatalogIndex:
    """A built catalog index; see the module docstring.

    Build with :meth:`build`, open with :meth:`load`. Search the whole catalog with
    :meth:`search_catalog`, or use it as the ``tool_index`` of a
    ``ToolSearchToolCallingAdvisor`` (sessions over subsets of the catalog).
    """

    def __init__(
        self,
        path: Path,
        manifest: Manifest,
        store: ToolStore,
        bm25: Bm25Artifact | None,
        vector: VectorArtifact | None,
        embedder: Embedder | None,
        hybrid: HybridSettings,
    ) -> None:
        self.path = path
        self.manifest = manifest
        self.kind: str = manifest.kind
        self.search_type = f"catalog-{manifest.kind}"
        self._store = store
        self._bm25 = bm25
        self._vector = vector
        self._embedder = embedder
        self._embedder_factory: Callable[[], Embedder] | None = None
        self.hybrid = hybrid
        self._sessions: dict[str, _View] = {}
        self._views: dict[tuple[str, ...], _View] = {}
        self._lock = threading.RLock()
        self._fallback_parts: dict[str, Any] | None = None

    # -- build and load -----------------------------------------------------------------

    @classmethod
    def build(
        cls,
        sources: Iterable[str | os.PathLike[str] | ToolDefinition] | str | os.PathLike[str],
        *,
        out: str | os.PathLike[str],
        kind: IndexKind = "bm25",
        embedder: Embedder | str | None = None,
        source_kind: str = "auto",
        progress: BuildProgress | None = None,
        bm25: Bm25Settings | None = None,
        vector: VectorSettings | None = None,
        hybrid: HybridSettings | None = None,
        reuse_embeddings: bool = True,
        command: str | None = None,
        workers: int | None = None,
    ) -> CatalogIndex:
        """Build an index of ``sources`` at ``out`` and return it loaded.

        Args:
            sources: Paths of JSONL catalogs, MCP ``tools/list`` dumps or OpenAPI specs,
                and/or ``ToolDefinition`` objects (streamed).
            out: The index folder; replaced only when the new build is complete.
            kind: ``bm25``, ``vector`` or ``hybrid``.
            embedder: For ``vector``/``hybrid``: an ``Embedder`` or ``static`` (default),
                ``minilm``, ``hashing``.
            source_kind: ``auto``, or force one reader (``jsonl``, ``mcp``, ``openapi``).
            progress: Called as ``progress(stage, done, total)``.
            reuse_embeddings: Copy unchanged tools' vectors from the index at ``out``.
            command: The rebuild command recorded in the manifest (the CLI passes its own).
            workers: Processes that prepare and analyze tools (default: the CPU count, at
                most 4; catalogs under 2,048 tools are analyzed in this process).
        """
        if kind not in ("bm25", "vector", "hybrid"):
            raise ValueError(f"kind must be bm25, vector or hybrid, not {kind!r}")
        target = Path(out)
        if target.exists() and (
            not target.is_dir() or (any(target.iterdir()) and not (target / MANIFEST_NAME).exists())
        ):
            raise CatalogIndexError(
                str(target), "exists and is not a catalog index; refusing to replace it"
            )
        # defaults follow the per-session indexes' (tuned) defaults, so a catalog ranks
        # like a session index would; the manifest records what was used
        bm25_settings = bm25 or Bm25Settings.matching_session_index()
        vector_settings = vector or VectorSettings.matching_session_index()
        hybrid_settings = hybrid or HybridSettings.matching_session_index()
        model = resolve_embedder(embedder) if kind != "bm25" else None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CatalogIndexError(
                str(target), f"cannot create its parent folder ({exc.strerror or exc})"
            ) from exc
        _clean_stale(target)
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
        started = time.perf_counter()
        try:
            store = ToolStoreWriter(staging)
            keywords = Bm25Writer(bm25_settings) if kind != "vector" else None

            def embedded(done: int) -> None:
                if progress is not None:
                    progress("embedded", done, None)

            vectors = (
                VectorWriter(staging, model, vector_settings, previous=previous, on_batch=embedded)
                if model is not None
                else None
            )
            job = _Job(bm25_settings if keywords is not None else None, vectors is not None)
            names: set[str] = set()
            clashes = 0
            for name, fingerprint, category, definition, summary, terms, text in _analyze_all(
                sources, source_kind, job, workers, progress
            ):
                if name in names:
                    clashes += 1  # the first definition of a name wins, as in a session
                    continue
                names.add(name)
                doc = store.add_analyzed(name, category, fingerprint, summary, definition)
                if keywords is not None:
                    keywords.add_terms(doc, terms or {})
                if vectors is not None:
                    vectors.add(text)
                if progress is not None and doc % _BATCH == 0:
                    progress("tools", doc + 1, None)
            del names
            if store.count == 0:
                raise CatalogSourceError(
                    ", ".join(source_names) or "<tools>", "no tools found in the sources"
                )
            if progress is not None:
                progress("tools", store.count, store.count)
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
            from toolsearch import __version__

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
                    source_names, kind, target, _embedder_option(model) if model else None
                ),
                created_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                toolsearch_version=__version__,
            )
            manifest.write(staging)
            del previous
            _swap_into_place(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return cls.load(target, embedder=model)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        embedder: Embedder | str | None = None,
        verify: bool = False,
    ) -> CatalogIndex:
        """Open a built index (memory-mapped; nothing is re-indexed).

        Args:
            path: The index folder.
            embedder: For vector/hybrid indexes: the query embedder. Omitted, the one named
                in the manifest is created. Another embedder than the one that built the
                index raises :class:`ManifestMismatchError`.
            verify: Also check every artifact's sha256 (sizes are always checked).

        Raises:
            IndexNotFoundError, ManifestMismatchError, IndexCorruptedError.
        """
        folder = Path(path)
        try:
            manifest = read_manifest(folder)
        except IndexNotFoundError:
            # a build killed between its two renames leaves the previous index aside
            if not _recover_interrupted_swap(folder):
                raise
            manifest = read_manifest(folder)
        model: Embedder | None = None
        if manifest.kind != "bm25" and embedder is not None:
            model = resolve_embedder(embedder)
            if (
                model.name != manifest.embedder_name
                or int(model.dimension) != manifest.embedder_dimension
            ):
                raise ManifestMismatchError(
                    str(folder),
                    f"built with embedder {manifest.embedder_name!r} "
                    f"({manifest.embedder_dimension}-d), asked to search with "
                    f"{model.name!r} ({model.dimension}-d); load it without an embedder, "
                    f"or rebuild it for this one: toolsearch index build "
                    f"{' '.join(manifest.sources) or 'SOURCE...'} --kind {manifest.kind} "
                    f"--out {folder} --embedder {_embedder_option(model) or 'NAME'}",
                )
        verify_files(folder, manifest, checksums=verify)
        try:
            store = ToolStore(folder)
            bm25 = (
                Bm25Artifact(folder, Bm25Settings.from_json(manifest.settings.get("bm25")))
                if manifest.kind != "vector"
                else None
            )
            vector = None
            if manifest.kind != "bm25":
                vector_settings = manifest.settings.get("vector") or {}
                vector = VectorArtifact(
                    folder,
                    VectorSettings.from_json(vector_settings),
                    str(vector_settings.get("index", "flat")),
                )
        except (OSError, ValueError, KeyError, sqlite3.DatabaseError, RuntimeError) as exc:
            raise IndexCorruptedError(
                str(folder),
                f"an artifact cannot be read ({exc}); rebuild with: "
                f"{rebuild_command(folder, manifest)}",
            ) from exc
        factory: Callable[[], Embedder] | None = None
        if manifest.kind != "bm25" and model is None:
            name = manifest.embedder_name or ""
            try:
                factory = embedder_factory(name)  # created on first use: loads stay fast
            except ValueError as exc:
                raise ManifestMismatchError(
                    str(folder),
                    f"built with embedder {name!r}, which cannot be recreated by name; "
                    "pass the same embedder (CatalogIndex.load(path, embedder=...)), or "
                    "rebuild it with a named one: toolsearch index build "
                    f"{' '.join(manifest.sources) or 'SOURCE...'} --kind {manifest.kind} "
                    f"--out {folder} --embedder static",
                ) from exc
        index = cls(
            folder,
            manifest,
            store,
            bm25,
            vector,
            model,
            HybridSettings.from_json(manifest.settings.get("hybrid")),
        )
        index._embedder_factory = factory
        return index

    @property
    def embedder(self) -> Embedder | None:
        """The query embedder (vector and hybrid indexes); the one named in the manifest is
        created on first use when ``load`` was not given one."""
        if self._embedder is None and self._embedder_factory is not None:
            with self._lock:
                if self._embedder is None:
                    self._embedder = self._embedder_factory()
                    if self._embedder.name != self.manifest.embedder_name:
                        raise ManifestMismatchError(
                            str(self.path),
                            f"built with embedder {self.manifest.embedder_name!r}, "
                            f"recreated {self._embedder.name!r}; rebuild with: "
                            f"{rebuild_command(self.path, self.manifest)}",
                        )
        return self._embedder

    def close(self) -> None:
        self._store.close()

    def __len__(self) -> int:
        return len(self._store)

    def __repr__(self) -> str:
        return f"CatalogIndex({str(self.path)!r}, kind={self.kind}, tools={len(self)})"

    # -- the catalog as a whole -----------------------------------------------------------

    def tool(self, name: str) -> ToolDefinition | None:
        """The catalog's definition of ``name`` (exact, then case-insensitive)."""
        found = self._store.find_name(name)
        return None if found is None else self._store.definition(found)

    def tools(self) -> Iterator[ToolDefinition]:
        """Every tool of the catalog, in catalog order (streamed from the store)."""
        return iter(self._store.iter_definitions())

    def search_catalog(
        self, query: str, max_results: int | None = 10, *, category: str | None = None
    ) -> ToolSearchResponse:
        """Search the whole catalog (what ``toolsearch index search`` runs)."""
        import numpy as np

        started = time.perf_counter()
        request = ToolSearchRequest("", query, max_results, category)
        text = _clean(query)
        if not text.strip():
            return self._response([], 0, text, started)
        limit = request.limit
        scope: Scope | None = None
        vector_scope: VectorScope | None = None
        if category is not None:
            docs = np.asarray(self._store.ids_in_category(category), dtype=np.int64)
            if not len(docs):
                return self._response([], 0, text, started)
            scope, vector_scope = self._scopes(docs)
        exact = self._store.find_name(text)
        if exact is not None and scope is not None and not scope.mask[exact]:
            exact = None
        places, scores, total = self._rank(text, limit + 1, scope, vector_scope)
        if scope is not None and scope.docs is not None:
            places = scope.docs[places] if len(places) else places
        hits: list[tuple[int, float | None]] = []
        if exact is not None:
            hits.append((exact, float(scores[0]) if len(scores) else None))
            if exact not in set(places.tolist()):
                total += 1
        hits.extend((int(d), float(s)) for d, s in zip(places, scores, strict=True) if d != exact)
        hits = hits[:limit]
        info = self._store.summaries(d for d, _ in hits)
        references = [ToolReference(info[d][0], info[d][1], s) for d, s in hits]
        return self._response(references, max(total, len(references)), text, started)

    # -- the ToolIndex protocol -----------------------------------------------------------

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        """Register a session's tools: catalog tools by fingerprint (no re-indexing),
        others in the per-session fallback index."""
        unique: dict[str, ToolDefinition] = {}
        for tool in tools:
            if not isinstance(tool, ToolDefinition):
                raise TypeError(
                    f"index_tools needs ToolDefinition objects, got {type(tool).__name__}"
                )
            unique.setdefault(tool.name, tool)
        ordered = tuple(unique.values())
        key = tuple(tool.fingerprint for tool in ordered)
        with self._lock:
            view = self._views.get(key)
        if view is None:
            view = self._build_view(ordered, key)
        with self._lock:
            view = self._views.setdefault(key, view)
            view.users += 1
            self._release(session_id)
            self._sessions[session_id] = view
        if view.fallback:
            for part in self._fallback().values():
                part.index_tools(session_id, list(view.fallback))
        elif self._fallback_parts is not None:
            for part in self._fallback_parts.values():
                part.clear_index(session_id)

    def index_tool(self, session_id: str, tool: ToolDefinition) -> None:
        """Add one tool to a session (replacing a tool of the same name)."""
        with self._lock:
            current = self._sessions.get(session_id)
            existing = [t for t in current.tools if t.name != tool.name] if current else []
            self.index_tools(session_id, [*existing, tool])

    def clear_index(self, session_id: str) -> None:
        with self._lock:
            self._release(session_id)
        if self._fallback_parts is not None:
            for part in self._fallback_parts.values():
                part.clear_index(session_id)

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def search(self, request: ToolSearchRequest) -> ToolSearchResponse:
        import numpy as np

        started = time.perf_counter()
        view = self._sessions.get(request.session_id)
        query = _clean(request.query)
        if view is None or not query.strip():
            return self._response([], 0, query, started)
        limit = request.limit
        scope, vector_scope, docs_positions = view.scope, view.vector_scope, view.positions
        if request.category is not None:
            wanted = [i for i, t in enumerate(view.tools) if t.category == request.category]
            if not wanted:
                return self._response([], 0, query, started)
            inside = np.isin(view.positions, np.asarray(wanted, dtype=np.int64))
            docs_positions = view.positions[inside]
            scope, vector_scope = self._scopes(view.docs[inside]) if inside.any() else (None, None)
        exact = view.exact(query)
        if (
            exact is not None
            and request.category is not None
            and view.tools[exact].category != request.category
        ):
            exact = None
        ranked, total = self._session_rank(
            view, request, query, limit + 1, scope, vector_scope, docs_positions
        )
        hits: list[tuple[int, float | None]] = []
        if exact is not None:
            hits.append((exact, max((s for _, s in ranked), default=None)))
            if all(p != exact for p, _ in ranked):
                total = max(total, 1)
        hits.extend((p, s) for p, s in ranked if p != exact)
        references = [
            ToolReference(view.tools[p].name, self._summary(view, p), s) for p, s in hits[:limit]
        ]
        return self._response(references, max(total, len(references)), query, started)

    # -- internals ------------------------------------------------------------------------

    def _summary(self, view: _View, position: int) -> str:
        found = view.summaries.get(position)
        if found is None:
            found = _text.prepare_tool(view.tools[position]).summary
            view.summaries[position] = found
        return found

    def _scopes(self, docs: Any) -> tuple[Scope, VectorScope | None]:
        """Search scopes for catalog ids ``docs`` (in session order)."""
        import numpy as np

        docs = np.asarray(docs, dtype=np.int64)
        if self._bm25 is not None:
            scope = self._bm25.scope(docs)
        else:
            order = np.argsort(docs, kind="stable")
            mask = np.zeros(len(self), dtype=bool)
            mask[docs] = True
            scope = Scope(len(docs), docs, mask, order, docs[order])
        vector_scope = (
            self._vector.scope(docs, scope.order, scope.sorted_docs)
            if self._vector is not None
            else None
        )
        return scope, vector_scope

    def _build_view(self, tools: tuple[ToolDefinition, ...], key: tuple[str, ...]) -> _View:
        import numpy as np

        ids = self._store.lookup(list(key))
        found = ids >= 0
        positions = np.flatnonzero(found)
        docs = ids[found]
        fallback = tuple(tools[i] for i in np.flatnonzero(~found).tolist())
        by_name = {t.name: i for i, t in enumerate(tools)}
        lower: dict[str, int] = {}
        for i, tool in enumerate(tools):
            lower.setdefault(tool.name.lower(), i)
        whole = len(docs) == len(self) and bool(np.all(docs == np.arange(len(docs))))
        scope: Scope | None = None
        vector_scope: VectorScope | None = None
        if not whole:
            scope, vector_scope = self._scopes(docs)
        extra = None
        if fallback and self._bm25 is not None:  # scored with the catalog's postings
            settings = self._bm25.settings
            extra = Extra.of([tool_terms(_text.prepare_tool(t), settings) for t in fallback])
        return _View(
            tools,
            by_name,
            lower,
            positions,
            docs,
            fallback,
            scope,
            vector_scope,
            extra,
            np.flatnonzero(~found),
        )

    def _release(self, session_id: str) -> None:
        view = self._sessions.pop(session_id, None)
        if view is None:
            return
        view.users -= 1
        if view.users <= 0:
            key = tuple(t.fingerprint for t in view.tools)
            if self._views.get(key) is view:
                del self._views[key]

    def _query_vector(self, query: str) -> Any:
        assert self.embedder is not None
        return self.embedder.embed_query(query)

    def _backends(self) -> list[tuple[str, float]]:
        """``(backend, weight)`` of the rankings a search fuses (one for bm25/vector)."""
        if self.kind != "hybrid":
            return [(self.kind, 1.0)]
        settings = self.hybrid
        return [
            (backend, weight)
            for backend, weight in (
                ("bm25", settings.bm25_weight),
                ("vector", settings.vector_weight),
            )
            if weight != 0
        ]

    def _backend_rank(
        self,
        backend: str,
        query: str,
        depth: int,
        scope: Scope | None,
        vector_scope: VectorScope | None,
    ) -> tuple[Any, Any, int]:
        """One backend's best ``depth``: places in ``scope.docs`` (catalog ids when ``scope``
        is None), scores, and how many tools it matched."""
        if backend == "bm25":
            assert self._bm25 is not None
            return self._bm25.rank(query, depth, scope or self._bm25.whole)
        assert self._vector is not None
        return self._vector.rank(self._query_vector(query), depth, vector_scope)

    def _fuse(self, rankings: list[tuple[list[tuple[int, float]], float]]) -> list[Any]:
        """``HybridToolIndex``'s fusion of ``(ranking best first, weight)`` lists."""
        settings = self.hybrid
        total_weight = settings.bm25_weight + settings.vector_weight
        fused: dict[int, float] = {}
        for ranking, weight in rankings:
            if settings.fusion == "rrf":
                for rank, (place, _score) in enumerate(ranking, start=1):
                    fused[place] = fused.get(place, 0.0) + weight / (settings.rrf_k + rank)
            else:
                for place, score in ranking:
                    fused[place] = fused.get(place, 0.0) + max(score, 0.0) * weight / total_weight
        return sorted(fused.items(), key=lambda item: (-item[1], item[0]))

    def _depth(self, limit: int) -> int:
        return limit if self.kind != "hybrid" else max(limit, self.hybrid.candidates)

    def _rank(
        self, query: str, limit: int, scope: Scope | None, vector_scope: VectorScope | None
    ) -> tuple[Any, Any, int]:
        """Best first: places in ``scope.docs`` (catalog ids when ``scope`` is None)."""
        import numpy as np

        if self.kind != "hybrid":
            return self._backend_rank(self.kind, query, limit, scope, vector_scope)
        depth = self._depth(limit)
        rankings = []
        for backend, weight in self._backends():
            places, scores, _ = self._backend_rank(backend, query, depth, scope, vector_scope)
            rankings.append((list(zip(places.tolist(), scores.tolist(), strict=True)), weight))
        fused = self._fuse(rankings)
        ordered = fused[:limit]
        places = np.asarray([p for p, _ in ordered], dtype=np.int64)
        scores = np.asarray([s for _, s in ordered], dtype=np.float64)
        return places, scores, len(fused)

    def _session_rank(
        self,
        view: _View,
        request: ToolSearchRequest,
        query: str,
        limit: int,
        scope: Scope | None,
        vector_scope: VectorScope | None,
        docs_positions: Any,
    ) -> tuple[list[tuple[int, float]], int]:
        """A session's best ``limit`` as ``(session position, score)``, and its total.

        Without fallback tools this is the catalog ranking. With them, BM25 scores the
        fallback tools together with the catalog's (their terms were analyzed when the
        session registered; the statistics are the whole session's), the vector backend
        merges the catalog's and a fallback ``VectorToolIndex``'s cosines, and a hybrid
        fuses those two complete lists (fusing two already-fused lists would give the
        fallback's best tool a top fused rank whatever its relevance)."""
        if not view.fallback:
            if not len(docs_positions):
                return [], 0
            places, scores, total = self._rank(query, limit, scope, vector_scope)
            pairs = zip(docs_positions[places].tolist(), scores.tolist(), strict=True)
            return [(int(p), float(s)) for p, s in pairs], total
        parts = self._fallback()
        depth = self._depth(limit)
        rankings: list[tuple[list[tuple[int, float]], float]] = []
        total = 0
        for backend, weight in self._backends():
            if backend == "bm25":
                ranked, matched = self._bm25_with_fallback(
                    view, request, query, depth, scope, docs_positions
                )
                rankings.append((ranked, weight))
                total = max(total, matched)
                continue
            ranked = []
            matched = 0
            if len(docs_positions):
                places, scores, matched = self._backend_rank(
                    backend, query, depth, scope, vector_scope
                )
                pairs = zip(docs_positions[places].tolist(), scores.tolist(), strict=True)
                ranked = [(int(p), float(s)) for p, s in pairs]
            extra = parts[backend].search(
                ToolSearchRequest(request.session_id, query, depth, request.category)
            )
            matched += extra.total_matches
            for ref in extra.tool_references:
                position = view.by_name.get(ref.tool_name)
                if position is not None:
                    score = ref.relevance_score
                    ranked.append((position, float(score) if score is not None else 0.0))
            ranked.sort(key=lambda item: (-item[1], item[0]))
            rankings.append((ranked[:depth], weight))
            total = max(total, matched)
        if self.kind != "hybrid":
            ranked, _ = rankings[0]
            return ranked[:limit], total
        fused = self._fuse(rankings)
        return fused[:limit], len(fused)

    def _bm25_with_fallback(
        self,
        view: _View,
        request: ToolSearchRequest,
        query: str,
        depth: int,
        scope: Scope | None,
        docs_positions: Any,
    ) -> tuple[list[tuple[int, float]], int]:
        """BM25 over a session's catalog tools and its fallback tools as one corpus."""
        import numpy as np

        assert self._bm25 is not None
        assert view.extra is not None
        extra, extra_positions = view.extra, view.extra_positions
        if request.category is not None:
            keep = [i for i, t in enumerate(view.fallback) if t.category == request.category]
            extra, extra_positions = extra.pick(keep), extra_positions[keep]
        searched = (scope or self._bm25.whole) if len(docs_positions) else Scope(0)
        # place -> session position: catalog places first, then the fallback tools
        positions = np.concatenate([np.asarray(docs_positions, dtype=np.int64), extra_positions])
        places, scores, matched = self._bm25.rank(query, depth, searched, extra, positions)
        pairs = zip(positions[places].tolist(), scores.tolist(), strict=True)
        return [(int(p), float(s)) for p, s in pairs], matched

    def _fallback(self) -> dict[str, Any]:
        """Per-session indexes for tools the catalog does not hold: a ``VectorToolIndex``
        with the catalog's settings for vector and hybrid catalogs (BM25 scores them with
        the catalog's own postings, see ``_bm25_with_fallback``)."""
        with self._lock:
            if self._fallback_parts is not None:
                return self._fallback_parts
            settings = self.manifest.settings
            parts: dict[str, Any] = {}  # BM25 scores fallback tools with the catalog's
            if self.kind != "bm25":
                from toolsearch.indexes.vector import VectorToolIndex

                v = VectorSettings.from_json(settings.get("vector"))
                parts["vector"] = VectorToolIndex(
                    embedder=self.embedder,
                    hnsw_threshold=v.hnsw_threshold,
                    hnsw_m=v.hnsw_m,
                    hnsw_ef_search=v.hnsw_ef_search,
                )
            self._fallback_parts = parts
            return parts

    def _response(
        self, references: list[ToolReference], total: int, query: str, started: float
    ) -> ToolSearchResponse:
        return ToolSearchResponse(
            tuple(references),
            total,
            SearchMetadata(self.search_type, query, (time.perf_counter() - started) * 1000.0),
        )


def _clean(query: Any) -> str:
    text = query if isinstance(query, str) else ""
    # lone surrogates (a model's "\ud800" decoded by json) cannot be encoded: replace them
    return text.encode("utf-8", "replace").decode("utf-8")
