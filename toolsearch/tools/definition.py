"""What a model is told about a tool, and how the loop treats its result."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsearch.errors import ToolDefinitionError

__all__ = ["ToolAnnotations", "ToolDefinition", "ToolMetadata"]


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Hints about a tool's behaviour, as MCP's ``ToolAnnotations`` give them.

    Each is ``None`` when not stated (MCP's defaults then apply: not read-only, may be
    destructive, not idempotent, open world). They are hints for clients (confirm before a
    destructive call...), never guarantees, and no provider request carries them.
    """

    read_only: bool | None = None
    """``readOnlyHint``: the tool does not change its environment."""
    destructive: bool | None = None
    """``destructiveHint``: an update may destroy (rather than only add)."""
    idempotent: bool | None = None
    """``idempotentHint``: calling it again with the same arguments changes nothing more."""
    open_world: bool | None = None
    """``openWorldHint``: it reaches an open world (the web) rather than a closed domain."""

    _MCP_NAMES = (
        ("read_only", "readOnlyHint"),
        ("destructive", "destructiveHint"),
        ("idempotent", "idempotentHint"),
        ("open_world", "openWorldHint"),
    )

    def __post_init__(self) -> None:
        for attribute, _ in self._MCP_NAMES:
            value = getattr(self, attribute)
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"ToolAnnotations.{attribute} must be a bool or None")

    @classmethod
    def from_mcp(cls, annotations: Any) -> ToolAnnotations | None:
        """From an MCP ``ToolAnnotations`` (or its JSON, camelCase or snake_case); ``None``
        when it states nothing."""
        if annotations is None:
            return None
        if isinstance(annotations, ToolAnnotations):
            return annotations
        values: dict[str, bool | None] = {}
        for attribute, mcp_name in cls._MCP_NAMES:
            snake = mcp_name.replace("Hint", "_hint")
            snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in snake)
            if isinstance(annotations, Mapping):
                value = next(
                    (annotations[k] for k in (mcp_name, snake, attribute) if k in annotations),
                    None,
                )
            else:
                value = getattr(annotations, snake, None)
            values[attribute] = value if isinstance(value, bool) else None
        found = cls(**values)
        return found if any(v is not None for v in values.values()) else None

    def to_mcp(self) -> dict[str, bool]:
        """The stated hints under MCP's names (``{"readOnlyHint": true}``...)."""
        return {
            mcp_name: getattr(self, attribute)
            for attribute, mcp_name in self._MCP_NAMES
            if getattr(self, attribute) is not None
        }


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as a model sees it: a name, a description and a JSON Schema of its input.

    ``category`` is optional grouping for tool search (filters and the system prompt's
    category list); it is never sent to the model as part of the definition.

    ``title`` (a human-readable name), ``annotations`` (:class:`ToolAnnotations`) and
    ``output_schema`` (a JSON Schema of the structured result) are MCP metadata: MCP tools
    carry them in, ``serve_tools`` and the MCP proxy send them out. No provider request
    carries them (OpenAI, Anthropic and Gemini function declarations have no place for a
    title or hints; see the adapters for the output schema), and no index reads them.
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    category: str | None = None
    title: str | None = None
    annotations: ToolAnnotations | None = None
    output_schema: Mapping[str, Any] | None = None
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
        if self.title is not None and not isinstance(self.title, str):
            raise ToolDefinitionError(self.name, "the title must be a string")
        if self.annotations is not None and not isinstance(self.annotations, ToolAnnotations):
            found = (
                ToolAnnotations.from_mcp(self.annotations)
                if isinstance(self.annotations, Mapping)
                else None
            )
            if found is None and not isinstance(self.annotations, Mapping):
                raise ToolDefinitionError(
                    self.name, "annotations must be ToolAnnotations (or its MCP JSON)"
                )
            object.__setattr__(self, "annotations", found)
        if self.output_schema is not None:
            if not isinstance(self.output_schema, Mapping):
                raise ToolDefinitionError(self.name, "output_schema must be a JSON Schema mapping")
            object.__setattr__(self, "output_schema", _copy_schema(self.output_schema))
        # a private copy: later changes to the caller's dict must not desync the fingerprint
        # (a schema handed over by ``_adopting`` is the definition's own already)
        schema = self.input_schema
        object.__setattr__(
            self, "input_schema", dict(schema) if type(schema) is _Handed else _copy_schema(schema)
        )
        # what a model and an index read; the MCP metadata (title, annotations, output
        # schema) reaches neither, so it leaves fingerprints, index caches and session keys
        # as they were (see ``fingerprint``)
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
        """sha256 over name, description, input schema and category: what a model is told
        and what an index reads. Equal for equal definitions; ``title``, ``annotations``
        and ``output_schema`` are left out on purpose (no provider request and no index
        reads them), so adding MCP metadata to a tool keeps its index cache and sessions."""
        return self._fingerprint

    def to_dict(self, *, mcp_metadata: bool = False) -> dict[str, Any]:
        """A plain-JSON form: ``{"name", "description", "input_schema"}``; with
        ``mcp_metadata`` also ``title``, ``annotations`` (MCP's names) and ``output_schema``
        when set."""
        record: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "input_schema": dict(self.input_schema),
        }
        if mcp_metadata:
            if self.title is not None:
                record["title"] = self.title
            if self.annotations is not None and self.annotations.to_mcp():
                record["annotations"] = self.annotations.to_mcp()
            if self.output_schema is not None:
                record["output_schema"] = dict(self.output_schema)
        return record


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
    """How the loop and the adapters treat a tool: ``return_direct`` sends its result
    straight to the caller; ``tool_search`` marks a tool search (its results carry
    ``ToolResponse.search_hits``), which an adapter with a native tool-search shape may
    send as the provider's own search tool (the OpenAI Responses API's client-executed
    ``tool_search``)."""

    return_direct: bool = False
    tool_search: bool = False
