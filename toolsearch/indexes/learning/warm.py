"""The warm set of a usage memory: a tool set's most used tools, with how well they went.

Weights are successful calls decayed with the memory's ``half_life_days``; the success
rate is successful over all recorded calls (decayed alike), so a tool that is called often
and fails often ranks below one that works. A tool set whose calls were never recorded
(a memory rebuilt from an old log) falls back on its learned requests: their decayed
weight times support.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolsearch.indexes.learning.model import Catalog, ToolUse, UsageParams, weight_of
from toolsearch.search.working_set.warm import WarmTool
from toolsearch.tools.definition import ToolDefinition

__all__ = ["count_use", "warm_tools"]


def warm_tools(
    catalog: Catalog,
    tools: Sequence[ToolDefinition],
    params: UsageParams,
    now: float,
    limit: int,
) -> list[WarmTool]:
    """At most ``limit`` of ``tools``, most used first (see the module docstring)."""
    present = {tool.name for tool in tools}
    half_life = (params.half_life_days or 36_500.0) * 86_400.0
    found: list[WarmTool] = []
    for name, use in catalog.use.items():
        if name not in present or use.ok <= 0:
            continue
        decay = 0.5 ** (max(0.0, now - use.at) / half_life)
        rate = use.ok / use.calls if use.calls > 0 else 0.0
        found.append(WarmTool(name, use.ok * decay, min(1.0, rate), use.last))
    if not found:
        for name, entries in catalog.tools.items():
            if name not in present or not entries:
                continue
            weight = sum(weight_of(e, catalog, params, now) * e.support for e in entries.values())
            last = max(e.last for e in entries.values())
            found.append(WarmTool(name, weight, 1.0, last))
    found.sort(key=lambda tool: (-tool.weight, -tool.last_used, tool.name))
    return found[: max(0, limit)]


def count_use(
    catalog: Catalog,
    names: Sequence[str],
    ok: Sequence[bool],
    at: float,
    params: UsageParams,
) -> None:
    """Count one calls record: decayed calls and successes per tool (the warm set)."""
    half_life = (params.half_life_days or 36_500.0) * 86_400.0
    for name, success in zip(names, ok, strict=True):
        use = catalog.use.setdefault(name, ToolUse(at=at))
        decay = 0.5 ** (max(0.0, at - use.at) / half_life)
        use.calls, use.ok, use.at = use.calls * decay + 1.0, use.ok * decay + float(success), at
        if success:
            use.last = max(use.last, at)
