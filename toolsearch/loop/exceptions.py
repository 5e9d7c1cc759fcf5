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
    """Send the exception's type and message to the model; raise instead when configured to.

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
        return describe_exception(error.cause)


def describe_exception(exc: BaseException) -> str:
    """``"ValueError: city not found"``: the type names the problem when the message alone
    does not (a ``KeyError('x')`` has the message ``'x'``)."""
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
