"""What writing tools to a Milvus collection reports, and how a failed write is read: the
server down (raise) or one row refused (report that tool, write the others)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolsearch.errors import IndexUnavailableError
from toolsearch.indexes.milvus.client import is_transient
from toolsearch.indexes.session import SessionTools
from toolsearch.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from toolsearch.indexes.embedders import Embedder

__all__ = [
    "Progress",
    "RefusedTool",
    "UpsertReport",
    "embed_rows",
    "not_loaded",
    "refusal",
    "server_down",
]

_LOG = logging.getLogger("toolsearch.indexes.milvus.ranker")


@dataclass(frozen=True)
class RefusedTool:
    """A tool the server would not store (its row alone refused), and why."""

    name: str
    fingerprint: str
    reason: str


@dataclass(frozen=True)
class UpsertReport:
    """What writing tools to a collection did: rows written, rows already there, and the
    tools the server refused (each tried alone; the others were written)."""

    written: int
    present: int
    refused: tuple[RefusedTool, ...] = ()

    @property
    def total(self) -> int:
        return self.written + self.present + len(self.refused)


Progress = Callable[[int, int], None]
"""``progress(tools done, tools in all)``."""


def server_down(error: IndexUnavailableError) -> bool:
    """Whether a failed call failed for the server (down, overloaded, timing out), not for
    what was sent: only then is there no point in trying the rows one by one."""
    cause = error.__cause__
    return cause is None or is_transient(cause)


def not_loaded(error: IndexUnavailableError) -> bool:
    """Whether the server answered that the collection is not loaded (Milvus's error 101)."""
    cause = error.__cause__
    if getattr(cause, "code", None) == 101:
        return True
    return "not loaded" in str(cause).lower()


def refusal(tool: ToolDefinition, error: IndexUnavailableError) -> RefusedTool:
    name = tool.name if len(tool.name) <= 80 else tool.name[:77] + "..."
    reason = str(error).split(": ", 1)[-1]
    _LOG.warning("Milvus refused to store tool %r (%s); sessions search without it", name, reason)
    return RefusedTool(name, tool.fingerprint, reason)


def embed_rows(embedder: Embedder, tools: list[ToolDefinition], prepared: list[Any]) -> Any:
    """The tools' vectors, through the process's embedding cache (by fingerprint, shared with
    ``VectorToolIndex``) when their names are unique, as a session's and a catalog's are."""
    if len({t.name for t in tools}) == len(tools):
        from toolsearch.indexes.vector import embed_tools

        return embed_tools(embedder, SessionTools.of(tools))
    from toolsearch.indexes.views import embed_views

    return embed_views(embedder, [p.embedding_views for p in prepared])
