"""MCP servers' ``tools/list`` as a catalog file the benchmarks and indexes load.

One tool per line: ``{"name", "description", "input_schema", "category"}``, the category
being the server's name. :class:`toolsearch_bench.data.Catalog` reads the same shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from toolsearch.tools.definition import ToolDefinition

__all__ = ["write_catalog"]


def write_catalog(definitions: Iterable[ToolDefinition], path: str | Path) -> int:
    """Write ``definitions`` as JSONL to ``path`` (parents created); returns the count."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with target.open("w", encoding="utf-8") as handle:
        for definition in definitions:
            record = definition.to_dict()
            if definition.category is not None:
                record["category"] = definition.category
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    return count
