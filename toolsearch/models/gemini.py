"""``GeminiChatModel``: Gemini through the ``google-genai`` SDK (Gemini API or Vertex AI).

Maps toolsearch messages onto ``contents`` (``user``/``model`` turns with ``function_call``
and ``function_response`` parts) plus ``system_instruction``, tool definitions onto
``function_declarations`` (their JSON Schema sent unchanged as ``parameters_json_schema``),
and the answer, finish reason and usage (including cached-content tokens) back. Needs
``toolsearch[gemini]``.

:func:`gemini_request_body` is the request mapping on its own: the ``generateContent`` JSON
body the adapter sends for a prompt (as google-genai puts it on the wire), built without
the SDK or the network (the benchmark counts it).
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Sequence
from typing import Any

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
    RESERVED_PREFIX,
    SdkChatModel,
    append_turn,
    arguments_object,
    dump_arguments,
    error_for_status,
    new_call_id,
    require,
    retry_after_of,
    retry_delay_of,
    transport_error,
)
from toolsearch.models.wire_names import (
    GEMINI_NAMES,
    WireNames,
    request_names,
    wire_result_text,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "SIGNATURES_METADATA_KEY",
    "GeminiChatModel",
    "gemini_request_body",
    "gemini_tools",
    "gemini_wire_names",
]

PROVIDER = "gemini"

SIGNATURES_METADATA_KEY = "gemini_thought_signatures"
"""``AssistantMessage.metadata`` key: ``{tool call id: base64 thought signature}``, sent
back with the calls (Gemini's thinking models require it for multi-turn tool use)."""

_SYNTHETIC_ID = "toolsearch_gemini"
"""Prefix of call ids we make up when Gemini sends none; these are never sent back."""

_FINISH_REASONS = {
    "STOP": FinishReason.STOP,
    "MAX_TOKENS": FinishReason.LENGTH,
    # blocked answers, named as OpenAI names them so callers check one value
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}
"""Gemini's finish reasons in our vocabulary; others pass through lower-cased
(``malformed_function_call``...). ``provider_finish_reason`` keeps the original."""


class GeminiChatModel(SdkChatModel):
    """A chat model on Gemini (``google-genai``).

    Args:
        model: The model name (``"gemini-2.5-flash"``...); ``ChatOptions.model`` overrides.
        api_key: Defaults to the SDK's ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY`` (or Vertex AI
            settings from ``GOOGLE_GENAI_USE_VERTEXAI`` and friends).
        client: A ``google.genai.Client`` to use as is (its ``.aio`` serves async calls).
        options: Default :class:`ChatOptions`. ``extra`` keys that are
            ``GenerateContentConfig`` fields (``tool_config``, ``thinking_config``,
            ``seed``, ``safety_settings``...) go into the config; any other key goes into
            the request body as is.
    """

    provider = PROVIDER

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        client: Any | None = None,
        options: ChatOptions | None = None,
    ) -> None:
        super().__init__(options=options)
        self._genai = require(
            "google.genai", extra="gemini", feature="GeminiChatModel", package="google-genai"
        )
        self.model = model
        self._api_key = api_key
        self._client = client

    @property
    def client(self) -> Any:
        """The ``google.genai.Client`` (created on first use)."""
        kwargs = {"api_key": self._api_key} if self._api_key is not None else {}
        return self._lazy_client("_client", lambda: self._genai.Client(**kwargs))

    # -- requests --------------------------------------------------------------------------

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireNames]:
        """The keyword arguments of ``models.generate_content`` (or ``_stream``, which takes
        the same) for ``prompt``: the parts of :func:`gemini_request_body` as SDK
        arguments, plus ``ChatOptions.extra`` (``GenerateContentConfig`` fields into the
        config, any other key into the body); and the request's tool names on the wire."""
        types = self._genai.types
        options = self.effective_options(prompt)
        effective = prompt.with_options(options)
        names = gemini_wire_names(effective)
        body = gemini_request_body(effective, names=names)
        config: dict[str, Any] = {
            _GENERATION_FIELDS[key]: value for key, value in body["generationConfig"].items()
        }
        if "systemInstruction" in body:
            config["system_instruction"] = body["systemInstruction"]
        if "tools" in body:
            config["tools"] = body["tools"]
        fields = types.GenerateContentConfig.model_fields
        extra_body: dict[str, Any] = {}
        for key, value in options.extra.items():
            if key.startswith(RESERVED_PREFIX):
                continue
            (config if key in fields else extra_body)[key] = value
        if extra_body:
            http_options = dict(config.get("http_options") or {})
            http_options["extra_body"] = {**extra_body, **(http_options.get("extra_body") or {})}
            config["http_options"] = http_options
        try:
            validated = types.GenerateContentConfig.model_validate(config)
        except ValueError as exc:  # pydantic's ValidationError: a bad option in ``extra``
            problems: list[dict[str, Any]] = getattr(exc, "errors", lambda: [])()
            detail = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in problems
            )
            raise ProviderError(PROVIDER, f"invalid generation config: {detail or exc}") from exc
        arguments = {
            "model": options.model or self.model,
            "contents": _sdk_contents(body["contents"]),
            "config": validated,
        }
        return arguments, names

    # -- SdkChatModel hooks ----------------------------------------------------------------

    def _send(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        models = self.client.models
        if stream:
            return models.generate_content_stream(**arguments)
        return models.generate_content(**arguments)

    async def _asend(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        models = self.client.aio.models
        if stream:
            return await models.generate_content_stream(**arguments)
        return await models.generate_content(**arguments)

    def _response(self, answer: Any, names: WireNames | None = None) -> ChatResponse:
        """A whole ``GenerateContentResponse``, folded as a one-chunk stream."""
        state = _StreamState(names)
        first = state.feed(answer)
        last = state.finish()
        return ChatResponse(
            AssistantMessage(
                content=first.message.content if first else None,
                tool_calls=first.message.tool_calls if first else (),
                metadata=dict(last.message.metadata),
            ),
            last.finish_reason,
            last.usage,
            last.metadata,
        )

    def _stream_folder(self, names: WireNames | None = None) -> _StreamState:
        return _StreamState(names)

    def _translate(self, exc: Exception) -> ProviderError | None:
        return _translate(exc)

    def __repr__(self) -> str:
        return f"GeminiChatModel({self.model!r})"


# -- mapping: toolsearch -> Gemini ------------------------------------------------------------


def gemini_wire_names(prompt: Prompt) -> WireNames:
    """The request's tool names as Gemini accepts them (:mod:`~toolsearch.models.wire_names`):
    its tools', then those its history mentions."""
    tools = (callback.definition.name for callback in prompt.options.tool_callbacks)
    return request_names(GEMINI_NAMES, tools, prompt.messages)


def gemini_request_body(prompt: Prompt, *, names: WireNames | None = None) -> dict[str, Any]:
    """The ``generateContent`` JSON body for ``prompt``, as :class:`GeminiChatModel` sends
    it through google-genai: ``contents``, ``systemInstruction``, ``tools`` and
    ``generationConfig`` (the sampling options). Tool names Gemini refuses go under their
    wire names (``names``, by default :func:`gemini_wire_names`), in declarations, calls
    and the results Gemini pairs with them by name.

    Pure: no SDK, no client, no network. ``prompt.options`` are used as given (the adapter
    passes its defaults merged with the request's). The model travels in the URL, and
    ``ChatOptions.extra`` is not part of this body: its keys are ``GenerateContentConfig``
    fields that the SDK places itself (``toolConfig``, ``generationConfig.seed``...).
    """
    options = prompt.options
    names = names if names is not None else gemini_wire_names(prompt)
    system, contents = gemini_contents(prompt.messages, names)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}], "role": "user"}
    tools = [callback.definition for callback in options.tool_callbacks]
    if tools:
        body["tools"] = [{"functionDeclarations": gemini_declarations(tools, names)}]
    generation: dict[str, Any] = {}
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    if options.top_p is not None:
        generation["topP"] = options.top_p
    if options.stop:
        generation["stopSequences"] = list(options.stop)
    if options.max_tokens is not None:
        generation["maxOutputTokens"] = options.max_tokens
    body["generationConfig"] = generation
    return body


