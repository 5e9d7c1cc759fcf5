"""Live mode: the benchmark's tasks against a real model, full loop versus tool search.

The offline benchmark (:mod:`toolsearch_bench.savings`) scripts the model; live mode asks a
real one. Each task's request goes through the real ``ChatClient`` with the plain
``ToolCallingAdvisor`` (every catalog tool in every request) and with the
``ToolSearchToolCallingAdvisor`` per index. What is counted comes from the provider's own
responses: ``Usage`` (prompt, completion and cached tokens) summed over every model call of
the task, and the tool calls the model made. A task succeeds when the model called every
gold tool (an equally valid alternative from ``metadata["gold_alternatives"]`` counts).

Tool results are synthetic: every catalog tool is a callback that answers any arguments
with :data:`SYNTHETIC_RESULT` (``{"ok": true}``), because the catalogs describe services
that do not exist here. So live mode measures tool *choice* and the token cost of the
loop, not whether arguments were right or what a real service would have answered; a model
that needs a real value from a lookup may stop early or improvise, in both modes alike.

The seam is :func:`run_live`, which takes a ``model_factory`` (any ``ChatModel``; tests
inject a scripted one). :func:`provider_model_factory` builds the factory for a spec such
as ``"openai:gpt-4o-mini"`` from the provider adapters in :mod:`toolsearch.models`,
imported only then, after checking the provider's API-key variable.
"""

from __future__ import annotations

import importlib
import os
import statistics
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from toolsearch.chat.model import ChatModel
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse, ChatResponseAggregator, Usage
from toolsearch.errors import (
    MissingExtraError,
    ProviderAuthenticationError,
    ToolsearchError,
)
from toolsearch.models.providers import PROVIDERS as PROVIDER_TABLE
from toolsearch.models.providers import ProviderRow
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition, ToolMetadata
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.metrics import percentile

__all__ = [
    "DEFAULT_SYSTEM",
    "PROVIDERS",
    "SYNTHETIC_RESULT",
    "LiveRecord",
    "LiveTaskOutcome",
    "SyntheticTool",
    "parse_live_spec",
    "provider_model_factory",
    "run_live",
]

SYNTHETIC_RESULT = '{"ok": true}'
"""What every tool answers in live mode (see the module docstring)."""

DEFAULT_SYSTEM = (
    "You complete the user's request by calling the available tools. Call every tool the "
    "request needs, in a sensible order, without asking the user questions; then answer in "
    "one short sentence. Tool results in this session are placeholders: treat any result "
    "as success."
)
"""The system message of every live task: fixed, the same in every mode, written before
any dataset was scored and naming no tool."""


@dataclass(frozen=True)
class _Provider:
    module: str
    cls: str
    env: tuple[str, ...]
    extra: str
    request_extra: Mapping[str, Any] = field(default_factory=dict)
    """``ChatOptions.extra`` of every live request (live requests always carry tools)."""


_REQUEST_EXTRA: Mapping[str, Mapping[str, Any]] = {
    # tool_choice "auto" is OpenAI's default whenever tools are sent; sent explicitly because
    # compatible servers may default otherwise: llama-cpp-python's chatml-function-calling
    # handler treats a missing tool_choice as "none" and never shows the model the tools
    "openai": {"tool_choice": "auto"},
    "openai-responses": {"tool_choice": "auto"},
}


def _live(row: ProviderRow) -> _Provider:
    module, _, cls = row.adapter.partition(":")
    return _Provider(
        module, cls, row.api_key_variables, row.extra, _REQUEST_EXTRA.get(row.name, {})
    )


PROVIDERS: Mapping[str, _Provider] = {row.name: _live(row) for row in PROVIDER_TABLE}
"""Providers live mode knows (every row of :data:`toolsearch.models.providers.PROVIDERS`):
adapter module and class, API-key variables, extra, and the ``ChatOptions.extra`` its
requests carry."""


