"""``OpenAIResponsesChatModel``: OpenAI's Responses API (``/responses``), with tool search.

The adapter maps toolsearch messages onto Responses input items (``message``,
``function_call``, ``function_call_output``) and tool definitions onto ``function`` tools
(``strict: false``: toolsearch's schemas are not all strict-mode schemas), and the output
items, usage (cached input tokens included) and status back. Needs ``toolsearch[openai]``.

Tool search, ``tool_search=``:

* ``"client"`` (default): the search tool (a tool whose metadata says ``tool_search``, as
  the tool-search advisor's does) goes as OpenAI's client-executed ``tool_search`` tool;
  the model's ``tool_search_call`` comes back as a call of that tool, so toolsearch's index
  answers it; the result goes back as a ``tool_search_output`` item carrying the found
  tools' definitions (``defer_loading: true``), and those tools are left out of the
  request's ``tools``. Discovered definitions thus sit in the conversation, where OpenAI
  puts them, and the start of the prompt never changes: the prompt cache holds.
* ``"hosted"`` (also whenever ``ChatOptions.native_tool_search`` is set, as the
  tool-search advisor's ``search="native"`` does): OpenAI runs the search
  (``{"type": "tool_search"}``) over the tools ``ChatOptions.deferred_tools`` names, sent
  with ``defer_loading: true``; the server's
  ``tool_search_call`` / ``tool_search_output`` items are kept on the assistant message
  (``metadata["openai_responses_items"]``) and sent back with it.
* ``"none"``: every tool, the search tool too, as a plain function.

:func:`openai_responses_request_body` is the request mapping on its own (pure: no SDK, no
network). The adapter is stateless (``store`` is not sent, no ``previous_response_id``):
each request carries the whole conversation, as every other adapter's does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse, FinishReason, Usage
from toolsearch.errors import ProviderError
from toolsearch.models._provider import (
    SdkChatModel,
    arguments_object,
    body_extra,
    new_call_id,
    parameters_of,
    require,
    sdk_arguments,
)
from toolsearch.models.openai import translate_openai_error
from toolsearch.models.wire_names import (
    OPENAI_NAMES,
    WireNames,
    mentioned_names,
    wire_result_text,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "ITEMS_METADATA_KEY",
    "OpenAIResponsesChatModel",
    "ResponsesNames",
    "ResponsesToolSearch",
    "openai_responses_request_body",
    "response_from_responses",
]

PROVIDER = "openai-responses"

ResponsesToolSearch = Literal["client", "hosted", "none"]

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
    OpenAI's ``tool_search``), which the model's ``tool_search_call`` items are calls of."""

    def __init__(self, names: Sequence[str], search_tool: str | None) -> None:
        super().__init__(OPENAI_NAMES, names)
        self.search_tool = search_tool


