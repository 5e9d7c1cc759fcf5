"""What the provider-adapter contract (:mod:`.provider_contract`) needs to know of one
adapter: :class:`AdapterSpec`, its fixtures and wire format; and the helpers of the suite.

The fixtures an endpoint serves (files of a folder, see
:class:`~toolsearch.testing.ProviderEndpoint`) tell one story, in the provider's own
format: the user asks for the weather in Paris; the model calls ``get_weather`` with
``{"city": "Paris"}`` (``tool_call``, streamed: ``stream_tool_call``); it answers
``"It is sunny in Paris."`` (``final``; streamed in two text pieces, ``"It is sunny"`` and
``" in Paris."``: ``stream_final``) with the token usage of ``usage``; and each error fixture
is the provider's error body (``{"error": {"message": ...}}``) for its HTTP status.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.chat.messages import ToolCall
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse, Usage
from toolsearch.errors import ProviderAuthenticationError, ProviderError, ProviderRateLimitError
from toolsearch.testing.provider_server import ProviderEndpoint
from toolsearch.tools.definition import ToolDefinition, ToolMetadata

__all__ = [
    "AUTH",
    "MODES",
    "RATE",
    "REPLY",
    "SERVER",
    "AdapterSpec",
    "Body",
    "ErrorCase",
    "Item",
    "ToolCallbackStub",
    "answer",
    "assert_paris_call",
    "run",
    "renamed_fixtures",
    "texts",
    "without_usage",
]

REPLY = "It is sunny in Paris."
"""The answer text of the ``final`` fixtures."""

Item = tuple[Any, ...]
"""One entry of a conversation in neutral form: ``("system" | "user" | "assistant", text)``,
``("call", ref, name, arguments)`` and ``("result", ref, text)``, where ``ref`` is what pairs
a result with its call on the wire (the call id, or the tool name where the provider sent
no id)."""
Body = dict[str, Any]
"""A request's JSON body, as the SDK sent it."""

MODES = ("call", "stream", "acall", "astream")


@dataclass(frozen=True)
class ErrorCase:
    """An error fixture: served with ``status``, it must raise ``error``."""

    status: int
    fixture: str
    error: type[ProviderError]
    retryable: bool

    def __str__(self) -> str:
        return f"{self.status}-{self.error.__name__}"


AUTH = (ProviderAuthenticationError, False)
RATE = (ProviderRateLimitError, True)
SERVER = (ProviderError, True)  # 5xx: retryable, even after the SDK's own retries


@dataclass(frozen=True)
class AdapterSpec:
    """One adapter and what its fixtures and wire format say."""

    name: str  # what the adapter reports as metadata["provider"] and ProviderError.provider
    endpoint: type[ProviderEndpoint]
    class_name: str  # the adapter class, in ``module``
    package: str  # the distribution a missing SDK names
    final: str  # fixtures: a text reply, a tool call, and both streamed
    tool_call: str
    stream_final: str
    stream_tool_call: str
    reply_model: str  # what the fixtures report
    reply_id: str
    stop_reason: str
    tool_call_reason: str
    call_ref: str  # pairs the fixture's call with its result on the wire
    call_id: str | None  # None: the provider sent no id, the adapter made one up
    call_text: str | None  # the text the model said with its tool call
    usage: Usage
    raw_cached: Callable[[dict[str, Any]], int]  # the cache reads in metadata["usage"]
    errors: tuple[ErrorCase, ...]  # one must be a 429
    conversation: Callable[[Body], list[Item]]  # a request body's conversation, neutral
    tools: Callable[[Body], list[Item]]  # a request body's tools: (name, description, schema)
    sampling: Callable[[Body], dict[str, Any]]  # temperature, top_p, max_tokens (and stop)
    native_extra: dict[str, Any]  # provider parameters toolsearch has no option for
    read_native: Callable[[Body], dict[str, Any]]
    streamed: Callable[[str, Body], bool]  # (url, body): was this a streaming request?
    model_sent: Callable[[str, Body], str]
    credentials: tuple[str, ...]  # environment variables the SDK reads a key from
    no_key_model: Callable[[], Any]  # a model with no key configured (sends nothing)
    no_key_message: str
    separate_async_client: bool
    rule: Any  # the wire-name rule: an object, or a name in toolsearch.models.wire_names
    wire_weather: str  # the wire name of WEIRD_NAME under that rule
    stop: bool = True  # the API takes stop sequences (the Responses API does not)
    strict: bool = False  # the endpoint refuses what the real API refuses (unknown fields...)
    module: str = "toolsearch.models"  # where ``class_name`` is imported from
    unimported: tuple[str, ...] = ()  # modules importing the adapter must not load (+ sdk)
    no_defer_settings: dict[str, Any] = field(default_factory=dict)
    """Adapter options under which it does not defer tools (for one that can)."""

    @property
    def sdk(self) -> str:
        return self.endpoint.sdk

    @property
    def extra(self) -> str:
        return self.endpoint.extra

    def __str__(self) -> str:
        return self.name


def run(model: Any, prompt: Prompt, mode: str) -> list[ChatResponse]:
    """What the model answers through ``mode``: the one response, or every stream chunk."""
    if mode == "call":
        return [model.call(prompt)]
    if mode == "stream":
        return list(model.stream(prompt))

    async def answer() -> list[ChatResponse]:
        if mode == "acall":
            return [await model.acall(prompt)]
        return [chunk async for chunk in model.astream(prompt)]

    return asyncio.run(answer())


def texts(chunks: list[ChatResponse]) -> list[str]:
    return [chunk.message.content for chunk in chunks if chunk.message.content]


def assert_paris_call(call: ToolCall, adapter: AdapterSpec) -> None:
    """``call`` is the fixtures' ``get_weather(city="Paris")``, with the provider's id (or
    one made up locally when the provider sent none)."""
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "Paris"}
    assert call.id
    if adapter.call_id is not None:
        assert call.id == adapter.call_id


def answer(spec: Any, mode: str) -> str:
    """The answer text of a prompt spec run blocking, streaming, async or async-streaming."""
    if mode == "call":
        return str(spec.call().content())
    if mode == "stream":
        return "".join(spec.stream().content())
    if mode == "acall":
        return str(asyncio.run(spec.acall()).content())

    async def streamed() -> str:
        return "".join([piece async for piece in spec.astream().content()])

    return asyncio.run(streamed())


def renamed_fixtures(adapter: AdapterSpec, server: ProviderEndpoint, tmp_path: Path) -> None:
    """Serve the adapter's fixtures with the model calling the tool by its wire name."""
    for source in server.fixtures.iterdir():
        text = source.read_text().replace('"get_weather"', json.dumps(adapter.wire_weather))
        (tmp_path / source.name).write_text(text)
    server.fixtures = tmp_path


_USAGE_KEYS = ("usage", "usageMetadata")


def without_usage(server: ProviderEndpoint, tmp_path: Path, *names: str) -> None:
    """Serve the fixtures ``names`` with their usage removed (a server that reports none)."""
    for source in server.fixtures.iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    for name in names:
        body = json.loads((server.fixtures / name).read_text())
        for key in _USAGE_KEYS:
            body.pop(key, None)
        (tmp_path / name).write_text(json.dumps(body))
    server.fixtures = tmp_path


class ToolCallbackStub:
    """A tool that is a definition only (it answers ``"ok"``)."""

    def __init__(self, definition: ToolDefinition) -> None:
        self.definition = definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def call(self, input_json: str, context: Any = None) -> str:
        return "ok"

    async def acall(self, input_json: str, context: Any = None) -> str:
        return "ok"
