"""Replay a search log: score any index on the searches real traffic made.

A search log (:class:`~toolsearch.search.logs.sink.JsonlSearchLog`) holds every search of
the tool-search advisor and the tools the model then called. :func:`replay_cases` turns
the labelled searches (those with a called hit) into cases: the query, the tools the model
already had (left out, as the search left them out), and the called tools as the relevant
ones. :func:`replay_index` runs them through an index built over the logged tool sets (or
a catalog you give) and scores the rankings with :func:`~toolsearch_bench.metrics.score_rankings`.

:func:`log_dataset` makes a ``Catalog`` and a ``QuerySet`` of the same cases, which is
what ``toolsearch embedder finetune --search-log`` trains on; :func:`record_simulated_log`
writes a log by running the benchmark's simulated agent through the advisor
(``toolsearch bench --search-log OUT``).

Labels come from what the logging index returned, so that index scores near 100 % on its
own log; compare other indexes (or embedders) with each other.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.search.logs.reader import SearchLogContents
from toolsearch.search.logs.sink import SearchLog
from toolsearch.search.types import ToolIndex, ToolSearchRequest
from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.agent import QueryPolicy, SimulatedAgent
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.metrics import percentile, score_rankings

__all__ = [
    "NoLabeledSearchesError",
    "ReplayCase",
    "ReplayResult",
    "log_dataset",
    "record_simulated_log",
    "replay_cases",
    "replay_index",
    "write_replay_report",
]

CATALOG_SET = "catalog"
"""The tool-set key of every case when a catalog is given."""


class NoLabeledSearchesError(ValueError):
    """A search log (or the part of it asked for) holds no search whose hits were called."""


@dataclass(frozen=True)
class ReplayCase:
    """One labelled search to replay."""

    query: str
    gold: tuple[str, ...]
    tool_set: str
    exclude: frozenset[str] = frozenset()
    session: str = ""


@dataclass(frozen=True)
class ReplayResult:
    """One index on one log."""

    index: str
    log: str
    searches: int
    tool_sets: int
    metrics: dict[str, float]
    search_p50_ms: float
    build_seconds: float
    notes: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def replay_cases(
    contents: SearchLogContents, *, catalog: Sequence[ToolDefinition] | None = None
) -> tuple[list[ReplayCase], dict[str, tuple[ToolDefinition, ...]], dict[str, int]]:
    """The log's labelled searches as cases, the tool sets they search, and counts of what
    was left out (``unlabeled``, ``no_tools``: their tool set is not in the log,
    ``not_in_catalog``: none of their labels is a tool of ``catalog``).

    With ``catalog`` every case searches it (labels outside it dropped); without, each
    case searches the tool set its request had, as the log recorded it.
    """
    notes = {"unlabeled": 0, "no_tools": 0, "not_in_catalog": 0}
    cases: list[ReplayCase] = []
    sets: dict[str, tuple[ToolDefinition, ...]] = {}
    names: frozenset[str] = frozenset()
    if catalog is not None:
        sets[CATALOG_SET] = tuple(catalog)
        names = frozenset(t.name for t in catalog)
    for search in contents.searches:
        if not search.called:
            notes["unlabeled"] += 1
            continue
        if catalog is not None:
            gold = tuple(n for n in search.called if n in names)
            if not gold:
                notes["not_in_catalog"] += 1
                continue
            key = CATALOG_SET
        else:
            tools = contents.tool_sets.get(search.tool_set)
            if tools is None:
                notes["no_tools"] += 1
                continue
            sets.setdefault(search.tool_set, tools)
            gold, key = search.called, search.tool_set
        cases.append(ReplayCase(search.query, gold, key, frozenset(search.loaded), search.session))
    return cases, sets, notes


def replay_index(
    name: str,
    factory: Callable[[], ToolIndex],
    cases: Sequence[ReplayCase],
    tool_sets: Mapping[str, Sequence[ToolDefinition]],
    *,
    log: str = "",
    depth: int = 10,
    on_case: Callable[[], Any] | None = None,
) -> ReplayResult:
    """Index every tool set the cases search (one index session each), run each case's
    query with its exclusions and score the rankings (R@k, NDCG@10, MRR@10 in percent)."""
    index = factory()
    used = list(dict.fromkeys(c.tool_set for c in cases))
    started = time.perf_counter()
    for key in used:
        index.index_tools(key, list(tool_sets[key]))
    build = time.perf_counter() - started
    rankings: list[tuple[Sequence[str], Sequence[str]]] = []
    latencies: list[float] = []
    for case in cases:
        started = time.perf_counter()
        response = index.search(
            ToolSearchRequest(case.tool_set, case.query, depth, exclude=case.exclude)
        )
        latencies.append((time.perf_counter() - started) * 1000.0)
        ranked = [n for n in response.tool_names if n not in case.exclude][:depth]
        rankings.append((ranked, case.gold))
        if on_case is not None:
            on_case()
    scores = score_rankings(rankings)
    return ReplayResult(
        index=name,
        log=log,
        searches=len(cases),
        tool_sets=len(used),
        metrics=scores.as_dict(),
        search_p50_ms=round(percentile(latencies, 50), 3),
        build_seconds=round(build, 3),
    )


def log_dataset(
    contents: SearchLogContents, *, name: str = "search-log"
) -> tuple[Catalog, QuerySet]:
    """The log's labelled searches as a catalog (every logged tool, once by name) and a
    query set (one query per labelled search: its text, the tools the model called)."""
    catalog = Catalog(name, tuple(contents.catalog_tools()))
    if contents.labeled and not len(catalog):
        raise NoLabeledSearchesError(
            "no tool definitions (a log written with tools=False), so the called tools "
            "have no text to train on"
        )
    names = catalog.names
    queries = []
    for search in contents.labeled:
        gold = tuple(n for n in search.called if n in names)
        if gold:
            queries.append(Query(f"{search.session}:{search.line}", search.query, gold))
    if not queries:
        raise NoLabeledSearchesError(_no_labels(contents))
    return catalog, QuerySet(name, tuple(queries))


def _no_labels(contents: SearchLogContents) -> str:
    total = len(contents.searches)
    if not total:
        return "no searches (the log is empty, or no session falls in the part asked for)"
    return (
        f"no labelled searches: none of the hits of its {total:,} searches was then called "
        "by the model"
    )


def record_simulated_log(
    catalog: Catalog,
    queries: QuerySet | Sequence[Query],
    index_factory: Callable[[], ToolIndex],
    search_log: SearchLog,
    *,
    policy: QueryPolicy | None = None,
    max_results: int = 5,
    on_task: Callable[[], Any] | None = None,
) -> int:
    """Run every query through the tool-search advisor (the plain search loop, without the
    working set), the simulated agent playing the model, with ``search_log`` attached;
    one session per query (``{catalog}/{query id}``).
    Returns the number of searches the agent made."""
    from toolsearch.loop.client import ChatClient
    from toolsearch.models.function import FunctionChatModel
    from toolsearch.search.advisor import ToolSearchToolCallingAdvisor
    from toolsearch_bench.live import SyntheticTool
    from toolsearch_bench.savings import CANNED_RESULT

    tools = [SyntheticTool(definition, CANNED_RESULT) for definition in catalog.tools]
    # the plain search loop: the log is of the agent's searches, which pre-retrieval (the
    # working set, on by default) would mostly make unnecessary
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=index_factory(),
        max_results=max_results,
        search_log=search_log,
        preload_results=0,
        load_all="never",
    )
    key = advisor.session_id_key_name
    searches = 0
    for query in queries:
        agent = SimulatedAgent(query.text, query.gold, policy=policy, max_results=max_results)
        client = ChatClient.builder(FunctionChatModel(agent)).default_advisors(advisor).build()
        session = f"{catalog.name}/{query.id}"
        client.prompt(query.text).tools(tools).advisors(lambda a, s=session: a.param(key, s)).call()
        searches += len(agent.searches)
        if on_task is not None:
            on_task()
    return searches


_COLUMNS = (
    ("index", "index"),
    ("searches", "searches"),
    ("R@1", "R@1"),
    ("R@5", "R@5"),
    ("R@10", "R@10"),
    ("MRR@10", "MRR@10"),
    ("p50 ms", "p50"),
)


def result_row(result: ReplayResult) -> dict[str, Any]:
    """The table's cells of one result."""
    return {
        "index": result.index,
        "searches": f"{result.searches:,}",
        **{k: f"{result.metrics[k]:.1f}" for k in ("R@1", "R@5", "R@10", "MRR@10")},
        "p50": f"{result.search_p50_ms:,.2f}",
    }


def write_replay_report(
    results: Sequence[ReplayResult],
    out: Path,
    *,
    command: str,
    json_path: Path | None = None,
    notes: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write ``replay.md`` and ``replay.json`` (or ``json_path``) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    target = json_path or out / "replay.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "command": command,
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "notes": dict(notes or {}),
        "replay_records": [r.as_dict() for r in results],
    }
    target.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    lines = [
        "# Tool-search replay",
        "",
        f"Command: `{command}`",
        "",
        "Each labelled search of the log, run again: the tools the model then called are "
        "the relevant ones; the tools it already had are left out, as the search left "
        "them out. Metrics in percent.",
        "",
        "| " + " | ".join(c for c, _ in _COLUMNS) + " |",
        "|" + "---|" * len(_COLUMNS),
    ]
    for result in results:
        row = result_row(result)
        lines.append("| " + " | ".join(row[key] for _, key in _COLUMNS) + " |")
    markdown = out / "replay.md"
    markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [markdown, target]
