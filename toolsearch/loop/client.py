"""``ChatClient``: the fluent front door that assembles a request and runs the advisor chain.

``ChatClient.builder(model).build()`` (and ``ChatClient.create``) give a chain without a tool
advisor the one returned by the *auto tool advisor provider*, a hook set with
:func:`set_auto_tool_advisor_provider`; without a provider, or when it returns ``None``,
requests get a plain ``ToolCallingAdvisor``. The package itself (``toolsearch/__init__.py``,
run by ``import toolsearch``) installs the provider that reads the settings
(:func:`toolsearch.settings.configured_advisor`, imported when a client is built), which is
how ``TOOLSEARCH_TOOL_SEARCH__ENABLED=true`` selects the tool-search advisor: this layer
never imports ``toolsearch.search`` or ``toolsearch.settings``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeAlias, TypeVar

import toolsearch.observe as hooks
from toolsearch.chat.messages import Message, SystemMessage, UserMessage
from toolsearch.chat.model import ChatModel
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.loop.advisor import (
    AdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    build_advisor_chain,
    is_tool_advisor,
)
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import ensure_unique_names, tool_callbacks

__all__ = [
    "AdvisorSpec",
    "CallResponse",
    "ChatClient",
    "ChatClientBuilder",
    "ChatClientRequestSpec",
    "StreamResponse",
    "set_auto_tool_advisor_provider",
]

_log = logging.getLogger(__name__)

R = TypeVar("R")

AutoToolAdvisorProvider: TypeAlias = Callable[[], Any]
"""Called by each ``build()``: the tool advisor for that client, or ``None`` for the plain one."""

_auto_tool_advisor_provider: AutoToolAdvisorProvider | None = None


def set_auto_tool_advisor_provider(
    provider: AutoToolAdvisorProvider | None,
) -> AutoToolAdvisorProvider | None:
    """Install the hook ``ChatClientBuilder.build()`` asks for a default tool advisor (one
    per client, so its state persists across the client's requests); ``None`` removes it.
    Returns the previous provider. ``import toolsearch`` installs the settings-driven one
    (``toolsearch/__init__.py``).
    """
    global _auto_tool_advisor_provider
    previous = _auto_tool_advisor_provider
    _auto_tool_advisor_provider = provider
    return previous


class AdvisorSpec:
    """What ``.advisors(lambda a: ...)`` receives: add advisors and set advisor params."""

    def __init__(self) -> None:
        self.advisor_list: list[Any] = []
        self.param_map: dict[str, Any] = {}

    def param(self, key: str, value: Any) -> AdvisorSpec:
        self.param_map[key] = value
        return self

    def params(self, values: Mapping[str, Any]) -> AdvisorSpec:
        self.param_map.update(values)
        return self

    def advisors(self, *advisors: Any) -> AdvisorSpec:
        self.advisor_list.extend(_flatten(advisors))
        return self


AdvisorArgument = Any
"""An advisor, a list of advisors, or ``Callable[[AdvisorSpec], Any]``."""


def _flatten(items: Sequence[Any]) -> list[Any]:
    flat: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)):
            flat.extend(_flatten(item))
        else:
            flat.append(item)
    return flat


def _apply_advisor_arguments(items: Sequence[AdvisorArgument], spec: AdvisorSpec) -> None:
    for item in _flatten(items):
        if callable(item) and not (hasattr(item, "advise_call") or hasattr(item, "advise_stream")):
            item(spec)
        else:
            spec.advisors(item)


@dataclass(frozen=True)
class _Defaults:
    system: str | None = None
    tools: tuple[ToolCallback, ...] = ()
    tool_names: tuple[str, ...] = ()
    tool_context: Mapping[str, Any] = field(default_factory=dict)
    advisors: tuple[Any, ...] = ()
    advisor_params: Mapping[str, Any] = field(default_factory=dict)
    options: ChatOptions | None = None
    auto_tool_calling: bool = True
    auto_tool_advisor: Any = None
    """The tool advisor added when the chain has none (from settings; else a plain one)."""


class ChatClient:
    """Build prompts fluently and run them through the advisor chain to a ``ChatModel``.

    ``ChatClient.create(model)`` for defaults, ``ChatClient.builder(model)...build()`` to
    set default system text, tools, tool context, advisors and options. Unless the chain
    already holds a tool advisor, every request gets a
    :class:`~toolsearch.loop.tool_calling_advisor.ToolCallingAdvisor` (switch this off
    with ``auto_tool_calling(False)`` on the builder or on one request: the tools are then
    sent but not run, and the response carries the model's tool calls).
    """

    def __init__(self, model: ChatModel, defaults: _Defaults | None = None) -> None:
        self.model = model
        self._defaults = defaults or _Defaults()

    @classmethod
    def create(cls, model: ChatModel) -> ChatClient:
        """A client with default settings (tool search when the settings enable it)."""
        return ChatClientBuilder(model).build()

    @classmethod
    def builder(cls, model: ChatModel) -> ChatClientBuilder:
        return ChatClientBuilder(model)

    def mutate(self) -> ChatClientBuilder:
        """A builder starting from this client's defaults."""
        return ChatClientBuilder(self.model, self._defaults)

    def prompt(self, content: str | Prompt | None = None) -> ChatClientRequestSpec:
        """Start a request; ``content`` is the user text or a whole ``Prompt``."""
        spec = ChatClientRequestSpec(self.model, self._defaults)
        if isinstance(content, Prompt):
            spec.messages(*content.messages)
            spec.options(content.options)
        elif content is not None:
            spec.user(content)
        return spec


class ChatClientBuilder:
    """Collects a client's defaults; per-request settings add to or override them."""

    def __init__(self, model: ChatModel, defaults: _Defaults | None = None) -> None:
        self._model = model
        self._defaults = defaults or _Defaults()

    def _set(self, **changes: Any) -> ChatClientBuilder:
        self._defaults = dataclasses.replace(self._defaults, **changes)
        return self

    def default_system(self, text: str) -> ChatClientBuilder:
        return self._set(system=text)

    def default_tools(self, *tools: Any) -> ChatClientBuilder:
        callbacks = [*self._defaults.tools, *tool_callbacks(*tools)]
        ensure_unique_names(callbacks)
        return self._set(tools=tuple(callbacks))

    def default_tool_names(self, *names: str) -> ChatClientBuilder:
        return self._set(tool_names=(*self._defaults.tool_names, *names))

    def default_tool_context(self, context: Mapping[str, Any]) -> ChatClientBuilder:
        return self._set(tool_context={**self._defaults.tool_context, **context})

    def default_advisors(self, *advisors: AdvisorArgument) -> ChatClientBuilder:
        spec = AdvisorSpec()
        _apply_advisor_arguments(advisors, spec)
        return self._set(
            advisors=(*self._defaults.advisors, *spec.advisor_list),
            advisor_params={**self._defaults.advisor_params, **spec.param_map},
        )

    def default_options(self, options: ChatOptions) -> ChatClientBuilder:
        base = self._defaults.options
        return self._set(options=base.merged_with(options) if base else options)

    def auto_tool_calling(self, enabled: bool) -> ChatClientBuilder:
        """Whether requests get a ``ToolCallingAdvisor`` when no tool advisor is present."""
        return self._set(auto_tool_calling=enabled)

    def build(self) -> ChatClient:
        """The client. Fails now if the default advisors are not a valid chain.

        Requests without a tool advisor of their own get the one the auto tool advisor
        provider returns (asked once here, so sessions persist across requests): with
        ``TOOLSEARCH_TOOL_SEARCH__ENABLED=true`` (see :mod:`toolsearch.settings`), a
        ``ToolSearchToolCallingAdvisor`` configured by the settings.
        """
        build_advisor_chain(list(self._defaults.advisors), self._model)
        defaults = self._defaults
        provider = _auto_tool_advisor_provider
        if defaults.auto_tool_advisor is None and provider is not None:
            advisor = provider()  # e.g. the settings, read now (environment and TOML file)
            if advisor is not None:
                defaults = dataclasses.replace(defaults, auto_tool_advisor=advisor)
        return ChatClient(self._model, defaults)


class ChatClientRequestSpec:
    """One request being assembled. Finish with ``.call()`` or ``.stream()`` (or async)."""

    def __init__(self, model: ChatModel, defaults: _Defaults) -> None:
        self._model = model
        self._defaults = defaults
        self._system: str | None = defaults.system
        self._messages: list[Message] = []
        self._user: str | None = None
        self._tools: list[ToolCallback] = []
        self._tool_names: list[str] = []
        self._tool_context: dict[str, Any] = {}
        self._options: ChatOptions | None = None
        self._advisors = AdvisorSpec()
        self._auto_tool_calling = defaults.auto_tool_calling

    # -- fluent setters -------------------------------------------------------------------

    def system(self, text: str) -> ChatClientRequestSpec:
        self._system = text
        return self

    def user(self, text: str) -> ChatClientRequestSpec:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the user text must be a non-empty string")
        self._user = text
        return self

    def messages(self, *messages: Message | Sequence[Message]) -> ChatClientRequestSpec:
        self._messages.extend(_flatten(messages))
        return self

    def tools(self, *tools: Any) -> ChatClientRequestSpec:
        """Add tools to this request, after the client's default tools."""
        added = tool_callbacks(*tools)
        ensure_unique_names([*self._defaults.tools, *self._tools, *added])
        self._tools.extend(added)
        return self

    def tool_names(self, *names: str) -> ChatClientRequestSpec:
        """Add tools by name, resolved by the tool-calling manager's resolver."""
        self._tool_names.extend(names)
        return self

    def tool_context(self, context: Mapping[str, Any]) -> ChatClientRequestSpec:
        """Data for tools (merged over the default tool context; these keys win)."""
        self._tool_context.update(context)
        return self

    def options(self, options: ChatOptions) -> ChatClientRequestSpec:
        self._options = self._options.merged_with(options) if self._options else options
        return self

    def advisors(self, *advisors: AdvisorArgument) -> ChatClientRequestSpec:
        """Add advisors, or set advisor params with ``lambda a: a.param(key, value)``."""
        _apply_advisor_arguments(advisors, self._advisors)
        return self

    def auto_tool_calling(self, enabled: bool) -> ChatClientRequestSpec:
        self._auto_tool_calling = enabled
        return self

    # -- assembly -------------------------------------------------------------------------

    def build_request(self) -> tuple[ChatClientRequest, AdvisorChain]:
        """The request and the chain this spec describes (what ``call`` runs)."""
        from toolsearch.loop.tool_calling_advisor import ToolCallingAdvisor

        messages: list[Message] = []
        has_own_system = any(isinstance(m, SystemMessage) for m in self._messages)
        if self._system and not has_own_system:
            messages.append(SystemMessage(content=self._system))
        messages.extend(self._messages)
        if self._user is not None:
            messages.append(UserMessage(content=self._user))
        if not messages:
            raise ValueError("the prompt is empty: give user text, messages or a system text")
        model_defaults = getattr(self._model, "default_options", None)
        base = model_defaults if isinstance(model_defaults, ChatOptions) else ChatOptions()
        options = base.merged_with(self._defaults.options).merged_with(self._options)
        callbacks = [
            *self._defaults.tools,
            *(self._defaults.options.tool_callbacks if self._defaults.options else ()),
            *(self._options.tool_callbacks if self._options else ()),
            *self._tools,
        ]
        # tools given to the client replace the model's default tools, as on the model path
        callbacks = callbacks or list(base.tool_callbacks)
        options = options.replace(
            tool_callbacks=callbacks,
            tool_names=list(
                dict.fromkeys([*self._defaults.tool_names, *options.tool_names, *self._tool_names])
            ),
            tool_context={
                **self._defaults.tool_context,
                **options.tool_context,
                **self._tool_context,
            },
        )
        advisors = [*self._defaults.advisors, *self._advisors.advisor_list]
        if self._auto_tool_calling and not any(is_tool_advisor(a) for a in advisors):
            advisors.append(self._defaults.auto_tool_advisor or ToolCallingAdvisor())
        if options.tool_names and not any(is_tool_advisor(a) for a in advisors):
            raise ValueError(
                "tools given by name need a tool advisor to resolve them (through its "
                "ToolCallingManager's resolver); with auto tool calling off, pass the tools "
                "themselves to .tools(...)"
            )
        chain = build_advisor_chain(advisors, self._model)
        context = {**self._defaults.advisor_params, **self._advisors.param_map}
        return ChatClientRequest(Prompt(messages, options), context), chain

    # -- execution ------------------------------------------------------------------------

    # Each request runs through the observer hook (toolsearch.observe): with telemetry
    # attached, one agent span, the parent of its model, tool and search spans.

    def call(self) -> CallResponse:
        """Run the request now; read the result from the returned object."""
        request, chain, observe = self._start("call", hooks.chat_client_call)
        return CallResponse(observe(lambda: chain.next_call(request)))

    def stream(self) -> StreamResponse:
        """Stream the answer; only the final answer's chunks reach the caller.

        The request is checked now and runs as the result is iterated, once.
        """
        request, chain, observe = self._start("stream", hooks.chat_client_stream)
        return StreamResponse(observe(lambda: chain.next_stream(request)))

    async def acall(self) -> CallResponse:
        """Async twin of :meth:`call`: the model and async tools are awaited on the caller's
        event loop (sync tools run in worker threads)."""
        request, chain, observe = self._start("acall", hooks.chat_client_acall)
        return CallResponse(await observe(lambda: chain.anext_call(request)))

    def astream(self) -> AsyncStreamResponse:
        """Async twin of :meth:`stream`."""
        request, chain, observe = self._start("astream", hooks.chat_client_astream)
        return AsyncStreamResponse(observe(lambda: chain.anext_stream(request)))

    def _start(
        self, mode: str, hook: Callable[..., R]
    ) -> tuple[ChatClientRequest, AdvisorChain, Callable[[Callable[[], Any]], R]]:
        """Build and log the request, once for the four faces, and bind the observer's
        ``hook`` (the face's own) to it: the face passes only what runs the chain."""
        request, chain = self.build_request()
        _log_request(request, chain, mode)
        observe = partial(
            hook,
            self._model,
            request.prompt,
            chain.advisors,
            conversation_id=request.conversation_id,
        )
        return request, chain, observe


def _log_request(request: ChatClientRequest, chain: AdvisorChain, mode: str) -> None:
    if _log.isEnabledFor(logging.DEBUG):
        options = request.prompt.options
        _log.debug(
            "ChatClient %s: %d messages, %d tools, advisors %s",
            mode,
            len(request.prompt.messages),
            len(options.tool_callbacks),
            [getattr(a, "name", type(a).__name__) for a in chain.advisors],
        )


class CallResponse:
    """The result of ``.call()``."""

    def __init__(self, response: ChatClientResponse) -> None:
        self._response = response

    def chat_client_response(self) -> ChatClientResponse:
        return self._response

    def chat_response(self) -> ChatResponse | None:
        return self.chat_client_response().chat_response

    def content(self) -> str | None:
        """The answer's text (a return-direct tool's result, when the loop ended that way)."""
        response = self.chat_response()
        return None if response is None else response.message.content


class _OneShot:
    def __init__(self) -> None:
        self._used = False

    def _claim(self) -> None:
        if self._used:
            raise RuntimeError(
                "a stream can be consumed once; call .stream() again to run the request again"
            )
        self._used = True


class StreamResponse(_OneShot):
    """The result of ``.stream()``: iterate one of ``content()``, ``chat_responses()`` or
    ``chat_client_responses()``, once (the request runs as you iterate)."""

    def __init__(self, responses: Iterator[ChatClientResponse]) -> None:
        super().__init__()
        self._responses = responses

    def chat_client_responses(self) -> Iterator[ChatClientResponse]:
        self._claim()
        return self._responses

    def chat_responses(self) -> Iterator[ChatResponse]:
        for response in self.chat_client_responses():
            if response.chat_response is not None:
                yield response.chat_response

    def content(self) -> Iterator[str]:
        for response in self.chat_responses():
            if response.message.content:
                yield response.message.content


class AsyncStreamResponse(_OneShot):
    """The result of ``.astream()``: ``async for`` over ``content()`` or ``chat_responses()``."""

    def __init__(self, responses: AsyncIterator[ChatClientResponse]) -> None:
        super().__init__()
        self._responses = responses

    def chat_client_responses(self) -> AsyncIterator[ChatClientResponse]:
        self._claim()
        return self._responses

    async def chat_responses(self) -> AsyncIterator[ChatResponse]:
        async for response in self.chat_client_responses():
            if response.chat_response is not None:
                yield response.chat_response

    async def content(self) -> AsyncIterator[str]:
        async for response in self.chat_responses():
            if response.message.content:
                yield response.message.content
