"""Test doubles shared by the contract suites and by any test suite: a clock you move by
hand, one-line tool builders and the offline chat models.

The scripted chat models live with the models (:mod:`toolsearch.models`) and are only
re-exported here: :class:`FunctionChatModel` answers from a Python function of the
messages and tools of each request; :class:`TestChatModel` calls every visible tool once
and then summarizes the results.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from toolsearch.models.function import FunctionChatModel, ScriptFunction
from toolsearch.models.test import TestChatModel
from toolsearch.tools.definition import ToolDefinition
from toolsearch.tools.function import FunctionToolCallback

__all__ = [
    "EMPTY_OBJECT",
    "FakeClock",
    "FunctionChatModel",
    "ScriptFunction",
    "TestChatModel",
    "function_tool",
    "tool_definition",
    "word_overlap",
]

EMPTY_OBJECT: Mapping[str, Any] = {"type": "object", "properties": {}}
"""The JSON Schema of a tool without parameters."""


class FakeClock:
    """A time in seconds that moves only when told (``advance``, or ``now`` set directly).

    Call it for the time, as the eviction strategies, session stores and everything that
    takes a ``clock: Callable[[], float]`` do: TTLs and lease expiries are tested without
    sleeping. Reading and moving it are thread-safe.
    """

    def __init__(self, now: float = 1_000_000.0) -> None:
        self._now = float(now)
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    @property
    def now(self) -> float:
        return self()

    @now.setter
    def now(self, value: float) -> None:
        with self._lock:
            self._now = float(value)

    def advance(self, seconds: float) -> None:
        """Move the time ``seconds`` forward."""
        with self._lock:
            self._now += seconds

    def __repr__(self) -> str:
        return f"FakeClock({self._now!r})"


def tool_definition(
    name: str,
    description: str | None = None,
    schema: Mapping[str, Any] | None = None,
    category: str | None = None,
) -> ToolDefinition:
    """A ``ToolDefinition``: the description defaults to ``"The {name} tool."``, the
    schema to an object without properties."""
    return ToolDefinition(
        name=name,
        description=description if description is not None else f"The {name} tool.",
        input_schema=schema if schema is not None else dict(EMPTY_OBJECT),
        category=category,
    )


def function_tool(
    name: str,
    description: str | None = None,
    *,
    result: str | Callable[[dict[str, Any]], Any] | None = None,
    schema: Mapping[str, Any] | None = None,
    calls: list[str] | None = None,
) -> FunctionToolCallback:
    """A runnable tool with a hand-written schema (an object without properties unless
    given). It answers ``result`` (a string, or a function of the arguments), by default
    ``"{name} done"``, and appends its name to ``calls`` (when given) each time it runs."""

    def run(arguments: dict[str, Any]) -> Any:
        if calls is not None:
            calls.append(name)
        if callable(result):
            return result(arguments)
        return f"{name} done" if result is None else result

    return FunctionToolCallback.from_schema(
        run,
        name=name,
        description=description if description is not None else f"The {name} tool.",
        input_schema=schema if schema is not None else dict(EMPTY_OBJECT),
    )


def word_overlap(query: str, document: str) -> float:
    """How many distinct lower-cased words ``query`` and ``document`` share: a scorer for a
    ``FunctionReranker``, or the whole of a toy ranker."""
    return float(len(set(query.lower().split()) & set(document.lower().split())))
