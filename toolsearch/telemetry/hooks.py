"""The tracing behind each of the core's hook points (:mod:`toolsearch.observe`).

:class:`~toolsearch.telemetry.observer.OpenTelemetryObserver` hands each hook here:

* :func:`chat_client_call` / :func:`chat_client_stream` / :func:`chat_client_astream`:
  one ``ChatClient`` request (``toolsearch/loop/client.py``): an ``invoke_agent`` span;
* :func:`~toolsearch.telemetry.models.instrument_model_class`: every ``BaseChatModel``
  subclass (``toolsearch/chat/model.py``), so every model class gets ``chat {model}`` spans;
* :func:`tool_span`: ``ToolCallingManager.execute_one`` / ``aexecute_one``
  (``toolsearch/loop/manager.py``);
* :func:`search_span`: ``SearchRun.search`` (``toolsearch/search/run.py``), the one
  search path of every front door: a ``retrieval {index}`` span;
* :func:`annotate_tool_span`: ``AugmentedToolCallback`` (``toolsearch/tools/augment.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from toolsearch.telemetry import capture_content, hash_session_id
from toolsearch.telemetry._runtime import otel
from toolsearch.telemetry.models import provider_name, request_model
from toolsearch.telemetry.spans import (
    LoopTotals,
    SpanRecorder,
    current_span,
    error_type,
    loop_totals,
    reset_totals,
    totals_scope,
    traced_async_iterator,
    traced_iterator,
)

if TYPE_CHECKING:
    from toolsearch.chat.messages import ToolCall
    from toolsearch.chat.prompt import Prompt
    from toolsearch.tools.callback import ToolCallback

__all__ = [
    "AGENT_NAME",
    "annotate_tool_span",
    "chat_client_acall",
    "chat_client_astream",
    "chat_client_call",
    "chat_client_stream",
    "search_span",
    "tool_span",
]

# -- ChatClient requests ----------------------------------------------------------------

AGENT_NAME = "chat_client"
"""``gen_ai.agent.name`` of a ``ChatClient`` request: the component that runs the tool loop
(the instrumentation scope already names the library, ``toolsearch``)."""

AGENT_SPAN = f"invoke_agent {AGENT_NAME}"


def _client_attributes(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    stream: bool,
    conversation_id: str | None = None,
) -> Any:
    def build() -> dict[str, Any]:
        return {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": conversation_id,
            "gen_ai.agent.name": AGENT_NAME,
            "gen_ai.provider.name": provider_name(model),
            "gen_ai.request.model": request_model(model, prompt),
            "gen_ai.request.stream": stream,
            "toolsearch.advisors": [str(getattr(a, "name", type(a).__name__)) for a in advisors],
            "toolsearch.tools.registered": len(prompt.options.tool_callbacks),
        }

    return build


def _client_end(model: Any, prompt: Prompt, totals: LoopTotals) -> Any:
    def end(recorder: SpanRecorder, exc: BaseException | None) -> None:
        recorder.set_many(
            {
                "gen_ai.conversation.id": totals.conversation_id,
                "gen_ai.usage.input_tokens": totals.input_tokens,
                "gen_ai.usage.output_tokens": totals.output_tokens,
                "toolsearch.model_calls": totals.model_calls,
                "toolsearch.tool_calls": totals.tool_calls,
                "toolsearch.searches": totals.searches,
            }
        )
        api = otel()
        if api is None:
            return
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": provider_name(model),
            "gen_ai.request.model": request_model(model, prompt),
        }
        attributes = {k: v for k, v in attributes.items() if v is not None}
        if totals.input_tokens:
            api.request_tokens.record(
                totals.input_tokens, {**attributes, "gen_ai.token.type": "input"}
            )
        if totals.output_tokens:
            api.request_tokens.record(
                totals.output_tokens, {**attributes, "gen_ai.token.type": "output"}
            )

    return end


def chat_client_call(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    run: Callable[[], Any],
    *,
    conversation_id: str | None = None,
) -> Any:
    """Run one blocking ``ChatClient`` request (``run()``) under its ``invoke_agent`` span."""
    if otel() is None:
        return run()
    totals = LoopTotals(conversation_id=conversation_id)
    token = totals_scope(totals)
    try:
        with current_span(
            AGENT_SPAN,
            _client_attributes(model, prompt, advisors, False, conversation_id),
            on_end=_client_end(model, prompt, totals),
        ):
            return run()
    finally:
        reset_totals(token)


async def chat_client_acall(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    run: Callable[[], Any],
    *,
    conversation_id: str | None = None,
) -> Any:
    """Async twin of :func:`chat_client_call` (``run()`` returns an awaitable)."""
    if otel() is None:
        return await run()
    totals = LoopTotals(conversation_id=conversation_id)
    token = totals_scope(totals)
    try:
        with current_span(
            AGENT_SPAN,
            _client_attributes(model, prompt, advisors, False, conversation_id),
            on_end=_client_end(model, prompt, totals),
        ):
            return await run()
    finally:
        reset_totals(token)


def chat_client_stream(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    open_stream: Callable[[], Iterator[Any]],
    *,
    conversation_id: str | None = None,
) -> Iterator[Any]:
    """The responses of a streamed ``ChatClient`` request under its span (started on the
    first item, ended when the stream ends or is closed)."""
    if otel() is None:
        return open_stream()
    return cast(
        "Iterator[Any]",
        _client_stream(model, prompt, advisors, open_stream, traced_iterator, conversation_id),
    )


def chat_client_astream(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    open_stream: Callable[[], AsyncIterator[Any]],
    *,
    conversation_id: str | None = None,
) -> AsyncIterator[Any]:
    """Async twin of :func:`chat_client_stream`."""
    if otel() is None:
        return open_stream()
    traced = _client_stream(
        model, prompt, advisors, open_stream, traced_async_iterator, conversation_id
    )
    return cast("AsyncIterator[Any]", traced)


def _client_stream(
    model: Any,
    prompt: Prompt,
    advisors: Sequence[Any],
    open_stream: Callable[[], Any],
    tracer: Callable[..., Any],
    conversation_id: str | None = None,
) -> Any:
    totals = LoopTotals(conversation_id=conversation_id)
    return tracer(
        open_stream,
        AGENT_SPAN,
        _client_attributes(model, prompt, advisors, True, conversation_id),
        on_end=_client_end(model, prompt, totals),
        totals=totals,
    )


# -- tool execution -----------------------------------------------------------------------


class ToolSpan:
    """What the tool-calling manager reports about one tool execution."""

    __slots__ = ("recorder",)

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder

    def result(self, text: str) -> None:
        self.recorder.content("gen_ai.tool.call.result", lambda: str(text))

    def failed(self, exc: BaseException) -> None:
        """The tool raised (the model reads an error text; the span says why):
        ``error.type`` is the original error's type (a ``ToolExecutionError``'s cause)."""
        cause = getattr(exc, "cause", None)
        self.recorder.fail(exc, kind=error_type(cause if isinstance(cause, BaseException) else exc))


class _ToolSpanContext:
    __slots__ = ("_call", "_inner")

    def __init__(self, inner: Any, call: ToolCall) -> None:
        self._inner = inner
        self._call = call

    def __enter__(self) -> ToolSpan:
        totals = loop_totals()
        if totals is not None:
            totals.tool_calls += 1
        recorder = self._inner.__enter__()
        recorder.content("gen_ai.tool.call.arguments", lambda: self._call.arguments)
        return ToolSpan(recorder)

    def __exit__(self, *exc: Any) -> None:
        self._inner.__exit__(*exc)


class _NoopToolSpan:
    __slots__ = ()

    def result(self, text: str) -> None:
        pass

    def failed(self, exc: BaseException) -> None:
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_NOOP_TOOL = _NoopToolSpan()


def tool_span(callback: ToolCallback, call: ToolCall) -> Any:
    """A context manager around one tool execution: its ``execute_tool {name}`` span,
    current while the tool runs; yields a :class:`ToolSpan` (or a no-op)."""
    if otel() is None:
        return _NOOP_TOOL
    definition = callback.definition

    def attributes() -> dict[str, Any]:
        return {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": definition.name,
            "gen_ai.tool.description": definition.description or None,
            "gen_ai.tool.call.id": call.id or None,
            "gen_ai.tool.type": "function",
            "toolsearch.tool.callback": type(getattr(callback, "__wrapped__", callback)).__name__,
            "toolsearch.tool.return_direct": bool(callback.metadata.return_direct),
        }

    return _ToolSpanContext(current_span(f"execute_tool {definition.name}", attributes), call)


def annotate_tool_span(key: str, value: Callable[[], Any]) -> None:
    """Set a content attribute on the current span (the running tool's), when content
    capture is on; ``value`` is computed only then."""
    api = otel()
    if api is None or not capture_content():
        return
    span = api.trace.get_current_span()
    if span.is_recording():
        SpanRecorder(api, span).content(key, value)


# -- tool search --------------------------------------------------------------------------


class SearchSpan:
    """What the search tool reports about one search."""

    __slots__ = ("outcome", "recorder")

    def __init__(self, recorder: Any, outcome: dict[str, Any]) -> None:
        self.recorder = recorder
        self.outcome = outcome

    def hits(
        self,
        names: Sequence[str],
        scores: Sequence[float | None],
        *,
        search_type: str | None,
        total_matches: int,
    ) -> None:
        """The search's hits, best first (names and scores only with content capture)."""
        self.outcome["hits"] = len(names)
        recorder = self.recorder
        recorder.set_many(
            {
                "toolsearch.search.hits": len(names),
                "toolsearch.search.total_matches": total_matches,
                "toolsearch.search.type": search_type or None,
            }
        )
        recorder.content("gen_ai.retrieval.documents", lambda: retrieval_documents(names, scores))
        recorder.content("toolsearch.search.hit_names", lambda: list(names))
        if any(score is not None for score in scores):
            recorder.content(
                "toolsearch.search.hit_scores",
                lambda: [float(s) if s is not None else 0.0 for s in scores],
            )

    def error(self, code: str) -> None:
        """The index refused the query (the model reads the error code)."""
        self.outcome["hits"] = 0
        self.outcome["error"] = code
        self.recorder.fail_quietly(code)
        self.recorder.set("toolsearch.search.hits", 0)


def retrieval_documents(
    names: Sequence[str], scores: Sequence[float | None]
) -> list[dict[str, Any]]:
    """``gen_ai.retrieval.documents``: each hit's tool name as ``id``, with its ``score``
    when the index gives one (none is made up for an index that gives none)."""
    documents: list[dict[str, Any]] = []
    for position, name in enumerate(names):
        score = scores[position] if position < len(scores) else None
        documents.append({"id": name} if score is None else {"id": name, "score": float(score)})
    return documents


def conversation_id(session_id: str) -> str | None:
    """``gen_ai.conversation.id`` of a search's session: its id, unless it is a throwaway
    session of one run (no conversation named it)."""
    from toolsearch.search.session_ref import EPHEMERAL_PREFIX

    if not session_id or session_id.startswith(EPHEMERAL_PREFIX):
        return None
    return session_id


class _SearchContext:
    __slots__ = ("_conversation", "_inner", "_outcome")

    def __init__(self, inner: Any, outcome: dict[str, Any], conversation: str | None) -> None:
        self._inner = inner
        self._outcome = outcome
        self._conversation = conversation

    def __enter__(self) -> SearchSpan:
        totals = loop_totals()
        if totals is not None:
            totals.searches += 1
            if self._conversation is not None and totals.conversation_id is None:
                totals.conversation_id = self._conversation  # the request's agent span
        return SearchSpan(self._inner.__enter__(), self._outcome)

    def __exit__(self, *exc: Any) -> None:
        self._inner.__exit__(*exc)


class _NoopSearchSpan:
    __slots__ = ()
    recorder = None

    def hits(self, *args: Any, **kwargs: Any) -> None:
        pass

    def error(self, code: str) -> None:
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_NOOP_SEARCH = _NoopSearchSpan()


def index_kind(index: Any) -> str:
    """``toolsearch.search.index`` and ``gen_ai.data_source.id``: the index's class name
    (``Bm25ToolIndex``...)."""
    return type(index).__name__


def search_span(
    index: Any,
    *,
    session_id: str,
    query: str,
    limit: int,
    visible_tools: int | None = None,
    registered_tools: int | None = None,
    door: str | None = None,
    loaded_tokens: int | None = None,
) -> Any:
    """A context manager around one tool search: its ``retrieval {index}`` span (the GenAI
    conventions' retrieval operation, the index class as data source); yields a
    :class:`SearchSpan` (or a no-op). Records latency and hits as metrics when it ends.

    ``session_id`` is recorded hashed (:func:`~toolsearch.telemetry.hash_session_id`) and,
    unless it is a throwaway session, as ``gen_ai.conversation.id`` (an identifier, also
    handed to the request's agent span); the query only with content capture.
    """
    api = otel()
    if api is None:
        return _NOOP_SEARCH
    kind = index_kind(index)
    conversation = conversation_id(session_id)
    outcome: dict[str, Any] = {}

    def attributes() -> dict[str, Any]:
        return {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": kind,
            "gen_ai.conversation.id": conversation,
            "toolsearch.search.index": kind,
            "toolsearch.search.limit": limit,
            "toolsearch.session.id_hash": hash_session_id(session_id),
            "toolsearch.tools.visible": visible_tools,
            "toolsearch.tools.registered": registered_tools,
            "toolsearch.tools.loaded_tokens": loaded_tokens,
            "toolsearch.search.door": door,
        }

    def end(recorder: SpanRecorder, exc: BaseException | None) -> None:
        recorder.content("gen_ai.retrieval.query.text", lambda: query)
        recorder.content("toolsearch.search.query", lambda: query)
        metric_attributes: dict[str, Any] = {"toolsearch.search.index": kind}
        failure = outcome.get("error") or (error_type(exc) if exc is not None else None)
        if failure:
            metric_attributes["error.type"] = failure
        api.search_duration.record(recorder.elapsed, metric_attributes)
        if "hits" in outcome:
            api.search_hits.record(outcome["hits"], {"toolsearch.search.index": kind})

    span = current_span(f"retrieval {kind}", attributes, on_end=end)
    return _SearchContext(span, outcome, conversation)
