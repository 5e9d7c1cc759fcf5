"""``ToolSearchToolCallingAdvisor`` end to end: what the model sees, sessions, eviction,
accumulation, pinned tools, the search tool, undiscovered and unknown calls, memory
trimming, streaming and the system message.

Every scripted model behaves like a real one: it decides only from the messages and the
tool definitions of the request it receives (search with words from the user's request,
then call a tool the search result lists and the request shows). Tools record their
executions; the model never reads those records.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    MessageChatMemoryAdvisor,
    MessageWindowChatMemory,
    SystemMessage,
    ToolCall,
    ToolCallingAdvisor,
    ToolDefinition,
    ToolDefinitionError,
    ToolMetadata,
    ToolResponse,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.chat.prompt import Prompt
from toolsearch.errors import AdvisorChainError
from toolsearch.indexes import Bm25ToolIndex, RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import LruEvictionStrategy, TtlEvictionStrategy
from toolsearch.search.advisor import DEFAULT_CATEGORY_SUFFIX, DEFAULT_SYSTEM_SUFFIX
from toolsearch.search.options import ToolSearchOptions
from toolsearch.search.registry import session_of_key
from toolsearch.search.sessions import ToolSearchSessions
from toolsearch.testing import FakeClock
from toolsearch.tokens import WhitespaceTokenCounter, render_messages, render_tools

SEARCH = "toolSearchTool"

# -- a realistic catalog: 20 services x 10 operations ------------------------------------

# service: (label, object, objects, three service-specific operations)
SERVICES: dict[str, tuple[str, str, str, list[tuple[str, str, dict[str, str], list[str]]]]] = {
    "weather": ("weather", "station", "stations", [
        ("get_forecast", "Get the weather forecast for a city for the next few days",
         {"city": "string", "days": "integer"}, ["city"]),
        ("get_alerts", "List active severe weather alerts such as storms and floods for a region",
         {"region": "string"}, ["region"]),
        ("get_current", "Get the current temperature, wind and humidity at a location",
         {"location": "string"}, ["location"]),
    ]),
    "calendar": ("calendar", "event", "events", [
        ("create_event", "Create a calendar event with a title, start time and attendees",
         {"title": "string", "start": "string"}, ["title", "start"]),
        ("find_free_slot", "Find a free time slot shared by several attendees",
         {"attendees": "string"}, ["attendees"]),
        ("cancel_event", "Cancel a calendar event and notify its attendees",
         {"event_id": "string"}, ["event_id"]),
    ]),
    "email": ("email", "folder", "folders", [
        ("send_message", "Send an email message to a recipient with a subject and body",
         {"to": "string", "subject": "string", "body": "string"}, ["to", "subject"]),
        ("read_inbox", "Read the latest unread messages in the email inbox",
         {"limit": "integer"}, []),
        ("set_signature", "Set the signature appended to outgoing email messages",
         {"text": "string"}, ["text"]),
    ]),
    "github": ("GitHub", "repository", "repositories", [
        ("create_issue", "Open a new issue in a GitHub repository with a title and body",
         {"repo": "string", "title": "string"}, ["repo", "title"]),
        ("merge_pull_request", "Merge an approved pull request into the default branch",
         {"repo": "string", "number": "integer"}, ["repo", "number"]),
        ("list_commits", "List recent commits on a branch of a repository",
         {"repo": "string", "branch": "string"}, ["repo"]),
    ]),
    "slack": ("Slack", "channel", "channels", [
        ("post_message", "Post a chat message to a Slack channel",
         {"channel": "string", "text": "string"}, ["channel", "text"]),
        ("set_status", "Set your Slack status text and emoji",
         {"status": "string"}, ["status"]),
        ("invite_user", "Invite a user to join a Slack channel",
         {"channel": "string", "user": "string"}, ["channel", "user"]),
    ]),
    "payments": ("payments", "invoice", "invoices", [
        ("refund_charge", "Refund a card charge fully or partially",
         {"charge_id": "string", "amount": "number"}, ["charge_id"]),
        ("create_invoice", "Create an invoice for a customer with line items and a due date",
         {"customer": "string", "due": "string"}, ["customer"]),
        ("get_balance", "Get the available account balance in each currency",
         {}, []),
    ]),
    "jira": ("Jira", "ticket", "tickets", [
        ("create_ticket", "Create a Jira ticket in a project with a summary and priority",
         {"project": "string", "summary": "string"}, ["project", "summary"]),
        ("transition_ticket", "Move a Jira ticket to another workflow status such as done",
         {"key": "string", "status": "string"}, ["key", "status"]),
        ("log_work", "Log hours of work spent on a Jira ticket",
         {"key": "string", "hours": "number"}, ["key", "hours"]),
    ]),
    "music": ("music", "playlist", "playlists", [
        ("play_track", "Play a song track by title or artist on the music player",
         {"query": "string"}, ["query"]),
        ("create_playlist", "Create a new music playlist from a list of songs",
         {"name": "string"}, ["name"]),
        ("skip_track", "Skip to the next song in the playback queue",
         {}, []),
    ]),
    "maps": ("maps", "place", "places", [
        ("get_directions", "Get driving, walking or transit directions between two addresses",
         {"origin": "string", "destination": "string"}, ["origin", "destination"]),
        ("geocode_address", "Convert a street address into latitude and longitude coordinates",
         {"address": "string"}, ["address"]),
        ("find_nearby", "Find nearby restaurants, shops or fuel stations around a point",
         {"kind": "string"}, ["kind"]),
    ]),
    "translate": ("translation", "glossary", "glossaries", [
        ("translate_text", "Translate text from one language into another",
         {"text": "string", "target": "string"}, ["text", "target"]),
        ("detect_language", "Detect which language a piece of text is written in",
         {"text": "string"}, ["text"]),
        ("list_languages", "List the language codes supported for translation",
         {}, []),
    ]),
    "crm": ("CRM", "contact", "contacts", [
        ("create_lead", "Create a sales lead with company name and contact person",
         {"company": "string"}, ["company"]),
        ("update_deal_stage", "Move a sales deal to another pipeline stage",
         {"deal_id": "string", "stage": "string"}, ["deal_id", "stage"]),
        ("log_call", "Record a phone call with a customer contact",
         {"contact_id": "string", "notes": "string"}, ["contact_id"]),
    ]),
    "storage": ("cloud storage", "bucket", "buckets", [
        ("upload_file", "Upload a file to cloud storage at a given path",
         {"path": "string"}, ["path"]),
        ("download_file", "Download a file from cloud storage",
         {"path": "string"}, ["path"]),
        ("create_share_link", "Create a public download link for a stored file",
         {"path": "string"}, ["path"]),
    ]),
    "notes": ("notes", "notebook", "notebooks", [
        ("write_note", "Write a new note with a title and text",
         {"title": "string", "text": "string"}, ["title"]),
        ("search_notes", "Search notes by keywords in their text",
         {"keywords": "string"}, ["keywords"]),
        ("tag_note", "Add tags to a note",
         {"note_id": "string", "tags": "string"}, ["note_id", "tags"]),
    ]),
    "todo": ("to-do", "project", "projects", [
        ("add_task", "Add a task to the to-do list with an optional due date",
         {"task": "string", "due": "string"}, ["task"]),
        ("complete_task", "Mark a to-do task as completed",
         {"task_id": "string"}, ["task_id"]),
        ("list_overdue", "List to-do tasks that are past their due date",
         {}, []),
    ]),
    "flights": ("flights", "booking", "bookings", [
        ("search_flights", "Search flights between two airports on a date",
         {"origin": "string", "destination": "string", "date": "string"},
         ["origin", "destination"]),
        ("book_flight", "Book a seat on a chosen flight for a passenger",
         {"flight": "string", "passenger": "string"}, ["flight", "passenger"]),
        ("check_in", "Check in a passenger for a booked flight and get the boarding pass",
         {"booking_id": "string"}, ["booking_id"]),
    ]),
    "hotels": ("hotels", "reservation", "reservations", [
        ("search_rooms", "Search hotel rooms available in a city for given dates",
         {"city": "string"}, ["city"]),
        ("book_room", "Reserve a hotel room for a guest",
         {"room_id": "string", "guest": "string"}, ["room_id", "guest"]),
        ("cancel_stay", "Cancel a hotel stay and request a refund of the deposit",
         {"reservation_id": "string"}, ["reservation_id"]),
    ]),
    "news": ("news", "feed", "feeds", [
        ("top_headlines", "Get the top news headlines for a country or topic",
         {"topic": "string"}, []),
        ("search_articles", "Search news articles by keyword and date range",
         {"keyword": "string"}, ["keyword"]),
        ("summarize_article", "Summarize a news article from its URL",
         {"url": "string"}, ["url"]),
    ]),
    "stocks": ("stock trading", "portfolio", "portfolios", [
        ("get_quote", "Get the latest stock price quote for a ticker symbol",
         {"symbol": "string"}, ["symbol"]),
        ("place_order", "Place a buy or sell order for shares of a stock",
         {"symbol": "string", "shares": "integer"}, ["symbol", "shares"]),
        ("price_history", "Get the historical daily prices of a stock",
         {"symbol": "string"}, ["symbol"]),
    ]),
    "recipes": ("recipes", "cookbook", "cookbooks", [
        ("find_recipe", "Find cooking recipes by ingredients or dish name",
         {"ingredients": "string"}, ["ingredients"]),
        ("nutrition_facts", "Get calories and nutrition facts of a recipe",
         {"recipe_id": "string"}, ["recipe_id"]),
        ("shopping_list", "Build a grocery shopping list from a recipe",
         {"recipe_id": "string"}, ["recipe_id"]),
    ]),
    "fitness": ("fitness", "workout", "workouts", [
        ("log_run", "Log a run with distance and duration",
         {"distance_km": "number", "minutes": "integer"}, ["distance_km"]),
        ("step_count", "Get the daily step count from the fitness tracker",
         {"date": "string"}, []),
        ("heart_rate", "Get heart rate measurements for a time range",
         {"start": "string", "end": "string"}, ["start"]),
    ]),
}  # fmt: skip

# seven operations every service has, on its own kind of object
GENERIC_OPERATIONS: list[tuple[str, str, dict[str, str], list[str]]] = [
    ("list_{objs}", "List all {objs} of the account in the {label} service, newest first",
     {"limit": "integer"}, []),
    ("get_{obj}", "Fetch one {obj} of the {label} service by its identifier",
     {"id": "string"}, ["id"]),
    ("rename_{obj}", "Rename an existing {obj} in the {label} service",
     {"id": "string", "new_name": "string"}, ["id", "new_name"]),
    ("archive_{obj}", "Move an old {obj} of the {label} service to the archive",
     {"id": "string"}, ["id"]),
    ("export_{objs}", "Export {objs} from the {label} service to a CSV file",
     {"since": "string"}, []),
    ("share_{obj}", "Share a {obj} of the {label} service with a teammate",
     {"id": "string", "teammate": "string"}, ["id", "teammate"]),
    ("audit_{obj}", "Show the audit log of changes to a {obj} in the {label} service",
     {"id": "string"}, ["id"]),
]  # fmt: skip


class Executions:
    """Thread-safe record of tool executions (for assertions only; models never read it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def record(self, name: str, arguments: dict[str, Any]) -> None:
        with self._lock:
            self.calls.append((name, dict(arguments)))

    @property
    def names(self) -> list[str]:
        with self._lock:
            return [name for name, _ in self.calls]


def _schema(params: dict[str, str], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {p: {"type": t, "description": f"The {p.replace('_', ' ')}"}
                       for p, t in params.items()},
        "required": list(required),
    }  # fmt: skip


def make_tool(
    name: str,
    description: str,
    params: dict[str, str],
    required: list[str],
    executions: Executions,
) -> FunctionToolCallback:
    def run(arguments: dict[str, Any]) -> str:
        executions.record(name, arguments)
        return f"{name} done with {json.dumps(arguments, sort_keys=True)}"

    return FunctionToolCallback.from_schema(
        run, name=name, description=description, input_schema=_schema(params, required)
    )


def service_tools(
    service: str, executions: Executions, suffix: str = ""
) -> list[FunctionToolCallback]:
    label, obj, objs, special = SERVICES[service]
    specs = list(special)
    for op, text, params, required in GENERIC_OPERATIONS:
        specs.append(
            (
                op.format(obj=obj, objs=objs),
                text.format(obj=obj, objs=objs, label=label),
                params,
                required,
            )
        )
    return [
        make_tool(f"{service}_{op}{suffix}", text, params, required, executions)
        for op, text, params, required in specs
    ]


def catalog(executions: Executions, services: Sequence[str] | None = None) -> list[Any]:
    """The 200-tool catalog (or the tools of some services)."""
    tools: list[Any] = []
    for service in services or SERVICES:
        tools.extend(service_tools(service, executions))
    return tools


# -- a scripted model that behaves like a real one ----------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {
    "a",
    "an",
    "the",
    "to",
    "of",
    "for",
    "in",
    "on",
    "and",
    "or",
    "by",
    "with",
    "my",
    "me",
    "please",
    "about",
    "at",
    "from",
    "into",
    "is",
    "it",
    "its",
    "be",
    "can",
    "you",
}


