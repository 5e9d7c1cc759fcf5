"""MCP ``tools/list`` dumps: one JSON file per server, read into tool records.

Accepted shapes (``docs/catalog-sources.md``): the JSON-RPC result ``{"tools": [...]}``,
the whole response ``{"jsonrpc": ..., "result": {"tools": [...]}}``, or a bare list of
tools. The server is the top-level (or ``result``-level) ``server`` field when it is a
string or an object with a ``name``, else ``serverInfo.name``, else the file stem.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsearch.catalog.openapi import load_document
from toolsearch.errors import CatalogSourceError, ToolDefinitionError
from toolsearch.tools.definition import ToolDefinition

__all__ = ["McpDump", "dump_tool", "read_dump", "schema_of", "tool_name"]

_SCHEMA_KEYS = ("inputSchema", "input_schema", "parameters")


@dataclass(frozen=True)
class McpDump:
    """One server's tools as raw records, in the order the server listed them."""

    server: str
    tools: Sequence[Any]


def read_dump(path: Path) -> McpDump:
    """The server name and raw tool records of one dump file."""
    source = str(path)
    data = load_document(path)
    server = path.stem
    if isinstance(data, Mapping):
        server = _server_name(data) or server
        if "tools" not in data:
            if data.get("error") is not None:
                raise CatalogSourceError(source, "the dump holds a JSON-RPC error, not tools")
            if isinstance(data.get("result"), Mapping):
                data = data["result"]
                server = _server_name(data) or server
        if "tools" not in data:
            raise CatalogSourceError(
                source, "an MCP dump needs 'tools' (or 'result.tools') or a bare list of tools"
            )
        data = data["tools"]
    if not isinstance(data, list):
        raise CatalogSourceError(source, "an MCP dump's 'tools' must be a list")
    return McpDump(server, data)


def _server_name(data: Mapping[str, Any]) -> str | None:
    for value in (data.get("server"), data.get("serverInfo")):
        if isinstance(value, Mapping):
            value = value.get("name")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def tool_name(record: Any) -> str | None:
    """A record's raw name, or ``None`` when it has no usable name."""
    if isinstance(record, Mapping):
        name = record.get("name")
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def schema_of(record: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    """A record's input schema under any accepted key; an empty object schema if absent."""
    for key in _SCHEMA_KEYS:
        if key in record and record[key] is not None:
            schema = record[key]
            if not isinstance(schema, Mapping):
                raise CatalogSourceError(source, f"'{key}' must be a JSON Schema object")
            return schema
    return {"type": "object", "properties": {}}


def dump_tool(record: Any, *, name: str, server: str, source: str) -> ToolDefinition:
    """One dump record as a tool named ``name`` (the clash-resolved name), category = server."""
    if not isinstance(record, Mapping):
        raise CatalogSourceError(source, "a tool must be a JSON object")
    description = record.get("description")
    if description is not None and not isinstance(description, str):
        raise CatalogSourceError(source, "'description' must be a string")
    try:
        return ToolDefinition(
            name=name,
            description=(description or "").strip(),
            input_schema=schema_of(record, source),
            category=server,
        )
    except ToolDefinitionError as exc:
        raise CatalogSourceError(source, str(exc)) from exc
