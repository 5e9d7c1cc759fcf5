"""What a request costs with the provider's prompt cache on: the library's cost model
(:mod:`toolsearch.costs`, the one the working set's policy uses at run time), fed the
adapters' real request bodies.

This module only turns a provider's request body into :class:`~toolsearch.costs.Block`
objects in the provider's render order (:func:`request_blocks`); the shapes, prices,
minimums, TTLs, traffic and the cache itself are :mod:`toolsearch.costs`'s, re-exported
here under their old names.
"""

from __future__ import annotations

from typing import Any

from toolsearch.costs import (
    CACHE_SHAPES,
    MODEL_FAMILIES,
    TRAFFIC,
    Block,
    CachedRequest,
    CacheShape,
    PromptCache,
    Traffic,
    cache_shape,
)

__all__ = [
    "CACHE_SHAPES",
    "MODEL_FAMILIES",
    "TRAFFIC",
    "Block",
    "CacheShape",
    "CachedRequest",
    "PromptCache",
    "Traffic",
    "cache_shape",
    "request_blocks",
]


def request_blocks(
    body: dict[str, Any], provider: str, count: Any, tools: list[Block] | None = None
) -> tuple[list[Block], list[int]]:
    """A provider's request body as blocks in its render order, and the block indices where
    the Anthropic adapter's ``cache_prompt`` breakpoints fall (end of the tools, of the
    system prompt and of the last message). ``count(text)`` counts a block's tokens;
    ``tools``: the tool blocks already rendered (the body's ``tools`` are then ignored)."""
    import json

    def block(value: Any, kind: str = "message") -> Block:
        key = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
        return Block(key, count(key), kind)

    if tools is None:
        tools = [block(tool, "tool") for tool in body.get("tools") or ()]
    if provider.startswith("anthropic"):
        system = [block(body["system"], "system")] if body.get("system") else []
        messages = [block(message) for message in body.get("messages") or ()]
    elif provider == "gemini":
        system = (
            [block(body["systemInstruction"], "system")] if body.get("systemInstruction") else []
        )
        messages = [block(content) for content in body.get("contents") or ()]
    else:  # OpenAI chat completions and responses: the system prompt is the first message
        system = []
        messages = [
            block(message, "system" if _is_system(message) else "message")
            for message in body.get("messages") or body.get("input") or ()
        ]
    blocks = [*tools, *system, *messages]
    breakpoints = []
    if tools:
        breakpoints.append(len(tools) - 1)
    if system:
        breakpoints.append(len(tools) + len(system) - 1)
    if messages:
        breakpoints.append(len(blocks) - 1)
    return blocks, breakpoints


def _is_system(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") in ("system", "developer")