def words(text: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ").lower()
    return {w for w in _WORD.findall(spaced) if w not in _STOP}


def overlap(request: str, tool: ToolDefinition) -> int:
    return len(words(request) & words(f"{tool.name} {tool.description}"))


def arguments_for(tool: ToolDefinition) -> dict[str, Any]:
    """Fill the tool's required parameters, as a model reading the schema would."""
    samples = {"string": "demo", "integer": 1, "number": 1.5, "boolean": True}
    properties = tool.input_schema.get("properties", {})
    return {
        name: samples.get(properties.get(name, {}).get("type", "string"), "demo")
        for name in tool.input_schema.get("required", [])
    }


def last_user_text(messages: Sequence[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.content
    return None


def call_of(messages: Sequence[Any], name: str, arguments: dict[str, Any], i: int = 0) -> ToolCall:
    return ToolCall(id=f"call-{len(messages)}-{i}", name=name, arguments=json.dumps(arguments))


def calling(
    messages: Sequence[Any], *calls: tuple[str, dict[str, Any]], text: str | None = None
) -> AssistantMessage:
    return AssistantMessage(
        content=text,
        tool_calls=tuple(call_of(messages, n, a, i) for i, (n, a) in enumerate(calls)),
    )


def search_names(data: str) -> list[str]:
    """The tool names in a search result (a JSON array of names or of objects)."""
    parsed = json.loads(data)
    if not isinstance(parsed, list):
        return []
    return [item["name"] if isinstance(item, dict) else item for item in parsed]


def task_agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
    """One task: search with the user's words, call the best visible tool, then answer.

    After a search it weighs the hits (in rank order) and the tools it already had (searches
    leave those out of their hits); without a search tool (the plain advisor) it picks the
    best of the visible tools.
    """
    visible = {t.name: t for t in tools}
    request = last_user_text(messages) or ""
    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        response = last.responses[0]
        if response.name != SEARCH:
            return AssistantMessage(content=f"Done: {response.response_data}")
        hits = [n for n in search_names(response.response_data) if n in visible]
        candidates = [visible[n] for n in dict.fromkeys([*hits, *visible]) if n != SEARCH]
        if not candidates:
            return AssistantMessage(content="I found no tool for that.")
        best = max(candidates, key=lambda t: overlap(request, t))  # first wins a tie
        return calling(messages, (best.name, arguments_for(best)))
    if SEARCH in visible:
        return calling(messages, (SEARCH, {"query": request}))
    best = max(tools, key=lambda t: overlap(request, t))
    return calling(messages, (best.name, arguments_for(best)))


# -- helpers -------------------------------------------------------------------------------


def names_of(prompt: Prompt) -> list[str]:
    return [d.name for d in prompt.tool_definitions]


def tool_responses(prompt: Prompt) -> list[Any]:
    return [r for m in prompt.messages if isinstance(m, ToolResponseMessage) for r in m.responses]


def search_results(prompt: Prompt) -> list[list[str]]:
    return [search_names(r.response_data) for r in tool_responses(prompt) if r.name == SEARCH]


def advisor(**options: Any) -> ToolSearchToolCallingAdvisor:
    options.setdefault("tool_index", Bm25ToolIndex())
    return ToolSearchToolCallingAdvisor(**options)


def client_with(model: FunctionChatModel, search: Any) -> ChatClient:
    return ChatClient.builder(model).default_advisors(search).build()


def session(sid: str) -> Callable[[Any], Any]:
    return lambda a: a.param(CONVERSATION_ID, sid)


EMAIL_TASK = "Send an email message to bob@example.com with the subject quarterly report"


class RecordingIndex(Bm25ToolIndex):
    """A BM25 index that records which sessions were indexed and cleared.

    The advisor indexes each tool set of a session under its own key (``session#digest``);
    ``indexed`` and ``cleared`` record the session of each key."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._log_lock = threading.Lock()
        self.indexed: list[str] = []
        self.cleared: list[str] = []

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        with self._log_lock:
            self.indexed.append(session_of_key(session_id))
        super().index_tools(session_id, tools)

    def clear_index(self, session_id: str) -> None:
        with self._log_lock:
            self.cleared.append(session_of_key(session_id))
        super().clear_index(session_id)


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No ``TOOLSEARCH_*`` variable or ``toolsearch.toml`` changes what the client builds."""
    import os

    for key in list(os.environ):
        if key.startswith("TOOLSEARCH_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


# -- end to end over 200 tools -----------------------------------------------------------


def test_first_request_carries_only_the_search_tool_then_the_discovered_definitions() -> None:
    executions = Executions()
    tools = catalog(executions)
    assert len(tools) == 200
    registered = {t.definition.name: t.definition for t in tools}
    model = FunctionChatModel(task_agent)

    response = client_with(model, advisor(max_results=5)).prompt(EMAIL_TASK).tools(tools).call()

    assert executions.names == ["email_send_message"]
    assert response.content() == (
        'Done: email_send_message done with {"subject": "demo", "to": "demo"}'
    )
    first, second, third = model.requests
    assert names_of(first) == [SEARCH]
    search_definition = first.tool_definitions[0]
    assert search_definition.input_schema["required"] == ["query"]
    assert set(search_definition.input_schema["properties"]) == {"query", "maxResults"}
    [hits] = search_results(second)
    assert len(hits) == 5
    assert hits[0] == "email_send_message"
    assert names_of(second) == [SEARCH, *hits]
    # the discovered tools are sent with their full, registered definitions
    assert second.tool_definitions[1:] == [registered[name] for name in hits]
    assert names_of(third) == names_of(second)


def _prompt_tokens(prompt: Prompt) -> int:
    text = render_messages(prompt.messages) + "\n" + render_tools(prompt.tool_definitions)
    return WhitespaceTokenCounter().count(text)


def test_total_prompt_tokens_are_far_below_the_plain_advisor_for_the_same_task() -> None:
    plain_runs, search_runs = Executions(), Executions()
    plain_model = FunctionChatModel(task_agent)
    plain = (
        ChatClient.builder(plain_model)
        .default_advisors(ToolCallingAdvisor())
        .build()
        .prompt(EMAIL_TASK)
        .tools(catalog(plain_runs))
        .call()
    )
    search_model = FunctionChatModel(task_agent)
    searched = (
        client_with(search_model, advisor()).prompt(EMAIL_TASK).tools(catalog(search_runs)).call()
    )

    # the same task completes the same way
    assert plain_runs.names == search_runs.names == ["email_send_message"]
    assert plain.content() == searched.content()
    assert len(plain_model.requests[0].tool_definitions) == 200

    plain_response, search_response = plain.chat_response(), searched.chat_response()
    assert plain_response is not None
    assert search_response is not None
    plain_tokens = plain_response.metadata["loop_usage"].prompt_tokens
    search_tokens = search_response.metadata["loop_usage"].prompt_tokens
    # the loop's usage is the sum over every request the model received
    assert plain_tokens == sum(_prompt_tokens(p) for p in plain_model.requests)
    assert search_tokens == sum(_prompt_tokens(p) for p in search_model.requests)
    assert search_tokens / plain_tokens < 0.25


# -- a drop-in tool advisor ---------------------------------------------------------------


def test_is_a_tool_calling_advisor_with_the_same_default_order() -> None:
    search = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    assert isinstance(search, ToolCallingAdvisor)
    assert search.order == ToolCallingAdvisor().order == 300
    assert ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), order=310).order == 310
    default = ToolSearchToolCallingAdvisor()
    assert isinstance(default.tool_index, Bm25ToolIndex)
    assert default.max_results == 5
    assert default.search_tool_name == SEARCH
    assert default.session_id_key_name == CONVERSATION_ID
    assert default.reference_tool_name_accumulation is True
    assert isinstance(default.registry.eviction_strategy, LruEvictionStrategy)


@pytest.mark.parametrize(
    "options",
    [{"max_results": 0}, {"max_results": 11}, {"undiscovered_tool_policy": "ignore"}],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), **options)


@pytest.mark.parametrize("where", ["default", "per_call"])
def test_registering_it_means_the_client_adds_no_plain_tool_advisor(where: str) -> None:
    executions = Executions()
    tools = catalog(executions)
    model = FunctionChatModel(task_agent)
    search = advisor()
    if where == "default":
        spec = client_with(model, search).prompt(EMAIL_TASK).tools(tools)
    else:
        spec = ChatClient.create(model).prompt(EMAIL_TASK).tools(tools).advisors(search)

    _, chain = spec.build_request()
    assert [a for a in chain.advisors if isinstance(a, ToolCallingAdvisor)] == [search]

    spec.call()
    assert names_of(model.requests[0]) == [SEARCH]
    assert executions.names == ["email_send_message"]


def test_two_tool_advisors_fail() -> None:
    model = FunctionChatModel(task_agent)
    with pytest.raises(AdvisorChainError):
        ChatClient.builder(model).default_advisors(advisor(), ToolCallingAdvisor()).build()
    with pytest.raises(AdvisorChainError):
        ChatClient.builder(model).default_advisors(advisor(), advisor()).build()
    with pytest.raises(AdvisorChainError):
        (
            client_with(model, advisor())
            .prompt(EMAIL_TASK)
            .tools(catalog(Executions()))
            .advisors(ToolCallingAdvisor())
            .call()
        )
    assert model.requests == []


# -- sessions ------------------------------------------------------------------------------

WEATHER_TASK = "What is the weather forecast for Paris for the next few days"


def test_a_conversation_id_keeps_discovered_tools_for_the_next_call() -> None:
    executions = Executions()
    tools = catalog(executions)
    model = FunctionChatModel(task_agent)
    search = advisor()
    client = client_with(model, search)

    client.prompt(EMAIL_TASK).tools(tools).advisors(session("u1")).call()
    assert search.registry.session_ids() == ["u1"]
    discovered = search.discovered_tools("u1")
    assert discovered == search_results(model.requests[1])[0]

    start = len(model.requests)
    client.prompt(WEATHER_TASK).tools(tools).advisors(session("u1")).call()
    # the second call's very first request already carries the earlier discoveries
    assert names_of(model.requests[start]) == [SEARCH, *discovered]
    [new_hits] = search_results(model.requests[start + 1])
    later = search.discovered_tools("u1")
    assert later[: len(discovered)] == discovered
    assert set(later) == set(discovered) | set(new_hits)
    assert names_of(model.requests[start + 1]) == [SEARCH, *later]
    assert executions.names == ["email_send_message", "weather_get_forecast"]


def test_a_custom_session_id_key_name() -> None:
    executions = Executions()
    tools = catalog(executions)
    model = FunctionChatModel(task_agent)
    search = advisor(session_id_key_name="tenant")
    client = client_with(model, search)

    client.prompt(EMAIL_TASK).tools(tools).advisors(lambda a: a.param("tenant", "t-9")).call()
    assert search.registry.session_ids() == ["t-9"]
    assert "email_send_message" in search.discovered_tools("t-9")

    # CONVERSATION_ID is not this advisor's key: that call runs in a throwaway session
    start = len(model.requests)
    client.prompt(WEATHER_TASK).tools(tools).advisors(session("u1")).call()
    assert names_of(model.requests[start]) == [SEARCH]
    assert search.registry.session_ids() == ["t-9"]

    discovered = search.discovered_tools("t-9")
    start = len(model.requests)
    client.prompt(WEATHER_TASK).tools(tools).advisors(lambda a: a.param("tenant", "t-9")).call()
    assert names_of(model.requests[start]) == [SEARCH, *discovered]


def test_without_a_session_id_the_session_is_dropped_when_the_loop_ends() -> None:
    executions = Executions()
    tools = catalog(executions)
    model = FunctionChatModel(task_agent)
    index = RecordingIndex()
    search = advisor(tool_index=index)
    client = client_with(model, search)

    client.prompt(EMAIL_TASK).tools(tools).call()
    assert len(search.registry) == 0
    assert len(index.indexed) == 1
    assert index.cleared == index.indexed  # its index is cleared too

    start = len(model.requests)
    client.prompt(EMAIL_TASK).tools(tools).call()
    assert names_of(model.requests[start]) == [SEARCH]
    assert len(search.registry) == 0
    assert len(set(index.indexed)) == 2  # a fresh session each time
    assert index.cleared == index.indexed
    assert executions.names == ["email_send_message", "email_send_message"]

    # an empty session id is no session id
    start = len(model.requests)
    client.prompt(EMAIL_TASK).tools(tools).advisors(session("")).call()
    assert names_of(model.requests[start]) == [SEARCH]
    assert len(search.registry) == 0


def test_32_concurrent_conversations_only_ever_see_their_own_tools() -> None:
    executions = Executions()
    services = list(SERVICES)
    conversations = range(32)
    own: dict[int, list[Any]] = {}
    targets: dict[int, str] = {}
    tasks: dict[int, str] = {}
    for k in conversations:
        suffix = f"_c{k:02d}"
        picked = [services[k % 20], services[(k + 3) % 20]]
        own[k] = [t for s in picked for t in service_tools(s, executions, suffix)]
        op, description, _, _ = SERVICES[picked[0]][3][k % 3]
        targets[k] = f"{picked[0]}_{op}{suffix}"
        tasks[k] = f"{description} (conversation {k})"
    barrier = threading.Barrier(len(conversations))

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        if len(messages) == 2:  # [system, user]: the first request of each conversation
            barrier.wait(timeout=60)  # all 32 sessions are open at the same time
        return task_agent(messages, tools)

    model = FunctionChatModel(agent)
    search = advisor(max_results=4)
    client = client_with(model, search)
    answers: dict[int, str | None] = {}
    errors: list[BaseException] = []

    def converse(k: int) -> None:
        try:
            answers[k] = (
                client.prompt(tasks[k]).tools(own[k]).advisors(session(f"conv-{k}")).call()
            ).content()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=converse, args=(k,)) for k in conversations]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sorted(executions.names) == sorted(targets.values())
    for k in conversations:
        assert answers[k] is not None
        assert answers[k].startswith(f"Done: {targets[k]} done")
    conversation_of = re.compile(r"\(conversation (\d+)\)")
    for prompt in model.requests:
        k = int(conversation_of.search(last_user_text(prompt.messages) or "").group(1))
        mine = {t.definition.name for t in own[k]}
        assert set(names_of(prompt)) - {SEARCH} <= mine
        for hits in search_results(prompt):
            assert set(hits) <= mine
    assert sorted(search.registry.session_ids()) == sorted(f"conv-{k}" for k in conversations)
    for k in conversations:
        state = search.registry.get(f"conv-{k}")
        assert state is not None
        mine = {t.definition.name for t in own[k]}
        assert set(state.tool_names) == mine
        assert targets[k] in search.discovered_tools(f"conv-{k}")
        assert set(search.discovered_tools(f"conv-{k}")) <= mine


