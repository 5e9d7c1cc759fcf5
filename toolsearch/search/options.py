"""``ToolSearchOptions``: every plain-data option of the tool-search advisor, written once.

Each default and each bound lives here and nowhere else:

- :class:`~toolsearch.search.advisor.ToolSearchToolCallingAdvisor` reads its defaults from
  this model (``ToolSearchToolCallingAdvisor(max_results=3)`` and
  ``ToolSearchToolCallingAdvisor(options=ToolSearchOptions(max_results=3))`` are the same
  advisor; ``advisor.options`` is the effective object);
- :class:`~toolsearch.settings.ToolSearchSettings` subclasses it (a view of these fields
  plus the settings-only ones: ``enabled``, ``index_type``, eviction, embedder...), so the
  ``TOOLSEARCH_TOOL_SEARCH__*`` variables and the ``[tool_search]`` TOML table accept
  exactly these fields with exactly these defaults and bounds.

Objects (the index, the eviction strategy, the tool-calling manager, pinned tool callbacks)
are not options: they stay arguments of the advisor.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolsearch.loop.advisor import TOOL_CALLING_ADVISOR_ORDER
from toolsearch.memory.memory import CONVERSATION_ID
from toolsearch.search.builtin_tools.call_tool import DEFAULT_CALL_TOOL_NAME
from toolsearch.search.builtin_tools.search_tool import DEFAULT_SEARCH_TOOL_NAME, MAX_RESULTS_CAP

__all__ = [
    "PLAIN_SEARCH_LOOP",
    "Injection",
    "LoadAll",
    "SearchChoice",
    "ToolSearchOptions",
    "ToolSearchOptionsDict",
    "UndiscoveredToolPolicy",
    "UnloadMoment",
]

UndiscoveredToolPolicy = Literal["execute", "hint"]
UnloadMoment = Literal["discovery", "turn"]
Injection = Literal["tools", "results"]
SearchChoice = Literal["toolsearch", "native"]
LoadAll = Literal["auto", "never", "always"]


PLAIN_SEARCH_LOOP: dict[str, Any] = {"preload_results": 0, "load_all": "never"}
"""The search loop without the working set (no pre-retrieval, never every tool): what the
front doors other than the tool-search advisor run, as their own paths do not hold the
working set yet (their every-tool mode would keep the search tool beside every tool)."""


class ToolSearchOptions(BaseModel):
    """The tool-search advisor's plain-data options (frozen; ``replace`` makes a changed copy).

    Invalid values raise pydantic's ``ValidationError`` (a ``ValueError``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    max_results: int = Field(default=5, ge=1, le=MAX_RESULTS_CAP)
    """Hits per search when the model does not say (its ``maxResults`` wins, clamped to
    1..10)."""
    system_message_suffix: str | None = None
    """Text appended to the system message; ``{search_tool_name}``, ``{categories}`` and
    ``{tool_count}`` are filled in. ``None``: a short paragraph, plus the list of categories
    when the tools carry categories."""
    reference_tool_name_accumulation: bool = True
    """Keep every discovered tool visible, or only those found by the last round of searches
    (all parallel searches of it)."""
    session_id_key_name: str = CONVERSATION_ID
    """The advisor param holding the session id. Without one, the loop uses a throwaway
    session."""
    order: int = TOOL_CALLING_ADVISOR_ORDER
    """Advisor order (that of the plain tool-calling advisor)."""
    pinned_tools: tuple[str, ...] = ()
    """Names of tools always sent (the 3-5 most used, as providers recommend). A pinned name
    the request does not register is skipped for that request."""
    search_tool_name: str = DEFAULT_SEARCH_TOOL_NAME
    """The search tool's name."""
    undiscovered_tool_policy: UndiscoveredToolPolicy = "execute"
    """A call to a registered tool the session has not discovered is run and marks it
    discovered (``"execute"``), or answered with a hint to search first (``"hint"``)."""
    search_results_with_summaries: bool = False
    """The search tool returns ``[{"name", "summary"}]`` instead of a list of names."""
    exclude_loaded_tools: bool = True
    """Searches leave out the tools the model already sees (pinned, and discovered when
    accumulation is on), so each search returns tools new to the model instead of repeating
    what it has. A search for an exact tool name still returns that tool."""
    multi_query: bool = False
    """The search tool also takes ``queries``: up to five capabilities in one call, each
    searched on its own, the hits merged query by query."""

    search: SearchChoice = "toolsearch"
    """Whose tool search the model uses. ``"toolsearch"``: this library's index, through
    the search tool (in the provider's cache-friendly shape where the adapter has one).
    ``"native"``: the provider's own where the model's adapter has one (Anthropic's
    server-side BM25 or regex search, the OpenAI Responses API's hosted ``tool_search``):
    every tool is sent deferred (pinned ones in full) and the provider searches them;
    on any other model, this library's search as with ``"toolsearch"``."""
    injection: Injection = "tools"
    """Where discovered tools reach the model. ``"tools"``: they join the request's tool
    list. ``"results"``: the tool list stays the search tool, the call tool and the pinned
    tools; a search's result carries the full definitions it found, and the model calls
    them through the call tool, so the start of the prompt never changes and a provider's
    prompt cache keeps the whole conversation
    (:mod:`toolsearch.search.builtin_tools.call_tool`). The tool-search advisor only."""
    call_tool_name: str = DEFAULT_CALL_TOOL_NAME
    """The call tool's name (``injection="results"``)."""
    max_loaded_tools: int | None = Field(default=None, ge=1)
    """At most this many discovered tools stay loaded (pinned tools and the search tool not
    counted): when a search goes past it, the least recently used ones are unloaded. A
    search or a call brings an unloaded tool back. ``None``: no cap."""
    unload_idle_turns: int | None = Field(default=None, ge=1)
    """Unload a discovered tool neither found nor called in this many turns (a turn: one
    run of the loop, a user's message and the calls it leads to). ``None``: never."""
    unload_at: UnloadMoment = "discovery"
    """When unloading happens. ``"discovery"``: only when a search changes the tool list
    anyway, so a provider's cached prompt prefix breaks once, where it breaks regardless,
    and the unloads are batched there; ``"turn"``: also when a turn starts, which breaks
    the cached prefix whenever something unloads (for uncached providers)."""

    preload_results: int = Field(default=3, ge=0, le=MAX_RESULTS_CAP)
    """Pre-retrieval: before the first model call of a turn, the user's message is
    searched (the whole message, then its clauses), and up to this many confident hits
    per query are loaded up front, so the model can act without a search round trip (the
    search tool stays). ``0``: off. See :mod:`toolsearch.search.working_set`."""
    preload_min_score: float = Field(default=0.5, ge=0.0, le=1.0)
    """A pre-retrieved hit is confident when its score is at least this share of the
    query's best hit's score."""
    load_all: LoadAll = "auto"
    """Send every tool, without the search tool, when the cost model says the full list
    (a stable, cached prefix) costs less than the search loop (``"auto"``: a small
    catalog gets the full list, so tool search never bills more than the full loop);
    ``"always"``; ``"never"``."""
    cost_model: str = "gpt-5.6"
    """The model family whose cache prices the working-set policy weighs
    (:data:`toolsearch.costs.MODEL_FAMILIES`: ``gpt-5.6``, ``claude``, ``claude-1h``,
    ``gemini-2.5``...) or a request shape (``openai``, ``anthropic``, ``gemini``)."""
    traffic_seconds: float = Field(default=30.0, gt=0)
    """The working-set policy's traffic assumption: a conversation starts every this many
    seconds (a cache entry outlives the gap when it is under the TTL)."""
    warm_tools: int = Field(default=10, ge=0, le=100)
    """At most this many tools of the warm set (the advisor's ``warm_set`` source) held
    after the search tool, when holding them pays."""

    @field_validator("cost_model")
    @classmethod
    def _known_cost_model(cls, value: str) -> str:
        from toolsearch.costs import cache_shape

        cache_shape(value)  # ValueError naming the known families
        return value

    def replace(self, **changes: Any) -> ToolSearchOptions:
        """A copy with ``changes`` applied and validated (``model_copy`` does not validate)."""
        fields = type(self).model_fields
        return type(self)(**{**{name: getattr(self, name) for name in fields}, **changes})


