"""One working-set setting on one dataset: the full loop and tool search billed under the
request shape's cache, with success (the scratch measurements of docs/working-set.md).

    python benchmarks/working_set_levers.py DATASET PROVIDER INDEX ['{"advisor": "options"}']

``DATASET``: ``acme`` (the bundled catalog) or a loader of ``toolsearch_bench.loaders``
(``nestful``, ``tau2``...); the JSON holds advisor options over the bench's working set
(``{"preload_results": 0, "load_all": "never"}``: the plain search loop), plus
``"every": N`` for a warm set learned from the run's earlier tasks, re-read every N tasks.
"""

from __future__ import annotations

import json
import sys
import time

from toolsearch.tokens import BpeTokenCounter
from toolsearch_bench import loaders
from toolsearch_bench.index_names import index_factory
from toolsearch_bench.savings import LearnedWarmSet, run_tasks, summarize


def main() -> None:
    dataset, provider, index = sys.argv[1], sys.argv[2], sys.argv[3]
    options = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    if dataset == "acme":
        catalog, queries = loaders.load_bundled()
    else:
        catalog, queries = getattr(loaders, f"load_{dataset}")()
    tasks = list(queries)
    counter = BpeTokenCounter()
    started = time.time()
    common = {"dataset": dataset, "provider": provider, "tokenizer": counter.name}
    full = run_tasks(catalog, tasks, mode="full", counter=counter, provider=provider)
    full_summary = summarize(full, mode="full", index="-", **common)
    every = options.pop("every", None)
    search = run_tasks(
        catalog,
        tasks,
        mode="search",
        counter=counter,
        provider=provider,  # type: ignore[arg-type]
        index_factory=index_factory(index),
        advisor_options=options,
        warm_set=LearnedWarmSet(every) if every else None,
    )
    summary = summarize(search, mode="search", index=index, full=full_summary, **common)
    print(
        f"{dataset} {provider} {index} {options} every={every}: raw saved "
        f"{summary.savings_pct} %, billed saved {summary.cached_savings_pct} %, success "
        f"{summary.success_rate} %, {summary.iterations_per_task} requests and "
        f"{summary.searches_per_task} searches per task ({time.time() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