# -- eviction ------------------------------------------------------------------------------


def test_lru_eviction_drops_the_least_recent_session_which_then_starts_over() -> None:
    executions = Executions()
    tools = catalog(executions)
    model = FunctionChatModel(task_agent)
    index = RecordingIndex()
    search = advisor(tool_index=index, eviction_strategy=LruEvictionStrategy(max_sessions=2))
    client = client_with(model, search)

    def run(sid: str) -> Prompt:
        start = len(model.requests)
        client.prompt(EMAIL_TASK).tools(tools).advisors(session(sid)).call()
        return model.requests[start]

    for sid in ("a", "b", "c"):
        assert names_of(run(sid)) == [SEARCH]
    assert sorted(search.registry.session_ids()) == ["b", "c"]
    assert "a" in index.cleared

    # "c" is kept: its next call starts with its discoveries
    known = search.discovered_tools("c")
    assert len(known) > 1
    assert names_of(run("c")) == [SEARCH, *known]
    # "a" was evicted: it starts over with only the search tool, and "b" is now the oldest
    assert names_of(run("a")) == [SEARCH]
    assert sorted(search.registry.session_ids()) == ["a", "c"]
    state = search.registry.get("a")
    assert state is not None
    assert state.index_count == 1
    assert "b" in index.cleared


