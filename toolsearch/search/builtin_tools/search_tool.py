"""The built-in search tool the model sees first: ``toolSearchTool(query, maxResults?)``.

The tool only reads the model's arguments; the search itself is the search-session core's
(:class:`~toolsearch.search.sessions.SearchRun`), the same path every front door uses.

With ``multi_query`` it also takes ``queries`` (several capabilities in one call, as
pydantic-ai's tool search does): each query is searched on its own and the hits are
merged query by query (the best of each first), so a request that needs three tools can
find all three in one turn instead of three.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol

from toolsearch.chat.messages import ToolResultText, ToolSearchHit
from toolsearch.errors import InvalidToolArgumentsError
from toolsearch.search.events import SearchListener, ToolSearchEvent
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition, ToolMetadata
from toolsearch.tools.schema import parse_arguments

__all__ = [
    "DEFAULT_SEARCH_TOOL_NAME",
    "MAX_QUERIES",
    "MAX_RESULTS_CAP",
    "SearchBackend",
    "SearchListener",
    "ToolSearchEvent",
    "ToolSearchTool",
    "search_tool_definition",
]

DEFAULT_SEARCH_TOOL_NAME = "toolSearchTool"
MAX_RESULTS_CAP = 10
MAX_QUERIES = 5
"""Queries one multi-query call may carry (each brings up to ``maxResults`` tools)."""


def search_tool_definition(
    name: str = DEFAULT_SEARCH_TOOL_NAME,
    *,
    multi_query: bool = False,
    call_tool_name: str | None = None,
) -> ToolDefinition:
    """The definition the model receives for the search tool (``multi_query``: with the
    ``queries`` list beside ``query``; ``call_tool_name``: for ``injection="results"``,
    where the result carries the definitions and the tools are called through that tool)."""
    definition = _single_query_definition(name)
    if call_tool_name is not None:
        definition = dataclasses.replace(
            definition,
            description=definition.description.replace(
                _LOADED_SENTENCE,
                "The result gives each tool's name, description and parameters; call "
                f"one with {call_tool_name}, giving its name and arguments.",
            ),
        )
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


_LOADED_SENTENCE = (
    "The tools found become callable on your next turn; the result lists their names."
)


def _single_query_definition(name: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=(
            "Search the tools available to you and load the best matches. Describe the "
            "capability you need in a few words (e.g. 'send email', 'weather forecast', "
            "'create github issue') or give an exact tool name. "
            + _LOADED_SENTENCE
            + " Tools you already have are not listed again, so search again for another "
            "capability."
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


class SearchBackend(Protocol):
    """What the search tool searches through: a :class:`~toolsearch.search.sessions.
    SearchRun` (one run on one session). The tool parses the model's arguments; the run
    does the rest (exclusions, spans, discoveries, wire names)."""

    def search(
        self, queries: str | Sequence[str], max_results: int | None = None
    ) -> SearchResultLike: ...

    async def asearch(
        self, queries: str | Sequence[str], max_results: int | None = None
    ) -> SearchResultLike: ...

    def render(self, result: Any) -> str: ...


class SearchResultLike(Protocol):
    @property
    def hits(self) -> tuple[ToolSearchHit, ...]: ...

    @property
    def error(self) -> dict[str, Any] | None: ...


class ToolSearchTool:
    """The search tool as a ``ToolCallback``: parses the model's arguments and searches
    one run (:meth:`~toolsearch.search.sessions.SearchRun.search_tool` makes it).

    Bad arguments raise :class:`~toolsearch.errors.InvalidToolArgumentsError` (the loop
    answers the model with it); index errors (a bad regex in pattern mode...) come back as
    ``{"error": code, "message": ...}``, never as an exception.

    A search's result is a :class:`~toolsearch.chat.messages.ToolResultText`: the JSON list
    of names (or ``{"name", "summary"}`` objects) the model reads, with the hits as typed
    :class:`~toolsearch.chat.messages.ToolSearchHit` values (name, summary, score) that the
    loop puts on the ``ToolResponse`` for provider adapters. An error result has no hits.
    :meth:`acall` searches on a worker thread, so an async loop never blocks on ranking.
    """

    def __init__(
        self, run: SearchBackend, definition: ToolDefinition, *, native: bool = True
    ) -> None:
        """``native``: adapters may send it as the provider's own search tool (its
        metadata's ``tool_search``); off when its results are text the model must read as
        such (``injection="results"``: they carry the definitions)."""
        self._run = run
        self._definition = definition
        self._native = native
        properties = definition.input_schema.get("properties", {})
        self._multi_query = "queries" in properties

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata(tool_search=self._native)

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        queries, limit = self.arguments(input_json)
        return self._text(self._run.search(queries, limit))

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        queries, limit = self.arguments(input_json)
        return self._text(await self._run.asearch(queries, limit))

    def arguments(self, input_json: str | None) -> tuple[list[str], int | None]:
        """The call's queries and its ``maxResults`` (clamped to 1..10; ``None``: the
        default), or :class:`~toolsearch.errors.InvalidToolArgumentsError`."""
        arguments = parse_arguments(self._definition.name, input_json)
        wanted = arguments.get("maxResults")
        limit = None if wanted is None else _clamp(wanted, None)
        return self._queries(arguments), limit

    def _text(self, result: SearchResultLike) -> str:
        text = self._run.render(result)
        if result.error is not None:
            return text
        return ToolResultText(text, search_hits=result.hits)

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


def _clamp(value: Any, fallback: int | None) -> int | None:
    """The model's ``maxResults`` wins when it is a number; clamped to 1..10."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return fallback
    try:
        number = int(float(value))
    except (ValueError, OverflowError):  # "abc", "inf", 1e999
        return fallback
    return max(1, min(MAX_RESULTS_CAP, number))
