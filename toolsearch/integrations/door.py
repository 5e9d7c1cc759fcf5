"""What every front door's constructor shares: where its sessions live and who hears them.

Each door (:class:`~toolsearch.integrations.pydantic_ai.ToolSearchStrategy`,
:class:`~toolsearch.integrations.langgraph.ToolSearchToolRetriever`,
:class:`~toolsearch.integrations.langchain.ToolSearchMiddleware`,
:class:`~toolsearch.integrations.openai_agents.ToolSearchAgentTools`,
:class:`~toolsearch.integrations.sdk_loop.ToolSearchLoop`) takes its own arguments (its
tools, ``max_results``, its search tool's name...) and then these, by keyword, in one shape
(:class:`ToolSearchDoorKwargs`); :func:`door_sessions` turns them into the door's
search-session core. Importing this module imports no framework.

Two doors share their sessions (one index, one session store, one search log) with
``sessions=``::

    from toolsearch.integrations.sdk_loop import ToolSearchLoop

    first = ToolSearchLoop(my_tools, index="bm25")
    second = ToolSearchLoop(my_tools, sessions=first.sessions, max_results=3)
    assert second.registry is first.registry
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypedDict, Unpack

from toolsearch.search.builtin_tools.search_tool import MAX_RESULTS_CAP
from toolsearch.search.events import SearchListener
from toolsearch.search.logs.sink import SearchLog
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.sessions import ToolSearchSessions
from toolsearch.search.types import ToolIndex
from toolsearch.stores.eviction import EvictionStrategy
from toolsearch.stores.session_store import SessionStore

__all__ = ["ToolSearchDoorKwargs", "check_max_results", "check_tool_names", "door_sessions"]


class ToolSearchDoorKwargs(TypedDict, total=False):
    """The keyword arguments every front door takes besides its own.

    Give ``sessions`` (another door's, to share it), or ``registry``, or the door's
    ``index`` with ``store``/``eviction_strategy`` for sessions of its own; more than one of
    these raises ``TypeError``.
    """

    sessions: ToolSearchSessions | None
    """Another door's search-session core (``other.sessions``) to share: this door searches
    its registry (index, session store, eviction) and writes to its search log, under its
    own options and door name."""
    registry: SessionRegistry | None
    """A ``SessionRegistry`` to share with other doors (instead of ``index`` and ``store``)."""
    store: SessionStore | None
    """The session store of a new registry (``RedisSessionStore`` to share session state
    between workers)."""
    eviction_strategy: EvictionStrategy | None
    """The eviction of a new registry's in-memory store (LRU over 1,000 sessions by
    default)."""
    search_listeners: Sequence[SearchListener]
    """Called with a ``ToolSearchEvent`` after every search of this door."""
    search_log: SearchLog | None
    """A ``SearchLog`` receiving every search and the tools then called (with
    ``sessions=``: that core's log unless one is given)."""


def door_sessions(
    index: ToolIndex | str | None,
    options: ToolSearchOptions,
    door: str,
    **shared: Unpack[ToolSearchDoorKwargs],
) -> ToolSearchSessions:
    """The search-session core of the front door ``door``: its ``options`` over the sessions
    ``shared`` names (see :class:`ToolSearchDoorKwargs`)."""
    given = shared.get("sessions")
    registry, store = shared.get("registry"), shared.get("store")
    eviction = shared.get("eviction_strategy")
    search_log = shared.get("search_log")
    if given is not None:
        if index is not None or registry is not None or store is not None or eviction is not None:
            raise TypeError("give sessions, or index/registry/store/eviction_strategy, not both")
        registry = given.registry
        search_log = search_log if search_log is not None else given.search_log
    return ToolSearchSessions(
        index,
        registry=registry,
        store=store,
        eviction_strategy=eviction,
        options=options,
        search_listeners=shared.get("search_listeners", ()),
        search_log=search_log,
        door=door,
    )


def check_max_results(value: int, name: str = "max_results") -> None:
    """``ValueError`` unless a door's default number of results ``value`` is 1-10."""
    if not 1 <= value <= MAX_RESULTS_CAP:
        raise ValueError(f"{name} must be between 1 and {MAX_RESULTS_CAP}")


def check_tool_names(
    names: Sequence[str], search_tool_name: str, pinned: Iterable[str] = ()
) -> tuple[str, ...]:
    """A door's tool set checked: no two tools with one name, none named as the search
    tool, every pinned name among them (``ValueError`` otherwise). Returns the pinned names
    in the order given, each once."""
    if search_tool_name in names:
        raise ValueError(
            f"a tool is named {search_tool_name!r}, the search tool's name: rename it or "
            "pass search_tool_name=..."
        )
    if len(set(names)) != len(names):
        raise ValueError("two tools have the same name")
    kept = tuple(dict.fromkeys(pinned))
    unknown = [n for n in kept if n not in set(names)]
    if unknown:
        raise ValueError(f"pinned tools that are not among the tools: {unknown}")
    return kept