def test_ttl_eviction_with_an_injected_clock() -> None:
    executions = Executions()
    tools = catalog(executions)
    model = FunctionChatModel(task_agent)
    clock = FakeClock(10_000)
    search = advisor(eviction_strategy=TtlEvictionStrategy(60, clock=clock))
    client = client_with(model, search)

    def run(sid: str) -> Prompt:
        start = len(model.requests)
        client.prompt(EMAIL_TASK).tools(tools).advisors(session(sid)).call()
        return model.requests[start]

    assert names_of(run("s1")) == [SEARCH]
    clock.advance(50)
    assert search.registry.evict_expired() == []
    known = search.discovered_tools("s1")
    assert names_of(run("s1")) == [SEARCH, *known]  # and touched
    clock.advance(59)
    assert search.registry.evict_expired() == []
    assert "s1" in search.registry
    clock.advance(2)
    assert search.registry.evict_expired() == ["s1"]
    assert "s1" not in search.registry
    assert names_of(run("s1")) == [SEARCH]

    # expiry is also applied lazily, when another session is used
    clock.advance(61)
    assert "s1" in search.registry
    run("s2")
    assert search.registry.session_ids() == ["s2"]
    assert names_of(run("s1")) == [SEARCH]


# -- re-indexing only on change ------------------------------------------------------------


def test_unchanged_tools_are_not_reindexed_and_a_changed_description_is() -> None:
    executions = Executions()
    model = FunctionChatModel(task_agent)
    index = RecordingIndex()
    search = advisor(tool_index=index)
    client = client_with(model, search)

    client.prompt(EMAIL_TASK).tools(catalog(executions)).advisors(session("fp")).call()
    # a second request with equal tools (new objects, same definitions)
    client.prompt(WEATHER_TASK).tools(catalog(executions)).advisors(session("fp")).call()
    state = search.registry.get("fp")
    assert state is not None
    assert state.index_count == 1
    assert index.indexed == ["fp"]

    changed = catalog(executions)
    position = next(i for i, t in enumerate(changed) if t.definition.name == "weather_get_alerts")
    changed[position] = make_tool(
        "weather_get_alerts",
        "List hurricane and tornado warnings issued for a region",
        {"region": "string"},
        ["region"],
        executions,
    )
    client.prompt("Are there hurricane warnings").tools(changed).advisors(session("fp")).call()
    state = search.registry.get("fp")
    assert state is not None
    assert state.index_count == 2
    assert index.indexed == ["fp", "fp"]
    # the new description is what the index searches now
    assert executions.names[-1] == "weather_get_alerts"


# -- accumulation and discovery order ------------------------------------------------------

MULTI_TASK = (
    "weather forecast for Paris; send an email message to Bob; create a calendar event Friday"
)


def multi_agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
    """Tasks separated by ';': search the first two in parallel, call their tools, then
    search the third, call its tool, and answer."""
    tasks = [t.strip() for t in (last_user_text(messages) or "").split(";")]
    visible = {t.name: t for t in tools}
    responses = [r for m in messages if isinstance(m, ToolResponseMessage) for r in m.responses]
    searches = [search_names(r.response_data) for r in responses if r.name == SEARCH]
    done = [r.name for r in responses if r.name != SEARCH]

    def best(task: str, hits: list[str]) -> tuple[str, dict[str, Any]]:
        found = max((visible[n] for n in hits if n in visible), key=lambda t: overlap(task, t))
        return found.name, arguments_for(found)

    if not searches:
        return calling(messages, (SEARCH, {"query": tasks[0]}), (SEARCH, {"query": tasks[1]}))
    if not done:
        return calling(messages, best(tasks[0], searches[0]), best(tasks[1], searches[1]))
    if len(searches) == 2:
        return calling(messages, (SEARCH, {"query": tasks[2]}))
    if len(done) == 2:
        return calling(messages, best(tasks[2], searches[2]))
    return AssistantMessage(content="All three done: " + ", ".join(done))


@pytest.mark.parametrize("accumulate", [True, False])
def test_accumulation_on_and_off_with_parallel_searches(accumulate: bool) -> None:
    executions = Executions()
    model = FunctionChatModel(multi_agent)
    search = advisor(max_results=3, reference_tool_name_accumulation=accumulate)

    answer = client_with(model, search).prompt(MULTI_TASK).tools(catalog(executions)).call()

    assert executions.names == [
        "weather_get_forecast",
        "email_send_message",
        "calendar_create_event",
    ]
    assert answer.content() == (
        "All three done: weather_get_forecast, email_send_message, calendar_create_event"
    )
    r0, r1, r2, r3, r4 = model.requests
    weather_hits, email_hits, calendar_hits = search_results(r4)
    assert not set(calendar_hits) & set(weather_hits + email_hits)
    first_round = list(dict.fromkeys(weather_hits + email_hits))
    assert names_of(r0) == [SEARCH]
    # both parallel searches of the round are visible together, in either mode
    assert names_of(r1) == [SEARCH, *first_round]
    assert names_of(r2) == [SEARCH, *first_round]  # a turn without searches changes nothing
    # accumulation off: only the last round's tools
    expected = [SEARCH, *first_round, *calendar_hits] if accumulate else [SEARCH, *calendar_hits]
    assert names_of(r3) == expected
    assert names_of(r4) == expected


