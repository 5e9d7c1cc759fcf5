"""BFCL (Berkeley Function Calling Leaderboard) as one pooled catalog and its queries.

Source
    The PyPI package ``bfcl-eval`` (install with ``pip install --no-deps bfcl-eval``: it
    pins old numpy/faiss/networkx that toolsearch does not need). Its files
    ``bfcl_eval/data/BFCL_v4_<category>.json`` (JSON lines: ``id``, ``question`` - a list
    of turns, each a list of ``{"role", "content"}`` messages - and ``function``, the
    function docs offered with the question) and
    ``bfcl_eval/data/possible_answer/BFCL_v4_<category>.json`` (``id``, ``ground_truth``:
    a list of ``{function_name: {argument: [accepted values]}}``) are read in place through
    ``importlib.resources``. Licence: Apache-2.0 (the data's README and the package).

What the loader builds
    * Queries from the single-turn categories that have gold function names
      (:data:`GOLD_CATEGORIES`: ``simple_python``, ``multiple``, ``parallel``,
      ``parallel_multiple``, the four ``live_*`` ones, ``simple_java`` and
      ``simple_javascript``; 2,501 queries in bfcl-eval 2026.3). Query ``id`` is BFCL's id,
      ``text`` the user messages of all turns joined by a blank line, ``gold`` the function
      names of the possible answer in order without repeats, ``metadata`` ``{"category"}``.
    * One catalog pooling the function docs of those categories and, with
      ``distractors=True`` (default), of the single-turn categories without gold
      (:data:`DISTRACTOR_CATEGORIES`: ``irrelevance``, ``live_irrelevance``,
      ``live_relevance``), which only add tools: about 1,850 distinct names in all
      (about 1,440 without distractors). ``category`` is the BFCL category the tool was
      first seen in. Multi-turn, memory, web-search and format-sensitivity categories are
      not supported (their gold is call strings over a separate function-doc set).

Odd records
    * The same function name occurs in many questions. Identical docs (name, description
      and parameters) are kept once (``duplicate_function_docs_identical``). The same name
      with a different description or parameters - BFCL edits docs per question, e.g.
      ``get_current_weather`` has dozens of variants - keeps the first one seen, gold categories
      before distractors, in file order; the later ones are counted
      (``duplicate_function_docs_conflicting``, ``names_with_conflicting_docs``).
    * Names keep their dots (``math.factorial`` is a valid tool name); whitespace in a
      name is replaced by ``_`` in the catalog and in gold alike (``names_with_whitespace``);
      docs without a name are skipped (``function_docs_without_name``).
    * BFCL parameter types are not all JSON Schema: ``dict``/``HashMap`` become
      ``object``, ``float``/``double`` ``number``, ``long`` ``integer``,
      ``tuple``/``Array``/``ArrayList`` ``array``, ``String``/``char`` ``string``,
      ``Boolean`` ``boolean`` (any case); ``any``, an empty type and unknown types are
      dropped so the value is unconstrained (counts per source type in
      ``schema_types_converted`` / ``schema_types_dropped``). The non-standard
      ``"optional": true`` keyword is removed (``required`` already says it). A top level
      without ``type``/``properties`` gets ``"type": "object"`` / ``"properties": {}``.
    * System messages in a question are ignored (``system_messages_ignored``). Queries
      without user text, without a possible answer, without gold names, or with a gold name
      that is not in the catalog are dropped and counted in ``QuerySet.notes``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.loaders._common import distribution_version

__all__ = ["DISTRACTOR_CATEGORIES", "GOLD_CATEGORIES", "load_bfcl"]

GOLD_CATEGORIES: tuple[str, ...] = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "simple_java",
    "simple_javascript",
)
"""Single-turn categories whose possible answers name the gold functions (the default)."""

DISTRACTOR_CATEGORIES: tuple[str, ...] = ("irrelevance", "live_irrelevance", "live_relevance")
"""Single-turn categories without gold names: their function docs only widen the catalog."""

_PACKAGE = "bfcl_eval"
_DISTRIBUTION = "bfcl-eval"
_INSTALL = "pip install --no-deps bfcl-eval"
_FILE = re.compile(r"^BFCL_v(\d+)_(\w+)\.json$")

_TYPE_MAP = {
    "dict": "object",
    "object": "object",
    "hashmap": "object",
    "map": "object",
    "float": "number",
    "double": "number",
    "number": "number",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "string": "string",
    "str": "string",
    "char": "string",
    "character": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "arraylist": "array",
    "tuple": "array",
    "set": "array",
    "null": "null",
}
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def load_bfcl(
    categories: Iterable[str] | None = None,
    *,
    distractors: bool = True,
    data_dir: str | Path | Traversable | None = None,
) -> tuple[Catalog, QuerySet]:
    """The pooled BFCL catalog and the queries of ``categories`` (default: all of
    :data:`GOLD_CATEGORIES`).

    ``distractors`` adds the function docs of :data:`DISTRACTOR_CATEGORIES` to the
    catalog. ``data_dir`` reads the same file layout from another folder instead of the
    installed package. Raises :class:`DatasetUnavailableError` when ``bfcl-eval`` is not
    installed and ``ValueError`` for a category that has no gold function names.
    """
    chosen = _categories(categories)
    root = _data_root() if data_dir is None else _as_traversable(data_dir)
    files = _category_files(root)

    stats: Counter[str] = Counter()
    converted: Counter[str] = Counter()
    dropped_types: Counter[str] = Counter()
    docs: dict[str, tuple[str, Mapping[str, Any], str]] = {}  # name -> (key, raw doc, category)
    conflicting: set[str] = set()

    def add_functions(record: Mapping[str, Any], category: str) -> None:
        for function in record.get("function") or ():
            if not isinstance(function, Mapping):
                stats["function_docs_not_objects"] += 1
                continue
            stats["function_docs_read"] += 1
            name = _tool_name(function.get("name"), stats)
            if name is None:
                stats["function_docs_without_name"] += 1
                continue
            key = json.dumps(
                [function.get("description"), function.get("parameters")],
                sort_keys=True,
                default=str,
            )
            first = docs.get(name)
            if first is None:
                docs[name] = (key, function, category)
            elif first[0] == key:
                stats["duplicate_function_docs_identical"] += 1
            else:
                stats["duplicate_function_docs_conflicting"] += 1
                conflicting.add(name)

    queries: list[tuple[str, str, list[str], str]] = []  # id, text, raw gold, category
    per_category: dict[str, int] = {}
    qstats: Counter[str] = Counter()
    for category in chosen:
        if category not in files or category not in files.get("possible_answer/", {}):
            raise ValueError(f"BFCL data in {root} has no questions or answers for {category!r}")
        answers = {
            str(r.get("id")): r for r in _read_json_lines(files["possible_answer/"][category])
        }
        count = 0
        for record in _read_json_lines(files[category]):
            add_functions(record, category)
            qid = str(record.get("id"))
            text, system = _user_text(record.get("question"))
            qstats["system_messages_ignored"] += system
            if not text:
                qstats["queries_dropped_no_user_text"] += 1
                continue
            answer = answers.get(qid)
            if answer is None:
                qstats["queries_dropped_no_answer"] += 1
                continue
            raw_gold = _gold_names(answer.get("ground_truth"))
            if not raw_gold:
                qstats["queries_dropped_no_gold"] += 1
                continue
            queries.append((qid, text, raw_gold, category))
            count += 1
        per_category[category] = count
    distractor_categories = DISTRACTOR_CATEGORIES if distractors else ()
    for category in distractor_categories:
        if category in files:
            for record in _read_json_lines(files[category]):
                add_functions(record, category)
        else:
            stats["distractor_categories_missing"] += 1

    tools = tuple(
        ToolDefinition(
            name=name,
            description=str(doc.get("description") or ""),
            input_schema=_top_level_schema(doc.get("parameters"), converted, dropped_types),
            category=category,
        )
        for name, (_, doc, category) in docs.items()
    )
    catalog_notes: dict[str, Any] = {
        "source": f"{_DISTRIBUTION} {distribution_version(_DISTRIBUTION)}".strip(),
        "licence": "Apache-2.0",
        "categories": list(chosen),
        "distractor_categories": list(distractor_categories),
        "tools": len(tools),
        "tools_only_from_distractors": sum(1 for t in tools if t.category in DISTRACTOR_CATEGORIES),
        "function_docs_read": stats["function_docs_read"],
        "duplicate_function_docs_identical": stats["duplicate_function_docs_identical"],
        "duplicate_function_docs_conflicting": stats["duplicate_function_docs_conflicting"],
        "names_with_conflicting_docs": len(conflicting),
        "names_with_whitespace": stats["names_with_whitespace"],
        "function_docs_without_name": stats["function_docs_without_name"],
        "function_docs_not_objects": stats["function_docs_not_objects"],
        "schema_types_converted": dict(sorted(converted.items())),
        "schema_types_dropped": dict(sorted(dropped_types.items())),
    }
    if stats["distractor_categories_missing"]:
        catalog_notes["distractor_categories_missing"] = stats["distractor_categories_missing"]
    catalog = Catalog("bfcl", tools, catalog_notes)

    names = catalog.names
    kept: list[Query] = []
    for qid, text, raw_gold, category in queries:
        gold = tuple(dict.fromkeys(_normalize_name(g) for g in raw_gold))
        if any(g not in names for g in gold):
            qstats["queries_dropped_gold_not_in_catalog"] += 1
            per_category[category] -= 1
            continue
        kept.append(Query(qid, text, gold, {"category": category}))
    query_notes: dict[str, Any] = {
        "source": catalog_notes["source"],
        "licence": "Apache-2.0",
        "queries": len(kept),
        "queries_per_category": per_category,
        "system_messages_ignored": qstats["system_messages_ignored"],
        "queries_dropped_gold_not_in_catalog": qstats["queries_dropped_gold_not_in_catalog"],
        "queries_dropped_no_answer": qstats["queries_dropped_no_answer"],
        "queries_dropped_no_gold": qstats["queries_dropped_no_gold"],
        "queries_dropped_no_user_text": qstats["queries_dropped_no_user_text"],
    }
    return catalog, QuerySet("bfcl", tuple(kept), query_notes)


# --------------------------------------------------------------------------- locating files


def _data_root() -> Traversable:
    from toolsearch_bench.loaders import DatasetUnavailableError

    try:
        root = importlib.resources.files(_PACKAGE) / "data"
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] != _PACKAGE:
            raise  # the package is there but one of its own imports failed
        raise DatasetUnavailableError("BFCL", _DISTRIBUTION, _INSTALL) from exc
    if not root.is_dir():
        raise DatasetUnavailableError(
            "BFCL", _DISTRIBUTION, _INSTALL, detail="the installed copy has no data/ folder"
        )
    return root


def _as_traversable(path: str | Path | Traversable) -> Traversable:
    return Path(path) if isinstance(path, str) else path


def _category_files(root: Traversable) -> dict[str, Any]:
    """``{category: file}`` for the newest BFCL version of each question file, and the same
    for answers under the key ``"possible_answer/"``."""

    def newest(folder: Traversable) -> dict[str, Traversable]:
        found: dict[str, tuple[int, Traversable]] = {}
        for entry in folder.iterdir():
            match = _FILE.match(entry.name)
            if match and entry.is_file():
                version, category = int(match.group(1)), match.group(2)
                if category not in found or found[category][0] < version:
                    found[category] = (version, entry)
        return {category: entry for category, (_, entry) in found.items()}

    files: dict[str, Any] = dict(newest(root))
    answers = root / "possible_answer"
    files["possible_answer/"] = newest(answers) if answers.is_dir() else {}
    return files


def _categories(categories: Iterable[str] | None) -> tuple[str, ...]:
    if categories is None:
        return GOLD_CATEGORIES
    if isinstance(categories, str):
        categories = [categories]
    chosen: list[str] = []
    for raw in categories:
        category = re.sub(r"^BFCL_v\d+_", "", str(raw)).removesuffix(".json")
        if category not in GOLD_CATEGORIES:
            raise ValueError(
                f"BFCL category {raw!r} is not supported; choose from {', '.join(GOLD_CATEGORIES)}"
                " (single-turn categories with gold function names)"
            )
        if category not in chosen:
            chosen.append(category)
    return tuple(chosen)


def _read_json_lines(file: Traversable) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{file.name}:{number}: not valid JSON ({exc.msg})") from exc
        if isinstance(record, dict):
            yield record


# --------------------------------------------------------------------------- records


def _normalize_name(name: str) -> str:
    return re.sub(r"\s+", "_", name.strip())


def _tool_name(raw: Any, stats: Counter[str]) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    name = _normalize_name(raw)
    if name != raw:
        stats["names_with_whitespace"] += 1
    return name


def _user_text(question: Any) -> tuple[str, int]:
    """The user messages of every turn joined by a blank line, and how many system
    messages were skipped."""
    parts: list[str] = []
    system = 0
    turns = question if isinstance(question, list) else []
    for turn in turns:
        for message in turn if isinstance(turn, list) else [turn]:
            if not isinstance(message, Mapping):
                continue
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str) and content.strip():
                    parts.append(content.strip())
            elif message.get("role") == "system":
                system += 1
    return "\n\n".join(parts), system


def _gold_names(ground_truth: Any) -> list[str]:
    names: list[str] = []
    for call in ground_truth if isinstance(ground_truth, list) else []:
        if isinstance(call, Mapping):
            names.extend(str(name) for name in call if str(name).strip())
    return names


# --------------------------------------------------------------------------- schemas


def _top_level_schema(
    parameters: Any, converted: Counter[str], dropped: Counter[str]
) -> dict[str, Any]:
    if not isinstance(parameters, Mapping):
        return {"type": "object", "properties": {}}
    schema = _convert_schema(parameters, converted, dropped)
    if schema.get("type") not in (None, "object"):
        converted["top_level_wrapped"] += 1
        return {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


def _convert_schema(
    schema: Mapping[str, Any], converted: Counter[str], dropped: Counter[str]
) -> dict[str, Any]:
    """A JSON Schema from a BFCL parameter schema (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "optional":
            continue
        if key == "type":
            mapped = _json_type(value, converted, dropped)
            if mapped is not None:
                out["type"] = mapped
        elif key == "properties" and isinstance(value, Mapping):
            out["properties"] = {
                str(name): _convert_schema(sub, converted, dropped)
                if isinstance(sub, Mapping)
                else {"description": str(sub)}
                for name, sub in value.items()
            }
        elif key in ("items", "additionalProperties") and isinstance(value, Mapping):
            out[key] = _convert_schema(value, converted, dropped)
        elif key == "items" and isinstance(value, list):  # old tuple form
            out["prefixItems"] = [
                _convert_schema(v, converted, dropped) for v in value if isinstance(v, Mapping)
            ]
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [
                _convert_schema(v, converted, dropped) for v in value if isinstance(v, Mapping)
            ]
        else:
            out[key] = value
    return out


def _json_type(value: Any, converted: Counter[str], dropped: Counter[str]) -> Any:
    if isinstance(value, list):
        members = [_json_type(v, converted, dropped) for v in value]
        if any(m is None for m in members):
            return None  # one member is unconstrained, so the union is too
        return list(dict.fromkeys(members))
    if not isinstance(value, str):
        dropped[repr(value)] += 1
        return None
    mapped = _TYPE_MAP.get(value.strip().lower())
    if mapped is None:
        dropped[value] += 1
    elif mapped != value:
        converted[value] += 1
    return mapped
