"""Checking a model's tool arguments against the tool's JSON Schema.

With ``jsonschema`` installed (it comes with the ``mcp`` extra) it decides, so every valid
argument is accepted and every keyword of the schema's draft is checked (``format`` for the
formats it can check). Without it, a small checker of the core's own covers what tool
schemas use: ``type``, ``required``, ``properties``, ``patternProperties``,
``additionalProperties``, ``propertyNames``, ``items``/``prefixItems``, ``contains``,
``enum``, ``const``, ``anyOf``, ``oneOf`` (exactly one), ``allOf``, ``not``,
``if``/``then``/``else``, ``dependentRequired``, local ``$ref`` (``#/$defs/...``,
``#/definitions/...``), numeric bounds (exclusive ones too), ``multipleOf``, lengths and
sizes, ``uniqueItems``, ``pattern`` and the common ``format`` values (date, date-time,
time, email, uuid, ipv4, ipv6). Keywords it does not know are ignored, and so is anything
it cannot check (a pattern Python's ``re`` does not parse, an unknown format): the
fallback may accept an invalid argument, never refuse a valid one. Either way the problems
come back as short ``path: problem`` lines the model can act on.
"""

from __future__ import annotations

import datetime
import ipaddress
import math
import re
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["json_type_name", "preload", "validate_json_value"]

_TYPE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}

_MAX_DEPTH = 64


def validate_json_value(schema: Mapping[str, Any], value: Any) -> list[str]:
    """Return the problems found in ``value`` against ``schema`` (empty when it fits)."""
    validator = _jsonschema_validator(schema)
    if validator is not None:
        try:
            return _jsonschema_problems(validator, schema, value)
        except Exception:  # a schema jsonschema cannot use (a bad regex...): the core's own
            pass
    problems: list[str] = []
    _check(schema, value, "", schema, problems, depth=0)
    return problems


# -- with jsonschema --------------------------------------------------------------------------


def preload() -> bool:
    """Import ``jsonschema`` now (``False`` when it is not installed): its first import
    takes 0.1-0.7 s, which a door's first schema-checked tool call would otherwise pay on
    the event loop. Front doors call it when they are built or warmed up."""
    try:
        import jsonschema  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


_VALIDATORS: OrderedDict[int, tuple[Mapping[str, Any], Any]] = OrderedDict()
_CACHE_SIZE = 512
_MISSING = object()


def _jsonschema_validator(schema: Mapping[str, Any]) -> Any:
    """A ``jsonschema`` validator for ``schema`` (cached per schema object), or ``None``
    when jsonschema is not installed or the schema is not one it can use."""
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        _VALIDATORS.move_to_end(id(schema))
        return cached[1]
    try:
        import jsonschema
    except ImportError:
        return None
    try:
        kind = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = _tolerant(kind)(schema, format_checker=kind.FORMAT_CHECKER)
    except Exception:
        return None
    _VALIDATORS[id(schema)] = (schema, validator)
    if len(_VALIDATORS) > _CACHE_SIZE:
        _VALIDATORS.popitem(last=False)
    return validator


_TOLERANT: dict[Any, Any] = {}


def _tolerant(kind: Any) -> Any:
    """``kind`` with a ``multipleOf`` that allows for binary floats: jsonschema's own
    refuses ``0.3`` as a multiple of ``0.1`` (``0.3 / 0.1`` is ``2.9999999999999996``),
    a valid argument a model does send."""
    found = _TOLERANT.get(kind)
    if found is None:
        import jsonschema

        def multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Any:
            if not validator.is_type(instance, "number") or isinstance(instance, bool):
                return
            if isinstance(step, (int, float)) and step > 0 and not _multiple_of(instance, step):
                yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {step}")

        found = jsonschema.validators.extend(kind, {"multipleOf": multiple_of})
        _TOLERANT[kind] = found
    return found


