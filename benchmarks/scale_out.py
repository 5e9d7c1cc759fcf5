"""Many processes, one Redis: 1,000 conversations whose requests go to random workers.

Starts ``--workers`` processes of ``benchmarks/shared_sessions_worker.py`` (each a
``ChatClient`` with the tool-search advisor over a ``RedisSessionStore`` with an LRU of
``--max-sessions``), then plays ``--conversations`` conversations of ``--requests`` requests
each: about ``--live`` conversations at a time, every request to a worker picked at random,
a conversation's requests one after another. Each request needs one of the conversation's
two tools; the scripted model searches only when the request does not show it.

Checked on every reply: the tools shown before any search are exactly those the
conversation discovered so far, in order (none lost while the session is live, none of
another conversation leaked in); the store's size never passes the LRU bound plus the
requests in flight. Measured: requests per second, request latency, and the time each
request spends in the session store (p50/p99). ``--memory`` runs the same load with each
worker's own in-process store, to show what is lost without a shared one.

    redis-server --port 6390 --save '' --appendonly no &
    python benchmarks/scale_out.py --redis redis://127.0.0.1:6390/0
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from toolsearch.search import RedisSessionStore

WORKER = Path(__file__).resolve().with_name("shared_sessions_worker.py")
sys.path.insert(0, str(WORKER.parent))

from shared_sessions_worker import TOPICS, WorkerProcess  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def run(args: argparse.Namespace, *, memory: bool) -> dict[str, Any]:
    namespace = f"scale-out-{uuid.uuid4().hex[:8]}"
    options = [
        "--redis",
        args.redis,
        "--namespace",
        namespace,
        "--max-sessions",
        str(args.max_sessions),
    ]
    if memory:
        options.append("--memory")
    workers = [WorkerProcess(*options) for _ in range(args.workers)]
    probe = RedisSessionStore(args.redis, namespace=namespace)
    rng = random.Random(args.seed)
    plans = {
        f"conversation-{i}": rng.sample([f"tool_{t}" for t in TOPICS], 2)
        for i in range(args.conversations)
    }
    queue = list(plans)
    queue_lock = threading.Lock()
    stats: dict[str, Any] = {
        "ms": [],
        "store_ms": [],
        "lost": 0,
        "leaked": 0,
        "requests": 0,
        "max_size": 0,
        "evicted": 0,
    }
    stats_lock = threading.Lock()

    def driver(seed: int) -> None:
        local = random.Random(seed)
        live: list[list[Any]] = []  # conversation, requests done, discovered so far
        while True:
            with queue_lock:
                while len(live) < args.live // args.drivers and queue:
                    live.append([queue.pop(0), 0, []])
            if not live:
                return
            entry = live[local.randrange(len(live))]
            conversation, done, discovered = entry
            want = plans[conversation][done % 2]
            if discovered and not memory and conversation not in probe:
                # the LRU dropped it while idle (200 other sessions were used since): it
                # starts again, which is eviction working, not a loss
                discovered.clear()
                with stats_lock:
                    stats["evicted"] += 1
            reply = local.choice(workers).ask(conversation, want)
            shown = reply["first_seen"]
            with stats_lock:
                stats["requests"] += 1
                stats["ms"].append(reply["ms"])
                stats["store_ms"].append(reply["store_ms"])
                stats["lost"] += int(shown != discovered)  # not exactly what was discovered
                stats["leaked"] += int(bool(set(shown) - set(discovered)))
            if want not in discovered and want in reply["called"]:
                discovered.append(want)
            entry[1] += 1
            if entry[1] == args.requests:
                live.remove(entry)
            if not memory and local.random() < 0.05:
                size = len(probe)
                with stats_lock:
                    stats["max_size"] = max(stats["max_size"], size)

    start = time.perf_counter()
    threads = [threading.Thread(target=driver, args=(args.seed + i,)) for i in range(args.drivers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    for worker in workers:
        worker.close()
    final_size = len(probe)
    probe.clear()
    return {
        "store": "in-process (one per worker)" if memory else "Redis (shared)",
        "requests": stats["requests"],
        "rps": stats["requests"] / elapsed,
        "p50_ms": statistics.median(stats["ms"]),
        "p99_ms": percentile(stats["ms"], 0.99),
        "store_p50_ms": statistics.median(stats["store_ms"]),
        "store_p99_ms": percentile(stats["store_ms"], 0.99),
        "lost": stats["lost"],
        "evicted": stats["evicted"],
        "leaked": stats["leaked"],
        "max_size": max(stats["max_size"], final_size),
        "final_size": final_size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", required=True)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--drivers", type=int, default=4, help="client threads")
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=4, help="per conversation")
    parser.add_argument("--live", type=int, default=100, help="conversations at a time")
    parser.add_argument("--max-sessions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--memory", action="store_true", help="also run with in-process stores")
    args = parser.parse_args()
    rows = [run(args, memory=False)]
    if args.memory:
        rows.append(run(args, memory=True))
    print(
        "| store | requests | req/s | p50 ms | p99 ms | store p50 ms | store p99 ms |"
        " shown != discovered | leaked | evicted while idle | max sessions seen |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        size = "n/a" if r["store"].startswith("in-process") else str(r["max_size"])
        cells = [r["store"], str(r["requests"]), f"{r['rps']:.0f}"]
        cells += [f"{r[k]:.2f}" for k in ("p50_ms", "p99_ms", "store_p50_ms", "store_p99_ms")]
        evicted = "n/a" if r["store"].startswith("in-process") else str(r["evicted"])
        cells += [str(r["lost"]), str(r["leaked"]), evicted, size]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
