"""The built-in search tool the model sees first: ``toolSearchTool(query, maxResults?)``."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from toolsearch.chat.messages import ToolResultText, ToolSearchHit
from toolsearch.errors import InvalidToolArgumentsError, ToolIndexError
from toolsearch.search.types import ToolIndex, ToolSearchRequest
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition, ToolMetadata
from toolsearch.tools.schema import parse_arguments

__all__ = ["DEFAULT_SEARCH_TOOL_NAME", "ToolSearchTool", "search_tool_definition"]

DEFAULT_SEARCH_TOOL_NAME = "toolSearchTool"
MAX_RESULTS_CAP = 10


def search_tool_definition(name: str = DEFAULT_SEARCH_TOOL_NAME) -> ToolDefinition:
    """The definition the model receives for the search tool."""
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
    ) -> None:
        self._definition = search_tool_definition(name)
        self._index = index
        self._session_id = session_id
        self._default_max_results = default_max_results
        self._on_found = on_found
        self._with_summaries = with_summaries
        self._allowed = allowed_names
        self._loaded = loaded

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        arguments = parse_arguments(self._definition.name, input_json)
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise InvalidToolArgumentsError(
                self._definition.name, "query: a non-empty string describing the tool you need"
            )
        limit = _clamp(arguments.get("maxResults"), self._default_max_results)
        skipped = self._skipped(query)
        request = ToolSearchRequest(self._session_id, query, limit, exclude=skipped)
        try:
            response = self._index.search(request)
        except ToolIndexError as exc:
            return json.dumps(exc.to_tool_result())
        references = [
            ref
            for ref in response.tool_references
            if (self._allowed is None or ref.tool_name in self._allowed)
            and ref.tool_name not in skipped  # for an index that ignores ``exclude``
        ][:limit]
        names = [ref.tool_name for ref in references]
        self._on_found(names)
        found: list[Any] = names
        if self._with_summaries:
            found = [{"name": ref.tool_name, "summary": ref.summary} for ref in references]
        hits = [
            ToolSearchHit(
                name=ref.tool_name, summary=ref.summary or None, score=ref.relevance_score
            )
            for ref in references
        ]
        return ToolResultText(json.dumps(found, ensure_ascii=False), search_hits=hits)

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
