"""What the framework front doors share besides the search-session core: importing an
optional framework, and converting framework tool objects once.

A framework hands toolsearch its own tool objects on every run (pydantic-ai's
``ToolDefinition``, LangChain's ``BaseTool``, the Agents SDK's ``FunctionTool``); a front
door turns them into toolsearch :class:`~toolsearch.tools.definition.ToolDefinition` values
through a :class:`DefinitionCache` (once per tool object, so a run does not re-hash a
2,000-tool catalog) and searches them through
:class:`~toolsearch.search.sessions.ToolSearchSessions`, the one search path.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from toolsearch._first_use import preload, warm_index
from toolsearch.errors import MissingExtraError
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "OWN_NAME_KEY",
    "DefinitionCache",
    "import_modules",
    "own_name",
    "preload",
    "renamed",
    "require",
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
