"""Limits on how often tools may be called within one user turn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["DEFAULT_PER_ANSWER", "LimitExceededAction", "ToolCallLimits"]

DEFAULT_PER_ANSWER = 200
"""Tool calls of one model answer the manager runs or refuses one by one
(:attr:`ToolCallLimits.per_answer`); the rest get one short error result each. Above the
default ``total`` (150), so with the default limits that one still speaks first: this bound
is there to bound the work an answer causes, not to change which calls run."""


class LimitExceededAction(StrEnum):
    """What happens when a call would exceed a limit."""

    THROW = "throw"
    """Raise :class:`~toolsearch.errors.ToolCallLimitExceededError` to the caller."""
    RETURN_ERROR_RESPONSE = "return_error_response"
    """Skip the call and tell the model, as its tool result, that the limit was reached."""


@dataclass(frozen=True)
class ToolCallLimits:
    """Call limits, counted over the calls made since the last user message.

    ``per_tool`` applies to each tool unless ``per_tool_overrides`` names it;
    ``excluded_tools`` are never limited and not counted in ``total``. ``None`` means no
    limit. By default a call over a limit is answered with an error result the model
    reads (``RETURN_ERROR_RESPONSE``): a model's excess is its mistake, and the loop never
    raises for a model's mistake; ``THROW`` raises to the caller instead. A model that
    ignores the error keeps receiving it; bound the loop with the advisor's
    ``max_iterations`` if that matters to you.

    ``per_answer`` (default :data:`DEFAULT_PER_ANSWER`, 200) bounds the calls of *one*
    model answer: the manager looks at the first ``per_answer`` calls only, and answers
    every call past them with a short error result (not run, not looked up, not counted
    towards the other limits), whatever ``on_exceed`` says, so the loop goes on. Without
    it, an answer of 10,000 calls (a broken or hostile model) made the manager look each
    one up and write each an error naming every offered tool, and the next request
    carried all of that (issue 47: 103-179 s). ``None`` removes the bound.
    """

    per_tool: int | None = 40
    per_tool_overrides: Mapping[str, int] = field(default_factory=dict)
    excluded_tools: frozenset[str] = frozenset()
    total: int | None = 150
    on_exceed: LimitExceededAction = LimitExceededAction.RETURN_ERROR_RESPONSE
    per_answer: int | None = DEFAULT_PER_ANSWER

    def __post_init__(self) -> None:
        object.__setattr__(self, "excluded_tools", frozenset(self.excluded_tools))
        object.__setattr__(self, "per_tool_overrides", dict(self.per_tool_overrides))
        object.__setattr__(self, "on_exceed", LimitExceededAction(self.on_exceed))
        for label, value in [
            ("per_tool", self.per_tool),
            ("total", self.total),
            ("per_answer", self.per_answer),
        ]:
            if value is not None and value < 1:
                raise ValueError(f"{label} must be at least 1 (or None for no limit)")
        for name, value in self.per_tool_overrides.items():
            if value < 0:
                raise ValueError(f"the limit for {name!r} must not be negative")

    def limit_for(self, tool_name: str) -> int | None:
        if tool_name in self.excluded_tools:
            return None
        return self.per_tool_overrides.get(tool_name, self.per_tool)
