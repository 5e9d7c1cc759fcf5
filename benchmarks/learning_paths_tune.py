"""Learning from use (issue 45): the fusion's knobs chosen by leave-one-catalog-out, and
the "loaded but never called" negative signal tried, with :mod:`learning_paths`' protocol.

For each development catalog (the same seeded time split and stages as
:mod:`learning_paths`), the memory is fed every logged request as a successful call of its
gold tools (``every-call``) and, at each stage, every point of a grid of
:class:`~toolsearch.indexes.learning.learned.LearnedParams` is scored through the real learned index
(the inner ranking and the two learned rankings are memoized per query, so only the fusion
is recomputed per point). The plain baseline (:func:`learning_paths.baseline_recall`) is
scored at the same stages.

Leave one catalog out: for each catalog, the grid point with the best objective on the
*other* catalogs (mean over their stages of the gain over cold plus the shortfall under the
baseline, ``min(0, every-call - baseline)``: falling under the baseline counts twice) is
scored on it. The knobs with the best objective over all catalogs are the new defaults
proposed.

Negative signal (``--negative``): each logged request's cold top 5, minus its gold tools,
are the tools it loaded and never called. At search time the logged requests within
``cosine >= 0.4`` of the query (the 10 nearest) each vote against their never-called
tools, and those tools lose ``weight / (rrf_k + rank)`` of that negative ranking from the
learned index's fused top 20 (re-ranked), for a few weights.

Reuse (``--reuse``): per catalog, how many scored requests have every gold tool (and the
same gold set) among the logged ones, and with ``--bound SETS`` the ceiling of
nearest-neighbour learning (:func:`reuse`).

    cd benchmarks/results
    nice python ../learning_paths_tune.py --negative --json learning-tune-vector.json
    python ../learning_paths_tune.py --report learning-tune-vector.json
    nice python benchmarks/learning_paths_tune.py --reuse --bound acme bfcl-odd toolalpaca --json F
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from toolsearch.indexes import make_index
from toolsearch.indexes.learning.learned import LearnedToolIndex, inner_embedder
from toolsearch.indexes.learning.memory import UsageMemory, catalog_digest
from toolsearch.search import ToolSearchRequest
from toolsearch_bench.data import Query
from toolsearch_bench.metrics import recall_at

try:
    from benchmarks.dev_sets import dev_sets
    from benchmarks.learning_from_use import STAGES, START, _fixed, feed, split
    from benchmarks.learning_paths import baseline_recall
except ImportError:  # run as a script: benchmarks/ is on sys.path
    from dev_sets import dev_sets  # type: ignore[no-redef]
    from learning_from_use import STAGES, START, _fixed, feed, split  # type: ignore[no-redef]
    from learning_paths import baseline_recall  # type: ignore[no-redef]

GRID: dict[str, Sequence[Any]] = {
    "vote_weight": (0.5, 1.0, 2.0, 4.0),
    "rrf_k": (5.0, 20.0, 60.0),
    "bm25_weight": (1.0, 4.0),
    "vote_sum": (False, True),
}
NEGATIVE_WEIGHTS = (0.0, 0.25, 0.5, 1.0)


def points(grid: dict[str, Sequence[Any]]) -> list[dict[str, Any]]:
    keys = list(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*grid.values())]


def label(point: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in point.items())


class _MemoRanker:
    """A prepared inner ranker whose rankings are remembered per query and depth."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.ranks: dict[tuple[str, int], Any] = {}

    def rank(self, query: str, limit: int, allowed: Any = None) -> Any:
        if (query, limit) not in self.ranks:
            self.ranks[(query, limit)] = self.inner.rank(query, limit, allowed)
        return self.ranks[(query, limit)]


def _memo_session(index: LearnedToolIndex, key: str) -> Any:
    """The learned session of ``key`` with its inner ranking and learned rankings memoized
    (they do not depend on the fusion's knobs)."""
    session = index._sessions[key][1].ranker
    session.inner = _MemoRanker(session.inner)
    ranker = index.ranker
    for name, fields in (
        ("vote", ("vote_k", "vote_min_cosine", "vote_sum")),
        ("bm25", ("k1", "b", "bm25_min_score")),
    ):
        method = getattr(type(ranker), name)
        memo: dict[Any, Any] = {}

        def learned(
            view: Any,
            query: str,
            depth: int,
            allowed: Any,
            _method: Any = method,
            _memo: dict[Any, Any] = memo,
            _fields: tuple[str, ...] = fields,
        ) -> Any:
            params = ranker.params
            token = (id(view), view.version, query, depth, *(getattr(params, f) for f in _fields))
            if token not in _memo:
                _memo[token] = _method(ranker, view, query, depth, allowed)
            return _memo[token]

        setattr(ranker, name, learned)
    return session


def _names(index: Any, key: str, text: str, k: int) -> list[str]:
    response = index.search(ToolSearchRequest(key, text, k))
    return [r.tool_name for r in response.tool_references]


