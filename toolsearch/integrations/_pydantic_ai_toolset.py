"""pydantic-ai's side of the pydantic-ai door: the agent's tools under provider-valid names,
their calls reported to the search log, and the ``ToolSearch`` capability that puts both in
place. Imported by :mod:`toolsearch.integrations.pydantic_ai` once pydantic-ai is needed
(this module imports pydantic-ai at its top).

pydantic-ai sends a deferred tool to the model under the tool's own name once a search
discovered it, and OpenAI refuses ``github.create_issue`` as a function name. The capability
:class:`ToolSearchCapability` wraps the agent's toolset in :class:`PortableNamesToolset`
before pydantic-ai's own search toolset: every tool is listed under its wire name
(:data:`~toolsearch.search.sessions.PORTABLE_NAMES`, the rule every provider accepts), so
the strategy sees, and answers, the names the model is offered; a call of a wire name runs
the tool under its own name. Each tool's own name travels in its definition's ``metadata``
(which pydantic-ai never sends to a model), so the index ranks the tools' own names.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import ToolSearch
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from toolsearch.integrations._common import OWN_NAME_KEY, own_name, renamed, take_turn
from toolsearch.models.wire_names import WireNames
from toolsearch.search.sessions import PORTABLE_NAMES

__all__ = ["OWN_NAME_KEY", "PortableNamesToolset", "ToolSearchCapability"]


_RESERVED = ("search_tools",)  # pydantic-ai's own search tool keeps its name
_MAPPINGS: OrderedDict[tuple[str, ...], WireNames] = OrderedDict()
_MAPPINGS_LOCK = threading.Lock()
_MAPPINGS_KEPT = 64


def wire_names_of(names: tuple[str, ...]) -> WireNames:
    """The wire names of a tool list, built once per list per process: pydantic-ai builds
    the capability's toolset anew for every run, so a mapping kept on the toolset was built
    again at each run's first step (3 ms for 300 tools, on the event loop)."""
    with _MAPPINGS_LOCK:
        found = _MAPPINGS.get(names)
        if found is not None:
            _MAPPINGS.move_to_end(names)
            return found
    mapping = WireNames(PORTABLE_NAMES, [*_RESERVED, *names])
    with _MAPPINGS_LOCK:
        _MAPPINGS[names] = mapping
        while len(_MAPPINGS) > _MAPPINGS_KEPT:
            _MAPPINGS.popitem(last=False)
    return mapping


@dataclass
class PortableNamesToolset(WrapperToolset[Any]):
    """The wrapped toolset's tools under names every provider accepts: a tool whose own
    name is accepted passes through untouched (no per-step copy of 300 tools), the others
    are listed under their wire name and their calls mapped back.

    Listing is the step at which pydantic-ai walks the whole tool set synchronously
    (copying every definition in its own layers, ours and the search toolset around us):
    concurrent runs take turns (:func:`~toolsearch.integrations._common.take_turn`), one
    listing per loop iteration, instead of all of them in one."""

    _names: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    """wire name -> own name, for the tools renamed last."""

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        await take_turn()
        tools = await super().get_tools(ctx)
        names = wire_names_of(tuple(tools))
        out: dict[str, ToolsetTool[Any]] = {}
        for own, tool in tools.items():
            wire = names.wire(own)
            if wire == own:
                out[own] = tool
                continue
            self._names[wire] = own
            metadata = {**(tool.tool_def.metadata or {}), OWN_NAME_KEY: own}
            out[wire] = replace(
                tool, toolset=self, tool_def=replace(tool.tool_def, name=wire, metadata=metadata)
            )
        return out

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        own = self._names.get(name, name)
        metadata = dict(tool.tool_def.metadata or {})
        metadata.pop(OWN_NAME_KEY, None)
        inner = replace(tool, tool_def=replace(tool.tool_def, name=own, metadata=metadata or None))
        return await super().call_tool(own, tool_args, replace(ctx, tool_name=own), inner)


@dataclass
class ToolSearchCapability(ToolSearch[Any]):
    """pydantic-ai's ``ToolSearch`` capability whose toolset lists every tool under a
    provider-valid name (:class:`PortableNamesToolset`) and that reports each tool call's
    outcome to the strategy's search log once it ran (``wrap_tool_execute``)."""

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        return super().get_wrapper_toolset(PortableNamesToolset(toolset))

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: Any,
        tool_def: Any,
        args: Any,
        handler: Any,
    ) -> Any:
        # a ToolSearchStrategy (by what it has: pydantic_ai.py imports this module)
        record = getattr(self.strategy, "arecord_outcome", None)
        sessions = getattr(self.strategy, "sessions", None)
        if record is None or getattr(sessions, "search_log", None) is None:
            return await handler(args)
        started, ok = time.time(), False
        try:
            result = await handler(args)
            ok = True
            return result
        finally:
            await record(ctx, own_name(tool_def), ok, started)


def __getattr__(name: str) -> Any:
    """``ToolsearchToolSearch``, the name before issue 48, deprecated."""
    return renamed(__name__, name, {"ToolsearchToolSearch": "ToolSearchCapability"}, globals())
