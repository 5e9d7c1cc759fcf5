"""The usage memory's data model: its bounds (:class:`UsageParams`), what one tool set
learned (:class:`Catalog`: per tool, its requests and its call counts) and how requests
are keyed.

Kept apart from :class:`~toolsearch.indexes.learning.memory.UsageMemory` so the file format
(:mod:`toolsearch.indexes.learning.persist`) and the shared stores read and write the same
objects without importing the memory.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from toolsearch.search.logs.sink import tool_set_digest
from toolsearch.search.registry import tool_set_key
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "ANONYMOUS",
    "Catalog",
    "Entry",
    "LearnedRequest",
    "ReplayStats",
    "ToolUse",
    "UsageParams",
    "catalog_digest",
    "drop_entry",
    "forget_in",
    "hash_terms",
    "learned_requests",
    "normalize_request",
    "request_key",
]

ANONYMOUS = "anonymous"
"""The one contributor every request without a conversation id counts as: a thousand
throwaway sessions are one user as far as support and the flood limits go."""

DAY = 86_400.0
_SPACE = re.compile(r"\s+")


def catalog_digest(tools: Iterable[ToolDefinition]) -> str:
    """The tool-set digest of ``tools``: the tail of the advisor's index key, under which
    the memory keeps that tool set's requests (order and repeats do not matter)."""
    return tool_set_digest(tool_set_key("", (tool.fingerprint for tool in tools)))


def normalize_request(text: str) -> str:
    """The key two requests share when they are the same request: case and runs of
    whitespace folded."""
    return _SPACE.sub(" ", text).strip().casefold()


def request_key(text: str) -> str:
    """A request's stored key when its text is not kept: a hash of its normalized form."""
    return "h:" + hashlib.blake2b(normalize_request(text).encode(), digest_size=12).hexdigest()


def hash_terms(terms: Iterable[str]) -> Counter[str]:
    """Analyzed terms as short hashes: the learned BM25 field works on them the same way,
    and the file then holds no word of the request."""
    return Counter(hashlib.blake2b(t.encode(), digest_size=6).hexdigest() for t in terms)


@dataclass(frozen=True, slots=True)
class UsageParams:
    """The memory's bounds and clocks; see :mod:`toolsearch.indexes.learning.memory` for why each
    exists.

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
        pending_chars: Characters of awaiting searches kept over all sessions (least
            recent sessions out): the bound on what live learning holds in memory.
        max_request_chars: A learned (and an awaiting) request is cut to this length.
        turn_searches: Besides the search that returned a called tool, learn up to this
            many earlier searches of the same turn (since the session's previous calls)
            that returned none of the turn's other called tools: the words that failed to
            find the tool are the ones it needs.
        store_text: ``False``: keep no request text, only a hash of it, its hashed terms
            and (once a learned index embedded it) its vector.
        max_tool_sets: Tool sets (per tenant) kept; the least recently changed goes.
        tenant: Scope everything this memory learns and serves under this key (one store
            shared by several tenants keeps their learning apart).
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
    pending_chars: int = 4_000_000
    max_request_chars: int = 2_000
    turn_searches: int = 3
    store_text: bool = True
    max_tool_sets: int = 1_000
    tenant: str | None = None

    def __post_init__(self) -> None:
        counts = (
            self.max_per_tool,
            self.per_session_per_tool,
            self.min_sessions,
            self.max_contributors,
            self.searches_per_session,
            self.open_sessions,
            self.pending_chars,
            self.max_request_chars,
            self.max_tool_sets,
        )
        if min(counts) < 1 or self.session_floor < 0 or self.turn_searches < 0:
            raise ValueError("the usage memory's counts must be at least 1")
        if not 0 < self.max_session_share <= 1:
            raise ValueError("max_session_share must be in (0, 1]")
        for half_life in (self.half_life_days, self.half_life_events):
            if half_life is not None and half_life <= 0:
                raise ValueError("a half-life must be positive (or None for no decay)")

    def scope(self, tool_set: str, tenant: str | None = None) -> str:
        """The key a tool set's learning is kept under (its tenant's, when scoped)."""
        owner = tenant if tenant is not None else self.tenant
        return tool_set if owner is None else f"{owner}/{tool_set}"


@dataclass
class Entry:
    """One learned request of one tool."""

    text: str
    """The request (``""`` when text is not stored)."""
    sessions: list[str]
    """The hashed sessions that made this request (at most ``max_contributors``)."""
    first: float
    last: float
    event: int
    terms: Counter[str] | None = None
    """Hashed analyzed terms, when the text is not stored."""
    vector: list[float] | None = None
    """The request's embedding, when the text is not stored (set by a learned index)."""
    embedder: str = ""
    key: str = ""
    """Its key when the text is not stored (a hash); else its normalized text."""

    @property
    def support(self) -> int:
        return len(self.sessions)


