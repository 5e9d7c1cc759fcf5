"""Anthropic's errors as toolsearch's: the SDK's exceptions, and an error event inside a
stream (which arrives on a 200 response and says by its type which error it is)."""

from __future__ import annotations

from collections.abc import Mapping

from toolsearch.errors import ProviderAuthenticationError, ProviderError
from toolsearch.models._provider import (
    body_message,
    error_for_status,
    retry_after_of,
    transport_error,
)

__all__ = ["translate_anthropic_error"]

PROVIDER = "anthropic"


_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
"""HTTP status of each documented error type: an error event inside a stream arrives on a
200 response, and its type is what says which of our exceptions it is."""


def translate_anthropic_error(exc: Exception) -> ProviderError | None:
    """``exc`` (from the ``anthropic`` SDK) as one of our errors; ``None``: not the SDK's."""
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):  # includes timeouts
        return transport_error(PROVIDER, exc)
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        body = exc.body
        if status < 400 and isinstance(body, Mapping):
            inner = body.get("error", body)
            kind = inner.get("type") if isinstance(inner, Mapping) else None
            status = _ERROR_STATUS.get(str(kind), 500)
        return error_for_status(
            PROVIDER,
            status,
            body_message(body, exc.message),
            retry_after=retry_after_of(getattr(exc.response, "headers", None)),
        )
    if isinstance(exc, anthropic.AnthropicError):
        return ProviderError(PROVIDER, str(exc))
    if isinstance(exc, TypeError) and "authentication method" in str(exc):
        # the SDK raises a bare TypeError, at request time, when no key is configured
        return ProviderAuthenticationError(PROVIDER, str(exc))
    return None