class OpenAIResponsesChatModel(SdkChatModel):
    """A chat model on the OpenAI Responses API (or a server that speaks it).

    Args:
        model: The model name (``"gpt-5.4-mini"``...); ``ChatOptions.model`` overrides.
        api_key, base_url, client, async_client: As for
            :class:`~toolsearch.models.OpenAIChatModel`.
        tool_search: ``"client"`` (default), ``"hosted"`` or ``"none"`` (module doc).
        options: Default :class:`ChatOptions`. ``ChatOptions.stop`` is refused (the
            Responses API has no stop sequences); ``extra`` is passed through: keys
            ``responses.create`` accepts (``reasoning``, ``tool_choice``,
            ``parallel_tool_calls``, ``store``, ``extra_headers``...) as arguments.
    """

    provider = PROVIDER

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any | None = None,
        async_client: Any | None = None,
        tool_search: ResponsesToolSearch = "client",
        options: ChatOptions | None = None,
    ) -> None:
        super().__init__(options=options, sync_only=client is not None and async_client is None)
        if tool_search not in ("client", "hosted", "none"):
            raise ValueError("tool_search must be 'client', 'hosted' or 'none'")
        self._sdk = require("openai", extra="openai", feature="OpenAIResponsesChatModel")
        self.model = model
        self.tool_search: ResponsesToolSearch = tool_search
        self.native_tool_search = "hosted"
        """OpenAI's hosted ``tool_search``, used for ``ChatOptions(native_tool_search=True)``
        (the tool-search advisor's ``search="native"``)."""
        self._api_key = api_key
        self._base_url = base_url
        self._client = client
        self._async_client = async_client

    def _client_kwargs(self) -> dict[str, Any]:
        import os

        kwargs: dict[str, Any] = {}
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        elif self._base_url is not None and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "unused"
        if self._base_url is not None:
            kwargs["base_url"] = self._base_url
        return kwargs

    @property
    def client(self) -> Any:
        """The ``openai.OpenAI`` client (created on first use)."""
        return self._lazy_client("_client", lambda: self._sdk.OpenAI(**self._client_kwargs()))

    @property
    def async_client(self) -> Any:
        """The ``openai.AsyncOpenAI`` client (created on first use)."""
        return self._lazy_client(
            "_async_client", lambda: self._sdk.AsyncOpenAI(**self._client_kwargs())
        )

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireNames]:
        options = self.effective_options(prompt)
        effective = prompt.with_options(options)
        mode: ResponsesToolSearch = "hosted" if options.native_tool_search else self.tool_search
        names = responses_names(effective, mode)
        body = openai_responses_request_body(
            effective, model=self.model, tool_search=mode, stream=stream, names=names
        )
        import openai.resources.responses as resource

        create = resource.Responses.create
        return sdk_arguments(body, options, parameters_of(create)), names

    def _send(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        return self.client.responses.create(**arguments)

    async def _asend(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        return await self.async_client.responses.create(**arguments)

    def _response(self, answer: Any, names: WireNames | None = None) -> ChatResponse:
        return response_from_responses(answer, _as_responses_names(names))

    def _stream_folder(self, names: WireNames | None = None) -> ResponsesStreamState:
        return ResponsesStreamState(_as_responses_names(names))

    def _translate(self, exc: Exception) -> ProviderError | None:
        return translate_openai_error(exc, PROVIDER)

    def __repr__(self) -> str:
        where = f", base_url={self._base_url!r}" if self._base_url else ""
        return f"OpenAIResponsesChatModel({self.model!r}{where}, tool_search={self.tool_search!r})"


def _as_responses_names(names: WireNames | None) -> ResponsesNames:
    if isinstance(names, ResponsesNames):
        return names
    return ResponsesNames([], None)


# -- mapping: toolsearch -> Responses ---------------------------------------------------------


def _search_tool(prompt: Prompt, tool_search: ResponsesToolSearch) -> str | None:
    if tool_search != "client":
        return None
    for callback in prompt.options.tool_callbacks:
        if callback.metadata.tool_search:
            return callback.definition.name
    return None


def responses_names(prompt: Prompt, tool_search: ResponsesToolSearch) -> ResponsesNames:
    """The request's wire names (OpenAI's rule) and its client-executed search tool."""
    tools = [callback.definition.name for callback in prompt.options.tool_callbacks]
    tools += [
        item.name if isinstance(item, ToolDefinition) else item
        for item in prompt.options.deferred_tools
    ]
    return ResponsesNames(
        mentioned_names(tools, prompt.messages), _search_tool(prompt, tool_search)
    )


def openai_responses_request_body(
    prompt: Prompt,
    *,
    model: str,
    tool_search: ResponsesToolSearch = "client",
    stream: bool = False,
    names: ResponsesNames | None = None,
) -> dict[str, Any]:
    """The ``/responses`` JSON body for ``prompt``, as :class:`OpenAIResponsesChatModel`
    sends it: ``model``, ``input``, ``tools``, the sampling options
    (``max_output_tokens``) and ``options.extra``. ``ValueError`` for stop sequences."""
    options = prompt.options
    if options.stop:
        raise ValueError("the Responses API has no stop sequences: leave ChatOptions.stop unset")
    names = names if names is not None else responses_names(prompt, tool_search)
    catalog = {callback.definition.name: callback.definition for callback in options.tool_callbacks}
    for item in options.deferred_tools:
        if isinstance(item, ToolDefinition):
            catalog.setdefault(item.name, item)
    carried: set[str] = set()
    body: dict[str, Any] = {
        "model": options.model or model,
        "input": _input_items(prompt.messages, names, catalog, carried),
    }
    tools = _tools(options, names, catalog, carried, tool_search)
    if tools:
        body["tools"] = tools
    if stream:
        body["stream"] = True
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.top_p is not None:
        body["top_p"] = options.top_p
    if options.max_tokens is not None:
        body["max_output_tokens"] = options.max_tokens
    body.update(body_extra(options))
    return body


def _function(
    definition: ToolDefinition, names: WireNames, *, deferred: bool = False
) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "function", "name": names.wire(definition.name)}
    if definition.description:
        entry["description"] = definition.description
    entry["parameters"] = dict(definition.input_schema)
    entry["strict"] = False
    if deferred:
        entry["defer_loading"] = True
    return entry


def _tools(
    options: ChatOptions,
    names: ResponsesNames,
    catalog: dict[str, ToolDefinition],
    carried: set[str],
    tool_search: ResponsesToolSearch,
) -> list[dict[str, Any]]:
    deferred = (
        {item.name if isinstance(item, ToolDefinition) else item for item in options.deferred_tools}
        if tool_search == "hosted"
        else set()
    )
    rendered: list[dict[str, Any]] = []
    for callback in options.tool_callbacks:
        definition = callback.definition
        if definition.name == names.search_tool:
            rendered.append(
                {
                    "type": "tool_search",
                    "execution": "client",
                    "description": definition.description,
                    "parameters": dict(definition.input_schema),
                }
            )
        elif definition.name not in carried:  # a carried tool is loaded by its search output
            rendered.append(_function(definition, names, deferred=definition.name in deferred))
    extra = [
        catalog[n]
        for n in catalog
        if n in deferred and n not in {t.definition.name for t in options.tool_callbacks}
    ]
    rendered += [_function(d, names, deferred=True) for d in extra]
    if deferred:
        rendered.append({"type": "tool_search"})
    return rendered


def _input_items(
    messages: Sequence[Message],
    names: ResponsesNames,
    catalog: dict[str, ToolDefinition],
    carried: set[str],
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            items.append({"type": "message", "role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            if message.content:
                items.append({"type": "message", "role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            items.extend(dict(item) for item in message.metadata.get(ITEMS_METADATA_KEY, ()))
            if message.content:
                items.append({"type": "message", "role": "assistant", "content": message.content})
            items.extend(_call_item(call, names) for call in message.tool_calls)
        elif isinstance(message, ToolResponseMessage):
            items.extend(_result_item(r, names, catalog, carried) for r in message.responses)
    return items


def _call_item(call: ToolCall, names: ResponsesNames) -> dict[str, Any]:
    if names.search_tool is not None and call.name == names.search_tool:
        return {
            "type": "tool_search_call",
            "call_id": call.id,
            "execution": "client",
            "status": "completed",
            "arguments": arguments_object(call.arguments),
        }
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": names.wire(call.name),
        "arguments": call.arguments or "{}",
    }


def _result_item(
    response: ToolResponse,
    names: ResponsesNames,
    catalog: dict[str, ToolDefinition],
    carried: set[str],
) -> dict[str, Any]:
    if names.search_tool is not None and response.name == names.search_tool:
        found = [catalog[hit.name] for hit in response.search_hits or () if hit.name in catalog]
        carried.update(d.name for d in found)
        return {
            "type": "tool_search_output",
            "call_id": response.id,
            "execution": "client",
            "status": "completed",
            "tools": [_function(d, names, deferred=True) for d in found],
        }
    return {
        "type": "function_call_output",
        "call_id": response.id,
        "output": wire_result_text(response, names),
    }


# -- mapping: Responses -> toolsearch ---------------------------------------------------------


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
