"""Plumbing the provider adapters share: the request/stream/async skeleton
(:class:`ProviderChatModel`, also named ``SdkChatModel``), SDK imports, errors, option
splitting, JSON args.

Nothing here imports a provider SDK at module import time; each adapter asks
:func:`require` for its SDK when it is constructed.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import logging
import re
import sys
import uuid
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from toolsearch.chat.model import BaseChatModel
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.errors import (
    MissingExtraError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
)
from toolsearch.models.wire_names import WireNames

__all__ = [
    "RESERVED_PREFIX",
    "FallsBackOnce",
    "ProviderChatModel",
    "SdkChatModel",
    "StreamFolder",
    "append_turn",
    "arguments_object",
    "dump_arguments",
    "encodable",
    "error_for_status",
    "retry_after_of",
    "retry_delay_of",
    "new_call_id",
    "provider_errors",
    "require",
    "sampling_settings",
    "sdk_arguments",
    "body_extra",
    "body_message",
    "SDK_REQUEST_OPTIONS",
    "parameters_of",
    "transport_error",
]

_log = logging.getLogger(__name__)

RESERVED_PREFIX = "toolsearch."
"""``ChatOptions.extra`` keys starting with this are read by toolsearch, never sent."""


def require(module: str, *, extra: str, feature: str, package: str | None = None) -> Any:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(feature, extra, package or module.split(".")[0]) from exc


def new_call_id(prefix: str = "call") -> str:
    """A fresh tool-call id, for providers (or compatible servers) that send none."""
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def arguments_object(text: str) -> dict[str, Any]:
    """A tool call's JSON argument text as the object providers want back in the history.

    Text that is not a JSON object (a model's malformed call, which the loop answered with
    an error) is kept under ``"arguments"`` so the history still says what was sent.
    """
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"arguments": value}


def dump_arguments(value: Any) -> str:
    """Arguments a provider gave as an object, as the JSON text ``ToolCall`` carries."""
    if value is None:
        return "{}"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


SDK_REQUEST_OPTIONS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
"""``ChatOptions.extra`` keys the OpenAI and Anthropic SDK methods take that shape the HTTP
request rather than its JSON body (``extra_body`` is merged into the body)."""


def body_extra(options: ChatOptions) -> dict[str, Any]:
    """What ``options.extra`` adds to a JSON request body: every key but toolsearch's own
    (``toolsearch.``) and the SDK's request options, then the contents of ``extra_body``
    (which win)."""
    extra = {
        key: value
        for key, value in options.extra.items()
        if not key.startswith(RESERVED_PREFIX) and key not in SDK_REQUEST_OPTIONS
    }
    extra.update(options.extra.get("extra_body") or {})
    return extra


def sdk_arguments(
    body: Mapping[str, Any], options: ChatOptions, accepted: frozenset[str]
) -> dict[str, Any]:
    """The SDK call's keyword arguments that send ``body`` as is.

    Names the installed SDK method accepts become keyword arguments; the rest go into the
    request body through ``extra_body``, so a provider's newest parameter works before the
    SDK knows it, and a parameter an SDK dropped still reaches endpoints that take it. The
    SDK's request options in ``options.extra`` (``extra_headers``, ``timeout``...) are
    passed on as given.
    """
    arguments: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in body.items():
        (arguments if key in accepted else rest)[key] = value
    for key in SDK_REQUEST_OPTIONS - {"extra_body"}:
        if key in options.extra:
            arguments[key] = options.extra[key]
    if rest:
        arguments["extra_body"] = rest
    return arguments


def append_turn(turns: list[dict[str, Any]], role: str, items: list[Any], *, key: str) -> None:
    """Add a turn of ``role`` holding ``items`` (under ``key``: ``content``, ``parts``), or
    extend the last turn when it has the same role: Anthropic and Gemini want turns to
    alternate, so the results of parallel tool calls and a following user text share one
    user turn. Empty ``items`` add nothing."""
    if not items:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1][key].extend(items)
    else:
        turns.append({"role": role, key: list(items)})


@functools.cache
def parameters_of(function: Callable[..., Any]) -> frozenset[str]:
    """Names of the keyword parameters of an SDK method (computed once per method)."""
    return frozenset(inspect.signature(function).parameters)


def sampling_settings(
    options: ChatOptions, *, stop: str, max_tokens: str | None = None
) -> dict[str, Any]:
    """The sampling options every provider has, under the provider's names: temperature,
    top_p, stop sequences (as ``stop``) and, when ``max_tokens`` names it, the answer
    budget. Unset options are left out, so the provider's defaults apply."""
    settings: dict[str, Any] = {}
    if options.temperature is not None:
        settings["temperature"] = options.temperature
    if options.top_p is not None:
        settings["top_p"] = options.top_p
    if options.stop:
        settings[stop] = list(options.stop)
    if max_tokens is not None and options.max_tokens is not None:
        settings[max_tokens] = options.max_tokens
    return settings


RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""Statuses below 500 worth retrying (timeout, lock conflict, rate limit): the statuses the
OpenAI and Anthropic SDKs retry themselves. Every 5xx is retryable too."""


def error_for_status(
    provider: str, status: int | None, message: str, *, retry_after: float | None = None
) -> ProviderError:
    """Our exception for an HTTP failure: 401/403 auth, 429 rate limit, else ProviderError;
    ``retryable`` for 5xx (and 408/409), ``retry_after`` as the provider asked."""
    if status in (401, 403):
        return ProviderAuthenticationError(provider, message, status_code=status)
    if status == 429:
        return ProviderRateLimitError(
            provider, message, status_code=status, retry_after=retry_after
        )
    retryable = status is not None and (status >= 500 or status in RETRYABLE_STATUSES)
    return ProviderError(
        provider, message, status_code=status, retryable=retryable, retry_after=retry_after
    )


def retry_after_of(headers: Any) -> float | None:
    """The seconds a response asks to wait: ``retry-after-ms`` (OpenAI, Anthropic) or
    ``Retry-After`` as seconds or an HTTP date; ``None`` when absent or unreadable."""
    if headers is None:
        return None
    try:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            return max(0.0, float(milliseconds) / 1000)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    import email.utils
    import time

    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_delay_of(details: Any) -> float | None:
    """Google's ``RetryInfo.retryDelay`` (``"30s"``, ``"1.5s"``) in an error body's
    ``details``, in seconds; ``None`` when there is none."""
    found = details.get("error", details) if isinstance(details, Mapping) else None
    entries = found.get("details") if isinstance(found, Mapping) else None
    for entry in entries if isinstance(entries, list) else ():
        delay = entry.get("retryDelay") if isinstance(entry, Mapping) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return max(0.0, float(delay[:-1]))
            except ValueError:
                return None
    return None


def transport_error(provider: str, exc: BaseException) -> ProviderConnectionError:
    return ProviderConnectionError(provider, str(exc) or type(exc).__name__)


def body_message(body: Any, fallback: str) -> str:
    """The human message inside a provider's error body (``{"error": {"message": ...}}``)."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    if isinstance(body, str) and body:
        return body
    return fallback


_TRANSPORT_ERRORS = (
    ("httpx", "TransportError"),
    ("httpx2", "TransportError"),
    ("aiohttp", "ClientConnectionError"),  # google-genai's async client when installed
)


def _is_transport_error(exc: BaseException) -> bool:
    """HTTP-library failures (timeouts, refused connections) that escaped an SDK. Only
    libraries already imported are checked: none is imported here."""
    for module, name in _TRANSPORT_ERRORS:
        kind = getattr(sys.modules.get(module), name, None)
        if isinstance(kind, type) and isinstance(exc, kind):
            return True
    return False


@contextmanager
def provider_errors(
    provider: str, translate: Callable[[Exception], ProviderError | None]
) -> Iterator[None]:
    """Turn SDK (and transport) exceptions raised inside the block into our error types.

    ``translate`` maps an SDK exception to a :class:`ProviderError`, or returns ``None`` to
    let it through unchanged.
    """
    try:
        yield
    except ProviderError:
        raise
    except Exception as exc:
        mapped = translate(exc)
        if mapped is None and _is_transport_error(exc):
            mapped = transport_error(provider, exc)
        if mapped is None:
            raise
        _log.debug("%s request failed: %s (%s)", provider, type(mapped).__name__, exc)
        raise mapped from exc


