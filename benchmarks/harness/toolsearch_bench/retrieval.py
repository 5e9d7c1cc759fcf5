"""Measure tool indexes on a catalog and query set: quality, latency and build time."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch.search.types import ToolIndex, ToolSearchRequest
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.metrics import percentile, score_rankings

__all__ = ["RetrievalResult", "evaluate_index"]

SESSION = "benchmark"


@dataclass(frozen=True)
class RetrievalResult:
    """One index on one dataset."""

    index: str
    dataset: str
    tools: int
    queries: int
    metrics: dict[str, float]
    build_seconds: float
    search_p50_ms: float
    search_p99_ms: float
    notes: dict[str, Any] = field(default_factory=dict)

    def as_row(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "index": self.index,
            "tools": self.tools,
            "queries": self.queries,
            **self.metrics,
            "build_s": round(self.build_seconds, 3),
            "p50_ms": round(self.search_p50_ms, 3),
            "p99_ms": round(self.search_p99_ms, 3),
            **({"notes": self.notes} if self.notes else {}),
        }


def evaluate_index(
    name: str,
    factory: Callable[[], ToolIndex],
    catalog: Catalog,
    queries: QuerySet,
    *,
    depth: int = 10,
    warmup: int = 3,
    notes: dict[str, Any] | None = None,
    on_query: Callable[[], Any] | None = None,
) -> RetrievalResult:
    """Build the index over the whole catalog (one session) and run every query once
    (``on_query()`` after each timed query, outside its timing: progress)."""
    index = factory()
    started = time.perf_counter()
    index.index_tools(SESSION, list(catalog.tools))
    build = time.perf_counter() - started
    _clear_query_caches(index)  # time every query cold, as a new request would be
    for query in list(queries)[:warmup]:  # first-call costs (lazy imports, caches) excluded
        index.search(ToolSearchRequest(SESSION, query.text, depth))
    rankings: list[tuple[Sequence[str], Sequence[str]]] = []
    latencies: list[float] = []
    for query in queries:
        started = time.perf_counter()
        response = index.search(ToolSearchRequest(SESSION, query.text, depth))
        latencies.append((time.perf_counter() - started) * 1000.0)
        rankings.append((_accept_alternatives(response.tool_names, query), query.gold))
        if on_query is not None:
            on_query()
    scores = score_rankings(rankings)
    return RetrievalResult(
        name,
        catalog.name,
        len(catalog),
        len(queries),
        scores.as_dict(),
        build,
        percentile(latencies, 50),
        percentile(latencies, 99),
        notes or {},
    )


def _accept_alternatives(ranked: list[str], query: Any) -> list[str]:
    """Count an equally valid tool (``metadata["gold_alternatives"]``: ``{gold: [others]}``,
    e.g. the same tool name on another server) as the gold tool it stands for."""
    alternatives = query.metadata.get("gold_alternatives") or {}
    stands_for = {alt: gold for gold, alts in alternatives.items() for alt in alts}
    out: list[str] = []
    for name in ranked:
        mapped = stands_for.get(name, name)
        if mapped not in out:
            out.append(mapped)
    return out


def _clear_query_caches(index: Any) -> None:
    """Clear the query-embedding caches of an index's embedders (vector, hybrid)."""
    for holder in (index, getattr(index, "vector", None)):
        clear = getattr(getattr(holder, "embedder", None), "clear_query_cache", None)
        if callable(clear):
            clear()
