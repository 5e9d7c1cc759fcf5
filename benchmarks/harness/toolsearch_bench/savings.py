"""Token savings of tool search against the full tool loop, measured on the real loop.

Each task runs through ``ChatClient`` twice over the same catalog: with the plain
``ToolCallingAdvisor`` (every tool definition in every request) and with the
``ToolSearchToolCallingAdvisor`` (search tool plus discovered tools). The
:class:`~toolsearch_bench.agent.SimulatedAgent` plays the model. Every request of every
iteration is rendered as the chosen provider would receive it and counted, split into
tool definitions and conversation.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolsearch.costs import Traffic
from toolsearch.loop.client import ChatClient
from toolsearch.loop.tool_calling_advisor import ToolCallingAdvisor
from toolsearch.models.function import FunctionChatModel
from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
from toolsearch.search.types import ToolIndex
from toolsearch.search.working_set.warm import WarmTool
from toolsearch.tokens import TokenCounter
from toolsearch_bench.agent import QueryPolicy, SimulatedAgent, called_tools
from toolsearch_bench.cache import CACHE_SHAPES, Block, CacheShape, PromptCache, request_blocks
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.live import SyntheticTool
from toolsearch_bench.metrics import percentile
from toolsearch_bench.render import (
    CONVERSATION_DEPENDENT_TOOLS,
    INJECTIONS,
    Provider,
    adapter_request_body,
    count_request,
    prompt_body,
)

__all__ = ["ModeSummary", "TaskOutcome", "Traffic", "prompt_blocks", "run_tasks", "summarize"]

Mode = Literal["full", "search"]

CANNED_RESULT = '{"status": "ok"}'
"""What every catalog tool answers in the offline benchmark."""


@dataclass(frozen=True)
class TaskOutcome:
    """One task in one mode; ``billed_tokens`` is its input with the prompt cache on, in
    fresh-token equivalents (``None`` when no cache shape was given)."""

    query_id: str
    success: bool
    prompt_tokens: int
    definition_tokens: int
    searches: int
    iterations: int
    billed_tokens: float | None = None
    cache_read_tokens: int = 0
    cache_written_tokens: int = 0
    billed_by_traffic: tuple[float, ...] = ()
    """Billed input again under each of the run's ``sensitivity`` traffic levels."""
    miss_causes: tuple[tuple[str, int], ...] = ()
    """Requests per cache-miss cause (:data:`toolsearch.costs.MISS_CAUSES`)."""


WORKING_SET: dict[str, Any] = {}
"""The working-set options the bench sets beyond the request shape's cost model and the
run's traffic: none. Tool search runs with the library's defaults (pre-retrieval of up to
3 confident hits, every tool when the cost model says the full list costs less:
docs/working-set.md)."""

NO_WORKING_SET: dict[str, Any] = {"preload_results": 0, "load_all": "never"}
"""The plain search loop of before the working set (no pre-retrieval, never every tool),
for comparison rows."""


class LearnedWarmSet:
    """A warm set learned from use during the run, as the usage memory would learn it:
    the tools the earlier tasks called, most called first, re-read every ``every`` tasks
    (so the warm prefix stays byte-identical between re-reads and the cache can keep it).
    Only tasks already run feed it; the first ``every`` tasks run without a warm set."""

    def __init__(self, every: int = 50) -> None:
        self.every = every
        self._counts: dict[str, int] = {}
        self._snapshot: list[str] = []
        self._tasks = 0

    def record(self, called: set[str]) -> None:
        for name in called:
            self._counts[name] = self._counts.get(name, 0) + 1
        self._tasks += 1
        if self._tasks % self.every == 0:
            ranked = sorted(self._counts.items(), key=lambda item: (-item[1], item[0]))
            self._snapshot = [name for name, _ in ranked]

    def warm_tools(
        self, tools: Sequence[Any], *, tenant: str | None = None, limit: int = 10
    ) -> list[WarmTool]:
        present = {tool.name for tool in tools}
        return [WarmTool(n) for n in self._snapshot if n in present][: max(0, limit)]


def working_set_options(provider: str, traffic: Traffic | None = None) -> dict[str, Any]:
    """The advisor options of the bench's working set for ``provider``'s request shape."""
    shape = CACHE_SHAPES.get(provider)
    options = dict(WORKING_SET)
    if shape is not None:  # a shape whose changes keep the prefix is its own cost model
        options["cost_model"] = (shape.family if not shape.changes_keep_prefix else "") or provider
    options["traffic_seconds"] = (traffic or Traffic()).conversation_gap
    return options


