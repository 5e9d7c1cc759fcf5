"""Milvus against the in-process index of the same method, on BFCL and LiveMCPBench.

For each dataset, one session holds the whole catalog, and every query is searched once
(:func:`toolsearch_bench.retrieval.evaluate_index`, the retrieval benchmark's own loop and
metrics): ``Bm25ToolIndex`` vs ``MilvusToolIndex(mode="bm25")``, ``VectorToolIndex`` vs
``mode="vector"``, ``HybridToolIndex`` vs ``mode="hybrid"``, the vector sides all with the
same packaged all-MiniLM-L6-v2 object. The catalog is embedded once up front, into the
process's embedding cache that every index reads (timed apart), so build times exclude
embedding for all of them. The three Milvus modes search one collection per dataset (sparse
and dense fields side by side, as a deployment would): the first registration writes every
row and is reported as the Milvus build; the others only check that every fingerprint is
there. Milvus searches carry the session as an
``id in [...]`` filter of every tool's fingerprint, as a session's search always does.

Latency is per search, p50/p99, measured with the Milvus Lite server given by ``--uri``:
Milvus Lite is a Python test server, so those figures are Lite's, not a cluster's.

    .venv/bin/milvus-lite server --data-dir /tmp/milvus --host 127.0.0.1 --port 19541 &
    .venv/bin/python benchmarks/scale_out_milvus.py --uri http://127.0.0.1:19541

Writes ``benchmarks/results/scale-out-milvus.md`` (the raw rows go to stderr as JSON).
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.retrieval import RetrievalResult, evaluate_index

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ("bm25", "vector", "hybrid")
TOLERANCE = 3.0
"""R@5 points within which Milvus counts as ranking like the in-process index."""


def _single_threaded() -> None:
    """One thread for torch and FAISS: on a shared 2-core machine a single-query encode
    with the default thread pool spins against its neighbours (``../shared/PITFALLS.md``)."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    try:
        import faiss

        faiss.omp_set_num_threads(1)
    except ImportError:
        pass


def load(name: str, max_queries: int | None) -> tuple[Catalog, QuerySet]:
    from toolsearch_bench.loaders import load_bfcl, load_livemcpbench

    catalog, queries = {"bfcl": load_bfcl, "livemcpbench": load_livemcpbench}[name]()
    if max_queries is not None and len(queries) > max_queries:
        step = len(queries) / max_queries  # an even spread over the file, deterministic
        picked = [queries.queries[int(i * step)] for i in range(max_queries)]
        queries = QuerySet(queries.name, tuple(picked), queries.notes)
    return catalog, queries


def in_process(method: str, embedder: Any) -> Any:
    from toolsearch.indexes import Bm25ToolIndex, HybridToolIndex, VectorToolIndex

    if method == "bm25":
        return Bm25ToolIndex()
    if method == "vector":
        return VectorToolIndex(embedder=embedder)
    return HybridToolIndex(bm25=Bm25ToolIndex(), vector=VectorToolIndex(embedder=embedder))


def run_dataset(
    name: str, uri: str, embedder: Any, max_queries: int | None, keep: bool
) -> tuple[list[RetrievalResult], dict[str, Any]]:
    from toolsearch.indexes import MilvusToolIndex
    from toolsearch.indexes.ranker import SessionTools
    from toolsearch.indexes.vector import embed_tools

    catalog, queries = load(name, max_queries)
    collection = f"bench_{name}_{uuid.uuid4().hex[:8]}"
    results: list[RetrievalResult] = []
    started = time.perf_counter()
    embed_tools(embedder, SessionTools.of(catalog.tools))  # once, into the process's cache
    extra: dict[str, Any] = {
        "collection": collection,
        "embed_seconds": round(time.perf_counter() - started, 2),
    }
    for method in METHODS:
        print(f"{name}: in-process {method} ...", file=sys.stderr, flush=True)
        results.append(
            evaluate_index(method, lambda m=method: in_process(m, embedder), catalog, queries)
        )
        print(f"{name}: milvus {method} ...", file=sys.stderr, flush=True)
        index = MilvusToolIndex(uri, collection=collection, mode=method, embedder=embedder)
        result = evaluate_index(f"milvus-{method}", lambda i=index: i, catalog, queries)
        writes = index.ranker.rows_written
        if "milvus_build_seconds" not in extra:
            extra["milvus_build_seconds"] = result.build_seconds
            extra["milvus_rows_written"] = writes
        else:
            extra.setdefault("reregister_seconds", []).append(round(result.build_seconds, 3))
            extra.setdefault("reregister_writes", []).append(writes)
        results.append(result)
        print(f"  {result.as_row()}", file=sys.stderr, flush=True)
    if not keep:
        MilvusToolIndex(uri, collection=collection, mode="hybrid", embedder=embedder).drop()
    return results, extra


