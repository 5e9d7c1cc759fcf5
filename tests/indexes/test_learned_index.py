"""``LearnedToolIndex``: cold it answers exactly as its inner index; warm, the requests that
led to a tool lift it (a nearest-neighbour vote and a BM25 field), within the session
layer's rules (categories, exclusions, exact names). Offline: the hashing embedder."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolDefinition,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import (
    Bm25ToolIndex,
    HashingEmbedder,
    HybridToolIndex,
    VectorToolIndex,
)
from toolsearch.indexes.learning.learned import (
    LearnedParams,
    LearnedToolIndex,
    fuse_learned,
    inner_embedder,
)
from toolsearch.indexes.learning.memory import UsageMemory, UsageParams, catalog_digest
from toolsearch.models import FunctionChatModel
from toolsearch.search import ToolSearchRequest, ToolSearchResponse
from toolsearch.testing import CATALOG, ToolIndexContract

# search mechanics on a few tools: the plain search loop (tests/conftest.py, cold_search)
pytestmark = pytest.mark.cold_search

T0 = 1_700_000_000.0
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    ToolDefinition(name=name, description=text, input_schema=SCHEMA, category=category)
    for name, text, category in [
        ("get_forecast", "Get the weather forecast for a city", "weather"),
        ("get_alerts", "List severe weather alerts for a region", "weather"),
        ("send_email", "Send an email to a recipient", "mail"),
        ("create_invoice", "Create an invoice for a customer", "billing"),
        ("refund_payment", "Refund a card payment", "billing"),
        ("book_flight", "Book a flight between two airports", "travel"),
    ]
]
DIGEST = catalog_digest(TOOLS)
QUERIES = ["weather", "will it rain tomorrow", "money back please", "send_email", "x", "fly"]


def teach(memory: UsageMemory, tool: str, query: str, at: float = T0, sessions: int = 3) -> None:
    """``query`` led to ``tool`` in ``sessions`` distinct sessions (enough, by default, for
    a learned tool to outrank the inner index's top hit)."""
    for i in range(sessions):
        assert memory.learn(DIGEST, tool, query, session=f"s{i}", time=at)


def hashing() -> HashingEmbedder:
    return HashingEmbedder(256)


def names(response: ToolSearchResponse) -> list[str]:
    return [ref.tool_name for ref in response.tool_references]


def ask(index: Any, query: str, **kwargs: Any) -> ToolSearchResponse:
    return index.search(ToolSearchRequest("s", query, kwargs.pop("max_results", 6), **kwargs))


def indexed(index: Any) -> Any:
    index.index_tools("s", TOOLS)
    return index


@pytest.fixture(params=["vector", "hybrid", "bm25"])
def inner(request: pytest.FixtureRequest) -> Any:
    if request.param == "vector":
        return VectorToolIndex(embedder=hashing())
    if request.param == "hybrid":
        return HybridToolIndex(embedder=hashing())
    return Bm25ToolIndex()


def test_cold_it_returns_exactly_the_inner_ranking(inner):
    memory = UsageMemory(clock=lambda: T0)
    memory.learn("another tool set", "refund_payment", "money back please", session="a", time=T0)
    learned = indexed(LearnedToolIndex(inner, memory=memory, embedder=hashing()))
    indexed(inner)
    for query in QUERIES:
        for kwargs in ({}, {"category": "billing"}, {"exclude": frozenset({"get_alerts"})}):
            mine, theirs = ask(learned, query, **kwargs), ask(inner, query, **kwargs)
            assert mine.tool_references == theirs.tool_references, query
            assert mine.total_matches == theirs.total_matches
    assert ask(learned, "weather").metadata.search_type == f"{inner.search_type}+learned"


def test_warm_a_logged_request_lifts_the_tool_it_led_to(inner):
    memory = UsageMemory(clock=lambda: T0 + 60)
    learned = indexed(LearnedToolIndex(inner, memory=memory, embedder=hashing()))
    indexed(inner)
    query = "money back please"
    assert names(ask(inner, query))[:1] != ["refund_payment"]
    teach(memory, "refund_payment", query)
    assert names(ask(learned, query))[0] == "refund_payment"
    # a nearby wording is lifted too; an unrelated query keeps the inner order
    assert names(ask(learned, "please give my money back"))[0] == "refund_payment"
    assert names(ask(learned, "severe weather alerts")) == names(
        ask(inner, "severe weather alerts")
    )


@pytest.mark.parametrize("side", ["vote", "bm25"])
def test_each_learned_ranking_lifts_on_its_own(side):
    memory = UsageMemory(clock=lambda: T0)
    teach(memory, "book_flight", "get me to lisbon on friday")
    weights = {"vote_weight": 0.0} if side == "bm25" else {"bm25_weight": 0.0, "vote_weight": 4.0}
    learned = indexed(
        LearnedToolIndex(VectorToolIndex(embedder=hashing()), memory=memory, **weights)
    )
    assert names(ask(learned, "get me to lisbon"))[0] == "book_flight"


def test_a_decayed_request_lifts_less_than_a_fresh_one():
    clock = [T0]
    memory = UsageMemory(clock=lambda: clock[0], params=UsageParams(half_life_days=1.0))
    params = LearnedParams(vote_weight=0.0, refresh_seconds=0)
    learned = indexed(
        LearnedToolIndex(Bm25ToolIndex(), memory=memory, params=params, embedder=hashing())
    )
    memory.learn(DIGEST, "refund_payment", "money back please", session="a", time=T0)
    fresh = ask(learned, "money back please").tool_references[0]
    clock[0] = T0 + 30 * 86_400.0  # thirty half-lives later
    stale = ask(learned, "money back please").tool_references
    assert fresh.tool_name == "refund_payment"
    assert stale == ask(indexed(Bm25ToolIndex()), "money back please").tool_references


def test_fusion_scales_a_learned_hit_by_how_far_it_clears_its_floor():
    inner = [(0, 0.9), (1, 0.8), (2, 0.7)]
    params = LearnedParams(rrf_k=5.0, inner_weight=1.0)
    strong = fuse_learned(inner, [([(2, 1.0)], 1.0, 0.5)], params)
    weak = fuse_learned(inner, [([(2, 0.6)], 1.0, 0.5)], params)
    assert [p for p, _ in strong] == [2, 0, 1]  # 1/8 + 1/6 beats 1/6
    assert [p for p, _ in weak] == [0, 2, 1]  # 1/8 + 0.1/6 does not
    assert weak[1][1] == pytest.approx(1 / 8 + 0.2 / 6)
    plain = fuse_learned(inner, [([(2, 0.6)], 1.0, 0.5)], LearnedParams(confidence=False))
    assert [p for p, _ in plain] == [2, 0, 1]  # rank only: the score is ignored


def test_categories_exclusions_and_exact_names_still_rule_when_warm():
    memory = UsageMemory(clock=lambda: T0)
    memory.learn(DIGEST, "refund_payment", "money back please", session="a", time=T0)
    learned = indexed(LearnedToolIndex(VectorToolIndex(embedder=hashing()), memory=memory))
    assert "refund_payment" not in names(ask(learned, "money back please", category="weather"))
    excluded = ask(learned, "money back please", exclude=frozenset({"refund_payment"}))
    assert "refund_payment" not in names(excluded)
    assert names(ask(learned, "send_email"))[0] == "send_email"
    assert (
        names(ask(learned, "money back please", max_results=2))
        == names(ask(learned, "money back please"))[:2]
    )


def test_the_view_follows_the_memory_and_the_clock():
    clock = [T0]
    memory = UsageMemory(clock=lambda: clock[0])
    params = LearnedParams(refresh_seconds=3600, vote_min_cosine=0.3)
    learned = indexed(
        LearnedToolIndex(VectorToolIndex(embedder=hashing()), memory=memory, params=params)
    )
    cold = names(ask(learned, "money back please"))
    teach(memory, "refund_payment", "money back please")
    assert names(ask(learned, "money back please"))[0] == "refund_payment"  # a change: now
    memory.clear()
    assert names(ask(learned, "money back please")) == cold
    assert learned.params.refresh_seconds == 3600
    assert learned.memory is memory


def test_an_unreadable_memory_leaves_the_index_cold_with_a_warning(tmp_path, caplog):
    path = tmp_path / "usage.json"
    path.write_text("{torn", encoding="utf-8")
    inner = indexed(VectorToolIndex(embedder=hashing()))
    learned = indexed(LearnedToolIndex(inner, memory=UsageMemory(path)))
    with caplog.at_level(logging.WARNING, logger="toolsearch.indexes.learning.learned"):
        assert ask(learned, "weather").tool_references == ask(inner, "weather").tool_references
        ask(learned, "weather")
    assert sum("usage memory unreadable" in r.getMessage() for r in caplog.records) == 1


def test_the_vote_uses_the_inner_embedder_else_the_one_named():
    vector = VectorToolIndex(embedder=hashing())
    assert inner_embedder(vector) is vector.embedder
    hybrid = HybridToolIndex(embedder=hashing())
    assert inner_embedder(hybrid) is hybrid.vector.embedder
    assert inner_embedder(Bm25ToolIndex()) is None
    assert LearnedToolIndex(vector, memory=UsageMemory()).ranker.embedder is vector.embedder
    named = LearnedToolIndex(Bm25ToolIndex(), memory=UsageMemory(), embedder="hashing-64")
    assert named.ranker.embedder.name == "hashing-64"  # loaded on first use
    with pytest.raises(TypeError, match="UsageMemory"):
        LearnedToolIndex(vector, memory=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="weights"):
        LearnedParams(inner_weight=0, vote_weight=0, bm25_weight=0)


def test_learning_live_through_the_advisor_helps_the_next_session():
    """Session 1 searches in its own words and calls the tool; session 2's same words
    find it first."""
    # the advisor stamps records with the wall clock: no time decay here
    memory = UsageMemory(clock=lambda: T0, params=UsageParams(half_life_days=None))
    index = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=hashing())
    advisor = ToolSearchToolCallingAdvisor(tool_index=index, search_log=memory, max_results=2)
    callbacks = [
        FunctionToolCallback.from_schema(
            lambda _, n=t.name: f"{n} ok",
            name=t.name,
            description=t.description,
            input_schema=SCHEMA,
        )
        for t in TOOLS
    ]
    seen: list[list[str]] = []

    def script(messages: list[Any], _tools: list[ToolDefinition]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn == 0:
            query = json.dumps({"query": "payment for the customer invoice"})
            return AssistantMessage(
                tool_calls=(ToolCall(id="a", name="toolSearchTool", arguments=query),)
            )
        if turn == 1:
            found = json.loads(messages[-1].responses[0].response_data)
            seen.append([f if isinstance(f, str) else f["name"] for f in found])
            return AssistantMessage(
                tool_calls=(ToolCall(id="b", name="refund_payment", arguments="{}"),)
            )
        return AssistantMessage(content="done")

    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    for session in ("user-1", "user-2", "user-3", "user-4"):
        # the user asks in the words the model searches with (the log carries the request)
        client.prompt("payment for the customer invoice").tools(callbacks).advisors(
            lambda a, s=session: a.param(CONVERSATION_ID, s)
        ).call()
    assert seen[0] == ["create_invoice", "refund_payment"]  # BM25 alone
    # one or two sessions' learning does not outrank the inner top hit; three do
    assert seen[1] == seen[2] == ["create_invoice", "refund_payment"]
    assert seen[3][0] == "refund_payment"  # what sessions 1-3 called successfully
    digest = catalog_digest(cb.definition for cb in callbacks)
    assert [r.text for r in memory.requests(digest)] == ["payment for the customer invoice"]


class TestWarmLearnedBm25(ToolIndexContract):
    """The whole index contract, warm: requests learned for the contract's catalog."""

    search_type = "bm25+learned"

    @pytest.fixture(autouse=True)
    def _memory(self) -> None:
        memory = UsageMemory(clock=lambda: T0)
        digest = catalog_digest(CATALOG)
        for i, (tool, request) in enumerate(
            [
                ("send_email", "mail my landlord about the rent"),
                ("stripe.createRefund", "give the customer their money back"),
                ("getWeatherForecast", "do I need an umbrella"),
            ]
        ):
            memory.learn(digest, tool, request, session=f"s{i}", time=T0)
        self.memory = memory

    def make_index(self) -> LearnedToolIndex:
        return LearnedToolIndex(Bm25ToolIndex(), memory=self.memory, embedder=hashing())
