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
    (RESULTS / "latency.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
