"""Logic written once, run sync or async: the package's sans-IO cores and their drivers.

Where a behaviour has a blocking and an awaiting face (a tool loop, a turn of tool calls,
one tool execution), its logic is one generator, the *core*: it does everything that needs
no I/O itself and ``yield``s an *effect* where I/O is due (call the model, run this tool,
open this session); the value sent back is the effect's result, and an exception the
effect raised is thrown back in at the ``yield``, so the core's ``try``/``finally`` and
``except`` blocks see it as if the call had been made in place. Two thin drivers run a
core: :func:`drive` with a blocking handler, :func:`adrive` with an awaiting one.

The sync face therefore never touches an event loop, and this module imports nothing
(``import toolsearch`` stays light): an ``async def`` needs no ``asyncio``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeAlias, TypeVar

__all__ = ["Steps", "adrive", "drive"]

T = TypeVar("T")
E = TypeVar("E")

Steps: TypeAlias = Generator[E, Any, T]
"""A core: yields effects of type ``E``, is sent their results, returns a ``T``."""


def drive(steps: Generator[E, Any, T], handle: Callable[[E], Any]) -> T:
    """Run a core to its end, each effect handled by the blocking ``handle``."""
    send: Callable[[Any], E] = steps.send
    value: Any = None
    while True:
        try:
            effect = send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            value = handle(effect)
            send = steps.send
        except BaseException as exc:  # the core sees the effect's failure where it asked
            value = exc
            send = steps.throw


async def adrive(steps: Generator[E, Any, T], handle: Callable[[E], Awaitable[Any]]) -> T:
    """Run a core to its end, each effect awaited through ``handle``."""
    send: Callable[[Any], E] = steps.send
    value: Any = None
    while True:
        try:
            effect = send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            value = await handle(effect)
            send = steps.send
        except BaseException as exc:  # cancellation too: the core's finally blocks run
            value = exc
            send = steps.throw
