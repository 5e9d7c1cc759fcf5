"""Settings-driven tool search ("auto-configuration"): ``TOOLSEARCH_TOOL_SEARCH__*``
environment variables and a TOML file make ``ChatClient.builder(model)`` and
``ChatClient.create(model)`` use a ``ToolSearchToolCallingAdvisor`` built from the settings;
an explicitly registered tool advisor always wins; invalid values fail validation.

The scripted model decides only from what it is sent: it searches with the user's words
when it sees the search tool, then calls the best tool the search found (or, without a
search tool, the best visible tool), then answers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolCallingAdvisor,
    ToolDefinition,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.chat.prompt import Prompt
from toolsearch.indexes import Bm25ToolIndex, RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import CompositeEvictionStrategy, LruEvictionStrategy, TtlEvictionStrategy
from toolsearch.settings import ToolSearchSettings, load_settings, tool_search_advisor

SEARCH = "toolSearchTool"

TOOLS = [
    ("weather_get_forecast", "Get the weather forecast for a city for the next few days"),
    ("weather_get_alerts", "List active severe weather alerts such as storms for a region"),
    ("weather_get_current", "Get the current temperature, wind and humidity at a location"),
    ("email_send_message", "Send an email message to a recipient with a subject and body"),
    ("email_read_inbox", "Read the latest unread messages in the email inbox"),
    ("email_set_signature", "Set the signature appended to outgoing email messages"),
    ("calendar_create_event", "Create a calendar event with a title and a start time"),
    ("calendar_cancel_event", "Cancel a calendar event and notify its attendees"),
    ("stocks_get_quote", "Get the latest stock price quote for a ticker symbol"),
    ("stocks_place_order", "Place a buy or sell order for shares of a stock"),
    ("maps_get_directions", "Get driving or walking directions between two addresses"),
    ("notes_write_note", "Write a new note with a title and text"),
]
TASK = "Send an email message to bob with the subject hello"


def tools(executed: list[str]) -> list[FunctionToolCallback]:
    def make(name: str, description: str) -> FunctionToolCallback:
        def run(arguments: dict[str, Any]) -> str:
            executed.append(name)
            return f"{name} done"

        schema = {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to act on"}},
            "required": ["text"],
        }
        return FunctionToolCallback.from_schema(
            run, name=name, description=description, input_schema=schema
        )

    return [make(name, description) for name, description in TOOLS]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.replace("_", " ").lower())) - {"a", "an", "the", "to"}


def agent(messages: list[Any], definitions: list[ToolDefinition]) -> AssistantMessage:
    request = next(m.content for m in reversed(messages) if isinstance(m, UserMessage))
    visible = {d.name: d for d in definitions}
    searcher = next((d.name for d in definitions if d.name not in dict(TOOLS)), None)

    def best(candidates: list[ToolDefinition]) -> AssistantMessage:
        chosen = max(
            candidates, key=lambda d: len(_words(request) & _words(d.name + " " + d.description))
        )
        call = ToolCall(id=f"c{len(messages)}", name=chosen.name, arguments='{"text": "x"}')
        return AssistantMessage(tool_calls=(call,))

    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        response = last.responses[0]
        if response.name != searcher:
            return AssistantMessage(content=f"Done: {response.response_data}")
        hits = [visible[n] for n in json.loads(response.response_data) if n in visible]
        return best(hits) if hits else AssistantMessage(content="nothing found")
    if searcher is not None:
        call = ToolCall(
            id=f"c{len(messages)}", name=searcher, arguments=json.dumps({"query": request})
        )
        return AssistantMessage(tool_calls=(call,))
    return best(definitions)


def names_of(prompt: Prompt) -> list[str]:
    return [d.name for d in prompt.tool_definitions]


def search_hits(prompt: Prompt, name: str = SEARCH) -> list[list[str]]:
    return [
        json.loads(r.response_data)
        for m in prompt.messages
        if isinstance(m, ToolResponseMessage)
        for r in m.responses
        if r.name == name
    ]


def tool_advisor_of(client: ChatClient, **advisors: Any) -> Any:
    spec = client.prompt(TASK).tools(tools([]))
    if advisors:
        spec.advisors(*advisors.values())
    _, chain = spec.build_request()
    [found] = [a for a in chain.advisors if isinstance(a, ToolCallingAdvisor)]
    return found


@pytest.fixture(autouse=True)
def clean_environment(clean_toolsearch_environment: None) -> None:
    """Every test here starts without ``TOOLSEARCH_*`` variables or a ``toolsearch.toml``."""


@pytest.fixture
def enabled(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__ENABLED", "true")
    return monkeypatch


# -- disabled by default -----------------------------------------------------------------


def test_disabled_by_default() -> None:
    settings = load_settings().tool_search
    assert settings.enabled is False
    assert settings == ToolSearchSettings()
    executed: list[str] = []
    model = FunctionChatModel(agent)
    client = ChatClient.create(model)
    assert type(tool_advisor_of(client)) is ToolCallingAdvisor

    client.prompt(TASK).tools(tools(executed)).call()
    assert names_of(model.requests[0]) == [name for name, _ in TOOLS]
    assert executed == ["email_send_message"]


def test_enabled_false_keeps_the_plain_advisor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__ENABLED", "false")
    model = FunctionChatModel(agent)
    assert type(tool_advisor_of(ChatClient.builder(model).build())) is ToolCallingAdvisor


# -- enabled through the environment ------------------------------------------------------


@pytest.mark.parametrize("make", ["builder", "create"])
def test_enabled_by_environment_uses_the_tool_search_advisor(
    enabled: pytest.MonkeyPatch, make: str
) -> None:
    executed: list[str] = []
    model = FunctionChatModel(agent)
    client = ChatClient.builder(model).build() if make == "builder" else ChatClient.create(model)

    answer = client.prompt(TASK).tools(tools(executed)).call()

    assert isinstance(tool_advisor_of(client), ToolSearchToolCallingAdvisor)
    first, second, _ = model.requests
    assert names_of(first) == [SEARCH]
    [hits] = search_hits(second)
    assert names_of(second) == [SEARCH, *hits]
    assert executed == ["email_send_message"]
    assert answer.content() == "Done: email_send_message done"


def test_environment_values_are_applied(enabled: pytest.MonkeyPatch) -> None:
    enabled.setenv("TOOLSEARCH_TOOL_SEARCH__INDEX_TYPE", "regex")
    enabled.setenv("TOOLSEARCH_TOOL_SEARCH__MAX_RESULTS", "3")
    enabled.setenv("TOOLSEARCH_TOOL_SEARCH__TTL_SECONDS", "60")
    model = FunctionChatModel(agent)
    client = ChatClient.builder(model).build()

    search = tool_advisor_of(client)
    assert isinstance(search, ToolSearchToolCallingAdvisor)
    assert isinstance(search.tool_index, RegexToolIndex)
    assert search.max_results == 3
    eviction = search.registry.eviction_strategy
    assert isinstance(eviction, CompositeEvictionStrategy)
    lru, ttl = eviction.strategies
    assert isinstance(lru, LruEvictionStrategy)
    assert lru.max_sessions == 1000
    assert isinstance(ttl, TtlEvictionStrategy)
    assert ttl.ttl == 60

    client.prompt(TASK).tools(tools([])).call()
    [hits] = search_hits(model.requests[1])
    assert len(hits) == 3  # the model gave no maxResults: the setting is the fallback
    assert hits[0] == "email_send_message"


def test_without_a_ttl_eviction_is_lru_only(enabled: pytest.MonkeyPatch) -> None:
    enabled.setenv("TOOLSEARCH_TOOL_SEARCH__LRU_MAX_SESSIONS", "7")
    search = tool_advisor_of(ChatClient.builder(FunctionChatModel(agent)).build())
    eviction = search.registry.eviction_strategy
    assert isinstance(eviction, LruEvictionStrategy)
    assert eviction.max_sessions == 7
    assert isinstance(search.tool_index, Bm25ToolIndex)  # the default index type


def test_every_setting_reaches_the_advisor(enabled: pytest.MonkeyPatch) -> None:
    for key, value in {
        "SYSTEM_MESSAGE_SUFFIX": "Look tools up with {search_tool_name}.",
        "REFERENCE_TOOL_NAME_ACCUMULATION": "false",
        "SESSION_ID_KEY_NAME": "tenant",
        "ORDER": "350",
        "BM25_MIN_SCORE": "0.25",
        "PINNED_TOOLS": '["notes_write_note"]',
        "SEARCH_TOOL_NAME": "findTools",
        "UNDISCOVERED_TOOL_POLICY": "hint",
        "EXCLUDE_LOADED_TOOLS": "false",
    }.items():
        enabled.setenv(f"TOOLSEARCH_TOOL_SEARCH__{key}", value)
    model = FunctionChatModel(agent)
    client = ChatClient.builder(model).build()
    search = tool_advisor_of(client)

    assert search.system_message_suffix == "Look tools up with {search_tool_name}."
    assert search.reference_tool_name_accumulation is False
    assert search.session_id_key_name == "tenant"
    assert search.order == 350
    assert isinstance(search.tool_index, Bm25ToolIndex)
    assert search.tool_index.min_score == 0.25
    assert search.search_tool_name == "findTools"
    assert search.undiscovered_tool_policy == "hint"
    assert search.exclude_loaded_tools is False

    client.prompt(TASK).tools(tools([])).advisors(lambda a: a.param("tenant", "t1")).call()
    first = model.requests[0]
    assert names_of(first) == ["findTools", "notes_write_note"]
    assert first.messages[0].content == "Look tools up with findTools."
    assert search.registry.session_ids() == ["t1"]


def test_one_advisor_per_client_so_sessions_persist_across_requests(
    enabled: pytest.MonkeyPatch,
) -> None:
    model = FunctionChatModel(agent)
    client = ChatClient.create(model)
    assert tool_advisor_of(client) is tool_advisor_of(client)

    client.prompt(TASK).tools(tools([])).advisors(lambda a: a.param(CONVERSATION_ID, "u")).call()
    [hits] = search_hits(model.requests[1])
    start = len(model.requests)
    client.prompt(TASK).tools(tools([])).advisors(lambda a: a.param(CONVERSATION_ID, "u")).call()
    assert names_of(model.requests[start]) == [SEARCH, *hits]


# -- an explicit tool advisor wins -------------------------------------------------------


def test_an_explicit_default_tool_calling_advisor_wins(enabled: pytest.MonkeyPatch) -> None:
    executed: list[str] = []
    model = FunctionChatModel(agent)
    plain = ToolCallingAdvisor()
    client = ChatClient.builder(model).default_advisors(plain).build()
    assert tool_advisor_of(client) is plain

    client.prompt(TASK).tools(tools(executed)).call()
    assert names_of(model.requests[0]) == [name for name, _ in TOOLS]
    assert executed == ["email_send_message"]


def test_an_explicit_per_call_tool_calling_advisor_wins(enabled: pytest.MonkeyPatch) -> None:
    executed: list[str] = []
    model = FunctionChatModel(agent)
    client = ChatClient.builder(model).build()
    plain = ToolCallingAdvisor()
    assert tool_advisor_of(client, plain=plain) is plain

    client.prompt(TASK).tools(tools(executed)).advisors(plain).call()
    assert names_of(model.requests[0]) == [name for name, _ in TOOLS]
    assert executed == ["email_send_message"]


def test_an_explicit_tool_search_advisor_wins_over_the_settings(
    enabled: pytest.MonkeyPatch,
) -> None:
    enabled.setenv("TOOLSEARCH_TOOL_SEARCH__MAX_RESULTS", "3")
    model = FunctionChatModel(agent)
    mine = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=1)
    client = ChatClient.builder(model).default_advisors(mine).build()
    assert tool_advisor_of(client) is mine

    client.prompt(TASK).tools(tools([])).call()
    assert search_hits(model.requests[1]) == [["email_send_message"]]


# -- a TOML file -------------------------------------------------------------------------

TOML = """
[tool_search]
enabled = true
index_type = "regex"
max_results = 2
pinned_tools = ["notes_write_note"]
"""


def test_a_toml_file_named_by_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "conf" / "search.toml"
    config.parent.mkdir()
    config.write_text(TOML)
    monkeypatch.setenv("TOOLSEARCH_CONFIG_FILE", str(config))
    executed: list[str] = []
    model = FunctionChatModel(agent)
    client = ChatClient.builder(model).build()

    search = tool_advisor_of(client)
    assert isinstance(search, ToolSearchToolCallingAdvisor)
    assert isinstance(search.tool_index, RegexToolIndex)
    assert search.max_results == 2

    client.prompt(TASK).tools(tools(executed)).call()
    assert names_of(model.requests[0]) == [SEARCH, "notes_write_note"]
    [hits] = search_hits(model.requests[1])
    assert len(hits) == 2
    assert executed == ["email_send_message"]


def test_toolsearch_toml_in_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "toolsearch.toml").write_text(TOML)
    model = FunctionChatModel(agent)
    ChatClient.create(model).prompt(TASK).tools(tools([])).call()
    assert names_of(model.requests[0]) == [SEARCH, "notes_write_note"]


def test_the_environment_overrides_the_toml_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "search.toml"
    config.write_text(TOML)
    monkeypatch.setenv("TOOLSEARCH_CONFIG_FILE", str(config))
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__MAX_RESULTS", "4")
    assert load_settings().tool_search.max_results == 4
    assert tool_advisor_of(ChatClient.create(FunctionChatModel(agent))).max_results == 4

    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__ENABLED", "false")
    assert type(tool_advisor_of(ChatClient.create(FunctionChatModel(agent)))) is (
        ToolCallingAdvisor
    )


# -- invalid values ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("MAX_RESULTS", "50"),
        ("MAX_RESULTS", "0"),
        ("INDEX_TYPE", "elastic"),
        ("TTL_SECONDS", "0"),
        ("LRU_MAX_SESSIONS", "0"),
        ("BM25_MIN_SCORE", "1.5"),
        ("UNDISCOVERED_TOOL_POLICY", "ignore"),
    ],
)
def test_invalid_environment_values_raise_a_validation_error(
    enabled: pytest.MonkeyPatch, key: str, value: str
) -> None:
    enabled.setenv(f"TOOLSEARCH_TOOL_SEARCH__{key}", value)
    with pytest.raises(ValidationError):
        load_settings()
    with pytest.raises(ValidationError):
        ChatClient.builder(FunctionChatModel(agent)).build()


def test_invalid_values_in_code_and_in_a_toml_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError):
        ToolSearchSettings(max_results=50)
    config = tmp_path / "bad.toml"
    config.write_text("[tool_search]\nenabled = true\nmax_results = 50\n")
    monkeypatch.setenv("TOOLSEARCH_CONFIG_FILE", str(config))
    with pytest.raises(ValidationError):
        load_settings()
    with pytest.raises(ValidationError):
        ChatClient.create(FunctionChatModel(agent))


def test_tool_search_advisor_from_settings_object() -> None:
    search = tool_search_advisor(
        ToolSearchSettings(index_type="regex", max_results=9, ttl_seconds=5)
    )
    assert isinstance(search.tool_index, RegexToolIndex)
    assert search.max_results == 9
    assert isinstance(search.registry.eviction_strategy, CompositeEvictionStrategy)


def test_the_embedder_setting_reaches_vector_and_hybrid_indexes() -> None:
    pytest.importorskip("faiss", reason="vector indexes need toolsearch[vector]")
    pytest.importorskip("tantivy", reason="hybrid indexes need toolsearch[bm25]")
    from toolsearch.indexes import HybridToolIndex, VectorToolIndex

    vector = tool_search_advisor(ToolSearchSettings(index_type="vector", embedder="hashing-32"))
    assert isinstance(vector.tool_index, VectorToolIndex)
    assert vector.tool_index.embedder.name == "hashing-32"
    hybrid = tool_search_advisor(
        ToolSearchSettings(index_type="hybrid", embedder="hashing-32", bm25_min_score=0.2)
    )
    assert isinstance(hybrid.tool_index, HybridToolIndex)
    assert hybrid.tool_index.vector.embedder.name == "hashing-32"
    assert hybrid.tool_index.bm25.min_score == 0.2


def test_the_reranker_setting_wraps_any_index(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsearch.indexes import rerank

    loaded: list[str] = []

    def fake_load(name: str) -> rerank.FunctionReranker:
        loaded.append(name)
        return rerank.FunctionReranker(lambda query, document: 0.0, name=name)

    monkeypatch.setattr(rerank, "load_reranker", fake_load)
    advisor = tool_search_advisor(ToolSearchSettings(index_type="regex", reranker="/models/ce"))
    assert isinstance(advisor.tool_index, rerank.RerankingToolIndex)
    assert type(advisor.tool_index.first_stage).__name__ == "RegexToolIndex"
    assert advisor.tool_index.reranker.name == "/models/ce"
    assert loaded == ["/models/ce"]
    plain = tool_search_advisor(ToolSearchSettings(index_type="regex"))
    assert not isinstance(plain.tool_index, rerank.RerankingToolIndex)


def test_an_embedder_without_vectors_or_unknown_is_refused() -> None:
    with pytest.raises(ValidationError, match="applies to index_type"):
        ToolSearchSettings(index_type="bm25", embedder="minilm")
    with pytest.raises(ValueError, match="unknown embedder"):
        tool_search_advisor(ToolSearchSettings(index_type="vector", embedder="no-such-model"))


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
