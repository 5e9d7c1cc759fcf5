"""Where the working set's billed input goes on Acme: tasks grouped by the searches the
agent still made (0, 1, 2, 3 or more) and the tools they need, each group's billed input
per task beside the full loop's, its share of the search loop's bill and its success.

    python benchmarks/working_set_breakdown.py [--provider openai] [--index hybrid]

The loops are the bench's (:func:`toolsearch_bench.savings.run_tasks`, the working set of
:data:`~toolsearch_bench.savings.WORKING_SET`, a warm set learned from earlier tasks).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from toolsearch.tokens import BpeTokenCounter
from toolsearch_bench.index_names import index_factory
from toolsearch_bench.loaders import load_bundled
from toolsearch_bench.savings import LearnedWarmSet, run_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="openai")
    parser.add_argument("--index", default="hybrid")
    args = parser.parse_args()
    catalog, queries = load_bundled()
    tasks = list(queries)
    counter = BpeTokenCounter()
    full = run_tasks(catalog, tasks, mode="full", counter=counter, provider=args.provider)
    search = run_tasks(
        catalog,
        tasks,
        mode="search",
        counter=counter,
        provider=args.provider,
        index_factory=index_factory(args.index),
        warm_set=LearnedWarmSet(),
    )
    groups: dict[tuple[int, int], list[tuple[float, float, bool]]] = defaultdict(list)
    for task, f, s in zip(tasks, full, search, strict=True):
        key = (min(s.searches, 3), min(len(task.gold), 3))
        groups[key].append((s.billed_tokens or 0.0, f.billed_tokens or 0.0, s.success))
    total = sum(s.billed_tokens or 0.0 for s in search)
    whole = sum(f.billed_tokens or 0.0 for f in full)
    command = f"python benchmarks/working_set_breakdown.py --provider {args.provider}"
    print(f"`{command} --index {args.index}`")
    print()
    print(f"billed saved overall: {100 * (1 - total / whole):.1f} %")
    print()
    print(
        "| searches | tools needed | tasks | billed per task | full loop | saved % "
        "| share of the bill | success % |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (searches, gold), rows in sorted(groups.items()):
        mine = sum(r[0] for r in rows)
        theirs = sum(r[1] for r in rows)
        print(
            f"| {searches}{'+' if searches == 3 else ''} | {gold}{'+' if gold == 3 else ''} | "
            f"{len(rows)} | {mine / len(rows):,.0f} | {theirs / len(rows):,.0f} | "
            f"{100 * (1 - mine / theirs):.1f} | {100 * mine / total:.0f} % | "
            f"{100 * sum(r[2] for r in rows) / len(rows):.0f} |"
        )


if __name__ == "__main__":
    main()