def run_tasks(
    catalog: Catalog,
    queries: QuerySet | Sequence[Query],
    *,
    mode: Mode,
    counter: TokenCounter,
    provider: Provider = "openai",
    index_factory: Callable[[], ToolIndex] | None = None,
    policy: QueryPolicy | None = None,
    max_results: int = 5,
    on_task: Callable[[TaskOutcome], Any] | None = None,
    cache: CacheShape | Literal["provider"] | None = "provider",
    traffic: Traffic | None = None,
    advisor_options: Mapping[str, Any] | None = None,
    warm_set: LearnedWarmSet | None = None,
    sensitivity: Sequence[Traffic] = (),
) -> list[TaskOutcome]:
    """Run every query through the loop in ``mode``; ``index_factory`` for ``"search"``.

    ``cache``: the prompt cache the requests are billed under (``"provider"``: the
    provider's shape from :data:`~toolsearch_bench.cache.CACHE_SHAPES`; ``None``: none), one
    cache for the whole run, each task a conversation made at the times ``traffic`` says;
    the same requests are billed again under each traffic of ``sensitivity`` (a cache of
    its own each)."""
    tools = [SyntheticTool(definition, CANNED_RESULT) for definition in catalog.tools]
    shape = CACHE_SHAPES[provider] if cache == "provider" else cache
    prompt_cache = PromptCache(shape) if shape is not None else None
    traffic = traffic or Traffic()
    others = [(t, PromptCache(shape)) for t in sensitivity] if shape is not None else []
    block_counts: dict[Any, Any] = {}
    if mode == "search":
        if index_factory is None:
            raise ValueError("search mode needs an index_factory")
        advisor: ToolCallingAdvisor = ToolSearchToolCallingAdvisor(
            tool_index=index_factory(),
            max_results=max_results,
            multi_query=bool(policy and policy.multi_query),
            injection=INJECTIONS.get(provider, "tools"),  # type: ignore[arg-type]
            token_counter=counter,
            warm_set=warm_set,
            **{**working_set_options(provider, traffic), **(advisor_options or {})},
        )
    else:
        advisor = ToolCallingAdvisor()
    definition_counts: dict[Any, int] = {}  # the same tool lists recur across requests
    outcomes = []
    for number, query in enumerate(queries):
        agent = SimulatedAgent(query.text, query.gold, policy=policy, max_results=max_results)
        model = FunctionChatModel(agent)
        client = ChatClient.builder(model).default_advisors(advisor).build()
        client.prompt(query.text).tools(tools).call()
        called = {name for prompt in model.requests for name in called_tools(prompt.messages)}
        if warm_set is not None:
            warm_set.record(called & set(query.gold))
        counts = [
            count_request(prompt, provider, counter, cache=definition_counts)
            for prompt in model.requests
        ]
        billed: float | None = None
        read = written = 0
        causes: dict[str, int] = {}
        by_traffic = [0.0] * len(others)
        if prompt_cache is not None:
            start = number * traffic.conversation_gap
            billed = 0.0
            for step, (prompt, tokens) in enumerate(zip(model.requests, counts, strict=True)):
                blocks, breakpoints = prompt_blocks(prompt, provider, counter, block_counts)
                cost = prompt_cache.request(
                    blocks,
                    now=start + step * traffic.step,
                    conversation=query.id,
                    breakpoints=breakpoints,
                    total=tokens.total,
                )
                billed += cost.billed
                read += cost.read
                written += cost.written
                if cost.cause is not None:
                    causes[cost.cause] = causes.get(cost.cause, 0) + 1
                for i, (level, cache_at_level) in enumerate(others):
                    by_traffic[i] += cache_at_level.request(
                        blocks,
                        now=number * level.conversation_gap + step * level.step,
                        conversation=query.id,
                        breakpoints=breakpoints,
                        total=tokens.total,
                    ).billed
        outcome = TaskOutcome(
            query_id=query.id,
            success=set(query.gold) <= called,
            prompt_tokens=sum(c.total for c in counts),
            definition_tokens=sum(c.definitions for c in counts),
            searches=len(agent.searches),
            iterations=len(model.requests),
            billed_tokens=billed,
            cache_read_tokens=read,
            cache_written_tokens=written,
            billed_by_traffic=tuple(by_traffic),
            miss_causes=tuple(sorted(causes.items())),
        )
        outcomes.append(outcome)
        if on_task is not None:
            on_task(outcome)
    return outcomes


