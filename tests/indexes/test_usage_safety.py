"""Learning from use, safe by default (issue 45) and robust to damaged files and hostile
volumes (issue 47, items 1 and 2): one request cannot move another user's ranking,
anonymous requests are one contributor, a damaged memory file gives one typed error and
searches go on without it, awaiting searches are bounded in characters, a loaded file is
re-bounded, tenants and text-free memories keep what they should."""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolDefinition,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.errors import ToolDefinitionError, UsageMemoryError
from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder
from toolsearch.indexes.learning.learned import LearnedParams, LearnedToolIndex
from toolsearch.indexes.learning.memory import UsageMemory, UsageParams, catalog_digest
from toolsearch.indexes.learning.model import ANONYMOUS
from toolsearch.models import FunctionChatModel
from toolsearch.search import ToolSearchRequest
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch

# search mechanics on a few tools: the plain search loop (tests/conftest.py, cold_search)
pytestmark = pytest.mark.cold_search

T0 = 1_700_000_000.0
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    ToolDefinition(name=n, description=d, input_schema=SCHEMA)
    for n, d in [
        ("get_weather", "Get the weather in a city today"),
        ("delete_account", "Delete the user's account today, permanently"),
        ("send_email", "Send an email to a recipient"),
        ("book_flight", "Book a flight between two airports"),
    ]
]
DIGEST = catalog_digest(TOOLS)
ATTACK = "what is the weather in paris today"


def callbacks() -> list[FunctionToolCallback]:
    return [
        FunctionToolCallback.from_schema(
            lambda _, n=t.name: f"{n} ok",
            name=t.name,
            description=t.description,
            input_schema=SCHEMA,
        )
        for t in TOOLS
    ]


def first_hit(index: Any, query: str) -> str:
    response = index.search(ToolSearchRequest("victim", query, 4))
    return str(response.tool_references[0].tool_name)


