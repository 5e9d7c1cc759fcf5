"""The ``ToolCallback`` contract, one suite over every kind of tool.

The same two tools (``add(a, b)`` and ``fail(message)``) as a function tool, a from-schema
tool and an MCP tool served by the in-repo demo server (a subprocess over stdio): the
same results, the same typed errors from ``call`` and ``acall`` (see
``toolsearch.errors``), and the same text for the model once the loop's manager has
turned an error into a ``ToolResponse``.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolsearch.chat.messages import ToolCall
from toolsearch.errors import (
    InvalidToolArgumentsError,
    McpConnectionError,
    McpError,
    ToolExecutionError,
    ToolTransportError,
)
from toolsearch.loop.exceptions import DefaultToolExecutionExceptionProcessor
from toolsearch.loop.manager import ToolCallingManager
from toolsearch.tools import FunctionToolCallback, ToolCallback, ToolContext

INTEGERS = {
    "type": "object",
    "properties": {
        "a": {"type": "integer", "description": "The first integer"},
        "b": {"type": "integer", "description": "The second integer"},
    },
    "required": ["a", "b"],
}
MESSAGE = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}


def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


def fail(message: str) -> str:
    """Always fails with the given message."""
    raise RuntimeError(message)


@dataclass
class Toolset:
    kind: str
    add: ToolCallback
    fail: ToolCallback


def _function_tools() -> Toolset:
    return Toolset(
        "function",
        FunctionToolCallback.from_function(add),
        FunctionToolCallback.from_function(fail),
    )


def _schema_tools() -> Toolset:
    def add_arguments(arguments: dict[str, Any]) -> int:
        return int(arguments["a"]) + int(arguments["b"])

    def fail_arguments(arguments: dict[str, Any]) -> str:
        raise RuntimeError(arguments["message"])

    return Toolset(
        "schema",
        FunctionToolCallback.from_schema(
            add_arguments, name="add", description="Add two integers", input_schema=INTEGERS
        ),
        FunctionToolCallback.from_schema(
            fail_arguments, name="fail", description="Always fails", input_schema=MESSAGE
        ),
    )


@pytest.fixture(scope="module")
def mcp_provider() -> Iterator[Any]:
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the MCP tool needs toolsearch[mcp]")
    from mcp_servers.helpers import stdio

    from toolsearch.mcp import McpToolProvider

    with McpToolProvider({"contract": stdio("contract", include_tools=["add", "fail"])}) as p:
        yield p


@pytest.fixture(params=["function", "schema", "mcp"])
def tools(request: pytest.FixtureRequest) -> Toolset:
    if request.param == "function":
        return _function_tools()
    if request.param == "schema":
        return _schema_tools()
    provider = request.getfixturevalue("mcp_provider")
    found = {cb.definition.name: cb for cb in provider.tool_callbacks()}
    return Toolset("mcp", found["add"], found["fail"])


def both(callback: ToolCallback, arguments: str) -> list[Any]:
    """What ``call`` and ``acall`` give for the same input: a result or the exception."""
    outcomes: list[Any] = []
    try:
        outcomes.append(callback.call(arguments))
    except Exception as exc:
        outcomes.append(exc)

    async def run() -> str:
        return await callback.acall(arguments)

    try:
        outcomes.append(asyncio.run(run()))
    except Exception as exc:
        outcomes.append(exc)
    return outcomes


# -- results -----------------------------------------------------------------------------


def test_they_are_tool_callbacks_with_the_same_definition(tools: Toolset) -> None:
    assert isinstance(tools.add, ToolCallback)
    assert isinstance(tools.fail, ToolCallback)
    definition = tools.add.definition
    assert definition.name == "add"
    assert definition.input_schema["type"] == "object"
    assert set(definition.input_schema["properties"]) == {"a", "b"}
    assert sorted(definition.input_schema["required"]) == ["a", "b"]
    assert tools.add.metadata.return_direct is False


def test_a_normal_result_is_the_text_from_call_and_acall(tools: Toolset) -> None:
    assert both(tools.add, '{"a": 2, "b": 3}') == ["5", "5"]


# -- argument errors: raised before the tool runs ------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('"text"', "must be a JSON object"),
    ],
    ids=["bad-json", "array", "string"],
)
def test_arguments_that_are_not_a_json_object_raise(
    tools: Toolset, arguments: str, problem: str
) -> None:
    for outcome in both(tools.add, arguments):
        assert isinstance(outcome, InvalidToolArgumentsError)
        assert outcome.tool_name == "add"
        assert problem in str(outcome)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [('{"a": "many", "b": 1}', "a"), ('{"a": 1}', "b")],
    ids=["wrong-type", "missing"],
)
def test_arguments_that_do_not_fit_the_schema_raise(
    tools: Toolset, arguments: str, field: str
) -> None:
    for outcome in both(tools.add, arguments):
        assert isinstance(outcome, InvalidToolArgumentsError)
        assert outcome.tool_name == "add"
        assert field in outcome.problem


# -- the tool's own failure ----------------------------------------------------------------


def test_the_tool_raising_is_a_tool_execution_error(tools: Toolset) -> None:
    for outcome in both(tools.fail, '{"message": "the disk is full"}'):
        assert isinstance(outcome, ToolExecutionError)
        assert not isinstance(outcome, ToolTransportError)
        assert outcome.tool_name == "fail"
        assert "the disk is full" in str(outcome)
        assert isinstance(outcome.cause, Exception)
        assert "the disk is full" in str(outcome.cause)
        assert outcome.__cause__ is outcome.cause


def test_no_failure_comes_back_as_result_text(tools: Toolset) -> None:
    for callback, arguments in [(tools.fail, '{"message": "x"}'), (tools.add, "[]")]:
        for outcome in both(callback, arguments):
            assert not isinstance(outcome, str)


# -- what the loop makes of it -------------------------------------------------------------


def run_in_loop(callback: ToolCallback, arguments: str, **manager: Any) -> list[str]:
    """The ``ToolResponse`` text of one call, through the sync and the async path."""
    tool_manager = ToolCallingManager(**manager)
    call = ToolCall(id="c1", name=callback.definition.name, arguments=arguments)
    sync = tool_manager.execute_one(callback, call, ToolContext())

    async def run() -> str:
        return await tool_manager.aexecute_one(callback, call, ToolContext())

    return [sync, asyncio.run(run())]


def test_the_loop_gives_the_model_the_result(tools: Toolset) -> None:
    assert run_in_loop(tools.add, '{"a": 40, "b": 2}') == ["42", "42"]


def test_the_loop_turns_bad_arguments_into_a_fix_it_message(tools: Toolset) -> None:
    for text in run_in_loop(tools.add, '{"a": "many", "b": 1}'):
        assert text.startswith("Error: invalid arguments for tool 'add': ")
        assert "Fix the arguments" in text


def test_the_loop_turns_the_tools_failure_into_text_naming_it(tools: Toolset) -> None:
    for text in run_in_loop(tools.fail, '{"message": "the disk is full"}'):
        cause, _, message = text.partition(": ")
        assert cause in {"RuntimeError", "McpToolError"}  # the cause's type names the kind
        assert message.endswith("the disk is full")


def test_the_loop_raises_when_configured_to(tools: Toolset) -> None:
    processor = DefaultToolExecutionExceptionProcessor(always_throw=True)
    with pytest.raises(ToolExecutionError, match="the disk is full"):
        run_in_loop(tools.fail, '{"message": "the disk is full"}', exception_processor=processor)


# -- transport failures (only a tool behind a connection has them) -------------------------


def test_a_tool_that_cannot_be_reached_raises_a_transport_error() -> None:
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("needs toolsearch[mcp]")
    from mcp_servers.helpers import stdio

    from toolsearch.mcp import McpToolProvider

    provider = McpToolProvider({"gone": stdio("gone", include_tools=["add"])})
    callback = provider.resolve("add")
    assert callback is not None
    provider.close()
    for outcome in both(callback, '{"a": 1, "b": 2}'):
        assert isinstance(outcome, ToolTransportError)
        assert isinstance(outcome, ToolExecutionError)  # one except clause catches both
        assert isinstance(outcome.cause, McpError)
        assert "closed" in str(outcome)
    text = run_in_loop(callback, '{"a": 1, "b": 2}')
    assert text == ["McpError: this McpToolProvider is closed"] * 2


def test_an_unreachable_server_is_a_transport_error_too() -> None:
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("needs toolsearch[mcp]")
    import os
    import signal

    from mcp_servers.helpers import alive, eventually, stdio

    from toolsearch.mcp import McpToolProvider

    with McpToolProvider({"lost": stdio("lost", include_tools=["add", "pid"])}) as provider:
        pid = int(provider.call_tool("pid"))
        os.kill(pid, signal.SIGKILL)
        assert eventually(lambda: not alive(pid), timeout=10)
        with pytest.raises(ToolTransportError) as lost:
            provider.resolve("add").call('{"a": 1, "b": 2}')
        assert isinstance(lost.value.cause, McpConnectionError)
        assert provider.resolve("add").call('{"a": 1, "b": 2}') == "3"  # started again
