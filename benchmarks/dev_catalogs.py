"""Eight more development catalogs, read from ``fetch`` snapshots of their repositories.

    from benchmarks.dev_catalogs import LOADERS
    name, catalog, queries = LOADERS["toolalpaca"]()  # SnapshotMissing without a snapshot

The sources, commits, formats and counts are recorded in ``docs/dev-data-sources.md``;
nothing of them is committed here. Each loader finds a bare git directory of the
repository under the mirror folder (``mirror`` argument, else ``$TOOLSEARCH_DEV_MIRROR``,
else ``/work/.mirror``; ``<owner>+<name>/repo`` as the ``fetch`` tool lays it out) and reads
files with ``git show <commit>:<path>``, at the commit the record names when the snapshot
holds it, else at ``HEAD`` (with a note on stderr). A missing snapshot or file raises
:class:`SnapshotMissing`, which :func:`benchmarks.dev_sets.dev_sets` turns into a one-line
message. The parsers (``*_set``) are pure functions over the parsed JSON (or source text),
so they are tested on hand-written records without git.

The sets (all tool names made provider-valid, ``^[a-zA-Z0-9_-]{1,64}$``, by
:func:`toolsearch.tools.names.sanitize_name` after folding accents to ASCII; a name that
clashes after that gains ``_`` + 6 hex digits of the sha256 of its source key):

* ``toolalpaca``: ToolAlpaca's ``eval_real`` + ``eval_simulated`` APIs pooled (21 APIs,
  94 operations); ``<API>__<function>`` names, ``category`` = the API; description = the
  function's description (its text before ``Parameters:``) and the API's name and
  description; schema from the operation in the API's OpenAPI document. Gold: the golden
  answers' actions, ``[Optional]`` stripped; actions that are not operations (the
  ask-the-user ``getDetails``, operations missing from ``Function_Projection``) are dropped.
* ``api-bank``: API-Bank's ``apis/*.py`` classes (read with ``ast``, never imported), minus
  ``ToolSearcher`` (the search tool itself); one request per level-1/level-2 dialogue: the
  user turns before its *last* API call (so each gold call's request is in the text; the
  record's sketch took only those before the first call), gold = the distinct APIs called,
  ``ToolSearcher`` left out, ``GetUserToken`` kept.
* ``gorilla-hf``, ``gorilla-tf``, ``gorilla-torch``: Gorilla APIBench's API rows (keyed by
  ``api_name`` for HuggingFace, by ``api_call`` for TF Hub and TorchHub, the first row of a
  key kept) and the eval split's instructions (text between ``###Instruction:`` and
  ``###Output``) with the row of ``api_data`` as gold.
* ``restbench-tmdb``, ``restbench-spotify``: RestBench queries over the TMDB and Spotify
  OpenAPI specs, converted by :mod:`toolsearch.catalog.openapi` (names from
  ``operationId``); gold = the solution's ``METHOD /path`` operations, in order.
* ``seal-tools``: Seal-Tools' 4,076 tools and its dev split (700 queries).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsearch.catalog.openapi import operation_tool, operations
from toolsearch.tools.definition import ToolDefinition
from toolsearch.tools.names import fit_name, qualified_name, sanitize_name, short_hash
from toolsearch_bench.data import Catalog, Query, QuerySet

__all__ = [
    "LOADERS",
    "MIRROR_ENV",
    "SOURCES",
    "Snapshot",
    "SnapshotMissing",
    "Source",
    "apibank_set",
    "gorilla_set",
    "gorilla_train_set",
    "jsonl",
    "open_snapshot",
    "restbench_set",
    "seal_set",
    "seal_train_set",
    "toolalpaca_set",
]

MIRROR_ENV = "TOOLSEARCH_DEV_MIRROR"
DEFAULT_MIRROR = Path("/work/.mirror")

Loaded = tuple[str, Catalog, QuerySet]


@dataclass(frozen=True)
class Source:
    """A repository and the commit ``docs/dev-data-sources.md`` recorded for it."""

    repo: str
    commit: str


SOURCES: dict[str, Source] = {
    "toolalpaca": Source("tangqiaoyu/ToolAlpaca", "189069998d64a7baf1b4a1c3c4b2e75eb9d05532"),
    "api-bank": Source("AlibabaResearch/DAMO-ConvAI", "483554eae102996f5ec1f4feab4e78ef29c2a394"),
    "gorilla": Source("ShishirPatil/gorilla", "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8"),
    "restbench": Source("Yifan-Song793/RestGPT", "d99012860cb45323975bf5780152d7aa44f390f5"),
    "seal-tools": Source("fairyshine/Seal-Tools", "ce753ecd60ed08dd376984035de531ab8421f1c6"),
}


class SnapshotMissing(LookupError):
    """A repository snapshot (or a file in it) is not on this machine; ``str()`` says which."""


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True)
class Snapshot:
    """A bare git directory, read at one commit."""

    git_dir: Path
    commit: str
    repo: str

    def _git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args],
            capture_output=True,
            check=False,
        )
        if done.returncode:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SnapshotMissing(
                f"git {' '.join(args)} failed in the snapshot of {self.repo} ({self.git_dir})"
                + (f": {said[-1]}" if said else "")
            )
        return done.stdout.decode("utf-8")

    def read(self, path: str) -> str:
        """The text of ``path`` at the snapshot's commit."""
        return self._git("show", f"{self.commit}:{path}")

    def listing(self, folder: str) -> list[str]:
        """The paths of the files directly in ``folder``, sorted."""
        out = self._git("ls-tree", "--name-only", self.commit, folder.rstrip("/") + "/")
        return sorted(line for line in out.splitlines() if line)