def negatives_of(cold: LearnedToolIndex, key: str, logged: Sequence[Query]) -> list[list[str]]:
    """Each logged request's loaded-but-never-called tools: its cold top 5 minus its gold."""
    return [[t for t in _names(cold, key, q.text, 5) if t not in set(q.gold)] for q in logged]


def negative_recall(
    index: LearnedToolIndex,
    key: str,
    logged: Sequence[Query],
    negatives: Sequence[Sequence[str]],
    scored: Sequence[Query],
    weight: float,
    rrf_k: float,
) -> float:
    """R@5 of the learned ranking's top 20 re-ranked with the negative vote."""
    import numpy as np

    embedder = inner_embedder(index) or index.ranker.embedder
    stored = np.asarray(embedder.embed_documents([q.text for q in logged]), dtype=np.float32)
    per = []
    for query in scored:
        ranked = _names(index, key, query.text, 20)
        if weight > 0 and len(logged):
            vector = np.asarray(embedder.embed_query(query.text), dtype=np.float32)
            cosines = stored @ vector
            against: dict[str, float] = {}
            for j in np.argsort(-cosines)[:10]:
                if cosines[j] < 0.4:
                    break
                for tool in negatives[int(j)]:
                    against[tool] = against.get(tool, 0.0) + float(cosines[j])
            order = sorted(against, key=lambda t: -against[t])
            penalty = {t: weight / (rrf_k + r) for r, t in enumerate(order, start=1)}
            score = {t: 1.0 / (rrf_k + r) - penalty.get(t, 0.0) for r, t in enumerate(ranked, 1)}
            ranked = sorted(ranked, key=lambda t: -score[t])
        per.append(recall_at(ranked, query.gold, 5))
    return 100.0 * sum(per) / max(len(per), 1)


def run(
    name: str, catalog: Any, queries: Any, spec: str, grid: list[dict[str, Any]], negative: bool
) -> dict[str, Any]:
    logged, scored = split(queries, catalog)
    tools = list(catalog.tools)
    digest = catalog_digest(tools)
    key = f"bench#{digest}"
    inner = make_index(spec)
    end = START + 60.0 * len(logged) + 60.0
    started = time.perf_counter()
    cold = LearnedToolIndex(inner, memory=UsageMemory(clock=_fixed(end)))
    cold.index_tools(key, tools)
    row: dict[str, Any] = {"set": name, "index": spec, "logged": len(logged), "scored": len(scored)}
    row["cold"] = (
        100.0
        * sum(recall_at(_names(cold, key, q.text, 5), q.gold, 5) for q in scored)
        / max(len(scored), 1)
    )
    memory = UsageMemory(clock=_fixed(end))
    index = LearnedToolIndex(inner, memory=memory)
    index.index_tools(key, tools)
    _memo_session(index, key)
    default = index.ranker.params
    negatives = negatives_of(cold, key, logged) if negative else []
    fed = 0
    row["baseline"], row["grid"], row["default"], row["negative"] = {}, {}, {}, {}
    for n in sorted({min(s, len(logged)) for s in STAGES}):
        feed(memory, digest, logged[fed:n], catalog.names)
        fed = n
        row["baseline"][str(n)] = baseline_recall(cold, key, logged[:n], scored)
        index.ranker.params = default
        row["default"][str(n)] = _recall(index, key, scored)
        for point in grid:
            index.ranker.params = dataclasses.replace(default, **point)
            row["grid"].setdefault(label(point), {})[str(n)] = _recall(index, key, scored)
        if negative:
            index.ranker.params = default
            for weight in NEGATIVE_WEIGHTS:
                row["negative"].setdefault(str(weight), {})[str(n)] = negative_recall(
                    index, key, logged[:n], negatives[:n], scored, weight, default.rrf_k
                )
    index.ranker.params = default
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def _recall(index: Any, key: str, scored: Sequence[Query]) -> float:
    per = [recall_at(_names(index, key, q.text, 5), q.gold, 5) for q in scored]
    return 100.0 * sum(per) / max(len(per), 1)


def objective(row: dict[str, Any], point: str) -> float:
    """Mean over the row's stages of the gain over cold plus the shortfall under the
    baseline."""
    cells = row["grid"][point]
    values = [
        cells[n] - row["cold"] + min(0.0, cells[n] - row["baseline"][n]) for n in row["baseline"]
    ]
    return sum(values) / len(values)


