"""Plain SDK loops: tool search for code that calls ``openai``, ``anthropic`` or
``google-genai`` itself.

Two calls per turn change in a loop you already have: the tool list you send, and what you
append when the model called the search tool::

    from toolsearch.integrations.sdk_loop import ToolSearchLoop

    search = ToolSearchLoop(my_tools, index="bm25")  # once per process
    session = search.session("conversation-42")       # once per conversation turn
    while True:
        completion = client.chat.completions.create(
            model="gpt-5.2", messages=messages, tools=session.tools("openai")
        )
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            result = session.openai_result(call)  # the search tool's result, or None
            messages.append(result or run_my_tool(call))

:meth:`LoopSession.tools` renders the search tool, the pinned tools and the tools the
conversation discovered (discovery order: the list only grows at its end) with toolsearch's
own provider mappings (``openai_tools``, the Anthropic request builder,
``gemini_declarations``), the ones its chat-model adapters send, **under names the provider
accepts**: ``github.create_issue`` goes to OpenAI and Anthropic as ``github_create_issue``,
a 70-character name is shortened with a hash, and the search results name every tool as the
tool list does. :meth:`LoopSession.tool_name` maps a name the model called back to the
tool's own, for your own dispatch. Searching goes through the search-session core
(:class:`~toolsearch.search.sessions.ToolSearchSessions`), the path every front door uses:
the tools are indexed once per tool set and session, discoveries live in its
:class:`~toolsearch.stores.session_store.SessionStore` (with a ``RedisSessionStore`` a
conversation's next turn may run on any worker and still see what it discovered), and every
search emits the ``tool_search`` span, its metrics and search-log records.

The provider SDKs are not imported here: a session's methods read their objects' attributes
(or the same keys of plain dicts).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeVar, Unpack

from toolsearch._first_use import preload
from toolsearch.errors import InvalidToolArgumentsError
from toolsearch.integrations._common import renamed
from toolsearch.integrations.door import (
    ToolSearchDoorKwargs,
    check_max_results,
    check_tool_names,
    door_sessions,
)
from toolsearch.models.wire_names import WireNames
from toolsearch.search.builtin_tools.search_tool import DEFAULT_SEARCH_TOOL_NAME
from toolsearch.search.options import PLAIN_SEARCH_LOOP, ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.run import SearchRun
from toolsearch.search.session_ref import run_in_thread
from toolsearch.search.sessions import SessionRef, name_rule, resolve_session
from toolsearch.search.types import ToolIndex
from toolsearch.tools.collect import tool_callbacks
from toolsearch.tools.definition import ToolDefinition

__all__ = ["LoopSession", "Provider", "ToolSearchLoop", "to_tool_definition"]

Provider = Literal["openai", "openai-responses", "anthropic", "gemini"]
"""The tool-list formats :meth:`LoopSession.tools` renders: the providers of
:data:`toolsearch.models.providers.PROVIDERS` (chat completions, the Responses API, the
Anthropic Messages API, Gemini's function declarations); a test keeps the two equal."""

SYSTEM_HINT = (
    "Only some of your tools are loaded. When you need a capability you do not see among "
    "your tools, call {search_tool_name} with a few words describing it (for example 'send "
    "email' or 'weather forecast'); the matching tools become callable on your next turn."
)


def to_tool_definition(tool: Any) -> ToolDefinition:
    """A tool in any accepted form as a toolsearch ``ToolDefinition``: a definition; a
    ``ToolCallback``, ``@tool`` or plain function; or a provider-format dict (chat
    completions ``{"type": "function", "function": {...}}``, Responses ``{"type":
    "function", "name", "parameters"}``, Anthropic ``{"name", "input_schema"}``, Gemini
    ``{"name", "parameters"}`` or ``{"name", "parameters_json_schema"}``)."""
    if isinstance(tool, ToolDefinition):
        return tool
    if isinstance(tool, Mapping):
        spec = tool.get("function", tool) if tool.get("type") == "function" else tool
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
            raise TypeError(f"a tool dict needs a name: {dict(tool)!r}")
        schema = (
            spec.get("parameters")
            or spec.get("input_schema")
            or spec.get("parameters_json_schema")
            or spec.get("parametersJsonSchema")
            or {"type": "object", "properties": {}}
        )
        return ToolDefinition(str(spec["name"]), str(spec.get("description") or ""), schema)
    found = tool_callbacks(tool)
    if len(found) != 1:
        raise TypeError(f"{tool!r} is {len(found)} tools; pass them one by one")
    return found[0].definition


class ToolSearchLoop:
    """A tool set behind toolsearch's search tool, for hand-written SDK loops.

    Args:
        tools: The tools, in any form :func:`to_tool_definition` takes.
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``...) or ``None`` for
            the default index.
        max_results: How many tools a search loads when the model gives no ``maxResults``.
        pinned: Names of tools sent on every turn.
        search_tool_name: The search tool's name (``toolSearchTool``).
        **shared: The arguments every front door takes
            (:class:`~toolsearch.integrations.door.ToolSearchDoorKwargs`): ``sessions``
            (another door's, to share), ``registry``, ``store``, ``eviction_strategy``,
            ``search_listeners`` (door ``"sdk-loop"``), ``search_log``.
    """

    def __init__(
        self,
        tools: Iterable[Any],
        *,
        index: ToolIndex | str | None = None,
        max_results: int = 5,
        pinned: Iterable[str] = (),
        search_tool_name: str = DEFAULT_SEARCH_TOOL_NAME,
        **shared: Unpack[ToolSearchDoorKwargs],
    ) -> None:
        check_max_results(max_results)
        self.definitions: tuple[ToolDefinition, ...] = tuple(to_tool_definition(t) for t in tools)
        self.by_name = {d.name: d for d in self.definitions}
        names = [d.name for d in self.definitions]
        self.pinned: tuple[str, ...] = check_tool_names(names, search_tool_name, pinned)
        options = ToolSearchOptions(
            max_results=max_results,
            search_tool_name=search_tool_name,
            pinned_tools=self.pinned,
            undiscovered_tool_policy="hint",
            **PLAIN_SEARCH_LOOP,  # this door does not hold the working set yet
        )
        self.sessions = door_sessions(index, options, "sdk-loop", **shared)
        self.max_results = max_results
        self.search_tool_name = search_tool_name
        self.search_definition = self.sessions.search_definition()
        self._wire: dict[str, WireNames] = {}
        preload()  # what a first turn would load on an async loop's thread, loaded now

    @property
    def registry(self) -> SessionRegistry:
        return self.sessions.registry

    @property
    def system_hint(self) -> str:
        """A sentence for the system prompt that tells the model how to find tools."""
        return SYSTEM_HINT.replace("{search_tool_name}", self.search_tool_name)

    def session(self, session_id: str | None = None) -> LoopSession:
        """The conversation ``session_id`` (cheap: make one per turn or keep it); ``None``:
        a conversation of its own, dropped by :meth:`LoopSession.close` (or eviction)."""
        return LoopSession(self, resolve_session(session_id))

    def wire_names(self, provider: Provider) -> WireNames:
        """Every tool name of the loop (and the search tool's) as ``provider`` accepts it:
        one mapping over the whole tool set, so a tool keeps its wire name on every turn."""
        rule = name_rule(provider)
        assert rule is not None
        if provider not in self._wire:
            self._wire[provider] = WireNames(rule, [self.search_tool_name, *self.by_name])
        return self._wire[provider]


class LoopSession:
    """One conversation of a :class:`ToolSearchLoop`: its tool list and its searches.

    Each method is one short run of the search-session core on the conversation's session
    (it reads the discoveries once, from the store)."""

    def __init__(self, loop: ToolSearchLoop, ref: SessionRef) -> None:
        self.loop = loop
        self.ref = SessionRef(ref.session_id, ephemeral=False)  # kept across turns
        self.session_id = ref.session_id
        self._throwaway = ref.ephemeral
        self._asked: dict[str, float] = {}  # tool -> when refusal() let its call through

    def _run(self, provider: Provider | None = None) -> SearchRun:
        """A short run of the core on the conversation (names as ``provider`` takes them:
        the run's mapping is :meth:`ToolSearchLoop.wire_names`, built the same way)."""
        return self.loop.sessions.open(self.ref, tools=self.loop.definitions, provider=provider)

    # -- what to send ------------------------------------------------------------------------

    @property
    def discovered(self) -> list[str]:
        """The tools this conversation discovered, in discovery order (from the store)."""
        return [n for n in self.loop.sessions.discovered(self.session_id) if n in self.loop.by_name]

    def visible(self) -> list[ToolDefinition]:
        """This turn's tools: the search tool, the pinned tools, then the discovered ones."""
        with self._run() as run:
            return run.visible_definitions()

    def tools(self, provider: Provider) -> list[dict[str, Any]]:
        """This turn's tool list in ``provider``'s request format (``tools=...``), every
        name one the provider accepts (:meth:`ToolSearchLoop.wire_names`)."""
        from toolsearch.models.providers import provider as provider_row

        row = provider_row(provider)  # ValueError listing the providers
        return row.render_tools(self.visible(), self.loop.wire_names(provider))

    def tool_name(self, name: str, provider: Provider) -> str:
        """The tool's own name for a name the model called in ``provider``'s format."""
        return self.loop.wire_names(provider).real(name)

    # -- a search call -------------------------------------------------------------------------

    def is_search_call(self, name: str) -> bool:
        return name == self.loop.search_tool_name

    def handle(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None,
        provider: Provider | None = None,
    ) -> str | None:
        """Run a search-tool call: the result text to send back (a JSON list of the tool
        names found, now part of the session's tools, as ``provider`` names them; an error
        text the model can act on for bad arguments), or ``None`` when ``name`` is not the
        search tool."""
        if not self.is_search_call(name):
            return None
        text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}))
        with self._run(provider) as run:
            tool = run.search_tool()
            try:
                queries, limit = tool.arguments(text)
            except InvalidToolArgumentsError as exc:  # the model reads why; the loop goes on
                return f"Error: {exc}"
            return run.render(run.search(queries, limit))

    def refusal(self, name: str, provider: Provider | None = None) -> str | None:
        """What to answer instead of running the model's call of ``name`` (as ``provider``
        names it): a message when no tool has that name, or when the conversation has not
        discovered it yet (search first); ``None`` when the call may run (the search tool,
        a pinned or discovered tool). Run your own tools only when this is ``None``."""
        with self._run(provider) as run:
            decision = run.check_call(name)
            if decision.allowed:
                self._asked[decision.name] = time.time()
            return None if decision.allowed else decision.message

    def search(self, query: str, max_results: int | None = None) -> list[str]:
        """Search as the model would (the names found join the session's tools)."""
        with self._run() as run:
            return run.search(query, max_results).names

    # -- outcomes ------------------------------------------------------------------------------

    def record_outcome(
        self, name: str, ok: bool, provider: Provider | None = None, *, started: float | None = None
    ) -> None:
        """Report that your loop ran the model's call of ``name`` (as ``provider`` names
        it): ``ok`` whether the tool returned (``False``: it raised, or its result is an
        error). Call it once the tool ran; the search log (and learning from use) records
        it with the conversation's searches. ``started``: when the call was decided (by
        default, when :meth:`refusal` let it through). The search tool and names no tool
        has are ignored."""
        with self._run(provider) as run:
            own = run.real(name)
            if own == self.loop.search_tool_name or own not in run.tools:
                return
            at = started if started is not None else self._asked.pop(own, None)
            run.record_calls([own], defer_log=True)
            run.record_outcomes([own], [ok], at if at is not None else time.time())

    # -- async twins: the same, with the store, the indexing and the ranking on a worker
    # thread (an event loop never waits for an embedding or a Redis round trip) -----------------

    async def avisible(self) -> list[ToolDefinition]:
        """:meth:`visible` off the event loop."""
        return await _off_loop(self.visible)

    async def atools(self, provider: Provider) -> list[dict[str, Any]]:
        """:meth:`tools` off the event loop: ``tools=await session.atools("openai")``."""
        return await _off_loop(self.tools, provider)

    async def ahandle(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None,
        provider: Provider | None = None,
    ) -> str | None:
        """:meth:`handle` off the event loop (the search runs on a worker thread)."""
        return await _off_loop(self.handle, name, arguments, provider)

    async def arefusal(self, name: str, provider: Provider | None = None) -> str | None:
        """:meth:`refusal` off the event loop."""
        return await _off_loop(self.refusal, name, provider)

    async def asearch(self, query: str, max_results: int | None = None) -> list[str]:
        """:meth:`search` off the event loop."""
        return await _off_loop(self.search, query, max_results)

    async def arecord_outcome(
        self, name: str, ok: bool, provider: Provider | None = None, *, started: float | None = None
    ) -> None:
        """:meth:`record_outcome` off the event loop."""
        await run_in_thread(lambda: self.record_outcome(name, ok, provider, started=started))

    async def aopenai_result(self, call: Any) -> dict[str, Any] | None:
        """:meth:`openai_result` off the event loop (``AsyncOpenAI`` loops)."""
        return await _off_loop(self.openai_result, call)

    async def aopenai_responses_result(self, item: Any) -> dict[str, Any] | None:
        """:meth:`openai_responses_result` off the event loop."""
        return await _off_loop(self.openai_responses_result, item)

    async def aanthropic_result(self, block: Any) -> dict[str, Any] | None:
        """:meth:`anthropic_result` off the event loop (``AsyncAnthropic`` loops)."""
        return await _off_loop(self.anthropic_result, block)

    async def agemini_result(self, function_call: Any) -> dict[str, Any] | None:
        """:meth:`gemini_result` off the event loop."""
        return await _off_loop(self.gemini_result, function_call)

    async def aclose(self) -> None:
        """:meth:`close` off the event loop (a shared store's eviction is I/O)."""
        await run_in_thread(self.close)

    def close(self) -> None:
        """Drop a conversation made without an id (:meth:`ToolSearchLoop.session`)."""
        if self._throwaway:  # its discoveries, index keys and loaded view
            self.loop.registry.evict_session(self.session_id)
            self.loop.sessions.forget_loaded(self.session_id)

    def __enter__(self) -> LoopSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- per provider: the message or block to append ------------------------------------------

    def openai_result(self, call: Any) -> dict[str, Any] | None:
        """A chat-completions tool call (``message.tool_calls[i]``) of the search tool as
        the ``{"role": "tool", ...}`` message to append; ``None`` for any other tool."""
        function = _get(call, "function")
        content = self.handle(_get(function, "name"), _get(function, "arguments"), "openai")
        if content is None:
            return None
        return {"role": "tool", "tool_call_id": _get(call, "id"), "content": content}

    def openai_responses_result(self, item: Any) -> dict[str, Any] | None:
        """A Responses API ``function_call`` output item of the search tool as the
        ``function_call_output`` input item to append; ``None`` for any other tool."""
        content = self.handle(_get(item, "name"), _get(item, "arguments"), "openai-responses")
        if content is None:
            return None
        return {"type": "function_call_output", "call_id": _get(item, "call_id"), "output": content}

    def anthropic_result(self, block: Any) -> dict[str, Any] | None:
        """A ``tool_use`` content block of the search tool as the ``tool_result`` block to
        send in the next user turn; ``None`` for any other block."""
        if _get(block, "type") != "tool_use":
            return None
        content = self.handle(_get(block, "name"), _get(block, "input"), "anthropic")
        if content is None:
            return None
        return {"type": "tool_result", "tool_use_id": _get(block, "id"), "content": content}

    def gemini_result(self, function_call: Any) -> dict[str, Any] | None:
        """A Gemini ``function_call`` (``part.function_call``) of the search tool as the
        ``{"function_response": ...}`` part to send in the next user turn; ``None`` for any
        other function."""
        content = self.handle(_get(function_call, "name"), _get(function_call, "args"), "gemini")
        if content is None:
            return None
        response: dict[str, Any] = {
            "name": _get(function_call, "name"),
            "response": {"output": content},
        }
        if _get(function_call, "id"):
            response["id"] = _get(function_call, "id")
        return {"function_response": response}

    def __repr__(self) -> str:
        return f"LoopSession({self.session_id!r}, discovered={self.discovered})"


_T = TypeVar("_T")


async def _off_loop(method: Callable[..., _T], *args: Any) -> _T:
    """``method(*args)`` on a worker thread (span and context variables go along)."""
    result: _T = await run_in_thread(method, *args)
    return result


def _get(obj: Any, name: str) -> Any:
    """An SDK object's attribute, or the same key of a plain dict."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def __getattr__(name: str) -> Any:
    """``as_definition``, the name before issue 48, deprecated."""
    return renamed(__name__, name, {"as_definition": "to_tool_definition"}, globals())
