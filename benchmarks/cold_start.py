"""Cold starts of the MiniLM vector side: PyTorch against ONNX Runtime, side by side.

Each measurement runs in a fresh Python process (what a restarted service or a new worker
pays), alternating the variants within each round so a noisy neighbour hits both alike:

* ``first``: the **first search of a new tool set** over ``--tools`` synthetic tools, for
  ``minilm-torch``, ``minilm-onnx`` with an empty disk embedding cache, and ``minilm-onnx``
  again over the same tools (the cache warm, as a second worker is); timed from the
  interpreter's start (imports, model load, embedding the set, one query) and in-process
  (from building the embedder to the hits: what a running service pays for a new set);
* ``build``: a **hybrid build** of ``--build`` tools with each backend (cache off), its
  wall time; synthetic tools, or an evenly spread sample of ``--catalog`` (a JSONL
  catalog such as ``benchmarks/openapi_directory.py``'s output);
* ``proxy``: the **MCP proxy's start** with a hybrid index over a stdio MCP server offering
  ``--tools`` tools (connect, list, build the index, answer one ``search_tools``), from the
  interpreter's start, for the same three variants as ``first``;
* each with ``--busy N`` CPU-bound neighbour processes running (0: idle).

Medians over ``--rounds`` rounds, with the ratios to PyTorch measured in the same run.

    python benchmarks/cold_start.py --tools 300 --build 2000 --rounds 3 --busy 0
    python benchmarks/cold_start.py --only build --build 20000 --rounds 1 \\
        --catalog /tmp/openapi-directory.jsonl
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
from collections.abc import Callable
from pathlib import Path

MEASUREMENTS = ("first", "build", "proxy")
VARIANTS = ("torch", "onnx, cold cache", "onnx, warm cache")

FIRST_SEARCH = """
import sys, time
start = float(sys.argv[1])
from toolsearch.indexes import VectorToolIndex
from toolsearch.indexes.specs import embedder_factory
from toolsearch.search.types import ToolSearchRequest
from toolsearch.tools.definition import ToolDefinition
tools = [ToolDefinition(f"tool_{i}", f"Operation {i}: manage the {i % 37} records of kind {i % 11}")
         for i in range(int(sys.argv[3]))]
