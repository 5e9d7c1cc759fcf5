"""Requests rendered the way each provider receives them, for token accounting.

Each renderer turns a :class:`~toolsearch.chat.prompt.Prompt` (messages and the tools it
sends) into the JSON body of one API request: OpenAI chat completions (``messages`` +
``tools``), Anthropic messages (``system`` + ``messages`` + ``tools``), Gemini
``generateContent`` (``system_instruction`` + ``contents`` + ``tools.function_declarations``).
:func:`count_request` counts the tokens of the compact JSON of the two parts separately:
tool definitions, and the conversation (system, history, tool results).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.prompt import Prompt
from toolsearch.tokens import TokenCounter
from toolsearch.tools.definition import ToolDefinition

__all__ = ["PROVIDERS", "RequestTokens", "count_request", "render_request"]

Provider = Literal["openai", "anthropic", "gemini"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "gemini")


@dataclass(frozen=True)
class RequestTokens:
    """Tokens of one rendered request: tool definitions and everything else."""

    definitions: int
    conversation: int

    @property
    def total(self) -> int:
        return self.definitions + self.conversation


def _arguments(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError:
        return text


# -- OpenAI chat completions ------------------------------------------------------------


def _openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ToolResponseMessage):
            out.extend(
                {"role": "tool", "tool_call_id": r.id, "content": r.response_data}
                for r in message.responses
            )
    return out


def _openai_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.input_schema),
            },
        }
        for t in tools
    ]


# -- Anthropic messages -------------------------------------------------------------------


def _anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    system = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": [{"type": "text", "text": message.content}]})
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _arguments(c.arguments)}
                for c in message.tool_calls
            )
            out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResponseMessage):
            out.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": r.id, "content": r.response_data}
                        for r in message.responses
                    ],
                }
            )
    return system, out


def _anthropic_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in tools
    ]


# -- Gemini generateContent ---------------------------------------------------------------

_GEMINI_DROPPED_KEYS = frozenset({"additionalProperties", "$defs", "definitions", "$schema"})


def _gemini_schema(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """Gemini takes an OpenAPI subset: local ``$ref``s inlined, unsupported keys dropped."""
    if isinstance(schema, list):
        return [_gemini_schema(item, root, depth) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and depth < 8:
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return _gemini_schema(target, root, depth + 1)
    return {
        key: _gemini_schema(value, root, depth)
        for key, value in schema.items()
        if key not in _GEMINI_DROPPED_KEYS
    }


def _gemini_contents(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    system = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "parts": [{"text": message.content}]})
        elif isinstance(message, AssistantMessage):
            parts: list[dict[str, Any]] = []
            if message.content:
                parts.append({"text": message.content})
            parts.extend(
                {"functionCall": {"name": c.name, "args": _arguments(c.arguments)}}
                for c in message.tool_calls
            )
            out.append({"role": "model", "parts": parts})
        elif isinstance(message, ToolResponseMessage):
            out.append(
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": r.name,
                                "response": {"result": r.response_data},
                            }
                        }
                        for r in message.responses
                    ],
                }
            )
    return system, out


def _gemini_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    if not tools:
        return []
    declarations = []
    for t in tools:
        declaration: dict[str, Any] = {"name": t.name, "description": t.description}
        if t.input_schema.get("properties"):
            declaration["parameters"] = _gemini_schema(t.input_schema, t.input_schema)
        declarations.append(declaration)
    return [{"function_declarations": declarations}]


# -- public API -----------------------------------------------------------------------------


def _parts(prompt: Prompt, provider: Provider) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request body split into (conversation part, tools part)."""
    messages = list(prompt.messages)
    tools = prompt.tool_definitions
    if provider == "openai":
        return {"messages": _openai_messages(messages)}, (
            {"tools": _openai_tools(tools)} if tools else {}
        )
    if provider == "anthropic":
        system, converted = _anthropic_messages(messages)
        conversation: dict[str, Any] = {"system": system} if system else {}
        conversation["messages"] = converted
        return conversation, ({"tools": _anthropic_tools(tools)} if tools else {})
    if provider == "gemini":
        system, contents = _gemini_contents(messages)
        conversation = {"system_instruction": {"parts": [{"text": system}]}} if system else {}
        conversation["contents"] = contents
        return conversation, ({"tools": _gemini_tools(tools)} if tools else {})
    raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")


def render_request(prompt: Prompt, provider: Provider) -> dict[str, Any]:
    """The JSON body ``provider`` would receive for ``prompt``."""
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
