"""ToolDefinition, ToolMetadata, ToolContext, validate_json_value and parse_docstring."""

import dataclasses
import os
import re
import subprocess
import sys

import pytest

from toolsearch import ToolContext, ToolDefinition, ToolDefinitionError, ToolMetadata
from toolsearch.tools.docstrings import ParsedDocstring, parse_docstring
from toolsearch.tools.validation import validate_json_value

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}

# --------------------------------------------------------------------------- ToolDefinition


def test_tool_definition_fields_and_default_schema():
    definition = ToolDefinition(name="get_weather", description="Weather.", input_schema=SCHEMA)
    assert definition.name == "get_weather"
    assert definition.description == "Weather."
    assert definition.input_schema == SCHEMA
    bare = ToolDefinition(name="ping")
    assert bare.description == ""
    assert bare.input_schema == {"type": "object", "properties": {}}


def test_tool_definition_to_dict():
    definition = ToolDefinition(name="get_weather", description="Weather.", input_schema=SCHEMA)
    assert definition.to_dict() == {
        "name": "get_weather",
        "description": "Weather.",
        "input_schema": SCHEMA,
    }


def test_tool_definition_is_frozen():
    definition = ToolDefinition(name="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        definition.name = "b"  # type: ignore[misc]


def test_fingerprint_is_stable_and_content_based():
    first = ToolDefinition(name="get_weather", description="Weather.", input_schema=SCHEMA)
    second = ToolDefinition(
        name="get_weather", description="Weather.", input_schema=dict(reversed(SCHEMA.items()))
    )
    assert re.fullmatch(r"[0-9a-f]{64}", first.fingerprint)
    assert first.fingerprint == first.fingerprint
    assert first.fingerprint == second.fingerprint  # key order does not matter
    assert first == second
    assert hash(first) == hash(second)
    assert len({first, second}) == 1


def test_fingerprint_is_stable_across_processes():
    # A content hash, not Python's per-process salted hash(): other processes agree.
    code = (
        "from toolsearch import ToolDefinition;"
        "print(ToolDefinition(name='t', description='d',"
        " input_schema={'type': 'object', 'properties': {'a': {'type': 'string'}}}).fingerprint)"
    )
    here = ToolDefinition(
        name="t",
        description="d",
        input_schema={"type": "object", "properties": {"a": {"type": "string"}}},
    ).fingerprint
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert out.stdout.strip() == here


@pytest.mark.parametrize(
    "changed",
    [
        {"description": "Weather, now with wind."},
        {"name": "get_forecast"},
        {"input_schema": {**SCHEMA, "required": []}},
    ],
    ids=["description", "name", "schema"],
)
def test_fingerprint_differs_when_content_changes(changed):
    base = {"name": "get_weather", "description": "Weather.", "input_schema": SCHEMA}
    original = ToolDefinition(**base)
    modified = ToolDefinition(**{**base, **changed})
    assert original.fingerprint != modified.fingerprint
    assert original != modified


@pytest.mark.parametrize("name", ["", " ", "   ", "\t", "get weather", "get\nweather", " a"])
def test_empty_or_whitespace_names_are_rejected(name):
    with pytest.raises(ToolDefinitionError, match="name"):
        ToolDefinition(name=name, description="d")


def test_non_mapping_schema_is_rejected():
    with pytest.raises(ToolDefinitionError, match="input_schema"):
        ToolDefinition(name="t", input_schema=["not", "a", "schema"])  # type: ignore[arg-type]


def test_tool_metadata_defaults():
    assert ToolMetadata().return_direct is False
    assert ToolMetadata(return_direct=True).return_direct is True
    assert ToolMetadata() == ToolMetadata(return_direct=False)


# --------------------------------------------------------------------------- ToolContext


def test_tool_context_is_a_read_only_mapping():
    source = {"tenant": "acme", "user": "ada"}
    context = ToolContext(source)
    assert context["tenant"] == "acme"
    assert dict(context) == source
    assert len(context) == 2
    assert "user" in context
    assert context.get("missing") is None
    assert context == source
    assert context == ToolContext(source)
    source["tenant"] = "changed"  # the context holds its own copy
    assert context["tenant"] == "acme"
    with pytest.raises(TypeError):
        context["tenant"] = "other"  # type: ignore[index]


def test_tool_context_context_attribute_is_read_only():
    context = ToolContext({"a": 1})
    assert dict(context.context) == {"a": 1}
    with pytest.raises(TypeError):
        context.context["a"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        del context.context["a"]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        context.context = {}  # type: ignore[misc]
    assert dict(context) == {"a": 1}


def test_empty_tool_context():
    assert dict(ToolContext()) == {}
    assert dict(ToolContext(None)) == {}
    assert len(ToolContext()) == 0


def test_tool_context_merged_per_call_wins():
    defaults = ToolContext({"tenant": "default", "region": "eu"})
    merged = defaults.merged({"tenant": "per-call", "user": "ada"})
    assert isinstance(merged, ToolContext)
    assert dict(merged) == {"tenant": "per-call", "region": "eu", "user": "ada"}
    assert dict(merged.context) == {"tenant": "per-call", "region": "eu", "user": "ada"}
    # The original is unchanged.
    assert dict(defaults) == {"tenant": "default", "region": "eu"}


@pytest.mark.parametrize("overrides", [None, {}])
def test_tool_context_merged_with_nothing(overrides):
    defaults = ToolContext({"a": 1})
    assert dict(defaults.merged(overrides)) == {"a": 1}


def test_tool_context_merged_with_another_context():
    merged = ToolContext({"a": 1, "b": 2}).merged(ToolContext({"b": 3}))
    assert dict(merged) == {"a": 1, "b": 3}


def test_tool_context_is_unhashable_and_has_a_repr():
    context = ToolContext({"a": 1})
    with pytest.raises(TypeError):
        hash(context)
    assert "'a': 1" in repr(context)


# --------------------------------------------------------------------------- validate_json_value


OBJECT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 5},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "kind": {"enum": ["a", "b"]},
        "fixed": {"const": 7},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "pet": {"$ref": "#/$defs/Pet"},
    },
    "required": ["name"],
    "additionalProperties": False,
    "$defs": {
        "Pet": {
            "type": "object",
            "properties": {"species": {"type": "string"}},
            "required": ["species"],
        }
    },
}


