"""The working set: which tools a session's model holds, chosen by what they cost.

One policy over one cost model (:mod:`toolsearch.costs`, the one the benchmark bills with)
decides, per session and tool set:

* **load everything** when the full tool list, held as a stable cached prefix, costs less
  than the search loop's small, changing lists (a small catalog: tool search must never
  bill more than the full loop). The comparison is per request, in fresh-token
  equivalents: the full list at the cache's read price (its write spread over the
  conversation, or paid per conversation when the traffic lets it expire) against the
  search tool plus a search's worth of tools (``max_results`` definitions of the tool
  set's mean size), which change at each discovery and are mostly under the minimum a
  provider caches, so billed fresh.
* a **warm set** (from a :class:`~toolsearch.search.working_set.warm.WarmSetSource`: the usage
  memory, or configured names) held right after the search tool as a stable prefix, when
  it pays: when the search tool and the warm tools together reach the cache's minimum
  (under it they would be billed fresh on every request for nothing), and the warm tools
  cost less to hold than the full list. Not on a breakpoint cache (Anthropic): the
  adapter's breakpoints fall at the end of the whole tool list, never at the end of the
  warm tools, so the warm prefix would be written and never read across conversations
  (measured: 30.6 % billed saved with a warm set of 10 against 56.8 % without, on Acme).
* **pre-retrieval**: the user's message is searched before the first model call (the
  whole message, then its clauses) and the confident hits are loaded up front, so the
  model can act on its first request; the search tool stays for the rest
  (:meth:`~toolsearch.search.run.SearchRun.preload`).
* **changes that keep the prefix**: additions are appended (the tool list only grows at
  its end); removals wait for a point where the prefix is rewritten anyway (a discovery);
  each change is a :class:`~toolsearch.chat.options.ToolChange` on the request, for the
  adapters that can carry it without moving the cached prefix.

:func:`plan_working_set` is pure: the run calls it once per tool set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolsearch.chat.options import ToolChange
from toolsearch.costs import CacheShape, Traffic, hold_cost
from toolsearch.search.working_set.warm import WarmTool
from toolsearch.stores.session_store import MAX_STORED_CHANGES, StoredChanges
from toolsearch.tools.definition import ToolDefinition

__all__ = ["ChangeTracker", "WorkingSetPlan", "change_costs_more", "plan_working_set"]

EXPECTED_REQUESTS = 3.0
"""Requests of a typical conversation turn (a search, a call, an answer): the horizon
over which holding a list is weighed against changing it."""


@dataclass(frozen=True)
class WorkingSetPlan:
    """What a session's model holds before any search: every tool, or the warm ones.

    ``full_cost`` and ``search_cost`` are the per-request estimates the choice compared
    (fresh-token equivalents), kept for the loaded view and for tests."""

    load_all: bool
    warm: tuple[str, ...] = ()
    full_cost: float = 0.0
    search_cost: float = 0.0
    reason: str = ""


def plan_working_set(
    definitions: Sequence[ToolDefinition],
    *,
    search_definition: ToolDefinition,
    tokens: Callable[[ToolDefinition], int],
    shape: CacheShape,
    traffic: Traffic,
    max_results: int,
    load_all: str = "auto",
    warm: Sequence[WarmTool] = (),
) -> WorkingSetPlan:
    """Choose a session's starting working set (see the module docstring)."""
    if not definitions:
        return WorkingSetPlan(False, reason="no tools")
    sizes = [tokens(d) for d in definitions]
    full = sum(sizes)
    mean = full / len(sizes)
    search = tokens(search_definition)
    requests = EXPECTED_REQUESTS
    full_cost = hold_cost(full, shape, requests, traffic) / requests
    search_cost = search + min(max_results, len(sizes)) * mean
    if load_all == "always" or (load_all == "auto" and full_cost <= search_cost):
        return WorkingSetPlan(
            True,
            full_cost=full_cost,
            search_cost=search_cost,
            reason="always" if load_all == "always" else "the full list costs less",
        )
    by_name = {d.name: size for d, size in zip(definitions, sizes, strict=True)}
    names = [w.name for w in warm if w.name in by_name]
    if names and shape.breakpoints:  # no breakpoint ends the warm tools: nothing to read
        return WorkingSetPlan(
            False, (), full_cost, search_cost, reason="no breakpoint after the warm set"
        )
    held = search + sum(by_name[n] for n in names)
    warm_cost = hold_cost(held, shape, requests, traffic) / requests
    if names and held >= shape.minimum and warm_cost < full_cost:
        return WorkingSetPlan(
            False, tuple(names), full_cost, search_cost, reason="warm set held as a prefix"
        )
    reason = "warm set too small to cache" if names else "search"
    return WorkingSetPlan(False, (), full_cost, search_cost, reason=reason)