def _jsonschema_problems(validator: Any, schema: Mapping[str, Any], value: Any) -> list[str]:
    problems: list[str] = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.path))):
        where = _path(error.absolute_path)
        keyword = error.validator
        instance = error.instance
        if keyword == "required" and isinstance(instance, dict):
            for name in error.validator_value:
                if name not in instance:
                    line = f"{where + '.' if where else ''}{name}: required property is missing"
                    if line not in problems:
                        problems.append(line)
            continue
        if keyword == "type":
            names = error.validator_value
            expected = " or ".join(names if isinstance(names, list) else [names])
            line = f"{where or 'arguments'}: expected {expected}, got {json_type_name(instance)}"
        elif keyword == "additionalProperties" and isinstance(instance, dict):
            allowed = ", ".join(sorted(error.schema.get("properties") or {})) or "none"
            extra = _extra_properties(error.schema, instance)
            for name in extra:
                child = f"{where}.{name}" if where else name
                problems.append(f"{child}: unexpected property (allowed: {allowed})")
            if extra:
                continue
            line = f"{where or 'arguments'}: {error.message}"
        elif keyword in _SIZES and isinstance(error.validator_value, (int, float)):
            unit, word = _SIZES[keyword]
            limit = error.validator_value
            if unit:
                line = f"{where or 'arguments'}: {word} {limit} {unit}"
            else:
                line = f"{where or 'arguments'}: {instance} is {word} {limit}"
        elif keyword == "enum":
            options = list(error.validator_value)
            line = f"{where or 'arguments'}: {instance!r} is not one of {options!r}"
        else:
            line = f"{where or 'arguments'}: {error.message}"
        if line not in problems:
            problems.append(line)
    return problems


_SIZES = {
    "minLength": ("characters", "needs at least"),
    "maxLength": ("characters", "allows at most"),
    "minItems": ("items", "needs at least"),
    "maxItems": ("items", "allows at most"),
    "minProperties": ("properties", "needs at least"),
    "maxProperties": ("properties", "allows at most"),
    "minimum": ("", "below the minimum"),
    "maximum": ("", "above the maximum"),
}
"""jsonschema's size and bound errors, phrased as the core checker phrases them."""


def _extra_properties(schema: Mapping[str, Any], instance: dict[str, Any]) -> list[str]:
    properties = schema.get("properties") or {}
    patterns = [p for p in (schema.get("patternProperties") or {}) if _compiles(p)]
    return [
        name
        for name in instance
        if name not in properties and not any(re.search(p, name) for p in patterns)
    ]


