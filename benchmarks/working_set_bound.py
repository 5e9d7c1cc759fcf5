"""How far the loop's shape lets billed savings go on Acme, one task per conversation: the
library's defaults beside an **oracle pre-retrieval** that hands the model exactly the
task's gold tools on its first request (no search round trip, no extra definitions; the
search tool stays, as the library keeps it), billed under the same cost model.

    python benchmarks/working_set_bound.py [--provider openai] [--index hybrid]

The oracle pins each task's gold tools (``pinned_tools``, pre-retrieval off), one advisor
per task, so its requests are billed in a cache of their own: nothing but the search tool
(under every provider's minimum) could be shared across its conversations anyway. The
full loop is billed as the bench bills it (one cache for the whole run).
"""

from __future__ import annotations

import argparse

from toolsearch.tokens import BpeTokenCounter
from toolsearch_bench.index_names import index_factory
from toolsearch_bench.loaders import load_bundled
from toolsearch_bench.savings import run_tasks


def _saved(mine: float, theirs: float) -> float:
    return 100.0 * (1.0 - mine / theirs) if theirs else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="openai")
    parser.add_argument("--index", default="hybrid")
    args = parser.parse_args()
    catalog, queries = load_bundled()
    tasks = list(queries)
    counter = BpeTokenCounter()
    factory = index_factory(args.index)
    full = run_tasks(catalog, tasks, mode="full", counter=counter, provider=args.provider)
    search = run_tasks(
        catalog,
        tasks,
        mode="search",
        counter=counter,
        provider=args.provider,
        index_factory=factory,
    )
    oracle = [
        run_tasks(
            catalog,
            [task],
            mode="search",
            counter=counter,
            provider=args.provider,
            index_factory=index_factory("bm25"),  # no search is made: the cheapest index
            advisor_options={"pinned_tools": tuple(task.gold), "preload_results": 0},
        )[0]
        for task in tasks
    ]
    whole = sum(f.billed_tokens or 0.0 for f in full)
    print(
        f"`python benchmarks/working_set_bound.py --provider {args.provider} --index {args.index}`"
    )
    print()
    print(
        "| loop | billed per task | billed saved % | raw saved % | searches per task | success % |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    raw_full = sum(f.prompt_tokens for f in full)
    for name, rows in (("full loop", full), ("defaults", search), ("oracle pre-retrieval", oracle)):
        billed = sum(r.billed_tokens or 0.0 for r in rows)
        raw = sum(r.prompt_tokens for r in rows)
        print(
            f"| {name} | {billed / len(rows):,.0f} | {_saved(billed, whole):.1f} | "
            f"{_saved(raw, raw_full):.1f} | {sum(r.searches for r in rows) / len(rows):.2f} | "
            f"{100.0 * sum(r.success for r in rows) / len(rows):.1f} |"
        )


if __name__ == "__main__":
    main()
