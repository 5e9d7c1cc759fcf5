"""A small JSON Schema checker for hand-written tool schemas (the core needs no jsonschema).

It covers what tool schemas use in practice: ``type``, ``required``, ``properties``,
``additionalProperties``, ``items``, ``enum``, ``const``, ``anyOf``/``oneOf``/``allOf``,
local ``$ref`` (``#/$defs/...``, ``#/definitions/...``), numeric and length bounds.
Keywords it does not know are ignored, so it never rejects what a full validator accepts
on those keywords; it only reports what it can check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["json_type_name", "validate_json_value"]

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


def validate_json_value(schema: Mapping[str, Any], value: Any) -> list[str]:
    """Return the problems found in ``value`` against ``schema`` (empty when it fits)."""
    problems: list[str] = []
    _check(schema, value, "", schema, problems, depth=0)
    return problems


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    target: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(target, Mapping) or part not in target:
            return {}
        target = target[part]
    return target if isinstance(target, Mapping) else {}


def _check(
    schema: Any, value: Any, path: str, root: Mapping[str, Any], out: list[str], depth: int
) -> None:
    if not isinstance(schema, Mapping) or depth > 64:
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
    if "enum" in schema and not any(_json_equal(value, item) for item in schema["enum"]):
        out.append(f"{where}: {value!r} is not one of {list(schema['enum'])!r}")
    if "const" in schema and not _json_equal(value, schema["const"]):
        out.append(f"{where}: must be {schema['const']!r}")
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            attempts = []
            for option in options:
                found: list[str] = []
                _check(option, value, path, root, found, depth + 1)
                if not found:
                    break
                attempts.append(found)
            else:
                out.append(f"{where}: matches none of the allowed shapes ({attempts[0][0]})")
    for option in schema.get("allOf", []) or []:
        _check(option, value, path, root, out, depth + 1)
    if isinstance(value, dict):
        _check_object(schema, value, path, root, out, depth)
    elif isinstance(value, list):
        items = schema.get("items")
        for i, item in enumerate(value):
            _check(items, item, f"{path}[{i}]", root, out, depth + 1)
        _bound(schema, "minItems", "maxItems", len(value), where, "items", out)
    elif isinstance(value, str):
        _bound(schema, "minLength", "maxLength", len(value), where, "characters", out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{where}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{where}: {value} is above the maximum {schema['maximum']}")


def _check_object(
    schema: Mapping[str, Any],
    value: dict[str, Any],
    path: str,
    root: Mapping[str, Any],
    out: list[str],
    depth: int,
) -> None:
    properties = schema.get("properties") or {}
    for name in schema.get("required", []) or []:
        if name not in value:
            out.append(f"{path + '.' if path else ''}{name}: required property is missing")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        child = f"{path}.{name}" if path else name
        if name in properties:
            _check(properties[name], item, child, root, out, depth + 1)
        elif extra is False:
            allowed = ", ".join(sorted(properties)) or "none"
            out.append(f"{child}: unexpected property (allowed: {allowed})")
        elif isinstance(extra, Mapping):
            _check(extra, item, child, root, out, depth + 1)


def _bound(
    schema: Mapping[str, Any], low: str, high: str, size: int, where: str, unit: str, out: list[str]
) -> None:
    if low in schema and size < schema[low]:
        out.append(f"{where}: needs at least {schema[low]} {unit}")
    if high in schema and size > schema[high]:
        out.append(f"{where}: allows at most {schema[high]} {unit}")


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
