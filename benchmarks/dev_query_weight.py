"""A query-dependent BM25 weight in the hybrid, chosen leave-one-catalog-out.

    python benchmarks/dev_query_weight.py [--sets ...] [--json OUT]

BM25's normalized score says how much of the request its matches explain (the score is
divided by what the request's terms could give at most). Everyday wording ("is anything on
fire right now") leaves BM25 matching a word or two by chance, with a low top score, while
the vector side still reads the sense. The lever scales BM25's weight in the rank fusion by
``min(1, top BM25 score / tau)``: full weight when BM25 explains the request well, less when
it does not. Rankings are computed once per set (the hybrid's two sides, 50 candidates
each) and fused here for every ``tau``; ``tau = 0`` is today's fusion.

Sets: the 13 development catalogs (:mod:`benchmarks.dev_sets`) plus the everyday paraphrase
set over Acme (``benchmarks/everyday/acme.jsonl``, written before any ranking was seen).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.dev_sets import dev_sets_with_kinds
from toolsearch.indexes.bm25 import Bm25ToolIndex
from toolsearch.indexes.vector import VectorToolIndex
from toolsearch.search.types import ToolSearchRequest
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.metrics import recall_at
from toolsearch_bench.retrieval import _accept_alternatives

ROOT = Path(__file__).resolve().parent.parent
TAUS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
RRF_K = 5.0
DEPTH = 50


def _rankings(catalog: Catalog, queries: QuerySet) -> list[dict[str, Any]]:
    bm25, vector = Bm25ToolIndex(), VectorToolIndex(query_clauses=True)
    tools = list(catalog.tools)
    bm25.index_tools("s", tools)
    vector.index_tools("s", tools)
    out = []
    for query in queries:
        request = ToolSearchRequest("s", query.text, DEPTH)
        b = bm25.search(request).tool_references
        v = vector.search(request).tool_references
        out.append(
            {
                "bm25": [r.tool_name for r in b],
                "top": float(b[0].relevance_score or 0.0) if b else 0.0,
                "vector": [r.tool_name for r in v],
                "query": query,
            }
        )
    return out


def _fuse(row: dict[str, Any], tau: float) -> list[str]:
    weight = 1.0 if tau == 0 else min(1.0, row["top"] / tau)
    scores: dict[str, float] = {}
    for ranking, w in ((row["bm25"], weight), (row["vector"], 1.0)):
        for rank, name in enumerate(ranking, start=1):
            scores[name] = scores.get(name, 0.0) + w / (RRF_K + rank)
    return [name for name, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]


def _score(rows: list[dict[str, Any]], tau: float) -> dict[str, float]:
    top1 = r5 = 0.0
    for row in rows:
        ranked = _accept_alternatives(_fuse(row, tau), row["query"])
        top1 += recall_at(ranked, row["query"].gold, 1)
        r5 += recall_at(ranked, row["query"].gold, 5)
    n = max(len(rows), 1)
    return {"top1": round(100 * top1 / n, 1), "R@5": round(100 * r5 / n, 1)}


def _side(rows: list[dict[str, Any]], side: str) -> dict[str, float]:
    top1 = r5 = 0.0
    for row in rows:
        ranked = _accept_alternatives(row[side], row["query"])
        top1 += recall_at(ranked, row["query"].gold, 1)
        r5 += recall_at(ranked, row["query"].gold, 5)
    n = max(len(rows), 1)
    return {"top1": round(100 * top1 / n, 1), "R@5": round(100 * r5 / n, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sets = [(n, k, c, q) for n, k, c, q in dev_sets_with_kinds(args.sets)]
    acme = next((c for n, _, c, _ in sets if n == "acme"), None)
    if acme is None:
        acme = Catalog.from_jsonl(ROOT / "datasets/acme/tools.jsonl", name="acme")
    everyday = QuerySet.from_jsonl(ROOT / "benchmarks/everyday/acme.jsonl", name="everyday")
    sets.append(("acme-everyday", "everyday", acme, everyday))
    table: dict[str, dict[str, Any]] = {}
    for name, kind, catalog, queries in sets:
        rows = _rankings(catalog, queries)
        table[name] = {
            "kind": kind,
            "bm25": _side(rows, "bm25"),
            "vector": _side(rows, "vector"),
            **{f"tau={tau}": _score(rows, tau) for tau in TAUS},
        }
        print(name, json.dumps(table[name]), file=sys.stderr, flush=True)
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    names = list(table)
    print(
        "| set | kind | bm25 top-1 / R@5 | vector | " + " | ".join(f"tau {t}" for t in TAUS) + " |"
    )
    print("|---|---|---|---|" + "---|" * len(TAUS))
    for name in names:
        row = table[name]
        cells = [f"{row[k]['top1']} / {row[k]['R@5']}" for k in ("bm25", "vector")]
        cells += [f"{row[f'tau={t}']['top1']} / {row[f'tau={t}']['R@5']}" for t in TAUS]
        print(f"| {name} | {row['kind']} | " + " | ".join(cells) + " |")
    # leave one catalog out: tau chosen by the mean R@5 of the other sets
    print(
        "\n| held-out set | tau chosen on the others | R@5 today | R@5 chosen"
        " | top-1 today | top-1 chosen |"
    )
    print("|---|---|---|---|---|---|")
    for held in names:
        others = [n for n in names if n != held]
        best = max(TAUS, key=lambda t: sum(table[n][f"tau={t}"]["R@5"] for n in others))
        today, chosen = table[held]["tau=0.0"], table[held][f"tau={best}"]
        print(
            f"| {held} | {best} | {today['R@5']} | {chosen['R@5']}"
            f" | {today['top1']} | {chosen['top1']} |"
        )


if __name__ == "__main__":
    main()
