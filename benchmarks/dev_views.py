"""Does one embedded view per tool hold R@5 within a point of the three? (development set)

    nice python benchmarks/dev_views.py [--embedder minilm]

The development set of ``benchmarks/dev_retrieval.py`` (the bundled acme catalog, BFCL's
odd-numbered half over the pooled BFCL catalog). Each vector index is built twice: with
the three views of :attr:`~toolsearch.indexes.text.PreparedTool.embedding_views` (the
default) and with one view only, each of the three in turn. Prints one JSON line per set x
views (R@1/5/10, NDCG@10) and the embedding work (texts embedded) of each.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.dev_sets import odd_half
from toolsearch_bench.loaders import load_bfcl, load_bundled
from toolsearch_bench.retrieval import evaluate_index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()

    from toolsearch.indexes import VectorToolIndex, vector
    from toolsearch.indexes.specs import resolve_embedder
    from toolsearch.indexes.text import PreparedTool

    default = PreparedTool.embedding_views
    embedder = resolve_embedder(args.embedder)
    acme_catalog, acme_queries = load_bundled()
    bfcl_catalog, bfcl_queries = load_bfcl()
    sets = [(acme_catalog, acme_queries), (bfcl_catalog, odd_half(bfcl_queries))]
    choices = {"three views": None, "full text": 0, "name: description": 1, "head: summary": 2}
    try:
        for label, pick in choices.items():
            if pick is None:
                PreparedTool.embedding_views = default  # type: ignore[method-assign]
            else:
                PreparedTool.embedding_views = property(  # type: ignore[method-assign,assignment]
                    lambda self, i=pick: (default.fget(self)[i],)  # type: ignore[attr-defined]
                )
            vector._STORE._vectors.clear()  # tool vectors are cached by fingerprint, not text
            for catalog, queries in sets:
                result = evaluate_index(
                    label, lambda: VectorToolIndex(embedder=embedder), catalog, queries
                )
                metrics = {
                    k: round(result.metrics[k], 1) for k in ("R@1", "R@5", "R@10", "NDCG@10")
                }
                row = {"set": queries.name, "views": label, "embedder": args.embedder, **metrics}
                print(json.dumps(row), flush=True)
    finally:
        PreparedTool.embedding_views = default  # type: ignore[method-assign]


if __name__ == "__main__":
    main()
