"""The OpenAI Agents SDK integration, offline, with the SDK's own ScriptedModel."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents", reason="toolsearch[openai-agents] is not installed")

from agents import Agent, FunctionTool, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from toolsearch.indexes import RegexToolIndex
from toolsearch.integrations.openai_agents import (
    DEFAULT_SESSION_ID,
    ToolsearchAgentTools,
    default_session_id,
)
from toolsearch.search import InMemorySessionStore, SessionRegistry

set_tracing_disabled(True)


@function_tool
def get_weather(city: str) -> str:
    """Get the weather forecast for a city."""
    return f"sunny in {city}"


@function_tool
def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return f"sent to {to}"


def create_issue(title: str) -> str:
    """Create a GitHub issue in a repository."""
    return "#1"


def search(query: str, call_id: str = "s1", max_results: int | None = None):
    return [
        function_call("search_tools", {"query": query, "maxResults": max_results}, call_id=call_id)
    ]


def offered(model: ScriptedModel) -> list[list[str]]:
    return [sorted(t.name for t in c.tools) for c in model.calls]


def test_a_found_tool_is_enabled_on_the_next_turn_and_runs() -> None:
    tools = ToolsearchAgentTools([get_weather, send_email, create_issue], max_results=1)
    model = ScriptedModel(
        [
            search("weather forecast"),
            [function_call("get_weather", {"city": "Paris"}, call_id="c2")],
            [assistant_message("sunny")],
        ]
    )
    agent = Agent(name="a", model=model, tools=tools.tools)
    result = Runner.run_sync(agent, "weather in Paris?", context={"session_id": "c-1"})

    assert result.final_output == "sunny"
    assert offered(model) == [
        ["search_tools"],
        ["get_weather", "search_tools"],
        ["get_weather", "search_tools"],
    ]
    outputs = [
        i.output for i in result.new_items if getattr(i, "type", "") == "tool_call_output_item"
    ]
    assert outputs == [json.dumps(["get_weather"]), "sunny in Paris"]
    assert tools.discovered("c-1") == ["get_weather"]


def test_discoveries_are_per_session_and_outlive_the_run() -> None:
    tools = ToolsearchAgentTools([get_weather, send_email, create_issue], max_results=1)
    first = ScriptedModel([search("send an email"), [assistant_message("ok")]])
    Runner.run_sync(Agent(name="a", model=first, tools=tools.tools), "mail", context="conv-a")

    again = ScriptedModel([[assistant_message("still here")]])
    Runner.run_sync(Agent(name="a", model=again, tools=tools.tools), "hi", context="conv-a")
    other = ScriptedModel([[assistant_message("fresh")]])
    Runner.run_sync(Agent(name="a", model=other, tools=tools.tools), "hi", context="conv-b")

    assert offered(again) == [["search_tools", "send_email"]]
    assert offered(other) == [["search_tools"]]


def test_workers_sharing_a_store_see_each_others_discoveries() -> None:
    store = InMemorySessionStore()  # a RedisSessionStore in production
    worker_a = ToolsearchAgentTools([get_weather, send_email], store=store)
    worker_b = ToolsearchAgentTools([get_weather, send_email], store=store)
    model = ScriptedModel([search("weather"), [assistant_message("ok")]])
    Runner.run_sync(Agent(name="a", model=model, tools=worker_a.tools), "x", context="shared")

    later = ScriptedModel([[assistant_message("ok")]])
    Runner.run_sync(Agent(name="a", model=later, tools=worker_b.tools), "y", context="shared")

    assert offered(later) == [["get_weather", "search_tools"]]


def test_pinned_tools_and_a_tools_own_gate() -> None:
    gated = FunctionTool(
        name="admin_reset",
        description="Reset the admin password",
        params_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
        on_invoke_tool=lambda ctx, args: None,  # type: ignore[arg-type, return-value]
        is_enabled=lambda ctx, agent: False,
    )
    tools = ToolsearchAgentTools([get_weather, gated], pinned=["get_weather"])
    model = ScriptedModel([search("reset admin password"), [assistant_message("ok")]])
    Runner.run_sync(Agent(name="a", model=model, tools=tools.tools), "reset")

    assert offered(model) == [["get_weather", "search_tools"]] * 2  # admin_reset stays off
    assert tools.discovered(DEFAULT_SESSION_ID) == ["admin_reset"]


def test_a_bad_query_is_an_error_the_model_reads() -> None:
    tools = ToolsearchAgentTools([get_weather], index=RegexToolIndex())
    model = ScriptedModel([search("  "), [assistant_message("sorry")]])
    result = Runner.run_sync(Agent(name="a", model=model, tools=tools.tools), "x")

    outputs = [
        i.output for i in result.new_items if getattr(i, "type", "") == "tool_call_output_item"
    ]
    assert outputs[0].startswith("Error: query")


def test_the_session_of_a_run_context() -> None:
    class Ctx:
        def __init__(self, context: object) -> None:
            self.context = context

    class Conversation:
        session_id = "obj-1"

    assert default_session_id(Ctx("s-1")) == "s-1"  # type: ignore[arg-type]
    assert default_session_id(Ctx({"session_id": 7})) == "7"  # type: ignore[arg-type]
    assert default_session_id(Ctx(Conversation())) == "obj-1"  # type: ignore[arg-type]
    assert default_session_id(Ctx(None)) == DEFAULT_SESSION_ID  # type: ignore[arg-type]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_results"):
        ToolsearchAgentTools([get_weather], max_results=11)
    with pytest.raises(ValueError, match="pinned"):
        ToolsearchAgentTools([get_weather], pinned=["nope"])
    with pytest.raises(ValueError, match="search tool's name"):
        ToolsearchAgentTools([get_weather], search_tool_name="get_weather")
    with pytest.raises(TypeError):
        ToolsearchAgentTools(
            [get_weather], index="bm25", registry=SessionRegistry(RegexToolIndex())
        )