def mirror_root(mirror: str | Path | None = None) -> Path:
    return Path(mirror or os.environ.get(MIRROR_ENV) or DEFAULT_MIRROR)


def open_snapshot(source: Source, mirror: str | Path | None = None) -> Snapshot:
    """The snapshot of ``source`` under the mirror folder, at the recorded commit if it is
    there (else ``HEAD``, with a note on stderr); :class:`SnapshotMissing` when absent."""
    root = mirror_root(mirror)
    owner, name = source.repo.split("/")
    candidates = [
        root / f"{owner}+{name}" / "repo",
        root / f"{owner}+{name}",
        root / f"{owner}+{name}.git",
        root / owner / name,
    ]
    for git_dir in candidates:
        if (git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir():
            break
    else:
        raise SnapshotMissing(
            f"no snapshot of {source.repo} under {root} "
            f"(fetch github:{source.repo}, or set ${MIRROR_ENV})"
        )
    pinned = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{source.commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if pinned.returncode == 0:
        return Snapshot(git_dir, source.commit, source.repo)
    head = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(
        f"note: {source.repo}: recorded commit {source.commit[:12]} is not in {git_dir}; "
        f"reading HEAD ({head[:12] or 'unknown'})",
        file=sys.stderr,
    )
    return Snapshot(git_dir, "HEAD", source.repo)


# --------------------------------------------------------------------------- shared pieces


def jsonl(text: str) -> list[Any]:
    """The records of a JSON-lines text (blank lines skipped)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def tool_name(raw: str) -> str:
    """``raw`` as a provider-valid tool name: accents folded to ASCII, other runs of
    invalid characters turned into ``_``, cut to 64 characters."""
    folded = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii")
    return fit_name(sanitize_name(folded) or "tool")


class _Names:
    """Unique names: a name already taken gains ``_`` + 6 hex digits of its source key."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.renamed = 0

    def claim(self, base: str, key: str) -> str:
        name = base
        if name in self.taken:
            name = fit_name(base, "_" + short_hash(key, 6))
            self.renamed += 1
        self.taken.add(name)
        return name


_PY_TYPES = {
    "str": "string",
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "dict": "object",
    "object": "object",
}


def _property(spec: Any) -> dict[str, Any]:
    """A JSON Schema property from ``{"type": "str", "description": ...}`` (types from Python
    or JSON Schema names; another type is left out, its name kept in the description)."""
    if not isinstance(spec, Mapping):
        return {"description": str(spec)} if spec not in (None, "") else {}
    out: dict[str, Any] = {}
    raw_type = str(spec.get("type") or "").strip()
    described = str(spec.get("description") or "").strip()
    mapped = _PY_TYPES.get(raw_type.lower())
    if mapped:
        out["type"] = mapped
    elif raw_type:
        described = f"{described} ({raw_type})".strip()
    if described:
        out["description"] = described
    return out


def _schema(properties: Mapping[str, Any], required: Iterable[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {str(k): _property(v) for k, v in properties.items()},
    }
    wanted = [str(r) for r in required if str(r) in schema["properties"]]
    if wanted:
        schema["required"] = wanted
    return schema


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _finish(
    name: str,
    tools: Sequence[ToolDefinition],
    queries: Sequence[Query],
    catalog_notes: Mapping[str, Any],
    query_notes: Mapping[str, Any],
) -> Loaded:
    catalog = Catalog(name, tuple(tools), dict(catalog_notes))
    query_set = QuerySet(name, tuple(queries), dict(query_notes))
    query_set.validate_against(catalog)
    return name, catalog, query_set


def _resolve_gold(
    wanted: Iterable[str], names: Mapping[str, str], missing: Counter[str]
) -> tuple[str, ...]:
    """The catalog names of ``wanted`` source keys, in order without repeats; keys with no
    tool are counted in ``missing``."""
    found: list[str] = []
    for key in wanted:
        if key in names:
            found.append(names[key])
        else:
            missing[key] += 1
    return _unique(found)


# --------------------------------------------------------------------------- ToolAlpaca

_OPTIONAL = "[Optional]"


def toolalpaca_set(files: Mapping[str, Sequence[Mapping[str, Any]]]) -> Loaded:
    """ToolAlpaca's eval files (``{"real": [api, ...], "simulated": [...]}``) as one pool."""
    tools: list[ToolDefinition] = []
    queries: list[Query] = []
    names = _Names()
    missing: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    for split, apis in files.items():
        for api in apis:
            api_name = str(api["Name"])
            prefix = tool_name(api_name)[:24].rstrip("_-")
            document = api.get("Documentation") or {}
            if isinstance(document, str):
                document = json.loads(document)
            found = {(op.method, op.path): op for op in operations(document, api_name)}
            projection = api.get("Function_Projection") or {}
            local: dict[str, str] = {}
            for function, text in (api.get("Function_Description") or {}).items():
                if function not in projection:  # the stray "components" entry
                    stats["descriptions_without_operation"] += 1
                    continue
                path, method = projection[function]
                operation = found.get((str(method).lower(), str(path)))
                name = names.claim(
                    qualified_name(prefix, tool_name(function)), f"{api_name}.{function}"
                )
                head = str(text).split("\nParameters:", 1)[0].strip()
                context = f"{api_name}: {str(api.get('Description') or '').strip()}".strip()
                if operation is None:
                    stats["operations_not_in_document"] += 1
                    schema: Mapping[str, Any] = {"type": "object", "properties": {}}
                else:
                    converted = operation_tool(
                        document, operation, name=name, category=api_name, source=api_name
                    )
                    schema = converted.input_schema
                    head = head or converted.description
                tools.append(
                    ToolDefinition(
                        name=name,
                        description=f"{head}\n\n{context}".strip(),
                        input_schema=schema,
                        category=api_name,
                    )
                )
                local[function] = name
            answers = api.get("Golden_Answers") or []
            for position, text in enumerate(api.get("Instructions") or []):
                steps = answers[position] if position < len(answers) else []
                actions = [
                    str(step.get("Action") or "").replace(_OPTIONAL, "").strip()
                    for step in steps
                    if isinstance(step, Mapping)
                ]
                gold = _resolve_gold((a for a in actions if a), local, missing)
                if not gold or not str(text).strip():
                    stats["queries_without_gold"] += 1
                    continue
                queries.append(
                    Query(
                        f"toolalpaca_{split}_{prefix}_{position}",
                        str(text).strip(),
                        gold,
                        {"api": api_name, "split": split},
                    )
                )
    return _finish(
        "toolalpaca",
        tools,
        queries,
        {"renamed": names.renamed, **stats},
        {"gold_missing": dict(missing), "queries_without_gold": stats["queries_without_gold"]},
    )


# --------------------------------------------------------------------------- API-Bank

APIBANK_EXCLUDED = frozenset({"ToolSearcher"})


def _class_attributes(source: str) -> Iterable[tuple[str, dict[str, Any]]]:
    """``(class name, {attribute: literal value})`` of every top-level class of a module."""
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        values: dict[str, Any] = {}
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    try:
                        values[target.id] = ast.literal_eval(statement.value)
                    except (ValueError, SyntaxError, TypeError):
                        continue
        yield node.name, values


def apibank_set(
    api_sources: Mapping[str, str], dialogues: Mapping[str, Sequence[Mapping[str, Any]]]
) -> Loaded:
    """API-Bank's API classes (``{file: Python source}``) and dialogues (``{file: [turn]}``;
    a file under ``level-2-...`` is a level-2 dialogue, else level 1)."""
    tools: list[ToolDefinition] = []
    names = _Names()
    local: dict[str, str] = {}
    for _file, source in sorted(api_sources.items()):
        for class_name, values in _class_attributes(source):
            if "description" not in values or class_name in APIBANK_EXCLUDED:
                continue
            parameters = values.get("input_parameters") or {}
            name = names.claim(tool_name(class_name), class_name)
            tools.append(
                ToolDefinition(
                    name=name,
                    description=str(values["description"]).strip(),
                    input_schema=_schema(parameters if isinstance(parameters, Mapping) else {}),
                )
            )
            local[class_name] = name
    queries: list[Query] = []
    missing: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    for file, turns in sorted(dialogues.items()):
        calls = [
            (i, str(t.get("api_name")))
            for i, t in enumerate(turns)
            if t.get("role") == "API" and str(t.get("api_name")) not in APIBANK_EXCLUDED
        ]
        if not calls:
            stats["dialogues_without_api_call"] += 1
            continue
        last = calls[-1][0]
        text = "\n".join(
            str(t.get("text") or "").strip()
            for t in turns[:last]
            if t.get("role") == "User" and str(t.get("text") or "").strip()
        )
        gold = _resolve_gold((api for _, api in calls), local, missing)
        if not gold or not text:
            stats["dialogues_without_gold_or_text"] += 1
            continue
        level = 2 if "level-2" in file else 1
        stem = Path(file).name.removesuffix(".jsonl")
        queries.append(
            Query(f"api-bank_lv{level}_{stem}", text, gold, {"level": level, "file": file})
        )
    return _finish(
        "api-bank",
        tools,
        queries,
        {"renamed": names.renamed, "excluded": sorted(APIBANK_EXCLUDED)},
        {"gold_missing": dict(missing), **stats},
    )


# --------------------------------------------------------------------------- Gorilla APIBench

GORILLA_HUBS = {
    "huggingface": "gorilla-hf",
    "tensorflowhub": "gorilla-tf",
    "torchhub": "gorilla-torch",
}
_INSTRUCTION = re.compile(r"###\s*Instruction:\s*(.*?)\s*(?:###\s*Output|\Z)", re.S)
_TFHUB_URL = re.compile(r"tfhub\.dev/([^'\"\s)]+)")
_TORCH_REPO = re.compile(r"repo_or_dir\s*=\s*'([^']+)'")
_TORCH_MODEL = re.compile(r"model\s*=\s*'([^']+)'")
_NOT_GIVEN = {"", "n/a", "na", "none", "null"}


def _gorilla_key(hub: str, row: Mapping[str, Any]) -> str:
    return str(row.get("api_name") if hub == "huggingface" else row.get("api_call") or "")


def _gorilla_base_name(hub: str, row: Mapping[str, Any]) -> str:
    call = str(row.get("api_call") or "")
    if hub == "huggingface":
        return tool_name(str(row.get("api_name") or call))
    if hub == "tensorflowhub":
        url = _TFHUB_URL.search(call)
        loader = "keras" if "KerasLayer" in call else "load"
        return tool_name(f"{loader}_{url.group(1)}") if url else tool_name(call)
    repo, model = _TORCH_REPO.search(call), _TORCH_MODEL.search(call)
    if repo:
        return tool_name(f"{repo.group(1).split(':')[0]}_{model.group(1) if model else ''}")
    return tool_name(call)


def _given(value: Any) -> bool:
    return value is not None and str(value).strip().lower() not in _NOT_GIVEN


def _gorilla_schema(arguments: Any) -> dict[str, Any]:
    """A loose schema from ``api_arguments`` (a dict, a list of names or a string)."""
    properties: dict[str, Any] = {}
    if isinstance(arguments, Mapping):
        for key, value in arguments.items():
            properties[str(key)] = {"description": str(value)} if _given(value) else {}
    elif isinstance(arguments, list):
        for item in arguments:
            if isinstance(item, Mapping) and item.get("name"):
                properties[str(item["name"])] = {
                    k: str(v) for k, v in item.items() if k == "description" and _given(v)
                }
            elif isinstance(item, str) and _given(item):
                properties[item.strip()] = {}
    elif isinstance(arguments, str) and _given(arguments):
        for part in re.split(r"[,;]", arguments):
            word = part.strip()
            if re.fullmatch(r"[A-Za-z_][\w.]*", word):
                properties[word] = {}
    return {"type": "object", "properties": properties}


def _gorilla_description(row: Mapping[str, Any]) -> str:
    parts = [str(row.get(k) or "").strip() for k in ("domain", "functionality")]
    head = ": ".join(p for p in parts if _given(p))
    body = str(row.get("description") or "").strip()
    return ". ".join(p for p in (head, body) if _given(p))


def gorilla_set(
    hub: str, api_rows: Sequence[Mapping[str, Any]], eval_rows: Sequence[Mapping[str, Any]]
) -> Loaded:
    """One APIBench hub (``huggingface``, ``tensorflowhub``, ``torchhub``): its API rows
    deduplicated by key and its eval instructions."""
    set_name = GORILLA_HUBS[hub]
    tools: list[ToolDefinition] = []
    names = _Names()
    local: dict[str, str] = {}
    duplicates = 0
    for row in api_rows:
        key = _gorilla_key(hub, row)
        if not key:
            continue
        if key in local:
            duplicates += 1
            continue
        name = names.claim(_gorilla_base_name(hub, row), key)
        tools.append(
            ToolDefinition(
                name=name,
                description=_gorilla_description(row),
                input_schema=_gorilla_schema(row.get("api_arguments")),
                category=str(row.get("domain") or "").strip() or None,
            )
        )
        local[key] = name
    queries: list[Query] = []
    missing: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    for position, row in enumerate(eval_rows):
        code = str(row.get("code") or "")
        match = _INSTRUCTION.search(code)
        if match is None:
            stats["instructions_not_found"] += 1
            continue
        data = row.get("api_data") or {}
        gold = _resolve_gold([_gorilla_key(hub, data)], local, missing)
        if not gold:
            stats["queries_without_gold"] += 1
            continue
        queries.append(Query(f"{set_name}_{position}", match.group(1).strip(), gold))
    return _finish(
        set_name,
        tools,
        queries,
        {"rows": len(api_rows), "duplicate_rows": duplicates, "renamed": names.renamed},
        {"gold_missing": dict(missing), **stats},
    )


_TRAIN_INSTRUCTION = re.compile(r"'Instruction':\s*(.*?),\s*'Output':", re.S)


def _gorilla_train_code(code: str) -> str:
    """A train row's ``code`` in the eval split's ``###Instruction: ... ###Output`` form.

    The train splits hold ``{'Instruction': <text>, 'Output': {...}}`` (a Python repr, the
    text unquoted, sometimes wrapped in double quotes); a row already in the eval form, or
    one the pattern misses, is left as it is."""
    if re.search(r"###\s*Instruction:", code):
        return code
    match = _TRAIN_INSTRUCTION.search(code)
    if match is None:
        return code
    text = match.group(1).strip()
    if len(text) > 1 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return f"###Instruction: {text}\n###Output: {code[match.end() :]}"


def gorilla_train_set(
    hub: str, api_rows: Sequence[Mapping[str, Any]], train_rows: Sequence[Mapping[str, Any]]
) -> Loaded:
    """An APIBench hub's *train* split as requests over the same catalog as
    :func:`gorilla_set` (its API rows): each row's instruction brought to the eval form
    and read by :func:`gorilla_set`'s parser, so only rows whose gold tool is in the
    catalog are kept. Ids are ``<set>_train_<row>``, the order the file's."""
    normalised = [
        {**row, "code": _gorilla_train_code(str(row.get("code") or ""))} for row in train_rows
    ]
    name, catalog, queries = gorilla_set(hub, api_rows, normalised)
    prefix = f"{name}_"
    renamed = tuple(
        Query(f"{name}_train_{q.id[len(prefix) :]}", q.text, q.gold, q.metadata) for q in queries
    )
    notes = {"train_rows": len(train_rows), **dict(queries.notes)}
    return name, catalog, QuerySet(f"{name} (train)", renamed, notes)


# --------------------------------------------------------------------------- RestBench


def _boolean_required(node: Any) -> Any:
    """A copy of ``node`` with string ``required: "true"/"false"`` (Spotify's parameters)
    turned into booleans."""
    if isinstance(node, Mapping):
        out = {}
        for key, value in node.items():
            if key == "required" and isinstance(value, str):
                out[key] = value.strip().lower() == "true"
            else:
                out[key] = _boolean_required(value)
        return out
    if isinstance(node, list):
        return [_boolean_required(v) for v in node]
    return node


def restbench_set(which: str, spec: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Loaded:
    """RestBench's ``which`` (``tmdb``, ``spotify``): its spec and ``[{query, solution}]``."""
    set_name = f"restbench-{which}"
    document = _boolean_required(spec)
    tools: list[ToolDefinition] = []
    names = _Names()
    local: dict[str, str] = {}
    for operation in operations(document, set_name):
        key = f"{operation.method.upper()} {operation.path}"
        name = names.claim(tool_name(operation.name), key)
        tags = operation.operation.get("tags") or []
        category = str(tags[0]) if tags else None
        tools.append(
            operation_tool(document, operation, name=name, category=category, source=set_name)
        )
        local[key] = name
    queries: list[Query] = []
    missing: Counter[str] = Counter()
    dropped = 0
    for position, row in enumerate(rows):
        wanted = [" ".join(str(s).split()) for s in row.get("solution") or []]
        gold = _resolve_gold(wanted, local, missing)
        text = str(row.get("query") or "").strip()
        if not gold or not text:
            dropped += 1
            continue
        queries.append(Query(f"{set_name}_{position}", text, gold))
    return _finish(
        set_name,
        tools,
        queries,
        {"renamed": names.renamed},
        {"gold_missing": dict(missing), "queries_without_gold": dropped},
    )


# --------------------------------------------------------------------------- Seal-Tools


def seal_set(
    tool_rows: Sequence[Mapping[str, Any]], query_rows: Sequence[Mapping[str, Any]]
) -> Loaded:
    """Seal-Tools' ``tool.jsonl`` records and one split's query records."""
    tools: list[ToolDefinition] = []
    names = _Names()
    local: dict[str, str] = {}
    for row in tool_rows:
        raw = str(row.get("api_name") or "").strip()
        if not raw or raw in local:
            continue
        name = names.claim(tool_name(raw), raw)
        parameters = row.get("parameters") or {}
        tools.append(
            ToolDefinition(
                name=name,
                description=str(row.get("api_description") or "").strip(),
                input_schema=_schema(
                    parameters if isinstance(parameters, Mapping) else {},
                    row.get("required") or (),
                ),
                category=str(row.get("field") or "").strip() or None,
            )
        )
        local[raw] = name
    queries: list[Query] = []
    missing: Counter[str] = Counter()
    dropped = 0
    for position, row in enumerate(query_rows):
        wanted = [str(c.get("api") or "").strip() for c in row.get("calling") or []]
        gold = _resolve_gold((w for w in wanted if w), local, missing)
        text = str(row.get("query") or "").strip()
        if not gold or not text:
            dropped += 1
            continue
        queries.append(Query(str(row.get("id") or f"seal-tools_{position}"), text, gold))
    return _finish(
        "seal-tools",
        tools,
        queries,
        {"renamed": names.renamed, "sanitized": sum(raw != name for raw, name in local.items())},
        {"gold_missing": dict(missing), "queries_without_gold": dropped},
    )


def seal_train_set(
    tool_rows: Sequence[Mapping[str, Any]], splits: Sequence[Sequence[Mapping[str, Any]]]
) -> Loaded:
    """Other Seal-Tools splits, one after the other, as requests over the same catalog as
    :func:`seal_set`: learning from use feeds them while it scores the dev split. Ids are
    ``seal-tools_train_<position>`` (the splits' own ids repeat across splits)."""
    rows = [row for split in splits for row in split]
    name, catalog, queries = seal_set(tool_rows, rows)
    renamed = tuple(
        Query(f"{name}_train_{position}", q.text, q.gold, q.metadata)
        for position, q in enumerate(queries)
    )
    notes = {"train_rows": len(rows), **dict(queries.notes)}
    return name, catalog, QuerySet(f"{name} (other splits)", renamed, notes)


# --------------------------------------------------------------------------- loaders


def load_toolalpaca(mirror: str | Path | None = None) -> Loaded:
    snap = open_snapshot(SOURCES["toolalpaca"], mirror)
    return toolalpaca_set(
        {split: json.loads(snap.read(f"data/eval_{split}.json")) for split in ("real", "simulated")}
    )


def load_apibank(mirror: str | Path | None = None) -> Loaded:
    snap = open_snapshot(SOURCES["api-bank"], mirror)
    sources = {p: snap.read(p) for p in snap.listing("api-bank/apis") if p.endswith(".py")}
    dialogues = {
        p: jsonl(snap.read(p))
        for folder in ("level-1-given-desc", "level-2-toolsearcher")
        for p in snap.listing(f"api-bank/lv1-lv2-samples/{folder}")
        if p.endswith(".jsonl")
    }
    return apibank_set(sources, dialogues)


_GORILLA_EVAL = {
    "huggingface": "huggingface",
    "tensorflowhub": "tensorflow",
    "torchhub": "torchhub",
}


def load_gorilla(hub: str, mirror: str | Path | None = None) -> Loaded:
    snap = open_snapshot(SOURCES["gorilla"], mirror)
    return gorilla_set(
        hub,
        jsonl(snap.read(f"data/api/{hub}_api.jsonl")),
        jsonl(snap.read(f"data/apibench/{_GORILLA_EVAL[hub]}_eval.json")),
    )


def load_gorilla_train(hub: str, mirror: str | Path | None = None) -> Loaded:
    """:func:`gorilla_train_set` over ``data/apibench/<hub>_train.json`` (development data:
    the train splits are never reported sets)."""
    snap = open_snapshot(SOURCES["gorilla"], mirror)
    return gorilla_train_set(
        hub,
        jsonl(snap.read(f"data/api/{hub}_api.jsonl")),
        jsonl(snap.read(f"data/apibench/{_GORILLA_EVAL[hub]}_train.json")),
    )


def load_restbench(which: str, mirror: str | Path | None = None) -> Loaded:
    snap = open_snapshot(SOURCES["restbench"], mirror)
    return restbench_set(
        which,
        json.loads(snap.read(f"specs/{which}_oas.json")),
        json.loads(snap.read(f"datasets/{which}.json")),
    )


def load_seal(mirror: str | Path | None = None, split: str = "dev") -> Loaded:
    snap = open_snapshot(SOURCES["seal-tools"], mirror)
    return seal_set(
        jsonl(snap.read("Seal-Tools_Dataset/tool.jsonl")),
        jsonl(snap.read(f"Seal-Tools_Dataset/{split}.jsonl")),
    )


def load_seal_train(mirror: str | Path | None = None) -> Loaded:
    """:func:`seal_train_set` over Seal-Tools' two test splits (development data: no
    Seal-Tools split is a reported set)."""
    snap = open_snapshot(SOURCES["seal-tools"], mirror)
    return seal_train_set(
        jsonl(snap.read("Seal-Tools_Dataset/tool.jsonl")),
        [
            jsonl(snap.read(f"Seal-Tools_Dataset/{split}.jsonl"))
            for split in ("test_in_domain", "test_out_domain")
        ],
    )


LOADERS: dict[str, Callable[..., Loaded]] = {
    "toolalpaca": load_toolalpaca,
    "api-bank": load_apibank,
    "gorilla-hf": lambda mirror=None: load_gorilla("huggingface", mirror),
    "gorilla-tf": lambda mirror=None: load_gorilla("tensorflowhub", mirror),
    "gorilla-torch": lambda mirror=None: load_gorilla("torchhub", mirror),
    "restbench-tmdb": lambda mirror=None: load_restbench("tmdb", mirror),
    "restbench-spotify": lambda mirror=None: load_restbench("spotify", mirror),
    "seal-tools": load_seal,
}
"""Set name -> loader (``mirror`` optional); each raises :class:`SnapshotMissing`."""

TRAIN_LOADERS: dict[str, Callable[..., Loaded]] = {
    GORILLA_HUBS[hub]: (lambda mirror=None, hub=hub: load_gorilla_train(hub, mirror))
    for hub in GORILLA_HUBS
} | {"seal-tools": load_seal_train}
"""Set name -> the loader of requests over the same catalog from another split, which
learning from use feeds while it scores the set's own split: the Gorilla train splits
(:func:`load_gorilla_train`) and Seal-Tools' test splits (:func:`load_seal_train`)."""

SET_SOURCES: dict[str, Source] = {
    "toolalpaca": SOURCES["toolalpaca"],
    "api-bank": SOURCES["api-bank"],
    "gorilla-hf": SOURCES["gorilla"],
    "gorilla-tf": SOURCES["gorilla"],
    "gorilla-torch": SOURCES["gorilla"],
    "restbench-tmdb": SOURCES["restbench"],
    "restbench-spotify": SOURCES["restbench"],
    "seal-tools": SOURCES["seal-tools"],
}
