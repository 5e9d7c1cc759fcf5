"""The one seam every index backend implements: rank a query inside one session's tools.

A :class:`Ranker` knows how to score; it knows nothing of sessions. ``prepare`` turns one
session's tools (a :class:`SessionTools` snapshot) into a
:class:`SessionRanker`, built once per distinct tool set and shared by every session that
registers the same tools; ``SessionRanker.rank`` scores a query against it. The session
layer (:class:`~toolsearch.indexes.session.SessionIndex`) owns the rest: snapshots and
fingerprints, isolation, categories, exact-name-first, exclusions, ``max_results`` and
timing. Wrappers (the hybrid, the reranker) are rankers built from other rankers, through
this protocol only.

Writing a backend is writing a ranker::

    class LengthRanker:
        search_type = "length"

        def prepare(self, tools):
            return LengthSession(tools)

    class LengthSession:
        def __init__(self, tools):
            self.tools = tools

        def rank(self, query, limit, allowed=None):
            positions = range(len(self.tools.tools)) if allowed is None else allowed
            scored = sorted(((i, -len(self.tools.tools[i].description)) for i in positions),
                            key=lambda hit: (-hit[1], hit[0]))
            return Ranking(tuple(scored[:limit]), len(scored))

    index = SessionIndex(LengthRanker())   # a ToolIndex
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol, runtime_checkable

from toolsearch.indexes.text import PreparedTool, clean_text, prepare_tool
from toolsearch.tools.definition import ToolDefinition

__all__ = ["Hit", "Ranker", "Ranking", "SessionRanker", "SessionTools"]


@dataclass(frozen=True, eq=False)
class SessionTools:
    """An immutable snapshot of one session's tools, in registration order, unique names.

    ``prepared`` (the searchable text) is computed on first use: a catalog-backed session
    only needs its tools' fingerprints to register.
    """

    tools: tuple[ToolDefinition, ...]
    by_name: dict[str, int] = field(repr=False, default_factory=dict)
    by_lower_name: dict[str, int] = field(repr=False, default_factory=dict)

    @classmethod
    def of(cls, tools: Sequence[ToolDefinition]) -> SessionTools:
        unique: dict[str, ToolDefinition] = {}
        for tool in tools:
            if not isinstance(tool, ToolDefinition):
                raise TypeError(
                    f"index_tools needs ToolDefinition objects, got {type(tool).__name__}"
                )
            unique.setdefault(tool.name, tool)  # first registration of a name wins
        ordered = tuple(unique.values())
        names = {t.name: i for i, t in enumerate(ordered)}
        lower: dict[str, int] = {}
        for i, tool in enumerate(ordered):
            lower.setdefault(tool.name.lower(), i)
        for i, tool in enumerate(ordered):  # a query arrives cleaned (lone surrogates: U+FFFD)
            cleaned = clean_text(tool.name)
            if cleaned != tool.name:
                names.setdefault(cleaned, i)
                lower.setdefault(cleaned.lower(), i)
        return cls(ordered, names, lower)

    @cached_property
    def prepared(self) -> tuple[PreparedTool, ...]:
        return tuple(prepare_tool(t) for t in self.tools)

    @cached_property
    def fingerprints(self) -> tuple[str, ...]:
        """The tools' fingerprints, in order: what identifies a tool set."""
        return tuple(tool.fingerprint for tool in self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def summary(self, position: int) -> str:
        return prepare_tool(self.tools[position]).summary

    def exact(self, query: str) -> int | None:
        """The tool whose name is the query: case-sensitive first, then case-insensitive."""
        text = query.strip()
        found = self.by_name.get(text)
        return found if found is not None else self.by_lower_name.get(text.lower())

    def positions(self, names: frozenset[str]) -> set[int]:
        """The positions of the tools named in ``names`` (names it lacks are ignored)."""
        return {self.by_name[n] for n in names if n in self.by_name}


Hit = tuple[int, float]
"""``(position of the tool in the session snapshot, score)``."""


@dataclass(frozen=True, slots=True)
class Ranking:
    """Hits best first (ties: earlier registration first), and how many tools matched."""

    hits: tuple[Hit, ...] = ()
    total: int = 0

    @classmethod
    def of(cls, hits: Sequence[Hit], total: int) -> Ranking:
        return cls(tuple(hits), total)


@runtime_checkable
class SessionRanker(Protocol):
    """A ranker prepared for one set of tools."""

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        """The best ``limit`` tools for ``query``.

        ``allowed`` (positions, increasing) restricts the search *before* ranking: only
        those tools are scored, and statistics such as BM25's document frequencies are
        theirs alone. ``query`` is never blank here; a ranker never sees another session.
        """
        ...


@runtime_checkable
class Ranker(Protocol):
    """Scores queries against sessions' tools; see the module docstring."""

    @property
    def search_type(self) -> str:
        """What responses report as ``metadata.search_type`` (``"bm25"``...)."""
        ...

    def prepare(self, tools: SessionTools) -> SessionRanker:
        """Prepare ``tools`` for ranking (called once per distinct tool set)."""
        ...
