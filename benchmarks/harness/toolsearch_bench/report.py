"""Benchmark reports: a markdown table, JSON records and PNG plots."""

from __future__ import annotations

import json
import platform
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolsearch_bench.runner import BenchRecord

__all__ = ["live_markdown_table", "markdown_table", "write_live_report", "write_report"]

_COLUMNS = [
    ("mode", "mode"),
    ("index", "index"),
    ("prompt tokens (mean)", "prompt_tokens_mean"),
    ("raw saved %", "savings_pct"),
    ("billed, cached (mean)", "billed_tokens_mean"),
    ("billed saved %", "cached_savings_pct"),
    ("success %", "success_rate"),
    ("searches/task", "searches_per_task"),
    ("R@5", "recall_at_5"),
    ("p50 µs", "p50_us"),
    ("peak MB", "peak_rss_mb"),
]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)


def _tables(
    records: Sequence[Any], columns: Sequence[tuple[str, str]], heading: Callable[[Any], str]
) -> str:
    """One markdown table per dataset, in first-seen order; ``heading`` titles it."""
    lines: list[str] = []
    for dataset in dict.fromkeys(r.dataset for r in records):
        rows = [r for r in records if r.dataset == dataset]
        lines += [
            f"### {heading(rows[0])}",
            "",
            "| " + " | ".join(c for c, _ in columns) + " |",
            "|" + "---|" * len(columns),
        ]
        for r in rows:
            lines.append("| " + " | ".join(_cell(getattr(r, key)) for _, key in columns) + " |")
        lines.append("")
    return "\n".join(lines)


def _write_json(payload: dict[str, Any], target: Path) -> Path:
    payload = {
        "command": payload.pop("command"),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        **payload,
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(payload, indent=2) + "\n")
    return target


def markdown_table(records: Sequence[BenchRecord]) -> str:
    """One table per dataset; savings never appear without the success rate beside them."""
    return _tables(
        records,
        _COLUMNS,
        lambda first: (
            f"{first.dataset} ({first.tools} tools, {first.tasks} tasks; {first.provider} "
            f"request shape, {first.tokenizer} tokens)"
        ),
    )


