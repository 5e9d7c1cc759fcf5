"""FunctionToolCallback: the three construction forms, call/acall, results, errors, context."""

import asyncio
import contextvars
import dataclasses
import enum
import json
import threading
from typing import Annotated, Any

import pydantic
import pytest
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from toolsearch import (
    FunctionToolCallback,
    InvalidToolArgumentsError,
    JsonResultConverter,
    ResultConverter,
    ToolContext,
    ToolDefinitionError,
    ToolExecutionError,
    ToolParam,
    ToolsearchError,
    tool,
    tool_callbacks,
)


class WeatherRequest(pydantic.BaseModel):
    city: str
    days: int = 1


@dataclasses.dataclass
class AlarmRequest:
    time: str
    label: str = "alarm"


class SearchRequest(TypedDict):
    query: str
    limit: int


class Temperature(pydantic.BaseModel):
    city: str
    celsius: float


@dataclasses.dataclass
class Reading:
    sensor: str
    values: list[int]


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


class Boom(RuntimeError):
    pass


WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def from_fn(fn, **kwargs) -> FunctionToolCallback:
    return FunctionToolCallback.from_function(fn, **kwargs)


# --------------------------------------------------------------------------- from_function


def test_from_function_uses_signature_and_docstring():
    def forecast(city: str, days: int = 2) -> str:
        """Forecast the weather.

        Args:
            city: The city.
        """
        return f"{city} for {days} days"

    cb = from_fn(forecast)
    assert cb.definition.name == "forecast"
    assert cb.definition.description == "Forecast the weather."
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city."},
            "days": {"type": "integer", "default": 2},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert cb.metadata.return_direct is False
    assert cb.function is forecast
    assert cb.call('{"city": "Rome"}') == "Rome for 2 days"
    assert cb.call('{"city": "Rome", "days": 5}') == "Rome for 5 days"


def test_from_function_overrides():
    def f(x: int) -> int:
        """Docstring."""
        return x

    cb = from_fn(
        f,
        name="renamed",
        description="Explicit.",
        return_direct=True,
        result_converter=_Prefix("P:"),
    )
    assert cb.definition.name == "renamed"
    assert cb.definition.description == "Explicit."
    assert cb.metadata.return_direct is True
    assert cb.call('{"x": 3}') == "P:3"


def test_empty_or_blank_arguments_mean_no_arguments():
    def ping() -> str:
        return "pong"

    cb = from_fn(ping)
    assert cb.call("") == "pong"
    assert cb.call("   ") == "pong"
    assert cb.call("{}") == "pong"


# --------------------------------------------------------------------------- from_input_type


def test_from_input_type_with_pydantic_model():
    seen = []

    def weather(request: WeatherRequest) -> str:
        seen.append(request)
        return f"{request.city}:{request.days}"

    cb = FunctionToolCallback.from_input_type(
        weather, WeatherRequest, name="get_weather", description="Get the weather."
    )
    assert cb.definition.name == "get_weather"
    assert cb.definition.description == "Get the weather."
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 1},
        },
        "required": ["city"],
    }
    assert cb.call('{"city": "Lima"}') == "Lima:1"
    assert seen == [WeatherRequest(city="Lima", days=1)]
    assert asyncio.run(cb.acall('{"city": "Quito", "days": 3}')) == "Quito:3"


def test_from_input_type_with_context():
    def weather(request: WeatherRequest, context: ToolContext) -> str:
        return f"{request.city}:{context['tenant']}"

    cb = FunctionToolCallback.from_input_type(
        weather, WeatherRequest, name="get_weather", description="Get the weather."
    )
    assert cb.call('{"city": "Lima"}', ToolContext({"tenant": "acme"})) == "Lima:acme"
    assert asyncio.run(cb.acall('{"city": "Lima"}', ToolContext({"tenant": "b"}))) == "Lima:b"


def test_from_input_type_with_context_but_none_given_receives_empty_context():
    received = []

    def weather(request: WeatherRequest, context: ToolContext) -> str:
        received.append(context)
        return request.city

    cb = FunctionToolCallback.from_input_type(weather, WeatherRequest, name="w", description="d")
    assert cb.call('{"city": "Lima"}') == "Lima"
    assert isinstance(received[0], ToolContext)
    assert dict(received[0]) == {}


