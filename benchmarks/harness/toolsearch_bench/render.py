"""Requests as the library sends them, for token accounting.

Each provider's request body is built by that provider's adapter mapping, the same
function the adapter uses to send it: :func:`~toolsearch.models.openai.openai_request_body`
(chat completions), :func:`~toolsearch.models.anthropic.anthropic_request_body` (Messages
API) and :func:`~toolsearch.models.gemini.gemini_request_body` (``generateContent``). These
are pure functions: no provider SDK is needed to call them, so the benchmark runs with the
``bench`` extra alone.

What is counted is the part of the body the model reads as its prompt: the conversation
(system prompt, history, tool results) and the tool definitions. Request settings in the
same body (``model``, ``max_tokens``, ``stream``, ``generationConfig``) are left out; the
providers do not bill them as prompt tokens. :func:`count_request` counts the compact JSON
of the two parts separately.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from toolsearch.chat.prompt import Prompt
from toolsearch.models.anthropic import anthropic_request_body
from toolsearch.models.gemini import gemini_request_body
from toolsearch.models.openai import openai_request_body
from toolsearch.models.openai_responses import openai_responses_request_body
from toolsearch.tokens import TokenCounter

__all__ = [
    "CONVERSATION_DEPENDENT_TOOLS",
    "INJECTIONS",
    "PROMPT_KEYS",
    "PROVIDERS",
    "REQUEST_SHAPES",
    "RequestTokens",
    "adapter_request_body",
    "count_request",
    "prompt_body",
    "render_request",
]

Provider = Literal[
    "openai",
    "openai-results",
    "openai-responses",
    "anthropic",
    "anthropic-defer",
    "anthropic-changes",
    "gemini",
]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "gemini")
"""The providers, each rendered by its adapter with its default settings, except that
``anthropic`` is the adapter with ``tool_search="none"`` and ``tool_changes=False`` (every
tool in full; its default since issue 31 is ``anthropic-defer``). The Anthropic shapes
other than ``anthropic-changes`` leave ``ChatOptions.tool_changes`` out, so each shape
measures one way of carrying a discovery: the tools array (``anthropic``), ``tool_reference``
blocks (``anthropic-defer``), ``tool_addition`` blocks (``anthropic-changes``)."""
REQUEST_SHAPES: tuple[Provider, ...] = (
    *PROVIDERS,
    "anthropic-defer",
    "anthropic-changes",
    "openai-results",
    "openai-responses",
)
"""The request shapes the bench counts: the providers; ``anthropic-defer``, the
Anthropic adapter with ``tool_search="defer_loading"`` (search results as
``tool_reference`` blocks, the tools they name deferred); and ``openai-results``, the
OpenAI adapter with the advisor's ``injection="results"`` (a fixed tool list, search
results carrying the definitions, calls through the call tool); ``openai-responses``, the
Responses API adapter with its default client-executed ``tool_search`` (discovered
definitions in ``tool_search_output`` items, the tools list fixed); ``anthropic-changes``,
the Anthropic adapter with ``tool_search="none"`` and its ``mid-conversation-tool-changes``
beta (the working set's ``ChatOptions.tool_changes`` as system-role messages of
``tool_addition`` / ``tool_removal`` blocks, the tools they add declared deferred)."""

INJECTIONS: dict[Provider, str] = {"openai-results": "results"}
"""The advisor's ``injection`` a request shape runs with (``"tools"`` when not listed)."""

CONVERSATION_DEPENDENT_TOOLS: frozenset[Provider] = frozenset(
    {"anthropic-defer", "anthropic-changes", "openai-responses"}
)
"""Shapes whose rendered tools depend on the conversation (deferred or carried tools)."""

PROMPT_KEYS: dict[Provider, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "openai": (("messages",), ("tools",)),
    "openai-results": (("messages",), ("tools",)),
    "openai-responses": (("input",), ("tools",)),
    "anthropic": (("system", "messages"), ("tools",)),
    "anthropic-defer": (("system", "messages"), ("tools",)),
    "anthropic-changes": (("system", "messages"), ("tools",)),
    "gemini": (("systemInstruction", "contents"), ("tools",)),
}
"""Per provider, the body keys counted as the conversation and as the tool definitions."""

_MODEL = "bench"
"""The model name the bodies are built with; it is a setting, never counted."""


@dataclass(frozen=True)
class RequestTokens:
    """Tokens of one rendered request: tool definitions and everything else."""

    definitions: int
    conversation: int

    @property
    def total(self) -> int:
        return self.definitions + self.conversation


