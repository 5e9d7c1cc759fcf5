"""JSON Schema generated for tool parameters: types, ToolParam, docstrings, no title noise."""

import collections.abc
import dataclasses
import enum
import json
import typing
from collections.abc import Callable, Generator, Iterator
from typing import Annotated, Any, Literal

import pydantic
import pytest

from toolsearch import (
    FunctionToolCallback,
    ToolContext,
    ToolDefinitionError,
    ToolParam,
    tool,
    tool_callbacks,
)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(pydantic.BaseModel):
    title: str
    street: str
    zip_code: int | None = None


class Person(pydantic.BaseModel):
    name: str
    address: Address
    tags: list[str] = []


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


@dataclasses.dataclass
class Polygon:
    label: str
    points: list[Point]


class Options(pydantic.BaseModel):
    title: str = "untitled"


HELLO_OPTIONS = Options(title="hello")


def schema_of(fn, **kwargs) -> dict[str, Any]:
    return dict(FunctionToolCallback.from_function(fn, **kwargs).definition.input_schema)


def walk_keys(value, path=()):
    """Yield (path, key) for every dict key in a nested JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key
            yield from walk_keys(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk_keys(item, (*path, i))


def title_keywords(schema) -> list[tuple]:
    """Paths where ``title`` is used as a schema keyword (not as a property name)."""
    found = []
    for path, key in walk_keys(schema):
        if key == "title" and not (path and path[-1] == "properties"):
            found.append(path)
    return found


# --------------------------------------------------------------------------- primitives


def test_primitive_parameters_exact_schema():
    def prim(a: str, b: int, c: float, d: bool) -> None:
        pass

    assert schema_of(prim) == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer"},
            "c": {"type": "number"},
            "d": {"type": "boolean"},
        },
        "required": ["a", "b", "c", "d"],
        "additionalProperties": False,
    }


def test_no_parameters_gives_an_empty_object_schema():
    def nothing() -> str:
        return "x"

    assert schema_of(nothing) == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_schema_is_plain_json():
    def f(a: Color, b: list[Point], c: Person | None = None) -> None:
        pass

    schema = schema_of(f)
    assert json.loads(json.dumps(schema)) == schema


# --------------------------------------------------------------------------- optionality


def test_default_value_makes_a_parameter_optional():
    def f(city: str, days: int = 3, units: str = "metric") -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 3},
            "units": {"type": "string", "default": "metric"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_optional_union_makes_a_parameter_optional_and_receives_none():
    def f(city: str, country: str | None) -> str:
        return f"{city}/{country!r}"

    cb = FunctionToolCallback.from_function(f)
    schema = dict(cb.definition.input_schema)
    assert schema["required"] == ["city"]
    assert schema["properties"]["country"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
    }
    assert cb.call('{"city": "Oslo"}') == "Oslo/None"
    assert cb.call('{"city": "Oslo", "country": "NO"}') == "Oslo/'NO'"
    assert cb.call('{"city": "Oslo", "country": null}') == "Oslo/None"


def test_typing_optional_is_treated_like_union_with_none():
    def f(country: typing.Optional[str]) -> str:  # noqa: UP045
        return repr(country)

    cb = FunctionToolCallback.from_function(f)
    assert "required" not in cb.definition.input_schema
    assert cb.call("{}") == "None"


def test_toolparam_description_and_inferred_required():
    def f(
        city: Annotated[str, ToolParam(description="City name")],
        days: Annotated[int, ToolParam(description="Number of days")] = 1,
    ) -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "days": {"type": "integer", "description": "Number of days", "default": 1},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_toolparam_required_false_without_default_is_optional_and_receives_none():
    received = {}

    def f(
        limit: Annotated[int, ToolParam(description="Max results", required=False)],
        query: str,
    ) -> str:
        received["limit"] = limit
        return query

    cb = FunctionToolCallback.from_function(f)
    schema = cb.definition.input_schema
    assert schema["required"] == ["query"]
    assert "limit" in schema["properties"]
    assert schema["properties"]["limit"]["description"] == "Max results"
    assert schema["properties"]["limit"]["type"] == "integer"
    assert cb.call('{"query": "q"}') == "q"
    assert received == {"limit": None}
    assert cb.call('{"query": "q", "limit": 5}') == "q"
    assert received == {"limit": 5}


def test_toolparam_required_true_with_default_is_listed_as_required():
    def f(
        units: Annotated[str, ToolParam(description="Units", required=True)] = "metric",
        city: str = "Oslo",
    ) -> str:
        return f"{city}:{units}"

    cb = FunctionToolCallback.from_function(f)
    schema = cb.definition.input_schema
    assert schema["required"] == ["units"]
    assert schema["properties"]["units"]["description"] == "Units"
    assert schema["properties"]["units"]["type"] == "string"
    assert cb.call('{"units": "imperial"}') == "Oslo:imperial"


def test_toolparam_required_true_on_optional_type():
    def f(note: Annotated[str | None, ToolParam(required=True)]) -> str:
        return repr(note)

    cb = FunctionToolCallback.from_function(f)
    assert cb.definition.input_schema["required"] == ["note"]
    assert cb.call('{"note": null}') == "None"


def test_toolparam_description_wins_over_docstring():
    def f(city: Annotated[str, ToolParam(description="From ToolParam")]) -> None:
        """Do it.

        Args:
            city: From the docstring.
        """

    assert schema_of(f)["properties"]["city"] == {
        "type": "string",
        "description": "From ToolParam",
    }


# --------------------------------------------------------------------------- docstrings


def test_google_docstring_gives_descriptions_with_continuation_lines():
    def get_weather(city: str, days: int = 1, units: str = "metric") -> str:
        """Get the weather forecast for a city.

        Uses the offline weather service.

        Args:
            city: The city to look up,
                for example Paris.
            days (int): How many days
                to forecast.
            units: Either metric or imperial.

        Returns:
            The forecast as text.

        Raises:
            ValueError: When the city is unknown.
        """
        return city

    cb = FunctionToolCallback.from_function(get_weather)
    assert cb.definition.description == (
        "Get the weather forecast for a city.\n\nUses the offline weather service."
    )
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city to look up, for example Paris."},
            "days": {"type": "integer", "description": "How many days to forecast.", "default": 1},
            "units": {
                "type": "string",
                "description": "Either metric or imperial.",
                "default": "metric",
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_sphinx_docstring_gives_descriptions_with_continuation_lines():
    def lookup(key: str, strict: bool = False) -> str:
        """Look a key up.

        :param key: The key to look up,
            case sensitive.
        :param bool strict: Fail on a miss.
        :returns: The value.
        :rtype: str
        """
        return key

    cb = FunctionToolCallback.from_function(lookup)
    assert cb.definition.description == "Look a key up."
    assert cb.definition.input_schema["properties"] == {
        "key": {"type": "string", "description": "The key to look up, case sensitive."},
        "strict": {"type": "boolean", "description": "Fail on a miss.", "default": False},
    }


def test_decorated_method_docstring_descriptions():
    class Tools:
        @tool
        def greet(self, name: str) -> str:
            """Greet someone.

            Args:
                name: Who to greet.
            """
            return f"hi {name}"

    cb = tool_callbacks(Tools())[0]
    assert cb.definition.description == "Greet someone."
    assert cb.definition.input_schema["properties"] == {
        "name": {"type": "string", "description": "Who to greet."}
    }


# --------------------------------------------------------------------------- richer types


def test_enum_and_literal_parameters():
    def f(color: Color, mode: Literal["fast", "slow"], level: Priority = Priority.LOW) -> str:
        return f"{color.value}:{mode}:{level.name}"

    cb = FunctionToolCallback.from_function(f)
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {
            "color": {"$ref": "#/$defs/Color"},
            "mode": {"enum": ["fast", "slow"], "type": "string"},
            "level": {"$ref": "#/$defs/Priority", "default": 1},
        },
        "required": ["color", "mode"],
        "additionalProperties": False,
        "$defs": {
            "Color": {"enum": ["red", "green"], "type": "string"},
            "Priority": {"enum": [1, 2], "type": "integer"},
        },
    }
    # Values arrive as the Python types.
    assert cb.call('{"color": "green", "mode": "slow", "level": 2}') == "green:slow:HIGH"
    assert cb.call('{"color": "red", "mode": "fast"}') == "red:fast:LOW"


def test_list_and_dict_parameters():
    def f(tags: list[str], scores: dict[str, int], matrix: list[list[float]]) -> dict:
        return {"tags": tags, "scores": scores, "matrix": matrix}

    cb = FunctionToolCallback.from_function(f)
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "scores": {"type": "object", "additionalProperties": {"type": "integer"}},
            "matrix": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "number"}},
            },
        },
        "required": ["tags", "scores", "matrix"],
        "additionalProperties": False,
    }
    result = cb.call('{"tags": ["a"], "scores": {"x": 1}, "matrix": [[1.5]]}')
    assert json.loads(result) == {"tags": ["a"], "scores": {"x": 1}, "matrix": [[1.5]]}


def test_nested_pydantic_models_use_defs_and_refs():
    def save(person: Person) -> str:
        return f"{person.name}@{person.address.street}"

    cb = FunctionToolCallback.from_function(save)
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {"person": {"$ref": "#/$defs/Person"}},
        "required": ["person"],
        "additionalProperties": False,
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "street": {"type": "string"},
                    "zip_code": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
                },
                "required": ["title", "street"],
            },
            "Person": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/Address"},
                    "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                },
                "required": ["name", "address"],
            },
        },
    }
    arguments = {"person": {"name": "Ada", "address": {"title": "Dr", "street": "Main St"}}}
    assert cb.call(json.dumps(arguments)) == "Ada@Main St"


def test_nested_dataclasses_use_defs_and_refs():
    def area(shape: Polygon) -> str:
        assert isinstance(shape, Polygon)
        assert all(isinstance(p, Point) for p in shape.points)
        return f"{shape.label}:{len(shape.points)}"

    cb = FunctionToolCallback.from_function(area)
    schema = cb.definition.input_schema
    assert schema["properties"] == {"shape": {"$ref": "#/$defs/Polygon"}}
    assert schema["required"] == ["shape"]
    defs = schema["$defs"]
    assert set(defs) == {"Point", "Polygon"}
    assert defs["Polygon"]["type"] == "object"
    assert defs["Polygon"]["properties"] == {
        "label": {"type": "string"},
        "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
    }
    assert defs["Polygon"]["required"] == ["label", "points"]
    assert defs["Point"]["type"] == "object"
    assert defs["Point"]["properties"] == {
        "x": {"type": "number"},
        "y": {"type": "number", "default": 0.0},
    }
    assert defs["Point"]["required"] == ["x"]
    assert cb.call('{"shape": {"label": "tri", "points": [{"x": 0}, {"x": 1, "y": 2}]}}') == (
        "tri:2"
    )


def test_no_title_keywords_anywhere_but_a_property_named_title_survives():
    def f(
        title: Annotated[str, ToolParam(description="The title")],
        person: Person,
        shape: Polygon,
        color: Color,
        mode: Literal["a", "b"] = "a",
        extra: dict[str, list[Point]] | None = None,
    ) -> None:
        pass

    schema = schema_of(f)
    assert title_keywords(schema) == []
    assert schema["properties"]["title"] == {"type": "string", "description": "The title"}
    assert "title" in schema["required"]
    assert schema["$defs"]["Address"]["properties"]["title"] == {"type": "string"}
    assert "title" in schema["$defs"]["Address"]["required"]


def test_default_values_in_the_schema_are_not_cleaned_of_title_keys():
    # ``title`` is only noise as a schema keyword; inside a default *value* it is data.
    def f(options: Options = HELLO_OPTIONS, meta: dict | None = None) -> None:
        pass

    schema = schema_of(f)
    assert schema["properties"]["options"]["default"] == {"title": "hello"}


def test_context_parameter_is_absent_from_the_schema():
    def f(city: str, ctx: ToolContext, other: ToolContext | None = None) -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }


def test_parameter_names_that_clash_with_pydantic_internals():
    def f(model_config: str, schema: int, json: bool = False) -> str:
        return f"{model_config}:{schema}:{json}"

    cb = FunctionToolCallback.from_function(f)
    assert cb.definition.input_schema["properties"] == {
        "model_config": {"type": "string"},
        "schema": {"type": "integer"},
        "json": {"type": "boolean", "default": False},
    }
    assert cb.call('{"model_config": "m", "schema": 2}') == "m:2:False"


def test_unannotated_parameter_accepts_any_json():
    def f(value, flag=False):
        return {"value": value, "flag": flag}

    cb = FunctionToolCallback.from_function(f)
    assert set(cb.definition.input_schema["properties"]) == {"value", "flag"}
    assert json.loads(cb.call('{"value": [1, "a"]}')) == {"value": [1, "a"], "flag": False}


# --------------------------------------------------------------------------- unsupported


def _callable_param(fn: Callable[[int], int]) -> None:
    pass


def _bare_callable_param(fn: Callable) -> None:
    pass


def _typing_callable_param(fn: typing.Callable[..., Any]) -> None:
    pass


def _generator_param(gen: Generator[int, None, None]) -> None:
    pass


def _iterator_param(items: Iterator[int]) -> None:
    pass


def _abc_iterator_param(items: collections.abc.Iterator) -> None:
    pass


def _nested_callable_param(handlers: list[Callable[[], None]]) -> None:
    pass


def _optional_callable_param(callback: Callable[[], None] | None = None) -> None:
    pass


def _annotated_generator_param(
    gen: Annotated[Generator[int, None, None], ToolParam(description="numbers")],
) -> None:
    pass


@pytest.mark.parametrize(
    ("fn", "param"),
    [
        (_callable_param, "fn"),
        (_bare_callable_param, "fn"),
        (_typing_callable_param, "fn"),
        (_generator_param, "gen"),
        (_iterator_param, "items"),
        (_abc_iterator_param, "items"),
        (_nested_callable_param, "handlers"),
        (_optional_callable_param, "callback"),
        (_annotated_generator_param, "gen"),
    ],
)
def test_unsupported_parameter_types_fail_naming_tool_and_parameter(fn, param):
    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(tool(name="bad_tool")(fn))
    assert info.value.tool_name == "bad_tool"
    message = str(info.value)
    assert "'bad_tool'" in message
    assert repr(param) in message


def test_unsupported_parameter_type_via_from_function_names_the_tool():
    with pytest.raises(ToolDefinitionError) as info:
        FunctionToolCallback.from_function(_generator_param)
    assert info.value.tool_name == "_generator_param"
    assert "'gen'" in str(info.value)


def test_unsupported_parameter_on_a_method_names_the_tool():
    class Tools:
        @tool
        def run(self, fn: Callable[[], None]) -> None:
            pass

    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(Tools())
    assert info.value.tool_name == "run"
    assert "'fn'" in str(info.value)


def test_var_positional_is_rejected():
    def f(a: int, *rest: int) -> None:
        pass

    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(tool(f))
    assert info.value.tool_name == "f"
    assert "'rest'" in str(info.value)


def test_var_keyword_is_rejected():
    def g(a: int, **options: str) -> None:
        pass

    with pytest.raises(ToolDefinitionError) as info:
        FunctionToolCallback.from_function(g)
    assert info.value.tool_name == "g"
    assert "'options'" in str(info.value)


def test_unresolvable_type_hint_is_a_definition_error():
    def f(x: "NoSuchType") -> None:  # noqa: F821
        pass

    with pytest.raises(ToolDefinitionError) as info:
        FunctionToolCallback.from_function(f)
    assert info.value.tool_name == "f"