def test_from_input_type_with_dataclass():
    def alarm(request: AlarmRequest) -> str:
        assert isinstance(request, AlarmRequest)
        return f"{request.label}@{request.time}"

    cb = FunctionToolCallback.from_input_type(
        alarm, AlarmRequest, name="set_alarm", description="Set an alarm."
    )
    schema = cb.definition.input_schema
    assert schema["type"] == "object"
    assert schema["properties"] == {
        "time": {"type": "string"},
        "label": {"type": "string", "default": "alarm"},
    }
    assert schema["required"] == ["time"]
    assert "title" not in schema
    assert cb.call('{"time": "07:00"}') == "alarm@07:00"


def test_from_input_type_with_typed_dict():
    def search(request: SearchRequest) -> str:
        return f"{request['query']}:{request['limit']}"

    cb = FunctionToolCallback.from_input_type(
        search, SearchRequest, name="search", description="Search."
    )
    schema = cb.definition.input_schema
    assert schema["properties"] == {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
    }
    assert sorted(schema["required"]) == ["limit", "query"]
    assert "title" not in schema
    assert cb.call('{"query": "q", "limit": 2}') == "q:2"


def test_from_input_type_async_function():
    async def weather(request: WeatherRequest) -> str:
        await asyncio.sleep(0)
        return request.city.upper()

    cb = FunctionToolCallback.from_input_type(
        weather, WeatherRequest, name="get_weather", description="Get the weather."
    )
    assert cb.call('{"city": "lima"}') == "LIMA"
    assert asyncio.run(cb.acall('{"city": "quito"}')) == "QUITO"


def test_from_input_type_invalid_arguments():
    calls = []
    cb = FunctionToolCallback.from_input_type(
        calls.append, WeatherRequest, name="get_weather", description="Get the weather."
    )
    with pytest.raises(InvalidToolArgumentsError) as info:
        cb.call('{"city": "Lima", "days": "many"}')
    assert info.value.tool_name == "get_weather"
    assert "'get_weather'" in str(info.value)
    assert "days" in str(info.value)
    with pytest.raises(InvalidToolArgumentsError) as info:
        cb.call('{"days": 2}')
    assert "city" in str(info.value)
    assert calls == []


def test_from_input_type_rejects_non_object_input_types():
    with pytest.raises(ToolDefinitionError) as info:
        FunctionToolCallback.from_input_type(lambda x: x, int, name="count", description="d")
    assert info.value.tool_name == "count"
    assert "'count'" in str(info.value)


# --------------------------------------------------------------------------- from_schema


def test_from_schema_passes_a_dict_and_keeps_the_schema():
    seen = []

    def weather(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return f"{arguments['city']}:{arguments.get('units', 'metric')}"

    cb = FunctionToolCallback.from_schema(
        weather,
        name="get_weather",
        description="Get the weather.",
        input_schema=WEATHER_SCHEMA,
    )
    assert cb.definition.name == "get_weather"
    assert cb.definition.description == "Get the weather."
    assert cb.definition.input_schema == WEATHER_SCHEMA
    assert cb.call('{"city": "Oslo", "units": "imperial"}') == "Oslo:imperial"
    assert seen == [{"city": "Oslo", "units": "imperial"}]
    assert asyncio.run(cb.acall('{"city": "Bergen"}')) == "Bergen:metric"


def test_from_schema_with_context():
    def weather(arguments: dict[str, Any], context: ToolContext) -> str:
        return f"{arguments['city']}:{context.get('tenant')}"

    cb = FunctionToolCallback.from_schema(
        weather, name="w", description="d", input_schema=WEATHER_SCHEMA
    )
    assert cb.call('{"city": "Oslo"}', ToolContext({"tenant": "t1"})) == "Oslo:t1"
    assert cb.call('{"city": "Oslo"}') == "Oslo:None"


def test_from_schema_return_direct_and_converter():
    cb = FunctionToolCallback.from_schema(
        lambda arguments: arguments,
        name="echo",
        description="Echo.",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}}},
        return_direct=True,
        result_converter=_Prefix("R:"),
    )
    assert cb.metadata.return_direct is True
    assert cb.call('{"a": 1}') == "R:{'a': 1}"


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        ('{"units": "metric"}', ["city", "missing"]),
        ('{"city": 42}', ["city", "string"]),
        ('{"city": "Oslo", "units": "kelvin"}', ["units", "kelvin"]),
        ('{"city": "Oslo", "days": 9}', ["days", "7"]),
        ('{"city": "Oslo", "days": 2.5}', ["days", "integer"]),
        ('{"city": "Oslo", "wind": true}', ["wind"]),
    ],
    ids=["missing-required", "wrong-type", "enum", "maximum", "not-integer", "additional"],
)
def test_from_schema_validates_arguments(arguments, fragments):
    calls = []
    cb = FunctionToolCallback.from_schema(
        calls.append, name="get_weather", description="d", input_schema=WEATHER_SCHEMA
    )
    with pytest.raises(InvalidToolArgumentsError) as info:
        cb.call(arguments)
    assert info.value.tool_name == "get_weather"
    message = str(info.value)
    assert "'get_weather'" in message
    for fragment in fragments:
        assert fragment in message
    with pytest.raises(InvalidToolArgumentsError):
        asyncio.run(cb.acall(arguments))
    assert calls == []


