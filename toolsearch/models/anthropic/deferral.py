"""The fallback of ``AnthropicChatModel``'s default ``tool_search="defer_loading"``.

Deferred tools and ``tool_reference`` blocks need a model and an endpoint that support
Anthropic's tool search (Claude Sonnet 4.5, Opus 4.5, Haiku 4.5 and later, on the
first-party API). Any other answers such a request with a 400. Rather than fail the
conversation, the adapter recognises that refusal (:func:`refuses_deferral`: a 400 whose
message names ``defer_loading``, ``tool_reference`` or tool search), resends the same
request without deferral (:func:`without_deferral`: every tool in full, each reference
block as the name it referenced, Anthropic's server-side tool search tool left out) and
keeps that model object on ``tool_search="none"`` and without native search, so the
refused request is not sent again on later calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["refuses_deferral", "without_deferral"]

_DEFERRAL_WORDS = re.compile(r"defer_loading|tool_reference|tool[ _-]search", re.IGNORECASE)


def refuses_deferral(exc: BaseException) -> bool:
    """Whether ``exc`` is the API's 400 refusing deferred tools or tool references."""
    status = getattr(exc, "status_code", None)
    return status == 400 and bool(_DEFERRAL_WORDS.search(str(exc)))


def _server_search(tool: Any) -> bool:
    """Whether ``tool`` is Anthropic's server-side tool search (``tool_search_tool_*``)."""
    return isinstance(tool, dict) and str(tool.get("type", "")).startswith("tool_search_tool_")


def without_deferral(arguments: dict[str, Any]) -> dict[str, Any] | None:
    """``messages.create`` arguments with every tool sent in full, the server's tool search
    tool left out (the endpoint refused tool search: it would refuse it again) and each
    ``tool_result`` made of ``tool_reference`` blocks turned into the JSON list of the
    names; ``None`` when the request defers nothing (its refusal has another cause)."""
    tools = arguments.get("tools") or []
    deferred = any(isinstance(t, dict) and t.get("defer_loading") for t in tools)
    deferred = deferred or any(_server_search(t) for t in tools)
    changed = False
    messages = []
    for message in arguments.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            blocks = [_plain_block(block) for block in content]
            changed = changed or blocks != content
            message = {**message, "content": blocks}
        messages.append(message)
    if not deferred and not changed:
        return None
    plain = {**arguments, "messages": messages}
    if tools:
        plain["tools"] = [
            {k: v for k, v in t.items() if k != "defer_loading"} if isinstance(t, dict) else t
            for t in tools
            if not _server_search(t)
        ]
        if not plain["tools"]:
            del plain["tools"]
    return plain


def _plain_block(block: Any) -> Any:
    if not (isinstance(block, dict) and block.get("type") == "tool_result"):
        return block
    inner = block.get("content")
    if not isinstance(inner, list) or not inner:
        return block
    if not all(isinstance(b, dict) and b.get("type") == "tool_reference" for b in inner):
        return block
    names = [b.get("tool_name") for b in inner]
    return {**block, "content": json.dumps(names, ensure_ascii=False)}
