"""The pydantic-ai integration against the real pydantic-ai (FunctionModel, TestModel)."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai", reason="toolsearch[pydantic-ai] is not installed")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ToolSearch
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolSearchReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.toolsets import FunctionToolset

from toolsearch.indexes import RegexToolIndex
from toolsearch.integrations.pydantic_ai import (
    SEARCH_TOOL_NAME,
    ToolSearchStrategy,
    toolsearch_tool_search,
)
from toolsearch.search import InMemorySessionStore, SessionRegistry


def get_weather(city: str) -> str:
    """Get the weather forecast for a city."""
    return f"sunny in {city}"


def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return f"sent to {to}"


def create_issue(title: str) -> str:
    """Create a GitHub issue in a repository."""
    return "#1"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money to another currency."""
    return f"{amount} {to}"


TOOLS = [get_weather, send_email, create_issue, convert_currency]


class Script:
    """A FunctionModel script: search each query in turn, call the first tool found, answer."""

    def __init__(self, *queries: str, call: dict[str, dict] | None = None) -> None:
        self.queries = list(queries)
        self.call = call or {}
        self.offered: list[list[str]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.offered.append(sorted(t.name for t in info.function_tools))
        last = messages[-1]
        found = [
            m["name"]
            for p in (last.parts if isinstance(last, ModelRequest) else [])
            if isinstance(p, ToolSearchReturnPart)
            for m in p.discovered_tools
        ]
        if self.queries:
            return ModelResponse(
                parts=[ToolCallPart(SEARCH_TOOL_NAME, {"queries": [self.queries.pop(0)]})]
            )
        if found and found[0] in self.call:
            return ModelResponse(parts=[ToolCallPart(found[0], self.call[found[0]])])
        return ModelResponse(parts=[TextPart("done")])


def agent_with(capability, script: Script) -> Agent:
    return Agent(
        FunctionModel(script),
        toolsets=[FunctionToolset(TOOLS).defer_loading()],
        capabilities=[capability],
    )


def search_returns(messages: list[ModelMessage]) -> list[list[str]]:
    return [
        [m["name"] for m in part.discovered_tools]
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolSearchReturnPart)
    ]


def test_the_strategy_finds_a_tool_the_model_then_calls() -> None:
    script = Script("weather forecast", call={"get_weather": {"city": "Paris"}})
    capability = toolsearch_tool_search("bm25", max_results=2)
    result = agent_with(capability, script).run_sync("What's the weather in Paris?")

    assert result.output == "done"
    assert search_returns(result.all_messages())[0][0] == "get_weather"
    assert script.offered[0] == [SEARCH_TOOL_NAME]  # deferred tools are hidden at first
    assert "get_weather" in script.offered[1]  # ... and visible once found
    assert "sunny in Paris" in str(result.all_messages()[-2])


def test_an_agents_tool_set_is_indexed_once_per_session_across_runs() -> None:
    strategy = ToolSearchStrategy("bm25", session_id="tenant-1")
    capability = toolsearch_tool_search(strategy)
    for _ in range(3):
        agent_with(capability, Script("send email")).run_sync("mail bob")

    state = strategy.registry.get("tenant-1")
    assert state is not None
    assert state.index_count == 1
    assert len(strategy.registry.index_keys()) == 1


def test_unrelated_runs_search_in_conversations_of_their_own() -> None:
    capability = toolsearch_tool_search("bm25")
    strategy = capability.strategy
    assert isinstance(strategy, ToolSearchStrategy)
    conversations = []
    for _ in range(3):
        result = agent_with(capability, Script("send email")).run_sync("mail bob")
        conversations.append(result.conversation_id)
    assert len(set(conversations)) == 3
    assert sorted(strategy.registry.session_ids()) == sorted(conversations)


def test_tools_discovered_earlier_in_the_run_are_not_returned_again() -> None:
    script = Script("email", "email")
    result = agent_with(toolsearch_tool_search("bm25"), script).run_sync("mail")

    first, second = search_returns(result.all_messages())
    assert first[0] == "send_email"
    assert "send_email" not in second