_GENERATION_FIELDS = {
    "temperature": "temperature",
    "topP": "top_p",
    "stopSequences": "stop_sequences",
    "maxOutputTokens": "max_output_tokens",
}
"""The ``generationConfig`` keys :func:`gemini_request_body` writes, as
``GenerateContentConfig`` fields."""


def gemini_contents(
    messages: Sequence[Message], names: WireNames | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """``(system instruction, contents)`` in the wire's spelling; consecutive same-role
    turns are merged, so the results of parallel calls travel in one ``user`` turn as
    Gemini expects. Thought signatures are base64 text, as JSON carries bytes. Calls and
    results are named by ``names`` when given, and so are the tools a search result names."""
    wire = names.wire if names is not None else str
    system = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
    out: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}

    def append(role: str, parts: list[dict[str, Any]]) -> None:
        append_turn(out, role, parts, key="parts")

    for message in messages:
        if isinstance(message, UserMessage):
            append("user", [{"text": message.content}])
        elif isinstance(message, AssistantMessage):
            signatures = message.metadata.get(SIGNATURES_METADATA_KEY) or {}
            parts: list[dict[str, Any]] = []
            if message.content:
                parts.append({"text": message.content})
            for call in message.tool_calls:
                call_names[call.id] = call.name
                function_call: dict[str, Any] = {
                    "name": wire(call.name),
                    "args": arguments_object(call.arguments),
                }
                if call.id and not call.id.startswith(_SYNTHETIC_ID):
                    function_call["id"] = call.id
                part: dict[str, Any] = {"functionCall": function_call}
                if call.id in signatures:
                    part["thoughtSignature"] = signatures[call.id]
                parts.append(part)
            append("model", parts)
        elif isinstance(message, ToolResponseMessage):
            responses = []
            for r in message.responses:
                own = r.name or call_names.get(r.id, "")
                function_response: dict[str, Any] = {
                    "name": wire(own) if own else "",
                    "response": {"output": wire_result_text(r, names)},
                }
                if r.id and not r.id.startswith(_SYNTHETIC_ID):
                    function_response["id"] = r.id
                responses.append({"functionResponse": function_response})
            append("user", responses)
    return system, out


