"""Span plumbing shared by the hooks: a recorder over one span, the no-op recorder, current
spans as context managers, and spans that cover a (sync or async) stream.

A hook asks :func:`current_span` (or :func:`traced_iterator` / :func:`traced_async_iterator`
for a stream) and gets a :class:`SpanRecorder`; without OpenTelemetry it gets
:data:`NOOP`, whose methods do nothing, and nothing else runs. Exceptions always reach the
caller unchanged: the span is marked (status ERROR, ``error.type``, an ``exception`` event)
and the exception re-raised. Without content capture the event carries the exception's
type and stack frames but not its message, which may quote tool arguments.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from toolsearch.telemetry import capture_content
from toolsearch.telemetry._runtime import Otel, otel

__all__ = [
    "NOOP",
    "LoopTotals",
    "SpanRecorder",
    "current_span",
    "error_type",
    "loop_totals",
    "traced_async_iterator",
    "traced_iterator",
    "to_json",
]

T = TypeVar("T")


@dataclass
class LoopTotals:
    """What the spans of one ``ChatClient`` request add up to (its span reads it): the
    model spans' tokens and calls, the tool and search spans' counts, and the conversation
    id: the one the request names (its ``CONVERSATION_ID`` advisor param), else the
    session of a search the request ran (an advisor configured with another session key)."""

    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    searches: int = 0
    conversation_id: str | None = None


_TOTALS: ContextVar[LoopTotals | None] = ContextVar("toolsearch_loop_totals", default=None)


def loop_totals() -> LoopTotals | None:
    """The totals of the ``ChatClient`` request running in this context, if any."""
    return _TOTALS.get()


def error_type(exc: BaseException) -> str:
    """``error.type`` of an exception: its class name, module-qualified outside builtins."""
    kind = type(exc)
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", None) else f"{module}.{kind.__qualname__}"


def _content_free_message(exc: BaseException) -> str:
    """The exception's message when it cannot quote tool arguments, results or prompts:
    toolsearch's own errors about limits and configuration. Tool failures and argument
    errors (whose text may hold what the model sent), a model's or provider's errors (a
    provider's message may quote the prompt it refused) and foreign exceptions give ``""``
    unless content capture is on; ``error.type`` still names the kind."""
    if capture_content():
        return str(exc)
    from toolsearch.errors import (
        ChatModelError,
        InvalidToolArgumentsError,
        ToolExecutionError,
        ToolsearchError,
    )

    if isinstance(exc, ToolsearchError) and not isinstance(
        exc, (ToolExecutionError, InvalidToolArgumentsError, ChatModelError)
    ):
        return str(exc)
    return ""


def to_json(value: Any) -> str:
    """Compact JSON for a content attribute (anything not JSON becomes its ``str``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _attribute_value(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and value:
        if all(isinstance(v, str) for v in value):
            return tuple(value)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return tuple(float(v) for v in value)
    return to_json(value)


class SpanRecorder:
    """One live span: set attributes (``None`` values are skipped), mark a failure."""

    __slots__ = ("_failed", "_otel", "span", "started")

    recording = True

    def __init__(self, api: Otel, span: Any) -> None:
        self._otel = api
        self.span = span
        self.started = time.perf_counter()
        self._failed = False

    @property
    def elapsed(self) -> float:
        """Seconds since the span started."""
        return time.perf_counter() - self.started

    def set(self, key: str, value: Any) -> None:
        if value is not None:
            self.span.set_attribute(key, value)

    def set_many(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            if value is not None:
                self.span.set_attribute(key, value)

    def content(self, key: str, value: Callable[[], Any]) -> None:
        """Set ``key`` to ``value()`` only when content capture is on (computed then only):
        strings and lists of strings or numbers as they are, anything else as JSON."""
        if capture_content():
            produced = value()
            if produced is not None:
                self.span.set_attribute(key, _attribute_value(produced))

    def fail(self, exc: BaseException, *, kind: str | None = None) -> None:
        """Mark the span failed by ``exc``: status ERROR, ``error.type``, exception event.
        Only the first failure is recorded (a tool's error, then the same error re-raised)."""
        if self._failed:
            return
        self._failed = True
        api = self._otel
        message = _content_free_message(exc)
        self.span.set_attribute("error.type", kind or error_type(exc))
        self.span.set_status(api.Status(api.StatusCode.ERROR, message or None))
        attributes: dict[str, Any] = {"exception.message": message}
        if not capture_content():
            frames = "".join(traceback.format_tb(exc.__traceback__))
            attributes["exception.stacktrace"] = (
                f"Traceback (most recent call last):\n{frames}{error_type(exc)}"
            )
        self.span.record_exception(exc, attributes=attributes)

    def fail_quietly(self, kind: str) -> None:
        """Mark the span failed without an exception (an error the model reads as text)."""
        api = self._otel
        self.span.set_attribute("error.type", kind)
        self.span.set_status(api.Status(api.StatusCode.ERROR))


class _NoopRecorder:
    """What hooks get without OpenTelemetry (or outside a recording span): does nothing."""

    __slots__ = ()

    recording = False
    span = None
    elapsed = 0.0

    def set(self, key: str, value: Any) -> None:
        pass

    def set_many(self, attributes: Mapping[str, Any]) -> None:
        pass

    def content(self, key: str, value: Callable[[], Any]) -> None:
        pass

    def fail(self, exc: BaseException, *, kind: str | None = None) -> None:
        pass

    def fail_quietly(self, kind: str) -> None:
        pass


NOOP: Any = _NoopRecorder()
"""The recorder of the no-op path (typed ``Any`` so hooks treat both recorders alike)."""


class _NoopSpan:
    """A reusable context manager yielding :data:`NOOP`."""

    __slots__ = ()

    def __enter__(self) -> Any:
        return NOOP

    def __exit__(self, *exc: object) -> None:
        return None


_NOOP_SPAN = _NoopSpan()


class _CurrentSpan:
    """A span made current for the ``with`` block; marks and re-raises an exception."""

    __slots__ = ("_api", "_attributes", "_kind", "_name", "_on_end", "_recorder", "_token")

    def __init__(
        self,
        api: Otel,
        name: str,
        attributes: Mapping[str, Any],
        kind: Any,
        on_end: Callable[[SpanRecorder, BaseException | None], None] | None,
    ) -> None:
        self._api = api
        self._name = name
        self._attributes = attributes
        self._kind = kind
        self._on_end = on_end

    def __enter__(self) -> SpanRecorder:
        api = self._api
        span = api.tracer.start_span(
            self._name,
            kind=self._kind,
            attributes={k: v for k, v in self._attributes.items() if v is not None},
            record_exception=False,
            set_status_on_exception=False,
        )
        self._recorder = SpanRecorder(api, span)
        self._token = api.context.attach(api.trace.set_span_in_context(span))
        return self._recorder

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        recorder = self._recorder
        try:
            if exc is not None and not isinstance(exc, GeneratorExit):
                recorder.fail(exc)
            if self._on_end is not None:  # metrics too: they need no recording span
                self._on_end(recorder, exc)
        finally:
            self._api.context.detach(self._token)
            recorder.span.end()


def current_span(
    name: str,
    attributes: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
    *,
    client: bool = False,
    on_end: Callable[[SpanRecorder, BaseException | None], None] | None = None,
) -> Any:
    """A context manager: a span current for its block, yielding its recorder (or NOOP).

    ``attributes`` may be a function, called only when a span is made. ``on_end(recorder,
    exc)`` runs before the span ends (for metrics and response attributes).
    """
    api = otel()
    if api is None:
        return _NOOP_SPAN
    values = attributes() if callable(attributes) else attributes
    kind = api.SpanKind.CLIENT if client else api.SpanKind.INTERNAL
    return _CurrentSpan(api, name, values, kind, on_end)


class _StreamSpan:
    """The span of a stream: started on the first item, current while an item is produced,
    ended when the stream ends, fails or is closed."""

    def __init__(
        self,
        api: Otel,
        name: str | Callable[[], str],
        attributes: Callable[[], Mapping[str, Any]],
        kind: Any,
        on_item: Callable[[SpanRecorder, Any], None] | None,
        on_end: Callable[[SpanRecorder, BaseException | None], None] | None,
        totals: LoopTotals | None,
    ) -> None:
        self.api = api
        self.name = name
        self.attributes = attributes
        self.kind = kind
        self.on_item = on_item
        self.on_end = on_end
        self.recorder: SpanRecorder | None = None
        self.totals = totals
        self.ended = False

    def start(self) -> SpanRecorder:
        if self.recorder is None:
            api = self.api
            name = self.name() if callable(self.name) else self.name
            span = api.tracer.start_span(
                name,
                kind=self.kind,
                attributes={k: v for k, v in self.attributes().items() if v is not None},
                record_exception=False,
                set_status_on_exception=False,
            )
            self.recorder = SpanRecorder(api, span)
        return self.recorder

    def enter(self) -> tuple[Any, Any]:
        recorder = self.start()
        token = self.api.context.attach(self.api.trace.set_span_in_context(recorder.span))
        totals = _TOTALS.set(self.totals) if self.totals is not None else None
        return token, totals

    def leave(self, tokens: tuple[Any, Any]) -> None:
        token, totals = tokens
        if totals is not None:
            _TOTALS.reset(totals)
        self.api.context.detach(token)

    def item(self, value: Any) -> None:
        if self.on_item is not None and self.recorder is not None:
            self.on_item(self.recorder, value)

    def end(self, exc: BaseException | None, *, closed: bool = False) -> None:
        if self.ended:
            return
        self.ended = True
        recorder = self.start()
        try:
            if closed:
                recorder.set("toolsearch.stream.closed_early", True)
            elif exc is not None:
                recorder.fail(exc)
            if self.on_end is not None:
                self.on_end(recorder, exc)
        finally:
            recorder.span.end()


def traced_iterator(
    open_items: Callable[[], Iterator[T]],
    name: str | Callable[[], str],
    attributes: Callable[[], Mapping[str, Any]],
    *,
    client: bool = False,
    on_item: Callable[[SpanRecorder, Any], None] | None = None,
    on_end: Callable[[SpanRecorder, BaseException | None], None] | None = None,
    totals: LoopTotals | None = None,
) -> Iterator[T]:
    """The items of ``open_items()`` under one span (see :class:`_StreamSpan`).

    ``open_items`` is called on the first ``next`` with the span current, so the work a
    stream does on its first item (the request itself) is inside its span. ``totals`` is
    made the running request's :class:`LoopTotals` while items are produced (the model
    spans inside add to it).
    """
    api = otel()
    if api is None:
        return open_items()
    kind = api.SpanKind.CLIENT if client else api.SpanKind.INTERNAL
    return _traced(open_items, _StreamSpan(api, name, attributes, kind, on_item, on_end, totals))


def _traced(open_items: Callable[[], Iterator[T]], state: _StreamSpan) -> Iterator[T]:
    items: Iterator[T] | None = None
    try:
        while True:
            tokens = state.enter()
            try:
                if items is None:
                    items = iter(open_items())
                value = next(items)
            except StopIteration:
                break
            finally:
                state.leave(tokens)
            state.item(value)
            yield value
    except GeneratorExit:
        _close(items)
        state.end(None, closed=True)
        raise
    except BaseException as exc:
        state.end(exc)
        raise
    state.end(None)


def traced_async_iterator(
    open_items: Callable[[], AsyncIterator[T]],
    name: str | Callable[[], str],
    attributes: Callable[[], Mapping[str, Any]],
    *,
    client: bool = False,
    on_item: Callable[[SpanRecorder, Any], None] | None = None,
    on_end: Callable[[SpanRecorder, BaseException | None], None] | None = None,
    totals: LoopTotals | None = None,
) -> AsyncIterator[T]:
    """Async twin of :func:`traced_iterator`."""
    api = otel()
    if api is None:
        return open_items()
    kind = api.SpanKind.CLIENT if client else api.SpanKind.INTERNAL
    state = _StreamSpan(api, name, attributes, kind, on_item, on_end, totals)
    return _atraced(open_items, state)


async def _atraced(
    open_items: Callable[[], AsyncIterator[T]], state: _StreamSpan
) -> AsyncIterator[T]:
    items: AsyncIterator[T] | None = None
    try:
        while True:
            tokens = state.enter()
            try:
                if items is None:
                    items = aiter(open_items())
                value = await anext(items)
            except StopAsyncIteration:
                break
            finally:
                state.leave(tokens)
            state.item(value)
            yield value
    except GeneratorExit:
        await _aclose(items)
        state.end(None, closed=True)
        raise
    except BaseException as exc:
        state.end(exc)
        raise
    state.end(None)


def _close(items: Any) -> None:
    close = getattr(items, "close", None)
    if callable(close):
        close()


async def _aclose(items: Any) -> None:
    close = getattr(items, "aclose", None)
    if callable(close):
        await close()


def totals_scope(totals: LoopTotals) -> Any:
    """Make ``totals`` the running request's totals until the returned token is reset."""
    return _TOTALS.set(totals)


def reset_totals(token: Any) -> None:
    _TOTALS.reset(token)
