"""The argument validator: ``jsonschema`` when installed, the core's checker otherwise, and
the core checker never refusing what ``jsonschema`` accepts (Hypothesis).

NumPy-style docstrings filling parameter descriptions are tested here too."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolsearch.tools.validation as validation
from toolsearch import tool
from toolsearch.tools import tool_callbacks
from toolsearch.tools.docstrings import parse_docstring
from toolsearch.tools.validation import validate_json_value

jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture(params=["jsonschema", "core"])
def checker(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "core":
        monkeypatch.setattr(validation, "_jsonschema_validator", lambda schema: None)
    return str(request.param)


PATTERN_PROPERTIES = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "patternProperties": {"^x-": {"type": "integer"}},
    "additionalProperties": False,
}

CASES: list[tuple[dict[str, Any], Any, bool]] = [
    # patternProperties next to additionalProperties: false (the old checker refused these)
    (PATTERN_PROPERTIES, {"name": "a", "x-one": 1, "x-two": 2}, True),
    (PATTERN_PROPERTIES, {"x-one": "no"}, False),
    (PATTERN_PROPERTIES, {"other": 1}, False),
    ({"type": "string", "pattern": "^[a-z]+$"}, "abc", True),
    ({"type": "string", "pattern": "^[a-z]+$"}, "ABC", False),
    ({"type": "string", "format": "date"}, "2026-03-01", True),
    ({"type": "string", "format": "date"}, "yesterday", False),
    ({"type": "string", "format": "email"}, "ada@example.org", True),
    ({"type": "string", "format": "ipv4"}, "10.0.0.300", False),
    ({"type": "string", "format": "uuid"}, "12345678-1234-5678-1234-567812345678", True),
    ({"type": "string", "format": "a-format-nobody-knows"}, "anything", True),
    ({"type": "number", "multipleOf": 0.1}, 0.3, True),  # 0.3 / 0.1 is not exactly 3.0
    ({"type": "number", "multipleOf": 0.1}, 0.35, False),
    ({"type": "integer", "multipleOf": 5}, 15, True),
    ({"type": "integer", "multipleOf": 5}, 16, False),
    ({"type": "array", "uniqueItems": True}, [1, 2, 3], True),
    ({"type": "array", "uniqueItems": True}, [1, 2, 1], False),
    ({"type": "array", "uniqueItems": True}, [1, True], True),  # true is not 1 in JSON
    ({"not": {"type": "string"}}, 3, True),
    ({"not": {"type": "string"}}, "3", False),
    (
        {
            "type": "object",
            "if": {"properties": {"kind": {"const": "card"}}},
            "then": {"required": ["number"]},
            "else": {"required": ["iban"]},
        },
        {"kind": "card", "number": "4111"},
        True,
    ),
    (
        {
            "type": "object",
            "if": {"properties": {"kind": {"const": "card"}}},
            "then": {"required": ["number"]},
            "else": {"required": ["iban"]},
        },
        {"kind": "card"},
        False,
    ),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1.5, True),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 2, False),  # both: not exactly one
    ({"type": "number", "exclusiveMinimum": 0}, 0, False),
    ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}, ["a", 1], True),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, [1], False),
    ({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}, {"ok": 1}, True),
    ({"type": "object", "dependentRequired": {"a": ["b"]}}, {"a": 1}, False),
]


@pytest.mark.parametrize(("schema", "value", "valid"), CASES)
def test_every_keyword_is_checked_the_same_either_way(
    checker: str, schema: dict[str, Any], value: Any, valid: bool
) -> None:
    problems = validate_json_value(schema, value)
    assert (problems == []) is valid, problems


def test_problems_keep_their_short_form_either_way(checker: str) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string", "maxLength": 2}},
        "required": ["a", "c"],
        "additionalProperties": False,
    }
    problems = validate_json_value(schema, {"a": "x", "b": "long", "d": 1})
    text = "; ".join(problems)
    assert "a: expected integer, got string" in text
    assert "c: required property is missing" in text
    assert "b: allows at most 2 characters" in text
    assert "d: unexpected property (allowed: a, b)" in text


def test_a_pattern_python_cannot_read_is_not_checked_by_the_core(checker: str) -> None:
    schema = {"type": "string", "pattern": "\\p{L}+"}  # ECMA Unicode class: not Python re
    if checker == "core":
        assert validate_json_value(schema, "anything") == []


# -- the core checker never refuses what jsonschema accepts ------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(-1000, 1000, allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "x-1", "x-2", "kind", "n"]), inner, max_size=4)
    ),
    max_leaves=12,
)

SCHEMAS: list[dict[str, Any]] = [
    PATTERN_PROPERTIES,
    {"type": "number", "multipleOf": 0.5, "minimum": -10, "exclusiveMaximum": 100},
    {"type": "array", "uniqueItems": True, "items": {"type": ["integer", "string"]}},
    {"oneOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "maxLength": 2}]},
    {"anyOf": [{"type": "object", "required": ["a"]}, {"type": "array", "minItems": 1}]},
    {"not": {"type": "object", "required": ["kind"]}},
    {
        "type": "object",
        "if": {"required": ["kind"]},
        "then": {"properties": {"n": {"type": "integer", "multipleOf": 3}}},
        "else": {"additionalProperties": {"type": "string"}},
    },
    {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Item"}},
        "$defs": {"Item": {"type": "array", "items": {"type": "number"}, "maxItems": 3}},
    },
]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON, index=st.integers(0, len(SCHEMAS) - 1))
def test_the_core_checker_accepts_everything_jsonschema_accepts(value: Any, index: int) -> None:
    schema = SCHEMAS[index]
    if jsonschema.Draft202012Validator(schema).is_valid(value):
        problems: list[str] = []
        validation._check(schema, value, "", schema, problems, depth=0)
        assert problems == []


# -- NumPy docstrings --------------------------------------------------------------------------


def forecast(city: str, days: int = 3, unit: str = "c") -> str:
    """Forecast the weather for a city.

    Uses the national service.

    Parameters
    ----------
    city : str
        The city, in English,
        e.g. "Paris".
    days : int, optional
        How many days ahead.
    unit : {"c", "f"}
        Celsius or Fahrenheit.

    Returns
    -------
    str
        The forecast.

    Examples
    --------
    >>> forecast("Paris")
    """
    return "sunny"


def test_a_numpy_docstring_fills_parameter_descriptions_and_stays_out_of_the_description() -> None:
    (callback,) = tool_callbacks(tool(forecast))
    definition = callback.definition
    assert (
        definition.description == "Forecast the weather for a city.\n\nUses the national service."
    )
    properties = definition.input_schema["properties"]
    assert properties["city"]["description"] == 'The city, in English, e.g. "Paris".'
    assert properties["days"]["description"] == "How many days ahead."
    assert properties["unit"]["description"] == "Celsius or Fahrenheit."


def test_numpy_entries_naming_several_parameters_and_without_text() -> None:
    parsed = parse_docstring(
        """Move.

        Parameters
        ----------
        x, y : float
            Coordinates.
        speed

        Raises
        ------
        ValueError
            Off the map.
        """
    )
    assert parsed.description == "Move."
    assert parsed.params == {"x": "Coordinates.", "y": "Coordinates."}
