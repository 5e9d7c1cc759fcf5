"""``ToolSearchToolCallingAdvisor``: the drop-in tool loop that shows the model only the tools
it discovered.

Swap it in for ``ToolCallingAdvisor`` and nothing else changes: register all your tools as
before. Each request's tools are indexed for its session under the session's key for that
tool set (skipped when the session has that set indexed already; concurrent requests of one
conversation with different tools each search their own, see
:class:`~toolsearch.search.registry.SessionRegistry`); the model first sees one search tool
(plus any pinned tools); every search adds the tools it found to the session, and every
later request carries the search tool, the pinned tools and the discovered tools, in
discovery order (a stable prefix, so a provider's prompt cache keeps working). Discovered
names live in the session's state, so they survive memory advisors that trim the history.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Unpack

from pydantic import ValidationError

from toolsearch.chat.messages import ToolResponse, ToolResponseMessage
from toolsearch.chat.response import ChatResponse
from toolsearch.errors import ToolDefinitionError
from toolsearch.loop.advisor import (
    AdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
)
from toolsearch.loop.eligibility import ToolExecutionEligibilityChecker
from toolsearch.loop.manager import ToolCallingManager, ToolExecutionResult
from toolsearch.loop.tool_calling_advisor import ToolCallingAdvisor
from toolsearch.search.eviction import EvictionStrategy
from toolsearch.search.options import (
    ToolSearchOptions,
    ToolSearchOptionsDict,
    UndiscoveredToolPolicy,
    options_error,
)
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.search_log import LoggedCalls, LoggedSearch, SearchLog
from toolsearch.search.search_tool import SearchListener, ToolSearchEvent, ToolSearchTool
from toolsearch.search.store import SessionStore
from toolsearch.search.types import ToolIndex
from toolsearch.telemetry import hash_session_id
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import tool_callbacks

__all__ = [
    "DEFAULT_CATEGORY_SUFFIX",
    "DEFAULT_SYSTEM_SUFFIX",
    "ToolSearchAdvisorKwargs",
    "ToolSearchToolCallingAdvisor",
]

DEFAULT_SYSTEM_SUFFIX = (
    "Only some of your tools are loaded. When you need a capability you do not see among "
    "your tools, call {search_tool_name} with a few words describing it (for example "
    "'send email' or 'weather forecast'); the matching tools become callable on your next "
    "turn. Search again with other words if nothing fits."
)
DEFAULT_CATEGORY_SUFFIX = (
    DEFAULT_SYSTEM_SUFFIX + " {tool_count} tools are available in these categories: {categories}."
)

_log = logging.getLogger(__name__)

_SESSION_KEY = "toolsearch.tool_search.session"
_HOLDS_KEY = "toolsearch.tool_search.holds"
_STATE_KEY = "toolsearch.tool_search.loop"


@dataclass
class _Request:
    """One request (one run of the loop) on a session: what ``_close`` gives back."""

    session_id: str
    ephemeral: bool
    index_keys: list[str] = field(default_factory=list)
    """The session's index keys this request holds (its tool sets)."""


@dataclass
class _SearchLoop:
    """Tool-search state of one run of the loop."""

    session_id: str
    registered: dict[str, ToolCallback]
    pinned: list[str]
    index_key: str | None = None
    """Where this run's tools are indexed: the session's key for this tool set."""
    search_tool: ToolSearchTool | None = None
    last_round: list[str] = field(default_factory=list)
    current_round: list[str] | None = None
    visible: int | None = None
    """How many tools the model saw on the latest request (searches record it)."""

    def found(self, names: Sequence[str]) -> None:
        if self.current_round is not None:
            self.current_round.extend(n for n in names if n not in self.current_round)


@dataclass(frozen=True)
class _Plan:
    """Which calls of a turn the manager runs, and what the advisor answers itself."""

    delegated: list[int]
    answers: dict[int, str]


class ToolSearchAdvisorKwargs(ToolSearchOptionsDict, total=False):
    """Keyword arguments of :class:`ToolSearchToolCallingAdvisor` besides its objects: the
    :class:`ToolSearchOptions` fields and the :class:`ToolCallingAdvisor` loop options."""

    conversation_history_enabled: bool
    eligibility_checker: ToolExecutionEligibilityChecker | None
    max_iterations: int | None
    stream_mode: Literal["final_answer", "eager"]
    name: str | None


