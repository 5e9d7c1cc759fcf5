"""The built-in search tool the model sees first: ``toolSearchTool(query, maxResults?)``.

With ``multi_query`` it also takes ``queries`` (several capabilities in one call, as
pydantic-ai's tool search does): each query is searched on its own and the hits are
merged query by query (the best of each first), so a request that needs three tools can
find all three in one turn instead of three.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch.chat.messages import ToolResultText, ToolSearchHit
from toolsearch.errors import InvalidToolArgumentsError, ToolIndexError
from toolsearch.search.registry import session_of_key
from toolsearch.search.types import ToolIndex, ToolSearchRequest
from toolsearch.telemetry import hash_session_id, hooks
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition, ToolMetadata
from toolsearch.tools.schema import parse_arguments

__all__ = [
    "DEFAULT_SEARCH_TOOL_NAME",
    "SearchListener",
    "ToolSearchEvent",
    "ToolSearchTool",
    "search_tool_definition",
]

_log = logging.getLogger(__name__)

DEFAULT_SEARCH_TOOL_NAME = "toolSearchTool"
MAX_RESULTS_CAP = 10
MAX_QUERIES = 5
"""Queries one multi-query call may carry (each brings up to ``maxResults`` tools)."""


def search_tool_definition(
    name: str = DEFAULT_SEARCH_TOOL_NAME, *, multi_query: bool = False
) -> ToolDefinition:
    """The definition the model receives for the search tool (``multi_query``: with the
    ``queries`` list beside ``query``)."""
    definition = _single_query_definition(name)
    if not multi_query:
        return definition
    schema = dict(definition.input_schema)
    schema["properties"] = {
        **schema["properties"],
        "queries": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "maxItems": MAX_QUERIES,
            "description": (
                "Several capabilities at once, one short query each (instead of query); "
                f"up to {MAX_QUERIES}, each brings up to maxResults tools."
            ),
        },
    }
    del schema["required"]
    return ToolDefinition(
        name=name,
        description=definition.description
        + " For a task that needs several capabilities, pass them together as queries.",
        input_schema=schema,
    )


def _single_query_definition(name: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=(
            "Search the tools available to you and load the best matches. Describe the "
            "capability you need in a few words (e.g. 'send email', 'weather forecast', "
            "'create github issue') or give an exact tool name. The tools found become "
            "callable on your next turn; the result lists their names. Tools you already "
            "have are not listed again, so search again for another capability."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool should do, or an exact tool name.",
                },
                "maxResults": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS_CAP,
                    "description": "How many tools to return (1-10).",
                },
            },
            "required": ["query"],
        },
    )


@dataclass(frozen=True)
class ToolSearchEvent:
    """One search of the search tool, as its listeners receive it (a ``SearchLog`` sink,
    say): handed over inside the search's ``tool_search`` span, once the hits are known.

    ``session_id`` is the conversation's id as given (hash it before storing:
    :attr:`session_hash`); ``hits`` are what the model was shown, best first, with the
    index's scores; ``error`` is the index's error code when it refused the query.
    """

    timestamp: float
    """Seconds since the epoch when the search started."""
    session_id: str
    index_key: str
    """The session's index key for the request's tool set (``session#digest``)."""
    query: str
    limit: int
    index: str
    """The index's class name (``Bm25ToolIndex``, ``HybridToolIndex``...)."""
    search_type: str
    hits: tuple[ToolSearchHit, ...]
    total_matches: int
    visible_tools: int | None
    """How many tools the model saw on the request that made this search."""
    duration_ms: float
    error: str | None = None

    @property
    def session_hash(self) -> str:
        """The session id as spans and logs show it (:func:`hash_session_id`)."""
        return hash_session_id(self.session_id)

    @property
    def hit_names(self) -> list[str]:
        return [hit.name for hit in self.hits]


SearchListener = Callable[[ToolSearchEvent], None]
"""Receives every :class:`ToolSearchEvent`; an exception it raises is logged and ignored."""


class ToolSearchTool:
    """A ``ToolCallback`` that searches one session's tools and reports what it found.

    ``on_found`` receives the names of every search's hits (the advisor records them as
    discovered). Index errors (a bad regex in pattern mode...) come back to the model as
    ``{"error": code, "message": ...}``, never as an exception.

    A search's result is a :class:`~toolsearch.chat.messages.ToolResultText`: the JSON list
    of names (or ``{"name", "summary"}`` objects) the model reads, with the hits as typed
    :class:`~toolsearch.chat.messages.ToolSearchHit` values (name, summary, score) that the loop
    puts on the ``ToolResponse`` for provider adapters. An error result has no hits.

    ``loaded`` returns the names the model already sees; they are left out of the results,
    so every hit of a later search is a tool the model did not have (a search for an exact
    tool name still returns that tool). They travel to the index as the request's
    ``exclude``, which ranks the other tools as if nothing were excluded.

    Every search runs under an OpenTelemetry ``tool_search {index}`` span
    (:func:`toolsearch.telemetry.hooks.search_span`); ``visible`` tells it how many tools
    the model saw on the request. ``on_search`` receives a :class:`ToolSearchEvent` per
    search, inside that span: the place a search log attaches.
    """

    def __init__(
        self,
        index: ToolIndex,
        session_id: str,
        *,
        default_max_results: int,
        on_found: Callable[[Sequence[str]], None],
        name: str = DEFAULT_SEARCH_TOOL_NAME,
        with_summaries: bool = False,
        allowed_names: frozenset[str] | None = None,
        loaded: Callable[[], Collection[str]] | None = None,
        visible: Callable[[], int | None] | None = None,
        on_search: SearchListener | None = None,
        multi_query: bool = False,
    ) -> None:
        self._definition = search_tool_definition(name, multi_query=multi_query)
        self._multi_query = multi_query
        self._index = index
        self._session_id = session_id
        self._default_max_results = default_max_results
        self._on_found = on_found
        self._with_summaries = with_summaries
        self._allowed = allowed_names
        self._loaded = loaded
        self._visible = visible
        self._on_search = on_search

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        arguments = parse_arguments(self._definition.name, input_json)
        queries = self._queries(arguments)
        limit = _clamp(arguments.get("maxResults"), self._default_max_results)
        found: list[list[ToolSearchHit]] = []
        first_error: dict[str, Any] | None = None
        for query in queries:
            hits, error = self._search(query, limit)
            if error is not None:
                first_error = first_error or error
                continue
            found.append(hits)
        if not found and first_error is not None:
            return json.dumps(first_error)
        merged = _merge(found)
        self._on_found([hit.name for hit in merged])
        shown: list[Any] = [hit.name for hit in merged]
        if self._with_summaries:
            shown = [{"name": hit.name, "summary": hit.summary or ""} for hit in merged]
        return ToolResultText(json.dumps(shown, ensure_ascii=False), search_hits=merged)

    def _queries(self, arguments: dict[str, Any]) -> list[str]:
        """The call's queries: ``query``, then ``queries`` when multi-query is on."""
        wanted: list[Any] = []
        if "query" in arguments or not self._multi_query:
            wanted.append(arguments.get("query"))
        listed = arguments.get("queries") if self._multi_query else None
        if listed is not None:
            if not isinstance(listed, list):
                raise InvalidToolArgumentsError(
                    self._definition.name, "queries: a list of short queries, one per capability"
                )
            wanted.extend(listed)
        if not wanted:
            raise InvalidToolArgumentsError(
                self._definition.name, "give query (or queries): what the tool should do"
            )
        for value in wanted:
            if not isinstance(value, str) or not value.strip():
                raise InvalidToolArgumentsError(
                    self._definition.name,
                    "query: a non-empty string describing the tool you need",
                )
        unique = list(dict.fromkeys(q.strip() for q in wanted))
        if len(unique) > MAX_QUERIES:
            raise InvalidToolArgumentsError(
                self._definition.name, f"queries: at most {MAX_QUERIES} per call"
            )
        return unique

    def _search(self, query: str, limit: int) -> tuple[list[ToolSearchHit], dict[str, Any] | None]:
        """One query's hits (new to the model, in the session), or the index's error."""
        skipped = self._skipped(query)
        request = ToolSearchRequest(self._session_id, query, limit, exclude=skipped)
        session_id = session_of_key(self._session_id)
        visible = self._visible() if self._visible is not None else None
        started, clock = time.time(), time.perf_counter()
        with hooks.search_span(
            self._index,
            session_id=session_id,
            query=query,
            limit=limit,
            visible_tools=visible,
            registered_tools=len(self._allowed) if self._allowed is not None else None,
        ) as span:
            try:
                response = self._index.search(request)
            except ToolIndexError as exc:
                _log.debug("tool search refused the query: %s", exc.code)
                span.error(exc.code)
                self._emit(started, clock, session_id, query, limit, visible, "", [], 0, exc.code)
                return [], exc.to_tool_result()
            references = [
                ref
                for ref in response.tool_references
                if (self._allowed is None or ref.tool_name in self._allowed)
                and ref.tool_name not in skipped  # for an index that ignores ``exclude``
            ][:limit]
            span.hits(
                [ref.tool_name for ref in references],
                [ref.relevance_score for ref in references],
                search_type=response.metadata.search_type,
                total_matches=response.total_matches,
            )
            hits = [
                ToolSearchHit(
                    name=ref.tool_name, summary=ref.summary or None, score=ref.relevance_score
                )
                for ref in references
            ]
            _log.debug(
                "tool search in %s: %d hits of %d matches (%.1f ms)",
                type(self._index).__name__,
                len(hits),
                response.total_matches,
                (time.perf_counter() - clock) * 1000,
            )
            self._emit(
                started,
                clock,
                session_id,
                query,
                limit,
                visible,
                response.metadata.search_type,
                hits,
                response.total_matches,
                None,
            )
            return hits, None

    def _emit(
        self,
        started: float,
        clock: float,
        session_id: str,
        query: str,
        limit: int,
        visible: int | None,
        search_type: str,
        hits: Sequence[ToolSearchHit],
        total_matches: int,
        error: str | None,
    ) -> None:
        if self._on_search is None:
            return
        event = ToolSearchEvent(
            timestamp=started,
            session_id=session_id,
            index_key=self._session_id,
            query=query,
            limit=limit,
            index=type(self._index).__name__,
            search_type=search_type,
            hits=tuple(hits),
            total_matches=total_matches,
            visible_tools=visible,
            duration_ms=(time.perf_counter() - clock) * 1000,
            error=error,
        )
        try:
            self._on_search(event)
        except Exception:
            _log.warning("a tool-search listener failed", exc_info=True)

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        return self.call(input_json, context)

    def _skipped(self, query: str) -> frozenset[str]:
        """The loaded tools this search leaves out: all of them but an exact-name match."""
        if self._loaded is None:
            return frozenset()
        wanted = query.strip().casefold()
        loaded = self._loaded()
        if self._allowed is not None:
            loaded = [n for n in loaded if n in self._allowed]
        return frozenset(n for n in loaded if n.casefold() != wanted)


def _merge(per_query: Sequence[Sequence[ToolSearchHit]]) -> list[ToolSearchHit]:
    """Hits of several queries interleaved by rank (each query's best first), each tool
    once; a single query's hits unchanged."""
    merged: dict[str, ToolSearchHit] = {}
    for rank in range(max((len(hits) for hits in per_query), default=0)):
        for hits in per_query:
            if rank < len(hits):
                merged.setdefault(hits[rank].name, hits[rank])
    return list(merged.values())


def _clamp(value: Any, fallback: int) -> int:
    """The model's ``maxResults`` wins when it is a number; clamped to 1..10."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        number = fallback
    else:
        try:
            number = int(float(value))
        except (ValueError, OverflowError):  # "abc", "inf", 1e999
            number = fallback
    return max(1, min(MAX_RESULTS_CAP, number))