def test_from_schema_validates_nested_refs():
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["items"],
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"sku": {"type": "string"}},
                "required": ["sku"],
            }
        },
    }
    cb = FunctionToolCallback.from_schema(
        lambda arguments: len(arguments["items"]),
        name="order",
        description="d",
        input_schema=schema,
    )
    assert cb.call('{"items": [{"sku": "a"}, {"sku": "b"}]}') == "2"
    with pytest.raises(InvalidToolArgumentsError) as info:
        cb.call('{"items": [{"sku": "a"}, {"qty": 1}]}')
    assert "sku" in str(info.value)


def test_from_schema_rejects_non_object_schema():
    with pytest.raises(ToolDefinitionError) as info:
        FunctionToolCallback.from_schema(
            lambda a: a, name="listy", description="d", input_schema={"type": "array"}
        )
    assert info.value.tool_name == "listy"


# --------------------------------------------------------------------------- sync and async


def test_async_function_tool_via_call_and_acall():
    @tool
    async def slow_add(a: int, b: int) -> int:
        """Add slowly."""
        await asyncio.sleep(0)
        return a + b

    cb = tool_callbacks(slow_add)[0]
    assert cb.call('{"a": 1, "b": 2}') == "3"
    assert asyncio.run(cb.acall('{"a": 3, "b": 4}')) == "7"


