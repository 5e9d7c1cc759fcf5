"""The analysis stage of a catalog build: sources streamed in order, analyzed in batches.

Preparing and analyzing a tool (and, for JSONL sources, parsing and validating it) is
most of a build's CPU time. Batches go to worker processes; the build keeps the order,
drops repeated names (first wins) and writes the artifacts. Results cross the process
boundary as :class:`AnalyzedTool` records, never as ``ToolDefinition`` objects. Builds
from MCP dumps or OpenAPI specs also read their files in a process of their own.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from toolsearch.catalog.store import definition_json
from toolsearch.errors import CatalogIndexError, CatalogSourceError, MissingExtraError
from toolsearch.indexes import text as _text
from toolsearch.indexes.lexical.analysis import tool_terms
from toolsearch.indexes.params import Bm25Params
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "BATCH",
    "PARALLEL_FROM",
    "AnalysisJob",
    "AnalyzedTool",
    "BuildProgress",
    "analyze_sources",
    "count_records",
    "iter_source_tools",
]

BuildProgress = Callable[[str, int, "int | None"], None]
"""``progress(stage, done, total)``: stages ``model`` (0 of 1, then 1 of 1), ``scan`` and
``read`` (source files: names collected in a first pass when several MCP dumps or OpenAPI
specs are read, then tools read; not called for JSONL-only builds), ``tools`` (read and
analyzed, repeated names included), ``embedded`` (rows embedded or reused) and
``indexing`` (rows added to FAISS). ``total`` is ``None`` while unknown (tools of MCP dumps
or OpenAPI specs before the last file is read); ``done`` never exceeds it, and each stage
ends with ``done == total``."""

# prepare without filling the process-wide cache: a build sees each tool once
_prepare = getattr(_text, "_prepare", _text.prepare_tool)


class AnalyzedTool(NamedTuple):
    """One tool as the analysis stage hands it to the build (picklable, compact)."""

    name: str
    fingerprint: str
    """Empty when a worker analyzed a definition the build already fingerprinted."""
    category: str | None
    definition: str
    """The definition as JSON (what the store keeps)."""
    summary: str
    terms: dict[str, float] | None
    """BM25 weighted term frequencies (bm25 and hybrid builds)."""
    text: tuple[str, ...]
    """The views the embedder reads (vector and hybrid builds; empty otherwise)."""


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


BATCH = 512
"""Tools per analysis batch (what one worker handles at a time)."""

PARALLEL_FROM = 2048
"""Catalogs smaller than this are analyzed in the calling process (no workers to start)."""


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
class AnalysisJob:
    """Analyze a batch: ``("tools", [definition JSON...])`` of tools already read, or
    ``("jsonl", [(where, line)...])`` of raw JSONL lines to parse first."""

    bm25: Bm25Params | None
    text: bool

    def __call__(self, batch: tuple[str, list[Any]]) -> list[AnalyzedTool]:
        import json

        form, items = batch
        out: list[AnalyzedTool] = []
        for item in items:
            tool: ToolDefinition | _Shape
            if form == "jsonl":
                where, line = item
                try:
                    tool = _jsonl_tool(json.loads(line), where)
                except json.JSONDecodeError as exc:
                    raise _WorkerError(where, f"not valid JSON ({exc.msg})") from None
                except RecursionError:
                    raise _WorkerError(where, "JSON nested too deeply") from None
                except CatalogSourceError as exc:
                    raise _WorkerError(exc.source, exc.problem) from None
                try:
                    definition = definition_json(tool)
                except RecursionError:  # parsed, but too deep to serialize again
                    raise _WorkerError(where, "JSON nested too deeply") from None
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
                AnalyzedTool(
                    tool.name,
                    tool.fingerprint if form == "jsonl" else "",  # type: ignore[union-attr]
                    tool.category,
                    definition,
                    prepared.summary,
                    tool_terms(prepared, self.bm25) if self.bm25 is not None else None,
                    prepared.embedding_views if self.text else (),
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


def count_records(sources: Any, source_kind: str = "auto") -> int | None:
    """How many tools ``sources`` hold, when that is cheap to know exactly: a list of
    ``ToolDefinition`` objects, or JSONL files only (their non-blank lines, counted as
    :func:`_jsonl_batches` reads them). ``None`` otherwise (MCP dumps and OpenAPI specs are
    known only once parsed) and when a file cannot be read (the build reports that)."""
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    if (
        isinstance(sources, list)
        and sources
        and all(isinstance(s, ToolDefinition) for s in sources)
    ):
        return len(sources)
    paths = _jsonl_only(sources, source_kind)
    if paths is None:
        return None
    count = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8-sig") as handle:
                count += sum(1 for line in handle if line.strip())
        except (OSError, UnicodeDecodeError):
            return None
    return count


def _jsonl_batches(paths: list[Path]) -> Iterator[tuple[str, list[Any]]]:
    batch: list[tuple[str, str]] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8-sig") as handle:
                for number, line in enumerate(handle, 1):
                    if line.strip():
                        batch.append((f"{path}:{number}", line))
                        if len(batch) >= BATCH:
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
        if len(batch) >= BATCH:
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


def _context() -> Any:
    """Fork where the platform has it (workers start without importing anything again).
    Imported only when processes start: a small build analyzes in-process."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def analyze_sources(
    sources: Any,
    source_kind: str,
    job: AnalysisJob,
    workers: int | None,
    progress: BuildProgress | None = None,
) -> Iterator[AnalyzedTool]:
    """Every source tool analyzed, in order (repeated names not yet dropped)."""
    import collections
    import itertools

    count = workers if workers is not None else min(os.cpu_count() or 1, 4)
    paths = _jsonl_only(sources, source_kind)
    tagged: Iterator[tuple[tuple[str, list[Any]], list[_Meta] | None]]
    if paths is not None:  # the workers parse the lines themselves
        tagged = ((batch, None) for batch in _jsonl_batches(paths))
    elif count > 1 and _only_paths(sources):  # files to parse: a reader process of their own
        tagged = _read_beside(sources, source_kind, progress, _context())
    else:
        tagged = _tool_batches(
            iter_source_tools(sources, source_kind=source_kind, progress=progress)
        )

    def merge(results: list[AnalyzedTool], metas: list[_Meta] | None) -> list[AnalyzedTool]:
        if metas is None:
            return results
        return [
            r._replace(name=m[0], fingerprint=m[1], category=m[2])
            for m, r in zip(metas, results, strict=True)
        ]

    first = list(itertools.islice(tagged, PARALLEL_FROM // BATCH))
    stream = itertools.chain(first, tagged)
    try:
        if count <= 1 or len(first) * BATCH < PARALLEL_FROM:
            for batch, metas in stream:
                yield from merge(job(batch), metas)
            return
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(
            max_workers=count, mp_context=_context(), initializer=_die_with_parent
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