def _path(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


# -- the core's own checker -------------------------------------------------------------------


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return schema
    target: Any = root
    for part in ref[2:].split("/") if ref.startswith("#/") else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            return {}
        target = target[part]
    if not isinstance(target, Mapping):
        return {}
    if len(schema) > 1:  # 2020-12: keywords next to $ref apply too
        return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return target


def _fits(schema: Any, value: Any, path: str, root: Mapping[str, Any], depth: int) -> bool:
    found: list[str] = []
    _check(schema, value, path, root, found, depth + 1)
    return not found


def _check(
    schema: Any, value: Any, path: str, root: Mapping[str, Any], out: list[str], depth: int
) -> None:
    if schema is False:
        out.append(f"{path or 'arguments'}: no value is allowed here")
        return
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return
    schema = _resolve(schema, root)
    where = path or "arguments"
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        known = [n for n in names if n in _TYPE_CHECKS]
        if known and not any(_TYPE_CHECKS[n](value) for n in known):
            out.append(f"{where}: expected {' or '.join(known)}, got {json_type_name(value)}")
            return
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_json_equal(value, item) for item in enum):
        out.append(f"{where}: {value!r} is not one of {list(schema['enum'])!r}")
    if "const" in schema and not _json_equal(value, schema["const"]):
        out.append(f"{where}: must be {schema['const']!r}")
    _check_combinators(schema, value, path, root, out, depth)
    if isinstance(value, dict):
        _check_object(schema, value, path, root, out, depth)
    elif isinstance(value, list):
        _check_array(schema, value, path, root, out, depth)
    elif isinstance(value, str):
        _bound(schema, "minLength", "maxLength", len(value), where, "characters", out)
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and _compiles(pattern) and not re.search(pattern, value):
            out.append(f"{where}: does not match the pattern {pattern!r}")
        form = schema.get("format")
        check = _FORMATS.get(form) if isinstance(form, str) else None
        if check is not None and not check(value):
            out.append(f"{where}: {value!r} is not a valid {form}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(schema, value, where, out)


def _check_combinators(
    schema: Mapping[str, Any],
    value: Any,
    path: str,
    root: Mapping[str, Any],
    out: list[str],
    depth: int,
) -> None:
    where = path or "arguments"
    options = schema.get("anyOf")
    if isinstance(options, list) and options:
        attempts = []
        for option in options:
            found: list[str] = []
            _check(option, value, path, root, found, depth + 1)
            if not found:
                break
            attempts.append(found)
        else:
            first = attempts[0][0] if attempts and attempts[0] else "no shape fits"
            out.append(f"{where}: matches none of the allowed shapes ({first})")
    options = schema.get("oneOf")
    if isinstance(options, list) and options:
        fitting = [i for i, option in enumerate(options) if _fits(option, value, path, root, depth)]
        if not fitting:
            found = []
            _check(options[0], value, path, root, found, depth + 1)
            first = found[0] if found else "no shape fits"
            out.append(f"{where}: matches none of the allowed shapes ({first})")
        elif len(fitting) > 1:
            out.append(f"{where}: matches more than one of the allowed shapes (oneOf)")
    for option in schema.get("allOf", []) or []:
        _check(option, value, path, root, out, depth + 1)
    if "not" in schema and _fits(schema["not"], value, path, root, depth):
        out.append(f"{where}: matches a shape that is not allowed (not)")
    if "if" in schema:
        branch = "then" if _fits(schema["if"], value, path, root, depth) else "else"
        if branch in schema:
            _check(schema[branch], value, path, root, out, depth + 1)


def _check_object(
    schema: Mapping[str, Any],
    value: dict[str, Any],
    path: str,
    root: Mapping[str, Any],
    out: list[str],
    depth: int,
) -> None:
    properties = schema.get("properties") or {}
    patterns = {
        p: sub for p, sub in (schema.get("patternProperties") or {}).items() if _compiles(p)
    }
    unknown_patterns = len(patterns) < len(schema.get("patternProperties") or {})
    for name in schema.get("required", []) or []:
        if name not in value:
            out.append(f"{path + '.' if path else ''}{name}: required property is missing")
    for name, needed in (schema.get("dependentRequired") or {}).items():
        if name in value and isinstance(needed, list):
            for other in needed:
                if other not in value:
                    out.append(
                        f"{path + '.' if path else ''}{other}: required with {name!r}, missing"
                    )
    extra = schema.get("additionalProperties", True)
    names_schema = schema.get("propertyNames")
    for name, item in value.items():
        child = f"{path}.{name}" if path else name
        if names_schema is not None:
            _check(names_schema, name, f"{child} (name)", root, out, depth + 1)
        matched = False
        if name in properties:
            matched = True
            _check(properties[name], item, child, root, out, depth + 1)
        for pattern, sub in patterns.items():
            if re.search(pattern, name):
                matched = True
                _check(sub, item, child, root, out, depth + 1)
        if matched or unknown_patterns:
            continue
        if extra is False:
            allowed = ", ".join(sorted(properties)) or "none"
            out.append(f"{child}: unexpected property (allowed: {allowed})")
        elif isinstance(extra, Mapping):
            _check(extra, item, child, root, out, depth + 1)
    where = path or "arguments"
    _bound(schema, "minProperties", "maxProperties", len(value), where, "properties", out)


def _check_array(
    schema: Mapping[str, Any],
    value: list[Any],
    path: str,
    root: Mapping[str, Any],
    out: list[str],
    depth: int,
) -> None:
    where = path or "arguments"
    prefix = schema.get("prefixItems")
    items = schema.get("items")
    if isinstance(items, list):  # draft 4-2019: items as a tuple
        prefix, items = items, schema.get("additionalItems", True)
    leading = prefix if isinstance(prefix, list) else []
    for i, item in enumerate(value):
        sub = leading[i] if i < len(leading) else items
        _check(sub, item, f"{path}[{i}]", root, out, depth + 1)
    _bound(schema, "minItems", "maxItems", len(value), where, "items", out)
    if schema.get("uniqueItems") is True:
        for i, item in enumerate(value):
            if any(_json_equal(item, earlier) for earlier in value[:i]):
                out.append(f"{where}: items must be unique ({path}[{i}] repeats an earlier one)")
                break
    contains = schema.get("contains")
    if contains is not None:
        hits = sum(1 for i, item in enumerate(value) if _fits(contains, item, path, root, depth))
        low = schema.get("minContains", 1)
        high = schema.get("maxContains")
        if isinstance(low, int) and hits < low:
            out.append(f"{where}: needs at least {low} items of the required shape (contains)")
        if isinstance(high, int) and hits > high:
            out.append(f"{where}: allows at most {high} items of that shape (contains)")


def _check_number(schema: Mapping[str, Any], value: float, where: str, out: list[str]) -> None:
    def number(key: str) -> float | None:
        found = schema.get(key)
        is_number = isinstance(found, (int, float)) and not isinstance(found, bool)
        return found if is_number else None

    low, high = number("minimum"), number("maximum")
    if low is not None and value < low:
        out.append(f"{where}: {value} is below the minimum {low}")
    if high is not None and value > high:
        out.append(f"{where}: {value} is above the maximum {high}")
    above, below = number("exclusiveMinimum"), number("exclusiveMaximum")
    if above is not None and value <= above:
        out.append(f"{where}: {value} must be above {above}")
    if below is not None and value >= below:
        out.append(f"{where}: {value} must be below {below}")
    if schema.get("exclusiveMinimum") is True and low is not None and value == low:  # draft 4
        out.append(f"{where}: {value} must be above {low}")
    if schema.get("exclusiveMaximum") is True and high is not None and value == high:
        out.append(f"{where}: {value} must be below {high}")
    step = number("multipleOf")
    if step is not None and step > 0 and not _multiple_of(value, step):
        out.append(f"{where}: {value} is not a multiple of {step}")


def _multiple_of(value: float, step: float) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    if not math.isfinite(value):
        return False
    quotient = value / step
    return math.isclose(quotient, round(quotient), rel_tol=1e-9, abs_tol=1e-9)


def _bound(
    schema: Mapping[str, Any], low: str, high: str, size: int, where: str, unit: str, out: list[str]
) -> None:
    minimum, maximum = schema.get(low), schema.get(high)
    if isinstance(minimum, int) and size < minimum:
        out.append(f"{where}: needs at least {minimum} {unit}")
    if isinstance(maximum, int) and size > maximum:
        out.append(f"{where}: allows at most {maximum} {unit}")


_COMPILED: dict[str, bool] = {}


def _compiles(pattern: str) -> bool:
    """Whether Python's ``re`` reads ``pattern`` (ECMA-262 regexes mostly are); one that
    does not is not checked at all."""
    known = _COMPILED.get(pattern)
    if known is None:
        try:
            re.compile(pattern)
            known = True
        except (re.error, TypeError, RecursionError):
            known = False
        if len(_COMPILED) < 4096:
            _COMPILED[pattern] = known
    return known


def _parses(parse: Callable[[str], Any]) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            parse(text)
        except (ValueError, TypeError):
            return False
        return True

    return check


def _date_time(text: str) -> datetime.datetime:
    if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}", text):
        raise ValueError(text)
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))


def _date(text: str) -> datetime.date:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise ValueError(text)
    return datetime.date.fromisoformat(text)


def _time(text: str) -> datetime.time:
    if not re.match(r"^\d{2}:\d{2}:\d{2}", text):
        raise ValueError(text)
    return datetime.time.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))


def _email(text: str) -> bool:
    return text.count("@") >= 1 and not text.startswith("@") and not text.endswith("@")


_FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _parses(_date_time),
    "date": _parses(_date),
    "time": _parses(_time),
    "email": _email,
    "uuid": _parses(uuid.UUID),
    "ipv4": _parses(ipaddress.IPv4Address),
    "ipv6": _parses(ipaddress.IPv6Address),
}
"""Formats the fallback checks, as loosely as the standard allows (an email needs an
``@``); any other format is not checked."""


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1`` and ``false`` is not ``0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def json_type_name(value: Any) -> str:
    """The JSON type name of a parsed JSON value (``array``, ``object``, ``integer``...)."""
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPE_CHECKS[name](value):
            return name
    return type(value).__name__