def markdown(rows: list[dict[str, Any]], extras: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "# Milvus against the in-process indexes (same method, same embedder)",
        "",
        f"Reproduce: `{meta['command']}` against `milvus-lite server` "
        f"({meta['milvus']}) on this machine ({meta['machine']}).",
        "",
        "One session holds the whole catalog; each Milvus search filters on the session's "
        "fingerprints (`id in [...]`, every tool), as sessions always do. Latency is per "
        "search; **Milvus figures are Milvus Lite's** (a Python test server on loopback), "
        "not a cluster's. " + meta["subset"],
        "",
        "| dataset | method | engine | R@5 | R@10 | NDCG@10 | build s | p50 ms | p99 ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        engine = "Milvus Lite" if row["index"].startswith("milvus-") else "in-process"
        method = row["index"].removeprefix("milvus-")
        lines.append(
            f"| {row['dataset']} ({row['tools']:,} tools, {row['queries']:,} queries) | "
            f"{method} | {engine} | {row['R@5']:.2f} | {row['R@10']:.2f} | "
            f"{row['NDCG@10']:.2f} | {row['build_s']:.2f} | {row['p50_ms']:.2f} | "
            f"{row['p99_ms']:.2f} |"
        )
    lines += ["", "## R@5: Milvus minus in-process", ""]
    lines += ["| dataset | method | in-process | Milvus | difference | within 3 points |"]
    lines += ["|---|---|---:|---:|---:|---|"]
    by_key = {(r["dataset"], r["index"]): r for r in rows}
    for (dataset, index), row in by_key.items():
        if index.startswith("milvus-"):
            continue
        other = by_key[(dataset, f"milvus-{index}")]
        diff = other["R@5"] - row["R@5"]
        ok = "yes" if abs(diff) <= TOLERANCE else "**no**"
        lines.append(
            f"| {dataset} | {index} | {row['R@5']:.2f} | {other['R@5']:.2f} | {diff:+.2f} | {ok} |"
        )
    lines += [
        "",
        "## What differs between the engines",
        "",
        "- **Analyzer**: none in effect. Milvus's BM25 function reads our own analysis (tantivy's "
        "tokenizer, our stop words, the English stemmer) written into the text field, and "
        "queries are analyzed the same way before they are sent; the server's `standard` "
        "tokenizer only splits on spaces (Milvus Lite has no stemmer of its own). BM25F's field "
        "weights are term repetitions with `bm25_k1 = 2 k1`, which scores as BM25F.",
        "- **Statistics**: the engine's document frequencies and average length are the "
        "collection's (Lite: each segment's), ours the session's. Here the session is the whole "
        "collection, so they agree; a collection shared by many catalogs' sessions would not.",
        "- **Scores**: Milvus returns raw BM25 scores, ours are normalized to [0, 1) (the "
        "ranking is the same); cosine scores agree.",
        "- **Fusion**: the engine's `RRFRanker(k=5)`, the same formula and constant as the "
        "in-process RRF (`rrf_k=5`), 50 candidates per side in both.",
        "- **Latency**: each Milvus search sends and evaluates the session's filter (every "
        "fingerprint: 525 or 1,853 ids) in Milvus Lite, a Python server; how much of the time "
        "is the filter and how much the scoring was not separated, and a cluster was not "
        "measured here.",
    ]
    lines += ["", "## Builds", ""]
    for dataset, extra in extras.items():
        lines.append(
            f"- {dataset}: embedding the catalog with MiniLM took {extra['embed_seconds']:.1f} s "
            "(once, shared by every index; not in the build column). The Milvus collection's "
            f"first registration (the bm25 row) wrote {extra['milvus_rows_written']:,} rows "
            f"in {extra['milvus_build_seconds']:.2f} s (existence check, BM25 text, upserts); "
            "registering the same tools again (the vector and hybrid rows' builds) wrote "
            f"{extra['reregister_writes']} rows in {extra['reregister_seconds']} s."
        )
    return "\n".join(lines) + "\n"


def render(payload_path: Path, out: Path) -> None:
    """Write the report again from the JSON a run printed (``--render FILE``)."""
    payload = json.loads(payload_path.read_text())
    out.with_suffix(".md").write_text(markdown(payload["rows"], payload["builds"], payload["meta"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", help="a Milvus (Lite) server, http://host:port")
    parser.add_argument("--render", type=Path, help="only rewrite the report from a run's JSON")
    parser.add_argument("--datasets", nargs="+", default=["livemcpbench", "bfcl"])
    parser.add_argument(
        "--max-queries", type=int, default=None, help="an even subset of each query set"
    )
    parser.add_argument("--keep", action="store_true", help="keep the collections")
    parser.add_argument("--out", type=Path, default=RESULTS / "scale-out-milvus")
    args = parser.parse_args()
    if args.render is not None:
        render(args.render, args.out)
        return
    if not args.uri:
        parser.error("--uri is required")
    _single_threaded()
    from toolsearch._quiet import quiet_model_loading
    from toolsearch.indexes import SentenceTransformerEmbedder

    quiet_model_loading()
    embedder = SentenceTransformerEmbedder()  # the packaged all-MiniLM-L6-v2, shared
    rows: list[dict[str, Any]] = []
    extras: dict[str, Any] = {}
    started = time.perf_counter()
    for name in args.datasets:
        results, extra = run_dataset(name, args.uri, embedder, args.max_queries, args.keep)
        rows += [r.as_row() for r in results]
        extras[name] = extra
    import pymilvus

    uri_shown = "http://127.0.0.1:PORT"
    command = ["python", "benchmarks/scale_out_milvus.py", "--uri", uri_shown]
    if args.datasets != ["livemcpbench", "bfcl"]:
        command += ["--datasets", *args.datasets]
    if args.max_queries is not None:
        command += ["--max-queries", str(args.max_queries)]
    subset = (
        f"Each query set is an even subset of at most {args.max_queries:,} queries."
        if args.max_queries is not None
        else "Every query of each set is run."
    )
    meta = {
        "command": shlex.join(command),
        "milvus": f"milvus-lite, pymilvus {pymilvus.__version__}",
        "machine": f"{platform.machine()}, {platform.python_version()}, torch/FAISS 1 thread",
        "subset": subset,
        "seconds": round(time.perf_counter() - started, 1),
    }
    try:
        import milvus_lite

        meta["milvus"] = f"milvus-lite {milvus_lite.__version__}, pymilvus {pymilvus.__version__}"
    except ImportError:
        pass
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(json.dumps({"meta": meta, "rows": rows, "builds": extras}, indent=2), file=sys.stderr)
    args.out.with_suffix(".md").write_text(markdown(rows, extras, meta))
    print(args.out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
