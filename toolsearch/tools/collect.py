"""Turning what users pass to ``.tools(...)`` into a flat list of ``ToolCallback``s."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from typing import Any

from toolsearch.errors import DuplicateToolNameError, ToolDefinitionError
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.decorator import ToolSpec, get_tool_spec
from toolsearch.tools.function import FunctionToolCallback
from toolsearch.tools.schema import SignatureBinder

__all__ = ["ensure_unique_names", "tool_callbacks"]


def tool_callbacks(*objects: Any) -> list[ToolCallback]:
    """Flatten tools given in any accepted form into ``ToolCallback``s, in order.

    Accepted: ``ToolCallback`` instances, ``@tool`` functions, bound ``@tool`` methods,
    objects whose class has ``@tool`` methods, plain functions (schema from their hints),
    and lists or tuples of any of these. Names must be unique.
    """
    found: list[ToolCallback] = []
    for obj in objects:
        _collect(obj, found)
    ensure_unique_names(found)
    return found


_VALIDATED: dict[int, tuple[ToolCallback, ...]] = {}
"""Tuples of callbacks already found unique, by identity (each kept alive here, so its id
cannot be reused while it is a key). Options objects are rebuilt many times per request
(``replace``, ``merged_with``) with the same tuple: it is checked once."""
_VALIDATED_LIMIT = 256


def ensure_unique_names(callbacks: Iterable[ToolCallback]) -> None:
    """Raise :class:`DuplicateToolNameError` naming the first repeated tool name.

    A tuple (immutable, and its callbacks' definitions are frozen) is checked once: the
    same tuple object passed again returns at once.
    """
    if type(callbacks) is tuple and _VALIDATED.get(id(callbacks)) is callbacks:
        return
    seen: set[str] = set()
    for callback in callbacks:
        name = callback.definition.name
        if name in seen:
            raise DuplicateToolNameError(name)
        seen.add(name)
    if type(callbacks) is tuple and len(callbacks) > 1:
        if len(_VALIDATED) >= _VALIDATED_LIMIT:
            _VALIDATED.clear()
        _VALIDATED[id(callbacks)] = callbacks


def _collect(obj: Any, out: list[ToolCallback]) -> None:
    if isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            _collect(item, out)
        return
    if _is_tool_callback(obj):
        out.append(obj)
        return
    spec = get_tool_spec(obj)
    if spec is not None and callable(obj):
        out.append(_from_spec(obj, spec))
        return
    if inspect.isclass(obj):
        _from_class(obj, out)
        return
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        out.append(FunctionToolCallback.from_function(obj))
        return
    if isinstance(obj, (str, bytes, int, float, bool, dict)) or obj is None:
        raise TypeError(
            f"cannot use {obj!r} as a tool: pass @tool functions, objects with @tool "
            "methods or ToolCallback instances"
        )
    before = len(out)
    for klass, member in _tool_members(type(obj)):
        bound = getattr(obj, member)
        spec = get_tool_spec(bound)
        assert spec is not None
        out.append(_from_spec(bound, spec, static=_is_static(klass, member)))
    if len(out) == before:
        raise ToolDefinitionError(
            type(obj).__name__, "the object has no @tool methods and is not a ToolCallback"
        )


_CALLBACK_TYPES: set[type] = set()
"""Classes whose instances passed the ``ToolCallback`` protocol check: the check of a
runtime protocol inspects every member (about 25 microseconds a tool, 8 ms for a request
with 300 tools, on the event loop of an async app), so a class is checked once."""


def _is_tool_callback(obj: Any) -> bool:
    if inspect.isclass(obj):
        return False
    if type(obj) in _CALLBACK_TYPES:
        return True
    found = (
        hasattr(obj, "definition")
        and hasattr(obj, "metadata")
        and callable(getattr(obj, "call", None))
        and isinstance(obj, ToolCallback)
    )
    if found:
        _CALLBACK_TYPES.add(type(obj))
    return found


def _is_static(klass: type, member: str) -> bool:
    return isinstance(vars(klass).get(member), staticmethod)


def _from_spec(function: Any, spec: ToolSpec, *, static: bool = False) -> FunctionToolCallback:
    if spec.is_method and not static and not inspect.ismethod(function):
        raise ToolDefinitionError(
            spec.name,
            "is a method: register the instance that owns it (for example "
            ".tools(MyTools())) or the bound method (.tools(my_tools.method))",
        )
    if spec._binder is None:
        spec._binder = SignatureBinder(function, spec.name)
    return FunctionToolCallback._from_signature(
        function,
        spec._binder,
        spec.name,
        spec.description,
        spec.return_direct,
        spec.result_converter,
        title=spec.title,
        annotations=spec.annotations,
        output_schema=spec.output_schema,
    )


def _from_class(cls: type, out: list[ToolCallback]) -> None:
    members = _tool_members(cls)
    if not members:
        raise ToolDefinitionError(cls.__name__, "the class has no @tool methods")
    for klass, member in members:
        attribute = getattr(cls, member)
        spec = get_tool_spec(attribute)
        assert spec is not None
        static = _is_static(klass, member)
        if spec.is_method and not static and not inspect.ismethod(attribute):
            raise ToolDefinitionError(
                spec.name,
                f"is a method of {cls.__name__}: register an instance ({cls.__name__}()), "
                "not the class",
            )
        out.append(_from_spec(attribute, spec, static=static))


def _tool_members(cls: type) -> Sequence[tuple[type, str]]:
    """Names of ``@tool`` members in definition order, base classes first, no repeats."""
    seen: dict[str, type] = {}
    for klass in reversed(cls.__mro__):
        for member, value in vars(klass).items():
            if get_tool_spec(value) is not None:
                seen[member] = klass
            elif member in seen:
                del seen[member]  # overridden without @tool
    return [(klass, member) for member, klass in seen.items()]
