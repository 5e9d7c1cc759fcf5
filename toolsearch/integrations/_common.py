"""What every framework integration shares: one :class:`ToolSearcher` over a toolsearch index.

A framework hands toolsearch its own tool objects on every run (pydantic-ai's
``ToolDefinition``, LangChain's ``BaseTool``, the Agents SDK's ``FunctionTool``). The
integrations turn them into toolsearch :class:`~toolsearch.tools.definition.ToolDefinition`
values (cached per tool object, so a run does not re-hash a 2,000-tool catalog) and search
them through a :class:`~toolsearch.search.registry.SessionRegistry`: each distinct tool set
of a session is indexed once, under its own key, and a search holds that key while it runs.
The same registry keeps what a session discovered, in the registry's
:class:`~toolsearch.search.store.SessionStore` (in memory, or Redis for several workers).
"""

from __future__ import annotations

import importlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from toolsearch.errors import MissingExtraError, ToolIndexError
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.store import SessionStore
from toolsearch.search.types import ToolIndex, ToolSearchRequest
from toolsearch.tools.definition import ToolDefinition

__all__ = ["ToolSearcher", "require", "resolve_index"]

T = TypeVar("T")

DEFAULT_INDEX_SPEC = "bm25"
"""The index an integration builds when given none (``regex`` without ``toolsearch[bm25]``)."""


def require(module: str, *, extra: str, feature: str, package: str) -> Any:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(feature, extra, package) from exc


def resolve_index(index: ToolIndex | str | None) -> ToolIndex:
    """An index object as is; an index spec (``"bm25"``, ``"hybrid"``, ``"hybrid:static"``...)
    built with :func:`~toolsearch.indexes.make_index`; ``None``: BM25 when
    ``toolsearch[bm25]`` is installed, else the regex index."""
    from toolsearch.indexes.specs import make_index

    if index is None:
        try:
            return make_index(DEFAULT_INDEX_SPEC)
        except ImportError:
            return make_index("regex")
    if isinstance(index, str):
        return make_index(index)
    return index


class _DefinitionCache:
    """Framework tool objects -> toolsearch definitions, converted once per object.

    Keys are given by the caller (cheap, e.g. ``(name, description, id(schema))``); each
    entry keeps the object it was made from alive, so an ``id`` in a key is never reused
    while the entry exists. Least recently used entries go beyond ``size``.
    """

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, tuple[Any, ToolDefinition]] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self, key: Hashable, source: Any, build: Callable[[], ToolDefinition]
    ) -> ToolDefinition:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found[1]
        definition = build()
        with self._lock:
            self._entries[key] = (source, definition)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return definition


class ToolSearcher:
    """Searches a session's tools in one toolsearch index, indexing each tool set once.

    Args:
        index: A ``ToolIndex``, an index spec (``"bm25"``, ``"hybrid"``...), or ``None``
            for BM25 (see :func:`resolve_index`).
        registry: A :class:`SessionRegistry` to share (its index is then the index; do not
            pass ``index`` too).
        store: The session store of a new registry (``RedisSessionStore`` to share
            discoveries between processes); ignored with ``registry``.
    """

    def __init__(
        self,
        index: ToolIndex | str | None = None,
        *,
        registry: SessionRegistry | None = None,
        store: SessionStore | None = None,
    ) -> None:
        if registry is not None and (index is not None or store is not None):
            raise TypeError("give registry, or index and store, not both")
        self.registry = (
            registry if registry is not None else SessionRegistry(resolve_index(index), store=store)
        )
        self._definitions = _DefinitionCache()

    @property
    def index(self) -> ToolIndex:
        return self.registry.index

    def definition(
        self, key: Hashable, source: Any, build: Callable[[], ToolDefinition]
    ) -> ToolDefinition:
        """The toolsearch definition of a framework tool, built once per ``key``."""
        return self._definitions.get(key, source, build)

    def search(
        self,
        session_id: str,
        tools: Sequence[ToolDefinition],
        queries: Iterable[str],
        *,
        limit: int = 10,
        exclude: Iterable[str] = (),
        record: bool = False,
    ) -> list[str]:
        """The names of the best tools for ``queries`` among ``tools``, best first.

        Each query is searched on its own; the hits are interleaved (every query's best hit
        first), without repeats, at most ``limit``. ``exclude`` names tools to leave out
        (those the model has already); a query that is a tool's exact name still finds it.
        ``record`` adds the hits to the session's discoveries (:meth:`discovered`).
        """
        texts = [q for q in queries if isinstance(q, str) and q.strip()]
        if not texts or not tools:
            return []
        skipped = frozenset(exclude)
        self.registry.acquire(session_id)
        key: str | None = None
        try:
            key = self.registry.use_tools(session_id, tools)
            rankings = []
            for text in texts:
                wanted = text.strip().casefold()
                request = ToolSearchRequest(
                    key,
                    text,
                    limit,
                    exclude=frozenset(n for n in skipped if n.casefold() != wanted),
                )
                try:
                    rankings.append(self.index.search(request).tool_names)
                except ToolIndexError:  # a bad pattern in a regex index: no hits
                    rankings.append([])
        finally:
            self.registry.release(session_id, [key] if key is not None else [])
        names = interleave(rankings, limit)
        if record and names:
            self.registry.mark_discovered(session_id, names)
        return names

    def discovered(self, session_id: str) -> list[str]:
        """The tools the session discovered so far (those searches with ``record`` found)."""
        return self.registry.discovered(session_id)

    def mark_discovered(self, session_id: str, names: Iterable[str]) -> list[str]:
        """Add tools to the session's discoveries; returns the names that were new."""
        return self.registry.mark_discovered(session_id, names)


def interleave(rankings: Sequence[Sequence[T]], limit: int) -> list[T]:
    """Round-robin over rankings (each one's first item, then each one's second...),
    without repeats, at most ``limit`` items."""
    out: list[T] = []
    seen: set[T] = set()
    depth = max((len(r) for r in rankings), default=0)
    for i in range(depth):
        for ranking in rankings:
            if i < len(ranking) and ranking[i] not in seen:
                seen.add(ranking[i])
                out.append(ranking[i])
                if len(out) >= limit:
                    return out
    return out
