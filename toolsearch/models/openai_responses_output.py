"""The Responses API's answers as toolsearch responses: output items (text, function calls,
client tool-search calls, the server's search items kept for the next request), usage and
status, whole or folded from a stream of events; and the request's names
(:class:`ResponsesNames`) both directions share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolsearch.chat.messages import AssistantMessage, ToolCall
from toolsearch.chat.response import ChatResponse, FinishReason, Usage
from toolsearch.errors import ProviderError
from toolsearch.models._provider import new_call_id
from toolsearch.models.answer_fields import AnswerFields, is_object
from toolsearch.models.wire_names import OPENAI_NAMES, WireNames

__all__ = [
    "ITEMS_METADATA_KEY",
    "ResponsesNames",
    "ResponsesStreamState",
    "response_from_responses",
    "usage_from_responses",
]

PROVIDER = "openai-responses"

ITEMS_METADATA_KEY = "openai_responses_items"
"""``AssistantMessage.metadata`` key of output items sent back as they came (the server's
tool-search items in ``"hosted"`` mode)."""

_ECHOED_FIELDS = {
    "tool_search_call": ("type", "id", "call_id", "execution", "status", "arguments"),
    "tool_search_output": ("type", "id", "call_id", "execution", "status", "tools"),
}
"""The output items kept for the next request, with the fields their input form takes."""


class ResponsesNames(WireNames):
    """A request's wire names, and the name of its search tool (``None``: none sent as
    OpenAI's ``tool_search``), which the model's ``tool_search_call`` items are calls of;
    ``namespaces``: found tools go in a ``namespace`` per category."""

    def __init__(
        self, names: Sequence[str], search_tool: str | None, *, namespaces: bool = True
    ) -> None:
        super().__init__(OPENAI_NAMES, names)
        self.search_tool = search_tool
        self.namespaces = namespaces
        self.carried_in: dict[str, str] = {}
        """Tool -> the namespace a search output carried it in (this request's render)."""

    def namespace(self, category: str) -> str:
        """A category as a namespace name OpenAI takes."""
        return category if OPENAI_NAMES.accepts(category) else OPENAI_NAMES.rewrite(category)


_FIELDS = AnswerFields(PROVIDER)


def usage_from_responses(usage: Any, where: str = "usage") -> tuple[Usage | None, dict[str, Any]]:
    """Our ``Usage`` (input tokens include the cached ones, as OpenAI counts) and the raw
    details; ``None`` when the answer carried no usage. A count that is not a non-negative
    integer is a :class:`ProviderError` naming it."""
    if usage is None:
        return None, {}
    if not is_object(usage):
        raise _FIELDS.error(where, "an object", usage)
    details = _FIELDS.object(usage, "input_tokens_details", where)
    cached = (
        _FIELDS.count(details, "cached_tokens", f"{where}.input_tokens_details")
        if details is not None
        else 0
    )
    return (
        Usage(
            prompt_tokens=_FIELDS.count(usage, "input_tokens", where),
            completion_tokens=_FIELDS.count(usage, "output_tokens", where),
            cached_tokens=cached,
        ),
        _FIELDS.dump(usage),
    )


def _finish(response: Any, has_calls: bool) -> str:
    status = _FIELDS.text(response, "status", "")
    if status == "incomplete":
        details = _FIELDS.object(response, "incomplete_details", "")
        reason = _FIELDS.text(details, "reason", "incomplete_details") if details else None
        return FinishReason.LENGTH if reason == "max_output_tokens" else str(reason or "length")
    return FinishReason.TOOL_CALLS if has_calls else FinishReason.STOP


class _Output:
    """Output items folded into text, calls and the items to send back. An item or field
    of the wrong type is a :class:`ProviderError` naming its path (``output[2].call_id``):
    the SDK hands the answer on unvalidated (issue 47)."""

    def __init__(self, names: ResponsesNames) -> None:
        self.names = names
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.echoed: list[dict[str, Any]] = []

    def _name(self, item: Any, where: str) -> str:
        name = _FIELDS.text(item, "name", where)
        if not name:
            raise _FIELDS.error(f"{where}.name", "a tool name", name)
        return name

    def add(self, item: Any, *, with_text: bool = True, where: str = "output item") -> None:
        if not is_object(item):
            raise _FIELDS.error(where, "an object", item)
        kind = _FIELDS.text(item, "type", where)
        if kind == "message" and with_text:
            for at, part in _FIELDS.each_object(item, "content", where):
                if _FIELDS.text(part, "type", at) == "output_text":
                    self.text.append(_FIELDS.text(part, "text", at) or "")
        elif kind == "function_call":
            self.calls.append(
                ToolCall(
                    id=_FIELDS.text(item, "call_id", where) or new_call_id(),
                    name=self.names.real(self._name(item, where)),
                    arguments=_FIELDS.text(item, "arguments", where) or "{}",
                )
            )
        elif kind == "tool_search_call" and _FIELDS.raw(item, "execution") == "client":
            arguments = _FIELDS.raw(item, "arguments")
            arguments = _FIELDS.dump(arguments) if is_object(arguments) else {}
            call_id = _FIELDS.text(item, "call_id", where) or _FIELDS.text(item, "id", where)
            self.calls.append(
                ToolCall(
                    id=call_id or new_call_id(),
                    name=self.names.search_tool or "tool_search",
                    arguments=json.dumps(arguments, ensure_ascii=False, default=str),
                )
            )
        elif kind in _ECHOED_FIELDS:  # the server's own search: sent back as it came
            raw = _FIELDS.dump(item)
            self.echoed.append({k: raw[k] for k in _ECHOED_FIELDS[kind] if k in raw})

    def message(self, text: str | None = None) -> AssistantMessage:
        metadata = {ITEMS_METADATA_KEY: self.echoed} if self.echoed else {}
        content = "".join(self.text) if text is None else text
        return AssistantMessage(
            content=content or None, tool_calls=tuple(self.calls), metadata=metadata
        )


def _metadata(response: Any) -> dict[str, Any]:
    return {
        "provider": PROVIDER,
        "model": _FIELDS.text(response, "model", ""),
        "id": _FIELDS.text(response, "id", ""),
        "provider_finish_reason": _FIELDS.text(response, "status", ""),
    }


def response_from_responses(response: Any, names: ResponsesNames) -> ChatResponse:
    """A ``Response`` as our ``ChatResponse``: its text, calls and usage. A body that is
    not an object, or an item or field of the wrong type, is a :class:`ProviderError`
    naming it."""
    _FIELDS.root(response)
    output = _Output(names)
    for where, item in _FIELDS.each_object(response, "output", ""):
        output.add(item, where=where)
    usage, raw = usage_from_responses(_FIELDS.raw(response, "usage"))
    metadata = _metadata(response)
    if raw:
        metadata["usage"] = raw
    return ChatResponse(output.message(), _finish(response, bool(output.calls)), usage, metadata)


class ResponsesStreamState:
    """Folds Responses stream events: text deltas pass on at once; each call is handed on
    whole, with the status and usage, when the response completes."""

    def __init__(self, names: ResponsesNames) -> None:
        self.output = _Output(names)
        self.final: Any = None
        self.metadata: dict[str, Any] = {"provider": PROVIDER}

    def feed(self, event: Any) -> ChatResponse | None:
        _FIELDS.root(event, "a stream event")
        kind = _FIELDS.text(event, "type", "event") or ""
        if kind == "response.output_text.delta":
            delta = _FIELDS.text(event, "delta", "event")
            return ChatResponse(AssistantMessage(content=delta)) if delta else None
        if kind == "response.output_item.done":
            self.output.add(_FIELDS.raw(event, "item"), with_text=False, where="event.item")
        elif kind in ("response.completed", "response.incomplete"):
            self.final = _FIELDS.root(_FIELDS.raw(event, "response"), "event.response")
        elif kind in ("response.failed", "error"):
            response = _FIELDS.raw(event, "response")
            error = (_FIELDS.raw(response, "error") if is_object(response) else None) or event
            message = _FIELDS.raw(error, "message") if is_object(error) else None
            raise ProviderError(PROVIDER, str(message or "the response failed"), retryable=True)
        return None

    def finish(self) -> ChatResponse:
        if self.final is None:
            raise ProviderError(
                PROVIDER, "the stream ended before the response completed", retryable=True
            )
        usage, raw = usage_from_responses(_FIELDS.raw(self.final, "usage"), "response.usage")
        metadata = {**self.metadata, **_metadata(self.final)}
        if raw:
            metadata["usage"] = raw
        return ChatResponse(
            self.output.message(text=""),
            _finish(self.final, bool(self.output.calls)),
            usage,
            metadata,
        )
