"""The ``ToolCallback`` contract: subclass :class:`ToolCallbackContract`, implement
``make_tools``, and pytest runs every check against your kind of tool.

.. code-block:: python

    class TestMyTools(ToolCallbackContract):
        def make_tools(self):
            return my_tool("add"), my_tool("fail")

``make_tools`` returns the same two tools built your way: ``add(a: int, b: int)`` (both
required integers) answering the sum, and ``fail(message: str)`` raising an exception with
the message. The contract (:mod:`toolsearch.errors`): the same results from ``call`` and
``acall``; arguments that are not a JSON object, or do not fit the schema, raise
``InvalidToolArgumentsError`` before the tool runs; the tool's own failure raises
``ToolExecutionError`` (not ``ToolTransportError``) with the exception as ``cause``; no
failure comes back as result text; and the loop's manager turns each error into the text
the model reads (or raises, when configured to).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from toolsearch.chat.messages import ToolCall
from toolsearch.errors import (
    InvalidToolArgumentsError,
    ToolExecutionError,
    ToolTransportError,
)
from toolsearch.loop.exceptions import DefaultToolExecutionExceptionProcessor
from toolsearch.loop.manager import ToolCallingManager
from toolsearch.tools import ToolCallback, ToolContext

__all__ = ["ToolCallbackContract", "Toolset", "both", "run_in_loop"]


@dataclass
class Toolset:
    """The two tools of the contract, built one way."""

    add: ToolCallback
    fail: ToolCallback


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


def run_in_loop(callback: ToolCallback, arguments: str, **manager: Any) -> list[str]:
    """The ``ToolResponse`` text of one call, through the sync and the async path."""
    tool_manager = ToolCallingManager(**manager)
    call = ToolCall(id="c1", name=callback.definition.name, arguments=arguments)
    sync = tool_manager.execute_one(callback, call, ToolContext())

    async def run() -> str:
        return await tool_manager.aexecute_one(callback, call, ToolContext())

    return [sync, asyncio.run(run())]


class ToolCallbackContract:
    """Every check of a kind of ``ToolCallback``: implement :meth:`make_tools` in a
    ``Test...`` subclass."""

    failure_causes: ClassVar[frozenset[str]] = frozenset({"RuntimeError"})
    """The exception type names the loop may give the model when ``fail`` fails (the
    cause's type: ``RuntimeError`` for a Python function, a remote error type for a tool
    behind a connection)."""

    def make_tools(self) -> tuple[ToolCallback, ToolCallback]:
        """The ``add`` and the ``fail`` tool, built the way under test."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_tools()")

    @pytest.fixture
    def tools(self) -> Toolset:
        add, fail = self.make_tools()
        return Toolset(add, fail)

    # -- results -------------------------------------------------------------------------

    def test_they_are_tool_callbacks_with_the_same_definition(self, tools: Toolset) -> None:
        assert isinstance(tools.add, ToolCallback)
        assert isinstance(tools.fail, ToolCallback)
        definition = tools.add.definition
        assert definition.name == "add"
        assert definition.input_schema["type"] == "object"
        assert set(definition.input_schema["properties"]) == {"a", "b"}
        assert sorted(definition.input_schema["required"]) == ["a", "b"]
        assert tools.add.metadata.return_direct is False

    def test_a_normal_result_is_the_text_from_call_and_acall(self, tools: Toolset) -> None:
        assert both(tools.add, '{"a": 2, "b": 3}') == ["5", "5"]

    # -- argument errors: raised before the tool runs --------------------------------------

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
        self, tools: Toolset, arguments: str, problem: str
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
        self, tools: Toolset, arguments: str, field: str
    ) -> None:
        for outcome in both(tools.add, arguments):
            assert isinstance(outcome, InvalidToolArgumentsError)
            assert outcome.tool_name == "add"
            assert field in outcome.problem

    # -- the tool's own failure ------------------------------------------------------------

    def test_the_tool_raising_is_a_tool_execution_error(self, tools: Toolset) -> None:
        for outcome in both(tools.fail, '{"message": "the disk is full"}'):
            assert isinstance(outcome, ToolExecutionError)
            assert not isinstance(outcome, ToolTransportError)
            assert outcome.tool_name == "fail"
            assert "the disk is full" in str(outcome)
            assert isinstance(outcome.cause, Exception)
            assert "the disk is full" in str(outcome.cause)
            assert outcome.__cause__ is outcome.cause

    def test_no_failure_comes_back_as_result_text(self, tools: Toolset) -> None:
        for callback, arguments in [(tools.fail, '{"message": "x"}'), (tools.add, "[]")]:
            for outcome in both(callback, arguments):
                assert not isinstance(outcome, str)

    # -- what the loop makes of it ---------------------------------------------------------

    def test_the_loop_gives_the_model_the_result(self, tools: Toolset) -> None:
        assert run_in_loop(tools.add, '{"a": 40, "b": 2}') == ["42", "42"]

    def test_the_loop_turns_bad_arguments_into_a_fix_it_message(self, tools: Toolset) -> None:
        for text in run_in_loop(tools.add, '{"a": "many", "b": 1}'):
            assert text.startswith("Error: invalid arguments for tool 'add': ")
            assert "Fix the arguments" in text

    def test_the_loop_turns_the_tools_failure_into_text_naming_it(self, tools: Toolset) -> None:
        for text in run_in_loop(tools.fail, '{"message": "the disk is full"}'):
            cause, _, message = text.partition(": ")
            assert cause in self.failure_causes  # the cause's type names the kind
            assert message.endswith("the disk is full")

    def test_the_loop_raises_when_configured_to(self, tools: Toolset) -> None:
        processor = DefaultToolExecutionExceptionProcessor(always_throw=True)
        with pytest.raises(ToolExecutionError, match="the disk is full"):
            run_in_loop(
                tools.fail, '{"message": "the disk is full"}', exception_processor=processor
            )
