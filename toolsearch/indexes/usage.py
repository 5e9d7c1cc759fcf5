"""The usage memory: per tool set, per tool, the requests that led to a successful call.

Learning from use needs no training step and no new dependency: a tool's representation
gains the words people actually used to reach it. :class:`UsageMemory` keeps them, and
:class:`~toolsearch.indexes.learned.LearnedToolIndex` searches them beside the tool's own
text.

**What it stores: user request text.** Each entry is a search query as the model sent it
(the user's words, often copied verbatim), the hashed ids of the sessions that made it (up
to ``max_contributors``: its support), and two clocks (time and event number). Keep the
file like any other user data, and delete a user's requests with
:meth:`UsageMemory.forget_session` (by hashed session id).

What counts. Only a search followed, in the same session, by a **successful** call of one
of its hits: the search log's join (:func:`toolsearch.search.search_log_reader.read_search_log`:
a call labels the latest earlier search of its session that returned it) and its outcome
flag (``LoggedCalls.ok``: the tool ran and returned). Calls whose outcome was not recorded
(older logs, front doors that log before a call runs) count only with
``count_unknown_outcomes=True``. The memory is a
:class:`~toolsearch.search.search_log.SearchLog`, so it learns live as the advisor's
search log (or beside a file log, with :class:`~toolsearch.search.search_log.TeeSearchLog`),
and :meth:`UsageMemory.replay` rebuilds it from a JSONL search log by feeding it the same
records in the same order, so a rebuild equals what live learning would have kept.

Why the limits (:class:`UsageParams`). A tool keeps at most ``max_per_tool`` distinct
requests (normalized: case and spacing folded); past that, the entry with the lowest
decayed weight times support goes. Weights halve every ``half_life_days`` and/or every
``half_life_events`` later learned events of the tool set, so old phrasings fade when use
drifts. One session can teach a tool at most ``per_session_per_tool`` requests and a tool
set at most ``max(session_floor, max_session_share * entries)``, and repeating a request
counts once per session: one user (or one script) cannot flood a tool's field.
``min_sessions`` keeps a tool's learned requests out of search until that many distinct
sessions taught it (1 by default; raise it where users are not trusted).

Persistence: a versioned JSON file, written atomically (a temporary file, then a rename),
read lazily on first use. A corrupt file, or one that is not a usage memory, raises
:class:`UsageMemoryError` naming it, and the memory then refuses to overwrite it.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time as _time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.errors import UsageMemoryError
from toolsearch.indexes.text import clean_text
from toolsearch.search.registry import tool_set_key
from toolsearch.search.search_log import LoggedCalls, LoggedSearch, tool_set_digest
from toolsearch.search.search_log_reader import iter_search_log
from toolsearch.search.types import MAX_QUERY_LENGTH
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "USAGE_FORMAT",
    "USAGE_VERSION",
    "LearnedRequest",
    "ReplayStats",
    "UsageMemory",
    "UsageMemoryError",
    "UsageParams",
    "catalog_digest",
    "normalize_request",
]

_log = logging.getLogger(__name__)

USAGE_FORMAT = "toolsearch-usage-memory"
"""The ``format`` of a usage memory file."""
USAGE_VERSION = 1
"""The ``version`` this module writes (and the newest it reads)."""

_DAY = 86_400.0
_SPACE = re.compile(r"\s+")


def catalog_digest(tools: Iterable[ToolDefinition]) -> str:
    """The tool-set digest of ``tools``: the tail of the advisor's index key, under which
    the memory keeps that tool set's requests (order and repeats do not matter)."""
    return tool_set_digest(tool_set_key("", (tool.fingerprint for tool in tools)))


def normalize_request(text: str) -> str:
    """The key two requests share when they are the same request: case and runs of
    whitespace folded."""
    return _SPACE.sub(" ", text).strip().casefold()


