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


def usage_from_responses(usage: Any) -> tuple[Usage | None, dict[str, Any]]:
    """Our ``Usage`` (input tokens include the cached ones, as OpenAI counts) and the raw
    details; ``None`` when the answer carried no usage."""
    if usage is None:
        return None, {}
    details = getattr(usage, "input_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    raw = usage.model_dump(exclude_none=True) if hasattr(usage, "model_dump") else {}
    return (
        Usage(
            prompt_tokens=usage.input_tokens or 0,
            completion_tokens=usage.output_tokens or 0,
            cached_tokens=cached,
        ),
        raw,
    )


def _finish(response: Any, has_calls: bool) -> str:
    status = getattr(response, "status", None)
    if status == "incomplete":
        details = getattr(response, "incomplete_details", None)
        reason = getattr(details, "reason", None)
        return FinishReason.LENGTH if reason == "max_output_tokens" else str(reason or "length")
    return FinishReason.TOOL_CALLS if has_calls else FinishReason.STOP


def _dump(item: Any) -> dict[str, Any]:
    return item.model_dump(exclude_none=True) if hasattr(item, "model_dump") else dict(item)


class _Output:
    """Output items folded into text, calls and the items to send back."""

    def __init__(self, names: ResponsesNames) -> None:
        self.names = names
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.echoed: list[dict[str, Any]] = []

    def add(self, item: Any, *, with_text: bool = True) -> None:
        kind = getattr(item, "type", None)
        if kind == "message" and with_text:
            for part in getattr(item, "content", None) or ():
                if getattr(part, "type", None) == "output_text":
                    self.text.append(part.text)
        elif kind == "function_call":
            self.calls.append(
                ToolCall(
                    id=item.call_id or new_call_id(),
                    name=self.names.real(item.name),
                    arguments=item.arguments or "{}",
                )
            )
        elif kind == "tool_search_call" and getattr(item, "execution", None) == "client":
            arguments = item.arguments if isinstance(item.arguments, dict) else {}
            self.calls.append(
                ToolCall(
                    id=item.call_id or item.id or new_call_id(),
                    name=self.names.search_tool or "tool_search",
                    arguments=json.dumps(arguments, ensure_ascii=False),
                )
            )
        elif kind in _ECHOED_FIELDS:  # the server's own search: sent back as it came
            raw = _dump(item)
            self.echoed.append({k: raw[k] for k in _ECHOED_FIELDS[kind] if k in raw})

    def message(self, text: str | None = None) -> AssistantMessage:
        metadata = {ITEMS_METADATA_KEY: self.echoed} if self.echoed else {}
        content = "".join(self.text) if text is None else text
        return AssistantMessage(
            content=content or None, tool_calls=tuple(self.calls), metadata=metadata
        )


def response_from_responses(response: Any, names: ResponsesNames) -> ChatResponse:
    """A ``Response`` as our ``ChatResponse``: its text, calls and usage."""
    output = _Output(names)
    for item in getattr(response, "output", None) or ():
        output.add(item)
    usage, raw = usage_from_responses(getattr(response, "usage", None))
    metadata: dict[str, Any] = {"provider": PROVIDER, "model": response.model, "id": response.id}
    if raw:
        metadata["usage"] = raw
    metadata["provider_finish_reason"] = getattr(response, "status", None)
    return ChatResponse(output.message(), _finish(response, bool(output.calls)), usage, metadata)


class ResponsesStreamState:
    """Folds Responses stream events: text deltas pass on at once; each call is handed on
    whole, with the status and usage, when the response completes."""

    def __init__(self, names: ResponsesNames) -> None:
        self.output = _Output(names)
        self.final: Any = None
        self.metadata: dict[str, Any] = {"provider": PROVIDER}

    def feed(self, event: Any) -> ChatResponse | None:
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta" and event.delta:
            return ChatResponse(AssistantMessage(content=event.delta))
        if kind == "response.output_item.done":
            self.output.add(event.item, with_text=False)
        elif kind in ("response.completed", "response.incomplete"):
            self.final = event.response
        elif kind in ("response.failed", "error"):
            error = getattr(getattr(event, "response", None), "error", None) or event
            message = getattr(error, "message", None) or "the response failed"
            raise ProviderError(PROVIDER, str(message), retryable=True)
        return None

    def finish(self) -> ChatResponse:
        if self.final is None:
            raise ProviderError(
                PROVIDER, "the stream ended before the response completed", retryable=True
            )
        usage, raw = usage_from_responses(getattr(self.final, "usage", None))
        metadata = {
            **self.metadata,
            "model": self.final.model,
            "id": self.final.id,
            "provider_finish_reason": getattr(self.final, "status", None),
        }
        if raw:
            metadata["usage"] = raw
        return ChatResponse(
            self.output.message(text=""),
            _finish(self.final, bool(self.output.calls)),
            usage,
            metadata,
        )
