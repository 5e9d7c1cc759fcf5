"""Tool-argument augmentation: extra arguments the model fills in on every tool call.

Wrap tools with :func:`augment_tools` (or one with :class:`AugmentedToolCallback`) and a
pydantic model of the extra arguments: each wrapped tool's input schema gains the model's
fields (its reasoning, its confidence...), the model fills them in when it calls the tool,
and a consumer receives them, validated, as an :class:`AugmentedArgumentEvent`; they are
stripped from the arguments before the real tool runs, which never sees them::

    class Thinking(BaseModel):
        reasoning: str = Field(description="Why you call this tool, in one sentence")
        confidence: Literal["low", "medium", "high"] = Field(description="How sure you are")

    tools = augment_tools(get_forecast, mcp_tools.tool_callbacks(),
                          arguments=Thinking, consumer=lambda e: log.info(e.arguments))
    ChatClient.create(model).prompt("...").tools(tools).call()

A wrapped tool is a ``ToolCallback`` like any other, so it works for function,
from-schema and MCP tools, in the plain and the tool-search advisors. With content
capture on (:mod:`toolsearch.telemetry`) the extra arguments are also recorded on the
tool's ``execute_tool`` span, as ``toolsearch.tool.augmented_arguments``.

Modelled on the reference framework's ``AugmentedToolCallbackProvider``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import toolsearch.observe as hooks
from toolsearch.errors import InvalidToolArgumentsError, ToolDefinitionError
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition, ToolMetadata
from toolsearch.tools.schema import clean_schema, parse_arguments

__all__ = [
    "AUGMENTED_ARGUMENTS_ATTRIBUTE",
    "AugmentedArgumentEvent",
    "AugmentedToolCallback",
    "augment_tools",
]

T = TypeVar("T")

AUGMENTED_ARGUMENTS_ATTRIBUTE = "toolsearch.tool.augmented_arguments"
"""The span attribute holding the extra arguments (JSON), with content capture on."""


@dataclass(frozen=True)
class AugmentedArgumentEvent(Generic[T]):
    """What the consumer receives on each call of an augmented tool."""

    definition: ToolDefinition
    """The augmented definition (what the model saw)."""
    raw_input: str
    """The model's argument text, the extra arguments included."""
    arguments: T
    """The extra arguments, validated into the arguments model."""
    context: ToolContext | None = None
    """The call's tool context (the conversation id, a tenant...)."""


