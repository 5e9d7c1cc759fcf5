"""Which MCP tools are exposed, and under which names.

Each server's tools pass its ``include_tools`` / ``exclude_tools`` patterns and the
provider's ``tool_filter``; a name several servers offer is prefixed with the server's
name (``prefix="auto"``), and every exposed name follows the tool-name rules of
:mod:`toolsearch.tools.names`, the catalog's too, so one server's tools are named alike in
live sessions, ``tools/list`` dumps and built catalogs. The proxy names the servers'
prompts by the same rule (:func:`exposed_names`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from toolsearch.mcp.config import ServerConfig
from toolsearch.tools.definition import ToolAnnotations, ToolDefinition
from toolsearch.tools.names import fit_name, qualified_name, server_prefix

if TYPE_CHECKING:
    from mcp.types import Tool

__all__ = [
    "Exposed",
    "PrefixMode",
    "ToolFilter",
    "definition_of",
    "expose",
    "exposed_name",
    "exposed_names",
]

logger = logging.getLogger(__name__)

PrefixMode = Literal["auto", "always", "never"]
ToolFilter = Callable[[str, ToolDefinition], bool]
"""``tool_filter(server_name, definition) -> bool``; the definition has the server's own name."""


@dataclass(frozen=True)
class Exposed:
    """One exposed tool: its server, its name there, and its definition as exposed."""

    server: str
    tool_name: str
    definition: ToolDefinition


def exposed_name(server: str, tool_name: str, *, prefixed: bool, separator: str) -> str:
    """The name a server's tool is exposed under: ``<server><separator><tool>`` when
    prefixed (:func:`~toolsearch.tools.names.qualified_name`), cut to 64 characters by
    :func:`~toolsearch.tools.names.fit_name` either way."""
    if prefixed:
        return qualified_name(server_prefix(server), tool_name, separator)
    return fit_name(tool_name)


def expose(
    tools: Mapping[str, Sequence[Tool]],
    configs: Mapping[str, ServerConfig],
    tool_filter: ToolFilter | None,
    prefix: PrefixMode,
    separator: str,
) -> dict[str, Exposed]:
    """Which tools are exposed and under which names (config order, then server order)."""
    candidates: list[tuple[str, ToolDefinition]] = []
    for server, server_tools in tools.items():
        config = configs[server]
        seen: set[str] = set()
        for tool in server_tools:
            if tool.name in seen or not config.exposes(tool.name):
                continue
            seen.add(tool.name)
            definition = definition_of(tool, server)
            if definition is None:
                continue
            if tool_filter is not None and not tool_filter(server, definition):
                continue
            candidates.append((server, definition))
    by_key = {(server, d.name): d for server, d in candidates}
    exposed: dict[str, Exposed] = {}
    for name, (server, tool_name) in exposed_names(list(by_key), prefix, separator).items():
        renamed = dataclasses.replace(by_key[server, tool_name], name=name, category=server)
        exposed[name] = Exposed(server, tool_name, renamed)
    return exposed


def exposed_names(
    candidates: Sequence[tuple[str, str]],
    prefix: PrefixMode,
    separator: str,
    kind: str = "tool",
) -> dict[str, tuple[str, str]]:
    """The name each ``(server, name)`` is exposed under, in order: ``{exposed: (server,
    name)}``. ``"auto"`` prefixes a name only when several servers offer it, ``"always"``
    every name, ``"never"`` none (:func:`exposed_name`); a name already taken leaves the
    later candidate out, with a warning naming ``kind`` (``"tool"``, ``"prompt"``)."""
    counts = Counter(name for _, name in candidates)
    named: dict[str, tuple[str, str]] = {}
    for server, name in candidates:
        prefixed = prefix == "always" or (prefix == "auto" and counts[name] > 1)
        exposed = exposed_name(server, name, prefixed=prefixed, separator=separator)
        if exposed in named:
            logger.warning(
                "MCP %s %r of server %r is left out: server %r already exposes that name%s",
                kind,
                name,
                server,
                named[exposed][0],
                " (use prefix='auto')" if prefix == "never" else "",
            )
            continue
        named[exposed] = (server, name)
    return named


def definition_of(tool: Tool, server: str) -> ToolDefinition | None:
    """A server's tool as a ``ToolDefinition`` (server name kept), or ``None`` with a
    warning when it is unusable. Its title (``title``, else the annotations' legacy
    ``title``), annotations and output schema are kept."""
    schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
    schema = dict(schema) or {"type": "object", "properties": {}}
    annotations = getattr(tool, "annotations", None)
    title = tool.title or getattr(annotations, "title", None) or None
    description = tool.description or title or ""
    output = getattr(tool, "output_schema", None)
    try:
        return ToolDefinition(
            name=tool.name,
            description=description,
            input_schema=schema,
            category=server,
            title=title,
            annotations=ToolAnnotations.from_mcp(annotations),
            output_schema=dict(output) if isinstance(output, Mapping) else None,
        )
    except Exception as exc:
        logger.warning("MCP server %r: tool %r is left out: %s", server, tool.name, exc)
        return None