def parse_live_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``; ``ValueError`` otherwise."""
    provider, sep, model = spec.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    if not sep or not model or provider not in PROVIDERS:
        raise ValueError(
            f"live mode wants PROVIDER:MODEL with PROVIDER one of {', '.join(PROVIDERS)} "
            f"(e.g. openai:gpt-4o-mini), not {spec!r}"
        )
    return provider, model


def provider_model_factory(
    spec: str, *, environ: Mapping[str, str] | None = None, base_url: str | None = None
) -> Callable[[], ChatModel]:
    """A factory of the provider adapter for ``spec`` (``"anthropic:claude-..."``).

    Checks first that one of the provider's API-key variables is set
    (:class:`~toolsearch.errors.ProviderAuthenticationError` naming it otherwise), then
    imports the adapter (:class:`~toolsearch.errors.MissingExtraError` naming the extra when
    it or its SDK is missing). No request is sent here. The adapter gets the provider's
    request extras as its default options (OpenAI: ``tool_choice="auto"``). ``base_url``
    points it at another endpoint (a compatible server); with one, an OpenAI-style
    provider needs no key (local servers take none).
    """
    provider, model = parse_live_spec(spec)
    info = PROVIDERS[provider]
    env = os.environ if environ is None else environ
    keyless = base_url is not None and info.extra == "openai"
    if not keyless and not any(env.get(name) for name in info.env):
        raise ProviderAuthenticationError(
            provider,
            f"live mode needs credentials: set {' or '.join(info.env)} "
            "(nothing was sent to the provider)",
        )
    try:
        module = importlib.import_module(info.module)
        cls = getattr(module, info.cls)
    except MissingExtraError:
        raise
    except (ImportError, AttributeError) as exc:
        raise MissingExtraError(
            f"live mode with {provider} ({info.module}.{info.cls})", info.extra, info.extra
        ) from exc

    settings: dict[str, Any] = {}
    if info.request_extra:
        settings["options"] = ChatOptions(extra=dict(info.request_extra))
    if base_url is not None:
        settings["base_url"] = base_url

    def factory() -> ChatModel:
        built: ChatModel = cls(model, **settings)
        return built

    factory.__name__ = f"{provider}:{model}"
    return factory


class SyntheticTool:
    """A catalog tool whose every call answers :data:`SYNTHETIC_RESULT`."""

    def __init__(self, definition: ToolDefinition, result: str = SYNTHETIC_RESULT) -> None:
        self._definition = definition
        self._result = result

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        return self._result

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        return self._result


class _RecordingModel:
    """Passes requests to a model and keeps each response's usage and tool calls."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model
        self.usage = Usage()
        self.calls: list[str] = []
        self.requests = 0
        self.requests_without_usage = 0

    @property
    def native_tool_search(self) -> Any:
        """The wrapped model's own tool search (the advisor's ``search="native"`` reads it)."""
        return getattr(self._model, "native_tool_search", None)

    def _record(self, response: ChatResponse) -> ChatResponse:
        self.requests += 1
        if response.usage is None:  # the provider reported none: counted, not taken as 0
            self.requests_without_usage += 1
        else:
            self.usage = self.usage + response.usage
        self.calls += [call.name for call in response.message.tool_calls]
        return response

    def call(self, prompt: Prompt) -> ChatResponse:
        return self._record(self._model.call(prompt))

    def stream(self, prompt: Prompt) -> Iterator[ChatResponse]:
        aggregator = ChatResponseAggregator()
        for chunk in self._model.stream(prompt):
            aggregator.add(chunk)
            yield chunk
        self._record(aggregator.result())

    async def acall(self, prompt: Prompt) -> ChatResponse:
        return self._record(await self._model.acall(prompt))

    async def astream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        aggregator = ChatResponseAggregator()
        async for chunk in self._model.astream(prompt):
            aggregator.add(chunk)
            yield chunk
        self._record(aggregator.result())


@dataclass(frozen=True)
class LiveTaskOutcome:
    """One task in one mode, as the provider reported it."""

    query_id: str
    mode: str
    index: str
    success: bool
    gold: tuple[str, ...]
    called: tuple[str, ...]
    """Tool names the model called, in order (the search tool included)."""
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    requests: int
    searches: int
    error: str | None = None
    requests_without_usage: int = 0
    """Model calls whose response carried no usage: the token figures leave them out."""
    error_kind: str | None = None
    """The failure's kind: the exception's class, with the HTTP status for a provider error
    (``ToolLoopLimitError``, ``ProviderError (HTTP 400)``)."""


