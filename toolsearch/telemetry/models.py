"""``chat {model}`` spans for every model class, and the attribute builders the other
hooks share (provider and model names, messages as JSON, token metrics).

:func:`instrument_model_class` runs from ``BaseChatModel.__init_subclass__``
(``toolsearch/chat/model.py``): each class's own ``call``/``stream``/``acall``/``astream``
is wrapped once, when the class is defined. Without OpenTelemetry a wrapper costs one
global read and calls straight through.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from toolsearch.telemetry import capture_content
from toolsearch.telemetry._runtime import otel
from toolsearch.telemetry.spans import (
    SpanRecorder,
    current_span,
    error_type,
    loop_totals,
    traced_async_iterator,
    traced_iterator,
)

if TYPE_CHECKING:
    from toolsearch.chat.messages import Message
    from toolsearch.chat.prompt import Prompt
    from toolsearch.chat.response import ChatResponse

__all__ = ["instrument_model_class", "messages_json", "provider_name", "request_model"]

_PROVIDER_NAMES = {"gemini": "gcp.gemini"}
"""Adapter ``provider`` names that the conventions spell differently."""


# -- shared attribute builders -----------------------------------------------------------


def provider_name(model: Any) -> str:
    """``gen_ai.provider.name`` of a model: its adapter's ``provider``, else its class."""
    provider = getattr(model, "provider", None)
    if isinstance(provider, str) and provider:
        return _PROVIDER_NAMES.get(provider, provider)
    return type(model).__name__


def request_model(model: Any, prompt: Prompt | None) -> str | None:
    """``gen_ai.request.model``: the request's model option, else the adapter's model."""
    if prompt is not None:
        options = prompt.options
        effective = getattr(model, "effective_options", None)
        if callable(effective):
            try:
                options = effective(prompt)
            except Exception:  # a model's own option merge failing is its call's error
                options = prompt.options
        if options.model:
            return options.model
    default = getattr(getattr(model, "default_options", None), "model", None)
    if isinstance(default, str) and default:
        return default
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else None


def messages_json(messages: Sequence[Message]) -> list[dict[str, Any]]:
    from toolsearch.chat.messages import AssistantMessage, ToolResponseMessage

    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ToolResponseMessage):
            for response in message.responses:
                out.append(
                    {
                        "role": "tool",
                        "id": response.id,
                        "name": response.name,
                        "content": str(response.response_data),
                    }
                )
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "name": c.name, "arguments": c.arguments}
                    for c in message.tool_calls
                ]
            out.append(entry)
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def usage_metrics(
    recorder: SpanRecorder, input_tokens: int, output_tokens: int, attributes: Mapping[str, Any]
) -> None:
    api = otel()
    if api is None:
        return
    base = {k: v for k, v in attributes.items() if v is not None}
    if input_tokens:
        api.token_usage.record(input_tokens, {**base, "gen_ai.token.type": "input"})
    if output_tokens:
        api.token_usage.record(output_tokens, {**base, "gen_ai.token.type": "output"})


# -- model calls --------------------------------------------------------------------------

_ACTIVE_MODEL: ContextVar[int] = ContextVar("toolsearch_model_span", default=0)
"""``id`` of the model whose call span is open in this context: its methods calling each
other (``call`` over ``stream``, ``acall`` over ``call`` in a thread) make one span."""

_TRACED = "__toolsearch_traced__"


class _ModelCall:
    """Attributes and observations of one model call (blocking or streamed)."""

    def __init__(self, model: Any, prompt: Prompt) -> None:
        self.model = model
        self.prompt = prompt
        self.provider = provider_name(model)
        self.request_model = request_model(model, prompt)
        self.response_model: str | None = None
        self.response_id: str | None = None
        self.finish_reason: str | None = None
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.tool_calls = 0
        self.chunks: list[ChatResponse] | None = [] if capture_content() else None

    @property
    def name(self) -> str:
        return f"chat {self.request_model}" if self.request_model else "chat"

    def attributes(self) -> dict[str, Any]:
        options = self.prompt.options
        effective = getattr(self.model, "effective_options", None)
        if callable(effective):
            try:
                options = effective(self.prompt)
            except Exception:
                options = self.prompt.options
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.request_model,
            "gen_ai.request.temperature": options.temperature,
            "gen_ai.request.max_tokens": options.max_tokens,
            "gen_ai.request.top_p": options.top_p,
            "toolsearch.tools.visible": len(options.tool_callbacks),
        }

    def start(self, recorder: SpanRecorder) -> None:
        recorder.content("gen_ai.input.messages", lambda: messages_json(self.prompt.messages))
        recorder.content(
            "toolsearch.tools.visible_names",
            lambda: [cb.definition.name for cb in self.prompt.options.tool_callbacks],
        )

    def observe(self, response: Any) -> None:
        """Take one response (or streamed chunk)."""
        usage = getattr(response, "usage", None)
        if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
            self.input_tokens = usage.prompt_tokens
            self.output_tokens = usage.completion_tokens
            self.cached_tokens = usage.cached_tokens
        if getattr(response, "finish_reason", None):
            self.finish_reason = str(response.finish_reason)
        metadata = getattr(response, "metadata", None) or {}
        if isinstance(metadata.get("model"), str):
            self.response_model = metadata["model"]
        if isinstance(metadata.get("id"), str):
            self.response_id = metadata["id"]
        message = getattr(response, "message", None)
        if message is not None:
            self.tool_calls += len(message.tool_calls)
        if self.chunks is not None and response is not None:
            self.chunks.append(response)

    def end(self, recorder: SpanRecorder, exc: BaseException | None) -> None:
        recorder.set_many(
            {
                "gen_ai.response.model": self.response_model,
                "gen_ai.response.id": self.response_id,
                "gen_ai.response.finish_reasons": (
                    [self.finish_reason] if self.finish_reason else None
                ),
                "gen_ai.usage.input_tokens": self.input_tokens,
                "gen_ai.usage.output_tokens": self.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": self.cached_tokens or None,
                "toolsearch.response.tool_calls": self.tool_calls,
            }
        )
        if self.chunks:
            from toolsearch.chat.response import ChatResponseAggregator

            reply = ChatResponseAggregator.aggregate(iter(self.chunks)).message
            recorder.content("gen_ai.output.messages", lambda: messages_json([reply]))
        totals = loop_totals()
        if totals is not None:
            totals.model_calls += 1
            totals.input_tokens += self.input_tokens
            totals.output_tokens += self.output_tokens
        api = otel()
        if api is None:
            return
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.request_model,
            "gen_ai.response.model": self.response_model,
        }
        usage_metrics(recorder, self.input_tokens, self.output_tokens, attributes)
        duration = {k: v for k, v in attributes.items() if v is not None}
        if exc is not None and not isinstance(exc, GeneratorExit):
            duration["error.type"] = error_type(exc)
        api.operation_duration.record(recorder.elapsed, duration)


