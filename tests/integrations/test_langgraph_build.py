"""Building the LangGraph door walks no tool schema: the retriever converts its tools at the
first search and ``create_agent`` builds its ``ToolNode`` at the first tool call, both on a
worker thread in the async graph, so a door built on an event loop does not hold it for
300 tools' pydantic schema work (structural: which thread did the work, no clock)."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain_core", reason="toolsearch[langgraph] is not installed")
pytest.importorskip("langgraph", reason="toolsearch[langgraph] is not installed")

import langgraph.prebuilt
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langchain_core.utils import function_calling

from tests.integrations.test_langgraph import TOOLS, call, fake
from toolsearch.integrations.langgraph import ToolSearchToolRetriever, create_agent


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The threads that converted a tool's schema and built a ToolNode."""
    done: dict[str, list[str]] = {"converted": [], "tool node": []}
    convert = function_calling.convert_to_openai_tool

    def converting(*args: Any, **kwargs: Any) -> Any:
        done["converted"].append(threading.current_thread().name)
        return convert(*args, **kwargs)

    class RecordedToolNode(langgraph.prebuilt.ToolNode):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            done["tool node"].append(threading.current_thread().name)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(function_calling, "convert_to_openai_tool", converting)
    monkeypatch.setattr(langgraph.prebuilt, "ToolNode", RecordedToolNode)
    return done


def test_building_the_door_walks_no_tool_schema(work: dict[str, list[str]]) -> None:
    async def build() -> Any:
        retriever = ToolSearchToolRetriever(TOOLS, limit=1)
        return create_agent(fake(AIMessage("hi")), retriever).compile()

    asyncio.run(build())
    assert work == {"converted": [], "tool node": []}


def test_the_async_graph_does_that_work_off_the_event_loop(work: dict[str, list[str]]) -> None:
    loop_thread = threading.current_thread().name
    retriever = ToolSearchToolRetriever(TOOLS, limit=1)
    llm = fake(
        call("retrieve_tools", {"query": "weather forecast"}, "c1"),
        call("get_weather", {"city": "Paris"}, "c2"),
        AIMessage("sunny"),
    )
    agent = create_agent(llm, retriever).compile()
    out = asyncio.run(agent.ainvoke({"messages": [("user", "weather?")]}))

    assert "sunny in Paris" in [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(work["converted"]) == len(TOOLS)  # once each, at the first search
    assert len(work["tool node"]) == 1  # once, at the first tool call
    assert loop_thread not in work["converted"] + work["tool node"]


def test_the_tool_node_built_later_still_injects_the_call(work: dict[str, list[str]]) -> None:
    @tool
    def get_forecast(city: str, call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Get the weather forecast for a city."""
        return f"{city} for call {call_id}"

    retriever = ToolSearchToolRetriever([get_forecast], limit=1)
    llm = fake(
        call("retrieve_tools", {"query": "weather forecast"}, "c1"),
        call("get_forecast", {"city": "Oslo"}, "c2"),
        AIMessage("done"),
    )
    graph = create_agent(llm, retriever).compile()
    out = asyncio.run(graph.ainvoke({"messages": [("user", "weather?")]}))
    contents = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "Oslo for call c2" in contents  # the ToolNode injected the call's id
