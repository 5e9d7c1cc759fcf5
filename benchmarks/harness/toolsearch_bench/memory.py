"""Peak memory of an index: build over the whole catalog, then one search per query.

Measured in a fresh child process per index so that nothing another index (or the
benchmark itself) allocated is counted, and so that native memory counts too: tantivy's
Rust heap, faiss's arrays, torch and the embedding model are invisible to ``tracemalloc``
but are what a deployment pays for. The child

1. reads the catalog and queries from JSONL files the parent wrote, imports toolsearch and
   collects garbage; the resident set size (RSS) at that point is the baseline;
2. resets the kernel's RSS high-water mark (``echo 5 > /proc/self/clear_refs``, Linux 4.0+);
3. constructs the index (importing its backend and loading any embedding model), indexes
   every tool in one session and runs the first :data:`MAX_QUERIES` queries once (top 10;
   after the build, search memory is per-query scratch plus small query caches, so more
   queries would only cost time);
4. reports ``VmHWM - baseline``: the peak RSS the index added, in MiB.

So the figure includes the backend's imports and model (an index that needs torch pays for
torch), excludes the interpreter, toolsearch's core and the dataset, and is a peak, not
what stays resident afterwards. Where ``/proc/self/clear_refs`` is not writable (not
Linux), ``resource.getrusage`` gives the process's lifetime peak instead: the figure is
then how far the index raised that peak (``method="ru_maxrss"``), a lower bound, since the
peak cannot be reset after loading the dataset. One measurement per index (memory does not
jitter the way latency does).
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.index_names import index_factory

__all__ = ["MAX_QUERIES", "MemoryResult", "measure_peak_memory"]

MAX_QUERIES = 200
"""Queries searched after the build in the child process."""

_MIB = 1024.0


@dataclass(frozen=True)
class MemoryResult:
    """Peak resident memory an index added while building and searching (MiB)."""

    index: str
    peak_mb: float
    baseline_mb: float
    method: str
    """``"VmHWM"`` (high-water mark reset before the build) or ``"ru_maxrss"``."""


def measure_peak_memory(
    index: str,
    catalog: Catalog,
    queries: QuerySet,
    *,
    timeout: float = 900.0,
) -> MemoryResult:
    """Measure ``index`` (a name :func:`toolsearch_bench.index_names.index_factory` knows) in a
    child process; raises ``RuntimeError`` with the child's error output when it fails."""
    with tempfile.TemporaryDirectory(prefix="toolsearch-memory-") as folder:
        tools_path = Path(folder) / "tools.jsonl"
        queries_path = Path(folder) / "queries.jsonl"
        catalog.to_jsonl(tools_path)
        queries.to_jsonl(queries_path)
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolsearch_bench.memory",
                str(tools_path),
                str(queries_path),
                index,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
            check=False,
        )
    if completed.returncode != 0:
        tail = "\n".join(completed.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"memory measurement of {index!r} failed: {tail}")
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"memory measurement of {index!r} printed no result")
    record = json.loads(lines[-1])
    return MemoryResult(index, record["peak_mb"], record["baseline_mb"], record["method"])


def _status_kib(field: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    match = re.search(rf"^{field}:\s+(\d+)\s+kB", text, re.MULTILINE)
    return int(match.group(1)) if match else None


def _reset_high_water_mark() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


def _max_rss_kib() -> float:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024.0 if sys.platform == "darwin" else float(peak)  # bytes on macOS


def _child(tools_path: str, queries_path: str, index_name: str) -> dict[str, object]:
    from toolsearch.search.types import ToolSearchRequest

    catalog = Catalog.from_jsonl(tools_path)
    queries = QuerySet.from_jsonl(queries_path)
    factory = index_factory(index_name)
    gc.collect()
    baseline = _status_kib("VmRSS")
    method = "VmHWM" if baseline is not None and _reset_high_water_mark() else "ru_maxrss"
    if baseline is None:
        baseline = int(_max_rss_kib())
    index = factory()
    index.index_tools("memory", list(catalog.tools))
    for query in list(queries)[:MAX_QUERIES]:
        index.search(ToolSearchRequest("memory", query.text, 10))
    peak = _status_kib("VmHWM") if method == "VmHWM" else None
    if peak is None:
        peak = int(_max_rss_kib())
    return {
        "peak_mb": round(max(0, peak - baseline) / _MIB, 1),
        "baseline_mb": round(baseline / _MIB, 1),
        "method": method,
    }


if __name__ == "__main__":  # pragma: no cover - run as a child by measure_peak_memory
    print(json.dumps(_child(*sys.argv[1:4])))
