"""What a model is told about a tool, and how the loop treats its result."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsearch.errors import ToolDefinitionError

__all__ = ["ToolDefinition", "ToolMetadata"]


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as a model sees it: a name, a description and a JSON Schema of its input.

    ``category`` is optional grouping for tool search (filters and the system prompt's
    category list); it is never sent to the model as part of the definition.
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    category: str | None = None
    _fingerprint: str = field(init=False, repr=False, compare=False, default="")

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ToolDefinitionError(str(self.name), "a tool name must be a non-empty string")
        if any(ch.isspace() for ch in self.name):
            raise ToolDefinitionError(self.name, "a tool name must not contain whitespace")
        if not isinstance(self.description, str):
            raise ToolDefinitionError(self.name, "the description must be a string")
        if not isinstance(self.input_schema, Mapping):
            raise ToolDefinitionError(self.name, "input_schema must be a JSON Schema mapping")
        # a private copy: later changes to the caller's dict must not desync the fingerprint
        # (a schema handed over by ``_adopting`` is the definition's own already)
        schema = self.input_schema
        object.__setattr__(
            self, "input_schema", dict(schema) if type(schema) is _Handed else _copy_schema(schema)
        )
        identity: list[Any] = [self.name, self.description, self.input_schema]
        if self.category is not None:
            identity.append(self.category)
        payload = json.dumps(identity, sort_keys=True, default=str)
        object.__setattr__(
            self, "_fingerprint", hashlib.sha256(payload.encode("utf-8")).hexdigest()
        )

    @classmethod
    def _adopting(
        cls,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        category: str | None = None,
    ) -> ToolDefinition:
        """The constructor, minus the deep copy of ``input_schema``: the definition takes
        the schema over. Only for readers that just parsed the schema themselves and keep no
        other reference to it (a catalog build reads 125,000 JSON lines; the copy was a
        fifth of the time spent per tool). Same checks, same fingerprint."""
        if type(input_schema) is dict:
            input_schema = _Handed(input_schema)
        return cls(name, description, input_schema, category)

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    @property
    def fingerprint(self) -> str:
        """sha256 over name, description and schema: equal for equal definitions."""
        return self._fingerprint

    def to_dict(self) -> dict[str, Any]:
        """A plain-JSON form: ``{"name", "description", "input_schema"}``."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": dict(self.input_schema),
        }


class _Handed(dict):  # type: ignore[type-arg]
    """A schema given to :meth:`ToolDefinition._adopting` (kept, not deep-copied)."""


_ATOMIC = frozenset({str, int, float, bool, type(None)})
_MAX_DEPTH = 64


class _TooDeep(Exception):
    pass


def _copy_json(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind is dict:
        if depth > _MAX_DEPTH:
            raise _TooDeep
        return {k: _copy_json(v, depth + 1) for k, v in value.items()}
    if kind is list:
        if depth > _MAX_DEPTH:
            raise _TooDeep
        return [_copy_json(v, depth + 1) for v in value]
    if kind in _ATOMIC:
        return value
    return copy.deepcopy(value)


def _copy_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a schema, same keys in the same order.

    Schemas are JSON (dicts, lists, strings, numbers): copying those directly is about
    twice as fast as ``copy.deepcopy``, which matters when a catalog build creates 125,000
    definitions. Anything else (tuples, custom objects) is deep-copied as before, and so
    is a schema nested deeper than any real one (a cycle: ``copy.deepcopy`` keeps it).
    """
    try:
        return {k: _copy_json(v, 1) for k, v in schema.items()}
    except _TooDeep:
        return copy.deepcopy(dict(schema))


@dataclass(frozen=True, slots=True)
class ToolMetadata:
    """How the loop treats a tool: ``return_direct`` sends its result straight to the caller."""

    return_direct: bool = False
