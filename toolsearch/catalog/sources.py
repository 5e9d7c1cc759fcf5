"""Catalog sources: JSONL catalogs, MCP ``tools/list`` dumps and OpenAPI specs as tools.

``iter_tools(paths)`` streams :class:`ToolDefinition` s from files and folders (a folder
means every matching file inside it, recursively, in sorted order); only one file is held
in memory at a time. Every name it yields is unique across the whole stream:

* JSONL names are the user's and are never changed; a repeated name is an error.
* MCP tools and OpenAPI operations whose name appears in more than one file (server or
  API) are renamed ``<server>__<name>`` / ``<api>__<name>`` (separator: two
  underscores), and only those. The decision depends on the set of names, not on file
  order, so it needs every name first: when more than one file is read, a cheap first
  pass collects names before the second pass builds tools.
* If a renamed name still collides (two files with one server or API name), each
  colliding one gains ``_`` + 6 hex digits of the sha256 of its file's key (its path
  relative to the folder given), again independent of order.

:class:`CatalogReader` is the same stream with counters (:class:`SourceStats`) and
``on_error="skip"``, which skips a malformed file, line, tool or operation, counts it and
goes on (a large directory always holds a few broken specs). ``docs/catalog-sources.md``
lists every format and rule.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from toolsearch.catalog.mcp_dump import dump_tool, read_dump, schema_of, tool_name
from toolsearch.catalog.openapi import (
    ConversionCounts,
    ConversionOptions,
    api_name,
    api_title,
    load_document,
    operation_tool,
    operations,
    spec_version,
)
from toolsearch.errors import CatalogSourceError, ToolDefinitionError
from toolsearch.tools.definition import ToolDefinition
from toolsearch.tools.names import CLASH_SEPARATOR, fit_name, server_prefix, short_hash

_log = logging.getLogger(__name__)

__all__ = [
    "CLASH_SEPARATOR",
    "CatalogReader",
    "ConversionOptions",
    "SourceFile",
    "SourceKind",
    "SourceStats",
    "detect_kind",
    "iter_tools",
    "jsonl_record_tool",
    "server_prefix",
]

SourceKind = Literal["jsonl", "mcp", "openapi"]
KindArgument = Literal["auto", "jsonl", "mcp", "openapi"]
OnError = Literal["raise", "skip"]
ProgressCallback = Callable[[str, int, int], None]

_EXTENSIONS: dict[str, frozenset[str]] = {
    "auto": frozenset({".jsonl", ".ndjson", ".json", ".yaml", ".yml"}),
    "jsonl": frozenset({".jsonl", ".ndjson"}),
    "mcp": frozenset({".json"}),
    "openapi": frozenset({".json", ".yaml", ".yml"}),
}
_FIRST_KEY = re.compile(r'^\s*\{\s*"([^"\\]{1,40})"\s*:')
_OPENAPI_KEYS = frozenset({"openapi", "swagger"})
_MCP_KEYS = frozenset({"tools", "result", "jsonrpc", "server", "serverInfo"})
_SNIFF_BYTES = 65_536
_KEPT_ERRORS = 100


@dataclass(frozen=True)
class SourceFile:
    """One input file: where it is, what it holds, and its order-independent ``key``.

    ``key`` is the path relative to the parent of the argument that named it (POSIX form,
    e.g. ``api/azure.com/sql.json`` for the folder argument ``.../api``); it seeds the
    hash that separates colliding renamed tools.
    """

    path: Path
    kind: SourceKind
    key: str


@dataclass(frozen=True)
class SourceStats:
    """Counts of one pass over the sources; a snapshot, read it after (or during) a run."""

    files_total: int = 0
    """Files found (after discovery)."""
    files_read: int = 0
    """Files whose tools were all considered (skipped records included)."""
    files_skipped: int = 0
    """Whole files skipped: unreadable, unparseable, unknown kind (``on_error="skip"``)."""
    tools: int = 0
    """Tools yielded."""
    records_skipped: int = 0
    """JSONL lines, MCP tools and OpenAPI operations skipped (``on_error="skip"``)."""
    renamed: int = 0
    """Tools whose name was prefixed (and perhaps hashed) because it clashed."""
    operations: int = 0
    """OpenAPI operations seen (converted or skipped)."""
    recursive_refs: int = 0
    """Recursive ``$ref`` s replaced by ``{"type": "object"}``."""
    stubbed_refs: int = 0
    """``$ref`` s past the depth/count budget replaced by a stub."""
    external_refs: int = 0
    """Non-local ``$ref`` s replaced by ``{}`` (no network, no other files)."""
    trimmed_descriptions: int = 0
    """OpenAPI tool or parameter descriptions cut to their budget."""
    by_kind: Mapping[str, int] = field(default_factory=dict)
    """Tools yielded per source kind."""
    errors: tuple[str, ...] = ()
    """The first 100 skip reasons (file, line or operation, problem)."""
    error_count: int = 0
    """All skip reasons, including those past the first 100."""

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["by_kind"] = dict(self.by_kind)
        out["errors"] = list(self.errors)
        return out


def detect_kind(path: str | Path) -> SourceKind:
    """What a file holds, from its extension and, for ``.json``, its top-level keys.

    ``.jsonl``/``.ndjson``: a JSONL catalog; ``.yaml``/``.yml``: an OpenAPI spec;
    ``.json``: an OpenAPI spec if it has ``openapi``/``swagger``, an MCP dump if it is a
    list or has ``tools``/``result``. Anything else is a :class:`CatalogSourceError`.
    """
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".yaml", ".yml"):
        return "openapi"
    if suffix != ".json":
        raise CatalogSourceError(
            str(file), "unknown catalog file type (expected .jsonl, .json, .yaml or .yml)"
        )
    try:
        with open(file, encoding="utf-8-sig", errors="replace") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as exc:
        raise CatalogSourceError(str(file), f"cannot read the file ({exc})") from exc
    if head.lstrip().startswith("["):
        return "mcp"
    match = _FIRST_KEY.match(head)
    if match and match.group(1) in _OPENAPI_KEYS:
        return "openapi"
    if match and match.group(1) in _MCP_KEYS:
        return "mcp"
    data = load_document(file)  # keys in another order: look at all of them
    if isinstance(data, list):
        return "mcp"
    if isinstance(data, Mapping):
        if _OPENAPI_KEYS & data.keys():
            return "openapi"
        if "tools" in data or isinstance(data.get("result"), Mapping):
            return "mcp"
    raise CatalogSourceError(
        str(file), "neither an OpenAPI spec (no 'openapi'/'swagger') nor an MCP dump (no 'tools')"
    )


def iter_tools(
    paths: Sequence[str | Path] | str | Path,
    *,
    kind: KindArgument = "auto",
    on_error: OnError = "raise",
    options: ConversionOptions | None = None,
) -> Iterator[ToolDefinition]:
    """Stream the tools of files and folders, with names unique across the stream.

    ``kind="auto"`` tells each file's kind by :func:`detect_kind`; another value reads
    every file as that kind. ``on_error="skip"`` skips malformed files and records instead
    of raising :class:`CatalogSourceError`; use :class:`CatalogReader` to see the counts.
    """
    yield from CatalogReader(paths, kind=kind, on_error=on_error, options=options)


class CatalogReader:
    """The tools of catalog files, streamed, with :class:`SourceStats` about the run.

    ``reader = CatalogReader(["specs/"], on_error="skip")``; ``for tool in reader: ...``;
    then ``reader.stats``. Each iteration reads the files again and restarts the counts.
    ``progress(phase, done, total)`` is called per file in the ``"scan"`` (names) and
    ``"read"`` (tools) phases; ``on_skip(error)`` for every skipped item.
    """

    def __init__(
        self,
        paths: Sequence[str | Path] | str | Path,
        *,
        kind: KindArgument = "auto",
        on_error: OnError = "raise",
        options: ConversionOptions | None = None,
        progress: ProgressCallback | None = None,
        on_skip: Callable[[CatalogSourceError], None] | None = None,
    ) -> None:
        if kind not in _EXTENSIONS:
            raise ValueError(f"kind must be one of {sorted(_EXTENSIONS)}, got {kind!r}")
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        if isinstance(paths, (str, Path)):
            paths = [paths]
        self.kind = kind
        self.on_error = on_error
        self.options = options or ConversionOptions()
        self._progress = progress
        self._on_skip = on_skip
        self._files, self._discovery_errors = _discover(paths, kind)
        if self._discovery_errors and on_error == "raise":
            raise self._discovery_errors[0]
        self._run = _Run(len(self._files))

    @property
    def files(self) -> tuple[SourceFile, ...]:
        """The files this reader reads, in reading order."""
        return self._files

    @property
    def stats(self) -> SourceStats:
        """The counts of the current (or last) iteration."""
        return self._run.snapshot()

    def __iter__(self) -> Iterator[ToolDefinition]:
        self._run = _Run(len(self._files) + len(self._discovery_errors))
        for error in self._discovery_errors:
            self._run.files_skipped += 1
            self._skip(error)
        renames = self._scan()
        emitted: dict[str, str] = {}  # name -> the file that yielded it
        total = len(self._files)
        for number, file in enumerate(self._files, 1):
            if file.key in self._run.dead:  # failed (and was counted) in the scan
                if self._progress is not None:
                    self._progress("read", number, total)
                continue
            try:
                tools = self._read(file, renames.get(file.key, {}))
                for tool in tools:
                    first = emitted.get(tool.name)
                    if first is not None:
                        self._record_error(
                            CatalogSourceError(
                                str(file.path),
                                f"duplicate tool name {tool.name!r} (already in {first})",
                            )
                        )
                        continue
                    emitted[tool.name] = file.key
                    self._run.tools += 1
                    self._run.by_kind[file.kind] += 1
                    yield tool
            except CatalogSourceError as exc:
                self._run.files_skipped += 1
                self._skip(exc)
            else:
                self._run.files_read += 1
            if self._progress is not None:
                self._progress("read", number, total)

    # -- errors -------------------------------------------------------------------------

    def _skip(self, error: CatalogSourceError) -> None:
        if self.on_error == "raise":
            raise error
        _log.debug("catalog source: skipped %s", error)
        self._run.note(error)
        if self._on_skip is not None:
            self._on_skip(error)

    def _record_error(self, error: CatalogSourceError) -> None:
        """A bad line, tool or operation: raise, or skip it and go on with the file."""
        self._skip(error)
        self._run.records_skipped += 1

    # -- pass 1: names ------------------------------------------------------------------

    def _scan(self) -> dict[str, dict[str, str]]:
        """``{file key: {base name: final name}}`` for renamed tools only."""
        renamable = [f for f in self._files if f.kind != "jsonl"]
        if len(self._files) < 2 or not renamable:
            return {}  # nothing can clash across files
        owners: dict[str, list[str]] = defaultdict(list)  # base name -> file keys
        prefixes: dict[str, str] = {}
        total = len(self._files)
        for number, file in enumerate(self._files, 1):
            try:
                prefix, names = self._names(file)
            except CatalogSourceError as exc:
                self._run.dead.add(file.key)
                self._run.files_skipped += 1
                self._skip(exc)
                names, prefix = [], None
            if prefix is not None:
                prefixes[file.key] = prefix
            for name in dict.fromkeys(names):
                owners[name].append(file.key)
            if self._progress is not None:
                self._progress("scan", number, total)
        return _resolve_clashes(owners, prefixes, {f.key for f in renamable})

    def _names(self, file: SourceFile) -> tuple[str | None, list[str]]:
        """A file's rename prefix (``None`` for JSONL) and its base names."""
        if file.kind == "jsonl":
            names = []
            for _, record in _jsonl_records(file.path, lenient=True):
                name = _unwrap(record).get("name") if isinstance(record, Mapping) else None
                if isinstance(name, str):
                    names.append(name.strip())
            return None, names
        if file.kind == "mcp":
            dump = read_dump(file.path)
            found = (tool_name(record) for record in dump.tools)
            return server_prefix(dump.server), [name for name in found if name is not None]
        document = load_document(file.path)
        spec_version(document, str(file.path))
        prefix = api_name(document, file.path.stem)
        return prefix, [op.name for op in operations(document, str(file.path))]

    # -- pass 2: tools ------------------------------------------------------------------

    def _read(self, file: SourceFile, renames: Mapping[str, str]) -> Iterable[ToolDefinition]:
        if file.kind == "jsonl":
            return self._read_jsonl(file)
        if file.kind == "mcp":
            return self._read_mcp(file, renames)
        return self._read_openapi(file, renames)

    def _read_jsonl(self, file: SourceFile) -> Iterator[ToolDefinition]:
        for number, record in _jsonl_records(file.path, lenient=False, on_error=self._record_error):
            try:
                yield jsonl_record_tool(record, f"{file.path}:{number}", parsed=True)
            except CatalogSourceError as exc:
                self._record_error(exc)

    def _read_mcp(self, file: SourceFile, renames: Mapping[str, str]) -> Iterator[ToolDefinition]:
        dump = read_dump(file.path)
        for position, record in enumerate(dump.tools, 1):
            where = f"{file.path} (tool {position})"
            name = tool_name(record)
            if name is None:
                self._record_error(CatalogSourceError(where, "a tool needs a non-empty 'name'"))
                continue
            final = renames.get(name, name)
            try:
                tool = dump_tool(record, name=final, server=dump.server, source=where)
            except CatalogSourceError as exc:
                self._record_error(exc)
                continue
            if final != name:
                self._run.renamed += 1
            yield tool

    def _read_openapi(
        self, file: SourceFile, renames: Mapping[str, str]
    ) -> Iterator[ToolDefinition]:
        source = str(file.path)
        document = load_document(file.path)
        spec_version(document, source)
        category = api_title(document, file.path.stem)
        counts = ConversionCounts()
        for operation in operations(document, source):
            self._run.operations += 1
            final = renames.get(operation.name, operation.name)
            try:
                tool = operation_tool(
                    document,
                    operation,
                    name=final,
                    category=category,
                    source=source,
                    options=self.options,
                    counts=counts,
                )
            except CatalogSourceError as exc:
                self._record_error(exc)
                continue
            if final != operation.name:
                self._run.renamed += 1
            yield tool
        self._run.add_counts(counts)


