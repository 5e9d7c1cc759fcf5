"""A search's result as the model reads it: one pure function every front door shares."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from toolsearch.chat.messages import ToolSearchHit
from toolsearch.tools.definition import ToolDefinition

__all__ = ["render_result"]


class _Result(Protocol):
    @property
    def hits(self) -> tuple[ToolSearchHit, ...]: ...

    @property
    def error(self) -> dict[str, Any] | None: ...


def render_result(
    result: _Result,
    wire: Callable[[str], str] = str,
    *,
    summaries: bool = False,
    definitions: Mapping[str, ToolDefinition] | None = None,
) -> str:
    """The JSON text of a search's result: the index's error object when it refused the
    query; else, with ``definitions`` (``injection="results"``), the found tools'
    ``{"name", "description", "parameters"}`` (compact JSON); with ``summaries``,
    ``{"name", "summary"}`` objects; else the list of names. Names go through ``wire``
    (a provider's wire names)."""
    if result.error is not None:
        return json.dumps(result.error)
    shown: list[Any]
    if definitions is not None:
        found = [definitions[hit.name] for hit in result.hits if hit.name in definitions]
        shown = [
            {"name": wire(d.name), "description": d.description, "parameters": dict(d.input_schema)}
            for d in found
        ]
    elif summaries:
        shown = [{"name": wire(hit.name), "summary": hit.summary or ""} for hit in result.hits]
    else:
        shown = [wire(hit.name) for hit in result.hits]
    if definitions is not None:  # definitions are most of a result: no spaces between
        return json.dumps(shown, ensure_ascii=False, separators=(",", ":"))  # their tokens
    return json.dumps(shown, ensure_ascii=False)