began = time.perf_counter()
index = VectorToolIndex(embedder=embedder_factory(sys.argv[2])())
index.index_tools("s", tools)
index.search(ToolSearchRequest("s", "manage the records", 5))
print(time.time() - start, time.perf_counter() - began, "torch" in sys.modules)
"""

BUILD = """
import sys, time
from toolsearch.indexes import make_index
from toolsearch.tools.definition import ToolDefinition
n = int(sys.argv[2])
if len(sys.argv) > 3:  # an evenly spread sample of a JSONL catalog
    from toolsearch.catalog.sources import iter_tools
    every = list(iter_tools(sys.argv[3], kind="jsonl"))
    tools = [every[i * len(every) // n] for i in range(min(n, len(every)))]
else:
    record_id = {"type": "string", "description": "Record id"}
    schema = {"type": "object", "properties": {"id": record_id}}
    tools = [ToolDefinition(f"tool_{i}", f"Operation {i}: manage the {i % 37} records of kind "
             f"{i % 11}", schema) for i in range(n)]
index = make_index(f"hybrid:{sys.argv[1]}")
start = time.perf_counter()
index.index_tools("s", tools)
print(time.perf_counter() - start)
"""

SERVER = """
import sys
from mcp.server.mcpserver import MCPServer
server = MCPServer("big", log_level="WARNING")
for i in range(int(sys.argv[1])):
    server.add_tool(lambda record_id="": "ok", name=f"tool_{i}",
                    description=f"Operation {i}: manage the {i % 37} records of kind {i % 11}")
server.run()
"""

PROXY_START = """
import asyncio, sys, time
start = float(sys.argv[1])
from toolsearch.mcp import McpSearchProxy, McpToolProvider
servers = {"big": {"command": sys.executable, "args": ["-c", sys.argv[3], sys.argv[4]]}}
async def main():
    provider = McpToolProvider({"servers": servers})
    proxy = McpSearchProxy(provider, index=f"hybrid:{sys.argv[2]}")
    await proxy.start()
    found = await proxy.asearch("manage the records")
    assert found["tools"], found
    seconds = time.time() - start
    await provider.aclose()
    return seconds
print(asyncio.run(main()), "torch" in sys.modules)
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


class Timings:
    """Seconds per variant per column, and whether each variant's process imported torch."""

    def __init__(self) -> None:
        self.seconds: dict[str, dict[str, list[float]]] = {}
        self.torch: dict[str, bool] = {}

    def add(self, variant: str, column: str, seconds: str) -> None:
        self.seconds.setdefault(variant, {}).setdefault(column, []).append(float(seconds))

    def median(self, variant: str, column: str) -> float:
        return statistics.median(self.seconds[variant][column])


def _three_variants(timings: Timings, run: Callable[[str, str], list[str]]) -> None:
    """One round over the three variants: PyTorch, then ONNX with an empty cache, then ONNX
    again over the same tools (the cache the previous process filled). ``run(embedder,
    cache)`` gives one process's output: seconds (one or more columns), torch imported."""
    with tempfile.TemporaryDirectory() as cache:
        for variant, embedder, folder in zip(
            VARIANTS,
            ("minilm-torch", "minilm-onnx", "minilm-onnx"),
            ("off", cache, cache),
            strict=True,
        ):
            *seconds, loaded = run(embedder, folder)
            for column, value in zip(("total", "in-process"), seconds, strict=False):
                timings.add(variant, column, value)
            timings.torch[variant] = loaded == "True"


def _variant_table(title: str, timings: Timings, columns: tuple[str, ...]) -> list[str]:
    header = " | ".join(f"{c} s | vs torch" for c in columns)
    lines = ["", title, "", f"| variant | {header} | torch imported |"]
    lines.append("| --- | " + " | ".join("---: | ---:" for _ in columns) + " | --- |")
    for variant in VARIANTS:
        cells = []
        for column in columns:
            median = timings.median(variant, column)
            base = timings.median("torch", column)
            cells.append(f"{median:.2f} | {base / median:.1f}x faster")
        lines.append(f"| {variant} | {' | '.join(cells)} | {timings.torch[variant]} |")
    return lines


def _build_table(
    tools: int, rounds: int, builds: dict[str, list[float]], catalog: Path | None
) -> list[str]:
    build_base = statistics.median(builds["minilm-torch"])
    source = f"tools of {catalog.name}" if catalog else "synthetic tools"
    lines = [
        "",
        f"Hybrid build of {tools} {source} (index_tools only, median of {rounds}):",
        "",
        "| embedder | seconds | vs torch |",
        "| --- | ---: | ---: |",
    ]
    for name, values in builds.items():
        median = statistics.median(values)
        lines.append(f"| {name} | {median:.1f} | {median / build_base:.2f}x the time |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=300)
    parser.add_argument("--build", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0)
    parser.add_argument(
        "--only", choices=MEASUREMENTS, action="append", help="run this measurement (repeatable)"
    )
    parser.add_argument(
        "--catalog",
        type=Path,
        help="build from an evenly spread sample of this JSONL catalog's tools "
        "(e.g. benchmarks/openapi_directory.py's output) instead of synthetic ones",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    wanted = args.only or list(MEASUREMENTS)
    n = str(args.tools)
    neighbours = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.busy)]
    for process in neighbours:
        process.start()
    first, proxy = Timings(), Timings()
    builds: dict[str, list[float]] = {"minilm-torch": [], "minilm-onnx": []}
    try:
        for _ in range(args.rounds):
            if "first" in wanted:
                _three_variants(
                    first,
                    lambda e, c: _run(FIRST_SEARCH, str(time.time()), e, n, cache=c),
                )
            if "proxy" in wanted:
                _three_variants(
                    proxy,
                    lambda e, c: _run(PROXY_START, str(time.time()), e, SERVER, n, cache=c),
                )
            if "build" in wanted:
                for name in builds:
                    extra = [str(args.catalog)] if args.catalog else []
                    seconds = _run(BUILD, name, str(args.build), *extra, cache="off")[0]
                    builds[name].append(float(seconds))
    finally:
        for process in neighbours:
            process.terminate()
    command = (
        f"python benchmarks/cold_start.py --tools {args.tools} --build {args.build} "
        f"--rounds {args.rounds} --busy {args.busy}"
        + "".join(f" --only {m}" for m in args.only or ())
        + (f" --catalog {args.catalog}" if args.catalog else "")
    )
    lines = [f"# Cold starts, {args.busy} CPU-bound neighbours ({os.cpu_count()} cores)"]
    lines += ["", f"`{command}`"]
    if "first" in wanted:
        title = (
            f"First search of a new {args.tools}-tool set (median of {args.rounds}); "
            "total: from the interpreter's start; in-process: from building the embedder:"
        )
        lines += _variant_table(title, first, ("total", "in-process"))
    if "proxy" in wanted:
        title = (
            f"MCP proxy start, hybrid index over one stdio server of {args.tools} tools, to "
            f"the first search's answer, from the interpreter's start (median of {args.rounds}):"
        )
        lines += _variant_table(title, proxy, ("total",))
    if "build" in wanted:
        lines += _build_table(args.build, args.rounds, builds, args.catalog)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with args.out.open("a") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
