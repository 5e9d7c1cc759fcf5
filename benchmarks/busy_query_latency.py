"""Single-query vector latency, PyTorch against ONNX Runtime, idle and beside two CPU-bound
neighbours, side by side in one run.

A ``VectorToolIndex`` over 250 tools of the bundled catalog, one new query per round (the
query cache cleared), ``--rounds`` rounds per case after 3 warm-up rounds; p50 in ms and
the busy/idle ratio per backend.

    python benchmarks/busy_query_latency.py --rounds 100
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import statistics
import time

from toolsearch.indexes.specs import embedder_factory
from toolsearch.indexes.vector import VectorToolIndex
from toolsearch.search import ToolSearchRequest
from toolsearch_bench.loaders import load_bundled


def _burn() -> None:
    while True:
        pass


def _p50(index: VectorToolIndex, embedder: object, queries: list[str], rounds: int) -> float:
    times = []
    for number, text in zip(range(rounds + 3), itertools.cycle(queries)):
        embedder.clear_query_cache()  # type: ignore[attr-defined]
        start = time.perf_counter()
        index.search(ToolSearchRequest("s", f"{text} {number}", 5))
        if number >= 3:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    catalog, queries = load_bundled()
    texts = [q.text for q in queries]
    tools = list(catalog.tools)
    tools = (tools * 2)[:250] if len(tools) < 250 else tools[:250]
    tools = [
        t.__class__(f"{t.name}_{i}", t.description, t.input_schema) for i, t in enumerate(tools)
    ]
    results: dict[tuple[str, str], float] = {}
    for spec in ("minilm-torch", "minilm-onnx"):
        embedder = embedder_factory(spec)()
        index = VectorToolIndex(embedder=embedder)
        index.index_tools("s", tools)
        results[(spec, "idle")] = _p50(index, embedder, texts, args.rounds)
        neighbours = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(2)]
        for process in neighbours:
            process.start()
        time.sleep(1)
        try:
            results[(spec, "busy")] = _p50(index, embedder, texts, args.rounds)
        finally:
            for process in neighbours:
                process.terminate()
    print(f"| embedder | idle p50 ms | busy p50 ms | busy / idle |  ({args.rounds} rounds)")
    print("| --- | ---: | ---: | ---: |")
    for spec in ("minilm-torch", "minilm-onnx"):
        idle, busy = results[(spec, "idle")], results[(spec, "busy")]
        print(f"| {spec} | {idle:.1f} | {busy:.1f} | {busy / idle:.2f} |")


if __name__ == "__main__":
    main()