def _sdk_contents(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Wire ``contents`` as SDK input: the SDK reads the wire's key spelling, but takes a
    thought signature as bytes, not as its base64 text."""
    converted = []
    for content in contents:
        parts = []
        for part in content["parts"]:
            if "thoughtSignature" in part:
                part = {**part, "thoughtSignature": base64.b64decode(part["thoughtSignature"])}
            parts.append(part)
        converted.append({**content, "parts": parts})
    return converted


def gemini_declarations(
    tools: Sequence[ToolDefinition], names: WireNames | None = None
) -> list[dict[str, Any]]:
    """Function declarations (named by ``names`` when given); the JSON Schema goes as
    ``parameters_json_schema`` unchanged (the SDK's spelling on the wire inside a
    declaration; the API reads both spellings).

    A tool's ``output_schema`` is not sent as ``response_json_schema``: the adapter sends
    a result as ``{"output": <text>}``, which is not the shape that schema describes."""
    wire = names.wire if names is not None else str
    declarations = []
    for tool in tools:
        declaration: dict[str, Any] = {"name": wire(tool.name)}
        if tool.description:
            declaration["description"] = tool.description
        schema = dict(tool.input_schema)
        if schema.get("properties") or schema.get("type") != "object":
            declaration["parameters_json_schema"] = schema
        declarations.append(declaration)
    return declarations


def gemini_tools(
    tools: Sequence[ToolDefinition], names: WireNames | None = None
) -> list[dict[str, Any]]:
    """Tool definitions as Gemini's ``tools`` list: one entry of function declarations."""
    return [{"function_declarations": gemini_declarations(tools, names)}]


# -- mapping: Gemini -> toolsearch ------------------------------------------------------------


def usage_from_gemini(usage: Any) -> tuple[Usage | None, dict[str, Any]]:
    """Our ``Usage``: prompt tokens include cached content and tool-use prompt tokens;
    completion tokens include thinking tokens (as OpenAI counts reasoning). ``None`` when
    the answer carried no usage."""
    if usage is None:
        return None, {}
    raw = usage.model_dump(exclude_none=True, mode="json")
    return (
        Usage(
            prompt_tokens=(usage.prompt_token_count or 0)
            + (usage.tool_use_prompt_token_count or 0),
            completion_tokens=(usage.candidates_token_count or 0)
            + (usage.thoughts_token_count or 0),
            cached_tokens=usage.cached_content_token_count or 0,
        ),
        raw,
    )


def _reason_name(reason: Any) -> str | None:
    if reason is None:
        return None
    return str(getattr(reason, "value", reason))


class _StreamState:
    """Folds ``GenerateContentResponse``s: text and (always whole) function calls pass on at
    once; finish reason, usage and thought signatures come in the last chunk."""

    def __init__(self, names: WireNames | None = None) -> None:
        self.names = names
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.raw_usage: dict[str, Any] = {}
        self.signatures: dict[str, str] = {}
        self.has_calls = False
        self.metadata: dict[str, Any] = {"provider": PROVIDER}

    def feed(self, response: Any) -> ChatResponse | None:
        if getattr(response, "model_version", None):
            self.metadata["model"] = response.model_version
        if getattr(response, "response_id", None):
            self.metadata["id"] = response.response_id
        if response.usage_metadata is not None:
            self.usage, self.raw_usage = usage_from_gemini(response.usage_metadata)
        if not response.candidates:
            feedback = getattr(response, "prompt_feedback", None)
            if feedback is not None and getattr(feedback, "block_reason", None):
                self.finish_reason = _reason_name(feedback.block_reason)
            return None
        candidate = response.candidates[0]
        if candidate.finish_reason is not None:
            self.finish_reason = _reason_name(candidate.finish_reason)
        text: list[str] = []
        calls: list[ToolCall] = []
        for part in (candidate.content.parts if candidate.content else None) or ():
            if part.function_call is not None:
                call = part.function_call
                call_id = call.id or new_call_id(_SYNTHETIC_ID)
                calls.append(
                    ToolCall(
                        id=call_id,
                        name=self._real(call.name or ""),
                        arguments=dump_arguments(call.args),
                    )
                )
                if part.thought_signature:
                    self.signatures[call_id] = base64.b64encode(part.thought_signature).decode()
            elif part.text and not part.thought:
                text.append(part.text)
        if not text and not calls:
            return None
        self.has_calls = self.has_calls or bool(calls)
        return ChatResponse(
            AssistantMessage(content="".join(text) or None, tool_calls=tuple(calls))
        )

    def _real(self, name: str) -> str:
        return self.names.real(name) if self.names is not None and name else name

    def finish(self) -> ChatResponse:
        reason = self.finish_reason
        if reason is None or reason == "STOP":
            finish = FinishReason.TOOL_CALLS if self.has_calls else FinishReason.STOP
        else:
            finish = _FINISH_REASONS.get(reason, reason.lower())
        self.metadata["provider_finish_reason"] = reason
        if self.raw_usage:
            self.metadata["usage"] = self.raw_usage
        return ChatResponse(
            AssistantMessage(
                metadata={SIGNATURES_METADATA_KEY: self.signatures} if self.signatures else {}
            ),
            finish,
            self.usage,
            {k: v for k, v in self.metadata.items() if v is not None},
        )


# -- errors ---------------------------------------------------------------------------------


def _translate(exc: Exception) -> ProviderError | None:
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        message = exc.message or str(exc)
        status = exc.code
        details = json.dumps(exc.details, default=str) if exc.details is not None else ""
        if status == 400 and "API_KEY_INVALID" in details:
            # Gemini answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID
            return ProviderAuthenticationError(PROVIDER, message, status_code=status)
        wait = retry_delay_of(exc.details)
        if wait is None:
            wait = retry_after_of(getattr(exc.response, "headers", None))
        return error_for_status(PROVIDER, status, message, retry_after=wait)
    if isinstance(exc, ValueError) and "API key" in str(exc):
        return ProviderAuthenticationError(PROVIDER, str(exc))
    auth = sys.modules.get("google.auth.exceptions")  # Vertex AI credentials
    if auth is not None:
        if isinstance(exc, auth.TransportError):
            return transport_error(PROVIDER, exc)
        if isinstance(exc, auth.GoogleAuthError):
            return ProviderAuthenticationError(PROVIDER, str(exc))
    return None