def test_visible_tools_keep_a_stable_prefix_across_iterations_and_calls() -> None:
    model = FunctionChatModel(multi_agent)
    search = advisor(max_results=3)
    client = client_with(model, search)
    tools = catalog(Executions())

    client.prompt(MULTI_TASK).tools(tools).advisors(session("prefix")).call()
    client.prompt(MULTI_TASK).tools(tools).advisors(session("prefix")).call()

    lists = [names_of(p) for p in model.requests]
    for before, after in itertools.pairwise(lists):
        assert after[: len(before)] == before
    assert lists[-1] == [SEARCH, *search.discovered_tools("prefix")]
    assert len(lists[-1]) == len(set(lists[-1]))


# -- pinned tools --------------------------------------------------------------------------


def test_pinned_tools_are_always_visible_first_and_never_duplicated() -> None:
    executions = Executions()
    tools = catalog(executions)
    clock_tool = make_tool("clock_now", "Tell the current time", {}, [], executions)
    model = FunctionChatModel(task_agent)
    search = advisor(pinned_tools=["weather_get_forecast", clock_tool])

    client_with(model, search).prompt(WEATHER_TASK).tools(tools).call()

    assert executions.names == ["weather_get_forecast"]
    first, second, _ = model.requests
    assert names_of(first) == [SEARCH, "weather_get_forecast", "clock_now"]
    [hits] = search_results(second)
    assert "weather_get_forecast" not in hits  # the model has it: the search skips it
    assert names_of(second) == [SEARCH, "weather_get_forecast", "clock_now", *hits]
    assert len(names_of(second)) == len(set(names_of(second)))


def test_a_pinned_tool_object_is_callable_without_being_registered_per_request() -> None:
    executions = Executions()
    clock_tool = make_tool("clock_now", "Tell the current time", {}, [], executions)

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, ToolResponseMessage):
            return AssistantMessage(content=last.responses[0].response_data)
        clock = [t for t in tools if "time" in t.description]
        if clock:
            return calling(messages, (clock[0].name, {}))
        return calling(messages, (SEARCH, {"query": "current time"}))

    model = FunctionChatModel(agent)
    search = advisor(pinned_tools=[clock_tool])
    answer = client_with(model, search).prompt("What time is it?").tools(catalog(executions)).call()
    assert executions.names == ["clock_now"]
    assert answer.content() == "clock_now done with {}"
    assert names_of(model.requests[0]) == [SEARCH, "clock_now"]


def test_a_pinned_tool_object_that_is_also_registered_is_sent_once() -> None:
    executions = Executions()
    tools = catalog(executions)
    forecast = next(t for t in tools if t.definition.name == "weather_get_forecast")
    model = FunctionChatModel(task_agent)
    client_with(model, advisor(pinned_tools=[forecast])).prompt(WEATHER_TASK).tools(tools).call()
    assert names_of(model.requests[0]) == [SEARCH, "weather_get_forecast"]
    for prompt in model.requests:
        assert names_of(prompt).count("weather_get_forecast") == 1
    assert executions.names == ["weather_get_forecast"]


def test_a_pinned_name_the_request_does_not_register_is_skipped() -> None:
    model = FunctionChatModel(task_agent)
    search = advisor(pinned_tools=["teleport_user", "weather_get_forecast"])
    client_with(model, search).prompt(EMAIL_TASK).tools(catalog(Executions())).call()
    first = [t.name for t in model.requests[0].tool_definitions]
    assert first == ["toolSearchTool", "weather_get_forecast"]


def test_a_request_without_tools_behaves_like_the_plain_advisor() -> None:
    model = FunctionChatModel(lambda messages, tools: f"{len(tools)} tools, {len(messages)} msgs")
    search = advisor()
    reply = client_with(model, search).prompt("hello").call().content()
    assert reply == "0 tools, 1 msgs"  # no search tool, no system suffix
    chunks = list(client_with(model, search).prompt("hello").stream().content())
    assert len(chunks) > 1  # streamed as it arrives, not held back


def _search_once(query: str, max_results: Any = None) -> Callable[..., AssistantMessage]:
    """Search once (with ``maxResults`` when given), then report what was found."""

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, ToolResponseMessage):
            return AssistantMessage(content=last.responses[0].response_data)
        arguments: dict[str, Any] = {"query": query}
        if max_results is not None:
            arguments["maxResults"] = max_results
        return calling(messages, (SEARCH, arguments))

    return agent


@pytest.mark.parametrize(
    ("requested", "expected"),
    [(2, 2), (7, 7), (10, 10), (50, 10), (0, 1), (-3, 1), ("4", 4), ("lots", 3), (None, 3)],
)
def test_max_results_from_the_model_wins_and_is_clamped(requested: Any, expected: int) -> None:
    model = FunctionChatModel(_search_once("service", requested))
    search = advisor(max_results=3)
    answer = client_with(model, search).prompt("anything").tools(catalog(Executions())).call()

    names = json.loads(answer.content() or "")
    assert isinstance(names, list)
    assert all(isinstance(n, str) for n in names)
    assert len(names) == expected  # "service" matches 140 tools
    assert names_of(model.requests[1]) == [SEARCH, *names]


def test_search_results_are_tool_names_or_objects_with_summaries() -> None:
    tools = catalog(Executions())
    descriptions = {t.definition.name: t.definition.description for t in tools}

    model = FunctionChatModel(_search_once("stock price quote"))
    plain = client_with(model, advisor()).prompt("x").tools(tools).call()
    names = json.loads(plain.content() or "")
    assert names[0] == "stocks_get_quote"
    assert all(isinstance(n, str) and n in descriptions for n in names)

    model = FunctionChatModel(_search_once("stock price quote"))
    search = advisor(search_results_with_summaries=True)
    rich = client_with(model, search).prompt("x").tools(tools).call()
    found = json.loads(rich.content() or "")
    assert [item["name"] for item in found] == names
    for item in found:
        assert set(item) == {"name", "summary"}
        assert item["summary"]
        assert descriptions[item["name"]].startswith(item["summary"])
    assert names_of(model.requests[1]) == [SEARCH, *names]


@pytest.mark.parametrize("name", ["email_audit_folder", "github_list_commits", "todo_list_overdue"])
def test_an_exact_tool_name_as_query_returns_that_tool_first(name: str) -> None:
    executions = Executions()
    model = FunctionChatModel(task_agent)
    client_with(model, advisor()).prompt(name).tools(catalog(executions)).call()
    [hits] = search_results(model.requests[1])
    assert hits[0] == name
    assert executions.names == [name]


def test_the_search_tool_on_its_own() -> None:
    definitions = [t.definition for t in catalog(Executions())]
    options = ToolSearchOptions(max_results=4, exclude_loaded_tools=False)
    run = ToolSearchSessions(Bm25ToolIndex(), options=options).open(tools=definitions)
    tool = run.search_tool()

    assert tool.definition.name == SEARCH
    assert tool.metadata == ToolMetadata(
        tool_search=True
    )  # adapters may send it as the provider's own
    names = json.loads(tool.call(json.dumps({"query": "hotel room"})))
    assert len(names) == 4
    assert names[0].startswith("hotels_")
    assert run.discovered == names
    assert json.loads(tool.call('{"query": "maps_find_nearby", "maxResults": 1}')) == [
        "maps_find_nearby"
    ]
    assert json.loads(tool.call('{"query": "MAPS_FIND_NEARBY", "maxResults": 2}'))[0] == (
        "maps_find_nearby"
    )
    assert len(json.loads(asyncio.run(tool.acall('{"query": "service", "maxResults": 99}')))) == 10


def _search_each(*queries: str) -> Callable[..., AssistantMessage]:
    """Search each query in its own turn, then answer with every search result."""

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        done = [r for m in messages if isinstance(m, ToolResponseMessage) for r in m.responses]
        if len(done) < len(queries):
            return calling(messages, (SEARCH, {"query": queries[len(done)]}))
        return AssistantMessage(content=json.dumps([r.response_data for r in done]))

    return agent


def _results(answer: Any) -> list[list[str]]:
    return [json.loads(data) for data in json.loads(answer.content() or "")]


def test_a_later_search_skips_the_tools_the_model_already_has() -> None:
    model = FunctionChatModel(_search_each("hotel room", "hotel room"))
    search = advisor(max_results=3)
    answer = client_with(model, search).prompt("x").tools(catalog(Executions())).call()

    first, second = _results(answer)
    assert len(first) == len(second) == 3  # max_results new tools each time
    assert not set(first) & set(second)
    assert second[0].startswith("hotels_")  # the next best hotel tools, not unrelated ones
    assert names_of(model.requests[2]) == [SEARCH, *first, *second]


def test_without_exclusion_a_repeated_search_repeats_its_hits() -> None:
    model = FunctionChatModel(_search_each("hotel room", "hotel room"))
    search = advisor(max_results=3, exclude_loaded_tools=False)
    answer = client_with(model, search).prompt("x").tools(catalog(Executions())).call()

    first, second = _results(answer)
    assert first == second
    assert names_of(model.requests[2]) == [SEARCH, *first]


