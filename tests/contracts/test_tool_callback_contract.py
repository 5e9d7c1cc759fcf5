"""The ``ToolCallback`` contract (``toolsearch.testing.ToolCallbackContract``) over every
kind of tool.

The same two tools (``add(a, b)`` and ``fail(message)``) as a function tool, a from-schema
tool and an MCP tool served by the in-repo demo server (a subprocess over stdio): the same
results, the same typed errors from ``call`` and ``acall`` (see ``toolsearch.errors``), and
the same text for the model once the loop's manager has turned an error into a
``ToolResponse``. Below the contract: the transport failures only a tool behind a
connection has.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest

from toolsearch.errors import McpConnectionError, McpError, ToolExecutionError, ToolTransportError
from toolsearch.testing import ToolCallbackContract
from toolsearch.testing.callback_contract import both, run_in_loop
from toolsearch.tools import FunctionToolCallback, ToolCallback

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


class TestFunctionTools(ToolCallbackContract):
    def make_tools(self) -> tuple[ToolCallback, ToolCallback]:
        return FunctionToolCallback.from_function(add), FunctionToolCallback.from_function(fail)


class TestSchemaTools(ToolCallbackContract):
    def make_tools(self) -> tuple[ToolCallback, ToolCallback]:
        def add_arguments(arguments: dict[str, Any]) -> int:
            return int(arguments["a"]) + int(arguments["b"])

        def fail_arguments(arguments: dict[str, Any]) -> str:
            raise RuntimeError(arguments["message"])

        return (
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


class TestMcpTools(ToolCallbackContract):
    failure_causes = frozenset({"McpToolError"})

    @pytest.fixture(autouse=True)
    def _provider(self, mcp_provider: Any) -> None:
        self.provider = mcp_provider

    def make_tools(self) -> tuple[ToolCallback, ToolCallback]:
        found = {cb.definition.name: cb for cb in self.provider.tool_callbacks()}
        return found["add"], found["fail"]


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
