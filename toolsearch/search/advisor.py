"""``ToolSearchToolCallingAdvisor``: the drop-in tool loop that shows the model only the tools
it discovered.

Swap it in for ``ToolCallingAdvisor`` and nothing else changes: register all your tools as
before. The advisor is the ``ChatClient``'s front door to the search-session core
(:mod:`toolsearch.search.sessions`), which does the searching for every front door: each
request is one :class:`~toolsearch.search.sessions.SearchRun` on its session (the
``CONVERSATION_ID`` param, or a throwaway session per call), its tools are indexed once per
tool set and session, the model first sees one search tool (plus any pinned tools), every
search adds the tools it found to the session, and every later request carries the search
tool, the pinned tools and the discovered tools, in discovery order (the tool list only
grows at its end). Discovered names live in the session's store, so they survive memory
advisors that trim the history. The advisor itself only maps the loop's hooks onto the run.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal, Unpack

from pydantic import ValidationError

from toolsearch._first_use import preload
from toolsearch._steps import Steps
from toolsearch.chat.messages import UserMessage
from toolsearch.costs import cache_shape
from toolsearch.errors import ToolDefinitionError
from toolsearch.loop.advisor import (
    AdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
)
from toolsearch.loop.eligibility import ToolExecutionEligibilityChecker
from toolsearch.loop.manager import ToolCallingManager, ToolExecutionResult
from toolsearch.loop.tool_calling_advisor import ToolCallingAdvisor
from toolsearch.observe import hash_session_id
from toolsearch.search.advisor_options import OptionViews
from toolsearch.search.advisor_turn import STATE_KEY, Delegated, SearchLoop, turn_steps
from toolsearch.search.events import SearchListener
from toolsearch.search.loaded import LoadedTools
from toolsearch.search.logs.sink import SearchLog
from toolsearch.search.options import (
    ToolSearchOptions,
    ToolSearchOptionsDict,
    options_error,
)
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.sessions import SearchRun, ToolSearchSessions, resolve_index
from toolsearch.search.types import ToolIndex
from toolsearch.search.working_set import change_costs_more
from toolsearch.search.working_set.change_anchor import CARRIED_KEY as _CARRIED_KEY
from toolsearch.search.working_set.change_anchor import CHANGES_KEY as _CHANGES_KEY
from toolsearch.search.working_set.change_anchor import anchored as _anchored
from toolsearch.search.working_set.change_anchor import carried_search as _carried_search
from toolsearch.search.working_set.warm import WarmSetSource
from toolsearch.stores.eviction import EvictionStrategy
from toolsearch.stores.session_store import SessionStore
from toolsearch.tokens import TokenCounter
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import tool_callbacks

__all__ = [
    "DEFAULT_CATEGORY_SUFFIX",
    "DEFAULT_RESULTS_SUFFIX",
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
DEFAULT_RESULTS_SUFFIX = (
    "Only some of your tools are loaded. When you need a capability you do not see among "
    "your tools, call {search_tool_name} with a few words describing it (for example "
    "'send email' or 'weather forecast'); it returns the matching tools with their "
    "parameters, and you call one with {call_tool_name}, giving the tool's name and its "
    "arguments. Search again with other words if nothing fits."
)
"""The system suffix of ``injection="results"``."""
_CATEGORY_SENTENCE = " {tool_count} tools are available in these categories: {categories}."
DEFAULT_CATEGORY_SUFFIX = DEFAULT_SYSTEM_SUFFIX + _CATEGORY_SENTENCE

_log = logging.getLogger(__name__)

_RUN_KEY = "toolsearch.tool_search.run"


class ToolSearchAdvisorKwargs(ToolSearchOptionsDict, total=False):
    """Keyword arguments of :class:`ToolSearchToolCallingAdvisor` besides its objects: the
    :class:`ToolSearchOptions` fields and the :class:`ToolCallingAdvisor` loop options."""

    conversation_history_enabled: bool
    eligibility_checker: ToolExecutionEligibilityChecker | None
    max_iterations: int | None
    stream_mode: Literal["final_answer", "eager"]
    name: str | None


class ToolSearchToolCallingAdvisor(OptionViews, ToolCallingAdvisor):
    """A :class:`ToolCallingAdvisor` that sends the model only the tools it discovered.

    The plain-data options (``max_results``, ``system_message_suffix``,
    ``reference_tool_name_accumulation``, ``session_id_key_name``, ``order``,
    ``search_tool_name``, ``undiscovered_tool_policy``, ``search_results_with_summaries``,
    ``exclude_loaded_tools``, ``multi_query``, ``search``, ``injection``, ``call_tool_name``,
    and the unloading of idle tools: ``max_loaded_tools``, ``unload_idle_turns``,
    ``unload_at``) are the fields of :class:`ToolSearchOptions`, documented and defaulted
    there. Give them as keyword arguments or as one ``options=`` object, not both: an
    option given both ways raises ``TypeError`` (``options.replace(max_results=3)`` makes
    a changed copy). Bad values raise ``ValueError`` (``max_results must be between 1 and
    10``).
    ``advisor.options`` is the effective object, and each option is readable as an
    attribute (``advisor.max_results``).

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
            :class:`~toolsearch.search.builtin_tools.search_tool.ToolSearchEvent` after every search
            (query, hits with scores, hashed session, timing): where a search log
            attaches. More with :meth:`add_search_listener`.
        search_log: A :class:`~toolsearch.search.logs.sink.SearchLog` (a
            :class:`~toolsearch.search.logs.sink.JsonlSearchLog`, say) that receives every
            search and, per turn, the tools the model called: the data of
            ``toolsearch bench --replay`` and ``toolsearch embedder finetune --search-log``.
            It holds the search queries, which are user content. None by default.
        pinned_tools: Tools always sent (names of registered tools, or tools themselves),
            added to ``options.pinned_tools``.
        token_counter: Counts the loaded tools' tokens for :meth:`loaded` (approximate
            words by default; ``BpeTokenCounter`` from ``toolsearch.tokens`` is exact
            for OpenAI's encodings); the working-set policy weighs the same counts.
        warm_set: Where the working set finds the warm tools held after the search tool
            when that pays (:class:`~toolsearch.search.working_set.warm.WarmSetSource`: the usage
            memory, or ``StaticWarmSet([...])``); see :mod:`toolsearch.search.working_set`.
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
        token_counter: TokenCounter | None = None,
        warm_set: WarmSetSource | None = None,
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
        self.sessions = ToolSearchSessions(
            tool_index if tool_index is not None else resolve_index(None),
            eviction_strategy=eviction_strategy,
            store=session_store,
            options=resolved,
            search_listeners=search_listeners,
            search_log=search_log,
            door="advisor",
            token_counter=token_counter,
            warm_set=warm_set,
        )
        self._pinned_callbacks = pinned_callbacks
        preload()  # what a first acall would import on the event loop (jsonschema, otel)

    @property
    def tool_index(self) -> ToolIndex:
        return self.sessions.index

    @property
    def registry(self) -> SessionRegistry:
        return self.sessions.registry

    @property
    def search_log(self) -> SearchLog | None:
        return self.sessions.search_log

    def add_search_listener(self, listener: SearchListener) -> None:
        """Call ``listener`` with a :class:`~toolsearch.search.events.ToolSearchEvent`
        after every search of this advisor's search tool (inside the search's span)."""
        self.sessions.add_search_listener(listener)

    # -- session lifetime around each loop ------------------------------------------------

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        request, run = self._open(request)
        try:
            return super().advise_call(request, _anchored(chain))
        finally:
            run.close()

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> Iterator[ChatClientResponse]:
        request, run = self._open(request)
        try:
            yield from super().advise_stream(request, _anchored(chain))
        finally:
            run.close()

    async def aadvise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        request, run = await self._aopen(request, chain)
        try:
            return await super().aadvise_call(request, _anchored(chain))
        finally:
            await run.aclose()

    async def aadvise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        request, run = await self._aopen(request, chain)
        try:
            async for chunk in super().aadvise_stream(request, _anchored(chain)):
                yield chunk
        finally:
            await run.aclose()

    def _open(self, request: ChatClientRequest) -> tuple[ChatClientRequest, SearchRun]:
        run = self.sessions.open(request.context.get(self.session_id_key_name))
        return request.with_context(**{_RUN_KEY: run}), run

    async def _aopen(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> tuple[ChatClientRequest, SearchRun]:
        """The async loop opens its run and indexes its tools on a worker thread: a new
        tool set (embedded, for a vector index) never blocks the event loop."""
        given = request.context.get(self.session_id_key_name)
        registered = self._registered(self._prepare(request, chain))
        definitions = [] if self._native(chain) else [cb.definition for cb in registered.values()]
        run = await self.sessions.aopen(given, tools=definitions or None)
        return request.with_context(**{_RUN_KEY: run}), run

    # -- hooks ------------------------------------------------------------------------------

    def do_initialize_loop(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientRequest:
        """Register the request's tools with the run and add the system suffix."""
        registered = self._registered(request)
        run = request.context.get(_RUN_KEY)
        if not isinstance(run, SearchRun):  # a context this advisor did not open
            run = self.sessions.open(request.context.get(self.session_id_key_name))
            run.close()  # indexes without a hold, as nothing would release it
        loop = SearchLoop(run, registered, native=self._native(chain))
        if not registered or loop.native:  # the plain advisor's loop (native: the provider's)
            return request.with_context(**{STATE_KEY: loop})
        before = self.sessions.loaded(run.session_id)
        run.register([cb.definition for cb in registered.values()])
        if run.plan.load_all:  # the working set holds every tool: the plain loop
            loop.load_all = True
            return request.with_context(**{STATE_KEY: loop})
        loop.changes = self.sessions.change_tracker(run.session_id)
        if not loop.changes.started and before is not None:  # what the model held before
            loop.changes.update(before.names, 0)
        # earlier requests: seen here, or by another process (the stored change list)
        loop.earlier = before is not None or loop.changes.started
        run.note_request(_last_user_text(request))
        preloaded = run.preload(_last_user_text(request))
        loop.search_tool = run.search_tool()
        loop.call_tool = run.call_tool(loop.registered.get)
        if loop.call_tool is not None:  # results injection: handed over as a search exchange
            loop.changes.carry(preloaded)
        _log.debug(
            "tool search: session %s, %d tools registered, %d pinned",
            hash_session_id(run.session_id),
            len(registered),
            len(run.pinned),
        )
        prompt = request.prompt.augment_system_message(self._suffix(registered))
        return request.with_prompt(prompt).with_context(**{STATE_KEY: loop})

    def do_before_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        """Send the search tool, the pinned tools and the discovered tools."""
        loop: SearchLoop = request.context[STATE_KEY]
        if loop.native:  # every tool, deferred but the pinned ones: the provider searches
            pinned = set(self.options.pinned_tools)
            options = request.prompt.options.replace(
                tool_callbacks=list(loop.registered.values()),
                deferred_tools=[n for n in loop.registered if n not in pinned],
                native_tool_search=True,
            )
            return request.with_prompt(request.prompt.with_options(options))
        if loop.load_all:
            options = request.prompt.options.replace(tool_callbacks=list(loop.registered.values()))
            return request.with_prompt(request.prompt.with_options(options))
        if loop.search_tool is None:  # the request registered no tools
            return request
        names = loop.run.visible_names()
        if self.options.load_all == "auto" and self._change_costs_more(loop, request, names):
            loop.run.mark_discovered(list(loop.registered))  # every tool, for good
            names = loop.run.visible_names()
        visible: list[ToolCallback] = [
            loop.search_tool,
            *([loop.call_tool] if loop.call_tool is not None else []),
            *(loop.registered[n] for n in names if n in loop.registered),
        ]
        own = [cb.definition.name for cb in visible]
        carried = loop.changes.carried if loop.call_tool is not None else []
        if carried and not loop.changes.started:  # what was carried is an addition
            loop.changes.update(own, len(request.prompt.messages))
        changes = loop.changes.update([*own, *carried], len(request.prompt.messages))
        options = request.prompt.options.replace(tool_callbacks=visible)
        if not changes:
            return request.with_prompt(request.prompt.with_options(options))
        if loop.call_tool is not None:  # the additions travel as search exchanges (anchor)
            return request.with_prompt(request.prompt.with_options(options)).with_context(
                **{_CHANGES_KEY: loop.changes, _CARRIED_KEY: _carried_search(loop)}
            )
        # a removed tool stays declared (deferred), as every change must name a declared tool
        shown = {cb.definition.name for cb in visible}
        gone = dict.fromkeys(n for c in changes for n in c.names if n not in shown)
        removed = [loop.registered[n].definition for n in gone if n in loop.registered]
        options = options.replace(tool_changes=changes)
        if removed:
            options = options.replace(deferred_tools=[*options.deferred_tools, *removed])
        # the changes new on this request are placed once the prompt is whole (_ChangeAnchor)
        return request.with_prompt(request.prompt.with_options(options)).with_context(
            **{_CHANGES_KEY: loop.changes}
        )

    def _tool_turn(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> Steps[Delegated, ToolExecutionResult]:
        """The turn, written once for both faces (:func:`~toolsearch.search.advisor_turn.
        turn_steps`)."""
        return turn_steps(
            request,
            response,
            prior_call_counts,
            manager=self.tool_calling_manager,
            call_tool_name=self.call_tool_name,
            log_outcomes=self.search_log is not None,
        )

    # -- internals ------------------------------------------------------------------------

    def _native(self, chain: AdvisorChain) -> bool:
        """Whether this loop leaves the search to the provider: ``search="native"`` and a
        model with a tool search of its own (its ``native_tool_search`` attribute)."""
        return (
            self.search == "native" and getattr(chain.model, "native_tool_search", None) is not None
        )

    def discovered_tools(self, session_id: str) -> list[str]:
        """The tools a session discovered so far, in discovery order."""
        return self.sessions.discovered(session_id)

    def loaded(self, session_id: str) -> LoadedTools | None:
        """The tools the session's model saw on its latest request, each with its tokens
        (:class:`~toolsearch.search.loaded.LoadedTools`); ``None`` before its first."""
        return self.sessions.loaded(session_id)

    def _registered(self, request: ChatClientRequest) -> dict[str, ToolCallback]:
        registered: dict[str, ToolCallback] = {}
        for callback in [*request.prompt.options.tool_callbacks, *self._pinned_callbacks]:
            registered.setdefault(callback.definition.name, callback)
        if self.search_tool_name in registered:
            raise ToolDefinitionError(
                self.search_tool_name,
                "is the tool-search advisor's search tool name; rename the tool or pass "
                "search_tool_name=... to the advisor",
            )
        return registered

    def _change_costs_more(
        self, loop: SearchLoop, request: ChatClientRequest, names: list[str]
    ) -> bool:
        """Whether this request's tool change would cost more than holding every tool from
        now on (:func:`~toolsearch.search.working_set.change_costs_more`, over the
        options' cost model): the earlier turns it would rewrite have grown too long."""
        run = loop.run
        own = [self.search_tool_name, *([self.call_tool_name] if loop.call_tool else [])]
        if loop.call_tool is not None or not loop.changes.differs([*own, *names]):
            return False
        if len(names) >= len(run.tools):
            return False
        count = self.sessions.count_tokens
        held = sum(count(run.tools[n]) for n in names if n in run.tools)
        full = sum(count(d) for d in run.tools.values())
        counter = self.sessions.loaded_tools.counter
        messages = list(request.prompt.messages)
        last_user = max(
            (i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=0
        )
        # only in a session with earlier turns: a one-turn conversation ends before
        # holding every tool could pay back (measured: weighing one-turn conversations
        # too cost 7 points billed on the Acme bench); a memory advisor may add the
        # earlier turns after this advisor, so the session says whether there were any
        if not loop.earlier:
            return False
        history = sum(counter.count(_message_text(m)) for m in messages[:last_user])
        return change_costs_more(
            held=held, history=history, full=full, shape=cache_shape(self.cost_model)
        )

    def _suffix(self, registered: Mapping[str, ToolCallback]) -> str:
        categories = sorted(
            {cb.definition.category for cb in registered.values() if cb.definition.category}
        )
        template = self.system_message_suffix
        if template is None:
            base = DEFAULT_RESULTS_SUFFIX if self.injection == "results" else DEFAULT_SYSTEM_SUFFIX
            template = base + _CATEGORY_SENTENCE if categories else base
        return (
            template.replace("{search_tool_name}", self.search_tool_name)
            .replace("{call_tool_name}", self.call_tool_name)
            .replace("{categories}", ", ".join(categories) or "none")
            .replace("{tool_count}", str(len(registered)))
        )


def _last_user_text(request: ChatClientRequest) -> str:
    """The text of the request's latest user message (what pre-retrieval searches)."""
    for message in reversed(request.prompt.messages):
        if isinstance(message, UserMessage):
            return message.text or ""
    return ""


def _message_text(message: Any) -> str:
    """What a message weighs in the prompt, roughly: its text, its calls' arguments and
    its tool results (for the working set's estimate of the history a change rewrites)."""
    parts = [getattr(message, "text", "") or ""]
    parts += [f"{c.name} {c.arguments}" for c in getattr(message, "tool_calls", ())]
    parts += [r.response_data for r in getattr(message, "responses", ())]
    return " ".join(p for p in parts if isinstance(p, str))
