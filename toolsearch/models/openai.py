"""``OpenAIChatModel``: OpenAI chat completions, and every server that speaks its dialect.

The adapter maps toolsearch messages and tool definitions onto ``/chat/completions``
(``messages`` + ``tools`` of type ``function``) and the answer back, including token usage
with cached prompt tokens. ``base_url`` points it at any OpenAI-compatible endpoint
(Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter...). Needs ``toolsearch[openai]``.

:func:`openai_request_body` is the request mapping on its own: the JSON body the adapter
sends for a prompt, built without the SDK or the network (the benchmark counts it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse, FinishReason, Usage
from toolsearch.errors import ProviderAuthenticationError, ProviderError
from toolsearch.models._provider import (
    SdkChatModel,
    body_extra,
    body_message,
    error_for_status,
    new_call_id,
    parameters_of,
    require,
    retry_after_of,
    sampling_settings,
    sdk_arguments,
    transport_error,
)
from toolsearch.models.answer_fields import AnswerFields, is_object
from toolsearch.models.wire_names import (
    OPENAI_NAMES,
    WireNames,
    request_names,
    wire_result_text,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "OpenAIChatModel",
    "OpenAIClients",
    "openai_messages",
    "openai_request_body",
    "openai_tools",
    "openai_wire_names",
    "translate_openai_error",
]

PROVIDER = "openai"
_OPENAI_HOST = "api.openai.com"

MaxTokensParameter = Literal["auto", "max_tokens", "max_completion_tokens"]


class OpenAIClients:
    """The ``openai`` SDK clients of an OpenAI adapter, created on first use from its
    ``api_key`` and ``base_url`` (or given as ``client`` / ``async_client``): shared by
    :class:`OpenAIChatModel` and the Responses API adapter."""

    _sdk: Any
    _api_key: str | None
    _base_url: str | None
    _lazy_client: Callable[[str, Callable[[], Any]], Any]

    def _client_kwargs(self) -> dict[str, Any]:
        import os

        kwargs: dict[str, Any] = {}
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        elif self._base_url is not None and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "unused"  # local servers ignore it; the SDK insists on one
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


class OpenAIChatModel(OpenAIClients, SdkChatModel):
    """A chat model on the OpenAI chat completions API (or a compatible server).

    Args:
        model: The model name (``"gpt-4o-mini"``, ``"llama3.1"`` on Ollama...);
            ``ChatOptions.model`` in a request overrides it.
        api_key: Defaults to the SDK's ``OPENAI_API_KEY``. Compatible servers that need no
            key accept any string (the adapter passes ``"unused"`` when a ``base_url`` is
            given without a key and ``OPENAI_API_KEY`` is unset).
        base_url: The endpoint, e.g. ``http://localhost:11434/v1`` for Ollama; defaults to
            the SDK's ``OPENAI_BASE_URL`` or OpenAI itself.
        client: An ``openai.OpenAI`` to use as is (your own timeouts, retries, HTTP client).
        async_client: An ``openai.AsyncOpenAI`` for ``acall``/``astream``. When only
            ``client`` is given, async requests run it in a worker thread.
        options: Default :class:`ChatOptions` (temperature, max tokens, ``extra``...).
        max_tokens_parameter: How ``ChatOptions.max_tokens`` is sent: OpenAI's own API wants
            ``max_completion_tokens`` (its reasoning models reject ``max_tokens``), most
            compatible servers want ``max_tokens``; ``"auto"`` picks by the endpoint's host.

    SDK clients are created on first use, so constructing a model never needs a key or
    the network. ``ChatOptions.extra`` is passed through: keys ``chat.completions.create``
    accepts (``seed``, ``tool_choice``, ``parallel_tool_calls``, ``reasoning_effort``,
    ``response_format``, ``extra_headers``...) as arguments, anything else in the body.
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
        options: ChatOptions | None = None,
        max_tokens_parameter: MaxTokensParameter = "auto",
    ) -> None:
        super().__init__(options=options, sync_only=client is not None and async_client is None)
        self._sdk = require("openai", extra="openai", feature="OpenAIChatModel")
        self.model = model
        self._api_key = api_key
        self._base_url = base_url
        self._client = client
        self._async_client = async_client
        self.max_tokens_parameter = max_tokens_parameter

    # -- requests --------------------------------------------------------------------------

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireNames]:
        """The keyword arguments of ``chat.completions.create`` for ``prompt`` (they send
        :func:`openai_request_body` as is), and the request's tool names on the wire."""
        options = self.effective_options(prompt)
        effective = prompt.with_options(options)
        names = openai_wire_names(effective)
        body = openai_request_body(
            effective,
            model=self.model,
            max_tokens_key=self._max_tokens_key(),
            stream=stream,
            names=names,
        )
        create = self._sdk.resources.chat.completions.Completions.create
        return sdk_arguments(body, options, parameters_of(create)), names

    def _max_tokens_key(self) -> str:
        if self.max_tokens_parameter != "auto":
            return self.max_tokens_parameter
        base = self._base_url
        if base is None and self._client is not None:
            base = str(getattr(self._client, "base_url", ""))
        if base is None:
            import os

            base = os.environ.get("OPENAI_BASE_URL") or _OPENAI_HOST
        return "max_completion_tokens" if _OPENAI_HOST in base else "max_tokens"

    # -- SdkChatModel hooks ----------------------------------------------------------------

    def _send(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        return self.client.chat.completions.create(**arguments)

    async def _asend(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        return await self.async_client.chat.completions.create(**arguments)

    def _response(self, answer: Any, names: WireNames | None = None) -> ChatResponse:
        return response_from_completion(answer, names)

    def _stream_folder(self, names: WireNames | None = None) -> _StreamState:
        return _StreamState(names)

    def _translate(self, exc: Exception) -> ProviderError | None:
        return translate_openai_answer_error(exc)

    def __repr__(self) -> str:
        where = f", base_url={self._base_url!r}" if self._base_url else ""
        return f"OpenAIChatModel({self.model!r}{where})"


# -- mapping: toolsearch -> OpenAI ------------------------------------------------------------


def openai_wire_names(prompt: Prompt) -> WireNames:
    """The request's tool names as OpenAI accepts them (:mod:`~toolsearch.models.wire_names`):
    its tools', then those its history mentions."""
    tools = (callback.definition.name for callback in prompt.options.tool_callbacks)
    return request_names(OPENAI_NAMES, tools, prompt.messages)


def openai_request_body(
    prompt: Prompt,
    *,
    model: str,
    max_tokens_key: str = "max_completion_tokens",
    stream: bool = False,
    names: WireNames | None = None,
) -> dict[str, Any]:
    """The ``/chat/completions`` JSON body for ``prompt``, as :class:`OpenAIChatModel`
    sends it: ``model`` (``prompt.options.model`` wins), ``messages``, ``tools``, the
    sampling options (the answer budget under ``max_tokens_key``) and ``options.extra``.
    Tool names OpenAI refuses go under their wire names (``names``, by default
    :func:`openai_wire_names`).

    Pure: no SDK, no client, no network. ``prompt.options`` are used as given (the adapter
    passes its defaults merged with the request's).
    """
    options = prompt.options
    names = names if names is not None else openai_wire_names(prompt)
    body: dict[str, Any] = {
        "model": options.model or model,
        "messages": openai_messages(prompt.messages, names),
    }
    tools = [callback.definition for callback in options.tool_callbacks]
    if tools:
        body["tools"] = openai_tools(tools, names)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    body.update(sampling_settings(options, stop="stop", max_tokens=max_tokens_key))
    body.update(body_extra(options))
    return body


def openai_messages(
    messages: Sequence[Message], names: WireNames | None = None
) -> list[dict[str, Any]]:
    """Our messages as chat-completions messages (one ``tool`` message per tool result);
    tool calls, and the names in a tool search's results, under their wire names when
    ``names`` are given.

    An assistant turn always has a string ``content``, ``""`` next to tool calls without
    text: the API reference allows ``null`` there, but strict compatible servers
    (llama.cpp's Python server answers HTTP 500) refuse it, and every server accepts
    ``""`` (OpenAI, Ollama, vLLM, llama.cpp, LM Studio).
    """
    wire = names.wire if names is not None else str
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": wire(call.name), "arguments": call.arguments or "{}"},
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ToolResponseMessage):
            out.extend(
                {"role": "tool", "tool_call_id": r.id, "content": wire_result_text(r, names)}
                for r in message.responses
            )
    return out


def openai_tools(
    tools: Sequence[ToolDefinition], names: WireNames | None = None
) -> list[dict[str, Any]]:
    """Tool definitions as ``{"type": "function", "function": {...}}`` entries, named by
    ``names`` when given (else by their own names). OpenAI takes no title, annotations or
    output schema: those stay on the definitions."""
    wire = names.wire if names is not None else str
    rendered = []
    for tool in tools:
        function: dict[str, Any] = {"name": wire(tool.name)}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = dict(tool.input_schema)
        rendered.append({"type": "function", "function": function})
    return rendered


# -- mapping: OpenAI -> toolsearch ------------------------------------------------------------


_FIELDS = AnswerFields(PROVIDER)


def usage_from_openai(
    usage: Any, fields: AnswerFields = _FIELDS, where: str = "usage"
) -> tuple[Usage | None, dict[str, Any]]:
    """Our ``Usage`` (prompt includes cached tokens, as OpenAI counts) and the raw details;
    ``None`` when the answer carried no usage. A count that is not a non-negative integer
    is a :class:`ProviderError` naming it."""
    if usage is None:
        return None, {}
    if not is_object(usage):
        raise fields.error(where, "an object", usage)
    details = fields.object(usage, "prompt_tokens_details", where)
    cached = (
        fields.count(details, "cached_tokens", f"{where}.prompt_tokens_details")
        if details is not None
        else 0
    )
    return (
        Usage(
            prompt_tokens=fields.count(usage, "prompt_tokens", where),
            completion_tokens=fields.count(usage, "completion_tokens", where),
            cached_tokens=cached,
        ),
        fields.dump(usage),
    )


def _finish(reason: str | None, has_calls: bool) -> str:
    if reason in (None, "stop") and has_calls:
        return FinishReason.TOOL_CALLS  # Ollama and other compatible servers say "stop"
    if reason is None:
        return FinishReason.STOP
    if reason == "function_call":
        return FinishReason.TOOL_CALLS
    return reason  # stop, tool_calls, length, content_filter: already our vocabulary


def _tool_call(call: Any, where: str, real: Callable[[str], str]) -> ToolCall | None:
    """One ``tool_calls`` entry as our call (``None``: not a function call); a field of
    the wrong type is a :class:`ProviderError` naming it."""
    function = _FIELDS.object(call, "function", where)
    if function is None:
        return None
    name = _FIELDS.text(function, "name", f"{where}.function")
    if not name:
        raise _FIELDS.error(f"{where}.function.name", "a tool name", name)
    return ToolCall(
        id=_FIELDS.text(call, "id", where) or new_call_id(),
        name=real(name),
        arguments=_FIELDS.text(function, "arguments", f"{where}.function") or "{}",
    )


def response_from_completion(completion: Any, names: WireNames | None = None) -> ChatResponse:
    """A ``ChatCompletion`` as our ``ChatResponse`` (the first choice); the names of the
    model's calls are the tools' own again (``names``: the request's wire names).

    The SDK does not validate the answer, so each field read is checked here: a body that
    is not an object, or a field of the wrong type (a non-string call id, a list where the
    message belongs...), is a :class:`ProviderError` naming the field (issue 47).
    """
    real = names.real if names is not None else str
    _FIELDS.root(completion)
    usage, raw_usage = usage_from_openai(_FIELDS.raw(completion, "usage"))
    metadata: dict[str, Any] = {
        "provider": PROVIDER,
        "model": _FIELDS.text(completion, "model", ""),
        "id": _FIELDS.text(completion, "id", ""),
    }
    if raw_usage:
        metadata["usage"] = raw_usage
    choices = _FIELDS.each_object(completion, "choices", "")
    if not choices:
        return ChatResponse(AssistantMessage(), FinishReason.STOP, usage, metadata)
    where, choice = choices[0]
    finish_reason = _FIELDS.text(choice, "finish_reason", where)
    message = _FIELDS.object(choice, "message", where)
    content: str | None = None
    calls: tuple[ToolCall, ...] = ()
    if message is not None:
        at = f"{where}.message"
        content = _FIELDS.text(message, "content", at)
        found = (_tool_call(c, w, real) for w, c in _FIELDS.each_object(message, "tool_calls", at))
        calls = tuple(call for call in found if call is not None)
    metadata["provider_finish_reason"] = finish_reason
    return ChatResponse(
        AssistantMessage(content=content or None, tool_calls=calls),
        _finish(finish_reason, bool(calls)),
        usage,
        metadata,
    )


class _StreamState:
    """Folds ``ChatCompletionChunk``s: text passes on at once; tool-call deltas (keyed by
    ``index``) are joined and handed on whole, with the finish reason and usage, at the end.
    """

    def __init__(self, names: WireNames | None = None) -> None:
        self.names = names
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.metadata: dict[str, Any] = {"provider": PROVIDER}
        self.streamed_text = False

    def feed(self, chunk: Any) -> ChatResponse | None:
        fields = _FIELDS
        fields.root(chunk, "a stream chunk")
        self.metadata.setdefault("model", fields.text(chunk, "model", "chunk"))
        self.metadata.setdefault("id", fields.text(chunk, "id", "chunk"))
        usage = fields.raw(chunk, "usage")
        if usage is not None:
            self.usage, raw = usage_from_openai(usage, where="chunk.usage")
            self.metadata["usage"] = raw
        text = ""
        for where, choice in fields.each_object(chunk, "choices", "chunk"):
            if fields.raw(choice, "index") not in (0, None):
                continue
            delta = fields.object(choice, "delta", where)
            if delta is not None:
                at = f"{where}.delta"
                text += fields.text(delta, "content", at) or ""
                for path, part in fields.each_object(delta, "tool_calls", at):
                    index = fields.raw(part, "index")
                    if index is not None and (
                        isinstance(index, bool) or not isinstance(index, int)
                    ):
                        raise fields.error(f"{path}.index", "an integer", index)
                    slot = self.calls.setdefault(
                        index if index is not None else len(self.calls),
                        {"id": "", "name": "", "arguments": ""},
                    )
                    call_id = fields.text(part, "id", path)
                    if call_id:
                        slot["id"] = call_id
                    function = fields.object(part, "function", path)
                    if function is not None:
                        name = fields.text(function, "name", f"{path}.function")
                        arguments = fields.text(function, "arguments", f"{path}.function")
                        if name and name != slot["name"]:
                            slot["name"] += name  # some servers resend the name
                        if arguments:
                            slot["arguments"] += arguments
            finish_reason = fields.text(choice, "finish_reason", where)
            if finish_reason:
                self.finish_reason = finish_reason
        self.streamed_text = self.streamed_text or bool(text)
        return ChatResponse(AssistantMessage(content=text)) if text else None

    def finish(self) -> ChatResponse:
        if self.finish_reason is None and not self.calls and not self.streamed_text:
            # a compatible server that fails after answering 200 just ends the event stream
            # (llama-cpp-python does): that is a failed call, not an empty answer
            raise ProviderError(
                PROVIDER,
                "the stream ended without any content or finish reason "
                "(the server failed while streaming)",
                retryable=True,
            )
        real = self.names.real if self.names is not None else str
        for index, slot in self.calls.items():
            if not slot["name"]:
                raise _FIELDS.error(f"the streamed tool call {index}'s name", "a tool name", "")
        calls = tuple(
            ToolCall(
                id=slot["id"] or new_call_id(),
                name=real(slot["name"]),
                arguments=slot["arguments"] or "{}",
            )
            for _, slot in sorted(self.calls.items())
        )
        self.metadata["provider_finish_reason"] = self.finish_reason
        return ChatResponse(
            AssistantMessage(tool_calls=calls),
            _finish(self.finish_reason, bool(calls)),
            self.usage,
            {k: v for k, v in self.metadata.items() if v is not None},
        )


# -- errors ---------------------------------------------------------------------------------


def translate_openai_error(exc: Exception, provider: str = PROVIDER) -> ProviderError | None:
    """An ``openai`` SDK error as ours (``None`` for anything else), naming ``provider``."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return transport_error(provider, exc)
    if isinstance(exc, openai.APIStatusError):
        return error_for_status(
            provider,
            exc.status_code,
            body_message(exc.body, exc.message),
            retry_after=retry_after_of(getattr(exc.response, "headers", None)),
        )
    if isinstance(exc, openai.OpenAIError):
        if _MISSING_KEY in str(exc):  # no key configured: raised while building the client
            return ProviderAuthenticationError(provider, str(exc))
        return ProviderError(provider, str(exc))
    return None


def translate_openai_answer_error(exc: Exception, provider: str = PROVIDER) -> ProviderError | None:
    """:func:`translate_openai_error` for the chat adapters, which also map the SDK's
    failure to parse a 200 answer (a body that is not JSON; bytes with a UTF-16 BOM decode
    as UTF-16) to a :class:`ProviderError` saying so (issue 47). The embedders keep their
    own handling of such answers."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return ProviderError(
            provider, f"malformed answer: the body is not JSON ({exc})", retryable=False
        )
    return translate_openai_error(exc, provider)


_MISSING_KEY = "OPENAI_API_KEY"
"""Named by the SDK's error when no key is given (by argument or environment)."""