# -- the adapters' common skeleton ------------------------------------------------------------


class StreamFolder(Protocol):
    """Folds a provider's stream chunks into our chunks: ``feed`` returns what can be handed
    on at once (text, whole tool calls), ``finish`` the last chunk (finish reason, usage)."""

    def feed(self, chunk: Any) -> ChatResponse | None: ...

    def finish(self) -> ChatResponse: ...


class ProviderChatModel(BaseChatModel):
    """``call``/``stream``/``acall``/``astream`` over an SDK, the same for every provider:
    the base class of every provider adapter (public as ``toolsearch.models.
    ProviderChatModel``; an adapter of your own subclasses it, and a row in
    :data:`toolsearch.models.providers.PROVIDERS` makes it known by name).

    A subclass says how to build the request and its tool names on the wire
    (:meth:`_request`), send it (:meth:`_send` / :meth:`_asend`), read the answer
    (:meth:`_response`), fold a stream (:meth:`_stream_folder`) and map the SDK's
    exceptions (:meth:`_translate`); the request's :class:`WireNames` go to the answer's
    reader, which gives the model's calls the tools' own names back. Every SDK
    call, stream iteration included, runs inside :func:`provider_errors`, and a stream is
    closed (its HTTP response released) even when the caller stops reading early.

    When the user injected only a sync client (``sync_only``), the async methods run the
    sync ones in a worker thread instead of building an async client they did not ask for.
    """

    provider: str = "provider"

    def __init__(self, *, options: ChatOptions | None, sync_only: bool = False) -> None:
        super().__init__(default_options=options)
        self._sync_only = sync_only

    def _lazy_client(self, attribute: str, build: Callable[[], Any]) -> Any:
        """``self.<attribute>``, built on first use (so constructing a model needs no key);
        a failure to build it (no key configured) is one of our errors."""
        client = getattr(self, attribute)
        if client is None:
            with provider_errors(self.provider, self._translate):
                client = build()
            setattr(self, attribute, client)
        return client

    @abstractmethod
    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireNames]:
        """The SDK call's keyword arguments for ``prompt``, and the request's tool names."""

    def request_arguments(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The SDK call's keyword arguments for ``prompt``."""
        return self._prepared(prompt, stream=stream)[0]

    def _prepared(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireNames]:
        """:meth:`_request` with every lone surrogate replaced (:func:`encodable`): the
        SDKs encode their JSON bodies as UTF-8, which a lone surrogate (from a user's text,
        a tool's description, a model's or a tool's output) makes raise a bare
        ``UnicodeEncodeError`` before anything is sent."""
        arguments, names = self._request(prompt, stream=stream)
        return encodable(arguments), names

    @abstractmethod
    def _send(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        """Make the SDK call: an answer, or an iterable of stream chunks."""

    @abstractmethod
    async def _asend(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        """Make the async SDK call: an answer, or an async iterable of stream chunks."""

    @abstractmethod
    def _response(self, answer: Any, names: WireNames) -> ChatResponse: ...

    @abstractmethod
    def _stream_folder(self, names: WireNames) -> StreamFolder: ...

    @abstractmethod
    def _translate(self, exc: Exception) -> ProviderError | None: ...

    def call(self, prompt: Prompt) -> ChatResponse:
        arguments, names = self._prepared(prompt, stream=False)
        _log_request(self.provider, arguments, stream=False)
        with provider_errors(self.provider, self._translate):
            answer = self._send(arguments, stream=False)
        return self._response(answer, names)

    def stream(self, prompt: Prompt) -> Iterator[ChatResponse]:
        arguments, names = self._prepared(prompt, stream=True)
        _log_request(self.provider, arguments, stream=True)
        folder = self._stream_folder(names)
        with provider_errors(self.provider, self._translate):
            chunks = self._send(arguments, stream=True)
            try:
                for chunk in chunks:
                    piece = folder.feed(chunk)
                    if piece is not None:
                        yield piece
            finally:
                _close(chunks)
        yield folder.finish()

    async def acall(self, prompt: Prompt) -> ChatResponse:
        if self._sync_only:
            return await super().acall(prompt)
        arguments, names = self._prepared(prompt, stream=False)
        _log_request(self.provider, arguments, stream=False)
        with provider_errors(self.provider, self._translate):
            answer = await self._asend(arguments, stream=False)
        return self._response(answer, names)

    async def astream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        if self._sync_only:
            async for response in super().astream(prompt):
                yield response
            return
        arguments, names = self._prepared(prompt, stream=True)
        _log_request(self.provider, arguments, stream=True)
        folder = self._stream_folder(names)
        with provider_errors(self.provider, self._translate):
            chunks = await self._asend(arguments, stream=True)
            try:
                async for chunk in chunks:
                    piece = folder.feed(chunk)
                    if piece is not None:
                        yield piece
            finally:
                await _aclose(chunks)
        yield folder.finish()


SdkChatModel = ProviderChatModel
"""The name the adapters in this package use (the same class)."""


class FallsBackOnce(ProviderChatModel):
    """An adapter that answers one kind of refusal by resending the request in a plainer
    form: when a call, or a stream before its first chunk, raises a ``ProviderError`` that
    :meth:`_falls_back` accepts (it also switches the adapter to the plainer form), the
    same request is sent once more. Written once for the Anthropic beta and deferral
    fallbacks and the Responses API's refused native search."""

    def _falls_back(self, exc: ProviderError, prompt: Prompt) -> bool:
        """Whether ``exc`` is a refusal to answer by resending (after switching)."""
        return False

    def call(self, prompt: Prompt) -> ChatResponse:
        try:
            return super().call(prompt)
        except ProviderError as exc:
            if not self._falls_back(exc, prompt):
                raise
            return super().call(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        try:
            return await super().acall(prompt)
        except ProviderError as exc:
            if not self._falls_back(exc, prompt):
                raise
            return await super().acall(prompt)

    def stream(self, prompt: Prompt) -> Iterator[ChatResponse]:
        started = False
        try:
            for chunk in super().stream(prompt):
                started = True
                yield chunk
        except ProviderError as exc:
            if started or not self._falls_back(exc, prompt):
                raise
            yield from super().stream(prompt)

    async def astream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        started = False
        try:
            async for chunk in super().astream(prompt):
                started = True
                yield chunk
        except ProviderError as exc:
            if started or not self._falls_back(exc, prompt):
                raise
            async for chunk in super().astream(prompt):
                yield chunk


def encodable(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings and keys (nested in dicts, lists
    and tuples) replaced by U+FFFD, so that it encodes as UTF-8; unchanged parts are the
    same objects (nothing is copied for a body without one)."""
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return _SURROGATES.sub("\ufffd", value)
        return value
    if isinstance(value, dict):
        pairs = [(encodable(k), encodable(v)) for k, v in value.items()]
        if all(k is a and v is b for (k, v), (a, b) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if isinstance(value, list | tuple):
        items = [encodable(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    return value


_SURROGATES = re.compile("[\ud800-\udfff]")


def _log_request(provider: str, arguments: Mapping[str, Any], *, stream: bool) -> None:
    """Debug: one line per provider request (model, tool count; never the content)."""
    if _log.isEnabledFor(logging.DEBUG):
        tools = arguments.get("tools")
        count = len(tools) if isinstance(tools, list) else None
        _log.debug(
            "%s request: model %s, stream %s, %s tools",
            provider,
            arguments.get("model"),
            stream,
            "?" if count is None else count,
        )


def _close(chunks: Any) -> None:
    """Release a sync stream (SDK ``Stream.close`` or a generator's ``close``)."""
    close = getattr(chunks, "close", None)
    if callable(close):
        close()


async def _aclose(chunks: Any) -> None:
    """Release an async stream (SDK ``AsyncStream.close`` or an async generator's
    ``aclose``)."""
    close = getattr(chunks, "aclose", None) or getattr(chunks, "close", None)
    if callable(close):
        result = close()
        if inspect.isawaitable(result):
            await result
