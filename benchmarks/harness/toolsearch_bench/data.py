"""The one form every benchmark dataset takes: a ``Catalog`` of tools and a ``QuerySet``.

Both round-trip through JSONL: one tool per line (``{"name", "description",
"input_schema", "category"?}``) and one query per line (``{"id", "text", "gold": [names],
"metadata"?}``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.errors import ToolDefinitionError
from toolsearch.tools.definition import ToolDefinition

__all__ = ["Catalog", "Query", "QuerySet", "read_jsonl", "write_jsonl"]


@dataclass(frozen=True)
class Catalog:
    """A named set of tools with unique names."""

    name: str
    tools: tuple[ToolDefinition, ...]
    notes: Mapping[str, Any] = field(default_factory=dict)
    """What the loader did with odd records (counts of dropped or repaired entries...)."""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for tool in self.tools:
            if tool.name in seen:
                raise ValueError(f"catalog {self.name!r} has two tools named {tool.name!r}")
            seen.add(tool.name)

    def __len__(self) -> int:
        return len(self.tools)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.tools)

    def to_jsonl(self, path: str | Path) -> None:
        write_jsonl(path, (_tool_record(t) for t in self.tools))

    @classmethod
    def from_jsonl(cls, path: str | Path, *, name: str | None = None) -> Catalog:
        """Read a catalog; ``ValueError`` naming the file and line of a bad or repeated tool."""
        tools: list[ToolDefinition] = []
        lines: dict[str, int] = {}
        for number, record in _numbered_records(path):
            tool = _tool_from_record(record, path, number)
            if tool.name in lines:
                raise ValueError(
                    f"{path}:{number}: a second tool named {tool.name!r} "
                    f"(the first is on line {lines[tool.name]})"
                )
            lines[tool.name] = number
            tools.append(tool)
        return cls(name or Path(path).stem, tuple(tools))


@dataclass(frozen=True)
class Query:
    """A request and the tools that answer it (``gold``, in the order they are used)."""

    id: str
    text: str
    gold: tuple[str, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QuerySet:
    """Queries over one catalog; every gold name is a tool of that catalog."""

    name: str
    queries: tuple[Query, ...]
    notes: Mapping[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[Query]:
        return iter(self.queries)

    def validate_against(self, catalog: Catalog) -> None:
        names = catalog.names
        for query in self.queries:
            missing = [g for g in query.gold if g not in names]
            if missing:
                raise ValueError(f"query {query.id!r} has gold tools not in the catalog: {missing}")

    def to_jsonl(self, path: str | Path) -> None:
        write_jsonl(
            path,
            (
                {"id": q.id, "text": q.text, "gold": list(q.gold), "metadata": dict(q.metadata)}
                for q in self.queries
            ),
        )

    @classmethod
    def from_jsonl(cls, path: str | Path, *, name: str | None = None) -> QuerySet:
        queries = []
        for number, record in _numbered_records(path):
            try:
                queries.append(
                    Query(
                        str(record["id"]),
                        str(record["text"]),
                        tuple(str(g) for g in record["gold"]),
                        dict(record.get("metadata") or {}),
                    )
                )
            except (KeyError, TypeError) as exc:
                raise ValueError(
                    f"{path}:{number}: a query needs id, text and gold ({exc})"
                ) from exc
        return cls(name or Path(path).stem, tuple(queries))


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file; blank lines are skipped; errors name the line."""
    for _, record in _numbered_records(path):
        yield record


def _numbered_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of a JSONL file, blank lines skipped."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{number}: each line must be a JSON object")
            yield number, record


def write_jsonl(path: str | Path, records: Iterable[Mapping[str, Any]]) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")


def _tool_record(tool: ToolDefinition) -> dict[str, Any]:
    record = tool.to_dict()
    if tool.category is not None:
        record["category"] = tool.category
    return record


def _tool_from_record(record: Mapping[str, Any], path: str | Path, number: int) -> ToolDefinition:
    if "name" not in record:
        raise ValueError(f"{path}:{number}: a tool needs a name")
    try:
        return ToolDefinition(
            name=str(record["name"]),
            description=str(record.get("description") or ""),
            input_schema=record.get("input_schema") or {"type": "object", "properties": {}},
            category=record.get("category"),
        )
    except (ToolDefinitionError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}:{number}: {exc}") from exc
