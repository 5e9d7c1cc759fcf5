"""Anthropic's beta ``mid-conversation-tool-changes-2026-07-01``: the working set's
additions and removals (:class:`~toolsearch.chat.ToolChange`) as ``role: "system"``
messages of ``tool_addition`` / ``tool_removal`` blocks, so a change never touches the
``tools`` array or the ``system`` prompt and the cached prefix before it keeps hitting.

The shapes, as documented (sources read for this module):

* The ``anthropic`` SDK's request types (2.17.0): ``BetaSystemMessageParam``
  (``{"role": "system", "content": [blocks]}``, a ``messages`` entry beside ``user`` and
  ``assistant``), ``BetaRequestToolAdditionBlockParam`` (``{"type": "tool_addition",
  "tool": ...}``: "a reference to a tool declared in the request's ``tools``", offered to
  the model "from this point in the conversation onward"),
  ``BetaRequestToolRemovalBlockParam`` (``{"type": "tool_removal", "tool": ...}``: "no
  longer offered to the model from this point"), both with an optional ``cache_control``,
  and ``BetaToolChangeToolReferenceParam`` (``{"type": "tool_reference", "name": ...}``:
  the name the model calls the tool by; note ``name``, where a tool-search result's
  ``tool_reference`` block says ``tool_name``). ``AnthropicBetaParam`` lists
  ``"mid-conversation-tool-changes-2026-07-01"``, sent in the ``anthropic-beta`` header.
* Anthropic's page "Mid-conversation system messages and tool changes"
  (platform.claude.com/docs/.../build-with-claude/mid-conversation-system-messages; the
  stored copies read here are its translations): a system-role message placed where the
  change applies keeps the cached prefix; available on the Claude API, Bedrock and
  Google Cloud, on listed models only (others refuse it).
* Amazon Bedrock's Converse API has the same blocks (``ToolAdditionBlock`` /
  ``ToolRemovalBlock``: "each block references a single tool via its ``tool`` field. Use
  within a ``system`` role message"), so one block per tool.

Where the documents read here are silent, this module chooses, and says so:

* Placement. The API's 400s, as one open-source client records them (not Anthropic's own
  text): a system message is not the first entry, follows a user turn (not an assistant
  turn), and is followed by an assistant turn or ends ``messages``. A change is therefore
  rendered right before the first assistant turn at or after its ``after_message`` (or at
  the end): a removal never sits between an assistant's ``tool_use`` and its results, and
  a change lands at the same place in every later request, so the history stays a prefix.
* One system message per :class:`ToolChange` (two in a row are accepted, per the same
  client), so a later change never rewrites an earlier one.
* Which tools are deferred: every tool whose first change is an addition is declared with
  ``defer_loading: true`` (its definition is then outside the rendered prefix until its
  ``tool_addition`` block); a tool whose first change is a removal was held from the start
  and keeps its declaration as it was. Whether ``tool_addition`` requires
  ``defer_loading`` on its tool is not stated in what was read; declaring them deferred is
  what keeps the prefix, so it is done either way.
* The refusal. A model or endpoint without the beta answers 400; its message is not
  documented. :func:`refuses_tool_changes` reads a 400 whose message names the beta, a
  change block, a message's ``role`` or ``"system"`` as that refusal (so does a refused
  ``defer_loading`` on such a request); the adapter then resends without
  the changes once and keeps that model object off the beta.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from typing import Any

from toolsearch.chat.messages import AssistantMessage, Message
from toolsearch.chat.options import ToolChange

__all__ = [
    "TOOL_CHANGES_BETA",
    "first_changes",
    "insert_tool_changes",
    "refuses_tool_changes",
    "tool_change_message",
    "with_beta_header",
    "without_referenced_additions",
]

TOOL_CHANGES_BETA = "mid-conversation-tool-changes-2026-07-01"
"""The ``anthropic-beta`` value that enables ``tool_addition`` / ``tool_removal`` blocks."""

_BLOCK = {"add": "tool_addition", "remove": "tool_removal"}

_REFUSAL_WORDS = re.compile(
    r"tool_addition|tool_removal|mid[- ]conversation|anthropic-beta|"
    r"messages\.\d+\.role|\brole\b|'system'|\"system\"",
    re.IGNORECASE,
)


def first_changes(changes: Sequence[ToolChange]) -> dict[str, str]:
    """Each changed tool's first change kind (``"add"`` or ``"remove"``), by tool name."""
    first: dict[str, str] = {}
    for change in changes:
        for name in change.names:
            first.setdefault(name, change.kind)
    return first


def tool_change_message(change: ToolChange, wire: Callable[[str], str]) -> dict[str, Any]:
    """``change`` as one system-role message: one block per tool, under its wire name."""
    return {
        "role": "system",
        "content": [
            {"type": _BLOCK[change.kind], "tool": {"type": "tool_reference", "name": wire(n)}}
            for n in change.names
        ],
    }


def without_referenced_additions(
    changes: Sequence[ToolChange], referenced: Set[str]
) -> list[ToolChange]:
    """``changes`` without the additions a rendered ``tool_reference`` already makes (in
    defer-loading mode a search result's references load the tools it names, so a
    ``tool_addition`` for them would say it twice); an addition after a removal of the
    same tool stays, since the removal unloaded it."""
    removed: set[str] = set()
    out: list[ToolChange] = []
    for change in changes:
        if change.kind == "remove":
            removed.update(change.names)
            out.append(change)
            continue
        names = tuple(n for n in change.names if n in removed or n not in referenced)
        if names:
            out.append(ToolChange("add", names, change.after_message))
    return out


def insert_tool_changes(
    messages: Sequence[Message],
    turns: list[dict[str, Any]],
    turn_of: Mapping[int, int],
    changes: Sequence[ToolChange],
    wire: Callable[[str], str],
) -> list[dict[str, Any]]:
    """``turns`` (the rendered ``messages`` of ``messages``) with each change's system
    message inserted right before the first assistant turn at or after its
    ``after_message``, or at the end; ``turn_of`` maps an assistant message's index in
    ``messages`` to its turn's index in ``turns``. Changes at one place keep their order."""
    before: dict[int, list[dict[str, Any]]] = {}
    for change in changes:
        if not change.names:
            continue  # the API refuses a system message without blocks
        at = next(
            (
                turn_of[i]
                for i in range(change.after_message, len(messages))
                if isinstance(messages[i], AssistantMessage) and i in turn_of
            ),
            len(turns),
        )
        before.setdefault(at, []).append(tool_change_message(change, wire))
    out: list[dict[str, Any]] = []
    for index in range(len(turns) + 1):
        out.extend(before.get(index, ()))
        if index < len(turns):
            out.append(turns[index])
    return out


def refuses_tool_changes(exc: BaseException) -> bool:
    """Whether ``exc`` is a 400 refusing the beta or its system-role change messages."""
    status = getattr(exc, "status_code", None)
    return status == 400 and bool(_REFUSAL_WORDS.search(str(exc)))


def with_beta_header(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """``extra_headers`` with :data:`TOOL_CHANGES_BETA` added to any ``anthropic-beta``
    value already there (comma-separated, as the API reads several betas)."""
    headers = dict(extra or {})
    key = next((k for k in headers if k.lower() == "anthropic-beta"), "anthropic-beta")
    present = [b.strip() for b in str(headers.get(key) or "").split(",") if b.strip()]
    if TOOL_CHANGES_BETA not in present:
        present.append(TOOL_CHANGES_BETA)
    headers[key] = ",".join(present)
    return headers
