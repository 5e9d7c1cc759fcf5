"""The whole benchmark for one dataset: token savings, success, retrieval quality, latency.

:func:`run_dataset` returns one :class:`BenchRecord` per mode and index: the full loop
(``mode="full"``) and tool search with each index (``mode="search"``). Savings are only
ever reported with the success rate beside them.
"""

from __future__ import annotations

import statistics
import subprocess
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from toolsearch.errors import MissingExtraError
from toolsearch.search.types import ToolIndex
from toolsearch.tokens import TokenCounter
from toolsearch_bench.agent import QueryPolicy
from toolsearch_bench.cache import TRAFFIC, CacheShape, Traffic
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.index_names import PEERS, index_factory, peer_factories
from toolsearch_bench.render import Provider
from toolsearch_bench.retrieval import evaluate_index
from toolsearch_bench.savings import LearnedWarmSet, run_tasks, summarize

SENSITIVITY: tuple[Traffic, ...] = (TRAFFIC["2min"], TRAFFIC["4min"], TRAFFIC["10min"])
"""The traffic levels every run also bills under (a conversation every 2, 4, 10 minutes)."""

__all__ = [
    "PEERS",
    "BenchRecord",
    "IndexSpec",
    "available_indexes",
    "index_factory",
    "run_dataset",
]


@dataclass(frozen=True)
class IndexSpec:
    """A named way to build an index; ``peer`` marks other projects' methods."""

    name: str
    factory: Callable[[], ToolIndex]
    peer: bool = False


