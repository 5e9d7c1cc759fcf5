"""The OpenAI Agents SDK integration, offline, with the SDK's own ScriptedModel."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("agents", reason="toolsearch[openai-agents] is not installed")

from agents import (
    Agent,
    FunctionTool,
    Runner,
    SQLiteSession,
    function_tool,
    set_tracing_disabled,
)
from agents.testing import ScriptedModel, assistant_message, function_call

from toolsearch.indexes import RegexToolIndex
from toolsearch.integrations.openai_agents import ToolSearchAgentTools, context_session_id
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
    tools = ToolSearchAgentTools([get_weather, send_email, create_issue], max_results=1)
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
    tools = ToolSearchAgentTools([get_weather, send_email, create_issue], max_results=1)
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
    worker_a = ToolSearchAgentTools([get_weather, send_email], store=store)
    worker_b = ToolSearchAgentTools([get_weather, send_email], store=store)
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
    tools = ToolSearchAgentTools([get_weather, gated], pinned=["get_weather"])
    model = ScriptedModel([search("reset admin password"), [assistant_message("ok")]])
    Runner.run_sync(Agent(name="a", model=model, tools=tools.tools), "reset", context="s-9")

    assert offered(model) == [["get_weather", "search_tools"]] * 2  # admin_reset stays off
    assert tools.discovered("s-9") == ["admin_reset"]


def test_a_bad_query_is_an_error_the_model_reads() -> None:
    tools = ToolSearchAgentTools([get_weather], index=RegexToolIndex())
    model = ScriptedModel([search("  "), [assistant_message("sorry")]])
    result = Runner.run_sync(Agent(name="a", model=model, tools=tools.tools), "x")

    outputs = [
        i.output for i in result.new_items if getattr(i, "type", "") == "tool_call_output_item"
    ]
    assert outputs[0].startswith("Error: invalid arguments for tool 'search_tools': query")


def test_the_session_of_a_run_context() -> None:
    class Ctx:
        def __init__(self, context: object) -> None:
            self.context = context

    class Conversation:
        session_id = "obj-1"

    assert context_session_id(Ctx("s-1")) == "s-1"  # type: ignore[arg-type]
    assert context_session_id(Ctx({"session_id": 7})) == "7"  # type: ignore[arg-type]
    assert context_session_id(Ctx(Conversation())) == "obj-1"  # type: ignore[arg-type]
    assert context_session_id(Ctx(None)) is None  # type: ignore[arg-type]


def test_runs_without_a_session_never_share_discoveries() -> None:
    tools = ToolSearchAgentTools([get_weather, send_email, create_issue], max_results=1)
    first = ScriptedModel([search("weather forecast"), [assistant_message("ok")]])
    Runner.run_sync(Agent(name="a", model=first, tools=tools.tools), "weather")
    other = ScriptedModel([[assistant_message("fresh")]])
    Runner.run_sync(Agent(name="a", model=other, tools=tools.tools), "hi")

    assert offered(first)[1] == ["get_weather", "search_tools"]
    assert offered(other) == [["search_tools"]]  # a throwaway session of its own
    assert tools.registry.session_ids() == []  # both dropped with their runs


def test_the_sdks_own_session_is_honoured() -> None:
    tools = ToolSearchAgentTools([get_weather, send_email, create_issue], max_results=1)
    first = ScriptedModel([search("send an email"), [assistant_message("ok")]])
    tools.run_sync(Agent(name="a", model=first, tools=tools.tools), "m", session=SQLiteSession("A"))
    same = ScriptedModel([[assistant_message("again")]])
    tools.run_sync(Agent(name="a", model=same, tools=tools.tools), "m", session=SQLiteSession("A"))
    other = ScriptedModel([[assistant_message("other")]])
    tools.run_sync(Agent(name="a", model=other, tools=tools.tools), "m", session=SQLiteSession("B"))

    assert offered(same) == [["search_tools", "send_email"]]
    assert offered(other) == [["search_tools"]]
    assert tools.discovered("A") == ["send_email"]


def test_an_undiscovered_call_is_refused_and_the_run_goes_on() -> None:
    tools = ToolSearchAgentTools([get_weather, send_email])
    model = ScriptedModel(
        [
            [function_call("send_email", {"to": "bob", "body": "hi"}, call_id="c1")],
            [assistant_message("searched instead")],
        ]
    )
    result = tools.run_sync(Agent(name="a", model=model, tools=tools.tools), "mail bob")

    outputs = [
        i.output for i in result.new_items if getattr(i, "type", "") == "tool_call_output_item"
    ]
    assert result.final_output == "searched instead"
    assert "send_email" in outputs[0]
    assert "not found" in outputs[0]


def test_names_are_sent_in_a_form_every_provider_accepts() -> None:
    async def create(ctx: object, arguments: str) -> str:
        return "#1"

    dotted = FunctionTool(
        name="github.create_issue",
        description="Create a GitHub issue",
        params_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
        on_invoke_tool=create,
    )
    tools = ToolSearchAgentTools([dotted, get_weather], max_results=1)
    model = ScriptedModel(
        [
            search("create github issue"),
            [function_call("github_create_issue", {}, call_id="c2")],
            [assistant_message("done")],
        ]
    )
    result = tools.run_sync(Agent(name="a", model=model, tools=tools.tools), "file it")

    outputs = [
        i.output for i in result.new_items if getattr(i, "type", "") == "tool_call_output_item"
    ]
    assert outputs == [json.dumps(["github_create_issue"]), "#1"]
    assert offered(model)[1] == ["github_create_issue", "search_tools"]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_results"):
        ToolSearchAgentTools([get_weather], max_results=11)
    with pytest.raises(ValueError, match="pinned"):
        ToolSearchAgentTools([get_weather], pinned=["nope"])
    with pytest.raises(ValueError, match="search tool's name"):
        ToolSearchAgentTools([get_weather], search_tool_name="get_weather")
    with pytest.raises(TypeError):
        ToolSearchAgentTools(
            [get_weather], index="bm25", registry=SessionRegistry(RegexToolIndex())
        )


def test_the_request_lists_tools_in_discovery_order_not_registration_order() -> None:
    # registration order: get_weather, send_email, create_issue; discovery: send_email
    # first, then get_weather: the later discovery goes to the end of the list
    tools = ToolSearchAgentTools([get_weather, send_email, create_issue], max_results=1)
    model = ScriptedModel(
        [
            search("send an email message", call_id="s1"),
            search("weather forecast", call_id="s2"),
            [assistant_message("done")],
        ]
    )
    agent = Agent(name="a", model=model, tools=tools.tools)
    tools.run_sync(agent, "hi", session=SQLiteSession("order-1"))

    sent = [[t.name for t in c.tools] for c in model.calls]
    assert sent[-1] == ["search_tools", "send_email", "get_weather"]
    assert tools.discovered("order-1") == ["send_email", "get_weather"]
    view = tools.sessions.loaded("order-1")
    if view is not None:  # the loaded view reports the same order as the wire
        assert [t.name for t in view.tools][1:] == ["send_email", "get_weather"]
