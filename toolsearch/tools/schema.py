"""JSON Schema for tool inputs, generated from Python types with pydantic's public API.

Also the argument binders that turn a model's JSON arguments back into Python values:
one for function signatures, one for a single explicit input type, one for a raw schema.
"""

from __future__ import annotations

import collections.abc
import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, Union, get_args, get_origin

from toolsearch.errors import InvalidToolArgumentsError, ToolDefinitionError
from toolsearch.tools.context import ToolContext
from toolsearch.tools.docstrings import parse_docstring
from toolsearch.tools.params import ToolParam
from toolsearch.tools.validation import json_type_name, validate_json_value

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "ArgumentBinder",
    "InputTypeBinder",
    "SchemaBinder",
    "SignatureBinder",
    "clean_schema",
    "nested_deeper_than",
    "output_schema_of",
    "parse_arguments",
]

_UNSUPPORTED_ORIGINS: dict[Any, str] = {
    collections.abc.Callable: "callables",
    collections.abc.Generator: "generators",
    collections.abc.AsyncGenerator: "async generators",
    collections.abc.Iterator: "iterators",
    collections.abc.AsyncIterator: "async iterators",
    collections.abc.Coroutine: "coroutines",
    collections.abc.Awaitable: "awaitables",
}
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_LITERAL_VALUES = ("default", "examples", "example", "const", "enum")


class ArgumentBinder(Protocol):
    """Turns a model's JSON arguments into the positional and keyword arguments of a call."""

    @property
    def schema(self) -> dict[str, Any]: ...

    def bind(
        self, tool_name: str, input_json: str, context: ToolContext | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]: ...


