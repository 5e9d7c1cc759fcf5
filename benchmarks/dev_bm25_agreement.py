"""A BM25 weight in the hybrid that follows the two sides' agreement (issue 36, everyday
wording), scored on the development catalogs.

    python benchmarks/dev_bm25_agreement.py [--sets ...] [--cache FILE]

The hybrid's everyday top-1 trails the vector index's because BM25 matches a word or two
of an everyday request by chance and the rank fusion gives that ranking full weight. Two
signals were tried here, neither of them BM25's own score (section 9's first lever):

* **vocabulary coverage** (query alone): the share of the request's analyzed terms that
  occur anywhere in the catalog. Printed per set as mean and deciles.
* **agreement**: BM25 keeps full weight when one of its first ``m`` hits is among the
  vector side's first ``n``, else its weight is ``alpha``.

Rankings of the hybrid's two sides (BM25, and MiniLM reading long requests clause by
clause; 50 candidates each) are computed once per set (``--cache`` keeps them) and fused
here for each setting; ``n = 0`` is today's fusion.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks.dev_sets import dev_sets_with_kinds
from toolsearch.indexes.analysis import analyze
from toolsearch.indexes.bm25 import Bm25ToolIndex
from toolsearch.indexes.vector import VectorToolIndex
from toolsearch.search.types import ToolSearchRequest
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.metrics import recall_at
from toolsearch_bench.retrieval import _accept_alternatives

ROOT = Path(__file__).resolve().parent.parent
RRF_K = 5.0
DEPTH = 50
SETTINGS = [(0, 1.0, 1)] + [
    (n, alpha, m) for n in (3, 5, 10, 20) for alpha in (0.25, 0.5, 0.75) for m in (1, 3)
]
"""(n, alpha, m): BM25 keeps weight 1 when one of its first m hits is in the vector's
first n, else it weighs alpha; (0, 1.0, 1) is today's fusion."""


def _rankings(catalog: Catalog, queries: QuerySet) -> list[dict[str, Any]]:
    bm25, vector = Bm25ToolIndex(), VectorToolIndex(query_clauses=True)
    tools = list(catalog.tools)
    bm25.index_tools("s", tools)
    vector.index_tools("s", tools)
    vocabulary = {
        term
        for tool in tools
        for term in analyze(
            f"{tool.name.replace('_', ' ')} {tool.description} {json.dumps(tool.input_schema)}"
        )
    }
    rows = []
    for query in queries:
        request = ToolSearchRequest("s", query.text, DEPTH)
        terms = analyze(query.text)
        rows.append(
            {
                "bm25": [r.tool_name for r in bm25.search(request).tool_references],
                "vector": [r.tool_name for r in vector.search(request).tool_references],
                "coverage": sum(t in vocabulary for t in terms) / len(terms) if terms else 0.0,
                "query": query,
            }
        )
    return rows


def _weight(row: dict[str, Any], n: int, alpha: float, m: int) -> float:
    if n == 0 or not row["bm25"]:
        return 1.0
    first = set(row["vector"][:n])
    return 1.0 if any(name in first for name in row["bm25"][:m]) else alpha


def _fuse(row: dict[str, Any], weight: float) -> list[str]:
    scores: dict[str, float] = {}
    for ranking, w in ((row["bm25"], weight), (row["vector"], 1.0)):
        for rank, name in enumerate(ranking, start=1):
            scores[name] = scores.get(name, 0.0) + w / (RRF_K + rank)
    return [name for name, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]


def _score(rows: list[dict[str, Any]], setting: tuple[int, float, int]) -> tuple[float, float]:
    top1 = r5 = 0.0
    for row in rows:
        ranked = _accept_alternatives(_fuse(row, _weight(row, *setting)), row["query"])
        top1 += recall_at(ranked, row["query"].gold, 1)
        r5 += recall_at(ranked, row["query"].gold, 5)
    n = max(len(rows), 1)
    return round(100 * top1 / n, 1), round(100 * r5 / n, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=None)
    parser.add_argument("--cache", type=Path, default=None, help="rankings, kept between runs")
    args = parser.parse_args()
    if args.cache and args.cache.exists():
        table = pickle.loads(args.cache.read_bytes())
    else:
        sets = list(dev_sets_with_kinds(args.sets))
        acme = next((c for n, _, c, _ in sets if n == "acme"), None)
        if acme is None:
            acme = Catalog.from_jsonl(ROOT / "datasets/acme/tools.jsonl", name="acme")
        everyday = QuerySet.from_jsonl(ROOT / "benchmarks/everyday/acme.jsonl", name="everyday")
        sets.append(("acme-everyday", "everyday", acme, everyday))
        table = {}
        for name, kind, catalog, queries in sets:
            table[name] = (kind, _rankings(catalog, queries))
            print(name, file=sys.stderr, flush=True)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(table))
    print("| set | kind | coverage mean | coverage deciles 1 / 5 / 9 |\n|---|---|---|---|")
    for name, (kind, rows) in table.items():
        cover = [row["coverage"] for row in rows]
        deciles = statistics.quantiles(cover, n=10)
        print(
            f"| {name} | {kind} | {statistics.mean(cover):.2f} | "
            f"{deciles[0]:.2f} / {deciles[4]:.2f} / {deciles[8]:.2f} |"
        )
    print("\n| setting (n, alpha, m) | " + " | ".join(table) + " |")
    print("|---|" + "---|" * len(table))
    for setting in SETTINGS:
        cells = [_score(rows, setting) for _, rows in table.values()]
        print(f"| {setting} | " + " | ".join(f"{t} / {r}" for t, r in cells) + " |")


if __name__ == "__main__":
    main()