@dataclass(frozen=True, slots=True)
class UsageParams:
    """The memory's bounds and clocks; see the module docstring for why each exists.

    Attributes:
        max_per_tool: Distinct requests kept per tool.
        per_session_per_tool: Requests one session may teach one tool.
        session_floor: Requests one session may teach a tool set whatever its size.
        max_session_share: Beyond the floor, one session's share of a tool set's entries.
        half_life_days: Weight halves every this many days since a request was last made
            (``None``: no time decay).
        half_life_events: Weight halves every this many later learned events of the tool
            set (``None``: no event decay).
        min_sessions: A tool's requests are searched once this many sessions taught it.
        max_contributors: Hashed sessions remembered per request, which caps its support
            (a further session's repeat only refreshes it).
        count_unknown_outcomes: Learn from calls whose success was not recorded.
        searches_per_session: Recent searches per session awaiting their calls (live).
        open_sessions: Sessions whose recent searches are kept (least recent out).
    """

    max_per_tool: int = 32
    per_session_per_tool: int = 3
    session_floor: int = 16
    max_session_share: float = 0.25
    half_life_days: float | None = 90.0
    half_life_events: float | None = None
    min_sessions: int = 1
    max_contributors: int = 8
    count_unknown_outcomes: bool = False
    searches_per_session: int = 32
    open_sessions: int = 10_000

    def __post_init__(self) -> None:
        counts = (
            self.max_per_tool,
            self.per_session_per_tool,
            self.min_sessions,
            self.max_contributors,
            self.searches_per_session,
            self.open_sessions,
        )
        if min(counts) < 1 or self.session_floor < 0:
            raise ValueError("the usage memory's counts must be at least 1")
        if not 0 < self.max_session_share <= 1:
            raise ValueError("max_session_share must be in (0, 1]")
        for half_life in (self.half_life_days, self.half_life_events):
            if half_life is not None and half_life <= 0:
                raise ValueError("a half-life must be positive (or None for no decay)")


@dataclass
class _Entry:
    text: str
    sessions: list[str]
    """The hashed sessions that made this request (at most ``max_contributors``)."""
    first: float
    last: float
    event: int

    @property
    def support(self) -> int:
        return len(self.sessions)


@dataclass
class _Catalog:
    events: int = 0
    version: int = 0
    tools: dict[str, dict[str, _Entry]] = field(default_factory=dict)
    by_session: Counter[str] = field(default_factory=Counter)

    @property
    def size(self) -> int:
        return sum(len(entries) for entries in self.tools.values())


@dataclass(frozen=True, slots=True)
class LearnedRequest:
    """One learned request of one tool, with its weight at the time it was read."""

    tool: str
    text: str
    weight: float
    support: int
    last: float


@dataclass(frozen=True)
class ReplayStats:
    """What :meth:`UsageMemory.replay` read and learned."""

    searches: int = 0
    calls: int = 0
    learned: int = 0


@dataclass
class _Pending:
    """A search of a live session, waiting for the calls it may lead to."""

    tool_set: str
    query: str
    hits: frozenset[str]
    time: float
    learned: set[str] = field(default_factory=set)


