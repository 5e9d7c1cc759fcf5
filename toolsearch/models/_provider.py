"""Plumbing the provider adapters share: SDK imports, errors, option splitting, JSON args.

Nothing here imports a provider SDK at module import time; each adapter asks
:func:`require` for its SDK when it is constructed.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from toolsearch.chat.options import ChatOptions
from toolsearch.errors import (
    MissingExtraError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
)

__all__ = [
    "RESERVED_PREFIX",
    "arguments_object",
    "dump_arguments",
    "error_for_status",
    "new_call_id",
    "provider_errors",
    "require",
    "merge_arguments",
    "body_message",
    "parameters_of",
    "transport_error",
]

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


def merge_arguments(
    arguments: dict[str, Any],
    settings: Mapping[str, Any],
    options: ChatOptions,
    accepted: frozenset[str],
) -> dict[str, Any]:
    """The SDK call's keyword arguments: ``arguments`` plus the mapped ``settings`` and
    ``options.extra`` (which wins over settings).

    Names the installed SDK method accepts become keyword arguments; the rest go into the
    request body as is (``extra_body``), so a provider's newest parameter works before the
    SDK knows it, and a parameter an SDK dropped still reaches endpoints that take it.
    ``extra`` keys starting with ``toolsearch.`` are toolsearch's own and are never sent.
    """
    merged = dict(settings)
    merged.update(
        (key, value) for key, value in options.extra.items() if not key.startswith(RESERVED_PREFIX)
    )
    body: dict[str, Any] = {}
    for key, value in merged.items():
        if key in accepted:
            arguments[key] = value
        else:
            body[key] = value
    if body:
        given = arguments.get("extra_body") or {}
        arguments["extra_body"] = {**body, **given}
    return arguments


def parameters_of(function: Callable[..., Any]) -> frozenset[str]:
    """Names of the keyword parameters of an SDK method."""
    return frozenset(inspect.signature(function).parameters)


def error_for_status(provider: str, status: int | None, message: str) -> ProviderError:
    """Our exception for an HTTP failure: 401/403 auth, 429 rate limit, else ProviderError."""
    if status in (401, 403):
        return ProviderAuthenticationError(provider, message, status_code=status)
    if status == 429:
        return ProviderRateLimitError(provider, message, status_code=status)
    return ProviderError(provider, message, status_code=status)


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


def _is_transport_error(exc: BaseException) -> bool:
    """httpx or httpx2 transport failures (timeouts, refused connections) that escaped an SDK."""
    for module in ("httpx", "httpx2"):
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(exc, loaded.TransportError):
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
        raise mapped from exc