def prompt_blocks(
    prompt: Any, provider: Provider, counter: TokenCounter, counts: dict[Any, Any]
) -> tuple[list[Block], list[int]]:
    """The request's blocks as the adapter renders it. A tool list recurs across requests:
    its blocks are rendered once (kept under its fingerprints), and each request renders
    only its conversation; block counts are remembered by their text."""

    def count(text: str) -> int:
        found = counts.get(text)
        if found is None:
            found = counts[text] = counter.count(text)
        return int(found)

    if provider in CONVERSATION_DEPENDENT_TOOLS:  # deferred or carried tools: per conversation
        return request_blocks(prompt_body(prompt, provider), provider, count)
    key = ("blocks", provider, tuple(t.fingerprint for t in prompt.tool_definitions))
    tools = counts.get(key)
    if tools is None:
        tools = counts[key] = request_blocks(
            {"tools": adapter_request_body(prompt, provider).get("tools") or []}, provider, count
        )[0]
    bare = prompt.with_options(prompt.options.replace(tool_callbacks=()))
    return request_blocks(adapter_request_body(bare, provider), provider, count, tools=tools)


@dataclass(frozen=True)
class ModeSummary:
    """Aggregates of one dataset, mode and index."""

    dataset: str
    mode: Mode
    index: str
    provider: str
    tokenizer: str
    tasks: int
    success_rate: float
    prompt_tokens_mean: float
    prompt_tokens_median: float
    prompt_tokens_p90: float
    definition_share: float
    searches_per_task: float
    iterations_per_task: float
    savings_pct: float | None = None
    billed_tokens_mean: float | None = None
    """Input per task with the prompt cache on, in fresh-token equivalents."""
    cached_savings_pct: float | None = None
    """Savings against the full loop, both billed with the prompt cache on."""
    billed_by_traffic: tuple[float, ...] = ()
    """Billed input per task under each sensitivity traffic level (the run's order)."""
    cached_savings_by_traffic: tuple[float, ...] = ()
    """Billed savings against the full loop under each sensitivity traffic level."""
    miss_causes: tuple[tuple[str, int], ...] = ()
    """Requests per cache-miss cause over every task."""

    def as_row(self) -> dict[str, Any]:
        return dict(self.__dict__)


def summarize(
    outcomes: Sequence[TaskOutcome],
    *,
    dataset: str,
    mode: Mode,
    index: str,
    provider: str,
    tokenizer: str,
    full: ModeSummary | None = None,
) -> ModeSummary:
    """Aggregate task outcomes; with the full loop's summary, the savings against it."""
    tokens = [o.prompt_tokens for o in outcomes]
    mean = statistics.fmean(tokens) if tokens else 0.0
    savings = None
    if full is not None and full.prompt_tokens_mean:
        savings = round(100.0 * (1.0 - mean / full.prompt_tokens_mean), 2)
    total = sum(tokens) or 1
    billed = [o.billed_tokens for o in outcomes if o.billed_tokens is not None]
    billed_mean = (
        round(statistics.fmean(billed), 1) if billed and len(billed) == len(outcomes) else None
    )
    cached_savings = None
    if billed_mean is not None and full is not None and full.billed_tokens_mean:
        cached_savings = round(100.0 * (1.0 - billed_mean / full.billed_tokens_mean), 2)
    levels = min((len(o.billed_by_traffic) for o in outcomes), default=0)
    by_traffic = tuple(
        round(statistics.fmean(o.billed_by_traffic[i] for o in outcomes), 1) for i in range(levels)
    )
    savings_by_traffic: tuple[float, ...] = ()
    if full is not None and len(full.billed_by_traffic) == levels:
        savings_by_traffic = tuple(
            round(100.0 * (1.0 - mine / theirs), 2) if theirs else 0.0
            for mine, theirs in zip(by_traffic, full.billed_by_traffic, strict=True)
        )
    causes: dict[str, int] = {}
    for outcome in outcomes:
        for cause, count in outcome.miss_causes:
            causes[cause] = causes.get(cause, 0) + count
    return ModeSummary(
        billed_by_traffic=by_traffic,
        cached_savings_by_traffic=savings_by_traffic,
        miss_causes=tuple(sorted(causes.items())),
        dataset=dataset,
        mode=mode,
        index=index,
        provider=provider,
        tokenizer=tokenizer,
        tasks=len(outcomes),
        success_rate=round(100.0 * sum(o.success for o in outcomes) / max(1, len(outcomes)), 2),
        prompt_tokens_mean=round(mean, 1),
        prompt_tokens_median=float(statistics.median(tokens)) if tokens else 0.0,
        prompt_tokens_p90=round(percentile(tokens, 90), 1),
        definition_share=round(100.0 * sum(o.definition_tokens for o in outcomes) / total, 2),
        searches_per_task=round(statistics.fmean(o.searches for o in outcomes), 2)
        if outcomes
        else 0.0,
        iterations_per_task=round(statistics.fmean(o.iterations for o in outcomes), 2)
        if outcomes
        else 0.0,
        savings_pct=savings,
        billed_tokens_mean=billed_mean,
        cached_savings_pct=cached_savings,
    )