@dataclass(frozen=True)
class LiveRecord:
    """One dataset x mode x index, against one provider model."""

    dataset: str
    mode: str
    index: str
    model: str
    tasks: int
    success_rate: float
    prompt_tokens_mean: float
    prompt_tokens_median: float
    prompt_tokens_p90: float
    completion_tokens_mean: float
    cached_tokens_mean: float
    savings_pct: float | None
    requests_per_task: float
    searches_per_task: float
    errors: int
    requests_without_usage: int = 0
    """Model calls, over all tasks, that reported no usage (their tokens are not counted)."""
    error_kinds: dict[str, int] = field(default_factory=dict)
    """How many failed tasks failed each way (:attr:`LiveTaskOutcome.error_kind`)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_live(
    catalog: Catalog,
    queries: QuerySet | Sequence[Query],
    model_factory: Callable[[], ChatModel],
    *,
    indexes: Sequence[Any] = (),
    full: bool = True,
    max_results: int = 5,
    max_iterations: int = 12,
    limit: int | None = None,
    system: str | None = DEFAULT_SYSTEM,
    model_name: str | None = None,
    on_task: Callable[[LiveTaskOutcome], Any] | None = None,
    searches: Sequence[str] = ("toolsearch",),
) -> list[LiveRecord]:
    """Run the tasks with the full loop (``full``) and with tool search over each of
    ``indexes`` (:class:`~toolsearch_bench.runner.IndexSpec`), one fresh model from
    ``model_factory`` per task and mode. ``searches`` says whose search runs: this
    library's (``"toolsearch"``, one row per index) and/or the provider's own
    (``"native"``: the advisor's ``search="native"``, one row named ``native``; on a model
    without one it is this library's search over the first index).

    ``limit`` takes the first ``limit`` tasks (a live run costs money); ``max_iterations``
    bounds each task's model calls. A task whose loop fails (iteration bound, a provider
    error after the SDK's retries) counts as failed and is counted in ``errors``; rejected
    credentials stop the run.
    """
    from toolsearch.loop.client import ChatClient
    from toolsearch.loop.tool_calling_advisor import ToolCallingAdvisor
    from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
    from toolsearch.search.builtin_tools.search_tool import DEFAULT_SEARCH_TOOL_NAME

    tasks = list(queries)[: limit if limit else None]
    tools = [SyntheticTool(definition) for definition in catalog.tools]
    name = model_name or str(getattr(model_factory, "__name__", "model"))
    dataset = catalog.name

    def run_mode(mode: str, index: str, make_advisor: Callable[[], Any]) -> LiveRecord:
        outcomes: list[LiveTaskOutcome] = []
        for query in tasks:
            model = _RecordingModel(model_factory())
            client = ChatClient.builder(model).default_advisors(make_advisor()).build()
            request = client.prompt(query.text).tools(tools)
            if system:
                request = request.system(system)
            error = kind = None
            try:
                request.call()
            except ProviderAuthenticationError:
                raise
            except ToolsearchError as exc:
                error, kind = f"{type(exc).__name__}: {exc}", _error_kind(exc)
            called = tuple(model.calls)
            outcome = LiveTaskOutcome(
                query_id=query.id,
                mode=mode,
                index=index,
                success=_succeeded(query, called),
                gold=query.gold,
                called=called,
                prompt_tokens=model.usage.prompt_tokens,
                completion_tokens=model.usage.completion_tokens,
                cached_tokens=model.usage.cached_tokens,
                requests=model.requests,
                requests_without_usage=model.requests_without_usage,
                searches=sum(1 for c in called if c == DEFAULT_SEARCH_TOOL_NAME),
                error=error,
                error_kind=kind,
            )
            outcomes.append(outcome)
            if on_task is not None:
                on_task(outcome)
        return _summarize(outcomes, dataset=dataset, mode=mode, index=index, model=name)

    records: list[LiveRecord] = []
    baseline: LiveRecord | None = None
    if full:
        baseline = run_mode("full", "-", lambda: ToolCallingAdvisor(max_iterations=max_iterations))
        records.append(baseline)
    rows = [(spec, spec.name, "toolsearch") for spec in indexes if "toolsearch" in searches]
    if "native" in searches and indexes:
        rows.append((indexes[0], "native", "native"))
    for spec, label, search in rows:

        def search_advisor(spec: Any = spec, search: Any = search) -> ToolSearchToolCallingAdvisor:
            return ToolSearchToolCallingAdvisor(
                tool_index=spec.factory(),
                max_results=max_results,
                max_iterations=max_iterations,
                search=search,
            )

        record = run_mode("search", label, search_advisor)
        if baseline is not None and baseline.prompt_tokens_mean:
            savings = round(
                100.0 * (1.0 - record.prompt_tokens_mean / baseline.prompt_tokens_mean), 2
            )
            record = LiveRecord(**{**record.as_dict(), "savings_pct": savings})
        records.append(record)
    return records


def _error_kind(exc: ToolsearchError) -> str:
    status = getattr(exc, "status_code", None)
    return type(exc).__name__ + (f" (HTTP {status})" if status is not None else "")


def _succeeded(query: Query, called: Sequence[str]) -> bool:
    alternatives = query.metadata.get("gold_alternatives") or {}
    stands_for = {alt: gold for gold, alts in alternatives.items() for alt in alts}
    done = {stands_for.get(name, name) for name in called}
    return set(query.gold) <= done


def _summarize(
    outcomes: Sequence[LiveTaskOutcome], *, dataset: str, mode: str, index: str, model: str
) -> LiveRecord:
    def mean(values: Sequence[float]) -> float:
        return round(statistics.fmean(values), 1) if values else 0.0

    prompt = [o.prompt_tokens for o in outcomes]
    return LiveRecord(
        dataset=dataset,
        mode=mode,
        index=index,
        model=model,
        tasks=len(outcomes),
        success_rate=round(100.0 * sum(o.success for o in outcomes) / max(1, len(outcomes)), 2),
        prompt_tokens_mean=mean(prompt),
        prompt_tokens_median=float(statistics.median(prompt)) if prompt else 0.0,
        prompt_tokens_p90=round(percentile(prompt, 90), 1) if prompt else 0.0,
        completion_tokens_mean=mean([o.completion_tokens for o in outcomes]),
        cached_tokens_mean=mean([o.cached_tokens for o in outcomes]),
        savings_pct=None,
        requests_per_task=round(statistics.fmean(o.requests for o in outcomes), 2)
        if outcomes
        else 0.0,
        searches_per_task=round(statistics.fmean(o.searches for o in outcomes), 2)
        if outcomes
        else 0.0,
        errors=sum(1 for o in outcomes if o.error is not None),
        requests_without_usage=sum(o.requests_without_usage for o in outcomes),
        error_kinds=dict(sorted(Counter(o.error_kind for o in outcomes if o.error_kind).items())),
    )