# --------------------------------------------------------------------------- helpers


class _Run:
    """Mutable counters of one iteration; :meth:`snapshot` freezes them."""

    def __init__(self, files_total: int) -> None:
        self.files_total = files_total
        self.files_read = 0
        self.files_skipped = 0
        self.tools = 0
        self.records_skipped = 0
        self.renamed = 0
        self.operations = 0
        self.counts = ConversionCounts()
        self.by_kind: Counter[str] = Counter()
        self.errors: list[str] = []
        self.error_count = 0
        self.dead: set[str] = set()  # file keys that failed in the scan

    def note(self, error: CatalogSourceError) -> None:
        self.error_count += 1
        if len(self.errors) < _KEPT_ERRORS:
            self.errors.append(str(error))

    def add_counts(self, counts: ConversionCounts) -> None:
        for name in ("recursive_refs", "stubbed_refs", "external_refs", "trimmed_descriptions"):
            setattr(self.counts, name, getattr(self.counts, name) + getattr(counts, name))

    def snapshot(self) -> SourceStats:
        return SourceStats(
            files_total=self.files_total,
            files_read=self.files_read,
            files_skipped=self.files_skipped,
            tools=self.tools,
            records_skipped=self.records_skipped,
            renamed=self.renamed,
            operations=self.operations,
            recursive_refs=self.counts.recursive_refs,
            stubbed_refs=self.counts.stubbed_refs,
            external_refs=self.counts.external_refs,
            trimmed_descriptions=self.counts.trimmed_descriptions,
            by_kind=dict(self.by_kind),
            errors=tuple(self.errors),
            error_count=self.error_count,
        )