def leave_one_out(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per catalog, the point chosen on the others and how it does there; and the point
    chosen on all."""
    labels = list(rows[0]["grid"])

    def best(on: Sequence[dict[str, Any]]) -> str:
        return max(labels, key=lambda p: sum(objective(r, p) for r in on) / len(on))

    folds: dict[str, Any] = {}
    for row in rows if len(rows) > 1 else ():  # one catalog: no fold to leave out
        chosen = best([r for r in rows if r is not row])
        folds[row["set"]] = {
            "chosen": chosen,
            "stages": {
                n: {
                    "cold": row["cold"],
                    "default": row["default"][n],
                    "loco": row["grid"][chosen][n],
                    "baseline": row["baseline"][n],
                }
                for n in row["baseline"]
            },
        }
    return {"folds": folds, "all": best(rows)}


def reuse(name: str, catalog: Any, queries: Any, bound: bool) -> dict[str, Any]:
    """How much a catalog's scored requests reuse the logged requests' tools and, with
    ``bound``, the ceiling of nearest-neighbour learning: R@5 if every gold tool that the
    cold vector index finds in its top 5 or that one of the 10 logged requests nearest the
    query (MiniLM cosine >= 0.4) was led to were in the top 5."""
    import numpy as np

    logged, scored = split(queries, catalog)
    names = catalog.names

    def gold(query: Query) -> set[str]:
        return {g for g in query.gold if g in names}

    seen = {g for q in logged for g in gold(q)}
    sets = {frozenset(gold(q)) for q in logged}
    n = max(len(scored), 1)
    row: dict[str, Any] = {
        "set": name,
        "logged": len(logged),
        "scored": len(scored),
        "every_gold_seen": 100.0 * sum(gold(q) <= seen for q in scored) / n,
        "same_gold_set_seen": 100.0 * sum(frozenset(gold(q)) in sets for q in scored) / n,
    }
    if not bound:
        return row
    index = make_index("vector")
    tools = list(catalog.tools)
    index.index_tools("k", tools)
    embedder = inner_embedder(index)
    assert embedder is not None
    stored = np.asarray(embedder.embed_documents([q.text for q in logged]), dtype=np.float32)
    cold, ceiling = [], []
    for query in scored:
        wanted = gold(query)
        top = set(_names(index, "k", query.text, 5))
        cosines = stored @ np.asarray(embedder.embed_query(query.text), dtype=np.float32)
        near = {
            g for j in np.argsort(-cosines)[:10] if cosines[j] >= 0.4 for g in logged[int(j)].gold
        }
        cold.append(len(wanted & top) / len(wanted))
        ceiling.append(min(5, len(wanted & (top | near))) / len(wanted))
    row["cold"] = 100.0 * sum(cold) / n
    row["ceiling"] = 100.0 * sum(ceiling) / n
    return row


def markdown(rows: Sequence[dict[str, Any]], summary: dict[str, Any]) -> str:
    """The leave-one-catalog-out table and the negative signal's table."""
    lines = [
        f"Knobs chosen on all catalogs: `{summary['all']}`.\n",
        "| set | logged | stage | cold | every-call, old defaults | every-call, knobs chosen"
        " on the other catalogs | baseline | chosen on the others |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        fold = summary["folds"][row["set"]]
        for n, cell in fold["stages"].items():
            cold = cell["cold"]
            lines.append(
                f"| {row['set']} | {row['logged']} | {n} | {cold:.1f} "
                f"| {cell['default']:.1f} ({cell['default'] - cold:+.1f}) "
                f"| {cell['loco']:.1f} ({cell['loco'] - cold:+.1f}) "
                f"| {cell['baseline']:.1f} ({cell['baseline'] - cold:+.1f}) "
                f"| `{fold['chosen']}` |"
            )
    negative = [r for r in rows if r.get("negative")]
    if negative:
        weights = list(negative[0]["negative"])
        lines += [
            "\nThe negative signal (R@5; weight 0: the same top-20 re-ranking without it):\n",
            "| set | stage | " + " | ".join(f"weight {w}" for w in weights) + " |",
            "|---|---:|" + "---:|" * len(weights),
        ]
        for row in negative:
            for n in row["negative"][weights[0]]:
                base = row["negative"][weights[0]][n]
                cells = [
                    f"{row['negative'][w][n]:.1f} ({row['negative'][w][n] - base:+.1f})"
                    for w in weights
                ]
                lines.append(f"| {row['set']} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=None)
    parser.add_argument("--index", default="vector")
    parser.add_argument("--json", default=None)
    parser.add_argument("--grid", default=None, help="a JSON object replacing GRID")
    parser.add_argument("--negative", action="store_true", help="try the negative signal")
    parser.add_argument("--report", default=None, help="print the tables of a --json file")
    parser.add_argument("--reuse", action="store_true", help="reuse and the ceiling only")
    parser.add_argument("--bound", nargs="*", default=[], help="--reuse: sets to bound")
    args = parser.parse_args(argv)
    if args.reuse:
        found = [reuse(n, c, q, n in args.bound) for n, c, q in dev_sets(args.sets)]
        for row in found:
            print(json.dumps(row))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(found, out, indent=1)
        return 0
    if args.report:
        with open(args.report, encoding="utf-8") as source:
            done = json.load(source)
        print(markdown(done["rows"], done.get("summary") or leave_one_out(done["rows"])))
        return 0
    grid = points(json.loads(args.grid) if args.grid else GRID)
    rows = []
    for name, catalog, queries in dev_sets(args.sets):
        rows.append(run(name, catalog, queries, args.index, grid, args.negative))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "grid"}), file=sys.stderr)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump({"rows": rows, "grid": GRID if not args.grid else args.grid}, out)
    summary = leave_one_out(rows)
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"rows": rows, "summary": summary}, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