def test_an_exact_name_search_returns_a_loaded_tool_and_pinned_tools_are_skipped() -> None:
    model = FunctionChatModel(
        _search_each("weather forecast", "weather_get_forecast", "WEATHER_GET_FORECAST")
    )
    search = advisor(max_results=3, pinned_tools=["weather_get_forecast"])
    answer = client_with(model, search).prompt("x").tools(catalog(Executions())).call()

    by_words, by_name, by_other_case = _results(answer)
    assert "weather_get_forecast" not in by_words  # pinned: the model has it
    assert by_name[0] == by_other_case[0] == "weather_get_forecast"
    assert not set(by_words) & set(by_name[1:])


def test_without_accumulation_only_pinned_tools_are_skipped() -> None:
    model = FunctionChatModel(_search_each("hotel room", "hotel room"))
    search = advisor(
        max_results=3, reference_tool_name_accumulation=False, pinned_tools=["hotels_book_room"]
    )
    answer = client_with(model, search).prompt("x").tools(catalog(Executions())).call()

    first, second = _results(answer)
    assert first == second  # a new round replaces the last one's tools: they come back
    assert "hotels_book_room" not in first
    assert names_of(model.requests[2]) == [SEARCH, "hotels_book_room", *second]


def test_the_search_tool_on_its_own_skips_what_loaded_returns() -> None:
    definitions = [t.definition for t in catalog(Executions())]
    index = Bm25ToolIndex()
    plain = ToolSearchSessions(
        index, options=ToolSearchOptions(max_results=4, exclude_loaded_tools=False)
    ).open(tools=definitions)
    ranked = json.loads(plain.search_tool().call('{"query": "hotel room", "maxResults": 8}'))
    run = ToolSearchSessions(index, options=ToolSearchOptions(max_results=4)).open(
        tools=definitions
    )
    run.mark_discovered(ranked[:2])  # the model sees these already
    tool = run.search_tool()
    assert json.loads(tool.call('{"query": "hotel room"}')) == ranked[2:6]
    assert json.loads(tool.call(json.dumps({"query": ranked[1]})))[0] == ranked[1]


@pytest.mark.parametrize("arguments", [{"query": ""}, {"query": "   "}, {}])
def test_an_empty_query_comes_back_as_an_error_result_and_the_loop_goes_on(
    arguments: dict[str, Any],
) -> None:
    executions = Executions()

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage):
            return calling(messages, (SEARCH, arguments))
        data = last.responses[0].response_data
        if last.responses[0].name == SEARCH and data.startswith("Error"):
            return calling(messages, (SEARCH, {"query": "send email message"}))
        return task_agent(messages, tools)

    model = FunctionChatModel(agent)
    answer = client_with(model, advisor()).prompt(EMAIL_TASK).tools(catalog(executions)).call()

    [error] = tool_responses(model.requests[1])
    assert error.name == SEARCH
    assert "query" in error.response_data
    assert error.response_data.startswith("Error")
    assert names_of(model.requests[1]) == [SEARCH]  # nothing was found
    assert executions.names == ["email_send_message"]
    assert (answer.content() or "").startswith("Done: email_send_message")


# -- the search's hits reach the model as typed data ---------------------------------------


def test_search_hits_reach_the_model_request_as_typed_data() -> None:
    model = FunctionChatModel(task_agent)
    client_with(model, advisor(max_results=5)).prompt(EMAIL_TASK).tools(
        catalog(Executions())
    ).call()
    [search] = [r for r in tool_responses(model.requests[1]) if r.name == SEARCH]
    assert search.search_hits is not None
    assert [hit.name for hit in search.search_hits] == json.loads(search.response_data)
    scores = [hit.score for hit in search.search_hits]
    assert all(isinstance(score, float) for score in scores)
    assert scores == sorted(scores, reverse=True)  # best first, as the text lists them
    # every other tool result carries no hits
    later = [r for r in tool_responses(model.requests[-1]) if r.name != SEARCH]
    assert later
    assert all(r.search_hits is None for r in later)


def test_hits_with_summaries_and_an_index_error_without_hits() -> None:
    tools = catalog(Executions())
    model = FunctionChatModel(_search_once("stock price quote"))
    client_with(model, advisor(search_results_with_summaries=True)).prompt("x").tools(tools).call()
    [search] = tool_responses(model.requests[1])
    found = json.loads(search.response_data)
    assert search.search_hits is not None
    assert [(h.name, h.summary) for h in search.search_hits] == [
        (item["name"], item["summary"]) for item in found
    ]

    run = ToolSearchSessions(RegexToolIndex(mode="pattern")).open(
        tools=[t.definition for t in tools]
    )
    result = run.search_tool().call('{"query": "(send|mail"}')
    assert json.loads(result)["error"] == "invalid_pattern"
    assert ToolResponse.of(id="1", name=SEARCH, result=result).search_hits is None


# -- index errors reach the model as tool results ------------------------------------------


@pytest.mark.parametrize(
    ("bad_pattern", "code"),
    [
        ("(send|mail", "invalid_pattern"),
        ("[z-a]", "invalid_pattern"),
        ("a" * 201, "pattern_too_long"),
    ],
)
def test_an_index_error_is_returned_to_the_model_and_the_loop_goes_on(
    bad_pattern: str, code: str
) -> None:
    executions = Executions()

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage):
            return calling(messages, (SEARCH, {"query": bad_pattern}))
        response = last.responses[0]
        if response.name == SEARCH and isinstance(json.loads(response.response_data), dict):
            return calling(messages, (SEARCH, {"query": "send_message"}))  # a simpler pattern
        return task_agent(messages, tools)

    model = FunctionChatModel(agent)
    search = advisor(tool_index=RegexToolIndex(mode="pattern"))
    answer = client_with(model, search).prompt(EMAIL_TASK).tools(catalog(executions)).call()

    [error] = tool_responses(model.requests[1])
    result = json.loads(error.response_data)
    assert result["error"] == code
    assert result["message"]
    assert names_of(model.requests[1]) == [SEARCH]
    hits = search_results(model.requests[2])[-1]
    assert "email_send_message" in hits
    assert names_of(model.requests[2]) == [SEARCH, *hits]
    assert executions.names == ["email_send_message"]
    assert (answer.content() or "").startswith("Done: email_send_message")


# -- calls to undiscovered and unknown tools -----------------------------------------------

DIRECT_TASK = "Use email_send_message to tell bob the build is green"


def direct_agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
    """Calls the tool the user named, even if it is not visible; searches for it by name
    when told to; then answers with the result."""
    request = last_user_text(messages) or ""
    named = re.search(r"Use (\w+)", request)
    assert named is not None
    wanted = named.group(1)
    visible = {t.name for t in tools}
    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        response = last.responses[0]
        if response.name == wanted and "done with" in response.response_data:
            return AssistantMessage(content=f"Finished: {response.response_data}")
        if response.name == SEARCH and wanted in visible:
            return calling(messages, (wanted, {"to": "bob", "subject": "build"}))
        if SEARCH in response.response_data and response.name == wanted:
            return calling(messages, (SEARCH, {"query": wanted}))  # the hint said: search
        return AssistantMessage(content=f"Could not do it: {response.response_data}")
    return calling(messages, (wanted, {"to": "bob", "subject": "build"}))


def test_policy_execute_runs_an_undiscovered_tool_and_marks_it_discovered() -> None:
    executions = Executions()
    model = FunctionChatModel(direct_agent)
    search = advisor()  # undiscovered_tool_policy="execute" is the default
    assert search.undiscovered_tool_policy == "execute"

    answer = (
        client_with(model, search)
        .prompt(DIRECT_TASK)
        .tools(catalog(executions))
        .advisors(session("x1"))
        .call()
    )

    assert executions.names == ["email_send_message"]
    assert answer.content() == (
        'Finished: email_send_message done with {"subject": "build", "to": "bob"}'
    )
    first, second = model.requests
    assert names_of(first) == [SEARCH]
    assert names_of(second) == [SEARCH, "email_send_message"]  # visible from now on
    assert search.discovered_tools("x1") == ["email_send_message"]


def test_policy_hint_answers_with_a_hint_and_does_not_run_the_tool() -> None:
    executions = Executions()
    model = FunctionChatModel(direct_agent)
    search = advisor(undiscovered_tool_policy="hint")

    answer = client_with(model, search).prompt(DIRECT_TASK).tools(catalog(executions)).call()

    _first, second, third, fourth = model.requests
    [hint] = tool_responses(second)
    assert hint.name == "email_send_message"
    assert SEARCH in hint.response_data
    assert "email_send_message" in hint.response_data
    assert names_of(second) == [SEARCH]  # not discovered by the refused call
    [hits] = search_results(third)
    assert hits[0] == "email_send_message"
    assert names_of(third) == [SEARCH, *hits]
    # it ran once: after it was discovered, never on the refused call
    assert executions.names == ["email_send_message"]
    assert (answer.content() or "").startswith("Finished: email_send_message done")
    assert names_of(fourth) == names_of(third)


