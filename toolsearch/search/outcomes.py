"""Whether each tool a turn called succeeded: what the search log's ``ok`` records.

The tool-calling manager turns a tool's failure into text for the model, so only the tool's
own ``call`` knows whether it raised. With a search log, the tool-search advisor hands the
manager each registered tool wrapped for one turn (:class:`WatchedTool`), which notes the
outcome in the turn's :class:`TurnOutcomes` and passes the call (and any exception) on
unchanged. Learning from use counts only the requests whose tool then succeeded.
"""

from __future__ import annotations

import time
from typing import Any

from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition, ToolMetadata

__all__ = ["TurnOutcomes", "WatchedTool"]


class TurnOutcomes:
    """Whether each tool of one turn ran and returned (any of its calls): the search log's
    ``ok``. Only a tool's own ``call`` knows, as the manager turns failures into text."""

    def __init__(self) -> None:
        self.started = time.time()
        self._ok: dict[str, bool] = {}

    def note(self, name: str, ok: bool) -> None:
        self._ok[name] = self._ok.get(name, False) or ok

    def succeeded(self, name: str) -> bool:
        return self._ok.get(name, False)

    def watch(self, callback: ToolCallback) -> ToolCallback:
        return WatchedTool(callback, self)


class WatchedTool:
    """A registered tool as the manager runs it in one turn: itself, noting whether each
    call returned or raised (the exception still propagates to the manager)."""

    def __init__(self, callback: ToolCallback, outcomes: TurnOutcomes) -> None:
        self.__wrapped__ = callback
        self._outcomes = outcomes

    @property
    def definition(self) -> ToolDefinition:
        return self.__wrapped__.definition

    @property
    def metadata(self) -> ToolMetadata:
        return self.__wrapped__.metadata

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        name = self.__wrapped__.definition.name
        try:
            result = self.__wrapped__.call(input_json, context)
        except BaseException:
            self._outcomes.note(name, False)
            raise
        self._outcomes.note(name, True)
        return result

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        name = self.__wrapped__.definition.name
        try:
            result = await self.__wrapped__.acall(input_json, context)
        except BaseException:
            self._outcomes.note(name, False)
            raise
        self._outcomes.note(name, True)
        return result

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.__wrapped__, attribute)