def instrument_model_class(cls: type) -> None:
    """Wrap the ``call``/``stream``/``acall``/``astream`` a model class defines so each
    model call runs under one ``chat {model}`` span (nested calls of the same model make
    no second span). Without OpenTelemetry the wrappers only call through."""
    for name, wrap in (
        ("call", _wrap_call),
        ("stream", _wrap_stream),
        ("acall", _wrap_acall),
        ("astream", _wrap_astream),
    ):
        method = cls.__dict__.get(name)
        if (
            method is None
            or not callable(method)
            or getattr(method, "__isabstractmethod__", False)
            or getattr(method, _TRACED, False)
        ):
            continue
        wrapped = wrap(method)
        setattr(wrapped, _TRACED, True)
        setattr(cls, name, wrapped)


def _untraced(model: Any) -> bool:
    return otel() is None or _ACTIVE_MODEL.get() == id(model)


def _wrap_call(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Any, prompt: Prompt, *args: Any, **kwargs: Any) -> Any:
        if _untraced(self):
            return method(self, prompt, *args, **kwargs)
        record = _ModelCall(self, prompt)
        active = _ACTIVE_MODEL.set(id(self))
        try:
            with current_span(
                record.name, record.attributes, client=True, on_end=record.end
            ) as recorder:
                record.start(recorder)
                response = method(self, prompt, *args, **kwargs)
                record.observe(response)
                return response
        finally:
            _ACTIVE_MODEL.reset(active)

    return call


def _wrap_acall(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def acall(self: Any, prompt: Prompt, *args: Any, **kwargs: Any) -> Any:
        if _untraced(self):
            return await method(self, prompt, *args, **kwargs)
        record = _ModelCall(self, prompt)
        active = _ACTIVE_MODEL.set(id(self))
        try:
            with current_span(
                record.name, record.attributes, client=True, on_end=record.end
            ) as recorder:
                record.start(recorder)
                response = await method(self, prompt, *args, **kwargs)
                record.observe(response)
                return response
        finally:
            _ACTIVE_MODEL.reset(active)

    return acall


def _stream_hooks(self: Any, prompt: Prompt) -> tuple[_ModelCall, dict[str, Any]]:
    record = _ModelCall(self, prompt)

    def on_item(recorder: SpanRecorder, chunk: Any) -> None:
        record.observe(chunk)

    def on_end(recorder: SpanRecorder, exc: BaseException | None) -> None:
        record.start(recorder)
        record.end(recorder, exc)

    return record, {
        "attributes": record.attributes,
        "client": True,
        "on_item": on_item,
        "on_end": on_end,
    }


def _wrap_stream(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def stream(self: Any, prompt: Prompt, *args: Any, **kwargs: Any) -> Any:
        if _untraced(self):
            return method(self, prompt, *args, **kwargs)
        record, hooks = _stream_hooks(self, prompt)

        def opened() -> Iterator[Any]:
            return _guarded(self, method(self, prompt, *args, **kwargs))

        return traced_iterator(opened, record.name, **hooks)

    return stream


def _wrap_astream(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def astream(self: Any, prompt: Prompt, *args: Any, **kwargs: Any) -> Any:
        if _untraced(self):
            return method(self, prompt, *args, **kwargs)
        record, hooks = _stream_hooks(self, prompt)

        def opened() -> AsyncIterator[Any]:
            return _aguarded(self, method(self, prompt, *args, **kwargs))

        return traced_async_iterator(opened, record.name, **hooks)

    return astream


def _guarded(model: Any, items: Iterator[Any]) -> Iterator[Any]:
    """``items`` with this model marked active while each is produced."""
    iterator = iter(items)
    try:
        while True:
            active = _ACTIVE_MODEL.set(id(model))
            try:
                item = next(iterator)
            except StopIteration:
                return
            finally:
                _ACTIVE_MODEL.reset(active)
            yield item
    finally:
        close = getattr(iterator, "close", None)
        if callable(close):
            close()


async def _aguarded(model: Any, items: AsyncIterator[Any]) -> AsyncIterator[Any]:
    iterator = aiter(items)
    try:
        while True:
            active = _ACTIVE_MODEL.set(id(model))
            try:
                item = await anext(iterator)
            except StopAsyncIteration:
                return
            finally:
                _ACTIVE_MODEL.reset(active)
            yield item
    finally:
        close = getattr(iterator, "aclose", None)
        if callable(close):
            await close()