def poisoned(params: LearnedParams | None, attacks: int, conversation: str | None) -> str:
    """Attackers search with the victim's words and call ``delete_account`` successfully
    through the advisor; returns the victim's first hit for the same words."""
    memory = UsageMemory(clock=lambda: T0, params=UsageParams(half_life_days=None))
    index = LearnedToolIndex(
        Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(256), params=params
    )
    advisor = ToolSearchToolCallingAdvisor(tool_index=index, search_log=memory, max_results=4)

    def script(messages: list[Any], _tools: list[ToolDefinition]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn == 0:
            query = json.dumps({"query": ATTACK})
            return AssistantMessage(
                tool_calls=(ToolCall(id="a", name="toolSearchTool", arguments=query),)
            )
        if turn == 1:
            return AssistantMessage(
                tool_calls=(ToolCall(id="b", name="delete_account", arguments="{}"),)
            )
        return AssistantMessage(content="done")

    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    for i in range(attacks):
        prompt = client.prompt("hi").tools(callbacks())
        if conversation is not None:
            prompt = prompt.advisors(lambda a, s=f"{conversation}-{i}": a.param(CONVERSATION_ID, s))
        prompt.call()
    assert memory.requests(DIGEST), "the attack was learned"
    index.index_tools("victim", TOOLS)
    return first_hit(index, ATTACK)


def test_one_request_cannot_put_delete_account_first_for_someone_else():
    # the attack works when the rule is off: the defaults are what stop it
    assert poisoned(LearnedParams(outrank_sessions=1), 1, None) == "delete_account"
    assert poisoned(None, 1, None) == "get_weather"


def test_many_requests_without_a_conversation_id_are_one_contributor():
    assert poisoned(None, 5, None) == "get_weather"
    # three distinct conversations are three contributors: the rule lets them through
    assert poisoned(None, 3, "attacker") == "delete_account"


def test_anonymous_records_count_once_in_the_memory():
    memory = UsageMemory(clock=lambda: T0)
    for i in range(4):
        session = f"ephemeral-{i}"
        memory.record_search(
            LoggedSearch(
                T0 + i, session, DIGEST, "q", "x", "x", 5, (("send_email", 1.0),), 1, anonymous=True
            )
        )
        memory.record_calls(
            LoggedCalls(T0 + i + 1, session, DIGEST, ("send_email",), (True,), anonymous=True)
        )
    (request,) = memory.requests(DIGEST)
    assert request.sessions == (ANONYMOUS,)
    assert LoggedCalls.of("ephemeral-abc", "s#d", ["t"], T0).anonymous
    assert not LoggedCalls.of("user-1", "s#d", ["t"], T0).anonymous
    record = LoggedSearch(T0, "h", DIGEST, "q", "x", "x", 5, (), 0, anonymous=True).to_record()
    assert LoggedSearch.from_record(record).anonymous


# -- damaged memory files (issue 47, item 1) -------------------------------------------


@pytest.mark.parametrize("damage", ["overflow", "deep", "folder", "nan-events", "wrong-types"])
def test_a_damaged_file_gives_one_typed_error_and_searches_go_on_without_it(
    tmp_path, caplog, damage
):
    path = tmp_path / "usage.json"
    good = {"format": "toolsearch-usage-memory", "version": 1}
    if damage == "overflow":
        row = {"text": "x", "sessions": ["a"], "first": 1e999, "last": 0, "event": 1}
        path.write_text(
            json.dumps(
                {**good, "tool_sets": {DIGEST: {"events": 1, "tools": {"get_weather": [row]}}}}
            ).replace("Infinity", "1e999")
        )
    elif damage == "deep":
        path.write_text(
            '{"format": "toolsearch-usage-memory", "version": 1, "tool_sets": '
            + "[" * 100_000
            + "]" * 100_000
            + "}"
        )
    elif damage == "folder":
        path.mkdir()
    elif damage == "nan-events":
        path.write_text(
            json.dumps({**good, "tool_sets": {DIGEST: {"events": float("nan"), "tools": {}}}})
        )
    else:
        path.write_text(
            json.dumps({**good, "tool_sets": {DIGEST: {"events": 1, "tools": {"t": [[1, 2]]}}}})
        )
    memory = UsageMemory(path, autosave_every=1)
    with pytest.raises(UsageMemoryError, match=r"usage\.json"):
        memory.tool_sets()
    reads = []
    original = memory.store.read  # type: ignore[union-attr]
    memory.store.read = lambda *a: reads.append(1) or original(*a)  # type: ignore[union-attr,method-assign]
    index = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(64))
    advisor = ToolSearchToolCallingAdvisor(tool_index=index, search_log=memory, max_results=4)

    def script(messages: list[Any], _tools: list[ToolDefinition]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn == 0:
            query = json.dumps({"query": "weather today"})
            return AssistantMessage(
                tool_calls=(ToolCall(id="a", name="toolSearchTool", arguments=query),)
            )
        if turn == 1:
            found = json.loads(messages[-1].responses[0].response_data)
            assert found, "the search worked without the memory"
            return AssistantMessage(
                tool_calls=(ToolCall(id="b", name="get_weather", arguments="{}"),)
            )
        return AssistantMessage(content="done")

    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        for i in range(3):
            client.prompt("hi").tools(callbacks()).advisors(
                lambda a, s=f"u{i}": a.param(CONVERSATION_ID, s)
            ).call()
    assert reads == []  # never read again
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]
    assert memory.broken is not None
    if damage != "folder":
        assert path.read_text()  # never overwritten


def test_a_damaged_file_is_reported_once(tmp_path, caplog):
    path = tmp_path / "usage.json"
    path.write_text("[" * 100_000)
    memory = UsageMemory(path)
    with caplog.at_level(logging.WARNING):
        for _ in range(5):
            with pytest.raises(UsageMemoryError):
                memory.version(DIGEST)
            assert memory.warm_tools(TOOLS) == []
    assert sum("unreadable" in r.getMessage() for r in caplog.records) == 1


