"""Issue 47's fuzz at full size: 10,000 hostile queries over 1,000 hostile tool sets
through the learned index and its usage memory, and the same through the
results-injection path (the tool-search advisor answering through the real OpenAI Chat
Completions, OpenAI Responses and Anthropic SDKs against a local HTTP server that plays
the model). Counts every exception that is not a ``ToolsearchError`` ("untyped") and every
request body that is not JSON; writes ``results/fuzz-learned.md``.

    nice python benchmarks/fuzz_learned.py                       # 1,000 sets x 10 queries
    python benchmarks/fuzz_learned.py --tool-sets 20 --no-write  # a quick look

The generators and drivers are ``toolsearch_bench.fuzz_hostile``; the test suite runs a
seeded slice of the same (tests/indexes/test_hostile_fuzz.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def _section(title: str, report: object, seconds: float) -> list[str]:
    from toolsearch_bench.fuzz_hostile import FuzzReport

    assert isinstance(report, FuzzReport)
    lines = [
        f"## {title}",
        "",
        f"- tool sets: {report.tool_sets:,}; queries: {report.queries:,}"
        + (f"; HTTP requests: {report.requests:,}" if report.requests else "")
        + (
            f"; searches with learned requests for the tool set: {report.warm:,}"
            if report.warm
            else ""
        ),
        f"- untyped exceptions: **{len(report.untyped)}**; request bodies that are not "
        f"JSON: **{len(report.bad_bodies)}**",
        f"- time: {seconds:.0f} s (niced, beside a CI run on 2 shared cores)",
        "",
        "Typed refusals (a `ToolsearchError` subclass, by where it came from):",
        "",
    ]
    if not report.typed:
        lines.append("- none")
    for where, count in sorted(report.typed.items()):
        lines.append(f"- {count:,} times `{where}`")
    for failure in [*report.untyped, *report.bad_bodies][:20]:
        lines += ["", "```", failure.strip(), "```"]
    return [*lines, ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool-sets", type=int, default=1_000)
    parser.add_argument("--queries-per-set", type=int, default=10)
    parser.add_argument("--only", choices=["learned", "injection"])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    from toolsearch_bench.fuzz_hostile import fuzz_injection, fuzz_learned

    command = "nice python benchmarks/fuzz_learned.py " + " ".join(sys.argv[1:])
    lines = [
        "# Hostile-input fuzz: the learned index and the results-injection path (issue 47)",
        "",
        f"Command: `{command.strip()}` (PYTHONPATH=.:benchmarks/harness), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "Untyped: any exception that is not a `toolsearch.errors.ToolsearchError`.",
        "",
    ]
    failures = 0
    for name, driver in (("learned", fuzz_learned), ("injection", fuzz_injection)):
        if args.only and args.only != name:
            continue
        started = time.perf_counter()
        report = driver(args.tool_sets, args.queries_per_set)
        seconds = time.perf_counter() - started
        title = {
            "learned": "Learned index (index_tools, record_search, record_calls, search, "
            "save, load)",
            "injection": "Results injection (advisor, OpenAI Chat, OpenAI Responses, "
            "Anthropic, real SDKs over local HTTP)",
        }[name]
        lines += _section(title, report, seconds)
        failures += report.failures
        print(f"{name}: {report.queries} queries, {report.tool_sets} tool sets, "
              f"{len(report.untyped)} untyped, {len(report.bad_bodies)} bad bodies, "
              f"{seconds:.0f} s", flush=True)  # fmt: skip
    if not args.no_write:
        suffix = f"-{args.only}" if args.only else ""
        (RESULTS / f"fuzz-learned{suffix}.md").write_text("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