class ToolSearchOptionsDict(TypedDict, total=False):
    """The options as keyword arguments (types only: the defaults live in the model).

    A static type checker needs the keyword names and types spelled out to check
    ``ToolSearchToolCallingAdvisor(max_results=...)``; a test keeps this in step with
    :class:`ToolSearchOptions`. ``pinned_tools`` is not here: the advisor's own
    ``pinned_tools`` argument also takes tools, not only names.
    """

    max_results: int
    system_message_suffix: str | None
    reference_tool_name_accumulation: bool
    session_id_key_name: str
    order: int
    search_tool_name: str
    undiscovered_tool_policy: UndiscoveredToolPolicy
    search_results_with_summaries: bool
    exclude_loaded_tools: bool
    multi_query: bool
    search: SearchChoice
    injection: Injection
    call_tool_name: str
    max_loaded_tools: int | None
    unload_idle_turns: int | None
    unload_at: UnloadMoment
    preload_results: int
    preload_min_score: float
    load_all: LoadAll
    cost_model: str
    traffic_seconds: float
    warm_tools: int


def options_error(error: ValidationError) -> ValueError:
    """A plain ``ValueError`` naming each bad option and what it accepts (from the model's
    own bounds), as in ``max_results must be between 1 and 10 (got 0)``."""
    return ValueError("; ".join(_describe(detail) for detail in error.errors()))


def _describe(detail: Any) -> str:
    name = str(detail["loc"][0]) if detail["loc"] else "options"
    field = ToolSearchOptions.model_fields.get(name)
    got = f" (got {detail['input']!r})"
    if field is not None and detail["type"] == "literal_error":
        allowed = " or ".join(repr(value) for value in get_args(field.annotation))
        return f"{name} must be {allowed}{got}"
    if field is not None and detail["type"] in {"greater_than_equal", "less_than_equal"}:
        bounds = {type(m).__name__: m for m in field.metadata}
        low, high = bounds.get("Ge"), bounds.get("Le")
        if low is not None and high is not None:
            return f"{name} must be between {low.ge} and {high.le}{got}"
    return f"{name}: {detail['msg']}{got}"