class UsageMemory:
    """Per tool set, per tool, the requests that led to a successful call (a ``SearchLog``).

    Args:
        path: The JSON file it is saved to and loaded from (read on first use; ``None``:
            in memory only).
        params: The bounds and decay (:class:`UsageParams`).
        clock: Seconds since the epoch, for weights at search time (``time.time``; inject
            one in tests). Learning uses each record's own time, never this clock.
        autosave_every: Save after this many learned requests (``None``: call
            :meth:`save`). A save writes the whole file, in the request that learned.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        params: UsageParams | None = None,
        clock: Callable[[], float] = _time.time,
        autosave_every: int | None = None,
    ) -> None:
        if autosave_every is not None and autosave_every < 1:
            raise ValueError("autosave_every must be at least 1")
        self.path = None if path is None else Path(path)
        self.params = params or UsageParams()
        self.clock = clock
        self.autosave_every = autosave_every
        self._catalogs: dict[str, _Catalog] = {}
        self._open: OrderedDict[str, deque[_Pending]] = OrderedDict()
        self._lock = threading.RLock()
        self._loaded = self.path is None
        self._broken: UsageMemoryError | None = None
        self._unsaved = 0
        self._stamp = 0

    def __repr__(self) -> str:
        where = "in memory" if self.path is None else repr(str(self.path))
        return f"UsageMemory({where})"

    # -- the SearchLog protocol (live learning) ----------------------------------------

    def record_search(self, search: LoggedSearch) -> None:
        """Keep a search until its session's calls say which of its hits it led to."""
        if search.error:
            return
        pending = _Pending(
            search.tool_set,
            search.query,
            frozenset(name for name, _ in search.hits),
            round(search.time, 6),
        )
        with self._lock:
            queue = self._open.pop(search.session, None)
            if queue is None:
                queue = deque(maxlen=self.params.searches_per_session)
            queue.append(pending)
            self._open[search.session] = queue
            while len(self._open) > self.params.open_sessions:
                self._open.popitem(last=False)

    def record_calls(self, calls: LoggedCalls) -> None:
        """Learn each successful call's request: the latest earlier search of the session
        that returned the tool (the search log's join), once per search and tool."""
        flags: Iterable[bool | None] = calls.ok or (None,) * len(calls.names)
        at = round(calls.time, 6)
        with self._lock:
            queue = self._open.get(calls.session)
            if not queue:
                return
            for name, ok in zip(calls.names, flags, strict=True):
                target = next(
                    (
                        p
                        for p in reversed(queue)
                        if name in p.hits and (calls.ok is None or p.time <= at)
                    ),
                    None,
                )
                if target is None or name in target.learned:
                    continue
                if not (ok is True or (ok is None and self.params.count_unknown_outcomes)):
                    continue
                target.learned.add(name)
                self.learn(target.tool_set, name, target.query, session=calls.session, time=at)

    # -- learning ----------------------------------------------------------------------

    def learn(self, tool_set: str, tool: str, request: str, *, session: str, time: float) -> bool:
        """Remember that ``request`` led to a successful call of ``tool`` in ``tool_set``
        (a :func:`catalog_digest`), by ``session`` (hashed) at ``time``. Returns whether
        the memory changed (``False``: a repeat by the same session, over a flood limit,
        blank, or the weakest entry of a full tool)."""
        text = clean_text(request)[:MAX_QUERY_LENGTH].strip()
        if not text:
            return False
        key, at, params = normalize_request(text), round(float(time), 6), self.params
        with self._lock:
            self._ensure_loaded()
            catalog = self._catalogs.setdefault(tool_set, _Catalog())
            entries = catalog.tools.setdefault(tool, {})
            entry = entries.get(key)
            if entry is not None and session in entry.sessions:
                return False
            mine = sum(session in e.sessions for e in entries.values())
            cap = max(params.session_floor, math.ceil(params.max_session_share * catalog.size))
            if mine >= params.per_session_per_tool or catalog.by_session[session] >= cap:
                return False
            catalog.events += 1
            if entry is not None:  # another session's request: more support, fresher
                entry.last, entry.event = max(entry.last, at), catalog.events
                if len(entry.sessions) < params.max_contributors:
                    entry.sessions.append(session)
                    catalog.by_session[session] += 1
            else:
                entries[key] = _Entry(text, [session], at, at, catalog.events)
                catalog.by_session[session] += 1
                if len(entries) > params.max_per_tool:
                    weakest = min(entries, key=lambda k: self._priority(entries[k], catalog, at))
                    self._drop(catalog, entries, weakest)
                    if weakest == key:  # the new request is the weakest: nothing changes
                        catalog.events -= 1
                        return False
            self._changed(catalog)
            if self.autosave_every is not None and self._unsaved >= self.autosave_every:
                self.save()
        return True

    def _changed(self, catalog: _Catalog) -> None:
        """Stamp a change (stamps are never reused, even after :meth:`clear`)."""
        self._stamp += 1
        catalog.version = self._stamp
        self._unsaved += 1

    def _priority(self, entry: _Entry, catalog: _Catalog, now: float) -> tuple[float, float, int]:
        """Which entry of a full tool goes first: lowest weight times support, then oldest."""
        value = self._weight(entry, catalog, now) * (1.0 + math.log(entry.support))
        return value, entry.last, entry.event

    def _weight(self, entry: _Entry, catalog: _Catalog, now: float) -> float:
        weight = 1.0
        if self.params.half_life_days is not None:
            age = max(0.0, now - entry.last) / (self.params.half_life_days * _DAY)
            weight *= 0.5**age
        if self.params.half_life_events is not None:
            weight *= 0.5 ** ((catalog.events - entry.event) / self.params.half_life_events)
        return weight

    @staticmethod
    def _drop(catalog: _Catalog, entries: dict[str, _Entry], key: str) -> None:
        for session in entries.pop(key).sessions:
            catalog.by_session[session] -= 1
            if catalog.by_session[session] <= 0:
                del catalog.by_session[session]

    # -- reading -------------------------------------------------------------------------

    def version(self, tool_set: str) -> int:
        """A number that changes whenever the tool set's requests change (0: none yet)."""
        with self._lock:
            self._ensure_loaded()
            catalog = self._catalogs.get(tool_set)
            return 0 if catalog is None else catalog.version

    def requests(self, tool_set: str, tool: str | None = None) -> tuple[LearnedRequest, ...]:
        """The tool set's searchable requests (of one ``tool``, or every tool's), each with
        its weight at the clock's time; tools taught by fewer than ``min_sessions``
        sessions are left out. Empty for a tool set the memory has never seen."""
        now = self.clock()
        with self._lock:
            self._ensure_loaded()
            catalog = self._catalogs.get(tool_set)
            if catalog is None:
                return ()
            picked = catalog.tools if tool is None else {tool: catalog.tools.get(tool, {})}
            found: list[LearnedRequest] = []
            for name, entries in picked.items():
                if self.params.min_sessions > 1:
                    taught = {s for e in entries.values() for s in e.sessions}
                    if len(taught) < self.params.min_sessions:
                        continue
                found.extend(
                    LearnedRequest(name, e.text, self._weight(e, catalog, now), e.support, e.last)
                    for e in entries.values()
                )
            return tuple(found)

    def tool_sets(self) -> list[str]:
        with self._lock:
            self._ensure_loaded()
            return list(self._catalogs)

    def stats(self) -> dict[str, int]:
        """Tool sets, tools with requests, requests and distinct sessions held."""
        with self._lock:
            self._ensure_loaded()
            catalogs = self._catalogs.values()
            sessions = {s for c in catalogs for s in c.by_session}
            return {
                "tool_sets": len(self._catalogs),
                "tools": sum(sum(1 for e in c.tools.values() if e) for c in catalogs),
                "requests": sum(c.size for c in catalogs),
                "sessions": len(sessions),
            }

    # -- forgetting ----------------------------------------------------------------------

    def forget_session(self, session: str) -> int:
        """Remove a (hashed) session from every request; a request no other remembered
        session made is deleted. Returns how many requests were deleted."""
        deleted = 0
        with self._lock:
            self._ensure_loaded()
            self._open.pop(session, None)
            for catalog in self._catalogs.values():
                if session not in catalog.by_session:
                    continue
                for entries in catalog.tools.values():
                    for key, entry in list(entries.items()):
                        if session not in entry.sessions:
                            continue
                        entry.sessions.remove(session)
                        if not entry.sessions:
                            del entries[key]
                            deleted += 1
                        catalog.by_session[session] -= 1
                del catalog.by_session[session]
                self._changed(catalog)
        return deleted

    def clear(self, tool_set: str | None = None) -> None:
        """Forget one tool set's requests, or everything."""
        with self._lock:
            self._ensure_loaded()
            if tool_set is None:
                self._catalogs.clear()
                self._open.clear()
            elif tool_set in self._catalogs:
                del self._catalogs[tool_set]
            self._unsaved += 1

    # -- rebuilding from a log -------------------------------------------------------------

    def replay(
        self,
        records: str | os.PathLike[str] | Iterable[LoggedSearch | LoggedCalls],
        *,
        progress: Callable[[int], None] | None = None,
    ) -> ReplayStats:
        """Feed a search log (a JSONL path, or records) to the memory in order, as live
        learning would have received it. ``progress`` is called with each record's count."""
        source = iter_search_log(records) if isinstance(records, str | os.PathLike) else records
        searches = calls = learned = 0
        for count, record in enumerate(source, 1):
            if isinstance(record, LoggedSearch):
                searches += 1
                self.record_search(record)
            else:
                calls += 1
                before = self._events()
                self.record_calls(record)
                learned += self._events() - before
            if progress is not None:
                progress(count)
        return ReplayStats(searches, calls, learned)

    def _events(self) -> int:
        with self._lock:
            return sum(c.events for c in self._catalogs.values())

    # -- persistence ---------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the memory to ``path`` (default: its own) atomically; returns the path.
        Searches awaiting their calls are not saved."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("this usage memory has no path: pass save(path)")
        with self._lock:
            self._ensure_loaded()
            document = {
                "format": USAGE_FORMAT,
                "version": USAGE_VERSION,
                "saved": round(self.clock(), 3),
                "params": asdict(self.params),
                "tool_sets": {
                    digest: {
                        "events": c.events,
                        "tools": {
                            name: [_entry_record(e) for e in entries.values()]
                            for name, entries in c.tools.items()
                            if entries
                        },
                    }
                    for digest, c in self._catalogs.items()
                },
            }
            text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
            _write_atomically(target, text)
            if target == self.path:
                self._unsaved = 0
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str], **options: Any) -> UsageMemory:
        """A memory read from ``path`` now (:class:`UsageMemoryError` if it cannot be)."""
        memory = cls(path, **options)
        memory.tool_sets()
        return memory

    def _ensure_loaded(self) -> None:
        """Read the file on first use (under the lock); a broken file raises, every time."""
        if self._loaded:
            return
        if self._broken is not None:
            raise self._broken
        assert self.path is not None
        try:
            self._catalogs = _read(self.path) if self.path.exists() else {}
        except UsageMemoryError as error:
            self._broken = error
            raise
        for catalog in self._catalogs.values():
            self._stamp += 1
            catalog.version = self._stamp
        self._loaded = True


