"""Shadow evaluation of a usage memory on a search log's held-back tail.

:func:`evaluate_log` learns from the head of a search log (every record before the tail's
first search, in file order, as live learning would have) and scores the tail's labeled
searches (their successfully called tools) twice with the same inner index: cold, and
fused with what the head taught. A tool set whose learned ranking scores worse on its
tail than cold is marked not served
(:meth:`~toolsearch.indexes.learning.memory.UsageMemory.set_serving`):
a learned index then answers cold for it and keeps learning (shadow), until a later
evaluation finds it helps. ``toolsearch index learn LOG --out F --evaluate`` runs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolsearch.indexes.learning.model import UsageParams
from toolsearch.search.logs.reader import iter_search_log, read_search_log
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch

__all__ = ["ToolSetEvaluation", "evaluate_log"]


@dataclass(frozen=True)
class ToolSetEvaluation:
    """One tool set's held-back tail, scored cold and learned (R@k in percent)."""

    tool_set: str
    scored: int
    cold: float
    learned: float

    @property
    def serve(self) -> bool:
        """Whether the learned ranking is at least as good as cold on the tail."""
        return self.learned >= self.cold


def evaluate_log(
    path: str | os.PathLike[str],
    make_inner: Callable[[], Any],
    *,
    params: UsageParams | None = None,
    holdout: float = 0.2,
    k: int = 5,
    learned_options: dict[str, Any] | None = None,
) -> list[ToolSetEvaluation]:
    """Score each logged tool set's tail cold vs learned (see the module docstring).

    ``make_inner`` builds a fresh inner index (``lambda: make_index("vector")``); the
    tool sets are the log's ``tools`` records (a tool set without one is not scored)."""
    from toolsearch.indexes.learning.learned import LearnedToolIndex
    from toolsearch.indexes.learning.memory import UsageMemory
    from toolsearch.search.types import ToolSearchRequest

    if not 0 < holdout < 1:
        raise ValueError("holdout must be a fraction in (0, 1)")
    contents = read_search_log(path)
    labeled = [s for s in contents.searches if s.succeeded and s.tool_set in contents.tool_sets]
    if not labeled:
        return []
    tail = labeled[int(len(labeled) * (1 - holdout)) :]
    cut = tail[0].time
    memory = UsageMemory(params=params, clock=lambda: cut)  # weights as the tail saw them
    head: list[LoggedSearch | LoggedCalls] = [r for r in iter_search_log(path) if r.time < cut]
    memory.replay(head)
    results = []
    for digest in dict.fromkeys(s.tool_set for s in tail):
        tools = list(contents.tool_sets[digest])
        queries = [s for s in tail if s.tool_set == digest]
        cold = LearnedToolIndex(make_inner(), memory=UsageMemory())
        learned = LearnedToolIndex(make_inner(), memory=memory, **(learned_options or {}))
        scores = []
        for index in (cold, learned):
            index.index_tools("evaluate", tools)
            total = 0.0
            for search in queries:
                response = index.search(ToolSearchRequest("evaluate", search.query, k))
                top = {r.tool_name for r in response.tool_references}
                wanted = set(search.succeeded)
                total += len(wanted & top) / len(wanted)
            scores.append(100.0 * total / len(queries))
        results.append(ToolSetEvaluation(digest, len(queries), scores[0], scores[1]))
    return results