class AugmentedToolCallback(Generic[T]):
    """A tool whose input schema gains the fields of ``argument_type`` (a pydantic model or
    a dataclass); see :mod:`toolsearch.tools.augment`.

    On each call the extra arguments are validated (a mistake is an
    :class:`~toolsearch.errors.InvalidToolArgumentsError` the model reads, before the tool
    runs), handed to ``consumer`` and, with ``strip=True`` (the default), removed before
    ``delegate`` runs. With ``strip=False`` the delegate receives them too. The name,
    description, category and metadata (``return_direct``) stay the delegate's. A field
    the tool already has as a parameter raises :class:`~toolsearch.errors.ToolDefinitionError`.

    ``consumer`` may be async (awaited in ``acall``; run to completion in ``call``); an
    exception it raises fails the call like the tool's own would
    (:class:`~toolsearch.errors.ToolExecutionError` for the model).
    """

    def __init__(
        self,
        delegate: ToolCallback,
        argument_type: type[T],
        consumer: Callable[[AugmentedArgumentEvent[T]], Any] | None = None,
        *,
        strip: bool = True,
    ) -> None:
        import pydantic

        self._delegate = delegate
        self._type = argument_type
        self._consumer = consumer
        self._strip = strip
        name = delegate.definition.name
        try:
            self._adapter: Any = pydantic.TypeAdapter(argument_type)
            extra = clean_schema(self._adapter.json_schema())
        except Exception as exc:
            raise ToolDefinitionError(
                name, f"cannot build a JSON Schema for the augmented arguments: {exc}"
            ) from exc
        if extra.get("type") != "object" or not extra.get("properties"):
            raise ToolDefinitionError(
                name, "the augmented arguments must be a model or dataclass with fields"
            )
        self._fields = tuple(extra["properties"])
        self._definition = _augmented_definition(delegate.definition, extra)

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return self._delegate.metadata

    @property
    def delegate(self) -> ToolCallback:
        """The wrapped tool."""
        return self._delegate

    @property
    def argument_type(self) -> type[T]:
        return self._type

    @property
    def augmented_fields(self) -> tuple[str, ...]:
        """The names of the extra arguments."""
        return self._fields

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        forwarded, event = self._split(input_json, context)
        if self._consumer is not None:
            outcome = self._run_consumer(event)
            if inspect.isawaitable(outcome):
                from toolsearch._async import run_sync

                self._guard(lambda: run_sync(outcome))
        return self._delegate.call(forwarded, context)

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        forwarded, event = self._split(input_json, context)
        if self._consumer is not None:
            outcome = self._run_consumer(event)
            if inspect.isawaitable(outcome):
                try:
                    await outcome
                except Exception as exc:
                    raise self._consumer_error(exc) from exc
        return await self._delegate.acall(forwarded, context)

    def _split(
        self, input_json: str, context: ToolContext | None
    ) -> tuple[str, AugmentedArgumentEvent[T]]:
        """The arguments for the delegate, and the event for the consumer."""
        import pydantic

        name = self._definition.name
        arguments = parse_arguments(name, input_json)
        given = {key: arguments[key] for key in self._fields if key in arguments}
        try:
            value = self._adapter.validate_python(given)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in item.get('loc', ())) or 'input'}: {item.get('msg')}"
                for item in exc.errors(include_url=False)
            )
            raise InvalidToolArgumentsError(name, problems) from None
        hooks.annotate_tool_span(AUGMENTED_ARGUMENTS_ATTRIBUTE, lambda: given)
        event = AugmentedArgumentEvent(self._definition, input_json, value, context)
        if not self._strip:
            return input_json, event
        rest = {key: item for key, item in arguments.items() if key not in self._fields}
        return json.dumps(rest, ensure_ascii=False), event

    def _run_consumer(self, event: AugmentedArgumentEvent[T]) -> Any:
        assert self._consumer is not None
        consumer = self._consumer
        return self._guard(lambda: consumer(event))

    def _guard(self, run: Callable[[], Any]) -> Any:
        try:
            return run()
        except Exception as exc:
            raise self._consumer_error(exc) from exc

    def _consumer_error(self, exc: Exception) -> Exception:
        from toolsearch.errors import ToolExecutionError

        return ToolExecutionError(self._definition.name, exc)

    def __repr__(self) -> str:
        return (
            f"AugmentedToolCallback({self._delegate!r}, "
            f"{getattr(self._type, '__name__', self._type)!r})"
        )


def _augmented_definition(original: ToolDefinition, extra: Mapping[str, Any]) -> ToolDefinition:
    schema = dict(original.input_schema)
    name = original.name
    if schema.get("type", "object") != "object":
        raise ToolDefinitionError(name, "only tools with an object input schema can be augmented")
    properties = dict(schema.get("properties") or {})
    clash = sorted(set(properties) & set(extra["properties"]))
    if clash:
        raise ToolDefinitionError(
            name, f"already has parameters named {', '.join(clash)}; rename the augmented fields"
        )
    properties.update(extra["properties"])
    schema["type"] = "object"
    schema["properties"] = properties
    required = [*schema.get("required", ()), *extra.get("required", ())]
    if required:
        schema["required"] = list(dict.fromkeys(required))
    definitions = extra.get("$defs")
    if definitions:
        merged = dict(schema.get("$defs") or {})
        for key, value in definitions.items():
            if key in merged and merged[key] != value:
                raise ToolDefinitionError(
                    name, f"its schema and the augmented arguments both define $defs/{key}"
                )
            merged[key] = value
        schema["$defs"] = merged
    return ToolDefinition(name, original.description, schema, original.category)


def augment_tools(
    *tools: Any,
    arguments: type[T],
    consumer: Callable[[AugmentedArgumentEvent[T]], Any] | None = None,
    strip: bool = True,
) -> list[ToolCallback]:
    """Every tool given (anything ``.tools(...)`` accepts: ``@tool`` functions, objects with
    ``@tool`` methods, ``ToolCallback`` instances such as from-schema and MCP tools, lists of
    them), wrapped in an :class:`AugmentedToolCallback` with ``arguments`` as its extra
    arguments and ``consumer`` receiving them."""
    from toolsearch.tools.collect import tool_callbacks

    return [
        AugmentedToolCallback(callback, arguments, consumer, strip=strip)
        for callback in tool_callbacks(*tools)
    ]
