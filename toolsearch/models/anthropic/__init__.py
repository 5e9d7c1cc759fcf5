"""Anthropic's Messages API, in parts: the chat model and its request body (:mod:`.model`),
the mid-conversation tool changes beta (:mod:`.changes`), ``defer_loading`` and tool
references (:mod:`.deferral`), typed errors (:mod:`.errors`) and the answer's parsing
(:mod:`.response`). ``toolsearch.models.anthropic`` keeps the names it always had."""

from __future__ import annotations

from toolsearch.models.anthropic.model import (
    THINKING_METADATA_KEY,
    AnthropicChatModel,
    AnthropicRequestBuilder,
    anthropic_request_body,
    anthropic_tools,
    anthropic_wire_names,
)

__all__ = [
    "THINKING_METADATA_KEY",
    "AnthropicChatModel",
    "AnthropicRequestBuilder",
    "anthropic_request_body",
    "anthropic_tools",
    "anthropic_wire_names",
]
