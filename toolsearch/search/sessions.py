"""The search-session core: the one search path behind every front door.

Every way into toolsearch's tool search (the :class:`ToolSearchToolCallingAdvisor`, the
pydantic-ai strategy, the LangGraph retriever and agent, the LangChain middleware, the
OpenAI Agents SDK tools, the plain-SDK loop helper, the MCP proxy) turns its framework's
objects into toolsearch definitions and hands them to this core; none re-implements a part
of it. :class:`ToolSearchSessions` (one per front-door object) holds the index, the session
registry and its store, the options, the listeners and the search log;
:class:`SearchRun` is one run (one agent run, one loop, one turn of a hand-written loop)
on one session:

* **session resolution** (:func:`resolve_session`): an explicit id, else the framework's
  own session or conversation id, else a throwaway session for this run alone, dropped when
  it closes (never a default shared by unrelated runs);
* **registration**: a run's tools are indexed once per tool set and session, through the
  registry's :class:`~toolsearch.stores.session_store.SessionStore` (leases, eviction);
* **search**, sync and async: :meth:`SearchRun.asearch` and :meth:`ToolSearchSessions.aopen`
  run ranking, embedding and indexing on a worker thread, never on the event loop; several
  queries are searched one by one and merged rank by rank; tools the
  model already sees are left out;
* **discovered, pinned and visible tools** from one source: the store, read once when the
  run registers its tools and written on every discovery (the run keeps its copy in step);
* **wire names**: given a provider's name rule, the run maps every tool name to the name
  that provider accepts, stable for the whole tool set, and speaks those names in search
  results, tool lists and call checks (:meth:`SearchRun.wire`, :meth:`SearchRun.real`);
* the **undiscovered-call policy** (:meth:`SearchRun.check_call`);
* **spans and metrics** (``retrieval {index}``), **listeners** and the **search log**.

Data flows one way: a front door calls the run; the run calls the registry, the index,
the telemetry hooks and the sinks; nothing calls back up into the front door.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from typing import TypedDict, Unpack

from toolsearch.models.providers import PROVIDERS, provider_names
from toolsearch.models.wire_names import NameRule
from toolsearch.search.builtin_tools.call_tool import call_tool_definition
from toolsearch.search.builtin_tools.search_tool import search_tool_definition
from toolsearch.search.events import SearchListener, ToolSearchEvent
from toolsearch.search.loaded import LoadedTools, LoadedTracker
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch, SearchLog
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.run import CallDecision, SearchResult, SearchRun
from toolsearch.search.session_ref import SessionRef, resolve_session, run_in_thread
from toolsearch.search.types import ToolIndex
from toolsearch.search.working_set import ChangeTracker
from toolsearch.search.working_set.warm import WarmSetSource
from toolsearch.stores.eviction import EvictionStrategy
from toolsearch.stores.session_store import SessionStore
from toolsearch.tokens import TokenCounter
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "NAME_RULES",
    "OpenOptions",
    "PORTABLE_NAMES",
    "CallDecision",
    "SearchResult",
    "SearchRun",
    "SessionRef",
    "ToolSearchSessions",
    "name_rule",
    "resolve_index",
    "resolve_session",
]

_log = logging.getLogger(__name__)

PORTABLE_NAMES = NameRule("portable", "a-zA-Z0-9_-", 64, first="a-zA-Z_")
"""Names every provider accepts (OpenAI's and Anthropic's characters, Gemini's first
character): for a front door whose framework may send the tools to any provider."""

NAME_RULES: dict[str, NameRule] = {
    "portable": PORTABLE_NAMES,
    **{row.name: row.names for row in PROVIDERS},
}
"""Provider -> the rule its tool names follow: each row of the providers table
(:data:`toolsearch.models.providers.PROVIDERS`), and ``portable``."""


def name_rule(provider: NameRule | str | None) -> NameRule | None:
    """A provider's name rule: a :class:`NameRule` as is, a provider name looked up in
    :data:`NAME_RULES`, ``None`` for none (names as the tools have them)."""
    if provider is None or isinstance(provider, NameRule):
        return provider
    rule = NAME_RULES.get(provider)
    if rule is not None:
        return rule
    from toolsearch.models.providers import provider as provider_row  # installed ones too

    try:
        return provider_row(provider).names
    except ValueError:
        known = ", ".join(sorted({*NAME_RULES, *provider_names()}))
        raise ValueError(f"unknown provider {provider!r}: use one of {known}") from None


def resolve_index(index: ToolIndex | str | None) -> ToolIndex:
    """An index object as is; an index spec (``"bm25"``, ``"hybrid:static"``...) built
    with :func:`~toolsearch.indexes.make_index`; ``None``: the default index (BM25 with
    ``toolsearch[bm25]``, else regex, with a warning)."""
    # The one import up a floor (the index backends stand above the search core, which
    # defines the ToolIndex protocol they implement): every front door takes an index by
    # name, so the names' table is read here, when a name is given; nothing else is.
    from toolsearch.indexes import specs

    if index is None:
        return specs.default_index()
    if isinstance(index, str):
        return specs.make_index(index)
    return index


class OpenOptions(TypedDict, total=False):
    """The keywords of :meth:`ToolSearchSessions.open` (and ``aopen``) besides the session."""

    tools: Sequence[ToolDefinition] | None
    pinned: Iterable[str]
    provider: NameRule | str | None


class ToolSearchSessions:
    """The search-session core of one front door: index, sessions, options and sinks.

    Args:
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``...) or ``None`` for
            the default index (:func:`resolve_index`).
        registry: A :class:`SessionRegistry` to share with other front doors (its index is
            then the index: give ``registry`` or ``index``/``store``/``eviction_strategy``).
        store: The session store of a new registry (``RedisSessionStore`` to share
            discoveries between processes).
        eviction_strategy: The eviction of the default in-memory store.
        options: The plain-data options (:class:`ToolSearchOptions`): max results, search
            tool name, accumulation, exclusion of loaded tools, undiscovered-call policy...
        search_listeners: Called with a :class:`ToolSearchEvent` after every search.
        search_log: A :class:`~toolsearch.search.logs.sink.SearchLog` receiving every
            search and the tools then called.
        door: The front door's name, as events and spans report it.
        token_counter: Counts the loaded tools' tokens for :meth:`loaded` (approximate
            words by default).
        warm_set: The working set's warm-set source
            (:class:`~toolsearch.search.working_set.warm.WarmSetSource`); the options'
            ``warm_tools`` caps it.
    """

    def __init__(
        self,
        index: ToolIndex | str | None = None,
        *,
        registry: SessionRegistry | None = None,
        store: SessionStore | None = None,
        eviction_strategy: EvictionStrategy | None = None,
        options: ToolSearchOptions | None = None,
        search_listeners: Sequence[SearchListener] = (),
        search_log: SearchLog | None = None,
        door: str = "",
        token_counter: TokenCounter | None = None,
        warm_set: WarmSetSource | None = None,
    ) -> None:
        if registry is not None and (
            index is not None or store is not None or eviction_strategy is not None
        ):
            raise TypeError("give registry, or index/store/eviction_strategy, not both")
        self.registry = (
            registry
            if registry is not None
            else SessionRegistry(resolve_index(index), eviction_strategy, store=store)
        )
        self.options = options if options is not None else ToolSearchOptions()
        if door not in ("advisor", ""):
            if self.options.injection != "tools":
                raise ValueError(
                    f"injection={self.options.injection!r} is the tool-search advisor's: the "
                    f"{door} front door adds discovered tools to the tool list "
                    "(injection='tools')"
                )
            if self.options.search != "toolsearch":
                raise ValueError(
                    "search='native' is the tool-search advisor's: the "
                    f"{door} front door runs toolsearch's own search (search='toolsearch')"
                )
        self.search_log = search_log
        self.door = door
        self._listeners: list[SearchListener] = list(search_listeners)
        self._definitions: dict[tuple[str, ...], ToolDefinition] = {}
        self.loaded_tools = LoadedTracker(token_counter)
        """The latest tools each session's model saw (:meth:`loaded`); a session's view
        goes when the registry forgets the session (issue 47: bounded by the eviction)."""
        self._changes: dict[str, ChangeTracker] = {}
        self._changes_lock = threading.Lock()
        self.registry.add_forget_listener(self._forget_session)
        self.warm_set = warm_set
        """Where the working set finds each tool set's warm tools (the usage memory, a
        :class:`~toolsearch.search.working_set.warm.StaticWarmSet`), or ``None``."""

    def count_tokens(self, definition: ToolDefinition) -> int:
        """A definition's tokens, as the loaded view counts them (cached by fingerprint)."""
        return self.loaded_tools.count(definition)

    @property
    def index(self) -> ToolIndex:
        return self.registry.index

    @property
    def search_tool_name(self) -> str:
        return self.options.search_tool_name

    def search_definition(self) -> ToolDefinition:
        """The search tool's definition as the model receives it."""
        multi, call = self.options.multi_query, self.call_tool_name
        key = ("search", self.search_tool_name, str(multi), call or "")
        if key not in self._definitions:  # keyed by the options: they may be replaced
            self._definitions[key] = search_tool_definition(
                self.search_tool_name, multi_query=multi, call_tool_name=call
            )
        return self._definitions[key]

    @property
    def call_tool_name(self) -> str | None:
        """The call tool's name with ``injection="results"``, else ``None``."""
        return self.options.call_tool_name if self.options.injection == "results" else None

    def call_definition(self) -> ToolDefinition | None:
        """The call tool's definition with ``injection="results"``, else ``None``."""
        name = self.call_tool_name
        if name is None:
            return None
        if ("call", name) not in self._definitions:
            self._definitions["call", name] = call_tool_definition(name)
        return self._definitions["call", name]

    def add_search_listener(self, listener: SearchListener) -> None:
        """Call ``listener`` with a :class:`ToolSearchEvent` after every search."""
        self._listeners.append(listener)

    # -- runs -------------------------------------------------------------------------------

    def open(
        self,
        session: SessionRef | str | None = None,
        *,
        tools: Sequence[ToolDefinition] | None = None,
        pinned: Iterable[str] = (),
        provider: NameRule | str | None = None,
    ) -> SearchRun:
        """Start a run on ``session`` (a :class:`SessionRef`, an id, or ``None`` for a
        throwaway session), registering ``tools`` when given. Close it (or use it as a
        context manager) when the run ends: that releases the session, and drops a
        throwaway one."""
        ref = session if isinstance(session, SessionRef) else resolve_session(session)
        run = SearchRun(self, ref, name_rule(provider))
        if tools is not None:
            try:
                run.register(tools, pinned)
            except BaseException:
                run.close()
                raise
        return run

    async def aopen(
        self, session: SessionRef | str | None = None, **options: Unpack[OpenOptions]
    ) -> SearchRun:
        """:meth:`open` on a worker thread (the same keywords): indexing a new tool set
        (embedding it, for a vector index) never blocks the event loop."""
        run: SearchRun = await run_in_thread(self.open, session, **options)
        return run

    def discovered(self, session_id: str) -> list[str]:
        """The tools a session discovered so far, in discovery order (from the store)."""
        return self.registry.discovered(session_id)

    def loaded(self, session_id: str) -> LoadedTools | None:
        """The tools the session's model saw on its latest request in this process (the
        search tool, the pinned and the discovered tools, each with its tokens), or
        ``None`` before its first request (:mod:`toolsearch.search.loaded`)."""
        return self.loaded_tools.get(session_id)

    # -- sinks (the run reports here; nothing here calls a front door) ---------------------

    def report_search(self, event: ToolSearchEvent, run: SearchRun, loaded: Sequence[str]) -> None:
        if self.search_log is not None:
            try:
                self.search_log.record_search(
                    LoggedSearch.from_event(
                        event, tools=run.definitions, loaded=loaded, request=run.user_request
                    )
                )
            except Exception:
                _log.warning("search log %r failed", self.search_log, exc_info=True)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                _log.warning("tool-search listener %r failed", listener, exc_info=True)

    def report_calls(
        self,
        run: SearchRun,
        names: Sequence[str],
        *,
        ok: Sequence[bool] | None = None,
        started: float | None = None,
    ) -> None:
        """One turn's calls to the search log: ``ok`` says, per name, whether its call
        succeeded (``None``: not known); ``started`` when the turn's calls were planned."""
        if self.search_log is None or not names or run.index_key is None:
            return
        at = time.time() if started is None else started
        try:
            self.search_log.record_calls(
                LoggedCalls.of(run.session_id, run.index_key, names, at, ok=ok)
            )
        except Exception:
            _log.warning("search log %r failed", self.search_log, exc_info=True)

    def report_loaded(self, run: SearchRun, names: Sequence[str]) -> LoadedTools:
        definitions = [run.tools[n] for n in names if n in run.tools]
        return self.loaded_tools.update(
            run.session_id,
            self.search_definition(),
            definitions,
            run.pinned,
            call_tool=self.call_definition(),
            wire=run.wire,
        )

    def note_loaded(
        self,
        session_id: str,
        definitions: Sequence[ToolDefinition],
        pinned: Sequence[str] = (),
        search_tool: ToolDefinition | None = None,
    ) -> LoadedTools:
        """Record what a session's model sees, for a door whose framework decides it (the
        LangGraph state's selected tools, pydantic-ai's discovered ones): ``definitions``
        besides the search tool (``search_tool``: the framework's own, when it has one)."""
        return self.loaded_tools.update(
            session_id, search_tool or self.search_definition(), definitions, pinned
        )

    def forget_loaded(self, session_id: str) -> None:
        self.loaded_tools.forget(session_id)

    def change_tracker(self, session_id: str) -> ChangeTracker:
        """The session's tool changes so far (:class:`~toolsearch.search.working_set.
        ChangeTracker`), created on first use: one list per conversation, so every request
        repeats every earlier change at its place (the ``ToolChange`` contract).

        The list is part of the session's stored state
        (:meth:`~toolsearch.stores.session_store.SessionStore.tool_changes`): read here,
        once per call of the tool loop, and written by the tracker when a request changed
        it, so with a shared store (``RedisSessionStore``) a conversation that moves to
        another worker goes on with the same list, each change at the same place, and the
        list goes with the session when the store evicts it. This process keeps the
        tracker and reuses it while the store holds what it saved last (in memory: the
        same object, no copy)."""
        store = self.registry.store
        read = getattr(store, "tool_changes", None)  # None: a store from before the list
        stored = None if read is None else read(session_id)
        with self._changes_lock:
            tracker = self._changes.get(session_id)
            if tracker is None or (read is not None and not tracker.holds(stored)):
                save = None
                if read is not None:
                    save = functools.partial(store.record_tool_changes, session_id)
                tracker = self._changes[session_id] = ChangeTracker.restore(stored, save=save)
            return tracker

    def _forget_session(self, session_id: str) -> None:
        """The registry forgot the session: its loaded view and its changes go too."""
        self.loaded_tools.forget(session_id)
        with self._changes_lock:
            self._changes.pop(session_id, None)

    def __repr__(self) -> str:
        return f"ToolSearchSessions({type(self.index).__name__}, door={self.door!r})"
