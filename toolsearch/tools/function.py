"""``FunctionToolCallback``: a Python callable exposed as a tool."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from toolsearch.errors import ToolExecutionError
from toolsearch.tools.context import ToolContext
from toolsearch.tools.converter import DEFAULT_RESULT_CONVERTER, ResultConverter
from toolsearch.tools.definition import ToolAnnotations, ToolDefinition, ToolMetadata
from toolsearch.tools.schema import (
    ArgumentBinder,
    InputTypeBinder,
    SchemaBinder,
    SignatureBinder,
    output_schema_of,
)

__all__ = ["FunctionToolCallback"]


class FunctionToolCallback:
    """A tool backed by a Python callable (sync or async).

    Build one with :meth:`from_function` (schema from the signature, as ``@tool`` does),
    :meth:`from_input_type` (one input object, e.g. a pydantic model or dataclass) or
    :meth:`from_schema` (an explicit name, description and JSON Schema; the function gets
    the arguments as a dict).

    ``call`` / ``acall`` keep the ``ToolCallback`` contract (:mod:`toolsearch.errors`):
    the arguments are checked first (:class:`~toolsearch.errors.InvalidToolArgumentsError`);
    an exception from the function, or from converting its result, raises
    :class:`~toolsearch.errors.ToolExecutionError` with that exception as ``cause``.
    """

    def __init__(
        self,
        *,
        definition: ToolDefinition,
        function: Callable[..., Any],
        binder: ArgumentBinder,
        metadata: ToolMetadata | None = None,
        result_converter: ResultConverter | None = None,
        return_type: Any = None,
    ) -> None:
        self._definition = definition
        self._function = function
        self._binder = binder
        self._metadata = metadata or ToolMetadata()
        self._converter = result_converter or DEFAULT_RESULT_CONVERTER
        self._return_type = return_type

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        return_direct: bool = False,
        result_converter: ResultConverter | None = None,
        title: str | None = None,
        annotations: ToolAnnotations | None = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> FunctionToolCallback:
        """A tool from a function's signature: type hints, defaults and docstring (its
        output schema from the return annotation unless given; see ``@tool``)."""
        tool_name = name or getattr(function, "__name__", None) or type(function).__name__
        binder = SignatureBinder(function, tool_name)
        return cls._from_signature(
            function,
            binder,
            tool_name,
            description,
            return_direct,
            result_converter,
            title=title,
            annotations=annotations,
            output_schema=output_schema,
        )

    @classmethod
    def _from_signature(
        cls,
        function: Callable[..., Any],
        binder: SignatureBinder,
        tool_name: str,
        description: str | None,
        return_direct: bool,
        result_converter: ResultConverter | None,
        *,
        title: str | None = None,
        annotations: ToolAnnotations | None = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> FunctionToolCallback:
        text = description if description is not None else binder.docstring_description
        if output_schema is None and result_converter is None:
            output_schema = output_schema_of(binder.return_type)  # JSON of an object
        definition = ToolDefinition(
            name=tool_name,
            description=text or tool_name,
            input_schema=binder.schema,
            title=title,
            annotations=annotations,
            output_schema=output_schema,
        )
        return cls(
            definition=definition,
            function=function,
            binder=binder,
            metadata=ToolMetadata(return_direct=return_direct),
            result_converter=result_converter,
            return_type=binder.return_type,
        )

    @classmethod
    def from_input_type(
        cls,
        function: Callable[..., Any],
        input_type: Any,
        *,
        name: str,
        description: str,
        return_direct: bool = False,
        result_converter: ResultConverter | None = None,
    ) -> FunctionToolCallback:
        """A tool whose function takes one validated input object (and optionally the context).

        ``function(request)`` or ``function(request, context)``; ``input_type`` is a pydantic
        model, a dataclass or a ``TypedDict``.
        """
        binder = InputTypeBinder(function, input_type, name)
        return cls(
            definition=ToolDefinition(
                name=name, description=description, input_schema=binder.schema
            ),
            function=function,
            binder=binder,
            metadata=ToolMetadata(return_direct=return_direct),
            result_converter=result_converter,
        )

    @classmethod
    def from_schema(
        cls,
        function: Callable[..., Any],
        *,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        return_direct: bool = False,
        result_converter: ResultConverter | None = None,
    ) -> FunctionToolCallback:
        """A tool with a hand-written schema; ``function(arguments: dict[, context])``."""
        binder = SchemaBinder(function, input_schema, name)
        return cls(
            definition=ToolDefinition(
                name=name, description=description, input_schema=binder.schema
            ),
            function=function,
            binder=binder,
            metadata=ToolMetadata(return_direct=return_direct),
            result_converter=result_converter,
        )

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    @property
    def function(self) -> Callable[..., Any]:
        return self._function

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        """Validate the arguments, run the function and convert its result."""
        args, kwargs = self._binder.bind(self._definition.name, input_json, context)
        try:
            result = self._function(*args, **kwargs)
            if inspect.isawaitable(result):
                from toolsearch._async import run_sync

                result = run_sync(result)
            return self._converter.convert(result, self._return_type)
        except Exception as exc:
            raise ToolExecutionError(self._definition.name, exc) from exc

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        """Like :meth:`call`; a sync function runs in a worker thread."""
        import asyncio

        args, kwargs = self._binder.bind(self._definition.name, input_json, context)
        try:
            if inspect.iscoroutinefunction(inspect.unwrap(self._function)):
                result = await self._function(*args, **kwargs)
            else:
                result = await asyncio.to_thread(self._function, *args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
            return self._converter.convert(result, self._return_type)
        except Exception as exc:
            raise ToolExecutionError(self._definition.name, exc) from exc

    def __repr__(self) -> str:
        return f"FunctionToolCallback(name={self._definition.name!r})"