@dataclass(frozen=True)
class BenchRecord:
    """One dataset x mode x index."""

    dataset: str
    mode: str
    index: str
    peer: bool
    tasks: int
    tools: int
    provider: str
    tokenizer: str
    prompt_tokens_mean: float
    prompt_tokens_median: float
    prompt_tokens_p90: float
    definition_share: float
    savings_pct: float | None
    success_rate: float
    searches_per_task: float
    iterations_per_task: float
    recall_at_1: float | None = None
    recall_at_3: float | None = None
    recall_at_5: float | None = None
    recall_at_10: float | None = None
    ndcg_at_10: float | None = None
    mrr_at_10: float | None = None
    complete_at_10: float | None = None
    p50_us: float | None = None
    p99_us: float | None = None
    build_s: float | None = None
    peak_rss_mb: float | None = None
    """Peak memory the index added while building and searching (see
    :mod:`toolsearch_bench.memory`); ``None`` when not measured."""
    billed_tokens_mean: float | None = None
    """Input per task with the provider's prompt cache on, in fresh-token equivalents
    (:mod:`toolsearch_bench.cache`)."""
    cached_savings_pct: float | None = None
    """Savings against the full loop with the prompt cache on for both."""
    traffic_gap_s: float | None = None
    """The traffic the billing assumed: a conversation every this many seconds."""
    sensitivity_gaps_s: tuple[float, ...] = ()
    """The other traffic levels billed (a conversation every ... seconds)."""
    billed_by_traffic: tuple[float, ...] = ()
    cached_savings_by_traffic: tuple[float, ...] = ()
    miss_causes: tuple[tuple[str, int], ...] = ()
    """Requests per cache-miss cause (tool added, tool removed, ttl, under the minimum,
    system changed, new prefix)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def available_indexes(names: Sequence[str], *, peers: bool = True) -> list[IndexSpec]:
    """The requested toolsearch indexes that can be built here, plus the peers."""
    specs = []
    for name in names:
        if name in PEERS:
            raise ValueError(f"{name!r} is a peer; peers are added with peers=True")
        factory = index_factory(name)
        try:
            factory()  # fail now, with the extra's name, rather than mid-run
        except MissingExtraError as exc:
            raise MissingExtraError(f"the {name} index", exc.extra, exc.package) from exc
        specs.append(IndexSpec(name, factory))
    if peers:
        for name, factory in peer_factories().items():
            try:
                factory()  # peer: bm25s needs bm25s; without it, it is left out
            except MissingExtraError:
                continue
            specs.append(IndexSpec(name, factory, peer=True))
    return specs


def run_dataset(
    catalog: Catalog,
    queries: QuerySet,
    indexes: Sequence[IndexSpec],
    *,
    counter: TokenCounter,
    provider: Provider = "openai",
    policy: QueryPolicy | None = None,
    max_results: int = 5,
    runs: int = 5,
    on_step: Callable[[str], Any] | None = None,
    on_task: Callable[[], Any] | None = None,
    memory: bool = False,
    on_phase: Callable[[str, int | None], Any] | None = None,
    cache: CacheShape | Literal["provider"] | None = "provider",
    traffic: Traffic | None = None,
    sensitivity: Sequence[Traffic] = SENSITIVITY,
    warm_set: bool = False,
) -> list[BenchRecord]:
    """Full loop once, then tool search and retrieval for each index (timings ``runs``
    times: medians of the per-run latency percentiles are reported).

    Progress: each phase (``"full loop"``, ``"tool search: bm25"``, ``"retrieval and
    latency: bm25"``, ``"memory: bm25"``) starts with ``on_step(text)`` and
    ``on_phase(text, steps)``; ``on_task()`` is called once per step: per task in the
    loops, per timed query (after its timing) in the retrieval phase. The memory phase
    has no steps (``None``). ``ValueError`` for an empty query set.

    ``memory`` also measures each index's peak memory in a child process
    (:func:`~toolsearch_bench.memory.measure_peak_memory`); an index the child cannot
    rebuild by name (a custom :class:`IndexSpec`) or a failed measurement gets ``None``.

    ``cache``: the prompt cache every loop is billed under as well (``"provider"``: the
    provider's shape; ``None``: raw tokens only), one per loop and index, shared by its tasks.
    ``traffic``: when the conversations come (a conversation every 30 s by default);
    ``sensitivity``: other traffic levels the same requests are billed under as well.
    Tool search runs with the library's default working set (the request shape's cost
    model); ``warm_set``: also hold a warm set learned from the run's earlier tasks, as
    the usage memory would (:class:`~toolsearch_bench.savings.LearnedWarmSet`).
    """
    traffic = traffic or Traffic()
    if not len(queries):
        raise ValueError(f"dataset {catalog.name!r} has no queries to run")
    policy = policy or QueryPolicy()
    runs = max(1, runs)

    def step(text: str, total: int | None) -> None:
        if on_step is not None:
            on_step(text)
        if on_phase is not None:
            on_phase(text, total)

    def task(_: Any = None) -> None:
        if on_task is not None:
            on_task()

    common = {"dataset": catalog.name, "provider": provider, "tokenizer": counter.name}
    tasks = f"{len(queries)} task{'s' if len(queries) != 1 else ''}"
    step(f"full loop ({tasks})", len(queries))
    full_outcomes = run_tasks(
        catalog,
        queries,
        mode="full",
        counter=counter,
        provider=provider,
        on_task=task,
        cache=cache,
        traffic=traffic,
        sensitivity=sensitivity,
    )
    full = summarize(full_outcomes, mode="full", index="-", full=None, **common)
    gaps = {
        "traffic_gap_s": traffic.conversation_gap,
        "sensitivity_gaps_s": tuple(t.conversation_gap for t in sensitivity),
    }
    records = [_record(full, peer=False, tools=len(catalog), **gaps)]
    for spec in indexes:
        step(f"tool search: {spec.name} ({tasks})", len(queries))
        outcomes = run_tasks(
            catalog,
            queries,
            mode="search",
            counter=counter,
            provider=provider,
            index_factory=spec.factory,
            policy=policy,
            max_results=max_results,
            on_task=task,
            cache=cache,
            traffic=traffic,
            sensitivity=sensitivity,
            warm_set=LearnedWarmSet() if warm_set else None,
        )
        summary = summarize(outcomes, mode="search", index=spec.name, full=full, **common)
        step(
            f"retrieval and latency: {spec.name} ({runs} x {len(queries)} queries)",
            runs * len(queries),
        )
        timings = [
            evaluate_index(spec.name, spec.factory, catalog, queries, on_query=task)
            for _ in range(runs)
        ]
        retrieval = timings[0].metrics
        peak = None
        if memory:
            step(f"memory: {spec.name} (a child process)", None)
            peak = _peak_memory(spec, catalog, queries)
        records.append(
            _record(
                summary,
                peer=spec.peer,
                tools=len(catalog),
                recall_at_1=retrieval["R@1"],
                recall_at_3=retrieval["R@3"],
                recall_at_5=retrieval["R@5"],
                recall_at_10=retrieval["R@10"],
                ndcg_at_10=retrieval["NDCG@10"],
                mrr_at_10=retrieval["MRR@10"],
                complete_at_10=retrieval["Complete@10"],
                p50_us=round(1000 * statistics.median(t.search_p50_ms for t in timings), 1),
                p99_us=round(1000 * statistics.median(t.search_p99_ms for t in timings), 1),
                build_s=round(statistics.median(t.build_seconds for t in timings), 4),
                peak_rss_mb=peak,
                **gaps,
            )
        )
    return records


def _peak_memory(spec: IndexSpec, catalog: Catalog, queries: QuerySet) -> float | None:
    from toolsearch_bench.memory import measure_peak_memory

    try:
        if index_factory(spec.name) is not spec.factory:
            return None  # a custom spec under a known name: the child would measure another
        return measure_peak_memory(spec.name, catalog, queries).peak_mb
    except (ValueError, RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        warnings.warn(f"peak memory of {spec.name} not measured: {exc}", stacklevel=2)
        return None


def _record(summary: Any, *, peer: bool, tools: int, **retrieval: Any) -> BenchRecord:
    return BenchRecord(
        dataset=summary.dataset,
        mode=summary.mode,
        index=summary.index,
        peer=peer,
        tasks=summary.tasks,
        tools=tools,
        provider=summary.provider,
        tokenizer=summary.tokenizer,
        prompt_tokens_mean=summary.prompt_tokens_mean,
        prompt_tokens_median=summary.prompt_tokens_median,
        prompt_tokens_p90=summary.prompt_tokens_p90,
        definition_share=summary.definition_share,
        savings_pct=summary.savings_pct,
        success_rate=summary.success_rate,
        billed_tokens_mean=summary.billed_tokens_mean,
        cached_savings_pct=summary.cached_savings_pct,
        billed_by_traffic=summary.billed_by_traffic,
        cached_savings_by_traffic=summary.cached_savings_by_traffic,
        miss_causes=summary.miss_causes,
        searches_per_task=summary.searches_per_task,
        iterations_per_task=summary.iterations_per_task,
        **retrieval,
    )
