"""Recall on the development set only: where retrieval choices are made.

    python benchmarks/dev_retrieval.py --embedder tuned --embedder /path/to/model [--rrf-k 5 10]

The development set is the bundled acme catalog (all 421 queries) and the odd-numbered
half of BFCL's queries (``simple_python_1``, ``simple_python_3``, ...), searched over the
whole pooled BFCL catalog. LiveMCPBench and BFCL's even half are never read here, so a
choice made from this script's output is not tuned to the reported sets. Prints one JSON
line per dataset x index (R@1/5/10, NDCG@10).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.dev_sets import odd_half
from toolsearch_bench.loaders import load_bfcl, load_bundled
from toolsearch_bench.retrieval import evaluate_index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", action="append", default=[], help="minilm, tuned, a folder")
    parser.add_argument("--rrf-k", type=float, nargs="+", default=[5.0])
    parser.add_argument("--vector-weight", type=float, nargs="+", default=[1.0])
    args = parser.parse_args()

    from toolsearch.indexes import HybridToolIndex, VectorToolIndex
    from toolsearch.indexes.specs import resolve_embedder

    acme_catalog, acme_queries = load_bundled()
    bfcl_catalog, bfcl_queries = load_bfcl()
    sets = [(acme_catalog, acme_queries), (bfcl_catalog, odd_half(bfcl_queries))]
    for spec in args.embedder or ["minilm"]:
        embedder = resolve_embedder(spec)
        rows: list[tuple[str, Any]] = [
            (f"vector {spec}", lambda e=embedder: VectorToolIndex(embedder=e))
        ]
        for k in args.rrf_k:
            for weight in args.vector_weight:
                rows.append(
                    (
                        f"hybrid {spec} k={k:g} w={weight:g}",
                        lambda k=k, weight=weight, e=embedder: HybridToolIndex(
                            vector=VectorToolIndex(embedder=e),
                            rrf_k=k,
                            vector_weight=weight,
                        ),
                    )
                )
        for catalog, queries in sets:
            for name, factory in rows:
                result = evaluate_index(name, factory, catalog, queries)
                metrics = {
                    k: round(result.metrics[k], 1) for k in ("R@1", "R@5", "R@10", "NDCG@10")
                }
                print(json.dumps({"set": queries.name, "index": name, **metrics}), flush=True)


if __name__ == "__main__":
    main()