@pytest.mark.parametrize("policy", ["execute", "hint"])
def test_an_unknown_tool_gets_an_error_naming_the_search_tool(policy: str) -> None:
    executions = Executions()
    model = FunctionChatModel(direct_agent)
    search = advisor(undiscovered_tool_policy=policy)

    answer = (
        client_with(model, search)
        .prompt("Use fax_send_document to send the contract")
        .tools(catalog(executions))
        .call()
    )

    [error] = tool_responses(model.requests[1])
    assert error.name == "fax_send_document"
    assert "fax_send_document" in error.response_data
    assert SEARCH in error.response_data
    assert executions.names == []
    assert (answer.content() or "").startswith("Could not do it:")


def test_one_turn_mixing_search_unknown_and_undiscovered_calls_keeps_results_in_order() -> None:
    executions = Executions()

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        if isinstance(messages[-1], UserMessage):
            return calling(
                messages,
                ("fax_send_document", {}),
                (SEARCH, {"query": "weather forecast"}),
                ("email_send_message", {"to": "bob", "subject": "hi"}),
            )
        return AssistantMessage(content="ok")

    model = FunctionChatModel(agent)
    search = advisor(undiscovered_tool_policy="hint")
    client_with(model, search).prompt("do three things").tools(catalog(executions)).call()

    calls = model.requests[1].messages[-2]
    results = model.requests[1].messages[-1]
    assert isinstance(calls, AssistantMessage)
    assert isinstance(results, ToolResponseMessage)
    assert [r.id for r in results.responses] == [c.id for c in calls.tool_calls]
    assert [r.name for r in results.responses] == [c.name for c in calls.tool_calls]
    unknown, found, hinted = results.responses
    assert "no tool named" in unknown.response_data
    assert "weather_get_forecast" in search_names(found.response_data)
    assert SEARCH in hinted.response_data
    assert executions.names == []
    assert names_of(model.requests[1]) == [SEARCH, *search_names(found.response_data)]


def test_a_registered_tool_named_like_the_search_tool_is_rejected() -> None:
    executions = Executions()
    impostor = make_tool(SEARCH, "Search the web", {"query": "string"}, ["query"], executions)
    model = FunctionChatModel(task_agent)
    with pytest.raises(ToolDefinitionError, match=SEARCH):
        client_with(model, advisor()).prompt(EMAIL_TASK).tools(
            [*catalog(executions), impostor]
        ).call()
    assert model.requests == []

    # with another name for the search tool, the same tool is fine
    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        if isinstance(messages[-1], UserMessage):
            return calling(messages, ("findTools", {"query": "search the web"}))
        return AssistantMessage(content=messages[-1].responses[0].response_data)

    model = FunctionChatModel(agent)
    renamed = advisor(search_tool_name="findTools")
    answer = client_with(model, renamed).prompt("x").tools([*catalog(executions), impostor]).call()
    assert names_of(model.requests[0]) == ["findTools"]
    assert json.loads(answer.content() or "")[0] == SEARCH
    assert "findTools" in (model.requests[0].messages[0].content or "")


# -- a memory advisor that trims history inside the loop ------------------------------------

INTENTS = ("forecast", "alerts")


def memory_agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
    """Steps named in the request ("forecast", then "alerts"): call the visible tool for the
    next step, or search for it when no visible tool fits. It reads only what it is sent:
    after trimming, the next step follows from the last tool result."""
    last = messages[-1]
    if isinstance(last, UserMessage):
        wanted = [i for i in INTENTS if i in last.content]
    else:
        assert isinstance(last, ToolResponseMessage)
        response = last.responses[0]
        if response.name == SEARCH:
            asked = messages[-2]
            assert isinstance(asked, AssistantMessage)
            query = json.loads(asked.tool_calls[0].arguments)["query"]
            wanted = [i for i in INTENTS if i in query]
        else:
            ran = next(i for i in INTENTS if i in response.name)
            wanted = list(INTENTS[INTENTS.index(ran) + 1 :])
    if not wanted:
        return AssistantMessage(content="Forecast and alerts checked.")
    match = [t for t in tools if t.name != SEARCH and wanted[0] in t.name]
    if match:
        return calling(messages, (match[0].name, arguments_for(match[0])))
    return calling(messages, (SEARCH, {"query": " ".join(f"weather {i}" for i in wanted)}))


def test_discovered_tools_survive_a_memory_advisor_that_trims_the_history() -> None:
    executions = Executions()
    tools = catalog(executions)
    model = FunctionChatModel(memory_agent)
    search = advisor(max_results=5)
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(max_messages=2), order=400)
    client = ChatClient.builder(model).default_advisors(search, memory).build()

    first = (
        client.prompt("Check the weather forecast and then the alerts for Paris")
        .tools(tools)
        .advisors(session("mem"))
        .call()
    )

    assert first.content() == "Forecast and alerts checked."
    assert executions.names == ["weather_get_forecast", "weather_get_alerts"]
    _r0, r1, r2, r3 = model.requests
    [hits] = search_results(r1)
    assert {"weather_get_forecast", "weather_get_alerts"} <= set(hits)
    assert names_of(r1) == [SEARCH, *hits]
    # the window dropped the search call and its result...
    assert search_results(r2) == []
    assert search_results(r3) == []
    assert not any(
        isinstance(m, AssistantMessage) and any(c.name == SEARCH for c in m.tool_calls)
        for m in [*r2.messages, *r3.messages]
    )
    # ...but the discovered tools stay visible, so no second search was needed
    assert names_of(r2) == [SEARCH, *hits]
    assert names_of(r3) == [SEARCH, *hits]

    # a later call in the session: the trimmed memory holds no search result at all
    start = len(model.requests)
    second = (
        client.prompt("Any new weather alerts for Paris?")
        .tools(tools)
        .advisors(session("mem"))
        .call()
    )
    later = model.requests[start:]
    assert search_results(later[0]) == []
    assert names_of(later[0]) == [SEARCH, *hits]
    assert executions.names[-1] == "weather_get_alerts"
    assert second.content() == "Forecast and alerts checked."
    calls = [
        c.name
        for p in later
        for m in p.messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
    ]
    assert SEARCH not in calls
    assert search.discovered_tools("mem") == hits


# -- streaming and async -------------------------------------------------------------------


def preamble_agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
    """``task_agent`` that also writes a preamble with each tool call."""
    reply = task_agent(messages, tools)
    if reply.tool_calls:
        return reply.model_copy(update={"content": "Let me look that up first."})
    return reply


EXPECTED_EMAIL_ANSWER = 'Done: email_send_message done with {"subject": "demo", "to": "demo"}'


def _check_email_flow(model: FunctionChatModel) -> None:
    first, second, third = model.requests
    assert names_of(first) == [SEARCH]
    [hits] = search_results(second)
    assert hits[0] == "email_send_message"
    assert names_of(second) == [SEARCH, *hits]
    assert names_of(third) == [SEARCH, *hits]


def test_streaming_runs_the_same_flow_and_streams_only_the_final_answer() -> None:
    executions = Executions()
    model = FunctionChatModel(preamble_agent)
    search = advisor()
    stream = (
        client_with(model, search)
        .prompt(EMAIL_TASK)
        .tools(catalog(executions))
        .advisors(session("st"))
        .stream()
    )
    chunks = list(stream.content())

    assert "".join(chunks) == EXPECTED_EMAIL_ANSWER
    assert len(chunks) > 1  # streamed word by word
    assert not any("look that up" in c for c in chunks)
    assert executions.names == ["email_send_message"]
    _check_email_flow(model)
    assert search.discovered_tools("st") == names_of(model.requests[1])[1:]


def test_streaming_without_a_session_id_drops_the_session() -> None:
    model = FunctionChatModel(preamble_agent)
    search = advisor()
    stream = client_with(model, search).prompt(EMAIL_TASK).tools(catalog(Executions())).stream()
    assert "".join(stream.content()) == EXPECTED_EMAIL_ANSWER
    assert len(search.registry) == 0


def test_async_call_runs_the_same_flow() -> None:
    executions = Executions()
    model = FunctionChatModel(preamble_agent)
    search = advisor()
    spec = client_with(model, search).prompt(EMAIL_TASK).tools(catalog(executions))

    async def main() -> str | None:
        return (await spec.acall()).content()

    assert asyncio.run(main()) == EXPECTED_EMAIL_ANSWER
    assert executions.names == ["email_send_message"]
    _check_email_flow(model)
    assert len(search.registry) == 0