@dataclass
class ToolUse:
    """How a tool's calls went: decayed counts of calls and successes (the warm set)."""

    calls: float = 0.0
    ok: float = 0.0
    last: float = 0.0
    """When it was last called successfully."""
    at: float = 0.0
    """When the counts were last brought to date (they decay from here)."""


@dataclass
class Catalog:
    """What one tool set (of one tenant) learned."""

    events: int = 0
    version: int = 0
    tools: dict[str, dict[str, Entry]] = field(default_factory=dict)
    by_session: Counter[str] = field(default_factory=Counter)
    fingerprints: dict[str, str] = field(default_factory=dict)
    """Each tool's fingerprint, when known: a changed tool set carries over what its
    unchanged tools learned."""
    use: dict[str, ToolUse] = field(default_factory=dict)
    changed: float = 0.0
    full: int = 0
    """The memory's change stamp when the whole tool set last changed (a load, a merge)."""
    stamps: dict[str, int] = field(default_factory=dict)
    """Per tool, the change stamp of its learning's last change (not saved)."""
    serve: bool = True
    """``False``: a shadow evaluation found the learned ranking worse on a held-back tail;
    a learned index then ranks cold for this tool set (and keeps learning)."""

    @property
    def size(self) -> int:
        return sum(len(entries) for entries in self.tools.values())

    def recount(self) -> None:
        self.by_session = Counter(
            s for es in self.tools.values() for e in es.values() for s in e.sessions
        )


def weight_of(entry: Entry, catalog: Catalog, params: UsageParams, now: float) -> float:
    """An entry's decayed weight at ``now``."""
    weight = 1.0
    if params.half_life_days is not None:
        age = max(0.0, now - entry.last) / (params.half_life_days * DAY)
        weight *= 0.5**age
    if params.half_life_events is not None:
        weight *= 0.5 ** ((catalog.events - entry.event) / params.half_life_events)
    return weight


def priority(
    entry: Entry, catalog: Catalog, params: UsageParams, now: float
) -> tuple[float, float, int]:
    """Which entry of a full tool goes first: lowest weight times support, then oldest."""
    value = weight_of(entry, catalog, params, now) * (1.0 + math.log(max(entry.support, 1)))
    return value, entry.last, entry.event


@dataclass(frozen=True, slots=True)
class LearnedRequest:
    """One learned request of one tool, with its weight at the time it was read."""

    tool: str
    text: str
    weight: float
    support: int
    last: float
    sessions: tuple[str, ...] = ()
    key: str = ""
    terms: Counter[str] | None = None
    vector: tuple[float, ...] | None = None
    embedder: str = ""


@dataclass(frozen=True)
class ReplayStats:
    """What :meth:`~toolsearch.indexes.learning.memory.UsageMemory.replay` read and learned."""

    searches: int = 0
    calls: int = 0
    learned: int = 0


def drop_entry(catalog: Catalog, entries: dict[str, Entry], key: str) -> None:
    """Remove one entry of a tool, uncounting its sessions."""
    for session in entries.pop(key).sessions:
        catalog.by_session[session] -= 1
        if catalog.by_session[session] <= 0:
            del catalog.by_session[session]


def forget_in(catalog: Catalog, session: str) -> int:
    """Remove ``session`` from every request of ``catalog`` (one it alone made goes);
    returns how many requests were deleted."""
    deleted = 0
    for entries in catalog.tools.values():
        for key, entry in list(entries.items()):
            if session not in entry.sessions:
                continue
            entry.sessions.remove(session)
            if not entry.sessions:
                del entries[key]
                deleted += 1
            catalog.by_session[session] -= 1
    catalog.by_session.pop(session, None)
    return deleted


def learned_requests(
    catalog: Catalog, params: UsageParams, now: float, tool: str | None = None
) -> tuple[LearnedRequest, ...]:
    """The catalog's searchable requests (of one ``tool``, or every tool's) with their
    weights at ``now``; tools taught by fewer than ``min_sessions`` sessions left out."""
    picked = catalog.tools if tool is None else {tool: catalog.tools.get(tool, {})}
    found: list[LearnedRequest] = []
    for name, entries in picked.items():
        if params.min_sessions > 1:
            taught = {s for e in entries.values() for s in e.sessions}
            if len(taught) < params.min_sessions:
                continue
        found.extend(
            LearnedRequest(
                name,
                e.text,
                weight_of(e, catalog, params, now),
                e.support,
                e.last,
                tuple(e.sessions),
                key,
                e.terms,
                None if e.vector is None else tuple(e.vector),
                e.embedder,
            )
            for key, e in entries.items()
        )
    return tuple(found)
