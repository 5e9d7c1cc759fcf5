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
    ("savings %", "savings_pct"),
    ("billed, cached (mean)", "billed_tokens_mean"),
    ("savings cached %", "cached_savings_pct"),
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
        "their prices; one cache for each loop's tasks, a conversation every 30 s; see "
        "docs/benchmark.md), and its savings compare the loops billed that way. "
        "Search queries come from the task "
        "text only (the whole request, then its clauses). Peak MB is the resident memory "
        "an index added at its peak while building over the catalog and answering queries, "
        "measured in a fresh child process (its backend imports and embedding model "
        "included; see toolsearch_bench.memory).",
        "",
        markdown_table(records),
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