def test_async_stream_runs_the_same_flow_in_a_session() -> None:
    executions = Executions()
    model = FunctionChatModel(preamble_agent)
    search = advisor()
    spec = (
        client_with(model, search)
        .prompt(EMAIL_TASK)
        .tools(catalog(executions))
        .advisors(session("ast"))
    )

    async def main() -> list[str]:
        return [chunk async for chunk in spec.astream().content()]

    assert "".join(asyncio.run(main())) == EXPECTED_EMAIL_ANSWER
    assert executions.names == ["email_send_message"]
    _check_email_flow(model)
    assert search.discovered_tools("ast") == names_of(model.requests[1])[1:]


# -- the system message --------------------------------------------------------------------


def _system_texts(prompt: Prompt) -> list[str]:
    return [m.content for m in prompt.messages if isinstance(m, SystemMessage)]


def test_the_default_suffix_is_appended_to_the_system_message_once() -> None:
    model = FunctionChatModel(task_agent)
    client_with(model, advisor()).prompt(EMAIL_TASK).system("You are a helpful assistant.").tools(
        catalog(Executions())
    ).call()

    expected = "You are a helpful assistant.\n\n" + DEFAULT_SYSTEM_SUFFIX.replace(
        "{search_tool_name}", SEARCH
    )
    for prompt in model.requests:
        assert _system_texts(prompt) == [expected]
    assert SEARCH in expected
    assert "{" not in expected


def test_without_a_system_message_the_suffix_becomes_one() -> None:
    model = FunctionChatModel(task_agent)
    client_with(model, advisor()).prompt(EMAIL_TASK).tools(catalog(Executions())).call()
    first = model.requests[0]
    assert isinstance(first.messages[0], SystemMessage)
    assert _system_texts(first) == [DEFAULT_SYSTEM_SUFFIX.replace("{search_tool_name}", SEARCH)]


class CategorizedTool:
    """A minimal ``ToolCallback`` whose definition carries a category."""

    def __init__(self, name: str, description: str, category: str) -> None:
        self._definition = ToolDefinition(
            name=name,
            description=description,
            input_schema={"type": "object", "properties": {}},
            category=category,
        )

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def call(self, input_json: str, context: Any = None) -> str:
        return f"{self._definition.name} ran"

    async def acall(self, input_json: str, context: Any = None) -> str:
        return self.call(input_json, context)


CATEGORIZED = [
    CategorizedTool("send_sms", "Send a text message to a phone number", "messaging"),
    CategorizedTool("post_chat", "Post a chat message to a team channel", "messaging"),
    CategorizedTool("issue_refund", "Refund a customer's payment", "billing"),
    CategorizedTool("forecast", "Get the weather forecast", "weather"),
]


def test_the_suffix_lists_the_categories_when_tools_carry_them() -> None:
    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage):
            return calling(messages, (SEARCH, {"query": "refund a payment"}))
        if last.responses[0].name == SEARCH:
            return calling(messages, ("issue_refund", {}))
        return AssistantMessage(content=last.responses[0].response_data)

    model = FunctionChatModel(agent)
    answer = (
        client_with(model, advisor())
        .prompt("Refund order 7")
        .system("Be brief.")
        .tools(CATEGORIZED)
        .call()
    )

    expected = "Be brief.\n\n" + (
        DEFAULT_CATEGORY_SUFFIX.replace("{search_tool_name}", SEARCH)
        .replace("{tool_count}", "4")
        .replace("{categories}", "billing, messaging, weather")
    )
    assert _system_texts(model.requests[0]) == [expected]
    assert "billing, messaging, weather" in expected
    assert SEARCH in expected
    assert answer.content() == "issue_refund ran"
    assert names_of(model.requests[1])[:2] == [SEARCH, "issue_refund"]


def test_a_custom_suffix_with_placeholders() -> None:
    def agent(messages: list[Any], tools: list[ToolDefinition]) -> str:
        return "fine"

    model = FunctionChatModel(agent)
    search = advisor(
        search_tool_name="findTools",
        system_message_suffix="Call {search_tool_name} to load tools ({tool_count} in "
        "{categories}); {search_tool_name} takes a query.",
    )
    client_with(model, search).prompt("hi").system("Hello.").tools(CATEGORIZED).call()
    assert _system_texts(model.requests[0]) == [
        "Hello.\n\nCall findTools to load tools (4 in billing, messaging, weather); "
        "findTools takes a query."
    ]
    assert names_of(model.requests[0]) == ["findTools"]


# -- more of the loop under tool search ----------------------------------------------------


def test_a_search_without_hits_returns_an_empty_array_and_shows_nothing_new() -> None:
    model = FunctionChatModel(_search_once("zeppelin xylophone"))
    answer = client_with(model, advisor()).prompt("x").tools(catalog(Executions())).call()
    assert json.loads(answer.content() or "") == []
    assert names_of(model.requests[1]) == [SEARCH]


def test_discovered_tools_that_are_no_longer_registered_are_not_sent() -> None:
    executions = Executions()
    model = FunctionChatModel(task_agent)
    search = advisor()
    client = client_with(model, search)
    client.prompt(EMAIL_TASK).tools(catalog(executions)).advisors(session("shrink")).call()
    assert "email_send_message" in search.discovered_tools("shrink")

    start = len(model.requests)
    weather_only = catalog(executions, ["weather"])
    client.prompt(WEATHER_TASK).tools(weather_only).advisors(session("shrink")).call()
    assert names_of(model.requests[start]) == [SEARCH]
    registered = {t.definition.name for t in weather_only}
    # discoveries are kept (a later request may register those tools again); only the
    # registered ones are ever sent, as checked below
    for prompt in model.requests[start:]:
        assert set(names_of(prompt)) - {SEARCH} <= registered
    assert executions.names == ["email_send_message", "weather_get_forecast"]


def test_a_discovered_return_direct_tool_ends_the_loop_with_its_result() -> None:
    executions = Executions()

    def lookup(arguments: dict[str, Any]) -> str:
        executions.record("stocks_get_quote", arguments)
        return "ACME 123.45"

    tools = [t for t in catalog(executions) if t.definition.name != "stocks_get_quote"]
    tools.append(
        FunctionToolCallback.from_schema(
            lookup,
            name="stocks_get_quote",
            description="Get the latest stock price quote for a ticker symbol",
            input_schema=_schema({"symbol": "string"}, ["symbol"]),
            return_direct=True,
        )
    )
    model = FunctionChatModel(task_agent)
    answer = (
        client_with(model, advisor())
        .prompt("Get the stock price quote for ACME")
        .tools(tools)
        .call()
    )
    assert answer.content() == "ACME 123.45"
    assert executions.names == ["stocks_get_quote"]
    assert len(model.requests) == 2  # no model call after the return-direct result


def test_a_session_is_not_evicted_while_its_request_runs() -> None:
    """With room for one session, a nested conversation (a tool that asks another session)
    pushes the outer session out of the LRU; it must keep its discoveries until its own
    request ends, and only then be dropped."""
    executions = Executions()
    search = advisor(eviction_strategy=LruEvictionStrategy(max_sessions=1))
    model = FunctionChatModel(task_agent)
    client = client_with(model, search)
    inner_answers: list[str | None] = []

    def ask_colleague(arguments: dict[str, Any]) -> str:
        executions.record("colleague_ask", arguments)
        inner = client.prompt(WEATHER_TASK).tools(catalog(executions)).advisors(session("inner"))
        inner_answers.append(inner.call().content())
        return inner_answers[-1] or ""

    colleague = FunctionToolCallback.from_schema(
        ask_colleague,
        name="colleague_ask",
        description="Ask a colleague agent to send an email message for you",
        input_schema=_schema({"question": "string"}, ["question"]),
    )
    outer_tools = [t for t in catalog(executions) if not t.definition.name.startswith("email_")] + [
        colleague
    ]

    client.prompt("Ask a colleague to send an email message").tools(outer_tools).advisors(
        session("outer")
    ).call()

    assert executions.names == ["colleague_ask", "weather_get_forecast"]
    assert inner_answers
    assert (inner_answers[0] or "").startswith("Done: weather_get_forecast")
    outer = [p for p in model.requests if "colleague" in (last_user_text(p.messages) or "")]
    [hits] = search_results(outer[1])
    assert "colleague_ask" in hits
    # the outer session kept its discoveries through the inner conversation
    assert names_of(outer[-1]) == [SEARCH, *hits]
    # and was dropped once its request ended
    # the outer request ended last, so it is now the most recently used session
    assert search.registry.session_ids() == ["outer"]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
