"""Schema-valid example arguments for a JSON Schema (used by ``TestChatModel``)."""

from __future__ import annotations

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
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [_sample(schema.get("items", {"type": "string"}), root, depth + 1)] * count
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = "example"
    minimum = int(schema.get("minLength", 0))
    return text + "x" * max(0, minimum - len(text))
