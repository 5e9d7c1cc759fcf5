"""What a session's model sees: the tools loaded into its requests and what they cost.

Every front door asks its run which tools the model sees on each request
(:meth:`~toolsearch.search.run.SearchRun.visible_names`); the run hands that list to a
:class:`LoadedTracker`, which keeps the latest :class:`LoadedTools` of each session (the
search tool, the pinned tools, the discovered ones, each with its definition's tokens) and
logs one ``INFO`` line whenever the list changes (the session id hashed, as in spans).
``ToolSearchSessions.loaded(session)`` and ``advisor.loaded(session)`` read it; the search
span carries the loaded tokens as ``toolsearch.tools.loaded_tokens``.

Tokens are counted on each definition's compact JSON by a
:class:`~toolsearch.tokens.TokenCounter` (approximate words by default; the benchmark's
``BpeTokenCounter`` is exact for OpenAI's encodings): what a definition weighs, not a
provider's bill.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from cachetools import LRUCache

from toolsearch.observe import hash_session_id
from toolsearch.tokens import TokenCounter, WhitespaceTokenCounter
from toolsearch.tools.definition import ToolDefinition

__all__ = ["LoadedTool", "LoadedTools", "LoadedTracker"]

_log = logging.getLogger("toolsearch.search")

DEFAULT_MAX_SESSIONS = 10_000
"""Sessions whose latest view is kept (least recently changed out)."""


@dataclass(frozen=True)
class LoadedTool:
    """One tool in the model's requests: its name, its definition's tokens, and why it is
    there (``"search"``: the search tool; ``"call"``: the call tool of
    ``injection="results"``; ``"pinned"``; ``"discovered"``)."""

    name: str
    tokens: int
    reason: str
    wire_name: str = ""
    """The name the provider sees (a provider's name rule may rewrite it; the tool's own
    name when none does)."""

    @property
    def sent_as(self) -> str:
        """The wire name, or the own name when none was recorded."""
        return self.wire_name or self.name


@dataclass(frozen=True)
class LoadedTools:
    """The tools a session's model saw on its latest request, in the order sent."""

    session_id: str
    tools: tuple[LoadedTool, ...]
    counter: str
    """The tokenizer that counted (``approximate-words`` unless one was given)."""
    added: tuple[str, ...] = ()
    """Tools this request holds that the one before did not (own names)."""
    removed: tuple[str, ...] = ()
    """Tools the request before held that this one does not."""

    @property
    def cache_miss(self) -> str | None:
        """Why a tools-first prompt cache cannot read past the tool list on this request:
        ``"tool removed"`` or ``"tool added"`` when the list changed (the adapters that
        carry :class:`~toolsearch.chat.options.ToolChange` records keep the prefix
        instead), ``None`` when it did not. What the provider actually read, wrote and
        billed is on the model span (``toolsearch.cache.*``)."""
        if self.removed:
            return "tool removed"
        if self.added:
            return "tool added"
        return None

    @property
    def names(self) -> list[str]:
        """The tools' own names (as registered), in the order sent."""
        return [tool.name for tool in self.tools]

    @property
    def wire_names(self) -> list[str]:
        """The names the provider sees, in the order sent (beside :attr:`names`: a
        provider's name rule may rewrite a name, ``weather.get`` to ``weather_get``)."""
        return [tool.sent_as for tool in self.tools]

    @property
    def tokens(self) -> int:
        """Tokens of every loaded definition together."""
        return sum(tool.tokens for tool in self.tools)

    def __len__(self) -> int:
        return len(self.tools)


class LoadedTracker:
    """The latest :class:`LoadedTools` of each session (thread-safe, bounded)."""

    def __init__(
        self, counter: TokenCounter | None = None, *, max_sessions: int = DEFAULT_MAX_SESSIONS
    ) -> None:
        self.counter: TokenCounter = counter if counter is not None else WhitespaceTokenCounter()
        self._views: LRUCache[str, LoadedTools] = LRUCache(maxsize=max(1, max_sessions))
        self._tokens: LRUCache[str, int] = LRUCache(maxsize=100_000)
        self._lock = threading.Lock()

    def update(
        self,
        session_id: str,
        search_tool: ToolDefinition,
        definitions: Sequence[ToolDefinition],
        pinned: Sequence[str],
        *,
        call_tool: ToolDefinition | None = None,
        wire: Callable[[str], str] | None = None,
    ) -> LoadedTools:
        """Record what the session's model sees now; log the change if there is one.
        ``wire`` maps an own name to the provider's (the run's name rule)."""
        extra = [call_tool] if call_tool is not None else []
        names = [search_tool.name, *(d.name for d in [*extra, *definitions])]
        with self._lock:
            before = self._views.get(session_id)
            if before is not None and before.names == names:
                if before.added or before.removed:  # this request changed nothing
                    before = self._views[session_id] = replace(before, added=(), removed=())
                return before
        pinned_names = set(pinned)
        named = wire or (lambda name: name)
        tools = [LoadedTool(search_tool.name, self.count(search_tool), "search")]
        tools += [LoadedTool(d.name, self.count(d), "call") for d in extra]
        tools += [
            LoadedTool(d.name, self.count(d), "pinned" if d.name in pinned_names else "discovered")
            for d in definitions
        ]
        tools = [replace(t, wire_name=named(t.name)) for t in tools]
        added = [n for n in names if before is None or n not in before.names]
        removed = [n for n in (before.names if before else ()) if n not in names]
        view = LoadedTools(
            session_id,
            tuple(tools),
            self.counter.name,
            added=tuple(added) if before is not None else (),
            removed=tuple(removed),
        )
        with self._lock:
            self._views[session_id] = view
        _log.info(
            "tool search session %s: %d tools loaded, ~%d tokens (%s)",
            hash_session_id(session_id),
            len(view),
            view.tokens,
            ", ".join([*(f"+{n}" for n in added), *(f"-{n}" for n in removed)]) or "unchanged",
        )
        return view

    def get(self, session_id: str) -> LoadedTools | None:
        with self._lock:
            return self._views.get(session_id)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._views.pop(session_id, None)

    def count(self, definition: ToolDefinition) -> int:
        """A definition's tokens on its compact JSON (cached by fingerprint)."""
        key = definition.fingerprint
        with self._lock:
            found = self._tokens.get(key)
        if found is None:
            text = json.dumps(definition.to_dict(), ensure_ascii=False, separators=(",", ":"))
            found = self.counter.count(text)
            with self._lock:
                self._tokens[key] = found
        return found
