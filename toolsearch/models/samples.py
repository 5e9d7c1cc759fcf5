"""Schema-valid example arguments for a JSON Schema (used by ``TestChatModel``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["sample_arguments"]


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy ``schema``: every property filled with a simple valid value."""
    value = _sample(schema, schema, depth=0)
    return value if isinstance(value, dict) else {}


def _sample(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 12:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return _sample(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for keyword in ("anyOf", "oneOf"):
        options = [o for o in schema.get(keyword, []) if o.get("type") != "null"]
        if options:
            return _sample(options[0], root, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part_value = _sample(part, root, depth + 1)
            if isinstance(part_value, dict):
                merged.update(part_value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        return {name: _sample(sub, root, depth + 1) for name, sub in properties.items()}
    if kind == "array" and isinstance(schema.get("prefixItems"), list):
        return [_sample(item, root, depth + 1) for item in schema["prefixItems"]]
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [_sample(schema.get("items", {"type": "string"}), root, depth + 1)] * count
    if kind in ("integer", "number"):
        return _sample_number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _sample_string(schema)


_FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
    "duration": "P1D",
    "uri-reference": "https://example.com",
}


def _sample_number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None and high is not None:
        value = (low + high) / 2
    elif low is not None:
        value = low + 1
    elif high is not None:
        value = high - 1
    else:
        value = 1
    if integer:
        value = math.ceil(value) if low is not None else math.floor(value)
        return int(value)
    return float(value)


def _sample_string(schema: Mapping[str, Any]) -> str:
    text = _FORMATS.get(str(schema.get("format")), "example")
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    if len(text) < low:
        text += "x" * (low - len(text))
    if high is not None:
        text = text[: int(high)]
    return text