def test_a_failing_autosave_is_not_retried_every_request(tmp_path, caplog):
    target = tmp_path / "ro"
    target.mkdir()
    memory = UsageMemory(target / "sub" / "usage.json", autosave_every=1)
    memory.tool_sets()  # reads (absent: empty)
    (target / "sub").write_text("a file where the folder should be")
    with caplog.at_level(logging.WARNING):
        for i in range(5):
            memory.learn(DIGEST, "send_email", f"mail {i}", session=f"s{i}", time=T0)
    assert sum("autosave failed" in r.getMessage() for r in caplog.records) == 1
    assert len(memory.requests(DIGEST)) == 5  # learning went on in memory


# -- bounds (issue 47, item 2) -----------------------------------------------------------


def test_awaiting_searches_are_bounded_in_characters():
    params = UsageParams(pending_chars=50_000, max_request_chars=2_000)
    memory = UsageMemory(params=params)
    huge = "x" * 1_000_000
    for i in range(200):
        memory.record_search(
            LoggedSearch(T0 + i, f"ephemeral-{i}", DIGEST, huge, "x", "x", 5, (), 0, anonymous=True)
        )
    stats = memory.stats()
    assert stats["pending_chars"] <= 50_000
    assert 0 < stats["pending_searches"] <= 25


def test_a_loaded_file_is_re_bounded_by_the_params(tmp_path):
    path = tmp_path / "usage.json"
    rows = [
        {
            "text": f"request {i}",
            "sessions": [f"s{j}" for j in range(1_000)],
            "first": T0,
            "last": T0 + i,
            "event": i,
        }
        for i in range(500)
    ]
    document = {
        "format": "toolsearch-usage-memory",
        "version": 1,
        "tool_sets": {DIGEST: {"events": 500, "tools": {"send_email": rows}}},
    }
    path.write_text(json.dumps(document))
    memory = UsageMemory(
        path, params=UsageParams(max_per_tool=32, max_contributors=8), clock=lambda: T0 + 600
    )
    requests = memory.requests(DIGEST)
    assert len(requests) == 32
    assert max(r.support for r in requests) == 8
    assert {r.text for r in requests} == {f"request {i}" for i in range(468, 500)}  # the freshest


# -- tenants and text-free memories ----------------------------------------------------------


def test_a_tenant_scopes_learning_in_a_shared_store(tmp_path):
    from toolsearch.indexes.learning.store import InMemoryUsageStore

    store = InMemoryUsageStore()
    acme = UsageMemory(store=store, params=UsageParams(tenant="acme"), clock=lambda: T0)
    other = UsageMemory(store=store, params=UsageParams(tenant="other"), clock=lambda: T0)
    acme.learn(DIGEST, "send_email", "mail the board", session="a", time=T0)
    acme.save()
    other.save()
    assert [r.text for r in other.requests(DIGEST)] == []
    assert [r.text for r in acme.requests(DIGEST)] == ["mail the board"]
    assert [w.name for w in acme.warm_tools(TOOLS)] == ["send_email"]
    assert other.warm_tools(TOOLS) == []


def test_store_text_off_keeps_no_request_text_and_still_ranks(tmp_path):
    path = tmp_path / "usage.json"
    memory = UsageMemory(path, params=UsageParams(store_text=False), clock=lambda: T0)
    index = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(256))
    index.index_tools("victim", TOOLS)
    secret = "wire the quarterly numbers to dana"
    for i in range(3):
        memory.learn(DIGEST, "send_email", secret, session=f"s{i}", time=T0)
    memory.save()
    text = path.read_text()
    for word in ("quarterly", "dana", "wire"):
        assert word not in text
    reloaded = UsageMemory(path, params=UsageParams(store_text=False), clock=lambda: T0)
    again = LearnedToolIndex(Bm25ToolIndex(), memory=reloaded, embedder=HashingEmbedder(256))
    again.index_tools("victim", TOOLS)
    assert first_hit(again, "wire the quarterly numbers to dana") == "send_email"
    assert first_hit(again, "quarterly numbers for dana") == "send_email"