def test_sync_call_of_async_tool_inside_a_running_loop():
    async def inner(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    cb = from_fn(inner)

    async def main() -> str:
        return cb.call('{"x": 21}')

    assert asyncio.run(main()) == "42"


_REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def test_an_async_tool_called_sync_sees_the_callers_context_vars_on_either_path():
    async def which() -> str:
        await asyncio.sleep(0)
        return _REQUEST_ID.get()

    cb = from_fn(which)
    token = _REQUEST_ID.set("outside-a-loop")
    try:
        assert cb.call("{}") == "outside-a-loop"  # asyncio.run in this thread
    finally:
        _REQUEST_ID.reset(token)

    async def main() -> str:
        _REQUEST_ID.set("inside-a-loop")
        return cb.call("{}")  # a worker loop thread: the context goes along

    assert asyncio.run(main()) == "inside-a-loop"


def test_sync_tool_via_acall_runs_off_the_event_loop_thread():
    threads = []

    def where() -> str:
        threads.append(threading.get_ident())
        return "ok"

    cb = from_fn(where)

    async def main() -> tuple[str, int]:
        return await cb.acall("{}"), threading.get_ident()

    result, loop_thread = asyncio.run(main())
    assert result == "ok"
    assert threads
    assert threads[0] != loop_thread


def test_acall_runs_several_async_tools_concurrently():
    async def step(n: int) -> int:
        await asyncio.sleep(0)
        return n

    cb = from_fn(step)

    async def main() -> list[str]:
        return await asyncio.gather(*(cb.acall(json.dumps({"n": n})) for n in range(5)))

    assert asyncio.run(main()) == ["0", "1", "2", "3", "4"]


# --------------------------------------------------------------------------- tool context


def test_context_is_injected_into_function_tools():
    received = []

    @tool
    def get_weather(city: str, context: ToolContext) -> str:
        """Weather for a tenant."""
        received.append(context)
        return f"{city}:{context['tenant_id']}"

    cb = tool_callbacks(get_weather)[0]
    assert "context" not in cb.definition.input_schema["properties"]
    context = ToolContext({"tenant_id": "acme"})
    assert cb.call('{"city": "Oslo"}', context) == "Oslo:acme"
    assert received[-1] == {"tenant_id": "acme"}
    assert isinstance(received[-1], ToolContext)
    assert asyncio.run(cb.acall('{"city": "Oslo"}', ToolContext({"tenant_id": "b"}))) == "Oslo:b"


def test_context_parameter_in_any_position_and_optional_form():
    def f(ctx: ToolContext | None, a: int, b: Annotated[int, ToolParam(description="b")]) -> str:
        return f"{a + b}:{dict(ctx)}"

    cb = from_fn(f)
    assert set(cb.definition.input_schema["properties"]) == {"a", "b"}
    assert cb.call('{"a": 1, "b": 2}', ToolContext({"k": 1})) == "3:{'k': 1}"


def test_context_is_empty_when_none_is_given():
    def f(context: ToolContext) -> int:
        assert isinstance(context, ToolContext)
        return len(context)

    assert from_fn(f).call("{}") == "0"


def test_context_keys_sent_by_the_model_are_rejected():
    def f(city: str, context: ToolContext) -> str:
        return context.get("tenant", "none")

    cb = from_fn(f)
    with pytest.raises(InvalidToolArgumentsError):
        cb.call('{"city": "x", "context": {"tenant": "evil"}}')


def test_context_injected_into_method_tools():
    class Tools:
        @tool
        def whoami(self, context: ToolContext) -> str:
            """Who is calling."""
            return context["user"]

    cb = tool_callbacks(Tools())[0]
    assert cb.definition.input_schema["properties"] == {}
    assert cb.call("{}", ToolContext({"user": "ada"})) == "ada"


def test_tool_cannot_mutate_the_context():
    def f(context: ToolContext) -> str:
        context.context["x"] = 1  # type: ignore[index]
        return "mutated"

    cb = from_fn(f)
    context = ToolContext({"a": 1})
    with pytest.raises(ToolExecutionError) as info:
        cb.call("{}", context)
    assert isinstance(info.value.__cause__, TypeError)
    assert dict(context) == {"a": 1}


# --------------------------------------------------------------------------- results


class _Prefix:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def convert(self, result: Any, return_type: Any = None) -> str:
        return f"{self.prefix}{result}"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        ('"quoted"', '"quoted"'),
        ("", ""),
        (None, "Done"),
        (42, "42"),
        (2.5, "2.5"),
        (True, "true"),
        ([1, "a", None], '[1,"a",null]'),
        ({"a": 1, "b": [True]}, '{"a":1,"b":[true]}'),
        (Temperature(city="Oslo", celsius=-3.5), '{"city":"Oslo","celsius":-3.5}'),
        (Reading(sensor="s1", values=[1, 2]), '{"sensor":"s1","values":[1,2]}'),
        ({"t": Temperature(city="A", celsius=1.0)}, '{"t":{"city":"A","celsius":1.0}}'),
        (Unit.C, '"celsius"'),
    ],
    ids=[
        "str",
        "json-looking-str",
        "empty-str",
        "none",
        "int",
        "float",
        "bool",
        "list",
        "dict",
        "pydantic",
        "dataclass",
        "nested-model",
        "enum",
    ],
)
def test_default_json_result_conversion(value, expected):
    def produce() -> Any:
        return value

    assert from_fn(produce).call("{}") == expected
    assert asyncio.run(from_fn(produce).acall("{}")) == expected
    assert JsonResultConverter().convert(value) == expected