def _resolve_clashes(
    owners: Mapping[str, list[str]], prefixes: Mapping[str, str], renamable: set[str]
) -> dict[str, dict[str, str]]:
    """Rename every renamable holder of a name held by several files (see module doc)."""
    finals: dict[tuple[str, str], str] = {}  # (file key, base) -> final, renamed only
    for base, keys in owners.items():
        if len(keys) > 1:
            for key in keys:
                if key in renamable:
                    finals[(key, base)] = fit_name(f"{prefixes[key]}{CLASH_SEPARATOR}{base}")
    counts: Counter[str] = Counter()
    for base, keys in owners.items():
        for key in keys:
            counts[finals.get((key, base), base)] += 1
    for base, keys in owners.items():
        for key in keys:
            final = finals.get((key, base), base)
            if counts[final] > 1 and key in renamable:
                finals[(key, base)] = fit_name(final, "_" + short_hash(key, 6))
    renames: dict[str, dict[str, str]] = defaultdict(dict)
    for (key, base), final in finals.items():
        renames[key][base] = final
    return dict(renames)


def _discover(
    paths: Iterable[str | Path], kind: KindArgument
) -> tuple[tuple[SourceFile, ...], list[CatalogSourceError]]:
    found: dict[Path, tuple[Path, str]] = {}  # resolved path -> (path, key)
    for argument in paths:
        root = Path(argument)
        if root.is_dir():
            matches = sorted(
                (p for p in root.rglob("*") if _wanted(p, root, kind)),
                key=lambda p: p.relative_to(root).as_posix(),
            )
            for match in matches:
                key = (Path(root.name) / match.relative_to(root)).as_posix()
                found.setdefault(match.resolve(), (match, key))
        elif root.is_file():
            found.setdefault(root.resolve(), (root, root.name))
        else:
            raise CatalogSourceError(str(root), "no such file or folder")
    keys = Counter(key for _, key in found.values())
    files: list[SourceFile] = []
    errors: list[CatalogSourceError] = []
    for resolved, (path, key) in found.items():
        unique = key if keys[key] == 1 else resolved.as_posix()
        try:
            file_kind: SourceKind = detect_kind(path) if kind == "auto" else kind
        except CatalogSourceError as exc:
            errors.append(exc)
            continue
        files.append(SourceFile(path, file_kind, unique))
    return tuple(files), errors


