"""The ``@tool`` decorator for functions and methods."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from toolsearch.tools.converter import ResultConverter
from toolsearch.tools.definition import ToolAnnotations

__all__ = ["ToolSpec", "get_tool_spec", "tool"]

F = TypeVar("F")
_MARKER = "__toolsearch_tool__"


@dataclass(eq=False)
class ToolSpec:
    """What ``@tool`` recorded on a function; compiled into a schema on first registration."""

    name: str
    description: str | None = None
    return_direct: bool = False
    result_converter: ResultConverter | None = None
    is_method: bool = False
    title: str | None = None
    annotations: ToolAnnotations | None = None
    output_schema: Mapping[str, Any] | None = None
    _binder: Any = field(default=None, repr=False)


@overload
def tool(function: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    return_direct: bool = False,
    result_converter: ResultConverter | None = None,
    title: str | None = None,
    annotations: ToolAnnotations | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> Callable[[F], F]: ...


def tool(
    function: Any = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    return_direct: bool = False,
    result_converter: ResultConverter | None = None,
    title: str | None = None,
    annotations: ToolAnnotations | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> Any:
    """Mark a function or method as a tool; bare (``@tool``) or with arguments.

    The function stays a plain function you can call and test. Pass it (or, for methods,
    the instance that owns them) to ``ChatClient...tools(...)`` or :func:`tool_callbacks`.

    Args:
        name: The tool name; defaults to the function name.
        description: What the tool does; defaults to the docstring (without its sections).
        return_direct: Send the tool's result straight to the caller instead of back to the
            model (when every tool called in that turn is return-direct).
        result_converter: Turns the return value into text; JSON by default.
        title: A human-readable name (MCP clients show it; models are not sent it).
        annotations: :class:`~toolsearch.tools.definition.ToolAnnotations` hints
            (read-only, destructive, idempotent, open world) for MCP clients.
        output_schema: The JSON Schema of the structured result; by default derived from a
            ``dict``, pydantic model, dataclass or ``TypedDict`` return annotation. Served
            over MCP, such a tool answers with ``structuredContent`` too.
    """

    def mark(target: Any) -> Any:
        inner = target.__func__ if isinstance(target, (staticmethod, classmethod)) else target
        if not callable(inner):
            raise TypeError(f"@tool needs a function or method, got {type(target).__name__}")
        spec = ToolSpec(
            name=name or inner.__name__,
            description=description,
            return_direct=return_direct,
            result_converter=result_converter,
            title=title,
            annotations=annotations,
            output_schema=output_schema,
            is_method=_looks_like_method(inner) and not isinstance(target, staticmethod),
        )
        setattr(inner, _MARKER, spec)
        return target

    if function is not None:
        return mark(function)
    return mark


def get_tool_spec(obj: Any) -> ToolSpec | None:
    """The ``@tool`` spec of a function, bound method or static/class method, if any."""
    inner = getattr(obj, "__func__", obj)
    spec = getattr(inner, _MARKER, None)
    return spec if isinstance(spec, ToolSpec) else None


def _looks_like_method(function: Any) -> bool:
    """Defined in a class body and takes ``self``/``cls`` first (``@staticmethod`` may be
    applied on top of ``@tool`` later, so the first parameter is what tells them apart)."""
    parts = getattr(function, "__qualname__", "").split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return False
    try:
        first = next(iter(inspect.signature(function).parameters), None)
    except (TypeError, ValueError):
        return True
    return first in ("self", "cls")
