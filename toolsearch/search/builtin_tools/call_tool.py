"""The call tool of ``injection="results"``: ``callTool(name, arguments)``.

With the default injection (``"tools"``), every discovered tool joins the request's tool
list. Providers render the tool list first (before the system prompt and the history), so
each discovery changes the start of the prompt and a provider's prompt cache has to write
the whole conversation again. With ``injection="results"`` the tool list never changes:
the model sees the search tool, this call tool and the pinned tools; each search result
carries the full definitions of the tools it found (name, description, parameters), so the
definitions sit in the conversation, after the cached prefix; and the model calls a
discovered tool through this tool, naming it and passing its arguments. The tool-search
advisor runs such a call as a call of the named tool (limits, errors, hooks as for any
tool), after the same checks as a direct call (:meth:`SearchRun.check_call`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from toolsearch.errors import InvalidToolArgumentsError
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition, ToolMetadata
from toolsearch.tools.schema import parse_arguments

__all__ = [
    "DEFAULT_CALL_TOOL_NAME",
    "CallThrough",
    "CallTool",
    "call_tool_definition",
    "unwrap_call",
]

DEFAULT_CALL_TOOL_NAME = "callTool"


def call_tool_definition(name: str = DEFAULT_CALL_TOOL_NAME) -> ToolDefinition:
    """The definition the model receives for the call tool."""
    return ToolDefinition(
        name=name,
        description=(
            "Call a tool that a tool search returned. Give the tool's exact name and its "
            "arguments as an object that follows the parameters the search listed for it."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's exact name."},
                "arguments": {
                    "type": "object",
                    "description": "The tool's arguments, as its parameters describe them.",
                },
            },
            "required": ["name"],
        },
    )


@dataclass(frozen=True)
class CallThrough:
    """A call of the call tool, unwrapped: the named tool and its arguments as JSON."""

    name: str
    arguments: str


def unwrap_call(call_tool_name: str, input_json: str | None) -> CallThrough:
    """The tool a call of the call tool names and its arguments, or
    :class:`~toolsearch.errors.InvalidToolArgumentsError` for arguments that are not
    ``{"name": str, "arguments": object}`` (``arguments`` may be left out, or given as a
    JSON string of an object, as some models do)."""
    parsed = parse_arguments(call_tool_name, input_json)
    name = parsed.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidToolArgumentsError(call_tool_name, "name: the exact name of a tool found")
    arguments: Any = parsed.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else None
        except ValueError:
            arguments = None
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise InvalidToolArgumentsError(
            call_tool_name, "arguments: an object of the tool's parameters"
        )
    return CallThrough(name.strip(), json.dumps(arguments, ensure_ascii=False))


class _Decision(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def allowed(self) -> bool: ...

    @property
    def message(self) -> str | None: ...


class CallTool:
    """The call tool as a ``ToolCallback``. The advisor unwraps its calls before they run;
    called directly, it asks ``resolve`` (the run's
    :meth:`~toolsearch.search.run.SearchRun.unwrap_call`) for the decision on the named
    tool and its arguments, and runs the callback ``lookup`` finds, or answers the refusal."""

    def __init__(
        self,
        definition: ToolDefinition,
        resolve: Callable[[str | None], tuple[_Decision, str]],
        lookup: Callable[[str], ToolCallback | None],
    ) -> None:
        self._definition = definition
        self._resolve = resolve
        self._lookup = lookup

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def _target(self, input_json: str) -> tuple[ToolCallback | str, str]:
        decision, arguments = self._resolve(input_json)
        callback = self._lookup(decision.name) if decision.allowed else None
        return (callback if callback is not None else (decision.message or "")), arguments

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        target, arguments = self._target(input_json)
        return target if isinstance(target, str) else target.call(arguments, context)

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        target, arguments = self._target(input_json)
        return target if isinstance(target, str) else await target.acall(arguments, context)
