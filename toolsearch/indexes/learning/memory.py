"""The usage memory: per tool set, per tool, the requests that led to a successful call.

Learning from use needs no training step and no new dependency: a tool's representation
gains the words people actually used to reach it. :class:`UsageMemory` keeps them, and
:class:`~toolsearch.indexes.learning.learned.LearnedToolIndex` searches them beside the tool's own
text.

**What it stores: user request text.** Each entry is a search query as the model sent it
(the user's words, often copied verbatim), the hashed ids of the sessions that made it (up
to ``max_contributors``: its support), and two clocks (time and event number). Keep the
file like any other user data, and delete a user's requests with
:meth:`UsageMemory.forget_session` (by hashed session id).

What counts: a search followed, in the same session, by a **successful** call of one of
its hits (:mod:`toolsearch.indexes.learning.live`); calls whose outcome was not recorded
count only with ``count_unknown_outcomes=True``. The memory is a
:class:`~toolsearch.search.logs.sink.SearchLog` (it learns live) and :meth:`replay`
rebuilds it from a JSONL search log exactly as live learning would have. The bounds, decay
and flood limits are :class:`UsageParams` (docs/learning-from-use.md says why each).

Safety (why a single request cannot move another user's ranking): requests without a
conversation id count as one contributor (:data:`~toolsearch.indexes.learning.model.ANONYMOUS`),
not one each; :class:`~toolsearch.indexes.learning.learned.LearnedToolIndex` lets a learned tool
outrank the inner index's top hit only once ``outrank_sessions`` distinct sessions taught
it; ``UsageParams(tenant=...)`` scopes learning per tenant, and ``store_text=False``
keeps no request text (a hash, hashed terms and a vector only).

Persistence: the memory lives behind a store (:mod:`toolsearch.indexes.learning.store`:
in memory, a file, Redis), read lazily on first use and saved by merging into what the
store holds, so several workers learn into one memory without losing each other's
requests. It is saved every ``autosave_every`` learned requests, on :meth:`close`, and at
interpreter exit. A store that cannot be read (a corrupt file, a folder at the path,
numbers out of range, nesting too deep) gives one :class:`UsageMemoryError` naming it,
logged once; from then on the memory answers with nothing, learns nothing and never reads
the store again, and it refuses to overwrite it. A read document is re-bounded by the
memory's :class:`UsageParams`.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time as _time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from toolsearch.errors import UsageMemoryError
from toolsearch.indexes.learning.carry import inherit
from toolsearch.indexes.learning.live import LiveJoin
from toolsearch.indexes.learning.model import (
    ANONYMOUS,
    Catalog,
    Entry,
    LearnedRequest,
    ReplayStats,
    UsageParams,
    catalog_digest,
    drop_entry,
    forget_in,
    hash_terms,
    learned_requests,
    normalize_request,
    priority,
    request_key,
)
from toolsearch.indexes.learning.persist import (
    USAGE_FORMAT,
    USAGE_VERSION,
    adopt_stored,
    to_document,
)
from toolsearch.indexes.learning.store import CLOSE_AT_EXIT, FileUsageStore, UsageStore
from toolsearch.indexes.learning.warm import count_use, warm_tools
from toolsearch.indexes.text import clean_text
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch
from toolsearch.search.working_set.warm import WarmTool
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "ANONYMOUS",
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


class UsageMemory:
    """Per tool set, per tool, the requests that led to a successful call (a ``SearchLog``
    and a :class:`~toolsearch.search.working_set.warm.WarmSetSource`).

    Args:
        path: The JSON file it is kept in (a :class:`FileUsageStore`; ``None``: in memory
            only, unless ``store`` is given).
        store: Where it is kept instead of a file (an
            :class:`~toolsearch.indexes.learning.store.InMemoryUsageStore`, a
            :class:`~toolsearch.indexes.learning.redis_store.RedisUsageStore`).
        params: The bounds, decay and safety options (:class:`UsageParams`).
        clock: Seconds since the epoch, for weights at search time (``time.time``; inject
            one in tests). Learning uses each record's own time, never this clock.
        autosave_every: Save after this many learned requests (``None``: on :meth:`close`
            and at exit only). A save merges into the store, in the request that learned.
        save_at_exit: Save what is unsaved when the interpreter exits.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        store: UsageStore | None = None,
        params: UsageParams | None = None,
        clock: Callable[[], float] = _time.time,
        autosave_every: int | None = None,
        save_at_exit: bool = True,
    ) -> None:
        if autosave_every is not None and autosave_every < 1:
            raise ValueError("autosave_every must be at least 1")
        if path is not None and store is not None:
            raise ValueError("pass a path or a store, not both")
        self.path = None if path is None else Path(path)
        self.store: UsageStore | None = FileUsageStore(path) if path is not None else store
        self.params = params or UsageParams()
        self.clock = clock
        self.autosave_every = autosave_every
        self._catalogs: dict[str, Catalog] = {}
        self._join = LiveJoin(self.params)
        self._lock = threading.RLock()
        self._loaded = self.store is None
        self._broken: UsageMemoryError | None = None
        self._autosave_failed = False
        self._unsaved = 0
        self._stamp = 0
        self._fingerprints: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._embed: Callable[[list[str]], list[list[float]]] | None = None
        self._embedder_name = ""
        if self.store is not None and save_at_exit:
            CLOSE_AT_EXIT.add(self)

    def __repr__(self) -> str:
        if self.path is not None:
            return f"UsageMemory({str(self.path)!r})"
        return "UsageMemory(in memory)" if self.store is None else f"UsageMemory({self.store!r})"

    @property
    def broken(self) -> UsageMemoryError | None:
        """Why the store could not be read (the memory then stands aside), or ``None``."""
        return self._broken

    # -- the SearchLog protocol (live learning) ----------------------------------------

    def record_search(self, search: LoggedSearch) -> None:
        """Keep a search until its session's calls say which of its hits it led to."""
        if search.error or self._broken is not None:
            return
        with self._lock:
            self._join.search(search)
            if search.tools:
                self._note_fingerprints(search.tool_set, search.tools)

    def _note_fingerprints(self, digest: str, tools: Sequence[ToolDefinition]) -> None:
        if digest not in self._fingerprints:
            self._fingerprints[digest] = {t.name: t.fingerprint for t in tools}
            while len(self._fingerprints) > self.params.max_tool_sets:
                self._fingerprints.popitem(last=False)

    def record_calls(self, calls: LoggedCalls) -> None:
        """Learn each successful call's request: the latest earlier search of the session
        that returned the tool (the search log's join), once per search and tool, and
        with ``turn_searches`` the turn's other searches too; count every call with a
        known outcome for the warm set."""
        if self._broken is not None:
            return
        try:
            self._record_calls(calls)
        except UsageMemoryError:  # the store broke: logged once by _ensure_loaded
            return

    def _record_calls(self, calls: LoggedCalls) -> None:
        with self._lock:
            if calls.ok is not None and calls.names:
                self._count_use(calls, round(calls.time, 6))
            for lesson in self._join.calls(calls):
                self._learn(
                    self.params.scope(lesson.tool_set),
                    lesson.tool,
                    lesson.query,
                    lesson.contributor,
                    lesson.time,
                )

    def _count_use(self, calls: LoggedCalls, at: float) -> None:
        """Decayed call and success counts per tool (the warm set's weights)."""
        key = self.params.scope(calls.tool_set)
        catalog = self._catalogs.get(key)
        if catalog is None:
            self._ensure_loaded()
            catalog = self._catalog(key, calls.tool_set)
        count_use(catalog, calls.names, calls.ok or (), at, self.params)

    # -- learning ----------------------------------------------------------------------

    def learn(
        self,
        tool_set: str,
        tool: str,
        request: str,
        *,
        session: str,
        time: float,
        anonymous: bool = False,
    ) -> bool:
        """Remember that ``request`` led to a successful call of ``tool`` in ``tool_set``
        (a :func:`catalog_digest`), by ``session`` (hashed; ``anonymous``: the one
        anonymous contributor) at ``time``. Returns whether the memory changed (``False``:
        a repeat by the same session, over a flood limit, blank, or the weakest entry of a
        full tool)."""
        contributor = ANONYMOUS if anonymous else session
        with self._lock:
            return self._learn(self.params.scope(tool_set), tool, request, contributor, time)

    def _learn(self, key: str, tool: str, request: str, session: str, time: float) -> bool:
        params = self.params
        text = clean_text(request)[: params.max_request_chars].strip()
        if not text:
            return False
        entry_key = normalize_request(text) if params.store_text else request_key(text)
        at = round(float(time), 6)
        self._ensure_loaded()
        catalog = self._catalog(key, key.rsplit("/", 1)[-1])
        entries = catalog.tools.setdefault(tool, {})
        entry = entries.get(entry_key)
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
            entries[entry_key] = self._entry(text, entry_key, session, at, catalog.events)
            catalog.by_session[session] += 1
            if len(entries) > params.max_per_tool:
                weakest = min(entries, key=lambda k: priority(entries[k], catalog, params, at))
                drop_entry(catalog, entries, weakest)
                if weakest == entry_key:  # the new request is the weakest: nothing changes
                    catalog.events -= 1
                    return False
        catalog.changed = at
        self._changed(catalog, tool)
        if self.autosave_every is not None and self._unsaved >= self.autosave_every:
            self._autosave()
        return True

    def _entry(self, text: str, key: str, session: str, at: float, event: int) -> Entry:
        if self.params.store_text:
            return Entry(text, [session], at, at, event)
        from toolsearch.indexes.lexical.analysis import analyze

        entry = Entry("", [session], at, at, event, terms=hash_terms(analyze(text)), key=key)
        if self._embed is not None:  # the text is not kept: embed it now or never
            try:
                entry.vector = [float(x) for x in self._embed([text])[0]]
                entry.embedder = self._embedder_name
            except Exception:
                _log.warning("usage memory: embedding a request failed", exc_info=True)
        return entry

    def attach_embedder(self, name: str, embed: Callable[[list[str]], list[list[float]]]) -> None:
        """The embedder text-free entries are embedded with as they are learned (a learned
        index attaches its vote's embedder)."""
        self._embedder_name, self._embed = name, embed

    def _catalog(self, key: str, digest: str) -> Catalog:
        """The catalog under ``key``, made on first use; a new tool set inherits what its
        unchanged tools (same fingerprint) learned in another tool set of the tenant."""
        catalog = self._catalogs.get(key)
        if catalog is not None:
            return catalog
        catalog = self._catalogs[key] = Catalog()
        prints = self._fingerprints.get(digest)
        if prints:
            catalog.fingerprints = dict(prints)
            self._inherit(key, catalog)
        while len(self._catalogs) > self.params.max_tool_sets:
            oldest = min(self._catalogs, key=lambda k: self._catalogs[k].changed)
            del self._catalogs[oldest]
        return catalog

    def _inherit(self, key: str, catalog: Catalog) -> None:
        if inherit(self._catalogs, key, catalog):
            self._changed(catalog)

    def adopt(self, tools: Sequence[ToolDefinition]) -> bool:
        """Make ``tools``' tool set inherit what its unchanged tools learned in other tool
        sets (a learned index calls it for a tool set with nothing learned yet). Returns
        whether anything was carried over. Never raises for a broken store."""
        digest = catalog_digest(tools)
        key = self.params.scope(digest)
        with self._lock:
            try:
                self._ensure_loaded()
            except UsageMemoryError:
                return False
            self._note_fingerprints(digest, tools)
            if key in self._catalogs:
                return False
            catalog = self._catalog(key, digest)
            if not catalog.tools and not catalog.use:
                del self._catalogs[key]
                return False
            return True

    def _changed(self, catalog: Catalog, tool: str | None = None) -> None:
        """Stamp a change of one tool's learning (``None``: of the whole tool set); stamps
        are never reused, even after :meth:`clear`."""
        self._stamp += 1
        catalog.version = self._stamp
        if tool is None:
            catalog.full = self._stamp
        else:
            catalog.stamps[tool] = self._stamp
        self._unsaved += 1

    def changes(self, tool_set: str, since: int) -> tuple[int, set[str] | None]:
        """The tool set's version and the tools whose learning changed after version
        ``since`` (``None``: all of them may have; a learned index then rebuilds its
        whole view, else only those tools' parts)."""
        with self._lock:
            self._ensure_loaded()
            catalog = self._catalogs.get(self.params.scope(tool_set))
            if catalog is None:
                return 0, None
            if since <= 0 or catalog.full > since:
                return catalog.version, None
            return catalog.version, {t for t, at in catalog.stamps.items() if at > since}

    # -- reading -------------------------------------------------------------------------

    def version(self, tool_set: str) -> int:
        """A number that changes whenever the tool set's requests change (0: none yet);
        :class:`UsageMemoryError` (cached, the store is not read again) when broken."""
        with self._lock:
            self._ensure_loaded()
            catalog = self._catalogs.get(self.params.scope(tool_set))
            return 0 if catalog is None or not catalog.tools else catalog.version

    def requests(self, tool_set: str, tool: str | None = None) -> tuple[LearnedRequest, ...]:
        """The tool set's searchable requests (of one ``tool``, or every tool's), each with
        its weight at the clock's time; tools taught by fewer than ``min_sessions``
        sessions are left out. Empty for a tool set the memory has never seen."""
        now = self.clock()
        with self._lock:
            self._ensure_loaded()
            catalog = self._catalogs.get(self.params.scope(tool_set))
            if catalog is None:
                return ()
            return learned_requests(catalog, self.params, now, tool)

    def warm_tools(
        self,
        tools: Sequence[ToolDefinition],
        *,
        tenant: str | None = None,
        limit: int = 10,
    ) -> list[WarmTool]:
        """The session's most used tools, most used first (a
        :class:`~toolsearch.search.working_set.warm.WarmSetSource`): successful calls decayed with
        ``half_life_days``, with their recent success rate. Empty when nothing is known
        or the store cannot be read; never raises."""
        try:
            with self._lock:
                self._ensure_loaded()
                digest = catalog_digest(tools)
                key = self.params.scope(digest, tenant)
                catalog = self._catalogs.get(key)
                if catalog is None and self.adopt(tools):
                    catalog = self._catalogs.get(key)
                if catalog is None:
                    return []
                return warm_tools(catalog, tools, self.params, self.clock(), limit)
        except Exception:
            _log.debug("usage memory: no warm set", exc_info=True)
            return []

    def serving(self, tool_set: str) -> bool:
        """Whether a learned index serves what the tool set learned (``False`` after a
        shadow evaluation found it worse: :meth:`set_serving`)."""
        with self._lock:
            self._ensure_loaded()
            catalog = self._catalogs.get(self.params.scope(tool_set))
            return catalog is None or catalog.serve

    def set_serving(self, tool_set: str, serve: bool) -> None:
        """Serve (or only shadow) what the tool set learned; saved with the memory."""
        with self._lock:
            self._ensure_loaded()
            key = self.params.scope(tool_set)
            catalog = self._catalog(key, tool_set)
            if catalog.serve != serve:
                catalog.serve = serve
                self._changed(catalog)
                self._replace = self._replace or serve

    def tool_sets(self) -> list[str]:
        with self._lock:
            self._ensure_loaded()
            return list(self._catalogs)

    def stats(self) -> dict[str, int]:
        """Tool sets, tools with requests, requests, distinct sessions and awaiting
        searches (with their characters) held."""
        with self._lock:
            self._ensure_loaded()
            catalogs = self._catalogs.values()
            sessions = {s for c in catalogs for s in c.by_session}
            return {
                "tool_sets": len(self._catalogs),
                "tools": sum(sum(1 for e in c.tools.values() if e) for c in catalogs),
                "requests": sum(c.size for c in catalogs),
                "sessions": len(sessions),
                "pending_searches": self._join.searches,
                "pending_chars": self._join.chars,
            }

    # -- forgetting ----------------------------------------------------------------------

    def forget_session(self, session: str) -> int:
        """Remove a (hashed) session from every request; a request no other remembered
        session made is deleted. Returns how many requests were deleted. The next save
        replaces the store's copy rather than merging into it."""
        deleted = 0
        with self._lock:
            self._ensure_loaded()
            self._join.forget(session)
            for catalog in self._catalogs.values():
                if session not in catalog.by_session:
                    continue
                deleted += forget_in(catalog, session)
                self._changed(catalog)
            self._replace = True
        return deleted

    def clear(self, tool_set: str | None = None) -> None:
        """Forget one tool set's requests, or everything (the next save replaces)."""
        with self._lock:
            self._ensure_loaded()
            if tool_set is None:
                self._catalogs.clear()
                self._join.clear()
            else:
                self._catalogs.pop(self.params.scope(tool_set), None)
            self._unsaved += 1
            self._replace = True

    _replace = False

    # -- rebuilding from a log -------------------------------------------------------------

    def replay(
        self,
        records: str | os.PathLike[str] | Iterable[LoggedSearch | LoggedCalls],
        *,
        progress: Callable[[int], None] | None = None,
    ) -> ReplayStats:
        """Feed a search log (a JSONL path, or records) to the memory in order, as live
        learning would have received it. ``progress`` is called with each record's count."""
        from toolsearch.indexes.learning.replay import replay

        return replay(self, records, self._events, progress)

    def _events(self) -> int:
        with self._lock:
            return sum(c.events for c in self._catalogs.values())

    # -- persistence ---------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str] | None = None) -> Path | None:
        """Merge the memory into its store (another memory's learning there is kept, and
        this memory then holds it too); with ``path``, write a copy to that file instead.
        Returns the file written (``None`` for a store that is not a file). Searches
        awaiting their calls are not saved. :class:`UsageMemoryError` when the store
        cannot be read or written."""
        from toolsearch.indexes.learning.persist import dump_document, write_atomically

        with self._lock:
            self._ensure_loaded()
            if path is not None and (self.path is None or Path(path) != self.path):
                document = to_document(self._catalogs, self.params, self.clock())
                target = Path(path)
                write_atomically(target, dump_document(document))
                return target
            if self.store is None:
                raise ValueError("this usage memory has no path: pass save(path)")
            merged = self.store.merge_in(
                self._catalogs, self.params, self.clock(), replace=self._replace
            )
            self._adopt_stored(merged)
            self._unsaved, self._replace = 0, False
            return self.path

    def _adopt_stored(self, merged: dict[str, Catalog]) -> None:
        """Take the store's merged catalogs, restamping those whose content changed."""
        self._stamp = adopt_stored(self._catalogs, merged, self._stamp)
        self._catalogs = merged

    def _autosave(self) -> None:
        """Save in the request that learned; a failing save is logged once and not tried
        again until :meth:`save` or :meth:`close`."""
        if self._autosave_failed:
            return
        try:
            self.save()
        except (UsageMemoryError, OSError) as error:
            self._autosave_failed = True
            _log.warning("usage memory: autosave failed, not retried until close(): %s", error)

    def close(self) -> None:
        """Save what is unsaved (once; an error is logged, not raised)."""
        CLOSE_AT_EXIT.discard(self)
        if self.store is None or self._broken is not None or not self._unsaved:
            return
        try:
            self.save()
        except (UsageMemoryError, OSError) as error:
            _log.warning("usage memory: saving on close failed: %s", error)

    @classmethod
    def load(cls, path: str | os.PathLike[str], **options: Any) -> UsageMemory:
        """A memory read from ``path`` now (:class:`UsageMemoryError` if it cannot be)."""
        memory = cls(path, **options)
        memory.tool_sets()
        return memory

    def _ensure_loaded(self) -> None:
        """Read the store on first use (under the lock). A broken store raises its
        :class:`UsageMemoryError`, logged once, and is never read again."""
        if self._loaded:
            return
        if self._broken is not None:
            raise self._broken
        assert self.store is not None
        try:
            stored = self.store.read(self.params, self.clock())
        except UsageMemoryError as error:
            self._broken = error
            _log.warning("usage memory unreadable, learning and serving without it: %s", error)
            raise
        except Exception as error:  # a store's own failure: typed, once
            self._broken = UsageMemoryError(f"{self.store!r}: cannot be read ({error!r})"[:500])
            _log.warning("usage memory unreadable, learning and serving without it: %s", error)
            raise self._broken from None
        self._catalogs = stored
        for catalog in self._catalogs.values():
            self._stamp += 1
            catalog.version = catalog.full = self._stamp
        self._loaded = True
