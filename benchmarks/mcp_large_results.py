"""Large MCP tool results over stdio: the SDK's ``stdio_client`` beside toolsearch's
``stdio_transport``, in one run.

For each size (``--megabytes``) and each transport (``sdk``; ``toolsearch`` with its
default 16 MiB cap; ``toolsearch-1GiB``, a cap no answer reaches), a fresh copy of the
tests' demo server is started over stdio and its ``big`` tool called through
``mcp.Client``. The server sends the text twice (content and structured content), so the
message is about twice the size asked for. Then ``add`` is called on the same session, to
see whether a later call waits behind the large one. Each call is bounded by
``--timeout`` seconds. Reported: the seconds of each call, its outcome (over
toolsearch's cap, or timed out), and the peak RSS of the process (each transport and
size in a subprocess of its own, so peaks do not mix).

    python benchmarks/mcp_large_results.py --megabytes 2,5,10,25 \
        --out benchmarks/results/mcp-large-results.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "tests" / "mcp_servers" / "demo_server.py"


async def _measure(transport: str, megabytes: float, timeout: float) -> dict[str, object]:
    from mcp import Client, StdioServerParameters, stdio_client

    from toolsearch.mcp.stdio import DEFAULT_MAX_MESSAGE_BYTES, stdio_transport

    parameters = StdioServerParameters(command=sys.executable, args=[str(DEMO)])
    if transport == "sdk":
        target = stdio_client(parameters, errlog=sys.stderr)
    else:  # "toolsearch": the default cap; "toolsearch-1GiB": reading time without it
        cap = 2**30 if transport.endswith("1GiB") else DEFAULT_MAX_MESSAGE_BYTES
        target = stdio_transport(
            parameters, errlog=sys.stderr, server="demo", max_message_bytes=cap
        )
    row: dict[str, object] = {"transport": transport, "megabytes": megabytes}
    async with Client(target) as client:
        for name, arguments in (("big", {"megabytes": megabytes}), ("add", {"a": 1, "b": 2})):
            started = time.perf_counter()
            try:
                result = await asyncio.wait_for(client.call_tool(name, arguments), timeout)
                outcome = "error" if result.is_error else "ok"
            except TimeoutError:
                outcome = "timed out"
            except Exception as exc:  # over the cap: the call fails with the reason
                outcome = f"failed: {str(exc)[:60]}"
            row[f"{name}_seconds"] = round(time.perf_counter() - started, 3)
            row[f"{name}_outcome"] = outcome
    row["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", default="5,10,25")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--one", nargs=2, metavar=("TRANSPORT", "MEGABYTES"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.one:
        row = asyncio.run(_measure(args.one[0], float(args.one[1]), args.timeout))
        print(json.dumps(row))
        return
    rows = []
    for megabytes in [float(m) for m in args.megabytes.split(",")]:
        for transport in ("sdk", "toolsearch", "toolsearch-1GiB"):
            command = [sys.executable, __file__, "--one", transport, str(megabytes)]
            done = subprocess.run(
                [*command, "--timeout", str(args.timeout)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(rows[-1], flush=True)
    lines = [
        "| result asked (MB) | transport | big call (s) | outcome | next call (s) "
        "| peak RSS (MiB) |",
        "| ---: | --- | ---: | --- | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row['megabytes']:g} | {row['transport']} | {row['big_seconds']} | "
            f"{row['big_outcome']} | {row['add_seconds']} | {row['peak_rss_mib']} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
