"""The LangGraph / LangChain integration against the real packages, with LangChain's fake
chat model (no network)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="toolsearch[langgraph] is not installed")
pytest.importorskip("langgraph", reason="toolsearch[langgraph] is not installed")

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from toolsearch.integrations.langgraph import ToolSearchToolRetriever, create_agent


@tool
def get_weather(city: str) -> str:
    """Get the weather forecast for a city."""
    return f"sunny in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return f"sent to {to}"


@tool
def create_issue(title: str) -> str:
    """Create a GitHub issue in a repository."""
    return "#1"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money to another currency."""
    return f"{amount} {to}"


TOOLS = [get_weather, send_email, create_issue]


class ToolCallingFakeModel(GenericFakeChatModel):
    """LangChain's GenericFakeChatModel, recording the tools each turn binds."""

    bound: list[list[str]] = []  # noqa: RUF012 - a pydantic field, copied per instance

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bound.append([getattr(t, "name", getattr(t, "__name__", "?")) for t in tools])
        return self


def fake(*replies: AIMessage) -> ToolCallingFakeModel:
    return ToolCallingFakeModel(messages=iter(replies), bound=[])


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_the_retriever_answers_ids_tools_documents_and_a_search_tool() -> None:
    retriever = ToolSearchToolRetriever(TOOLS, limit=1)

    assert retriever.search("weather forecast") == ["get_weather"]
    assert retriever.search_tools("send an email") == [send_email]
    assert retriever.search("github", limit=3)[0] == "create_issue"
    documents = retriever.as_retriever().invoke("email")
    assert documents == [
        Document(
            page_content="Send an email message to a recipient.",
            metadata={"id": "send_email", "name": "send_email"},
        )
    ]
    assert asyncio.run(retriever.as_retriever(limit=2).ainvoke("issue"))[0].metadata["id"] == (
        "create_issue"
    )
    search = retriever.as_tool()
    assert isinstance(search, BaseTool)
    assert json.loads(search.invoke({"query": "weather"})) == ["get_weather"]


def test_a_bigtool_registry_with_ids_and_plain_functions() -> None:
    registry = {"tool-1": get_weather, "tool-2": convert_currency, "tool-3": send_email}
    retriever = ToolSearchToolRetriever(registry, limit=2)

    assert retriever.search("convert money to euros")[0] == "tool-2"
    assert retriever.tool_registry == registry
    assert asyncio.run(retriever.retrieve_tools_coroutine()("weather")) == ["tool-1"]


def test_the_tools_are_indexed_once_at_the_first_search() -> None:
    retriever = ToolSearchToolRetriever(TOOLS)
    assert retriever.registry.get(retriever.session_id) is None  # nothing done yet
    for query in ("weather", "email", "issue"):
        retriever.search(query)

    state = retriever.registry.get(retriever.session_id)
    assert state is not None
    assert state.index_count == 1


def test_retrieve_tools_in_langgraph_bigtools_own_agent() -> None:
    from langgraph_bigtool import create_agent as bigtool_create_agent

    retriever = ToolSearchToolRetriever(TOOLS, limit=1)
    llm = fake(call("retrieve_tools", {"query": "weather forecast"}, "c1"), AIMessage("ok"))
    agent = bigtool_create_agent(llm, **retriever.bigtool_kwargs()).compile()
    out = agent.invoke({"messages": [("user", "weather in Paris?")]})

    assert out["selected_tool_ids"] == ["get_weather"]
    assert llm.bound == [["retrieve_tools"], ["retrieve_tools", "get_weather"]]
    assert out["messages"][-1].content == "ok"


def test_create_agent_runs_retrieved_tools() -> None:
    retriever = ToolSearchToolRetriever(TOOLS, limit=1)
    llm = fake(
        call("retrieve_tools", {"query": "weather forecast"}, "c1"),
        call("get_weather", {"city": "Paris"}, "c2"),
        AIMessage("sunny"),
    )
    out = create_agent(llm, retriever).compile().invoke({"messages": [("user", "weather?")]})

    tool_messages = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tool_messages == ["Available tools: ['get_weather']", "sunny in Paris"]
    assert out["selected_tool_ids"] == ["get_weather"]
    assert llm.bound[1] == ["retrieve_tools", "get_weather"]


def test_create_agent_async_accumulates_retrieved_tools() -> None:
    retriever = ToolSearchToolRetriever(TOOLS, limit=1)
    llm = fake(
        call("retrieve_tools", {"query": "weather"}, "c1"),
        call("retrieve_tools", {"query": "send email"}, "c2"),
        call("send_email", {"to": "bob", "body": "hi"}, "c3"),
        AIMessage("done"),
    )
    agent = create_agent(llm, retriever).compile()
    out = asyncio.run(agent.ainvoke({"messages": [("user", "weather, then mail bob")]}))

    assert out["selected_tool_ids"] == ["get_weather", "send_email"]
    assert llm.bound[-1] == ["retrieve_tools", "get_weather", "send_email"]
    assert "sent to bob" in [m.content for m in out["messages"] if isinstance(m, ToolMessage)]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        ToolSearchToolRetriever(TOOLS, limit=0)
    with pytest.raises(ValueError, match="two tools"):
        ToolSearchToolRetriever([get_weather, get_weather])
