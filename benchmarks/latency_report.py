"""Turn pytest-benchmark's JSON (benchmarks/results/latency.json) into latency.md.

    pytest benchmarks/test_latency.py --benchmark-only \\
        --benchmark-json=benchmarks/results/latency.json
    python benchmarks/latency_report.py
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    path = RESULTS / "latency.json"
    data = json.loads(path.read_text())
    for bench in data["benchmarks"]:  # keep the statistics, drop every raw timing
        bench["stats"].pop("data", None)
    path.write_text(json.dumps(data, indent=1) + "\n")
    lines = [
        "# Latency (pytest-benchmark)",
        "",
        f"Machine: {data['machine_info'].get('cpu', {}).get('brand_raw', 'unknown CPU')}, "
        f"Python {data['machine_info'].get('python_version')}. Medians of many rounds, "
        "measured side by side in one run; regenerate with the commands in "
        "`benchmarks/latency_report.py`.",
        "",
        "| benchmark | median µs | IQR µs | rounds |",
        "|---|---|---|---|",
    ]
    for bench in sorted(data["benchmarks"], key=lambda b: b["name"]):
        stats = bench["stats"]
        lines.append(
            f"| `{bench['name']}` | {stats['median'] * 1e6:,.1f} | {stats['iqr'] * 1e6:,.1f} "
            f"| {stats['rounds']} |"
        )
    if plot(data["benchmarks"], RESULTS / "latency.png"):
        lines += ["", "![search latency vs catalog size](latency.png)"]
    (RESULTS / "latency.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def plot(benchmarks: list[dict], path: Path) -> bool:
    """Median search latency against catalog size, one line per backend."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    series: dict[str, list[tuple[int, float]]] = {}
    for bench in benchmarks:
        info = bench.get("extra_info", {})
        if bench["name"].startswith("test_search_latency") and "tools" in info:
            series.setdefault(info["backend"], []).append(
                (info["tools"], bench["stats"]["median"] * 1e6)
            )
    if not series:
        return False
    figure, axis = plt.subplots(figsize=(6, 4.2))
    for backend, points in sorted(series.items()):
        points.sort()
        axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=backend)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("tools in the session")
    axis.set_ylabel("median search latency, µs")
    axis.set_title("search latency vs catalog size (2 cores)")
    axis.grid(alpha=0.3, which="both")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return True


if __name__ == "__main__":
    main()
