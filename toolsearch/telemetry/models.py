"""``chat {model}`` spans for every model class, and the attribute builders the other
hooks share (provider and model names, the endpoint, messages, system instructions and
tool definitions in the GenAI conventions' JSON shapes, token metrics).

:func:`instrument_model_class` runs from ``BaseChatModel.__init_subclass__``
(``toolsearch/chat/model.py``): each class's own ``call``/``stream``/``acall``/``astream``
is wrapped once, when the class is defined. Without OpenTelemetry a wrapper costs one
global read and calls straight through.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolsearch.models.providers import PROVIDERS
from toolsearch.telemetry import capture_content
from toolsearch.telemetry._runtime import otel
from toolsearch.telemetry.cache import cache_record
from toolsearch.telemetry.spans import (
    SpanRecorder,
    current_span,
    error_type,
    loop_totals,
    traced_async_iterator,
    traced_iterator,
)

if TYPE_CHECKING:
    from toolsearch.chat.messages import AssistantMessage, Message
    from toolsearch.chat.options import ChatOptions
    from toolsearch.chat.prompt import Prompt
    from toolsearch.chat.response import ChatResponse

__all__ = [
    "input_messages",
    "instrument_model_class",
    "output_messages",
    "provider_name",
    "request_model",
    "server_address",
    "system_instructions",
    "tool_definitions",
]

_PROVIDER_NAMES = {row.name: row.otel_name for row in PROVIDERS}
"""Adapter ``provider`` -> ``gen_ai.provider.name``, from the providers table (the
conventions spell some differently: ``gemini`` is ``gcp.gemini``)."""


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
        options = effective_options(model, prompt)
        if options.model:
            return options.model
    default = getattr(getattr(model, "default_options", None), "model", None)
    if isinstance(default, str) and default:
        return default
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else None


_SEPARATE_SYSTEM = frozenset({"anthropic", "gcp.gemini"})
"""Providers whose API takes the system text apart from the chat history (Anthropic's
``system``, Gemini's ``systemInstruction``): their system messages are recorded as
``gen_ai.system_instructions``; everyone else's stay in ``gen_ai.input.messages``."""

_FINISH_REASONS = {"tool_calls": "tool_call"}
"""Finish reasons whose spelling in the conventions' output messages differs from ours."""

_DEFAULT_PORTS = {"https": 443, "http": 80}


def effective_options(model: Any, prompt: Prompt) -> ChatOptions:
    """The options the model applies to ``prompt`` (its defaults merged under the request's)."""
    effective = getattr(model, "effective_options", None)
    if callable(effective):
        try:
            options: ChatOptions = effective(prompt)
            return options
        except Exception:  # a model's own option merge failing is its call's error
            pass
    return prompt.options


def server_address(model: Any) -> tuple[str | None, int | None]:
    """``server.address`` and ``server.port`` of a provider adapter, found by duck typing:
    the base URL of its SDK client once one is built (``_client``, ``_async_client``: the
    ``base_url`` of ``openai`` and ``anthropic`` clients, the HTTP options of a
    ``google-genai`` client), else the ``base_url`` it was given (``_base_url``). Never the
    ``client`` property, which would build a client. ``(None, None)`` when nothing names an
    endpoint (scripted models; an adapter whose client is not built yet, given no URL)."""
    for attribute in ("_client", "_async_client"):
        client = getattr(model, attribute, None)
        if client is not None:
            found = _split_url(_client_base_url(client))
            if found[0] is not None:
                return found
    return _split_url(getattr(model, "_base_url", None))


def _client_base_url(client: Any) -> Any:
    url = getattr(client, "base_url", None)
    if url is None:  # google-genai keeps it in its API client's HTTP options
        options = getattr(getattr(client, "_api_client", None), "_http_options", None)
        url = getattr(options, "base_url", None)
    return url


def _split_url(url: Any) -> tuple[str | None, int | None]:
    if url is None:
        return None, None
    try:
        parts = urlsplit(str(url))
        host, port = parts.hostname, parts.port
    except ValueError:  # not a URL (a port out of range...)
        return None, None
    if not host:
        return None, None
    return host, port if port is not None else _DEFAULT_PORTS.get(parts.scheme)


def _text(content: str | None) -> dict[str, Any]:
    return {"type": "text", "content": content or ""}


def _arguments(text: str) -> Any:
    """A tool call's arguments as an object when they parse (the conventions expect one),
    else the text the model wrote."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _assistant_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts = [_text(message.content)] if message.content else []
    for call in message.tool_calls:
        arguments = _arguments(call.arguments)
        parts.append(
            {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}
        )
    return parts


def separate_system(provider: str) -> bool:
    """Whether ``provider`` takes system messages apart from the chat history."""
    return provider in _SEPARATE_SYSTEM


def input_messages(
    messages: Sequence[Message], *, separate_system: bool = False
) -> list[dict[str, Any]]:
    """``gen_ai.input.messages``: the chat history in the conventions' shape (``role`` and
    ``parts``: ``text``, ``tool_call``, ``tool_call_response``), in the order sent; system
    messages left out when the provider takes them apart (:func:`system_instructions`)."""
    from toolsearch.chat.messages import AssistantMessage, SystemMessage, ToolResponseMessage

    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ToolResponseMessage):
            parts = [
                {"type": "tool_call_response", "id": r.id, "response": r.response_data}
                for r in message.responses
            ]
            out.append({"role": "tool", "parts": parts})
        elif isinstance(message, AssistantMessage):
            out.append({"role": "assistant", "parts": _assistant_parts(message)})
        elif isinstance(message, SystemMessage) and separate_system:
            continue
        else:
            out.append({"role": message.role, "parts": [_text(message.content)]})
    return out


def system_instructions(messages: Sequence[Message]) -> list[dict[str, Any]] | None:
    """``gen_ai.system_instructions``: the system messages as text parts (``None`` if none)."""
    from toolsearch.chat.messages import SystemMessage

    parts = [_text(m.content) for m in messages if isinstance(m, SystemMessage)]
    return parts or None


def output_messages(response: ChatResponse) -> list[dict[str, Any]]:
    """``gen_ai.output.messages``: the one answer as an assistant message with its parts and
    ``finish_reason`` (``tool_calls`` spelled ``tool_call``, as the conventions do)."""
    message = response.message
    reason = response.finish_reason or ("tool_calls" if message.tool_calls else "stop")
    return [
        {
            "role": "assistant",
            "parts": _assistant_parts(message),
            "finish_reason": _FINISH_REASONS.get(reason, reason),
        }
    ]


def tool_definitions(callbacks: Sequence[Any]) -> list[dict[str, Any]]:
    """``gen_ai.tool.definitions``: the tools sent with a request, as function definitions
    (``name``, ``description``, ``parameters``: the input JSON Schema)."""
    out: list[dict[str, Any]] = []
    for callback in callbacks:
        definition = callback.definition
        entry: dict[str, Any] = {"type": "function", "name": definition.name}
        if definition.description:
            entry["description"] = definition.description
        entry["parameters"] = definition.input_schema
        out.append(entry)
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

    def __init__(self, model: Any, prompt: Prompt, *, stream: bool) -> None:
        self.model = model
        self.prompt = prompt
        self.stream = stream
        self.options = effective_options(model, prompt)
        self.provider = provider_name(model)
        self.request_model = self.options.model or request_model(model, None)
        self.server: tuple[str | None, int | None] = (None, None)
        self.response_model: str | None = None
        self.response_id: str | None = None
        self.finish_reason: str | None = None
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.metadata: dict[str, Any] = {}
        self.tool_calls = 0
        self.chunks: list[ChatResponse] | None = [] if capture_content() else None

    @property
    def name(self) -> str:
        return f"chat {self.request_model}" if self.request_model else "chat"

    def attributes(self) -> dict[str, Any]:
        options = self.options
        self.server = server_address(self.model)
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.model": self.request_model,
            "server.address": self.server[0],
            "server.port": self.server[1],
            "gen_ai.request.stream": self.stream,
            "gen_ai.request.temperature": options.temperature,
            "gen_ai.request.max_tokens": options.max_tokens,
            "gen_ai.request.top_p": options.top_p,
            "toolsearch.tools.visible": len(options.tool_callbacks),
        }

    def start(self, recorder: SpanRecorder) -> None:
        """The content attributes of the request (only with content capture)."""
        messages = self.prompt.messages
        callbacks = self.options.tool_callbacks
        apart = separate_system(self.provider)
        recorder.content(
            "gen_ai.input.messages", lambda: input_messages(messages, separate_system=apart)
        )
        if apart:
            recorder.content("gen_ai.system_instructions", lambda: system_instructions(messages))
        if callbacks:
            recorder.content("gen_ai.tool.definitions", lambda: tool_definitions(callbacks))
        recorder.content(
            "toolsearch.tools.visible_names", lambda: [cb.definition.name for cb in callbacks]
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
        if isinstance(metadata, dict):
            self.metadata.update(metadata)
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
        if self.server[0] is None:  # an adapter builds its SDK client on its first call
            self.server = server_address(self.model)
        totals = loop_totals()
        recorder.set_many(
            {
                "server.address": self.server[0],
                "server.port": self.server[1],
                "gen_ai.conversation.id": totals.conversation_id if totals is not None else None,
                "gen_ai.response.model": self.response_model,
                "gen_ai.response.id": self.response_id,
                "gen_ai.response.finish_reasons": (
                    [self.finish_reason] if self.finish_reason else None
                ),
                "gen_ai.usage.input_tokens": self.input_tokens,
                "gen_ai.usage.output_tokens": self.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": self.cached_tokens or None,
                "toolsearch.response.tool_calls": self.tool_calls,
                **cache_record(
                    input_tokens=self.input_tokens,
                    read=self.cached_tokens,
                    metadata=self.metadata,
                    tool_changes=self.options.tool_changes,
                    messages=len(self.prompt.messages),
                    model=self.response_model or self.request_model,
                    provider=self.provider or "",
                ),
            }
        )
        if self.chunks:
            from toolsearch.chat.response import ChatResponseAggregator

            reply = ChatResponseAggregator.aggregate(iter(self.chunks))
            recorder.content("gen_ai.output.messages", lambda: output_messages(reply))
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
            "server.address": self.server[0],
            "server.port": self.server[1],
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
        record = _ModelCall(self, prompt, stream=False)
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
        record = _ModelCall(self, prompt, stream=False)
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
    record = _ModelCall(self, prompt, stream=True)

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