def clean_schema(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keys, keeping properties that are named ``title``."""
    if isinstance(schema, list):
        return [clean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    cleaned: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _LITERAL_VALUES:
            cleaned[key] = value  # data, not schema: a default may hold a "title" key
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            cleaned[key] = {name: clean_schema(sub) for name, sub in value.items()}
        else:
            cleaned[key] = clean_schema(value)
    return cleaned


MAX_ARGUMENT_DEPTH = 64
"""How deeply a model's arguments may nest (objects and arrays). Deeper values are an
``InvalidToolArgumentsError`` the model reads: validating and converting them would
otherwise recurse until Python's stack gives out."""


def parse_arguments(tool_name: str, input_json: str | None) -> dict[str, Any]:
    """Parse a model's argument text into a JSON object, or raise a readable error."""
    text = (input_json or "").strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidToolArgumentsError(
            tool_name, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
        ) from None
    except RecursionError:  # nested past the parser's own limit
        value, too_deep = None, True
    else:
        too_deep = nested_deeper_than(value, MAX_ARGUMENT_DEPTH)
    if too_deep:
        raise InvalidToolArgumentsError(
            tool_name, f"arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
        )
    if not isinstance(value, dict):
        raise InvalidToolArgumentsError(
            tool_name, f"arguments must be a JSON object, got {json_type_name(value)}"
        )
    return value


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` levels (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _describe_validation_error(error: Any) -> str:
    parts = []
    for item in error.errors(include_url=False):
        location = ".".join(str(p) for p in item.get("loc", ()) if p != "__root__")
        parts.append(f"{location or 'input'}: {item.get('msg')}")
    return "; ".join(parts)


def _is_tool_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if get_origin(annotation) is Annotated:
        return _is_tool_context(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return len(members) == 1 and _is_tool_context(members[0])
    return False


def _admits_none(annotation: Any) -> bool:
    """Whether the type explicitly allows ``None`` (``X | None``); ``Any`` does not count."""
    if annotation is None or annotation is type(None):
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_admits_none(a) for a in get_args(annotation))
    return False


def _unsupported_kind(annotation: Any) -> str | None:
    """Name the unsupported kind of type inside ``annotation`` (callables, generators...)."""
    origin = get_origin(annotation) or annotation
    for unsupported, label in _UNSUPPORTED_ORIGINS.items():
        if origin is unsupported:
            return label
    if inspect.isfunction(annotation) or annotation is typing.Callable:
        return "callables"
    for arg in get_args(annotation):
        if isinstance(arg, (list, tuple)):  # Callable[[int], str] argument lists
            return "callables"
        found = _unsupported_kind(arg)
        if found:
            return found
    return None


@dataclass(frozen=True)
class _Parameter:
    name: str
    field_name: str
    positional: bool


class SignatureBinder:
    """Binds JSON arguments to a function's parameters; builds the schema from its hints."""

    def __init__(self, fn: Callable[..., Any], tool_name: str) -> None:
        import pydantic

        self.tool_name = tool_name
        target = inspect.unwrap(getattr(fn, "__func__", fn))
        try:
            signature = inspect.signature(fn)
            hints = typing.get_type_hints(target, include_extras=True)
        except (NameError, TypeError, ValueError) as exc:
            raise ToolDefinitionError(tool_name, f"cannot read the type hints: {exc}") from exc
        params = list(signature.parameters.values())
        doc = parse_docstring(inspect.getdoc(target))
        self.docstring_description = doc.description
        self.return_type = hints.get("return")
        self.context_param: str | None = None
        self._params: list[_Parameter] = []
        fields: dict[str, Any] = {}
        force_required: list[str] = []
        for index, param in enumerate(params):
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolDefinitionError(
                    tool_name,
                    f"parameter {param.name!r}: *args and **kwargs cannot be described to a model",
                )
            annotation = hints.get(param.name, Any)
            if _is_tool_context(annotation):
                self.context_param = param.name
                continue
            unsupported = _unsupported_kind(annotation)
            if unsupported:
                raise ToolDefinitionError(
                    tool_name,
                    f"parameter {param.name!r} has an unsupported type ({unsupported} "
                    "cannot be passed as JSON)",
                )
            tool_param = next(
                (m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, ToolParam)),
                None,
            )
            description = (tool_param.description if tool_param else None) or doc.params.get(
                param.name
            )
            has_default = param.default is not inspect.Parameter.empty
            if has_default:
                default: Any = param.default
            elif (tool_param and tool_param.required is False) or (
                (tool_param is None or tool_param.required is None) and _admits_none(annotation)
            ):
                default = None
            else:
                default = ...
            if tool_param and tool_param.required and default is not ...:
                force_required.append(param.name)
            field_name = f"p{index}"
            fields[field_name] = (
                annotation,
                pydantic.Field(default, alias=param.name, description=description),
            )
            self._params.append(
                _Parameter(param.name, field_name, param.kind is param.POSITIONAL_ONLY)
            )
        try:
            self._model = pydantic.create_model(
                f"{tool_name}_arguments",
                __config__=pydantic.ConfigDict(extra="forbid", populate_by_name=False),
                **fields,
            )
            schema = clean_schema(self._model.model_json_schema(by_alias=True))
        except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError) as exc:
            raise ToolDefinitionError(tool_name, f"unsupported parameter type: {exc}") from exc
        except Exception as exc:  # invalid-for-JSON-schema errors and friends
            raise ToolDefinitionError(tool_name, f"cannot build a JSON Schema: {exc}") from exc
        if force_required:
            required = list(schema.get("required", []))
            schema["required"] = required + [n for n in force_required if n not in required]
        schema.setdefault("properties", {})
        self._schema: dict[str, Any] = schema

    @property
    def schema(self) -> dict[str, Any]:
        return self._schema

    def bind(
        self, tool_name: str, input_json: str, context: ToolContext | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        import pydantic

        arguments = parse_arguments(tool_name, input_json)
        try:
            validated = self._model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            raise InvalidToolArgumentsError(tool_name, _describe_validation_error(exc)) from None
        args = tuple(getattr(validated, p.field_name) for p in self._params if p.positional)
        kwargs = {
            p.name: getattr(validated, p.field_name) for p in self._params if not p.positional
        }
        if self.context_param is not None:
            kwargs[self.context_param] = context if context is not None else ToolContext()
        return args, kwargs


_CONTEXT_NAMES = ("context", "tool_context", "ctx")


def _wants_context(fn: Callable[..., Any]) -> bool:
    """Whether ``fn(input, context)`` takes the tool context second: a parameter typed
    ``ToolContext``, or an untyped one named ``context``, ``tool_context`` or ``ctx``."""
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return False
    if len(params) < 2:
        return False
    try:
        hints = typing.get_type_hints(inspect.unwrap(getattr(fn, "__func__", fn)))
    except (NameError, TypeError):
        hints = {}
    second = params[1]
    if second.name in hints:
        return _is_tool_context(hints[second.name])
    return second.name in _CONTEXT_NAMES


class InputTypeBinder:
    """Binds JSON arguments to one input object: ``fn(request: WeatherRequest[, context])``."""

    def __init__(self, fn: Callable[..., Any], input_type: Any, tool_name: str) -> None:
        import pydantic

        self.tool_name = tool_name
        self._with_context = _wants_context(fn)
        unsupported = _unsupported_kind(input_type)
        if unsupported:
            raise ToolDefinitionError(tool_name, f"input type has {unsupported}")
        try:
            self._adapter = pydantic.TypeAdapter(input_type)
            schema = clean_schema(self._adapter.json_schema())
        except Exception as exc:
            raise ToolDefinitionError(tool_name, f"cannot build a JSON Schema: {exc}") from exc
        schema = _inline_top_level_ref(schema)
        if schema.get("type") != "object":
            raise ToolDefinitionError(
                tool_name, "the input type must describe a JSON object (a model or a dataclass)"
            )
        self._schema = schema

    @property
    def schema(self) -> dict[str, Any]:
        return self._schema

    def bind(
        self, tool_name: str, input_json: str, context: ToolContext | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        import pydantic

        arguments = parse_arguments(tool_name, input_json)
        try:
            value = self._adapter.validate_python(arguments)
        except pydantic.ValidationError as exc:
            raise InvalidToolArgumentsError(tool_name, _describe_validation_error(exc)) from None
        if self._with_context:
            return (value, context if context is not None else ToolContext()), {}
        return (value,), {}


def _inline_top_level_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """A recursive model's schema is ``{"$ref": ..., "$defs": ...}``: put the referenced
    object at the top (keeping ``$defs`` for the inner references)."""
    ref = schema.get("$ref")
    definitions = schema.get("$defs", {})
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = definitions.get(ref.rsplit("/", 1)[-1])
        if isinstance(target, dict):
            return {**target, "$defs": definitions}
    return schema


class SchemaBinder:
    """Binds JSON arguments checked against a hand-written schema: ``fn(arguments: dict)``."""

    def __init__(self, fn: Callable[..., Any], schema: Mapping[str, Any], tool_name: str) -> None:
        if schema.get("type", "object") != "object":
            raise ToolDefinitionError(tool_name, "the input schema must have type 'object'")
        self.tool_name = tool_name
        self._schema = dict(schema)
        self._with_context = _wants_context(fn)

    @property
    def schema(self) -> dict[str, Any]:
        return self._schema

    def bind(
        self, tool_name: str, input_json: str, context: ToolContext | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        arguments = parse_arguments(tool_name, input_json)
        problems = validate_json_value(self._schema, arguments)
        if problems:
            raise InvalidToolArgumentsError(tool_name, "; ".join(problems))
        if self._with_context:
            return (arguments, context if context is not None else ToolContext()), {}
        return (arguments,), {}


def output_schema_of(return_type: Any) -> dict[str, Any] | None:
    """The JSON Schema of a tool's structured result, from its return annotation: a
    ``dict``/``Mapping``, a pydantic model, a dataclass or a ``TypedDict`` (what the
    default converter writes as a JSON object, and MCP's ``structuredContent`` must be an
    object). ``None`` for any other type (text, numbers, lists, optional results...)."""
    if return_type is None or return_type is inspect.Signature.empty:
        return None
    base = return_type
    while get_origin(base) is Annotated:
        base = get_args(base)[0]
    origin = get_origin(base) or base
    objectlike = (
        origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping)
        or typing.is_typeddict(base)
        or (isinstance(base, type) and _is_model_or_dataclass(base))
    )
    if not objectlike:
        return None
    try:
        import pydantic

        schema = pydantic.TypeAdapter(return_type).json_schema(mode="serialization")
    except Exception:  # a type pydantic cannot describe: no declared structure
        return None
    schema = _inline_top_level_ref(clean_schema(schema))
    return schema if schema.get("type") == "object" else None


def _is_model_or_dataclass(kind: type) -> bool:
    import dataclasses

    import pydantic

    return issubclass(kind, pydantic.BaseModel) or dataclasses.is_dataclass(kind)
