"""Write datasets/acme/{tools,queries}.jsonl from the hand-written sources beside this file.

Deterministic: the same sources always give byte-identical files.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from multis import MULTIS  # noqa: E402
from singles import SINGLES  # noqa: E402
from tools_def import TOOLS  # noqa: E402

from toolsearch.tools.definition import ToolDefinition  # noqa: E402
from toolsearch_bench.data import Catalog, Query, QuerySet  # noqa: E402

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent
SINGLE_TARGET = 262  # with the multi-tool requests: about 420 requests, ~37 % multi
SEED = 20250501


def main() -> None:
    tools = tuple(
        ToolDefinition(t["name"], t["description"], t["input_schema"], t["category"]) for t in TOOLS
    )
    catalog = Catalog("acme", tools)
    category = {t.name: t.category for t in tools}
    rng = random.Random(SEED)

    # every tool keeps its first request; the extra phrasings are sampled to the target
    singles: list[tuple[str, list[str]]] = [(texts[0], [name]) for name, texts in SINGLES.items()]
    extras = [(text, [name]) for name, texts in SINGLES.items() for text in texts[1:]]
    rng.shuffle(extras)
    singles += extras[: max(0, SINGLE_TARGET - len(singles))]

    records = [(text, gold, "single") for text, gold in singles]
    records += [(text, list(gold), "multi") for text, gold in MULTIS]
    rng.shuffle(records)

    queries = []
    for number, (text, gold, kind) in enumerate(records, 1):
        services: list[str] = []
        for name in gold:
            if category[name] not in services:
                services.append(category[name])
        queries.append(
            Query(f"acme-{number:04d}", text, tuple(gold), {"kind": kind, "services": services})
        )
    query_set = QuerySet("acme", tuple(queries))
    query_set.validate_against(catalog)

    OUT.mkdir(parents=True, exist_ok=True)
    catalog.to_jsonl(OUT / "tools.jsonl")
    query_set.to_jsonl(OUT / "queries.jsonl")
    multi = sum(1 for q in queries if q.metadata["kind"] == "multi")
    print(f"{len(tools)} tools, {len(queries)} queries ({multi} multi-tool) -> {OUT}")


if __name__ == "__main__":
    main()
