"""``AnthropicChatModel``: Claude through the Anthropic Messages API.

Maps toolsearch messages onto ``system`` + alternating ``user``/``assistant`` turns with
``tool_use`` and ``tool_result`` blocks, tool definitions onto ``tools``, and the answer,
stop reason and usage (including prompt-cache reads) back. Needs ``toolsearch[anthropic]``.

With ``tool_search="defer_loading"`` (the default) it speaks Anthropic's client-side
tool-search shape:
the results of a tool search go back as ``tool_reference`` blocks and the tools they name
are sent with ``defer_loading: true``. A result is a tool search's when its
``ToolResponse`` carries ``search_hits`` (the built-in search tool sets them); the adapter
reads those typed hits, never the result text. Deferred definitions are not part of the
rendered prompt prefix; Claude sees each one where its reference sits in the conversation,
so discovering a tool appends to the prompt instead of changing its start, and the
provider's prompt cache keeps hitting. ``ChatOptions.deferred_tools`` defers tools from the
first request. A model or endpoint without tool search refuses such a request with a 400:
the adapter then resends it without deferral and stays on ``"none"``
(:mod:`toolsearch.models.anthropic.deferral`); a refused native search (``search="native"``)
is remembered the same way, and its server tool is left out of the resend.

``ChatOptions.tool_changes`` (the working set's mid-conversation additions and removals)
are sent with Anthropic's beta ``mid-conversation-tool-changes-2026-07-01``: the changed
tools are declared with ``defer_loading`` and each change is a system-role message of
``tool_addition`` / ``tool_removal`` blocks at its place in the conversation
(:mod:`toolsearch.models.anthropic.changes`), so neither ``tools`` nor ``system`` moves. A
model or endpoint that refuses the beta gets the request again without the changes (the
tools as without the beta), once, with a warning, and that model object stays off the beta.
See ``docs/providers.md``.

:func:`anthropic_request_body` is the request mapping on its own: the JSON body the adapter
sends for a prompt, built without the SDK or the network (the benchmark counts it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.options import ChatOptions, ToolChange
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.errors import ProviderError
from toolsearch.models._provider import (
    FallsBackOnce,
    append_turn,
    arguments_object,
    body_extra,
    parameters_of,
    require,
    sampling_settings,
    sdk_arguments,
)
from toolsearch.models.anthropic.changes import (
    first_changes,
    insert_tool_changes,
    refuses_tool_changes,
    with_beta_header,
    without_referenced_additions,
)
from toolsearch.models.anthropic.deferral import refuses_deferral, without_deferral
from toolsearch.models.anthropic.errors import translate_anthropic_error
from toolsearch.models.anthropic.response import (
    SERVER_BLOCKS_METADATA_KEY,
    THINKING_METADATA_KEY,
    StreamState,
    response_from_message,
)
from toolsearch.models.wire_names import (
    ANTHROPIC_NAMES,
    WireNames,
    request_names,
    wire_result_text,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "THINKING_METADATA_KEY",
    "AnthropicChatModel",
    "AnthropicRequestBuilder",
    "anthropic_request_body",
    "anthropic_tools",
    "anthropic_wire_names",
]

PROVIDER = "anthropic"

_log = logging.getLogger(__name__)

_OLD_DEFERRED_KEY = "toolsearch.deferred_tools"
"""The ``ChatOptions.extra`` key that listed deferred tools before ``ChatOptions.deferred_tools``
existed; a request that still uses it is refused rather than silently not deferred."""


ToolSearchMode = Literal["none", "defer_loading"]
NativeSearch = Literal["bm25", "regex"]


_EPHEMERAL = {"type": "ephemeral"}


class AnthropicChatModel(FallsBackOnce):
    """A chat model on the Anthropic Messages API.

    Args:
        model: The model name (``"claude-sonnet-4-6"``...); ``ChatOptions.model`` overrides.
        api_key: Defaults to the SDK's ``ANTHROPIC_API_KEY``.
        base_url: Defaults to the SDK's ``ANTHROPIC_BASE_URL`` or Anthropic itself.
        client: An ``anthropic.Anthropic`` to use as is.
        async_client: An ``anthropic.AsyncAnthropic`` for ``acall``/``astream``; when only
            ``client`` is given, async requests run it in a worker thread.
        max_tokens: The answer budget the API requires; ``ChatOptions.max_tokens`` wins.
        tool_search: ``"defer_loading"`` (default) renders tool-search results (tool
            responses with ``search_hits``) as ``tool_reference`` blocks and sends the tools
            they name deferred, so discoveries keep the cached prompt prefix (see the module
            doc); ``"none"`` sends every tool in full.
        cache_prompt: Put ``cache_control`` breakpoints on the last always-loaded tool, the
            system prompt and the newest message, so each turn reads the previous prefix
            from the prompt cache.
        native_search: Anthropic's server-side search for ``search="native"``: ``"bm25"``
            or ``"regex"``.
        tool_changes_beta: Send ``ChatOptions.tool_changes`` as the
            ``mid-conversation-tool-changes-2026-07-01`` beta's ``tool_addition`` /
            ``tool_removal`` blocks (see the module doc); ``False`` sends the request's
            tools as they are and ignores the changes. Turned off by itself, with a
            warning, when the model or endpoint refuses the beta.
        options: Default :class:`ChatOptions`. ``extra`` is passed through: keys
            ``messages.create`` accepts (``tool_choice``, ``thinking``, ``metadata``,
            ``extra_headers``, ``top_k``...) as arguments, anything else in the body.
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
        max_tokens: int = 4096,
        tool_search: ToolSearchMode = "defer_loading",
        cache_prompt: bool = False,
        native_search: NativeSearch = "bm25",
        tool_changes_beta: bool = True,
        options: ChatOptions | None = None,
    ) -> None:
        super().__init__(options=options, sync_only=client is not None and async_client is None)
        if tool_search not in ("none", "defer_loading"):
            raise ValueError("tool_search must be 'none' or 'defer_loading'")
        if native_search not in ("bm25", "regex"):
            raise ValueError("native_search must be 'bm25' or 'regex'")
        self.native_tool_search: NativeSearch | None = native_search
        """Anthropic's server-side search used for ``ChatOptions(native_tool_search=True)``
        (the tool-search advisor's ``search="native"``); ``None`` once the endpoint refused
        tool search, so the advisor runs toolsearch's own search from then on."""
        self.tool_changes_beta = tool_changes_beta
        """Whether ``ChatOptions.tool_changes`` go out as the mid-conversation beta's
        blocks; ``False`` after the model or endpoint refused the beta."""
        self._sdk = require("anthropic", extra="anthropic", feature="AnthropicChatModel")
        self.model = model
        self.max_tokens = max_tokens
        self.tool_search: ToolSearchMode = tool_search
        self.cache_prompt = cache_prompt
        self._api_key = api_key
        self._base_url = base_url
        self._client = client
        self._async_client = async_client

    # -- clients ---------------------------------------------------------------------------

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        if self._base_url is not None:
            kwargs["base_url"] = self._base_url
        return kwargs

    @property
    def client(self) -> Any:
        """The ``anthropic.Anthropic`` client (created on first use)."""
        return self._lazy_client("_client", lambda: self._sdk.Anthropic(**self._client_kwargs()))

    @property
    def async_client(self) -> Any:
        """The ``anthropic.AsyncAnthropic`` client (created on first use)."""
        return self._lazy_client(
            "_async_client", lambda: self._sdk.AsyncAnthropic(**self._client_kwargs())
        )

    # -- requests --------------------------------------------------------------------------

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireNames]:
        """The keyword arguments of ``messages.create`` for ``prompt`` (they send
        :func:`anthropic_request_body` as is), and the request's tool names on the wire."""
        options = self.effective_options(prompt)
        effective = prompt.with_options(options)
        names = anthropic_wire_names(effective)
        body = anthropic_request_body(
            effective,
            model=self.model,
            max_tokens=self.max_tokens,
            tool_search=self.tool_search,
            cache_prompt=self.cache_prompt,
            stream=stream,
            names=names,
            native_search=self.native_tool_search,
            tool_changes=self.tool_changes_beta,
        )
        create = self._sdk.resources.messages.Messages.create
        arguments = sdk_arguments(body, options, parameters_of(create))
        if carries_tool_changes(body):
            arguments["extra_headers"] = with_beta_header(arguments.get("extra_headers"))
        return arguments, names

    # -- a model or endpoint without the mid-conversation beta: once more, without it -------

    def _falls_back(self, exc: ProviderError, prompt: Prompt) -> bool:
        """Whether ``exc`` refused the tool-changes beta (or the deferred tools it needs) on
        a request that used it; the model object stays off the beta from then on (one
        warning), and off deferral too when that is what was refused."""
        deferral = refuses_deferral(exc)
        if not (
            self.tool_changes_beta
            and (deferral or refuses_tool_changes(exc))
            and carries_tool_changes(self._request(prompt, stream=False)[0])
        ):
            return False
        if deferral:
            self._refused_deferral(exc)
            return True
        _log.warning(
            "%s refused mid-conversation tool changes (%s); sending the request's tools "
            "without them from now on (AnthropicChatModel(tool_changes_beta=False) skips "
            "the first try)",
            self.model,
            exc,
        )
        self.tool_changes_beta = False
        return True

    # -- SdkChatModel hooks ----------------------------------------------------------------

    def _send(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        try:
            return self.client.messages.create(**arguments)
        except Exception as exc:
            return self.client.messages.create(**self._plain_or_raise(exc, arguments))

    async def _asend(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        try:
            return await self.async_client.messages.create(**arguments)
        except Exception as exc:
            return await self.async_client.messages.create(**self._plain_or_raise(exc, arguments))

    def _plain_or_raise(self, exc: Exception, arguments: dict[str, Any]) -> dict[str, Any]:
        """The request without deferral (and without the server's tool search) when
        ``exc`` refused deferral or tool search: this model object stays on
        ``tool_search="none"`` and without native search from then on, so the refused
        request is never sent again. Else ``exc`` again; so is a refused request that
        carried tool changes (:meth:`call` resends it without them)."""
        if carries_tool_changes(arguments):
            raise exc
        plain = without_deferral(arguments) if refuses_deferral(exc) else None
        if plain is None:
            raise exc
        self._refused_deferral(exc)
        return plain

    def _refused_deferral(self, exc: Exception) -> None:
        """Remember that the model or endpoint has no tool search: no deferral, no native
        search, no tool changes (their additions need deferred tools) from now on."""
        self.native_tool_search = None
        self.tool_changes_beta = False
        if self.tool_search != "none":
            _log.warning(
                "%s refused deferred tools (%s); sending every tool in full from now on "
                "(AnthropicChatModel(tool_search='none') skips the first try)",
                self.model,
                exc,
            )
            self.tool_search = "none"

    def _response(self, answer: Any, names: WireNames | None = None) -> ChatResponse:
        return response_from_message(answer, names)

    def _stream_folder(self, names: WireNames | None = None) -> StreamState:
        return StreamState(names)

    def _translate(self, exc: Exception) -> ProviderError | None:
        return translate_anthropic_error(exc)

    def __repr__(self) -> str:
        return f"AnthropicChatModel({self.model!r}, tool_search={self.tool_search!r})"


# -- mapping: toolsearch -> Anthropic ---------------------------------------------------------


def anthropic_wire_names(prompt: Prompt) -> WireNames:
    """The request's tool names as Anthropic accepts them
    (:mod:`~toolsearch.models.wire_names`): its tools', the forced deferred ones, then
    those its history mentions."""
    tools = [callback.definition.name for callback in prompt.options.tool_callbacks]
    for item in prompt.options.deferred_tools:
        tools.append(item.name if isinstance(item, ToolDefinition) else item)
    return request_names(ANTHROPIC_NAMES, tools, prompt.messages)


def carries_tool_changes(body: Mapping[str, Any]) -> bool:
    """Whether a request body (or ``messages.create`` arguments) holds system-role
    messages, which this adapter renders only for tool changes."""
    return any(
        isinstance(m, Mapping) and m.get("role") == "system" for m in body.get("messages") or ()
    )


def anthropic_request_body(
    prompt: Prompt,
    *,
    model: str,
    max_tokens: int = 4096,
    tool_search: ToolSearchMode = "defer_loading",
    cache_prompt: bool = False,
    stream: bool = False,
    names: WireNames | None = None,
    native_search: NativeSearch | None = "bm25",
    tool_changes: bool = True,
) -> dict[str, Any]:
    """The Messages API JSON body for ``prompt``, as :class:`AnthropicChatModel` sends it:
    ``model`` and ``max_tokens`` (``prompt.options`` win), ``messages``, ``system``,
    ``tools`` (deferred ones flagged with ``tool_search="defer_loading"``), cache
    breakpoints with ``cache_prompt``, the sampling options and ``options.extra``. Tool
    names Anthropic refuses go under their wire names (``names``, by default
    :func:`anthropic_wire_names`), in ``tool_reference`` blocks and search results too.

    With ``tool_changes`` (the default) and ``options.tool_changes``, each change becomes
    a system-role message of ``tool_addition`` / ``tool_removal`` blocks and every tool a
    change adds first is declared deferred (:mod:`~toolsearch.models.anthropic.changes`;
    the request then needs the beta header the adapter adds). ``native_search=None``: the
    endpoint has no tool search, ``options.native_tool_search`` is ignored.

    Pure: no SDK, no client, no network. ``prompt.options`` are used as given (the adapter
    passes its defaults merged with the request's).
    """
    options = prompt.options
    if _OLD_DEFERRED_KEY in options.extra:
        raise ValueError(
            f"ChatOptions.extra[{_OLD_DEFERRED_KEY!r}] is no longer read: pass the tools as "
            "ChatOptions(deferred_tools=[...])"
        )
    native = bool(options.native_tool_search) and native_search is not None
    changes = options.tool_changes if tool_changes else ()
    builder = AnthropicRequestBuilder(
        tools=[callback.definition for callback in options.tool_callbacks],
        defer_loading=tool_search == "defer_loading" or native,
        forced_deferred=options.deferred_tools,
        names=names if names is not None else anthropic_wire_names(prompt),
        changes=changes,
    )
    system: str | list[dict[str, Any]]
    system, messages = builder.render_messages(prompt.messages)
    body: dict[str, Any] = {
        "model": options.model or model,
        "max_tokens": options.max_tokens or max_tokens,
        "messages": messages,
    }
    tools = builder.render_tools()
    if native and any(t.get("defer_loading") for t in tools):
        tools.append(
            {
                "type": f"tool_search_tool_{native_search}_20251119",
                "name": f"tool_search_tool_{native_search}",
            }
        )
    if cache_prompt:
        _add_cache_breakpoints(tools, messages)
        if system:
            system = [{"type": "text", "text": system, "cache_control": dict(_EPHEMERAL)}]
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tools
    if stream:
        body["stream"] = True
    body.update(sampling_settings(options, stop="stop_sequences"))
    body.update(body_extra(options))
    return body


@dataclass
class AnthropicRequestBuilder:
    """Renders one request's messages and tools; in defer-loading mode it also decides
    which tools are deferred: those a rendered ``tool_reference`` names, plus the forced
    ones (``ChatOptions.deferred_tools``). Every other tool is sent in full, so a tool
    whose search result has left the history stays callable; a tool whose results carry
    search hits (the search tool) is never deferred.

    ``names`` give the wire name of every tool name rendered (definitions, ``tool_use``
    blocks, ``tool_reference`` blocks, the names in a search result's text); without them
    tools go under their own names.
    Anthropic takes no title, annotations or output schema: those stay on the definitions.

    ``changes`` (mid-conversation tool changes) must name tools it declares: ``tools`` or
    definitions among ``forced_deferred``. A tool whose first change is an addition is
    declared deferred; one whose first change is a removal was held from the start and is
    declared in full (a definition from ``forced_deferred`` comes after ``tools``: to keep
    the prefix, a working set either adds every changing tool through a change or keeps a
    removed tool's definition where it was).
    """

    tools: Sequence[ToolDefinition]
    defer_loading: bool = False
    forced_deferred: Sequence[ToolDefinition | str] = ()
    names: WireNames | None = None
    changes: Sequence[ToolChange] = ()
    deferred: set[str] = field(default_factory=set)
    _catalog: dict[str, ToolDefinition] = field(default_factory=dict)
    _searchers: set[str] = field(default_factory=set)
    _referenced: set[str] = field(default_factory=set)
    _added: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._catalog = {tool.name: tool for tool in self.tools}
        if self.changes:
            for item in self.forced_deferred:  # the definitions of tools a change names
                if isinstance(item, ToolDefinition):
                    self._catalog.setdefault(item.name, item)
            first = first_changes(self.changes)
            unknown = [n for n in first if n not in self._catalog]
            if unknown:
                raise ValueError(
                    f"ToolChange names tools the request does not declare: {unknown}; pass "
                    "their definitions in ChatOptions.tool_callbacks or deferred_tools"
                )
            self._added = {n for n, kind in first.items() if kind == "add"}
        if not self.defer_loading:
            return
        held = {n for n, kind in first_changes(self.changes).items() if kind == "remove"}
        for item in self.forced_deferred:
            if (item.name if isinstance(item, ToolDefinition) else item) in held:
                continue  # held from the start, then removed: declared as it was, in full
            if isinstance(item, ToolDefinition):
                self._catalog.setdefault(item.name, item)
                self.deferred.add(item.name)
            elif item in self._catalog:
                self.deferred.add(item)

    def render_messages(self, messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
        """``(system, messages)``: system messages joined; consecutive same-role turns merged
        (tool results first in their user turn, as the API requires)."""
        system = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
        out: list[dict[str, Any]] = []
        turn_of: dict[int, int] = {}  # an assistant message's index -> the turn it opens

        def append(role: str, blocks: list[dict[str, Any]]) -> None:
            append_turn(out, role, blocks, key="content")

        for index, message in enumerate(messages):
            if isinstance(message, UserMessage):
                if message.content:  # the API rejects empty text blocks
                    append("user", [{"type": "text", "text": message.content}])
            elif isinstance(message, AssistantMessage):
                blocks: list[dict[str, Any]] = [
                    dict(b)
                    for key in (THINKING_METADATA_KEY, SERVER_BLOCKS_METADATA_KEY)
                    for b in message.metadata.get(key, ())
                ]
                if message.content:
                    blocks.append({"type": "text", "text": message.content})
                blocks.extend(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": self._wire(call.name),
                        "input": arguments_object(call.arguments),
                    }
                    for call in message.tool_calls
                )
                if blocks and not (out and out[-1]["role"] == "assistant"):
                    turn_of[index] = len(out)
                append("assistant", blocks)
            elif isinstance(message, ToolResponseMessage):
                append(
                    "user",
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": r.id,
                            "content": self._result_content(r),
                        }
                        for r in message.responses
                    ],
                )
        for turn in out:
            if turn["role"] == "user":  # tool results first in their turn, then any text
                turn["content"].sort(key=lambda block: block.get("type") != "tool_result")
        changes = without_referenced_additions(self.changes, self._referenced)
        if changes:
            out = insert_tool_changes(messages, out, turn_of, changes, self._wire)
        return system, out

    def _result_content(self, response: ToolResponse) -> str | list[dict[str, Any]]:
        """A tool search's hits as ``tool_reference`` blocks (defer-loading mode); any other
        result as its text, a search's with the tools it names under their wire names."""
        hits = response.search_hits
        if not self.defer_loading or hits is None:
            return wire_result_text(response, self.names)
        self._searchers.add(response.name)
        names = list(dict.fromkeys(hit.name for hit in hits))
        if not names or any(n not in self._catalog or n == response.name for n in names):
            return wire_result_text(response, self.names)  # only references the API resolves
        self.deferred.update(names)
        self._referenced.update(names)
        return [{"type": "tool_reference", "tool_name": self._wire(n)} for n in names]

    def _wire(self, name: str) -> str:
        return self.names.wire(name) if self.names is not None else name

    def render_tools(self) -> list[dict[str, Any]]:
        """The request's tools (deferred ones flagged), then forced deferred catalog tools.

        Call after :meth:`render_messages`: the references rendered there decide the deferrals.
        """
        rendered = []
        self.deferred -= self._searchers
        names = [tool.name for tool in self.tools]
        extra = [
            n
            for n in self._catalog
            if n not in set(names) and (n in self.deferred or n in first_changes(self.changes))
        ]
        for name in [*names, *extra]:
            tool = self._catalog[name]
            entry: dict[str, Any] = {"name": self._wire(tool.name)}
            if tool.description:
                entry["description"] = tool.description
            entry["input_schema"] = dict(tool.input_schema)
            if (self.defer_loading and name in self.deferred) or name in self._added:
                entry["defer_loading"] = True
            rendered.append(entry)
        return rendered


def anthropic_tools(
    tools: Sequence[ToolDefinition], names: WireNames | None = None
) -> list[dict[str, Any]]:
    """Tool definitions as Messages API ``tools`` entries, every one in full (nothing
    deferred), named by ``names`` when given."""
    return AnthropicRequestBuilder(tools=tools, names=names).render_tools()


def _add_cache_breakpoints(tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    loaded = [t for t in tools if not t.get("defer_loading")]
    if loaded:
        loaded[-1]["cache_control"] = dict(_EPHEMERAL)
    if messages and messages[-1]["content"]:
        messages[-1]["content"][-1]["cache_control"] = dict(_EPHEMERAL)