def test_default_converter_results_are_valid_json_for_non_strings():
    converter = JsonResultConverter()
    assert converter.convert(None) == "Done"
    assert json.loads(converter.convert(Temperature(city="x", celsius=1))) == {
        "city": "x",
        "celsius": 1.0,
    }
    assert isinstance(converter, ResultConverter)


class _Broken:
    def convert(self, result: Any, return_type: Any = None) -> str:
        raise ValueError(f"cannot show {result!r}")


def test_a_failing_result_converter_is_a_tool_execution_error_from_call_and_acall():
    def answer() -> int:
        return 42

    cb = FunctionToolCallback.from_function(answer, result_converter=_Broken())
    with pytest.raises(ToolExecutionError, match="cannot show 42") as raised:
        cb.call("{}")
    assert isinstance(raised.value.cause, ValueError)
    with pytest.raises(ToolExecutionError, match="cannot show 42"):
        asyncio.run(cb.acall("{}"))


def test_custom_converter_receives_result_and_return_type():
    calls = []

    class Recording:
        def convert(self, result: Any, return_type: Any = None) -> str:
            calls.append((result, return_type))
            return "converted"

    @tool(result_converter=Recording())
    def temp(city: str) -> Temperature:
        """Temperature."""
        return Temperature(city=city, celsius=20)

    cb = tool_callbacks(temp)[0]
    assert cb.call('{"city": "Nice"}') == "converted"
    assert asyncio.run(cb.acall('{"city": "Nice"}')) == "converted"
    assert calls == [
        (Temperature(city="Nice", celsius=20), Temperature),
        (Temperature(city="Nice", celsius=20), Temperature),
    ]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ('{"a": 1', "not valid JSON"),
        ("not json at all", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('"a string"', "JSON object"),
        ("42", "JSON object"),
        ("null", "JSON object"),
    ],
)
def test_malformed_or_non_object_json_is_invalid_arguments(arguments, fragment):
    calls = []

    @tool
    def record(a: int = 0) -> str:
        """Record a call."""
        calls.append(a)
        return "ok"

    cb = tool_callbacks(record)[0]
    for run in (cb.call, lambda text: asyncio.run(cb.acall(text))):
        with pytest.raises(InvalidToolArgumentsError) as info:
            run(arguments)
        assert info.value.tool_name == "record"
        assert "'record'" in str(info.value)
        assert fragment in str(info.value)
        assert isinstance(info.value, ToolsearchError)
    assert calls == []


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ('{"b": "x"}', "a"),  # missing required a
        ('{"a": "abc"}', "a"),  # not an integer
        ('{"a": 1, "b": 5}', "b"),  # not a string
        ('{"a": 1, "mode": "turbo"}', "mode"),  # not one of the literals
        ('{"a": 1, "nope": 1}', "nope"),  # unknown parameter
        ('{"a": 1, "tags": "x"}', "tags"),  # not a list
    ],
    ids=["missing", "int-type", "str-type", "literal", "extra", "list-type"],
)
def test_schema_invalid_arguments_name_the_tool_and_the_problem(arguments, fragment):
    from typing import Literal

    calls = []

    def check(
        a: int, b: str = "", mode: Literal["slow", "fast"] = "slow", tags: list[str] | None = None
    ) -> str:
        calls.append(a)
        return "ok"

    cb = from_fn(check, name="checker")
    with pytest.raises(InvalidToolArgumentsError) as info:
        cb.call(arguments)
    assert info.value.tool_name == "checker"
    assert "'checker'" in str(info.value)
    assert fragment in info.value.problem
    with pytest.raises(InvalidToolArgumentsError):
        asyncio.run(cb.acall(arguments))
    assert calls == []


def test_tool_exception_becomes_tool_execution_error_with_cause():
    @tool
    def explode(x: int) -> int:
        """Always fails."""
        raise Boom(f"bad x {x}")

    cb = tool_callbacks(explode)[0]
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"x": 3}')
    error = info.value
    assert error.tool_name == "explode"
    assert isinstance(error.__cause__, Boom)
    assert str(error.__cause__) == "bad x 3"
    assert "'explode'" in str(error)
    assert "bad x 3" in str(error)
    assert isinstance(error, ToolsearchError)


