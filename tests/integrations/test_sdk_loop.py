"""The plain-SDK-loop helper, and the runnable examples that use it over the real SDKs
(their HTTP calls answered by the SDKs' own mock transport)."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolsearch import ToolDefinition, tool
from toolsearch.indexes import RegexToolIndex
from toolsearch.integrations.sdk_loop import ToolSearchLoop, to_tool_definition
from toolsearch.search import InMemorySessionStore, RedisSessionStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "integrations"


def get_weather(city: str) -> str:
    """Get the weather forecast for a city."""
    return city


@tool(description="Send an email to a recipient")
def send_email(to: str) -> str:
    return to


TOOLS = [
    get_weather,
    send_email,
    {
        "type": "function",
        "function": {
            "name": "create_issue",
            "description": "Create a GitHub issue",
            "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
        },
    },
    {
        "name": "convert_currency",
        "description": "Convert money to another currency",
        "input_schema": {"type": "object", "properties": {"amount": {"type": "number"}}},
    },
]


def test_tools_in_every_form_become_definitions() -> None:
    names = [to_tool_definition(t).name for t in TOOLS]
    assert names == ["get_weather", "send_email", "create_issue", "convert_currency"]
    gemini = to_tool_definition({"name": "g", "parameters_json_schema": {"type": "object"}})
    assert gemini.input_schema == {"type": "object"}
    assert to_tool_definition(ToolDefinition("x")).name == "x"
    with pytest.raises(TypeError):
        to_tool_definition({"description": "no name"})


def test_a_turn_starts_with_the_search_tool_and_grows_with_discoveries() -> None:
    loop = ToolSearchLoop(TOOLS, max_results=1)
    session = loop.session("c1")
    assert [t["function"]["name"] for t in session.tools("openai")] == ["toolSearchTool"]

    result = session.openai_result(
        {
            "id": "call_1",
            "function": {"name": "toolSearchTool", "arguments": '{"query": "weather"}'},
        }
    )
    assert result == {"role": "tool", "tool_call_id": "call_1", "content": '["get_weather"]'}
    assert session.search("github issue") == ["create_issue"]

    assert [t["function"]["name"] for t in session.tools("openai")] == [
        "toolSearchTool",
        "get_weather",
        "create_issue",
    ]
    assert [t["name"] for t in session.tools("openai-responses")][1:] == [
        "get_weather",
        "create_issue",
    ]
    anthropic = session.tools("anthropic")
    assert anthropic[1] == {
        "name": "get_weather",
        "description": "Get the weather forecast for a city.",
        "input_schema": to_tool_definition(get_weather).input_schema,
    }
    (gemini,) = session.tools("gemini")
    assert [d["name"] for d in gemini["function_declarations"]][1:] == [
        "get_weather",
        "create_issue",
    ]
    with pytest.raises(ValueError, match="unknown provider"):
        session.tools("cohere")  # type: ignore[arg-type]


def test_the_search_result_per_provider_and_other_calls_left_alone() -> None:
    session = ToolSearchLoop(TOOLS, index=RegexToolIndex(), max_results=1).session("c2")

    block = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "toolSearchTool",
        "input": {"query": "email"},
    }
    assert session.anthropic_result(block) == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": '["send_email"]',
    }
    part = session.gemini_result(
        {"name": "toolSearchTool", "args": {"query": "currency"}, "id": "g1"}
    )
    assert part == {
        "function_response": {
            "name": "toolSearchTool",
            "id": "g1",
            "response": {"output": '["convert_currency"]'},
        }
    }
    item = {
        "type": "function_call",
        "call_id": "fc_1",
        "name": "toolSearchTool",
        "arguments": '{"query": "issue"}',
    }
    assert session.openai_responses_result(item) == {
        "type": "function_call_output",
        "call_id": "fc_1",
        "output": '["create_issue"]',
    }
    assert (
        session.anthropic_result({"type": "tool_use", "name": "get_weather", "input": {}}) is None
    )
    assert session.anthropic_result({"type": "text", "text": "hi"}) is None
    assert session.handle("get_weather", "{}") is None


def test_a_search_skips_the_tools_the_session_has_and_bad_arguments_are_text() -> None:
    session = ToolSearchLoop(TOOLS, pinned=["send_email"]).session("c3")
    assert [t["function"]["name"] for t in session.tools("openai")] == [
        "toolSearchTool",
        "send_email",
    ]
    assert "send_email" not in session.search("send an email", max_results=3)
    assert session.handle("toolSearchTool", {"query": ""}).startswith("Error: invalid arguments")
    assert session.handle("toolSearchTool", "not json").startswith("Error: invalid arguments")


def test_the_tool_set_is_indexed_once_per_session() -> None:
    loop = ToolSearchLoop(TOOLS)
    for query in ("weather", "email", "issue"):
        loop.session("c4").search(query)
    state = loop.registry.get("c4")
    assert state is not None
    assert state.index_count == 1


def test_discoveries_persist_in_a_shared_store() -> None:
    store = InMemorySessionStore()
    ToolSearchLoop(TOOLS, store=store).session("c5").search("weather")
    other_worker = ToolSearchLoop(TOOLS, store=store).session("c5")
    assert other_worker.discovered == ["get_weather"]


def test_discoveries_persist_in_redis(redis_url: str) -> None:
    namespace = "toolsearch-test-sdk-loop"
    RedisSessionStore(redis_url, namespace=namespace).clear()
    worker_a = ToolSearchLoop(TOOLS, store=RedisSessionStore(redis_url, namespace=namespace))
    worker_b = ToolSearchLoop(TOOLS, store=RedisSessionStore(redis_url, namespace=namespace))
    worker_a.session("conv").search("send an email")

    assert worker_b.session("conv").discovered == ["send_email"]
    assert [t["name"] for t in worker_b.session("conv").tools("anthropic")] == [
        "toolSearchTool",
        "send_email",
    ]
    RedisSessionStore(redis_url, namespace=namespace).clear()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_results"):
        ToolSearchLoop(TOOLS, max_results=0)
    with pytest.raises(ValueError, match="pinned"):
        ToolSearchLoop(TOOLS, pinned=["nope"])
    with pytest.raises(ValueError, match="search tool's name"):
        ToolSearchLoop(TOOLS, search_tool_name="get_weather")
    with pytest.raises(ValueError, match="same name"):
        ToolSearchLoop([get_weather, get_weather])


EXPECTED = {
    "sdk_loop_openai.py": ("openai", "get_weather"),
    "sdk_loop_anthropic.py": ("anthropic", "send_email"),
    "sdk_loop_gemini.py": ("google.genai", "create_ticket"),
}


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_each_provider_example_runs(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    sdk, found = EXPECTED[example]
    pytest.importorskip(sdk, reason=f"the {sdk} SDK is not installed")
    runpy.run_path(str(EXAMPLES / example), run_name="__main__")
    out = capsys.readouterr().out.splitlines()

    assert out[0] == "tools sent: ['toolSearchTool']"
    assert out[1] == f"toolSearchTool -> {json.dumps([found])}"
    assert out[2] == f"tools sent: ['toolSearchTool', '{found}']"
    assert out[-1] == f"discovered: ['{found}']"


def test_importing_the_integrations_imports_no_framework() -> None:
    code = (
        "import sys, toolsearch.integrations, toolsearch.integrations.sdk_loop\n"
        "bad = [m for m in ('pydantic_ai', 'langchain_core', 'langgraph', 'agents', 'openai',"
        " 'anthropic', 'google.genai') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


LONG = "payments_refund_a_card_payment_to_the_original_customer_account_now_v2"
ODD = [
    ToolDefinition("github.create_issue", "Create a GitHub issue in a repository", {}),
    ToolDefinition("docs/search", "Search the product documentation pages", {}),
    ToolDefinition(LONG, "Refund a card payment to the customer", {}),
]


def _offered(tools: list[dict[str, object]], provider: str) -> list[str]:
    if provider == "openai":
        return [t["function"]["name"] for t in tools]  # type: ignore[index]
    if provider == "gemini":
        return [d["name"] for d in tools[0]["function_declarations"]]  # type: ignore[index]
    return [str(t["name"]) for t in tools]


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "gemini"])
@pytest.mark.parametrize("query", ["create a github issue", "search the documentation", "refund"])
def test_odd_names_go_out_valid_and_the_search_result_speaks_them(
    provider: str, query: str
) -> None:
    from toolsearch.models.wire_names import ANTHROPIC_NAMES, GEMINI_NAMES, OPENAI_NAMES

    rule = {"anthropic": ANTHROPIC_NAMES, "gemini": GEMINI_NAMES}.get(provider, OPENAI_NAMES)
    session = ToolSearchLoop(ODD, max_results=1).session("c-odd")
    search_name = session.loop.search_tool_name
    found = json.loads(session.handle(search_name, {"query": query}, provider) or "[]")
    offered = _offered(session.tools(provider), provider)  # type: ignore[arg-type]

    assert all(rule.accepts(name) for name in offered), offered
    assert found[0] in offered  # the name in the result is the name the model can call
    own = session.tool_name(found[0], provider)  # type: ignore[arg-type]
    assert own in {d.name for d in ODD}
    assert session.refusal(found[0], provider) is None  # type: ignore[arg-type]
    others = [d.name for d in ODD if d.name != own]
    wire = session.loop.wire_names(provider)  # type: ignore[arg-type]
    assert "not loaded yet" in (session.refusal(wire.wire(others[0]), provider) or "")  # type: ignore[arg-type]


def test_the_async_api_searches_off_the_event_loop_and_answers_as_the_sync_one() -> None:
    import asyncio
    import threading

    from toolsearch.testing.front_doors import ThreadRecordingIndex

    index = ThreadRecordingIndex()
    loop = ToolSearchLoop(TOOLS, index=index)
    call = {
        "id": "c1",
        "function": {"name": "toolSearchTool", "arguments": json.dumps({"query": "weather"})},
    }

    async def main() -> tuple[int, Any, list[str]]:
        session = loop.session("async-1")
        result = await session.aopenai_result(call)
        names = [t["function"]["name"] for t in await session.atools("openai")]
        assert await session.arefusal("get_weather", "openai") is None
        await session.aclose()
        return threading.get_ident(), result, names

    loop_thread, result, names = asyncio.run(main())

    assert json.loads(result["content"]) == ["get_weather"]
    assert names == ["toolSearchTool", "get_weather"]
    assert [what for what, thread in index.threads if thread == loop_thread] == []
    assert ("search", loop_thread) not in index.threads
    assert index.threads


def test_a_call_the_loop_ran_reaches_the_search_log_with_its_outcome() -> None:
    from toolsearch.testing.front_doors import RecordingSearchLog

    log = RecordingSearchLog()
    loop = ToolSearchLoop(TOOLS, index=RegexToolIndex(), search_log=log)
    session = loop.session("outcomes-1")
    session.search("weather")
    assert session.refusal("get_weather", "openai") is None
    session.record_outcome("get_weather", True, "openai")
    session.record_outcome("send_email", False)  # never discovered: still a call that failed
    session.record_outcome("toolSearchTool", True)  # the search tool: not a tool call
    session.record_outcome("no_such_tool", True)  # no tool has it: ignored

    assert log.outcomes() == [("get_weather", True), ("send_email", False)]
    assert log.calls[0].tool_set == log.searches[0].tool_set
