"""``@tool`` on functions, methods and static methods, and ``tool_callbacks`` registration.

Types used in tool signatures live at module level: the schema is built from resolved
type hints, and these tests must not depend on how local names resolve.
"""

import asyncio
import functools
from typing import Annotated

import pytest

import toolsearch
from toolsearch import (
    DuplicateToolNameError,
    FunctionToolCallback,
    ToolCallback,
    ToolDefinitionError,
    ToolMetadata,
    ToolParam,
    tool,
    tool_callbacks,
)
from toolsearch.tools import ensure_unique_names

# --------------------------------------------------------------------------- fixtures


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


@tool(
    name="multiply_numbers",
    description="Multiply two numbers exactly.",
    return_direct=True,
)
def multiply(a: float, b: float) -> float:
    """This docstring is not the description."""
    return a * b


class UpperConverter:
    def convert(self, result, return_type=None):
        return f"UPPER:{str(result).upper()}"


@tool(result_converter=UpperConverter())
def shout(word: str) -> str:
    """Repeat a word."""
    return word


@tool
def no_docstring(x: int) -> int:
    return x


@tool()
def empty_parens(x: int) -> int:
    """Called with empty parentheses."""
    return x


class DateTimeTools:
    """Tools that read instance state."""

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset
        self.alarms: list[str] = []

    @tool(description="Get the current date and time in the user's timezone")
    def get_current_date_time(self) -> str:
        return f"2024-01-01T10:{self.offset:02d}:00"

    @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
    def set_alarm(
        self, time: Annotated[str, ToolParam(description="Time in ISO-8601 format")]
    ) -> str:
        self.alarms.append(time)
        return f"alarm set for {time}"

    def helper(self) -> str:  # not a tool
        return "helper"


class StaticTools:
    """Static-method tools need no instance."""

    @tool
    @staticmethod
    def triple(y: int) -> int:
        """Triple a number."""
        return y * 3


class StaticOuterTools:
    """The conventional order: ``@staticmethod`` outermost."""

    @staticmethod
    @tool
    def double(y: int) -> int:
        """Double a number."""
        return y * 2


class ClassMethodTools:
    @classmethod
    @tool
    def class_name(cls, suffix: str) -> str:
        """Return the class name and a suffix."""
        return cls.__name__ + suffix


class MixedTools:
    @tool
    def instance_tool(self, x: int) -> int:
        """Needs an instance."""
        return x

    @tool
    @staticmethod
    def static_tool(x: int) -> int:
        """Needs no instance."""
        return x


class AsyncTools:
    def __init__(self) -> None:
        self.factor = 5

    @tool
    async def scale(self, x: int) -> int:
        """Scale asynchronously."""
        await asyncio.sleep(0)
        return x * self.factor


class BaseTools:
    @tool
    def base_tool(self) -> str:
        """From the base class."""
        return "base"

    @tool
    def overridden_plain(self) -> str:
        """A tool in the base, a plain method in the subclass."""
        return "base"

    @tool
    def overridden_tool(self) -> str:
        """Base version."""
        return "base"


class ChildTools(BaseTools):
    def overridden_plain(self) -> str:
        return "child"

    @tool
    def overridden_tool(self) -> str:
        """Child version."""
        return "child"

    @tool
    def child_tool(self) -> str:
        """From the child class."""
        return "child"


class NoTools:
    def method(self) -> None:
        pass


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


@tool
@_logged
def wrapped_tool(city: str, days: int = 1) -> str:
    """A tool behind a functools.wraps decorator."""
    return f"{city}:{days}"


def only(callbacks):
    assert len(callbacks) == 1
    return callbacks[0]


def names(callbacks):
    return [cb.definition.name for cb in callbacks]


# --------------------------------------------------------------------------- @tool basics


def test_public_names_are_exported():
    assert toolsearch.tool is tool
    assert toolsearch.ToolParam is ToolParam
    assert toolsearch.FunctionToolCallback is FunctionToolCallback


def test_bare_decorator_returns_the_same_function():
    def f(x: int) -> int:
        return x

    assert tool(f) is f


def test_decorated_functions_stay_directly_callable():
    assert add(2, 3) == 5
    assert multiply(2.0, 4.0) == 8.0
    assert shout("hi") == "hi"
    assert empty_parens(7) == 7
    tools = DateTimeTools(offset=5)
    assert tools.get_current_date_time() == "2024-01-01T10:05:00"
    assert tools.set_alarm("2024-01-01T10:15:00") == "alarm set for 2024-01-01T10:15:00"
    assert StaticTools.triple(2) == 6
    assert StaticTools().triple(2) == 6
    assert StaticOuterTools.double(4) == 8
    assert ClassMethodTools.class_name("!") == "ClassMethodTools!"
    assert asyncio.run(AsyncTools().scale(2)) == 10


