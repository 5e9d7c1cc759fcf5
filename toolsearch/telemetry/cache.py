"""The per-request cache record on a model span: tokens fresh, written and read, and why
the cache missed.

The provider reports what it read (``cached_tokens``) and, where it bills writes, what it
wrote (``cache_write_tokens`` / ``cache_creation_input_tokens``, which the adapters pass in
the response's metadata); the rest of the input is fresh. The cause comes from what the
request itself says: a tool change the working set made at this request
(:class:`~toolsearch.chat.options.ToolChange` with ``after_message`` at the request's
end), a request under the model family's minimum cacheable length
(:func:`toolsearch.costs.family_of`), or nothing read at all (a new prefix, or one whose
entry expired). The same causes as the bench's cache model (:data:`toolsearch.costs.
MISS_CAUSES`), so the span, the loaded view and the bench report read alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["cache_record"]

WRITE_KEYS = ("cache_write_tokens", "cache_creation_input_tokens")
"""Where an adapter's response metadata may carry the tokens written to the cache."""


def cache_record(
    *,
    input_tokens: int,
    read: int,
    metadata: Mapping[str, Any] | None,
    tool_changes: Sequence[Any],
    messages: int,
    model: str | None,
    provider: str,
) -> dict[str, Any]:
    """The span attributes ``toolsearch.cache.*`` of one model request (empty when the
    provider reported no input tokens)."""
    if input_tokens <= 0:
        return {}
    written = 0
    for key in WRITE_KEYS:
        value = (metadata or {}).get(key)
        if isinstance(value, int) and value > 0:
            written = value
            break
    fresh = max(0, input_tokens - read - written)
    return {
        "toolsearch.cache.read_tokens": read,
        "toolsearch.cache.written_tokens": written,
        "toolsearch.cache.fresh_tokens": fresh,
        "toolsearch.cache.miss_cause": miss_cause(
            input_tokens, read, tool_changes, messages, model, provider
        ),
    }


def miss_cause(
    input_tokens: int,
    read: int,
    tool_changes: Sequence[Any],
    messages: int,
    model: str | None,
    provider: str,
) -> str | None:
    """Why this request read little or nothing from the cache (``None``: it read)."""
    from toolsearch.costs import family_of

    here = [c for c in tool_changes if getattr(c, "after_message", -1) >= messages]
    if any(getattr(c, "kind", "") == "remove" for c in here):
        return "tool removed"
    if here:
        return "tool added"
    shape = family_of(model, "anthropic" if "anthropic" in provider else "openai")
    if input_tokens < shape.minimum:
        return "under the minimum"
    if read == 0:
        return "new prefix"
    return None
