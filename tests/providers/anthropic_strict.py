"""A strict check of Messages API request bodies, for the mid-conversation tool changes.

:func:`problems` returns what Anthropic's API would answer with a 400, from the documented
shapes (the ``anthropic`` SDK's beta request types: ``BetaSystemMessageParam``,
``BetaRequestToolAdditionBlockParam``, ``BetaRequestToolRemovalBlockParam``,
``BetaToolChangeToolReferenceParam``, ``BetaToolParam``; see
``toolsearch/models/anthropic/changes.py`` for the sources and what they leave unsaid):

* a ``role: "system"`` message only with the ``mid-conversation-tool-changes-2026-07-01``
  beta in the ``anthropic-beta`` header, with at least one block, each a ``text``,
  ``tool_addition`` or ``tool_removal`` block with no other keys, and each change's
  ``tool`` exactly ``{"type": "tool_reference", "name": <a tool declared in tools>}``;
* placement: a system message is not the first entry, comes after a user turn (system
  messages in a row allowed) and before an assistant turn or at the end of ``messages``
  (the rules an open-source client records from the API's 400s);
* every role one of ``user`` / ``assistant`` / ``system``, every message exactly
  ``role`` + ``content``; client tools only with ``name``, ``description``,
  ``input_schema``, ``defer_loading``, ``cache_control``, never ``defer_loading`` with
  ``cache_control``; tool names unique; not every tool deferred (as the same client
  records); a ``tool_reference`` in a tool result names a declared tool.

A model or endpoint without the beta (``accepts_changes=False``) refuses any system-role
message or the beta header; one without tool search (``accepts_tool_search=False``)
refuses ``defer_loading`` and the server's ``tool_search_tool_*`` tools. The refusal
texts are this fake's own (the API's are not documented); each names what it refuses.
"""

from __future__ import annotations

from typing import Any

BETA = "mid-conversation-tool-changes-2026-07-01"
_CHANGE_BLOCKS = {"tool_addition", "tool_removal"}
_SYSTEM_BLOCKS = {"text", *_CHANGE_BLOCKS}
_TOOL_KEYS = {"name", "description", "input_schema", "defer_loading", "cache_control"}


def betas(headers: dict[str, str]) -> list[str]:
    value = next((v for k, v in headers.items() if k.lower() == "anthropic-beta"), "")
    return [b.strip() for b in value.split(",") if b.strip()]


def problems(
    body: dict[str, Any],
    headers: dict[str, str],
    *,
    accepts_changes: bool = True,
    accepts_tool_search: bool = True,
) -> list[str]:
    """What is wrong with a ``/v1/messages`` request (empty: nothing)."""
    found: list[str] = []
    tools = body.get("tools") or []
    declared: set[str] = set()
    for i, tool in enumerate(tools):
        kind = tool.get("type")
        if isinstance(kind, str) and kind.startswith("tool_search_tool_"):
            if not accepts_tool_search:
                found.append(f"tools.{i}: tool search is not supported for this model")
            declared.add(tool.get("name", ""))
            continue
        extra = set(tool) - _TOOL_KEYS
        if extra:
            found.append(f"tools.{i}: unknown fields {sorted(extra)}")
        if tool.get("name") in declared:
            found.append(f"tools.{i}: tool names must be unique ({tool.get('name')!r})")
        declared.add(tool.get("name", ""))
        if tool.get("defer_loading"):
            if not accepts_tool_search:
                found.append(f"tools.{i}: defer_loading is not supported for this model")
            if "cache_control" in tool:
                found.append(f"tools.{i}: a defer_loading tool cannot set cache_control")
    if tools and all(t.get("defer_loading") for t in tools):
        found.append("tools: at least one tool must not set defer_loading")
    beta = BETA in betas(headers)
    if beta and not accepts_changes:
        found.append(f"anthropic-beta: {BETA} is not supported for this model")
    messages = body.get("messages") or []
    roles = [m.get("role") for m in messages]
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        if set(message) != {"role", "content"}:
            found.append(f"{where}: a message has exactly role and content")
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            found.append(f"{where}.role: unknown role {role!r}")
            continue
        content = message.get("content")
        if role != "system":
            for j, block in enumerate(content if isinstance(content, list) else []):
                found += _reference_problems(block, declared, f"{where}.content.{j}")
            continue
        if not accepts_changes:
            found.append(f"{where}.role: 'system' messages are not supported for this model")
            continue
        if not beta:
            found.append(f"{where}.role: 'system' messages need the {BETA} beta")
        found += _placement(roles, i)
        if not isinstance(content, list) or not content:
            found.append(f"{where}.content: system content must contain at least one block")
            continue
        for j, block in enumerate(content):
            found += _change_problems(block, declared, f"{where}.content.{j}")
    return found


def _placement(roles: list[Any], i: int) -> list[str]:
    where = f"messages.{i}"
    before = next((r for r in reversed(roles[:i]) if r != "system"), None)
    after = next((r for r in roles[i + 1 :] if r != "system"), None)
    found = []
    if before is None:
        found.append(f"{where}: a system message cannot be the first message")
    elif before != "user":
        found.append(f"{where}: a system message must follow a user turn, not {before!r}")
    if after not in (None, "assistant"):
        found.append(f"{where}: a system message must precede an assistant turn or end messages")
    return found


def _change_problems(block: Any, declared: set[str], where: str) -> list[str]:
    if not isinstance(block, dict) or block.get("type") not in _SYSTEM_BLOCKS:
        kind = block.get("type") if isinstance(block, dict) else type(block).__name__
        return [f"{where}: {kind!r} is not a system message block"]
    if block["type"] == "text":
        return [] if isinstance(block.get("text"), str) and block["text"] else [f"{where}: empty"]
    extra = set(block) - {"type", "tool", "cache_control"}
    if extra:
        return [f"{where}: unknown fields {sorted(extra)}"]
    tool = block.get("tool")
    if not isinstance(tool, dict) or set(tool) != {"type", "name"}:
        return [f"{where}.tool: a tool change references one tool as {{type, name}}"]
    if tool["type"] != "tool_reference":
        return [f"{where}.tool.type: expected 'tool_reference', got {tool['type']!r}"]
    if not isinstance(tool["name"], str) or tool["name"] not in declared:
        return [f"{where}.tool.name: tool {tool['name']!r} is not declared in tools"]
    return []


def _reference_problems(block: Any, declared: set[str], where: str) -> list[str]:
    if not (isinstance(block, dict) and block.get("type") == "tool_result"):
        return []
    inner = block.get("content")
    return [
        f"{where}.content.{k}: tool_reference {ref.get('tool_name')!r} is not declared"
        for k, ref in enumerate(inner if isinstance(inner, list) else [])
        if isinstance(ref, dict)
        and ref.get("type") == "tool_reference"
        and ref.get("tool_name") not in declared
    ]