def test_bare_decorator_defaults_name_to_function_name_and_description_to_docstring():
    cb = only(tool_callbacks(add))
    assert cb.definition.name == "add"
    # The Args section is not part of the description.
    assert cb.definition.description == "Add two integers."
    assert cb.metadata == ToolMetadata(return_direct=False)
    assert cb.metadata.return_direct is False
    assert cb.call('{"a": 2, "b": 40}') == "42"


def test_decorator_with_arguments_sets_name_description_and_return_direct():
    cb = only(tool_callbacks(multiply))
    assert cb.definition.name == "multiply_numbers"
    assert cb.definition.description == "Multiply two numbers exactly."
    assert cb.metadata.return_direct is True
    assert cb.call('{"a": 1.5, "b": 2}') == "3.0"


def test_decorator_with_empty_parentheses():
    cb = only(tool_callbacks(empty_parens))
    assert cb.definition.name == "empty_parens"
    assert cb.definition.description == "Called with empty parentheses."
    assert cb.metadata.return_direct is False


def test_decorator_result_converter_is_used():
    cb = only(tool_callbacks(shout))
    assert cb.call('{"word": "hello"}') == "UPPER:HELLO"


def test_description_defaults_to_something_non_empty_without_docstring():
    cb = only(tool_callbacks(no_docstring))
    assert cb.definition.name == "no_docstring"
    assert isinstance(cb.definition.description, str)
    assert cb.definition.description  # never empty: models need some description


def test_registered_callbacks_satisfy_the_tool_callback_protocol():
    cb = only(tool_callbacks(add))
    assert isinstance(cb, ToolCallback)
    assert isinstance(cb, FunctionToolCallback)


def test_tool_behind_functools_wraps_keeps_its_signature_and_runs_the_wrapper():
    before = wrapped_tool.calls
    cb = only(tool_callbacks(wrapped_tool))
    assert cb.definition.name == "wrapped_tool"
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 1},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert cb.call('{"city": "Paris"}') == "Paris:1"
    assert wrapped_tool.calls == before + 1


# --------------------------------------------------------------------------- methods


def test_method_tools_registered_through_an_instance():
    tools = DateTimeTools(offset=7)
    callbacks = tool_callbacks(tools)
    assert names(callbacks) == ["get_current_date_time", "set_alarm"]
    now, alarm = callbacks
    assert now.definition.description == "Get the current date and time in the user's timezone"
    assert now.definition.input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert alarm.definition.input_schema == {
        "type": "object",
        "properties": {"time": {"type": "string", "description": "Time in ISO-8601 format"}},
        "required": ["time"],
        "additionalProperties": False,
    }
    # ``self`` is bound to the instance and never shows up in the schema.
    assert now.call("{}") == "2024-01-01T10:07:00"
    assert alarm.call('{"time": "2024-01-01T10:17:00"}') == "alarm set for 2024-01-01T10:17:00"
    assert tools.alarms == ["2024-01-01T10:17:00"]


def test_each_instance_gets_its_own_bound_tools():
    first, second = DateTimeTools(offset=1), DateTimeTools(offset=2)
    assert only(tool_callbacks(first)[:1]).call("{}") == "2024-01-01T10:01:00"
    assert only(tool_callbacks(second)[:1]).call("{}") == "2024-01-01T10:02:00"


def test_bound_method_can_be_registered_directly():
    tools = DateTimeTools()
    cb = only(tool_callbacks(tools.set_alarm))
    assert cb.definition.name == "set_alarm"
    assert cb.call('{"time": "noon"}') == "alarm set for noon"
    assert tools.alarms == ["noon"]


def test_method_used_without_its_instance_fails_naming_the_tool():
    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(DateTimeTools.set_alarm)
    assert info.value.tool_name == "set_alarm"
    assert "'set_alarm'" in str(info.value)


def test_class_registered_instead_of_instance_fails_naming_the_tool():
    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(DateTimeTools)
    assert info.value.tool_name == "get_current_date_time"
    assert "'get_current_date_time'" in str(info.value)


def test_class_with_mixed_tools_fails_naming_the_method_tool():
    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(MixedTools)
    assert info.value.tool_name == "instance_tool"


def test_instance_with_mixed_tools_registers_both():
    callbacks = tool_callbacks(MixedTools())
    assert names(callbacks) == ["instance_tool", "static_tool"]
    assert [cb.call('{"x": 4}') for cb in callbacks] == ["4", "4"]


def test_staticmethod_tool_below_staticmethod_decorator():
    # @tool applied to the staticmethod object.
    for source in (StaticTools, StaticTools(), StaticTools.triple):
        cb = only(tool_callbacks(source))
        assert cb.definition.name == "triple"
        assert cb.definition.description == "Triple a number."
        assert cb.definition.input_schema == {
            "type": "object",
            "properties": {"y": {"type": "integer"}},
            "required": ["y"],
            "additionalProperties": False,
        }
        assert cb.call('{"y": 5}') == "15"


