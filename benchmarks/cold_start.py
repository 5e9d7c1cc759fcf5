"""Cold starts of the MiniLM vector side: PyTorch against ONNX Runtime, side by side.

Each measurement runs in a fresh Python process (what a restarted service or a new worker
pays), alternating the variants within each round so a noisy neighbour hits both alike:

* **first search of a new tool set**: from the interpreter's start to the first search's
  hits over ``--tools`` synthetic tools (import, model load, embedding the set, one
  query), for ``minilm-torch``, ``minilm-onnx`` with an empty disk embedding cache, and
  ``minilm-onnx`` again over the same tools (the cache warm, as a second worker is);
* **a hybrid build** of ``--build`` tools with each backend (cache off), its wall time;
* each with ``--busy N`` CPU-bound neighbour processes running (0: idle).

Medians over ``--rounds`` rounds, with the ratios to PyTorch measured in the same run.

    python benchmarks/cold_start.py --tools 300 --build 2000 --rounds 3 --busy 0
    python benchmarks/cold_start.py --tools 300 --build 2000 --rounds 3 --busy 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIRST_SEARCH = """
import sys, time
start = float(sys.argv[1])
from toolsearch.indexes import VectorToolIndex
from toolsearch.indexes.specs import embedder_factory
from toolsearch.search.types import ToolSearchRequest
from toolsearch.tools.definition import ToolDefinition
tools = [ToolDefinition(f"tool_{i}", f"Operation {i}: manage the {i % 37} records of kind {i % 11}")
         for i in range(int(sys.argv[3]))]
index = VectorToolIndex(embedder=embedder_factory(sys.argv[2])())
index.index_tools("s", tools)
index.search(ToolSearchRequest("s", "manage the records", 5))
print(time.time() - start, "torch" in sys.modules)
"""

BUILD = """
import sys, time
from toolsearch.indexes import make_index
from toolsearch.tools.definition import ToolDefinition
tools = [ToolDefinition(f"tool_{i}", f"Operation {i}: manage the {i % 37} records of kind {i % 11}",
         {"type": "object", "properties": {"id": {"type": "string", "description": "Record id"}}})
         for i in range(int(sys.argv[2]))]
index = make_index(f"hybrid:{sys.argv[1]}")
start = time.perf_counter()
index.index_tools("s", tools)
print(time.perf_counter() - start)
"""


def _burn() -> None:
    while True:
        pass


def _run(script: str, *args: str, cache: str) -> list[str]:
    env = {**os.environ, "TOOLSEARCH_EMBEDDING_CACHE": cache, "TOKENIZERS_PARALLELISM": "false"}
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True, env=env
    )
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=300)
    parser.add_argument("--build", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    neighbours = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.busy)]
    for process in neighbours:
        process.start()
    first: dict[str, list[float]] = {"torch": [], "onnx, cold cache": [], "onnx, warm cache": []}
    builds: dict[str, list[float]] = {"minilm-torch": [], "minilm-onnx": []}
    torch_loaded: dict[str, bool] = {}
    try:
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as cache:
                n = str(args.tools)
                seconds, loaded = _run(
                    FIRST_SEARCH, str(time.time()), "minilm-torch", n, cache="off"
                )
                first["torch"].append(float(seconds))
                torch_loaded["torch"] = loaded == "True"
                for label in ("onnx, cold cache", "onnx, warm cache"):
                    seconds, loaded = _run(
                        FIRST_SEARCH, str(time.time()), "minilm-onnx", n, cache=cache
                    )
                    first[label].append(float(seconds))
                    torch_loaded[label] = loaded == "True"
            for name in builds:
                builds[name].append(float(_run(BUILD, name, str(args.build), cache="off")[0]))
    finally:
        for process in neighbours:
            process.terminate()
    base = statistics.median(first["torch"])
    lines = [
        f"# Cold starts, {args.busy} CPU-bound neighbours ({os.cpu_count()} cores)",
        "",
        f"`python benchmarks/cold_start.py --tools {args.tools} --build {args.build} "
        f"--rounds {args.rounds} --busy {args.busy}`",
        "",
        f"First search of a new {args.tools}-tool set, from the interpreter's start "
        f"(median of {args.rounds}):",
        "",
        "| variant | seconds | vs torch | torch imported |",
        "| --- | ---: | ---: | --- |",
    ]
    for label, values in first.items():
        median = statistics.median(values)
        lines.append(
            f"| {label} | {median:.2f} | {base / median:.1f}x faster | {torch_loaded[label]} |"
        )
    build_base = statistics.median(builds["minilm-torch"])
    lines += [
        "",
        f"Hybrid build of {args.build} tools (index_tools only, median of {args.rounds}):",
        "",
        "| embedder | seconds | vs torch |",
        "| --- | ---: | ---: |",
    ]
    for name, values in builds.items():
        median = statistics.median(values)
        lines.append(f"| {name} | {median:.1f} | {median / build_base:.2f}x the time |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with args.out.open("a") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
