"""What a front door's driver is, for the front-door contract (:mod:`.front_door_contract`):
one scripted model (:class:`Brain`) played through a framework's own machinery.

A front door is a way into tool search from an agent framework (toolsearch's advisor, a
LangGraph retriever, a pydantic-ai strategy, an MCP proxy...). Its driver, a
:class:`Door` subclass, builds the door over ``catalog`` and ``index`` in ``setup`` and
turns a :class:`Brain`'s script into the framework's calls in ``run`` (and ``arun``, for
an async framework): it hands the brain the tools offered on every model request
(``brain.next``) and the names of every search result (``brain.saw_search_result``), and
records the text of every tool result (``trace.outputs``). The catalog's tools record when
they really run (``self._ran(name)``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch.search.events import ToolSearchEvent
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch
from toolsearch.search.types import ToolIndex

__all__ = [
    "DOOR_CATALOG",
    "FOUND",
    "LONG_NAME",
    "ODD_CATALOG",
    "Brain",
    "Door",
    "RecordingSearchLog",
    "Step",
    "ThreadRecordingIndex",
    "ToolFailed",
    "Trace",
    "search_names",
]

FOUND = "<the first name the last search returned>"

DOOR_CATALOG: tuple[tuple[str, str], ...] = (
    ("send_email", "Send an email message to a recipient"),
    ("get_weather", "Get the weather forecast for a city"),
    ("create_ticket", "Open a support ticket for a customer"),
    ("list_invoices", "List the invoices of a customer account"),
)
"""``(name, description)`` of the tools behind every door."""

LONG_NAME = "payments_refund_a_card_payment_to_the_original_customer_account_now_v2"
assert len(LONG_NAME) == 70
ODD_CATALOG: tuple[tuple[str, str], ...] = (
    ("github.create_issue", "Create a GitHub issue in a repository"),
    ("docs/search", "Search the product documentation pages"),
    (LONG_NAME, "Refund a card payment to the customer"),
    ("get_weather", "Get the weather forecast for a city"),
)
"""Names no provider takes as they are: dotted, slashed, 70 characters."""

Step = tuple[str, ...]


@dataclass
class Brain:
    """A scripted model: ``steps`` of ``("search", query)``, ``("call", name)`` (``FOUND``:
    the first name the last search returned) and ``("answer",)``; records what it saw."""

    steps: Sequence[Step]
    offered: list[list[str]] = field(default_factory=list)
    found: list[list[str]] = field(default_factory=list)
    before: Callable[[int], None] | None = None
    """Called with the turn number before each turn (to order concurrent runs)."""

    def next(self, offered: Sequence[str]) -> Step:
        self.offered.append(sorted(offered))
        turn = len(self.offered) - 1
        if self.before is not None:
            self.before(turn)
        step = tuple(self.steps[turn]) if turn < len(self.steps) else ("answer",)
        if step[0] == "call" and step[1] == FOUND:
            return ("call", self.found[-1][0] if self.found and self.found[-1] else "nothing")
        return step

    def saw_search_result(self, names: Sequence[str]) -> None:
        self.found.append(list(names))


@dataclass
class Trace:
    outputs: list[str] = field(default_factory=list)
    """Every tool result's text, in order."""
    ran: list[str] = field(default_factory=list)
    """The catalog tools that really ran (own names)."""


@dataclass
class RecordingSearchLog:
    """A ``SearchLog`` that keeps what it receives: every search, and every turn's calls
    with ``ran_before``, how many catalog tools had run when the calls were logged (a
    door logs a call's outcome after the call ran)."""

    trace: Trace = field(default_factory=Trace)
    searches: list[LoggedSearch] = field(default_factory=list)
    calls: list[LoggedCalls] = field(default_factory=list)
    ran_before: list[int] = field(default_factory=list)

    def record_search(self, search: LoggedSearch) -> None:
        self.searches.append(search)

    def record_calls(self, calls: LoggedCalls) -> None:
        self.calls.append(calls)
        self.ran_before.append(len(self.trace.ran))

    def outcomes(self) -> list[tuple[str, bool | None]]:
        """Every logged call as ``(name, ok)`` (``ok`` ``None``: logged without one)."""
        return [
            (name, None if calls.ok is None else calls.ok[i])
            for calls in self.calls
            for i, name in enumerate(calls.names)
        ]