def test_hostile_queries_and_requests_give_no_untyped_exception(tmp_path):
    """A seeded fuzz: odd text learned, saved, loaded and searched, warm."""
    import random

    from toolsearch.errors import ToolsearchError

    rng = random.Random(47)
    pieces = ["\ud800", "\x00", "\u202e", "🙂", "a" * 5_000, " ", "\n\t", "delete", "é", "\uffff"]

    def hostile() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))

    path = tmp_path / "usage.json"
    memory = UsageMemory(path, clock=lambda: T0)
    for i in range(200):
        session = f"s{i % 7}"
        hits = ((rng.choice(TOOLS).name, 1.0),)
        memory.record_search(LoggedSearch(T0 + i, session, DIGEST, hostile(), "i", "t", 5, hits, 1))
        memory.record_calls(LoggedCalls(T0 + i, session, DIGEST, (hits[0][0],), (True,)))
    memory.save()
    loaded = UsageMemory(path, clock=lambda: T0)
    index = LearnedToolIndex(Bm25ToolIndex(), memory=loaded, embedder=HashingEmbedder(64))
    index.index_tools("fuzz", TOOLS)
    for _ in range(300):
        with contextlib.suppress(ToolsearchError):  # typed: a refused query
            index.search(ToolSearchRequest("fuzz", hostile() or "x", 4))
    assert loaded.requests(DIGEST)


# -- the issue-47 fuzz, a seeded slice (benchmarks/fuzz_learned.py runs 10,000 / 1,000) ------


def test_a_tool_named_with_a_lone_surrogate_saves_and_loads_its_learning(tmp_path):
    # the document held the name as is and UTF-8 refused it: save (and the save at exit)
    # raised a bare UnicodeEncodeError
    path = tmp_path / "usage.json"
    tools = [ToolDefinition(name="\ud800x", description="send it", input_schema=SCHEMA), *TOOLS]
    memory = UsageMemory(path, clock=lambda: T0, save_at_exit=False)
    for i in range(3):
        memory.learn(catalog_digest(tools), "\ud800x", "ship the parcel", session=f"s{i}", time=T0)
    memory.save()
    loaded = UsageMemory.load(path, clock=lambda: T0, save_at_exit=False)
    assert [r.tool for r in loaded.requests(catalog_digest(tools))] == ["\ud800x"]
    copy = memory.save(tmp_path / "copy.json")
    assert copy is not None
    assert "\\ud800x" in copy.read_text()
    index = LearnedToolIndex(Bm25ToolIndex(), memory=loaded, embedder=HashingEmbedder(256))
    index.index_tools("victim", tools)
    assert first_hit(index, "ship the parcel") == "\ud800x"


def test_the_seeded_fuzz_slice_of_hostile_tool_sets_and_queries_gives_no_untyped_exception():
    from toolsearch_bench.fuzz_hostile import fuzz_learned

    report = fuzz_learned(40, 10, seed=47)
    assert report.untyped == []
    assert (report.queries, report.tool_sets) == (400, 40)
    assert report.warm > 200  # the searches went through what was learned, not only cold


HOSTILE_TEXT = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=40),  # lone surrogates too
    st.lists(
        st.sampled_from(["\x00", "\u202e", "\u200f", "🙂", ".*", "(a+)+$", "[", "\\", " "])
    ).map("".join),
    st.sampled_from(["", " ", "\n\t\u3000", "x" * 20_000, "\ud800" * 5_000, "((((", "AND OR NOT"]),
)


@settings(max_examples=150, derandomize=True, deadline=None, database=None)
@given(query=HOSTILE_TEXT, name=HOSTILE_TEXT)
def test_search_never_raises_for_any_query_on_a_warm_learned_index(query, name):
    """The documented contract: in a default configuration ``search`` answers any query
    string; a hostile tool name (kept when it is a valid one) changes nothing."""
    tools = list(TOOLS)
    with contextlib.suppress(ToolDefinitionError):
        tools.append(ToolDefinition(name=name, description=query, input_schema=SCHEMA))
    digest = catalog_digest(tools)
    memory = UsageMemory(clock=lambda: T0)
    for i in range(3):
        memory.learn(digest, tools[-1].name, query or "x", session=f"s{i}", time=T0)
        memory.learn(digest, "send_email", "mail the board", session=f"s{i}", time=T0)
    index = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(64))
    index.index_tools("fuzz", tools)
    response = index.search(ToolSearchRequest("fuzz", query, 4))
    assert len(response.tool_references) <= 4