class ToolSearchToolCallingAdvisor(ToolCallingAdvisor):
    """A :class:`ToolCallingAdvisor` that sends the model only the tools it discovered.

    The plain-data options (``max_results``, ``system_message_suffix``,
    ``reference_tool_name_accumulation``, ``session_id_key_name``, ``order``,
    ``search_tool_name``, ``undiscovered_tool_policy``, ``search_results_with_summaries``,
    ``exclude_loaded_tools``, ``multi_query``) are the fields of :class:`ToolSearchOptions`,
    documented and defaulted there. Give them as keyword arguments or as one ``options=``
    object, not both: an option given both ways raises ``TypeError``
    (``options.replace(max_results=3)`` makes a changed copy). Bad values raise
    ``ValueError`` (``max_results must be between 1
    and 10``). ``advisor.options`` is the effective object, and each option is readable as
    an attribute (``advisor.max_results``).

    The options arrive as ``**kwargs: Unpack[ToolSearchAdvisorKwargs]`` rather than as
    named parameters with defaults: a default in this signature would be a second copy of
    the model's (the copies had drifted), and it would hide whether the caller gave a value,
    which the check against ``options=`` needs. The typed dict keeps the keywords typed and
    listed for type checkers and editors; a test keeps it in step with the model.

    Args:
        tool_index: Where each session's tools are indexed (``Bm25ToolIndex()`` when
            ``toolsearch[bm25]`` is installed, else ``RegexToolIndex()``).
        eviction_strategy: When sessions are dropped (LRU of 1,000 by default), for the
            default in-memory session store.
        session_store: Where session state lives: ``InMemorySessionStore`` by default, a
            ``RedisSessionStore`` to share discovered tools between processes (it carries
            its own eviction strategy; give one or the other).
        tool_calling_manager: Runs the tools (limits, error handling).
        search_listeners: Called with a
            :class:`~toolsearch.search.search_tool.ToolSearchEvent` after every search
            (query, hits with scores, hashed session, timing): where a search log
            attaches. More with :meth:`add_search_listener`.
        search_log: A :class:`~toolsearch.search.search_log.SearchLog` (a
            :class:`~toolsearch.search.search_log.JsonlSearchLog`, say) that receives every
            search and, per turn, the tools the model called: the data of
            ``toolsearch bench --replay`` and ``toolsearch embedder finetune --search-log``.
            It holds the search queries, which are user content. None by default.
        pinned_tools: Tools always sent (names of registered tools, or tools themselves),
            added to ``options.pinned_tools``.
        options: The plain-data options as one object (the defaults when omitted).
        **kwargs: The options one by one (see :class:`ToolSearchOptions`), and further
            :class:`ToolCallingAdvisor` options (``max_iterations``, ``stream_mode``,
            ``conversation_history_enabled``, ``eligibility_checker``, ``name``).
    """

    def __init__(
        self,
        *,
        tool_index: ToolIndex | None = None,
        eviction_strategy: EvictionStrategy | None = None,
        session_store: SessionStore | None = None,
        tool_calling_manager: ToolCallingManager | None = None,
        pinned_tools: Sequence[Any] = (),
        options: ToolSearchOptions | None = None,
        search_listeners: Sequence[SearchListener] = (),
        search_log: SearchLog | None = None,
        **kwargs: Unpack[ToolSearchAdvisorKwargs],
    ) -> None:
        fields = ToolSearchOptions.model_fields
        given = {key: value for key, value in kwargs.items() if key in fields}
        loop_options: dict[str, Any] = {k: v for k, v in kwargs.items() if k not in fields}
        if options is not None and not isinstance(options, ToolSearchOptions):
            raise TypeError(f"options must be a ToolSearchOptions, not {type(options).__name__}")
        if options is not None and given:
            names = ", ".join(sorted(given))
            raise TypeError(
                f"{names} given both as keyword arguments and in options=; give each option "
                "once (options.replace(...) makes a changed copy)"
            )
        base = options if options is not None else ToolSearchOptions()
        pinned_names = list(base.pinned_tools)
        pinned_callbacks: list[ToolCallback] = []
        for item in pinned_tools:
            if isinstance(item, str):
                pinned_names.append(item)
            else:
                found = tool_callbacks(item)
                pinned_callbacks.extend(found)
                pinned_names.extend(cb.definition.name for cb in found)
        try:
            # always a plain ToolSearchOptions, even from a ToolSearchSettings (a subclass)
            resolved = ToolSearchOptions(
                **{**{name: getattr(base, name) for name in fields}, **given},
            ).replace(pinned_tools=tuple(dict.fromkeys(pinned_names)))
        except ValidationError as error:
            raise options_error(error) from None
        super().__init__(
            tool_calling_manager=tool_calling_manager, order=resolved.order, **loop_options
        )
        self.options = resolved
        self.tool_index = tool_index if tool_index is not None else _default_index()
        self.registry = SessionRegistry(self.tool_index, eviction_strategy, store=session_store)
        self._pinned_names: list[str] = list(resolved.pinned_tools)
        self._pinned_callbacks = pinned_callbacks
        self._search_listeners: list[SearchListener] = list(search_listeners)
        self.search_log = search_log

    def add_search_listener(self, listener: SearchListener) -> None:
        """Call ``listener`` with a :class:`~toolsearch.search.search_tool.ToolSearchEvent`
        after every search of this advisor's search tool (inside the search's span)."""
        self._search_listeners.append(listener)

    def _searched(self, event: ToolSearchEvent, loop: _SearchLoop | None = None) -> None:
        if self.search_log is not None and loop is not None:
            self._log_search(event, loop)
        for listener in list(self._search_listeners):
            try:
                listener(event)
            except Exception:
                _log.warning("tool-search listener %r failed", listener, exc_info=True)

    def _log_search(self, event: ToolSearchEvent, loop: _SearchLoop) -> None:
        assert self.search_log is not None
        hits = set(event.hit_names)
        # what the search left out: the tools loaded before it (its own hits are now too)
        loaded = (
            [n for n in self._loaded(loop) if n not in hits and n in loop.registered]
            if self.exclude_loaded_tools
            else []
        )
        try:
            self.search_log.record_search(
                LoggedSearch.from_event(
                    event,
                    tools=[cb.definition for cb in loop.registered.values()],
                    loaded=loaded,
                )
            )
        except Exception:
            _log.warning("search log %r failed", self.search_log, exc_info=True)

    def _log_calls(self, loop: _SearchLoop, names: Sequence[str]) -> None:
        if self.search_log is None or not names or loop.index_key is None:
            return
        try:
            self.search_log.record_calls(
                LoggedCalls.of(loop.session_id, loop.index_key, names, time.time())
            )
        except Exception:
            _log.warning("search log %r failed", self.search_log, exc_info=True)

    # the options, readable one by one as before (read-only: ``options`` is frozen)

    @property
    def max_results(self) -> int:
        return self.options.max_results

    @property
    def system_message_suffix(self) -> str | None:
        return self.options.system_message_suffix

    @property
    def reference_tool_name_accumulation(self) -> bool:
        return self.options.reference_tool_name_accumulation

    @property
    def session_id_key_name(self) -> str:
        return self.options.session_id_key_name

    @property
    def search_tool_name(self) -> str:
        return self.options.search_tool_name

    @property
    def undiscovered_tool_policy(self) -> UndiscoveredToolPolicy:
        return self.options.undiscovered_tool_policy

    @property
    def search_results_with_summaries(self) -> bool:
        return self.options.search_results_with_summaries

    @property
    def exclude_loaded_tools(self) -> bool:
        return self.options.exclude_loaded_tools

    @property
    def multi_query(self) -> bool:
        return self.options.multi_query

    # -- session lifetime around each loop ------------------------------------------------

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        request, run = self._open(request)
        try:
            return super().advise_call(request, chain)
        finally:
            self._close(run)

    async def aadvise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        request, run = self._open(request)
        try:
            return await super().aadvise_call(request, chain)
        finally:
            self._close(run)

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> Iterator[ChatClientResponse]:
        request, run = self._open(request)
        try:
            yield from super().advise_stream(request, chain)
        finally:
            self._close(run)

    async def aadvise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        request, run = self._open(request)
        try:
            async for chunk in super().aadvise_stream(request, chain):
                yield chunk
        finally:
            self._close(run)

    def _open(self, request: ChatClientRequest) -> tuple[ChatClientRequest, _Request]:
        given = request.context.get(self.session_id_key_name)
        ephemeral = given is None or str(given) == ""
        session_id = f"ephemeral-{uuid.uuid4().hex}" if ephemeral else str(given)
        self.registry.acquire(session_id, tracked=not ephemeral)
        run = _Request(session_id, ephemeral)
        return request.with_context(**{_SESSION_KEY: session_id, _HOLDS_KEY: run}), run

    def _close(self, run: _Request) -> None:
        self.registry.release(run.session_id, run.index_keys)
        if run.ephemeral:
            self.registry.evict_session(run.session_id)

    # -- hooks ------------------------------------------------------------------------------

    def do_initialize_loop(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientRequest:
        """Index the request's tools for the session and add the system suffix."""
        session_id = str(request.context[_SESSION_KEY])
        registered: dict[str, ToolCallback] = {}
        for callback in [*request.prompt.options.tool_callbacks, *self._pinned_callbacks]:
            registered.setdefault(callback.definition.name, callback)
        if self.search_tool_name in registered:
            raise ToolDefinitionError(
                self.search_tool_name,
                "is the tool-search advisor's search tool name; rename the tool or pass "
                "search_tool_name=... to the advisor",
            )
        # pinned names this request does not register are skipped: tool sets vary by request
        pinned = [name for name in dict.fromkeys(self._pinned_names) if name in registered]
        loop = _SearchLoop(session_id, registered, pinned)
        if not registered:  # nothing to search: behave exactly like the plain advisor
            return request.with_context(**{_STATE_KEY: loop})
        # this run's tools get the session's key for this tool set: a concurrent request of
        # the same conversation with other tools searches its own key, and neither re-indexes
        definitions = [cb.definition for cb in registered.values()]
        run = request.context.get(_HOLDS_KEY)
        if isinstance(run, _Request) and run.session_id == session_id:
            key = self.registry.use_tools(session_id, definitions)
            run.index_keys.append(key)  # held until the request ends (released in _close)
        else:  # a context this advisor did not open: index without a hold to release
            self.registry.index_tools(session_id, definitions)
            key = self.registry.index_key(session_id, definitions)
        loop.index_key = key
        loop.search_tool = ToolSearchTool(
            self.tool_index,
            key,
            default_max_results=self.max_results,
            on_found=lambda names: self._record_found(loop, names),
            name=self.search_tool_name,
            with_summaries=self.search_results_with_summaries,
            allowed_names=frozenset(registered),
            loaded=(lambda: self._loaded(loop)) if self.exclude_loaded_tools else None,
            visible=lambda: loop.visible,
            on_search=lambda event: self._searched(event, loop),
            multi_query=self.multi_query,
        )
        _log.debug(
            "tool search: session %s, %d tools registered, %d pinned",
            hash_session_id(session_id),
            len(registered),
            len(pinned),
        )
        prompt = request.prompt.augment_system_message(self._suffix(registered))
        return request.with_prompt(prompt).with_context(**{_STATE_KEY: loop})

    def do_before_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        """Send the search tool, the pinned tools and the discovered tools."""
        loop: _SearchLoop = request.context[_STATE_KEY]
        if loop.search_tool is None:  # the request registered no tools
            return request
        visible = self._visible(loop)
        loop.visible = len(visible)
        options = request.prompt.options.replace(tool_callbacks=visible)
        return request.with_prompt(request.prompt.with_options(options))

    def do_execute_tool_calls(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> ToolExecutionResult:
        if request.context[_STATE_KEY].search_tool is None:
            return super().do_execute_tool_calls(request, response, prior_call_counts)
        loop, plan, prompt, delegated = self._plan_turn(request, response)
        result = (
            self.tool_calling_manager.execute_tool_calls(
                prompt, delegated, prior_call_counts=prior_call_counts
            )
            if delegated is not None
            else None
        )
        return self._merge_turn(loop, request, response, plan, result, prior_call_counts)

    async def ado_execute_tool_calls(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> ToolExecutionResult:
        if request.context[_STATE_KEY].search_tool is None:
            return await super().ado_execute_tool_calls(request, response, prior_call_counts)
        loop, plan, prompt, delegated = self._plan_turn(request, response)
        result = (
            await self.tool_calling_manager.aexecute_tool_calls(
                prompt, delegated, prior_call_counts=prior_call_counts
            )
            if delegated is not None
            else None
        )
        return self._merge_turn(loop, request, response, plan, result, prior_call_counts)

    # -- internals ------------------------------------------------------------------------

    def discovered_tools(self, session_id: str) -> list[str]:
        """The tools a session discovered so far, in discovery order."""
        return self.registry.discovered(session_id)

    def _record_found(self, loop: _SearchLoop, names: Sequence[str]) -> None:
        loop.found(names)
        self.registry.mark_discovered(loop.session_id, names)

    def _loaded(self, loop: _SearchLoop) -> list[str]:
        """Tools the model sees whatever it searches next (those a search may skip).

        Without accumulation a new search round replaces the last round's tools, so only
        the pinned tools stay.
        """
        if not self.reference_tool_name_accumulation:
            return list(loop.pinned)
        return [*loop.pinned, *self.registry.discovered(loop.session_id)]

    def _visible(self, loop: _SearchLoop) -> list[ToolCallback]:
        assert loop.search_tool is not None
        names = (
            self.registry.discovered(loop.session_id)
            if self.reference_tool_name_accumulation
            else loop.last_round
        )
        shown = [*loop.pinned, *(n for n in names if n not in loop.pinned)]
        return [loop.search_tool, *(loop.registered[n] for n in shown if n in loop.registered)]

    def _plan_turn(
        self, request: ChatClientRequest, response: ChatClientResponse
    ) -> tuple[_SearchLoop, _Plan, Any, ChatResponse | None]:
        loop: _SearchLoop = request.context[_STATE_KEY]
        assert response.chat_response is not None
        assert loop.search_tool is not None
        message = response.chat_response.message
        visible = {cb.definition.name for cb in request.prompt.options.tool_callbacks}
        delegated: list[int] = []
        answers: dict[int, str] = {}
        newly_used: list[str] = []
        for i, call in enumerate(message.tool_calls):
            if call.name == self.search_tool_name or call.name in visible:
                delegated.append(i)
            elif call.name in loop.registered and self.undiscovered_tool_policy == "execute":
                delegated.append(i)
                newly_used.append(call.name)
            elif call.name in loop.registered:
                _log.debug("the model called %r before discovering it", call.name)
                answers[i] = self.undiscovered_tool_hint(call.name)
            else:
                _log.debug("the model called %r, which no registered tool has", call.name)
                answers[i] = self.unknown_tool_hint(call.name)
        if newly_used:
            self.registry.mark_discovered(loop.session_id, newly_used)
        self._log_calls(
            loop,
            [
                message.tool_calls[i].name
                for i in delegated
                if message.tool_calls[i].name != self.search_tool_name
            ],
        )
        searching = any(message.tool_calls[i].name == self.search_tool_name for i in delegated)
        loop.current_round = [] if searching else None
        options = request.prompt.options.replace(
            tool_callbacks=[loop.search_tool, *loop.registered.values()]
        )
        prompt = request.prompt.with_options(options)
        if not delegated:
            return loop, _Plan(delegated, answers), prompt, None
        calls = tuple(message.tool_calls[i] for i in delegated)
        subset = ChatResponse(
            message.model_copy(update={"tool_calls": calls}),
            response.chat_response.finish_reason,
            response.chat_response.usage,
            response.chat_response.metadata,
        )
        return loop, _Plan(delegated, answers), prompt, subset

    def _merge_turn(
        self,
        loop: _SearchLoop,
        request: ChatClientRequest,
        response: ChatClientResponse,
        plan: _Plan,
        result: ToolExecutionResult | None,
        prior_call_counts: Mapping[str, int] | None,
    ) -> ToolExecutionResult:
        if loop.current_round is not None:
            loop.last_round = loop.current_round
            loop.current_round = None
        assert response.chat_response is not None
        message = response.chat_response.message
        executed = iter(result.tool_response_message.responses if result else ())
        responses = []
        for i, call in enumerate(message.tool_calls):
            if i in plan.answers:
                responses.append(
                    ToolResponse(id=call.id, name=call.name, response_data=plan.answers[i])
                )
            else:
                responses.append(next(executed))
        history = [
            *request.prompt.messages,
            message,
            ToolResponseMessage(responses=tuple(responses)),
        ]
        return ToolExecutionResult(
            history,
            return_direct=bool(result and result.return_direct and not plan.answers),
            call_counts=dict(result.call_counts if result else (prior_call_counts or {})),
        )

    def _suffix(self, registered: Mapping[str, ToolCallback]) -> str:
        categories = sorted(
            {cb.definition.category for cb in registered.values() if cb.definition.category}
        )
        template = self.system_message_suffix
        if template is None:
            template = DEFAULT_CATEGORY_SUFFIX if categories else DEFAULT_SYSTEM_SUFFIX
        return (
            template.replace("{search_tool_name}", self.search_tool_name)
            .replace("{categories}", ", ".join(categories) or "none")
            .replace("{tool_count}", str(len(registered)))
        )

    def undiscovered_tool_hint(self, name: str) -> str:
        """What the model reads when it calls a tool it has not discovered (policy "hint")."""
        return (
            f"Tool {name!r} is not loaded yet. Call {self.search_tool_name} to find it first "
            "(an exact tool name works as the query), then call it."
        )

    def unknown_tool_hint(self, name: str) -> str:
        """What the model reads when it calls a name that no registered tool has."""
        return (
            f"Error: there is no tool named {name!r}. Call {self.search_tool_name} with a "
            "description of what you need to find the available tools."
        )


def _default_index() -> ToolIndex:
    from toolsearch.indexes.specs import default_index

    return default_index()