def ThreadRecordingIndex() -> Any:  # a class made on demand (BM25 is an extra)
    """A BM25 index that records the thread of every indexing and every search
    (``index.threads``: ``(what, thread id)``), for checking that an async door does that
    work off its event loop, whatever the machine's load (no wall-clock bound)."""
    import threading

    from toolsearch.indexes import Bm25ToolIndex
    from toolsearch.search.types import ToolSearchRequest, ToolSearchResponse

    class _ThreadRecordingIndex(Bm25ToolIndex):
        def __init__(self) -> None:
            super().__init__()
            self.threads: list[tuple[str, int]] = []

        def index_tools(self, session_id: str, tools: Any) -> None:
            self.threads.append(("index", threading.get_ident()))
            super().index_tools(session_id, tools)

        def search(self, request: ToolSearchRequest) -> ToolSearchResponse:
            self.threads.append(("search", threading.get_ident()))
            return super().search(request)

    return _ThreadRecordingIndex()


class ToolFailed(RuntimeError):
    """What a catalog tool of :attr:`Door.failing` raises when it runs."""


class Door:
    """One front door: ``run(brain, session)`` plays the script; ``None`` is no session."""

    name = ""
    """The door's name, as its search events and spans report it."""
    is_async = False
    keeps_discoveries = True
    """Whether a later run of the same session sees the tools an earlier run found."""
    per_session = True
    """Whether the door keeps state per session at all (a proxy whose clients always see
    its two tools does not)."""
    names_its_tools = True
    """Whether the door chooses the names the model sees (else its framework does)."""
    throwaway_runs = True
    """Whether a run without a session gets a throwaway one (dropped when the run ends);
    ``False`` when the framework names a conversation for every run itself."""
    calls_by_argument = False
    """Whether the model calls a found tool by passing its name to a call tool (the proxy)
    rather than as a tool of its own."""

    def __init__(
        self, catalog: Sequence[tuple[str, str]] = DOOR_CATALOG, index: Any = None
    ) -> None:
        if index is None:
            from toolsearch.indexes import Bm25ToolIndex

            index = Bm25ToolIndex()
        self.catalog = catalog
        self.index: ToolIndex = index
        self.events: list[ToolSearchEvent] = []
        self.trace = Trace()
        self.log = RecordingSearchLog(self.trace)
        """The search log the driver gives its door (``search_log=``)."""
        self.failing: set[str] = set()
        """Catalog tools that raise :class:`ToolFailed` when they run."""
        self.setup()

    def setup(self) -> None:
        raise NotImplementedError

    def run(self, brain: Brain, session: str | None = None) -> Trace:
        raise NotImplementedError

    def discovered(self, session: str) -> list[str]:
        raise NotImplementedError

    def core(self) -> Any:
        """The door's search-session core (its ``ToolSearchSessions``)."""
        for owner in ("advisor", "loop", "search", "retriever", "middleware", "strategy", "proxy"):
            found = getattr(getattr(self, owner, None), "sessions", None)
            if found is not None:
                return found
        raise AssertionError(f"{self.name}: no search-session core found")

    def _ran(self, name: str) -> str:
        self.trace.ran.append(name)
        if name in self.failing:
            raise ToolFailed(f"{name} failed")
        return f"{name} done"


def search_names(text: str) -> list[str]:
    """The tool names in a search result's text (a JSON list of names or of objects with a
    ``name``, or an object with ``tools``); ``[]`` for anything else."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return []
    if isinstance(value, list):
        return [v if isinstance(v, str) else str(v.get("name")) for v in value]
    if isinstance(value, dict) and "tools" in value:
        return [str(t["name"]) for t in value["tools"]]
    return []