def test_async_tool_exception_becomes_tool_execution_error_with_cause():
    async def explode() -> None:
        await asyncio.sleep(0)
        raise ValueError("async failure")

    cb = from_fn(explode)
    for run in (lambda: cb.call("{}"), lambda: asyncio.run(cb.acall("{}"))):
        with pytest.raises(ToolExecutionError) as info:
            run()
        assert info.value.tool_name == "explode"
        assert isinstance(info.value.__cause__, ValueError)
        assert "async failure" in str(info.value)


def test_sync_tool_exception_through_acall():
    def explode() -> None:
        raise KeyError("k")

    cb = from_fn(explode)
    with pytest.raises(ToolExecutionError) as info:
        asyncio.run(cb.acall("{}"))
    assert isinstance(info.value.__cause__, KeyError)


def test_exception_without_message_still_gives_a_readable_error():
    def explode() -> None:
        raise RuntimeError

    with pytest.raises(ToolExecutionError) as info:
        from_fn(explode).call("{}")
    assert "RuntimeError" in str(info.value)
    assert "'explode'" in str(info.value)


def test_input_type_and_schema_tools_wrap_exceptions_too():
    def fail(request: Any) -> None:
        raise Boom("nope")

    typed = FunctionToolCallback.from_input_type(
        fail, WeatherRequest, name="typed", description="d"
    )
    raw = FunctionToolCallback.from_schema(
        fail, name="raw", description="d", input_schema={"type": "object"}
    )
    for cb in (typed, raw):
        with pytest.raises(ToolExecutionError) as info:
            cb.call('{"city": "x"}')
        assert info.value.tool_name == cb.definition.name
        assert isinstance(info.value.__cause__, Boom)


def _interrupt() -> None:
    raise KeyboardInterrupt


async def _async_interrupt() -> None:
    await asyncio.sleep(0)
    raise KeyboardInterrupt


@pytest.mark.parametrize("fn", [_interrupt, _async_interrupt], ids=["sync", "async"])
@pytest.mark.parametrize("mode", ["call", "acall"])
def test_keyboard_interrupt_propagates_unwrapped(fn, mode):
    cb = from_fn(fn)

    def run() -> None:
        if mode == "call":
            cb.call("{}")
        else:
            asyncio.run(cb.acall("{}"))

    with pytest.raises(KeyboardInterrupt) as info:
        run()
    assert type(info.value) is KeyboardInterrupt
    assert not isinstance(info.value, ToolsearchError)


def test_system_exit_propagates_unwrapped():
    def leave() -> None:
        raise SystemExit(3)

    with pytest.raises(SystemExit) as info:
        from_fn(leave).call("{}")
    assert info.value.code == 3


def test_positional_only_parameters_are_bound_positionally():
    def add(a: int, b: int, /, scale: int = 1) -> int:
        return (a + b) * scale

    (callback,) = tool_callbacks(add)
    assert callback.call('{"a": 2, "b": 3, "scale": 2}') == "10"


def test_recursive_input_type_is_accepted():
    from pydantic import BaseModel

    class Node(BaseModel):
        value: int
        children: list["Node"] = []

    def total(node: Node) -> int:
        return node.value + sum(total(c) for c in node.children)

    callback = FunctionToolCallback.from_input_type(total, Node, name="total", description="Sum")
    assert callback.definition.input_schema["type"] == "object"
    assert callback.call('{"value": 1, "children": [{"value": 2}]}') == "3"


def test_untyped_second_parameter_is_context_only_when_named_so():
    received = {}

    def handler(arguments, verbose=False):
        received["verbose"] = verbose
        return "ok"

    def with_context(arguments, context):
        received["context"] = dict(context)
        return "ok"

    schema = {"type": "object", "properties": {}}
    FunctionToolCallback.from_schema(handler, name="h", description="d", input_schema=schema).call(
        "{}", ToolContext({"k": 1})
    )
    FunctionToolCallback.from_schema(
        with_context, name="c", description="d", input_schema=schema
    ).call("{}", ToolContext({"k": 1}))
    assert received == {"verbose": False, "context": {"k": 1}}
