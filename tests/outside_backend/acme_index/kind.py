"""The ``acme`` index kind: how ``acme_index`` makes itself known to toolsearch by name.

``pyproject.toml`` registers :data:`KIND` under the entry point group
``toolsearch.index_kinds``; once the package is installed, ``make_index("acme")``, the
settings' ``index_type="acme"``, ``toolsearch mcp proxy --index acme`` and ``toolsearch
index build --kind acme`` all build it. :func:`write_index` is what ``index build`` calls:
it writes the tools to a folder that :func:`load_index` reads back.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolsearch.indexes import IndexKindRow, IndexOptions, SessionIndex
from toolsearch.tools import ToolDefinition

__all__ = ["INDEX_FILE", "KIND", "load_index", "write_index"]

INDEX_FILE = "acme-tools.json"
"""The one file of an acme index folder: the tools, as JSON."""

KIND = IndexKindRow(
    "acme",
    "acme_index:keyword_index",
    (),
    "words shared with the query, weighted by rarity (the acme_index package)",
    writer="acme_index.kind:write_index",
)
"""The row toolsearch's index kinds table gains when this package is installed."""


def write_index(tools: list[ToolDefinition], out: Path, options: IndexOptions) -> None:
    """Write ``tools`` to ``out`` (``toolsearch index build SOURCE --kind acme --out DIR``)."""
    del options  # the acme index takes no options
    out.mkdir(parents=True, exist_ok=True)
    records = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]
    (out / INDEX_FILE).write_text(json.dumps(records, indent=1))


def load_index(folder: Path, session: str = "default") -> SessionIndex:
    """The acme index over the tools a :func:`write_index` folder holds, in ``session``."""
    from acme_index import keyword_index

    records = json.loads((Path(folder) / INDEX_FILE).read_text())
    index = keyword_index()
    index.index_tools(session, [ToolDefinition(**record) for record in records])
    return index
