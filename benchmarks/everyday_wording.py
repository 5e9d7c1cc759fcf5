"""Top-1 and R@5 on everyday wording against the precise requests, per index, in one run.

    python benchmarks/everyday_wording.py [--index bm25 vector hybrid ...]

The everyday set is ``benchmarks/everyday/acme.jsonl`` (hand-written before any ranking);
the precise set is the bundled ``datasets/acme/queries.jsonl``. The issue's bar: the hybrid's
top-1 on everyday wording at least the vector index's, with the precise set not regressing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from toolsearch.indexes import make_index
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.retrieval import evaluate_index

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", nargs="*", default=["bm25", "vector", "hybrid"])
    args = parser.parse_args()
    catalog = Catalog.from_jsonl(ROOT / "datasets/acme/tools.jsonl", name="acme")
    sets = {
        "everyday": QuerySet.from_jsonl(ROOT / "benchmarks/everyday/acme.jsonl", name="everyday"),
        "precise": QuerySet.from_jsonl(ROOT / "datasets/acme/queries.jsonl", name="precise"),
    }
    print("| index | everyday top-1 | everyday R@5 | precise top-1 | precise R@5 |")
    print("|---|---|---|---|---|")
    for spec in args.index:
        cells = []
        for queries in sets.values():
            result = evaluate_index(spec, lambda spec=spec: make_index(spec), catalog, queries)
            cells += [f"{result.metrics['R@1']:.1f}", f"{result.metrics['R@5']:.1f}"]
        print(f"| {spec} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
