"""Two fusion experiments on the development set only, from rankings computed once.

    python benchmarks/dev_fusion.py ensembles --embedder tuned --embedder minilm --embedder static
    python benchmarks/dev_fusion.py bm25-grid --embedder tuned --embedder minilm

Both rank the development set (acme, and BFCL's odd half over the whole pooled catalog; as
``dev_retrieval.py``) with each component index once, keep the top 50 of every query, and
fuse those lists by reciprocal rank (k = 5, the hybrid's default) offline:

* ``ensembles``: BM25 with one, two or three embedders' vector rankings (weights given
  per row), to see whether embedders that learned different things add up.
* ``bm25-grid``: BM25 settings (name and parameter field weights, ``k1``, ``b``) crossed,
  each measured alone and fused with every embedder's ranking, since the hybrid is what
  users run and a BM25 change can help one and hurt the other.

Prints one line per setting: R@5 per set and index. LiveMCPBench and BFCL's even half
are never read here.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from typing import Any

from dev_sets import odd_half

from toolsearch_bench.loaders import load_bfcl, load_bundled
from toolsearch_bench.metrics import recall_at
from toolsearch_bench.retrieval import _accept_alternatives

DEPTH = 50
RRF_K = 5.0


def fuse(lists: Sequence[Sequence[str]], weights: Sequence[float]) -> list[str]:
    """Reciprocal-rank fusion as ``HybridToolIndex`` does it (ties keep first-seen order)."""
    scores: dict[str, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        for rank, name in enumerate(ranked, 1):
            scores[name] = scores.get(name, 0.0) + weight / (RRF_K + rank)
    return sorted(scores, key=lambda name: -scores[name])


def rankings(index: Any, catalog: Any, queries: Any) -> list[list[str]]:
    from toolsearch.search.types import ToolSearchRequest

    index.index_tools("dev", list(catalog.tools))
    return [index.search(ToolSearchRequest("dev", q.text, DEPTH)).tool_names for q in queries]


def recall5(lists: list[list[str]], queries: Any) -> float:
    hits = [
        recall_at(_accept_alternatives(ranked, q), q.gold, 5)
        for ranked, q in zip(lists, queries, strict=True)
    ]
    return round(100 * sum(hits) / len(hits), 1)


def dev_sets() -> list[tuple[Any, Any]]:
    acme = load_bundled()
    bfcl_catalog, bfcl_queries = load_bfcl()
    return [acme, (bfcl_catalog, odd_half(bfcl_queries))]


def vector_rankings(embedders: list[str], sets: list[tuple[Any, Any]]) -> dict[str, list[Any]]:
    from toolsearch.indexes import VectorToolIndex
    from toolsearch.indexes.specs import resolve_embedder

    found: dict[str, list[Any]] = {}
    for spec in embedders:
        embedder = resolve_embedder(spec)
        found[spec] = [rankings(VectorToolIndex(embedder=embedder), c, q) for c, q in sets]
    return found


def ensembles(embedders: list[str]) -> None:
    from toolsearch.indexes import Bm25ToolIndex

    sets = dev_sets()
    components = {"bm25": [rankings(Bm25ToolIndex(), c, q) for c, q in sets]}
    components |= vector_rankings(embedders, sets)
    for size in range(1, min(3, len(embedders)) + 1):
        for chosen in itertools.combinations(embedders, size):
            weight_rows = [[1.0] * size] + ([[0.5] * size] if size > 1 else [])
            for weights in weight_rows:
                names = ["bm25", *chosen]
                cells = []
                for number, (_, queries) in enumerate(sets):
                    lists = [components[name][number] for name in names]
                    fused = [
                        fuse(per_query, [1.0, *weights]) for per_query in zip(*lists, strict=True)
                    ]
                    cells.append(f"{queries.name} {recall5(fused, queries)}")
                label = " + ".join(f"{w:g}x{n}" for n, w in zip(chosen, weights, strict=True))
                print(f"bm25 + {label} | " + " | ".join(cells), flush=True)


def bm25_grid(embedders: list[str]) -> None:
    from toolsearch.indexes import Bm25ToolIndex

    sets = dev_sets()
    vectors = vector_rankings(embedders, sets)
    grid = itertools.product(
        (1.5, 2, 3, 4, 6), (0.25, 0.5, 1), (0.6, 0.9, 1.2, 1.6, 2.0), (0.3, 0.5, 0.75, 0.9)
    )
    for name_weight, parameter_weight, k1, b in grid:
        cells = []
        for number, (catalog, queries) in enumerate(sets):
            index = Bm25ToolIndex(
                name_weight=name_weight, parameter_weight=parameter_weight, k1=k1, b=b
            )
            keyword = rankings(index, catalog, queries)
            cell = f"{queries.name}: bm25 {recall5(keyword, queries)}"
            for spec, lists in vectors.items():
                fused = [
                    fuse(pair, [1.0, 1.0]) for pair in zip(keyword, lists[number], strict=True)
                ]
                cell += f" +{spec} {recall5(fused, queries)}"
            cells.append(cell)
        print(
            f"name {name_weight} params {parameter_weight} k1 {k1} b {b} | " + " | ".join(cells),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=("ensembles", "bm25-grid"))
    parser.add_argument("--embedder", action="append", default=[], help="minilm, tuned, a folder")
    args = parser.parse_args()
    embedders = args.embedder or ["minilm"]
    if args.experiment == "ensembles":
        ensembles(embedders)
    else:
        bm25_grid(embedders)


if __name__ == "__main__":
    main()