def test_an_exact_tool_name_finds_a_discovered_tool_again() -> None:
    script = Script("send_email", "send_email")
    result = agent_with(toolsearch_tool_search("bm25"), script).run_sync("mail")

    assert [found[0] for found in search_returns(result.all_messages())] == ["send_email"] * 2


def test_a_strategy_object_goes_straight_into_tool_search() -> None:
    strategy = ToolSearchStrategy(RegexToolIndex(), max_results=1)
    capability = ToolSearch(strategy=strategy)
    result = agent_with(capability, Script("currency")).run_sync("convert 3 EUR")

    assert search_returns(result.all_messages()) == [["convert_currency"]]
    assert toolsearch_tool_search(strategy).strategy is strategy
    with pytest.raises(TypeError):
        toolsearch_tool_search(strategy, session_id="x")


def test_sessions_from_the_run_context_and_a_shared_store() -> None:
    store = InMemorySessionStore()
    registry = SessionRegistry(RegexToolIndex(), store=store)
    strategy = ToolSearchStrategy(registry=registry, session_id=lambda ctx: f"tenant-{ctx.deps}")
    agent = Agent(
        FunctionModel(Script("issue")),
        deps_type=str,
        toolsets=[FunctionToolset(TOOLS).defer_loading()],
        capabilities=[ToolSearch(strategy=strategy)],
    )
    agent.run_sync("file a bug", deps="acme")

    assert "tenant-acme" in store.session_ids()
    assert strategy.index is registry.index


def test_queries_are_searched_one_by_one_and_interleaved() -> None:
    strategy = ToolSearchStrategy("bm25", max_results=2)

    def two_queries(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart(SEARCH_TOOL_NAME, {"queries": ["weather", "github issue"]})]
            )
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(
        FunctionModel(two_queries),
        toolsets=[FunctionToolset(TOOLS).defer_loading()],
        capabilities=[ToolSearch(strategy=strategy)],
    )
    result = agent.run_sync("two things")

    assert search_returns(result.all_messages()) == [["get_weather", "create_issue"]]


def test_test_model_runs_an_agent_with_the_strategy() -> None:
    agent = Agent(
        TestModel(),
        toolsets=[FunctionToolset(TOOLS).defer_loading()],
        capabilities=[toolsearch_tool_search("bm25")],
    )
    result = agent.run_sync("anything")

    assert result.output  # TestModel called search_tools with generated queries and finished


def test_a_tool_named_search_tools_clashes_with_any_deferred_tool() -> None:
    def search_tools(query: str) -> str:
        """A tool named like pydantic-ai's reserved search tool (the MCP proxy's default)."""
        return "[]"

    agent = Agent(
        TestModel(),
        toolsets=[FunctionToolset([search_tools]), FunctionToolset(TOOLS).defer_loading()],
        capabilities=[toolsearch_tool_search("bm25")],
    )
    with pytest.raises(UserError, match="reserved"):
        agent.run_sync("anything")


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_results"):
        ToolSearchStrategy(max_results=0)
    with pytest.raises(TypeError):
        ToolSearchStrategy("bm25", registry=SessionRegistry(RegexToolIndex()))


def test_a_prefixed_search_tools_no_longer_clashes() -> None:
    def search_tools(query: str) -> str:
        """A tool named like pydantic-ai's reserved search tool, behind a prefix."""
        return "[]"

    agent = Agent(
        FunctionModel(Script("weather")),
        toolsets=[
            FunctionToolset([search_tools]).prefixed("proxy"),
            FunctionToolset(TOOLS).defer_loading(),
        ],
        capabilities=[toolsearch_tool_search("bm25")],
    )
    result = agent.run_sync("weather?")

    assert search_returns(result.all_messages())[0][0] == "get_weather"


def test_the_strategy_reads_the_own_name_the_toolset_writes():
    from toolsearch.integrations import _pydantic_ai_toolset, pydantic_ai

    assert pydantic_ai.own_name is _pydantic_ai_toolset.own_name
