"""Deciding what a failing tool means: a result for the model, or an error for the caller."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from toolsearch.errors import ToolExecutionError

__all__ = ["DefaultToolExecutionExceptionProcessor", "ToolExecutionExceptionProcessor"]


@runtime_checkable
class ToolExecutionExceptionProcessor(Protocol):
    """Turn a tool failure into the text the model receives, or raise it."""

    def process(self, error: ToolExecutionError) -> str: ...


class DefaultToolExecutionExceptionProcessor:
    """Send the exception's message to the model; raise instead when configured to.

    ``always_throw=True`` raises every failure; ``rethrow`` lists exception types (of the
    tool's original exception) that are raised while others go back to the model.
    ``KeyboardInterrupt`` and ``SystemExit`` are never caught in the first place.
    """

    def __init__(
        self, *, always_throw: bool = False, rethrow: tuple[type[BaseException], ...] = ()
    ) -> None:
        self.always_throw = always_throw
        self.rethrow = rethrow

    def process(self, error: ToolExecutionError) -> str:
        if self.always_throw or isinstance(error.cause, self.rethrow):
            raise error
        return str(error.cause) or type(error.cause).__name__