def test_valid_value_has_no_problems():
    value = {
        "name": "Ada",
        "age": 36,
        "score": 1.5,
        "ok": True,
        "tags": ["x"],
        "kind": "a",
        "fixed": 7,
        "maybe": None,
        "pet": {"species": "cat"},
    }
    assert validate_json_value(OBJECT_SCHEMA, value) == []
    assert validate_json_value(OBJECT_SCHEMA, {"name": "Bo"}) == []


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        ({}, ["name", "required"]),
        ({"name": 3}, ["name", "expected string", "integer"]),
        ({"name": ""}, ["name", "at least 1"]),
        ({"name": "toolong"}, ["name", "at most 5"]),
        ({"name": "a", "age": -1}, ["age", "minimum"]),
        ({"name": "a", "age": 200}, ["age", "maximum"]),
        ({"name": "a", "age": 1.5}, ["age", "integer"]),
        ({"name": "a", "age": True}, ["age", "integer", "boolean"]),
        ({"name": "a", "score": "1"}, ["score", "number"]),
        ({"name": "a", "ok": 1}, ["ok", "boolean"]),
        ({"name": "a", "tags": ["x", 2]}, ["tags[1]", "string"]),
        ({"name": "a", "tags": ["x", "y", "z"]}, ["tags", "at most 2"]),
        ({"name": "a", "kind": "c"}, ["kind", "'c'"]),
        ({"name": "a", "fixed": 8}, ["fixed", "7"]),
        ({"name": "a", "maybe": 3}, ["maybe"]),
        ({"name": "a", "pet": {}}, ["pet.species", "required"]),
        ({"name": "a", "pet": {"species": 1}}, ["pet.species", "string"]),
        ({"name": "a", "extra": 1}, ["extra", "unexpected"]),
    ],
)
def test_problems_name_the_location(value, fragments):
    problems = validate_json_value(OBJECT_SCHEMA, value)
    assert problems
    text = "; ".join(problems)
    for fragment in fragments:
        assert fragment in text


