"""What the framework front doors share besides the search-session core: importing an
optional framework, and converting framework tool objects once.

A framework hands toolsearch its own tool objects on every run (pydantic-ai's
``ToolDefinition``, LangChain's ``BaseTool``, the Agents SDK's ``FunctionTool``); a front
door turns them into toolsearch :class:`~toolsearch.tools.definition.ToolDefinition` values
through a :class:`DefinitionCache` (once per tool object, so a run does not re-hash a
2,000-tool catalog) and searches them through
:class:`~toolsearch.search.sessions.ToolSearchSessions`, the one search path.

:func:`take_turn` spreads the frameworks' own per-step work over a large tool set (work a
door cannot move off the event loop) across loop iterations when many runs step at once.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
import warnings
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from toolsearch._first_use import preload, start_loop_workers, warm_index
from toolsearch.errors import MissingExtraError
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "OWN_NAME_KEY",
    "BuiltOnce",
    "DefinitionCache",
    "import_modules",
    "own_name",
    "preload",
    "renamed",
    "require",
    "start_loop_workers",
    "take_turn",
    "warm_index",
]

OWN_NAME_KEY = "toolsearch.own_name"
"""The pydantic-ai ``ToolDefinition.metadata`` key holding a renamed tool's own name."""


def require(module: str, *, extra: str, feature: str, package: str) -> Any:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(feature, extra, package) from exc


def own_name(tool: Any) -> str:
    """A pydantic-ai tool's own name: the name it had before
    :class:`~toolsearch.integrations._pydantic_ai_toolset.PortableNamesToolset` gave it a
    wire name (kept in its ``metadata``), else its name."""
    metadata = tool.metadata or {}
    own = metadata.get(OWN_NAME_KEY)
    return own if isinstance(own, str) and own else str(tool.name)


def renamed(module: str, name: str, table: Mapping[str, str], namespace: Mapping[str, Any]) -> Any:
    """A door module's ``__getattr__``: the object now named ``table[name]`` in
    ``namespace``, with a ``DeprecationWarning`` naming the new name (issue 48 gave the doors
    one casing, ``ToolSearch...``, and the tool converter one name, ``to_tool_definition``);
    ``AttributeError`` for a name that was never renamed."""
    new = table.get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} is deprecated; use {module}.{new} (the same object)",
        DeprecationWarning,
        stacklevel=3,
    )
    return namespace[new]


def import_modules(*modules: str) -> None:
    """Import ``modules`` now (each one that is installed), so that a door's first request
    imports nothing on the event loop: a door calls it from its constructor and its
    ``warm_up()``, with what toolsearch itself loads at a first request (:func:`preload`).
    Importing a module already imported costs a dictionary lookup."""
    preload()
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            continue


class DefinitionCache:
    """Framework tool objects -> toolsearch definitions, converted once per object.

    Keys are given by the caller (cheap, e.g. ``(name, description, id(schema))``); each
    entry keeps the object it was made from alive, so an ``id`` in a key is never reused
    while the entry exists. Least recently used entries go beyond ``size``.
    """

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, tuple[Any, ToolDefinition]] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self, key: Hashable, source: Any, build: Callable[[], ToolDefinition]
    ) -> ToolDefinition:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found[1]
        definition = build()
        with self._lock:
            self._entries[key] = (source, definition)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return definition


_T = TypeVar("_T")


class BuiltOnce(Generic[_T]):
    """A value built at its first use, once (thread-safe): a door's work over a whole tool set
    (converting 300 schemas, building a framework's tool node) left out of its constructor,
    which an application may call on its event loop; ``await aget()`` builds it on a worker
    thread."""

    def __init__(self, build: Callable[[], _T]) -> None:
        self._build = build
        self._value: tuple[_T] | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._value is not None

    def get(self) -> _T:
        found = self._value
        if found is None:
            with self._lock:
                if self._value is None:
                    self._value = (self._build(),)
                found = self._value
        return found[0]

    async def aget(self) -> _T:
        found = self._value
        return found[0] if found is not None else await asyncio.to_thread(self.get)


class _Turns:
    """One event loop's turns: at most one caller goes on per iteration of the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._taken = False

    async def take(self) -> None:
        if not self._taken and not self._waiting:
            self._take()
            return
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._waiting.append(waiter)
        await waiter  # cancelled: the waiter is cancelled too, and the next one goes

    def _take(self) -> None:
        self._taken = True
        self._loop.call_soon(self._next)  # runs in the next iteration, not this one

    def _next(self) -> None:
        self._taken = False
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # its task goes on in the next iteration
                self._take()
                return


_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turns] = weakref.WeakKeyDictionary()
_TURNS_LOCK = threading.Lock()


async def take_turn() -> None:
    """Wait until no other caller on this event loop went on in the current iteration.

    A framework's run does synchronous work over the whole tool set at each step (pydantic-ai
    copies every tool definition three times per step; the Agents SDK hashes every tool's
    identity when a run starts), and ``asyncio`` runs every task that is ready in one
    iteration: ten runs that step together hold the loop for ten steps' work before a timer,
    or another request, gets its turn. A door awaits this before such a step, so concurrent
    runs step one per iteration (the same work, spread: the loop's other tasks wait for one
    run's step, not ten). Costs nothing when no other run is stepping. Not a lock: a caller
    that goes on and then waits for I/O holds up no one.
    """
    loop = asyncio.get_running_loop()
    with _TURNS_LOCK:
        turns = _TURNS.get(loop)
        if turns is None:
            turns = _TURNS[loop] = _Turns(loop)
    await turns.take()