def _entry_record(entry: _Entry) -> dict[str, Any]:
    return {
        "text": entry.text,
        "sessions": entry.sessions,
        "first": entry.first,
        "last": entry.last,
        "event": entry.event,
    }


def _write_atomically(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(staging, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging, target)
    finally:
        staging.unlink(missing_ok=True)


def _read(path: Path) -> dict[str, _Catalog]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageMemoryError(f"{path}: not a usage memory file (not valid JSON: {exc})") from None
    if not isinstance(document, dict) or document.get("format") != USAGE_FORMAT:
        raise UsageMemoryError(
            f'{path}: not a usage memory file (no "format": "{USAGE_FORMAT}"); '
            "write one with UsageMemory.save() or `toolsearch index learn`"
        )
    version = document.get("version")
    if not isinstance(version, int) or version < 1:
        raise UsageMemoryError(f"{path}: a usage memory file without a valid version")
    if version > USAGE_VERSION:
        raise UsageMemoryError(
            f"{path}: usage memory version {version} is newer than this toolsearch reads "
            f"({USAGE_VERSION}); upgrade toolsearch"
        )
    catalogs: dict[str, _Catalog] = {}
    try:
        for digest, body in dict(document["tool_sets"]).items():
            catalog = _Catalog(events=int(body["events"]))
            for name, rows in dict(body["tools"]).items():
                entries = catalog.tools.setdefault(str(name), {})
                for row in rows:
                    entry = _Entry(
                        str(row["text"]),
                        [str(s) for s in row["sessions"]],
                        float(row["first"]),
                        float(row["last"]),
                        int(row["event"]),
                    )
                    entries[normalize_request(entry.text)] = entry
                    catalog.by_session.update(entry.sessions)
            catalogs[str(digest)] = catalog
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageMemoryError(f"{path}: a malformed usage memory file ({exc!r})") from None
    return catalogs