def test_top_level_type_mismatch():
    assert validate_json_value({"type": "object"}, []) == ["arguments: expected object, got array"]
    assert validate_json_value({"type": ["string", "null"]}, None) == []
    assert validate_json_value({"type": ["string", "null"]}, 1)


def test_integer_accepts_integral_floats_but_not_booleans():
    assert validate_json_value({"type": "integer"}, 3) == []
    assert validate_json_value({"type": "integer"}, 3.0) == []
    assert validate_json_value({"type": "integer"}, 3.5)
    assert validate_json_value({"type": "integer"}, False)
    assert validate_json_value({"type": "number"}, True)


def test_additional_properties_schema_is_applied():
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert validate_json_value(schema, {"a": 1, "b": 2}) == []
    problems = validate_json_value(schema, {"a": "x"})
    assert len(problems) == 1
    assert problems[0].startswith("a:")


def test_all_of_and_unknown_keywords():
    schema = {"allOf": [{"type": "object"}, {"required": ["x"]}], "x-custom": True}
    assert validate_json_value(schema, {"x": 1}) == []
    assert validate_json_value(schema, {}) == ["x: required property is missing"]
    assert validate_json_value({"x-custom": True, "x-format": "email"}, "anything") == []


def test_unresolvable_ref_is_ignored():
    assert validate_json_value({"$ref": "#/$defs/Missing"}, 1) == []


def test_enum_and_const_distinguish_booleans_from_numbers():
    # JSON Schema compares enum/const values by JSON equality: true is not 1, false is not 0.
    assert validate_json_value({"enum": [1, 2]}, True)
    assert validate_json_value({"enum": [True]}, 1)
    assert validate_json_value({"const": 0}, False)
    assert validate_json_value({"enum": [1, 2]}, 1) == []


# --------------------------------------------------------------------------- parse_docstring


def test_parse_empty_docstring():
    assert parse_docstring(None) == ParsedDocstring()
    assert parse_docstring("") == ParsedDocstring(description="", params={})


def test_parse_plain_docstring():
    doc = """Summary line.

    Second paragraph.
    """
    assert parse_docstring(doc) == ParsedDocstring(
        description="Summary line.\n\nSecond paragraph.", params={}
    )


def test_parse_google_docstring():
    doc = """Fetch rows.

    Args:
        table (str): The table
            to read.
        limit: At most this many rows.
        *columns: Which columns.
        **filters: Column filters.

    Returns:
        The rows.

    Raises:
        KeyError: Unknown table.
    """
    parsed = parse_docstring(doc)
    assert parsed.description == "Fetch rows."
    assert parsed.params == {
        "table": "The table to read.",
        "limit": "At most this many rows.",
        "columns": "Which columns.",
        "filters": "Column filters.",
    }


def test_parse_google_continuation_that_looks_like_an_argument():
    doc = """Do it.

    Args:
        mode: How to run. Options
            fast: quickly.
        other: Another.
    """
    assert parse_docstring(doc).params == {
        "mode": "How to run. Options fast: quickly.",
        "other": "Another.",
    }


@pytest.mark.parametrize("header", ["Arguments:", "Parameters:", "Params:"])
def test_parse_argument_section_aliases(header):
    doc = f"""Summary.

    {header}
        x: The x.
    """
    assert parse_docstring(doc).params == {"x": "The x."}


def test_parse_sphinx_docstring():
    doc = """Summary.

    Details here.

    :param name: The name,
        continued.
    :param int count: How many.
    :type count: int
    :returns: Something.
    :raises ValueError: Never.
    """
    parsed = parse_docstring(doc)
    assert parsed.description == "Summary.\n\nDetails here."
    assert parsed.params == {"name": "The name, continued.", "count": "How many."}


def test_parse_docstring_sections_do_not_leak_into_description():
    doc = """Summary.

    Returns:
        A value.

    Example:
        >>> f()
    """
    assert parse_docstring(doc) == ParsedDocstring(description="Summary.", params={})