@pytest.mark.parametrize(
    "source",
    [StaticOuterTools, StaticOuterTools(), StaticOuterTools.double],
    ids=["class", "instance", "function"],
)
def test_staticmethod_tool_with_staticmethod_outermost(source):
    # ``@staticmethod`` over ``@tool`` is the conventional decorator order; a static
    # method needs no instance, so every form of registration must work.
    cb = only(tool_callbacks(source))
    assert cb.definition.name == "double"
    assert cb.definition.input_schema == {
        "type": "object",
        "properties": {"y": {"type": "integer"}},
        "required": ["y"],
        "additionalProperties": False,
    }
    assert cb.call('{"y": 5}') == "10"


def test_classmethod_tool_binds_the_class():
    for source in (ClassMethodTools, ClassMethodTools(), ClassMethodTools.class_name):
        cb = only(tool_callbacks(source))
        assert cb.definition.name == "class_name"
        assert cb.definition.input_schema == {
            "type": "object",
            "properties": {"suffix": {"type": "string"}},
            "required": ["suffix"],
            "additionalProperties": False,
        }
        assert cb.call('{"suffix": "?"}') == "ClassMethodTools?"


def test_async_method_tool_through_instance():
    cb = only(tool_callbacks(AsyncTools()))
    assert cb.definition.name == "scale"
    assert cb.call('{"x": 3}') == "15"
    assert asyncio.run(cb.acall('{"x": 4}')) == "20"


def test_inherited_tools_follow_the_subclass_overrides():
    callbacks = tool_callbacks(ChildTools())
    by_name = {cb.definition.name: cb for cb in callbacks}
    # A method overridden without @tool is no longer a tool.
    assert set(by_name) == {"base_tool", "overridden_tool", "child_tool"}
    assert by_name["base_tool"].call("{}") == "base"
    assert by_name["overridden_tool"].call("{}") == "child"
    assert by_name["overridden_tool"].definition.description == "Child version."
    assert by_name["child_tool"].call("{}") == "child"


def test_object_without_tools_is_rejected():
    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(NoTools())
    assert "NoTools" in str(info.value)
    with pytest.raises(ToolDefinitionError):
        tool_callbacks(NoTools)


@pytest.mark.parametrize("value", ["add", 3, None, {"name": "add"}])
def test_values_that_are_not_tools_are_rejected(value):
    with pytest.raises((TypeError, ToolDefinitionError)):
        tool_callbacks(value)


# --------------------------------------------------------------------------- collection


def test_tool_callbacks_flattens_lists_in_order_and_accepts_callbacks():
    schema_tool = FunctionToolCallback.from_schema(
        lambda args: "ok",
        name="schema_tool",
        description="A programmatic tool.",
        input_schema={"type": "object", "properties": {}},
    )

    def plain(x: int) -> int:
        """A plain function without @tool."""
        return x + 1

    callbacks = tool_callbacks(
        [add, (multiply, [schema_tool])], DateTimeTools(), plain, StaticTools
    )
    assert names(callbacks) == [
        "add",
        "multiply_numbers",
        "schema_tool",
        "get_current_date_time",
        "set_alarm",
        "plain",
        "triple",
    ]
    assert callbacks[2] is schema_tool
    assert callbacks[5].definition.description == "A plain function without @tool."
    assert callbacks[5].call('{"x": 1}') == "2"


def test_tool_callbacks_with_nothing_returns_empty_list():
    assert tool_callbacks() == []
    assert tool_callbacks([]) == []


def test_duplicate_names_fail_naming_the_tool():
    @tool(name="add")
    def another_add(x: int) -> int:
        """Same name as add."""
        return x

    with pytest.raises(DuplicateToolNameError) as info:
        tool_callbacks(add, another_add)
    assert isinstance(info.value, ToolDefinitionError)
    assert info.value.tool_name == "add"
    assert "'add'" in str(info.value)


def test_duplicate_names_across_instance_and_function():
    @tool
    def set_alarm(time: str) -> str:
        """Clashes with DateTimeTools.set_alarm."""
        return time

    with pytest.raises(DuplicateToolNameError) as info:
        tool_callbacks([set_alarm], DateTimeTools())
    assert info.value.tool_name == "set_alarm"


def test_duplicate_names_between_two_instances():
    with pytest.raises(DuplicateToolNameError) as info:
        tool_callbacks(DateTimeTools(), DateTimeTools())
    assert info.value.tool_name == "get_current_date_time"


def test_ensure_unique_names():
    callbacks = tool_callbacks(add, multiply)
    ensure_unique_names(callbacks)  # no error
    with pytest.raises(DuplicateToolNameError) as info:
        ensure_unique_names([*callbacks, callbacks[1]])
    assert info.value.tool_name == "multiply_numbers"


# --------------------------------------------------------------------------- bad definitions


def test_whitespace_tool_name_fails_at_registration_with_a_definition_error():
    @tool(name="get weather")
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    # A bad definition must fail at registration with the library's
    # ToolDefinitionError naming the tool (see errors.py).
    with pytest.raises(ToolDefinitionError) as info:
        tool_callbacks(get_weather)
    assert "'get weather'" in str(info.value)
