"""The one interface the loop needs from a tool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from toolsearch.tools.context import ToolContext
    from toolsearch.tools.definition import ToolDefinition, ToolMetadata

__all__ = ["ToolCallback"]


@runtime_checkable
class ToolCallback(Protocol):
    """A callable tool: its definition, its metadata, and a way to run it on JSON input.

    ``call`` and ``acall`` take the model's arguments as a JSON string and return the
    tool's result text, and only that: a failure is raised, never returned as text that
    looks like a result. The contract, the same for function, from-schema and MCP tools
    (and what any other implementation should keep; see :mod:`toolsearch.errors`):

    - arguments that are not a JSON object or do not fit ``definition.input_schema``
      raise :class:`~toolsearch.errors.InvalidToolArgumentsError`, before the tool runs;
    - a tool that ran and failed raises :class:`~toolsearch.errors.ToolExecutionError`,
      its ``cause`` being the original error (a function's exception, an MCP tool's
      :class:`~toolsearch.errors.McpToolError`);
    - a tool that could not be run at all (its server unreachable, the connection lost, a
      timeout) raises :class:`~toolsearch.errors.ToolTransportError`, a
      ``ToolExecutionError``;
    - ``await acall(...)`` returns or raises what ``call(...)`` does for the same input.

    ``call`` may return a :class:`toolsearch.chat.ToolResultText` (a ``str``) to carry
    typed data beside the text, such as a search's hits; the loop copies it onto the
    ``ToolResponse`` as long as the text is not rebuilt on the way.

    The tool loop (``ToolCallingManager``) turns these errors into the result text the
    model reads, so a failing tool never ends the loop unless configured to raise.
    """

    @property
    def definition(self) -> ToolDefinition: ...

    @property
    def metadata(self) -> ToolMetadata: ...

    def call(self, input_json: str, context: ToolContext | None = None) -> str: ...

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str: ...
