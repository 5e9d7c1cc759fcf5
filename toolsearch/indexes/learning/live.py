"""The live join: searches waiting for the calls they lead to, bounded.

A usage memory learns a request when a search is followed, in the same session, by a
successful call of one of its hits. :class:`LiveJoin` holds each session's recent searches
until its calls arrive and says what to learn (:class:`Lesson`): the latest earlier search
that returned the called tool and, with ``turn_searches``, the turn's earlier searches
that returned none of the turn's other called tools (the words that did not find the tool
are the ones it needs; a search that found another called tool was looking for that one),
and the user's request of the turn when the front door recorded it. What it holds is bounded three
ways: searches per session, sessions, and characters over all sessions (a search's query
is cut to ``max_request_chars`` first), so sessions that never call anything (throwaway
sessions with huge queries, say) cannot grow the process.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field

from toolsearch.indexes.learning.model import ANONYMOUS, UsageParams, normalize_request
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch

__all__ = ["Lesson", "LiveJoin"]


@dataclass(frozen=True, slots=True)
class Lesson:
    """One request to learn: ``query`` led to a successful call of ``tool``."""

    tool_set: str
    tool: str
    query: str
    contributor: str
    time: float


@dataclass
class _Pending:
    """A search of a live session, waiting for the calls it may lead to."""

    tool_set: str
    query: str
    hits: frozenset[str]
    time: float
    contributor: str
    turn: int
    request: str = ""
    """The user's request of the turn, when the front door recorded it."""
    learned: set[str] = field(default_factory=set)


@dataclass
class _Session:
    searches: deque[_Pending]
    turn: int = 0
    """The session's calls records seen so far: a search's turn is the count before it."""
    chars: int = 0


class LiveJoin:
    """Each live session's recent searches, joined with its calls (not thread-safe: the
    memory calls it under its lock)."""

    def __init__(self, params: UsageParams) -> None:
        self.params = params
        self._open: OrderedDict[str, _Session] = OrderedDict()
        self.chars = 0

    @property
    def searches(self) -> int:
        return sum(len(s.searches) for s in self._open.values())

    def search(self, search: LoggedSearch) -> None:
        """Keep a search until its session's calls say which of its hits it led to."""
        params = self.params
        query = search.query[: params.max_request_chars]
        session = self._open.pop(search.session, None) or _Session(deque())
        self.chars -= session.chars
        if len(session.searches) >= params.searches_per_session:
            oldest = session.searches.popleft()
            session.chars -= len(oldest.query) + len(oldest.request)
        contributor = ANONYMOUS if search.anonymous else search.session
        hits = frozenset(name for name, _ in search.hits)
        at = round(search.time, 6)
        request = (search.request or "")[: params.max_request_chars]
        if normalize_request(request) == normalize_request(query):
            request = ""
        session.searches.append(
            _Pending(search.tool_set, query, hits, at, contributor, session.turn, request)
        )
        session.chars += len(query) + len(request)
        self._open[search.session] = session
        self.chars += session.chars
        while self._open and (
            len(self._open) > params.open_sessions or self.chars > params.pending_chars
        ):
            _, gone = self._open.popitem(last=False)
            self.chars -= gone.chars

    def calls(self, calls: LoggedCalls) -> list[Lesson]:
        """What one turn's calls teach (each search teaches each tool once)."""
        session = self._open.get(calls.session)
        if not session:
            return []
        params = self.params
        flags = calls.ok or (None,) * len(calls.names)
        at = round(calls.time, 6)
        lessons: list[Lesson] = []
        called = {
            name
            for name, ok in zip(calls.names, flags, strict=True)
            if ok is True or (ok is None and params.count_unknown_outcomes)
        }
        for name in calls.names:
            if name not in called:
                continue
            earlier = [p for p in session.searches if calls.ok is None or p.time <= at]
            place = next(
                (i for i in range(len(earlier) - 1, -1, -1) if name in earlier[i].hits), None
            )
            target = None if place is None else earlier[place]
            taught = [] if target is None else [target]
            if params.turn_searches and earlier:
                taught.extend(
                    _turn_others(earlier, place, called - {name})[-params.turn_searches :]
                )
            requests: set[str] = set()
            for pending in taught:
                if name not in pending.learned:
                    pending.learned.add(name)
                    lessons.append(
                        Lesson(pending.tool_set, name, pending.query, pending.contributor, at)
                    )
                if pending.request and pending.request not in requests:
                    requests.add(pending.request)  # the user's own words of that turn
                    lessons.append(
                        Lesson(pending.tool_set, name, pending.request, pending.contributor, at)
                    )
        session.turn += 1
        return lessons

    def forget(self, session: str) -> None:
        gone = self._open.pop(session, None)
        if gone is not None:
            self.chars -= gone.chars

    def clear(self) -> None:
        self._open.clear()
        self.chars = 0


def _turn_others(earlier: list[_Pending], place: int | None, others: set[str]) -> list[_Pending]:
    """The turn's searches that may have been looking for the called tool: those of its
    turn before the one that returned it (all of the turn when none did) that returned
    none of the turn's other called tools (a search that discovered another tool was
    looking for that one: its words would teach this tool another tool's request)."""
    turn = earlier[-1 if place is None else place].turn
    before = earlier if place is None else earlier[:place]
    return [p for p in before if p.turn == turn and not (p.hits & others)]