def adapter_request_body(prompt: Prompt, provider: Provider) -> dict[str, Any]:
    """The whole JSON body the ``provider`` adapter (with its default settings) sends for
    ``prompt``, settings included."""
    if provider in ("openai", "openai-results"):
        return openai_request_body(prompt, model=_MODEL)
    if provider == "openai-responses":
        return openai_responses_request_body(prompt, model=_MODEL)
    if provider == "anthropic":
        return anthropic_request_body(prompt, model=_MODEL, tool_search="none", tool_changes=False)
    if provider == "anthropic-defer":
        return anthropic_request_body(
            prompt, model=_MODEL, tool_search="defer_loading", tool_changes=False
        )
    if provider == "anthropic-changes":
        return anthropic_request_body(prompt, model=_MODEL, tool_search="none", tool_changes=True)
    if provider == "gemini":
        return gemini_request_body(prompt)
    raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")


def prompt_body(prompt: Prompt, provider: Provider) -> dict[str, Any]:
    """The adapter's body as the model reads it. For ``anthropic-defer``: deferred tools
    are not in the prompt, and each ``tool_reference`` block carries the definition it
    names (Anthropic expands it where the reference sits), so both are counted where
    they are read. For ``anthropic-changes`` likewise: a deferred tool is read where a
    ``tool_addition`` block adds it (the block's ``tool`` reference carries its
    definition), and a ``tool_removal`` block costs its own tokens only. On
    ``anthropic-defer``, where the adapter renders both, a tool a search result names and
    a change adds is counted at both places (whether the API expands it twice is not
    documented; counted twice, the search loop is billed at most, never less)."""
    body = adapter_request_body(prompt, provider)
    if provider not in ("anthropic-defer", "anthropic-changes"):
        return body
    tools = body.get("tools") or []
    deferred = {t["name"]: t for t in tools if t.get("defer_loading")}
    body = {**body, "tools": [t for t in tools if not t.get("defer_loading")]}
    body["messages"] = [_expanded(message, deferred) for message in body.get("messages") or ()]
    return body


def _expanded(message: dict[str, Any], deferred: dict[str, dict[str, Any]]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                block = {**block, "content": [_reference(b, deferred) for b in inner]}
        blocks.append(_reference(block, deferred))
    return {**message, "content": blocks}


def _reference(block: Any, deferred: dict[str, dict[str, Any]]) -> Any:
    if isinstance(block, dict) and block.get("type") == "tool_addition":
        tool = block.get("tool")
        if not isinstance(tool, dict) or tool.get("name") not in deferred:
            return block
        added = {k: v for k, v in deferred[tool["name"]].items() if k != "defer_loading"}
        return {**block, "tool": {**tool, "definition": added}}
    if not (isinstance(block, dict) and block.get("type") == "tool_reference"):
        return block
    definition = deferred.get(block.get("tool_name", ""))
    if definition is None:
        return block
    loaded = {k: v for k, v in definition.items() if k != "defer_loading"}
    return {**block, "definition": loaded}


def _parts(prompt: Prompt, provider: Provider) -> tuple[dict[str, Any], dict[str, Any]]:
    """The counted parts of the adapter's body: (conversation, tool definitions)."""
    body = prompt_body(prompt, provider)
    conversation_keys, tool_keys = PROMPT_KEYS[provider]
    return (
        {key: body[key] for key in conversation_keys if key in body},
        {key: body[key] for key in tool_keys if key in body},
    )


def render_request(prompt: Prompt, provider: Provider) -> dict[str, Any]:
    """The part of the JSON body ``provider`` receives for ``prompt`` that is counted: the
    conversation and the tool definitions, exactly as the adapter sends them."""
    conversation, tools = _parts(prompt, provider)
    return {**conversation, **tools}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def count_request(
    prompt: Prompt,
    provider: Provider,
    counter: TokenCounter | Callable[[str], int],
    *,
    cache: dict[Any, int] | None = None,
) -> RequestTokens:
    """Tokens of ``prompt`` as ``provider`` receives it, split into definitions and the rest.

    ``cache`` (any dict the caller keeps) remembers definition counts per tool list, since
    a loop resends the same definitions on every iteration.
    """
    count = counter.count if hasattr(counter, "count") else counter
    key = (provider, tuple(t.fingerprint for t in prompt.tool_definitions))
    if provider in CONVERSATION_DEPENDENT_TOOLS:
        cache = None  # what is deferred depends on the conversation, not the tool list
    if cache is not None and key in cache:
        conversation_part = _parts(
            prompt.with_options(prompt.options.replace(tool_callbacks=())), provider
        )[0]
        return RequestTokens(cache[key], count(_compact(conversation_part)))
    conversation, tools = _parts(prompt, provider)
    definitions = count(_compact(tools)) if tools else 0
    if cache is not None:
        cache[key] = definitions
    return RequestTokens(definitions=definitions, conversation=count(_compact(conversation)))
