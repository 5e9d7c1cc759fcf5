"""Extensions from other distributions: rows of the extension tables found by entry points.

Three tables name what a user can type: the index kinds (:mod:`toolsearch.indexes.kinds`),
the provider adapters (:mod:`toolsearch.models.providers`) and the commands of the
``toolsearch`` command line (:mod:`toolsearch.cli`). Each holds toolsearch's own rows; a
package of yours adds a row by declaring an entry point in its ``pyproject.toml``::

    [project.entry-points."toolsearch.index_kinds"]
    mybackend = "my_package.kind:KIND"          # an IndexKindRow named "mybackend"

    [project.entry-points."toolsearch.providers"]
    myprovider = "my_package.provider:ROW"      # a ProviderRow named "myprovider"

    [project.entry-points."toolsearch.cli"]
    mycommand = "my_package.cli:app"            # () -> a typer.Typer or click command

Once installed, the name works everywhere a name is typed (``make_index("mybackend")``,
the settings' ``index_type``, ``toolsearch mcp proxy --index mybackend``, ``toolsearch
index build --kind mybackend``, ``toolsearch mycommand``).

**Lazily.** ``import toolsearch`` reads no entry point. A table reads the installed
distributions' metadata only when a name is not one of its own rows, or when it lists its
names (a help text, an error message); it imports an entry point's module only when that
row is asked for by name (or, for the rows' attributes, when the table lists them).

**A broken plugin breaks only itself.** Asking for it by name raises :class:`PluginError`
naming the distribution and the entry point (its module fails to import, the object is not
a row, the row's name is not the entry point's); listing skips it with a warning; the
built-in rows never depend on it, and a plugin never replaces a built-in name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from toolsearch.errors import PluginError

__all__ = [
    "CLI_GROUP",
    "INDEX_KINDS_GROUP",
    "PROVIDERS_GROUP",
    "Plugin",
    "find_plugin",
    "load_row",
    "load_rows",
    "plugins",
    "warn_broken",
]

INDEX_KINDS_GROUP = "toolsearch.index_kinds"
"""Entry points whose object is an :class:`~toolsearch.indexes.kinds.IndexKindRow`."""
PROVIDERS_GROUP = "toolsearch.providers"
"""Entry points whose object is a :class:`~toolsearch.models.providers.ProviderRow`."""
CLI_GROUP = "toolsearch.cli"
"""Entry points whose object is a function without arguments returning a ``typer.Typer``
or a click command: the command ``toolsearch NAME``."""

_log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Plugin:
    """One entry point of a toolsearch group, not loaded yet."""

    group: str
    """The group (:data:`INDEX_KINDS_GROUP`...)."""
    name: str
    """The entry point's name: the name users type."""
    value: str
    """What it points at, ``"module:attribute"``."""
    distribution: str
    """The distribution that declares it (``""`` when the metadata does not say)."""

    @property
    def origin(self) -> str:
        """``entry point 'mybackend = my_package.kind:KIND' of distribution 'my-backend'``."""
        where = f"entry point {self.name!r} = {self.value!r} in group {self.group!r}"
        return f"{where} of distribution {self.distribution!r}" if self.distribution else where

    def load(self) -> Any:
        """The object the entry point names, imported now; :class:`PluginError` when its
        module or attribute cannot be loaded (the original error is the cause)."""
        module, _, attribute = self.value.partition(":")
        try:
            import importlib

            target: Any = importlib.import_module(module.strip())
            for part in attribute.strip().split(".") if attribute.strip() else ():
                target = getattr(target, part)
        except Exception as exc:  # any failure of someone else's code is the plugin's
            raise PluginError(
                self.distribution, self.group, self.name, f"{type(exc).__name__}: {exc}"
            ) from exc
        return target


def plugins(group: str) -> tuple[Plugin, ...]:
    """The entry points of ``group`` in the installed distributions, sorted by name (the
    first of two with one name wins, as :mod:`importlib.metadata` orders them); nothing is
    imported."""
    from importlib.metadata import entry_points

    found: dict[str, Plugin] = {}
    for point in entry_points(group=group):
        dist = getattr(point, "dist", None)
        distribution = str(getattr(dist, "name", "") or "") if dist is not None else ""
        found.setdefault(point.name, Plugin(group, point.name, point.value, distribution))
    return tuple(found[name] for name in sorted(found))


def find_plugin(group: str, name: str) -> Plugin | None:
    """The entry point ``name`` of ``group``, or ``None``."""
    return next((plugin for plugin in plugins(group) if plugin.name == name), None)


def load_row(plugin: Plugin, row_type: type[T], name_of: Callable[[T], str]) -> T:
    """The row ``plugin`` names, checked: an instance of ``row_type`` whose name is the entry
    point's; :class:`PluginError` otherwise."""
    row = plugin.load()
    if not isinstance(row, row_type):
        raise PluginError(
            plugin.distribution,
            plugin.group,
            plugin.name,
            f"it names a {type(row).__name__}, not a {row_type.__name__}",
        )
    if name_of(row) != plugin.name:
        raise PluginError(
            plugin.distribution,
            plugin.group,
            plugin.name,
            f"its row is named {name_of(row)!r}: the entry point and the row must agree",
        )
    return row


_warned: set[tuple[str, str]] = set()


def warn_broken(error: PluginError) -> None:
    """Log that a plugin is left out of a list, once per process and plugin (every help
    text lists the kinds: the warning is said once, not per list)."""
    key = (error.group, error.name)
    if key not in _warned:
        _warned.add(key)
        _log.warning("%s (left out of the list)", error)


def load_rows(
    group: str, row_type: type[T], name_of: Callable[[T], str], builtin: frozenset[str]
) -> tuple[T, ...]:
    """Every loadable row of ``group`` whose name is not built in; a broken one is left out
    with a warning naming it (listing never fails because of a plugin)."""
    rows = []
    for plugin in plugins(group):
        if plugin.name in builtin:
            _log.warning("%s is ignored: %r is a built-in name", plugin.origin, plugin.name)
            continue
        try:
            rows.append(load_row(plugin, row_type, name_of))
        except PluginError as exc:
            warn_broken(exc)
    return tuple(rows)