def traffic_table(records: Sequence[BenchRecord]) -> str:
    """Billed savings under each traffic level, success beside them (one table per
    dataset): how much the figure depends on the conversations keeping the cache warm."""
    lines: list[str] = []
    for dataset in dict.fromkeys(r.dataset for r in records):
        rows = [r for r in records if r.dataset == dataset and r.mode == "search"]
        if not rows or not rows[0].sensitivity_gaps_s:
            continue
        gaps = [rows[0].traffic_gap_s or 0.0, *rows[0].sensitivity_gaps_s]
        names = [_gap(g) for g in gaps]
        lines += [
            f"### {dataset}: billed saved % by traffic (a conversation every ...)",
            "",
            "| index | success % | " + " | ".join(names) + " |",
            "|---|---|" + "---|" * len(names),
        ]
        for r in rows:
            values = [r.cached_savings_pct, *r.cached_savings_by_traffic]
            lines.append(
                f"| {r.index} | {r.success_rate:.1f} | "
                + " | ".join(_cell(v) for v in values)
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def miss_table(records: Sequence[BenchRecord]) -> str:
    """Why the cache missed: requests per cause, per loop (one table per dataset)."""
    causes = sorted({c for r in records for c, _ in r.miss_causes})
    if not causes:
        return ""
    lines: list[str] = []
    for dataset in dict.fromkeys(r.dataset for r in records):
        rows = [r for r in records if r.dataset == dataset]
        lines += [
            f"### {dataset}: requests that missed the cache, by cause (per task)",
            "",
            "| mode | index | requests/task | " + " | ".join(causes) + " |",
            "|---|---|---|" + "---|" * len(causes),
        ]
        for r in rows:
            found = dict(r.miss_causes)
            cells = [f"{found.get(c, 0) / max(1, r.tasks):.2f}" for c in causes]
            lines.append(
                f"| {r.mode} | {r.index} | {r.iterations_per_task:.2f} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def _gap(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.0f} min"


def write_report(
    records: Sequence[BenchRecord], out: Path, *, command: str, json_path: Path | None = None
) -> list[Path]:
    """Write ``report.md``, ``results.json`` (or ``json_path``) and the plots into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = [
        _write_json(
            {"command": command, "records": [r.as_dict() for r in records]},
            json_path or out / "results.json",
        )
    ]
    plots = _plots(records, out)
    body = [
        "# Tool-search benchmark",
        "",
        f"Command: `{command}`",
        "",
        "Prompt tokens are counted over every request of every loop iteration (system, "
        "history, tool results and tool definitions), rendered as the provider receives "
        "them. Savings compare with the full tool loop on the same tasks; success means every "
        "tool the task needs was discovered and called. Billed is the same input with the "
        "provider's prompt cache on, in fresh-token equivalents (cached reads and writes at "
        "their prices, writes at 1.25x on both OpenAI's GPT-5.6 and Anthropic; one cache for "
        "each loop's tasks, a conversation every 30 s; see docs/benchmark.md), and its "
        "savings compare the loops billed that way. Tool search runs with the library's "
        "defaults, which hold the working set (docs/working-set.md): the confident hits of "
        "the user's message loaded before the first model call, and every tool when the "
        "full list costs less (with --warm-set, also a warm set learned from the run's "
        "earlier tasks where it pays). "
        "Search queries come from the task "
        "text only (the whole request, then its clauses). Peak MB is the resident memory "
        "an index added at its peak while building over the catalog and answering queries, "
        "measured in a fresh child process (its backend imports and embedding model "
        "included; see toolsearch_bench.memory).",
        "",
        markdown_table(records),
        "## Traffic sensitivity",
        "",
        "The same requests billed again with the conversations further apart: past the "
        "cache's TTL (5 minutes) what one conversation cached is gone for the next.",
        "",
        traffic_table(records),
        "## Why the cache missed",
        "",
        "Per task, the requests that read less than they shared with the request before "
        "(or nothing), by cause: a tool added or removed (the tool list, rendered first, "
        "changed), the system prompt changed, the entry expired (ttl), the request or the "
        "one before it under the minimum a provider caches, or a new prefix (the first "
        "request of a conversation that found nothing cached).",
        "",
        miss_table(records),
        *(f"![{p.stem}]({p.name})" for p in plots),
        "",
    ]
    report = out / "report.md"
    report.write_text("\n".join(body))
    written += [report, *plots]
    return written


_LIVE_COLUMNS = [
    ("mode", "mode"),
    ("index", "index"),
    ("prompt tokens (mean)", "prompt_tokens_mean"),
    ("savings %", "savings_pct"),
    ("success %", "success_rate"),
    ("completion tokens (mean)", "completion_tokens_mean"),
    ("cached tokens (mean)", "cached_tokens_mean"),
    ("requests/task", "requests_per_task"),
    ("searches/task", "searches_per_task"),
    ("errors", "errors"),
]


def live_markdown_table(records: Sequence[Any]) -> str:
    """One table per dataset of :class:`~toolsearch_bench.live.LiveRecord` rows."""
    return _tables(
        records,
        _LIVE_COLUMNS,
        lambda first: (
            f"{first.dataset} ({first.tasks} tasks; live, {first.model}; usage as the provider "
            "reported it)"
        ),
    )


def write_live_report(
    records: Sequence[Any], out: Path, *, command: str, json_path: Path | None = None
) -> list[Path]:
    """Write ``live.md`` and ``live.json`` (or ``json_path``) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    target = _write_json(
        {"command": command, "live_records": [r.as_dict() for r in records]},
        json_path or out / "live.json",
    )
    body = [
        "# Tool-search benchmark, live",
        "",
        f"Command: `{command}`",
        "",
        "Tokens are the provider's own usage figures summed over every model call of a task. "
        'Every tool answered a synthetic `{"ok": true}`, so success means the model called '
        "every tool the task needs, not that the arguments were right.",
        "",
        live_markdown_table(records),
    ]
    missing = sum(getattr(r, "requests_without_usage", 0) for r in records)
    if missing:
        body += [
            "",
            f"{missing} model calls reported no usage; their tokens are not in the figures.",
        ]
    report = out / "live.md"
    report.write_text("\n".join(body))
    return [target, report]


def _plots(records: Sequence[BenchRecord], out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    search = [r for r in records if r.mode == "search"]
    if not search:
        return []
    datasets = list(dict.fromkeys(r.dataset for r in search))
    paths = []

    figure, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4.5), squeeze=False)
    for axis, dataset in zip(axes[0], datasets, strict=True):
        for r in (r for r in search if r.dataset == dataset):
            axis.scatter(
                r.savings_pct or 0,
                r.success_rate,
                s=60,
                color="grey" if r.peer else "tab:blue",
                marker="s" if r.peer else "o",
            )
            axis.annotate(
                r.index,
                (r.savings_pct or 0, r.success_rate),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
        axis.set_xlabel("prompt tokens saved vs the full loop, %")
        axis.set_ylabel("task success, %")
        axis.set_title(f"{dataset}: savings and success")
        axis.set_ylim(0, 105)
        axis.grid(alpha=0.3)
    figure.tight_layout()
    path = out / "savings_vs_success.png"
    figure.savefig(path, dpi=120)
    plt.close(figure)
    paths.append(path)

    figure, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4.5), squeeze=False)
    cutoffs = [1, 3, 5, 10]
    for axis, dataset in zip(axes[0], datasets, strict=True):
        for r in (r for r in search if r.dataset == dataset):
            values = [getattr(r, f"recall_at_{k}") for k in cutoffs]
            if None in values:
                continue
            axis.plot(cutoffs, values, marker="o", label=r.index, linestyle="--" if r.peer else "-")
        axis.set_xlabel("k")
        axis.set_ylabel("Recall@k, %")
        axis.set_title(f"{dataset}: retrieval")
        axis.set_xticks(cutoffs)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    figure.tight_layout()
    path = out / "recall_at_k.png"
    figure.savefig(path, dpi=120)
    plt.close(figure)
    paths.append(path)
    return paths