def _wanted(path: Path, root: Path, kind: KindArgument) -> bool:
    if any(part.startswith(".") for part in path.relative_to(root).parts):
        return False
    return path.suffix.lower() in _EXTENSIONS[kind] and path.is_file()


def _jsonl_records(
    path: Path,
    *,
    lenient: bool,
    on_error: Callable[[CatalogSourceError], None] | None = None,
) -> Iterator[tuple[int, Any]]:
    """``(line number, record)`` of a JSONL file; blank lines are skipped."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    if not lenient and on_error is not None:
                        on_error(
                            CatalogSourceError(f"{path}:{number}", f"not valid JSON ({exc.msg})")
                        )
                    continue
                except RecursionError:
                    if not lenient and on_error is not None:
                        on_error(CatalogSourceError(f"{path}:{number}", "JSON nested too deeply"))
                    continue
                yield number, record
    except OSError as exc:
        raise CatalogSourceError(str(path), f"cannot read the file ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise CatalogSourceError(str(path), f"not UTF-8 text ({exc})") from exc


def jsonl_record_tool(record: Any, where: str, *, parsed: bool = False) -> ToolDefinition:
    """One JSONL record as a tool (``Catalog.from_jsonl``'s format plus aliases).

    ``where`` (e.g. ``"tools.jsonl:12"``) starts the :class:`CatalogSourceError` message.
    ``parsed=True`` says the record was just parsed and nothing else refers to it: the
    definition keeps its schema instead of deep-copying it (a build's readers do that)."""
    if not isinstance(record, Mapping):
        raise CatalogSourceError(where, "each line must be a JSON object")
    record = _unwrap(record)
    name = record.get("name")
    if not isinstance(name, str) or not name.strip():
        raise CatalogSourceError(where, "a tool needs a non-empty string 'name'")
    description = record.get("description")
    if description is not None and not isinstance(description, str):
        raise CatalogSourceError(where, "'description' must be a string")
    category = record.get("category")
    if category is not None and not isinstance(category, str):
        raise CatalogSourceError(where, "'category' must be a string")
    create = ToolDefinition._adopting if parsed else ToolDefinition
    try:
        return create(name.strip(), description or "", schema_of(record, where), category)
    except ToolDefinitionError as exc:
        raise CatalogSourceError(where, exc.problem) from exc


def _unwrap(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """OpenAI's ``{"type": "function", "function": {...}}`` as the inner definition."""
    inner = record.get("function")
    return inner if isinstance(inner, Mapping) and "name" not in record else record


_jsonl_tool = jsonl_record_tool  # the name toolsearch.catalog.index imported first
