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

A model or endpoint without tool search answers the first two with a 400 (naming
``tool_search``, ``defer_loading`` or a namespace): the adapter logs a warning, sends the
same request again as ``"none"`` and stays so (a stream only when nothing had arrived yet).

:func:`openai_responses_request_body` is the request mapping on its own (pure: no SDK, no
network). The adapter is stateless (``store`` is not sent, no ``previous_response_id``):
each request carries the whole conversation, as every other adapter's does.
"""

from __future__ import annotations

import logging
import re
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
from toolsearch.chat.response import ChatResponse
from toolsearch.errors import ProviderError
from toolsearch.models._provider import (
    FallsBackOnce,
    arguments_object,
    body_extra,
    parameters_of,
    require,
    sdk_arguments,
)
from toolsearch.models.openai import OpenAIClients, openai_tools, translate_openai_answer_error
from toolsearch.models.openai_responses_output import (
    ITEMS_METADATA_KEY,
    PROVIDER,
    ResponsesNames,
    ResponsesStreamState,
    response_from_responses,
)
from toolsearch.models.wire_names import (
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
    "responses_tools",
]

_log = logging.getLogger(__name__)

_SEARCH_WORDS = re.compile(r"tool_search|tool search|defer_loading|namespace", re.IGNORECASE)
ResponsesToolSearch = Literal["client", "hosted", "none"]


class OpenAIResponsesChatModel(OpenAIClients, FallsBackOnce):
    """A chat model on the OpenAI Responses API (or a server that speaks it).

    Args:
        model: The model name (``"gpt-5.4-mini"``...); ``ChatOptions.model`` overrides.
        api_key, base_url, client, async_client: As for
            :class:`~toolsearch.models.OpenAIChatModel`.
        tool_search: ``"client"`` (default), ``"hosted"`` or ``"none"`` (module doc).
        namespaces: In ``"client"`` mode, the found tools that have a category go back in
            one ``namespace`` per category (MCP tools: their server), as OpenAI groups
            deferred tools; ``False``: every found tool as a plain function.
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
        namespaces: bool = True,
        options: ChatOptions | None = None,
    ) -> None:
        super().__init__(options=options, sync_only=client is not None and async_client is None)
        self.namespaces = namespaces
        self._native_refused = False
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

    def _mode(self, options: ChatOptions) -> ResponsesToolSearch:
        """This request's tool-search shape: ``"hosted"`` when the request asks for the
        native search (and the model did not refuse it), else ``tool_search``."""
        native = options.native_tool_search and not self._native_refused
        return "hosted" if native else self.tool_search

    def _request(self, prompt: Prompt, *, stream: bool) -> tuple[dict[str, Any], WireNames]:
        options = self.effective_options(prompt)
        effective = prompt.with_options(options)
        mode = self._mode(options)
        names = responses_names(effective, mode, namespaces=self.namespaces)
        body = openai_responses_request_body(
            effective, model=self.model, tool_search=mode, stream=stream, names=names
        )
        import openai.resources.responses as resource

        create = resource.Responses.create
        return sdk_arguments(body, options, parameters_of(create)), names

    # -- a model without tool search: the same request again, every tool a function --------

    def _falls_back(self, exc: ProviderError, prompt: Prompt) -> bool:
        """Whether ``exc`` refused OpenAI's tool search (a 400 naming tool_search,
        defer_loading or a namespace) on a request that used it; the model object stays on
        ``tool_search="none"`` from then on."""
        if (
            self._mode(self.effective_options(prompt)) == "none"
            or exc.status_code != 400
            or not _SEARCH_WORDS.search(str(exc))
        ):
            return False
        _log.warning(
            "%s refused OpenAI's tool search (%s); sending every tool as a function from now "
            "on (OpenAIResponsesChatModel(tool_search='none') skips the first try)",
            self.model,
            exc,
        )
        self.tool_search = "none"
        self._native_refused = True
        return True

    def _send(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        return self.client.responses.create(**arguments)

    async def _asend(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        return await self.async_client.responses.create(**arguments)

    def _response(self, answer: Any, names: WireNames | None = None) -> ChatResponse:
        return response_from_responses(answer, _as_responses_names(names))

    def _stream_folder(self, names: WireNames | None = None) -> ResponsesStreamState:
        return ResponsesStreamState(_as_responses_names(names))

    def _translate(self, exc: Exception) -> ProviderError | None:
        return translate_openai_answer_error(exc, PROVIDER)

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


def responses_names(
    prompt: Prompt, tool_search: ResponsesToolSearch, *, namespaces: bool = True
) -> ResponsesNames:
    """The request's wire names (OpenAI's rule) and its client-executed search tool."""
    tools = [callback.definition.name for callback in prompt.options.tool_callbacks]
    tools += [
        item.name if isinstance(item, ToolDefinition) else item
        for item in prompt.options.deferred_tools
    ]
    return ResponsesNames(
        mentioned_names(tools, prompt.messages),
        _search_tool(prompt, tool_search),
        namespaces=namespaces,
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


def responses_tools(
    tools: Sequence[ToolDefinition], names: WireNames | None = None
) -> list[dict[str, Any]]:
    """Tool definitions as the Responses API's ``{"type": "function", "name": ...}``
    entries, named by ``names`` when given (a bare list: what a loop of your own sends)."""
    return [{"type": "function", **tool["function"]} for tool in openai_tools(tools, names)]


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
    item = {
        "type": "function_call",
        "call_id": call.id,
        "name": names.wire(call.name),
        "arguments": call.arguments or "{}",
    }
    if call.name in names.carried_in:  # a tool loaded inside a namespace is called in it
        item["namespace"] = names.carried_in[call.name]
    return item


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
            "tools": _loaded_tools(found, names),
        }
    return {
        "type": "function_call_output",
        "call_id": response.id,
        "output": wire_result_text(response, names),
    }


def _loaded_tools(found: Sequence[ToolDefinition], names: ResponsesNames) -> list[dict[str, Any]]:
    """A search output's tools: plain functions, or one namespace per category (in the
    order the categories first appear) when ``names.namespaces``."""
    if not names.namespaces:
        return [_function(d, names, deferred=True) for d in found]
    loaded: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for definition in found:
        if not definition.category:
            loaded.append(_function(definition, names, deferred=True))
            continue
        space = names.namespace(definition.category)
        if space not in spaces:
            spaces[space] = {
                "type": "namespace",
                "name": space,
                "description": f"Tools of {definition.category}.",
                "tools": [],
            }
            loaded.append(spaces[space])
        spaces[space]["tools"].append(_function(definition, names, deferred=True))
        names.carried_in[definition.name] = space
    return loaded