def change_costs_more(
    *, held: int, history: int, full: int, shape: CacheShape, rate: float = 1 / EXPECTED_REQUESTS
) -> bool:
    """Whether, at a point where the tool list is about to change, loading every tool
    for the rest of the session costs less than going on changing it.

    On a tools-first cache a change rewrites everything after the tools: the held list
    and the whole history (``held + history`` tokens, at the write price instead of the
    read price). Going on costs that about once every ``1/rate`` requests; every tool,
    held from now on, costs its extra tokens at the read price on every request::

        rate * (held + history) * (write - read)  >  (full - held) * read

    Early in a conversation the history is short and changing wins; once it grows, one
    last rewrite to the full list pays (measured on 30 Acme tasks in one conversation:
    docs/working-set.md).

    Where a change leaves the prefix in place (``shape.changes_keep_prefix``: Anthropic's
    mid-conversation tool changes, where an added tool travels in the messages) a change
    rewrites nothing, so going on is always cheaper: False."""
    if shape.changes_keep_prefix:
        return False  # the tools array stays put: a change costs only its own tokens
    if held + history < shape.minimum:
        return False  # nothing cached to lose
    return rate * (held + history) * (shape.write - shape.read) > (full - held) * shape.read


class ChangeTracker:
    """The additions and removals of one session's tool list, in order, each at the
    message position where it first showed (:class:`~toolsearch.chat.options.ToolChange`).

    One tracker lives as long as its session (the advisor keeps it beside the session's
    discovered names, :meth:`~toolsearch.search.sessions.ToolSearchSessions.change_tracker`),
    so every request of the conversation repeats every change so far, each at its first
    place, as the ``ToolChange`` contract asks: a change made on an earlier call keeps its
    ``tool_addition`` in the history, and its tool stays deferred.

    The first request starts from what the model held before (``base``): its tools are not
    changes; after that anything new is an addition and anything gone a removal. A new
    change is placed at the request's message count as :meth:`update` sees it, and
    :meth:`anchor` moves it to the count of the prompt as the model receives it (a chat
    memory inside the tool loop adds the conversation after the tool-search advisor), once,
    before that request goes out: later requests re-emit it at that place.

    Its state is plain data (:meth:`state`, :meth:`restore`: a
    :class:`~toolsearch.stores.session_store.StoredChanges`); given ``save``, the tracker
    hands it over each time it changed and its new changes are placed (once per model
    request at most), so the session store keeps it and another process continues the
    list (:meth:`~toolsearch.search.sessions.ToolSearchSessions.change_tracker`). It keeps
    at most ``max_changes`` changes: a request that would pass it starts the list over from
    its own tool list (no change on it; the tools handed over in the messages are dropped,
    to be found again), so its prefix is rewritten once, as a new conversation's would be."""

    def __init__(
        self,
        base: Sequence[str] = (),
        *,
        save: Callable[[StoredChanges], None] | None = None,
        max_changes: int = MAX_STORED_CHANGES,
    ) -> None:
        if not 0 < max_changes <= MAX_STORED_CHANGES:
            raise ValueError(f"max_changes must be between 1 and {MAX_STORED_CHANGES}")
        self.max_changes = max_changes
        self._save = save
        self.saved: StoredChanges | None = None
        """The state last saved or restored (what the store holds, as far as this tracker
        knows)."""
        self._dirty = False
        self._held: list[str] | None = list(base) if base else None
        self.changes: list[ToolChange] = []
        self.carried: list[str] = []
        """Tools pre-retrieval handed over in the messages (``injection="results"``), in
        order: each later request lists them after its own tools, so each shows once, as
        an addition at the place it was first handed over."""
        self._pending = 0
        """How many of the last ``changes`` still wait for :meth:`anchor`."""
        self._lock = threading.Lock()  # requests of one conversation may run at once

    @classmethod
    def restore(
        cls,
        stored: StoredChanges | None,
        *,
        save: Callable[[StoredChanges], None] | None = None,
        max_changes: int = MAX_STORED_CHANGES,
    ) -> ChangeTracker:
        """A tracker continuing ``stored`` (``None``: a new one)."""
        tracker = cls(save=save, max_changes=max_changes)
        if stored is not None:
            tracker._held = None if stored.held is None else list(stored.held)
            tracker.changes = list(stored.changes)
            tracker.carried = list(stored.carried)
            tracker.saved = stored
        return tracker

    def state(self) -> StoredChanges:
        """The tracker's state as a session store keeps it."""
        with self._lock:
            return self._state()

    def holds(self, stored: StoredChanges | None) -> bool:
        """Whether ``stored`` is the state this tracker saved or restored last (so the
        tracker may go on, instead of one restored from ``stored``)."""
        return stored is self.saved or stored == self.saved

    def _state(self, changes: tuple[ToolChange, ...] | None = None) -> StoredChanges:
        held = None if self._held is None else tuple(self._held)
        changes = tuple(self.changes) if changes is None else changes
        return StoredChanges(held, changes, tuple(self.carried))

    def _flush(self, changes: tuple[ToolChange, ...]) -> tuple[ToolChange, ...]:
        """Hand a changed state to ``save`` (under ``_lock``); returns ``changes`` (the
        tuple of :attr:`changes`, shared with the state)."""
        if self._dirty and self._save is not None:
            state = self._state(changes)
            self._save(state)
            self.saved = state
        self._dirty = False
        return changes

    def carry(self, names: Sequence[str]) -> None:
        """Note tools handed over in the messages (see :attr:`carried`); saved with the
        next request's tool list."""
        with self._lock:
            new = [n for n in dict.fromkeys(names) if n not in self.carried]
            if new:
                self.carried += new
                self._dirty = True

    @property
    def started(self) -> bool:
        """Whether a request of the session recorded its tool list already."""
        return self._held is not None

    def differs(self, names: Sequence[str]) -> bool:
        """Whether ``names`` would change the list the model held on the request before."""
        return self._held is not None and list(names) != self._held

    def update(self, names: Sequence[str], messages: int) -> tuple[ToolChange, ...]:
        """Record the tool list of a request with ``messages`` messages; return every
        change of the session so far (the new ones at ``messages`` until anchored)."""
        with self._lock:
            changes = self._update(list(names), messages)
            if self._pending:  # saved once placed (anchor)
                return changes
            return self._flush(changes)

    def _update(self, names: list[str], messages: int) -> tuple[ToolChange, ...]:
        self._pending = 0
        if names != self._held:
            self._dirty = True
        if self._held is None:
            self._held = names
            return tuple(self.changes)
        current = set(names)
        before = set(self._held)
        removed = tuple(n for n in self._held if n not in current)
        added = tuple(n for n in names if n not in before)
        if len(self.changes) + bool(removed) + bool(added) > self.max_changes:
            carried = set(self.carried)  # full: start over from this request's list
            self.changes, self.carried = [], []
            self._held = [n for n in names if n not in carried]
            return ()
        if removed:
            self.changes.append(ToolChange("remove", removed, messages))
            self._pending += 1
        if added:
            self.changes.append(ToolChange("add", added, messages))
            self._pending += 1
        self._held = names
        return tuple(self.changes)

    def anchor(self, messages: int) -> tuple[ToolChange, ...]:
        """Place the latest request's new changes after ``messages`` messages (the prompt
        as the model receives it); return every change of the session so far."""
        with self._lock:
            return self._anchor(messages)

    def _anchor(self, messages: int) -> tuple[ToolChange, ...]:
        if self._pending:
            cut = len(self.changes) - self._pending
            self.changes[cut:] = [ToolChange(c.kind, c.names, messages) for c in self.changes[cut:]]
            self._pending = 0
            self._dirty = True
        return self._flush(tuple(self.changes))
