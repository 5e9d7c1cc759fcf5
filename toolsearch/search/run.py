"""One run on one session: :class:`SearchRun`, the part of the search-session core a front
door talks to while a run goes on (see :mod:`toolsearch.search.sessions`).

A run registers its tools (indexed once per tool set and session), says what the model sees
(pinned, discovered, visible), searches (sync, or async on a worker thread), checks the
model's calls against the undiscovered-call policy, maps names to a provider's wire names,
and reports every search to its owner's sinks (spans, listeners, search log).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import toolsearch.observe as hooks
from toolsearch.chat.messages import ToolSearchHit
from toolsearch.costs import Traffic, cache_shape
from toolsearch.errors import InvalidToolArgumentsError, ToolDefinitionError, ToolIndexError
from toolsearch.models.wire_names import NameRule, WireNames
from toolsearch.search.builtin_tools.call_tool import CallTool, unwrap_call
from toolsearch.search.builtin_tools.results import render_result
from toolsearch.search.builtin_tools.search_tool import ToolSearchTool
from toolsearch.search.events import ToolSearchEvent
from toolsearch.search.loaded import LoadedTools
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.run_types import CallDecision, RunOwner, SearchResult, merge_hits
from toolsearch.search.session_ref import (
    EPHEMERAL_PREFIX,
    SessionRef,
    resolve_session,
    run_in_thread,
)
from toolsearch.search.types import ToolSearchRequest
from toolsearch.search.working_set import WorkingSetPlan, plan_working_set
from toolsearch.search.working_set.unloading import choose_unloads
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "EPHEMERAL_PREFIX",
    "CallDecision",
    "RunOwner",
    "SearchResult",
    "SearchRun",
    "SessionRef",
    "resolve_session",
]

_log = logging.getLogger(__name__)


class SearchRun:
    """One run on one session: its tools, what the model sees, its searches and calls.

    Made by :meth:`ToolSearchSessions.open`. Safe to search from several threads at once
    (parallel tool calls); :meth:`close` once, when the run ends.
    """

    def __init__(
        self, sessions: RunOwner[SearchRun], ref: SessionRef, rule: NameRule | None
    ) -> None:
        self.sessions = sessions
        self.session_id = ref.session_id
        self.ephemeral = ref.ephemeral
        self.rule = rule
        self.index_key: str | None = None
        """Where the run's tools are indexed (the session's key for this tool set)."""
        self.user_request: str | None = None
        """The user's request of the current turn, when the front door knows it: the search
        log carries it beside each search, so learning from use can learn the user's own
        words for a tool the model found by searching in other words."""
        self.tools: dict[str, ToolDefinition] = {}
        self.pinned: list[str] = []
        self.visible_count: int | None = None
        """How many tools the model saw on the latest request (searches report it)."""
        self.loaded_view: LoadedTools | None = None
        """The tools the model saw on the latest request, with their tokens."""
        self._names: WireNames | None = None
        self._discovered: list[str] = []
        self._last_round: list[str] = []
        self._current_round: list[str] | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._holds: list[str] = []
        self._fingerprints: frozenset[str] | None = None
        self.turn: int | None = None
        """The session's turn this run is (counted once, at the first registration)."""
        self.plan: WorkingSetPlan = WorkingSetPlan(False)
        """The working set this run's tool set starts from (every tool, or a warm set)."""
        sessions.registry.acquire(self.session_id, tracked=not self.ephemeral)

    # -- registration -----------------------------------------------------------------------

    @property
    def options(self) -> ToolSearchOptions:
        return self.sessions.options

    @property
    def definitions(self) -> list[ToolDefinition]:
        return list(self.tools.values())

    def register(self, tools: Sequence[ToolDefinition], pinned: Iterable[str] = ()) -> None:
        """Index the run's tools for the session (once per tool set) and read what the
        session discovered. Registering the same tool set again does nothing; pinned names
        the tools do not include are skipped (tool sets vary by request)."""
        definitions: dict[str, ToolDefinition] = {}
        for tool in tools:
            if tool.name in definitions and definitions[tool.name] != tool:
                raise ToolDefinitionError(tool.name, "two different tools have this name")
            definitions.setdefault(tool.name, tool)
        search_name = self.sessions.search_tool_name
        if search_name in definitions:
            raise ToolDefinitionError(
                search_name,
                "is the search tool's name; rename the tool or choose another search_tool_name",
            )
        call_name = self.sessions.call_tool_name
        if call_name is not None and call_name in definitions:
            raise ToolDefinitionError(
                call_name,
                "is the call tool's name; rename the tool or choose another call_tool_name",
            )
        own_tools = [search_name] if call_name is None else [search_name, call_name]
        fingerprints = frozenset(t.fingerprint for t in definitions.values())
        wanted_pins = [*self.options.pinned_tools, *pinned]
        pins = [n for n in dict.fromkeys(wanted_pins) if n in definitions]
        if fingerprints == self._fingerprints:
            self.pinned = pins
            return
        registry = self.sessions.registry
        key = registry.use_tools(self.session_id, list(definitions.values()))
        if self.turn is None and self._unloading:
            self.turn = registry.begin_turn(self.session_id)
        discovered = registry.discovered(self.session_id)
        with self._lock:
            self._holds.append(key)
            self.index_key = key
            self.tools = definitions
            self.pinned = pins
            self._fingerprints = fingerprints
            self._discovered = list(discovered)
            self._names = WireNames(self.rule, [*own_tools, *definitions]) if self.rule else None
        self.plan = self._plan()
        if self.options.unload_at == "turn":
            self.unload_idle()

    def _plan(self) -> WorkingSetPlan:
        """The working set of this tool set (:func:`~toolsearch.search.working_set.
        plan_working_set`), over the options' cost model and traffic."""
        options = self.options
        if options.load_all == "never" and (
            not options.warm_tools or self.sessions.warm_set is None
        ):
            return WorkingSetPlan(False)
        definitions = list(self.tools.values())
        warm = []
        source = self.sessions.warm_set
        if source is not None and options.warm_tools:
            try:
                warm = list(source.warm_tools(definitions, limit=options.warm_tools))
            except Exception:  # a source never breaks a run: no warm set then
                _log.warning("warm set source %r failed", source, exc_info=True)
        return plan_working_set(
            definitions,
            search_definition=self.sessions.search_definition(),
            tokens=self.sessions.count_tokens,
            shape=cache_shape(options.cost_model),
            traffic=Traffic(options.traffic_seconds),
            max_results=options.max_results,
            load_all=options.load_all,
            warm=warm,
        )

    def note_request(self, text: str | None) -> None:
        """Remember the user's request of the turn (see :attr:`user_request`)."""
        self.user_request = (text or "").strip() or None

    def preload(self, text: str) -> list[str]:
        """Pre-retrieval: search the user's message (the whole text, then its clauses)
        before the first model call and load the confident hits (each query's hits
        scoring at least ``preload_min_score`` of its best one, ``preload_results`` at
        most); returns the tools newly loaded. Nothing when the option is off, every tool
        is loaded, or the text is empty. With ``injection="results"`` the advisor hands
        the preloaded definitions to the model as a search exchange
        (:class:`~toolsearch.search.working_set.change_anchor.CarriedSearch`)."""
        from toolsearch.indexes.clauses import split_clauses

        limit = self.options.preload_results
        text = text.strip()
        if not limit or self.plan.load_all or not text or self.index_key is None:
            return []
        queries = list(dict.fromkeys([text, *split_clauses(text)]))
        ratio = self.options.preload_min_score
        wanted: list[str] = []
        for query in queries:
            hits, error, _ = self._search_one(query, limit)
            if error is not None or not hits:
                continue
            best = hits[0].score or 0.0
            wanted += [h.name for h in hits if best <= 0 or (h.score or 0.0) >= ratio * best]
        return self.mark_discovered(wanted)

    # -- what the model sees ----------------------------------------------------------------

    @property
    def discovered(self) -> list[str]:
        """The session's discoveries among this run's tools, in discovery order."""
        with self._lock:
            return [n for n in self._discovered if n in self.tools]

    def loaded(self) -> list[str]:
        """The tools the model keeps seeing whatever it searches next: pinned, plus the
        discovered ones when accumulation is on (without it, a new round replaces them)."""
        held = self.held()
        if not self.options.reference_tool_name_accumulation:
            return held
        return [*held, *(n for n in self.discovered if n not in held)]

    def held(self) -> list[str]:
        """The tools held whatever the model searches: the pinned ones, then the warm set
        (when the working set holds one), or every tool when it loads them all."""
        if self.plan.load_all:
            return [*self.pinned, *(n for n in self.tools if n not in self.pinned)]
        warm = [n for n in self.plan.warm if n in self.tools and n not in self.pinned]
        return [*self.pinned, *warm]

    def visible_names(self) -> list[str]:
        """This request's tools besides the search tool: the pinned ones, then the
        discovered ones (every one, or the last round's without accumulation), in
        discovery order so the list only grows at its end. With ``injection="results"``
        the pinned ones alone (the call tool reaches the discovered ones)."""
        if self.sessions.call_tool_name is not None:
            shown: list[str] = []
        elif self.options.reference_tool_name_accumulation:
            shown = self.discovered
            if len(shown) >= len(self.tools):  # every tool loaded: the canonical order,
                shown = list(self.tools)  # the same list in every session (cacheable)
        else:
            with self._lock:
                shown = [n for n in self._last_round if n in self.tools]
        held = self.held()
        names = [*held, *(n for n in shown if n not in held)]
        self.visible_count = len(names) + (1 if self.sessions.call_tool_name is None else 2)
        self.loaded_view = self.sessions.report_loaded(self, names)
        return names

    def visible_definitions(self) -> list[ToolDefinition]:
        """The search tool's definition, the call tool's (``injection="results"``), then
        those of :meth:`visible_names`."""
        call = self.sessions.call_definition()
        return [
            self.sessions.search_definition(),
            *([call] if call is not None else []),
            *(self.tools[n] for n in self.visible_names()),
        ]

    def search_tool(self) -> ToolSearchTool:
        """The search tool as a ``ToolCallback`` bound to this run."""
        native = self.sessions.call_tool_name is None  # results mode: its text is the point
        return ToolSearchTool(self, self.sessions.search_definition(), native=native)

    def call_tool(self, lookup: Callable[[str], ToolCallback | None]) -> CallTool | None:
        """The call tool (``injection="results"``) as a ``ToolCallback`` bound to this run,
        running the callbacks ``lookup`` finds by name; ``None`` without it."""
        definition = self.sessions.call_definition()
        return CallTool(definition, self.unwrap_call, lookup) if definition else None

    def unwrap_call(self, input_json: str | None) -> tuple[CallDecision, str]:
        """A call of the call tool: the decision on the tool it names (as
        :meth:`check_call` makes it, every discovered tool callable) and that tool's
        arguments as JSON; arguments that name no tool are refused with the reason."""
        name = self.sessions.call_tool_name or ""
        try:
            through = unwrap_call(name, input_json)
        except InvalidToolArgumentsError as exc:
            return CallDecision(self.wire(name), False, str(exc), kind="unknown"), ""
        decision = self.check_call(through.name, visible=self.loaded())
        return decision, through.arguments

    # -- wire names -------------------------------------------------------------------------

    def wire(self, name: str) -> str:
        """The name the provider sees for the tool ``name`` (unchanged without a rule)."""
        return self._names.wire(name) if self._names is not None else name

    def real(self, name: str) -> str:
        """The tool's own name for a name the model used (unknown names unchanged)."""
        return self._names.real(name) if self._names is not None else name

    @property
    def wire_names(self) -> WireNames | None:
        """The run's mapping of every tool name to its wire name (``None`` without a rule)."""
        return self._names

    # -- searching --------------------------------------------------------------------------

    def search(
        self,
        queries: str | Sequence[str],
        max_results: int | None = None,
        *,
        exclude: Iterable[str] = (),
    ) -> SearchResult:
        """Search the run's tools: each query on its own, hits merged rank by rank, each a
        tool the model does not see yet (a query naming a tool exactly still finds it);
        ``exclude`` adds tools the framework knows the model has (pydantic-ai's discovered
        tools, LangGraph's selected ones), left out the same way.
        The hits join the session's discoveries. An index that refuses every query (a bad
        pattern) gives its error for the model; nothing raises for a model's input."""
        texts = [queries] if isinstance(queries, str) else list(queries)
        extra = frozenset(self.real(n) for n in exclude)
        limit = max_results if max_results is not None else self.options.max_results
        if self.index_key is None:
            return SearchResult()
        found: list[list[ToolSearchHit]] = []
        first_error: dict[str, Any] | None = None
        total = 0
        for text in texts:
            hits, error, matches = self._search_one(self.real(text.strip()), limit, extra)
            if error is not None:
                first_error = first_error or error
            else:
                found.append(hits)
                total = max(total, matches)
        if not found and first_error is not None:
            return SearchResult(error=first_error)
        merged = merge_hits(found)
        self.mark_discovered([hit.name for hit in merged])
        return SearchResult(hits=merged, total_matches=total)

    async def asearch(
        self,
        queries: str | Sequence[str],
        max_results: int | None = None,
        *,
        exclude: Iterable[str] = (),
    ) -> SearchResult:
        """:meth:`search` on a worker thread (the span and context variables go along)."""
        result: SearchResult = await run_in_thread(
            partial(self.search, exclude=tuple(exclude)), queries, max_results
        )
        return result

    def render(self, result: SearchResult) -> str:
        """A search's result as the model reads it (:func:`~toolsearch.search.builtin_tools.results.
        render_result`: names, names with summaries, or definitions with
        ``injection="results"``), under the run's wire names."""
        carried = self.tools if self.sessions.call_tool_name is not None else None
        summaries = self.options.search_results_with_summaries
        return render_result(result, self.wire, summaries=summaries, definitions=carried)

    def _skipped(self, query: str, extra: frozenset[str]) -> frozenset[str]:
        """What a search leaves out: the loaded tools (with ``exclude_loaded_tools``) and
        the caller's ``extra``, but never a tool the query names exactly."""
        loaded = self.loaded() if self.options.exclude_loaded_tools else []
        wanted = query.casefold()
        return frozenset(n for n in [*loaded, *extra] if n.casefold() != wanted)

    def _search_one(
        self, query: str, limit: int, extra: frozenset[str] = frozenset()
    ) -> tuple[list[ToolSearchHit], dict[str, Any] | None, int]:
        """One query: its hits, or the index's error, and how many tools matched."""
        assert self.index_key is not None
        index = self.sessions.index
        skipped = self._skipped(query, extra)
        request = ToolSearchRequest(self.index_key, query, limit, exclude=skipped)
        started, clock = time.time(), time.perf_counter()
        outcome: tuple[list[ToolSearchHit], dict[str, Any] | None]
        with hooks.search_span(
            index,
            session_id=self.session_id,
            query=query,
            limit=limit,
            visible_tools=self.visible_count,
            registered_tools=len(self.tools),
            door=self.sessions.door or None,
            loaded_tokens=self.loaded_view.tokens if self.loaded_view is not None else None,
        ) as span:
            try:
                response = index.search(request)
            except ToolIndexError as exc:
                _log.debug("tool search refused the query: %s", exc.code)
                span.error(exc.code)
                outcome = [], exc.to_tool_result()
                search_type, total = "", 0
            else:
                references = [
                    ref
                    for ref in response.tool_references
                    if ref.tool_name in self.tools and ref.tool_name not in skipped
                ][:limit]
                span.hits(
                    [ref.tool_name for ref in references],
                    [ref.relevance_score for ref in references],
                    search_type=response.metadata.search_type,
                    total_matches=response.total_matches,
                )
                hits = [
                    ToolSearchHit(
                        name=ref.tool_name, summary=ref.summary or None, score=ref.relevance_score
                    )
                    for ref in references
                ]
                outcome = hits, None
                search_type, total = response.metadata.search_type, response.total_matches
            event = ToolSearchEvent(
                timestamp=started,
                session_id=self.session_id,
                index_key=self.index_key,
                query=query,
                limit=limit,
                index=type(index).__name__,
                search_type=search_type,
                hits=tuple(outcome[0]),
                total_matches=total,
                visible_tools=self.visible_count,
                duration_ms=(time.perf_counter() - clock) * 1000,
                error=outcome[1]["error"] if outcome[1] else None,
                door=self.sessions.door,
            )
            found = {hit.name for hit in outcome[0]}
            loaded = [n for n in self.loaded() if n in skipped and n not in found]
            self.sessions.report_search(event, self, loaded)
        return outcome[0], outcome[1], total

    # -- discoveries, rounds and calls ------------------------------------------------------

    def mark_discovered(self, names: Iterable[str]) -> list[str]:
        """Add tools to the session's discoveries (store first, then this run's copy);
        returns the names that were new to the session."""
        wanted = [n for n in dict.fromkeys(names) if n in self.tools]
        if not wanted:
            return []
        added = self.sessions.registry.mark_discovered(self.session_id, wanted)
        with self._lock:
            self._discovered.extend(n for n in wanted if n not in self._discovered)
            if self._current_round is not None:
                self._current_round.extend(n for n in wanted if n not in self._current_round)
        if added:  # the tool list changes anyway: the moment to unload (cache-aware)
            self.unload_idle(keep=wanted)
        return added

    @property
    def _unloading(self) -> bool:
        """Whether an unloading option is on (turns are counted and uses stamped only then:
        with it off, a run costs the store nothing more)."""
        options = self.options
        return options.reference_tool_name_accumulation and (
            options.unload_idle_turns is not None or options.max_loaded_tools is not None
        )

    def unload_idle(self, keep: Iterable[str] = ()) -> list[str]:
        """Apply the unloading options (``unload_idle_turns``, ``max_loaded_tools``) to the
        session's discoveries, never to pinned tools or to ``keep`` (a search's new hits):
        first every tool idle for ``unload_idle_turns`` turns, then, past
        ``max_loaded_tools``, the least recently used (oldest discovery first among
        equals). Returns the tools unloaded (the store's answer)."""
        if not self._unloading:
            return []
        held = set(self.held())
        if len(self.discovered) >= len(self.tools):
            return []  # the working set loaded every tool for good: nothing to unload
        candidates = [n for n in self.discovered if n not in held]
        if not candidates:
            return []
        doomed = choose_unloads(
            candidates,
            self.sessions.registry.last_used(self.session_id),
            self.turn or 0,
            idle_turns=self.options.unload_idle_turns,
            cap=self.options.max_loaded_tools,
            keep=keep,
        )
        if not doomed:
            return []
        gone = self.sessions.registry.unload(self.session_id, doomed)
        with self._lock:
            removed = set(gone)
            self._discovered = [n for n in self._discovered if n not in removed]
        _log.debug("unloaded %d idle tools: %s", len(gone), ", ".join(gone))
        return gone

    def begin_turn(self, searching: bool) -> None:
        """A turn of tool calls starts; ``searching``: it holds a search call (its hits
        make the new round of a run without accumulation)."""
        with self._lock:
            self._current_round = [] if searching else None

    def end_turn(self) -> None:
        """The turn's calls ran: its searches' hits become the last round."""
        with self._lock:
            if self._current_round is not None:
                self._last_round = self._current_round
                self._current_round = None

    def check_call(self, name: str, *, visible: Iterable[str] | None = None) -> CallDecision:
        """Whether to run the model's call of ``name`` (a wire name is mapped back).

        The search tool and the tools on the request (``visible``, by default
        :meth:`visible_names`) run; a registered tool the model has not discovered runs and
        counts as discovered under the ``"execute"`` policy, and is refused with a hint to
        search first under ``"hint"``; a name no tool has is refused with a message naming
        the search tool. A refused call is answered, never raised."""
        own = self.real(name)
        if own == self.sessions.search_tool_name:
            return CallDecision(own, True, kind="search")
        shown = set(visible) if visible is not None else set(self.visible_names())
        if own in shown:
            return CallDecision(own, True, kind="visible")
        if own in self.tools and self.options.undiscovered_tool_policy == "execute":
            self.mark_discovered([own])
            return CallDecision(own, True, kind="discovered_by_call")
        if own in self.tools:
            _log.debug("the model called %r before discovering it", own)
            return CallDecision(own, False, self.undiscovered_hint(own), kind="undiscovered")
        _log.debug("the model called %r, which no registered tool has", own)
        return CallDecision(own, False, self.unknown_hint(name), kind="unknown")

    def undiscovered_hint(self, name: str) -> str:
        """What the model reads when it calls a tool it has not discovered (policy "hint")."""
        return (
            f"Tool {self.wire(name)!r} is not loaded yet. Call "
            f"{self.wire(self.sessions.search_tool_name)} to find it first (an exact tool "
            "name works as the query), then call it."
        )

    def unknown_hint(self, name: str) -> str:
        """What the model reads when it calls a name that no registered tool has."""
        return (
            f"Error: there is no tool named {name!r}. Call "
            f"{self.wire(self.sessions.search_tool_name)} with a description of what you "
            "need to find the available tools."
        )

    def record_calls(self, names: Sequence[str], *, defer_log: bool = False) -> None:
        """The tools the model called on one turn (the search tool left out): the search
        log's labels. ``defer_log``: the caller reports them to the search log itself, with
        their outcomes, once they ran (:meth:`record_outcomes`)."""
        called = [n for n in names if n != self.sessions.search_tool_name]
        if called and self._unloading:
            self.sessions.registry.mark_used(self.session_id, called)
        if not defer_log:
            self.sessions.report_calls(self, called)

    def record_outcomes(self, names: Sequence[str], ok: Sequence[bool], started: float) -> None:
        """The search log's record of one turn's calls, written once they ran: ``ok`` says,
        per name, whether its call succeeded; ``started`` is when the turn's calls were
        planned (searches that began later, in the same turn, did not lead to them)."""
        search_tool = self.sessions.search_tool_name
        pairs = [(n, bool(flag)) for n, flag in zip(names, ok, strict=True) if n != search_tool]
        self.sessions.report_calls(
            self, [n for n, _ in pairs], ok=[flag for _, flag in pairs], started=started
        )

    # -- life -------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the session (and drop it when it was a throwaway one). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            holds = list(self._holds)
        registry = self.sessions.registry
        registry.release(self.session_id, holds)
        if self.ephemeral:
            registry.evict_session(self.session_id)
            self.sessions.forget_loaded(self.session_id)

    async def aclose(self) -> None:
        """:meth:`close` on a worker thread (a throwaway session's index keys are freed
        there)."""
        await run_in_thread(self.close)

    def __enter__(self) -> SearchRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = "throwaway" if self.ephemeral else "session"
        return f"SearchRun({kind} {self.session_id!r}, {len(self.tools)} tools)"
