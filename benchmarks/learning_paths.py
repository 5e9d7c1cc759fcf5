"""Learning from use (issue 45): every-call learning vs the advisor's own path vs a plain
baseline, R@5 at 200 / 1,000 / 3,000 logged requests, on the development catalogs.

The protocol is :mod:`learning_from_use`'s time split (the same seeded order; the first
half logged, the second half scored; a stage feeds ``min(N, half)``). Variants, each a
fresh memory over the same inner index:

* ``cold``: the inner index alone;
* ``every-call``: each logged request is a search whose hits hold its gold tools, then a
  successful call of them (:func:`learning_from_use.feed`), default knobs;
* ``every-call-1``: the same with ``outrank_sessions=1`` (no support rule: what the
  defaults cost on this traffic, where every request is its own session);
* ``advisor``: each logged request goes the way a front door records it. The model
  searches with the request (the learned index, as learned so far, top 5); a gold tool in
  those hits is called; a gold tool that is not is searched again in the tool's own words
  (its description, as a model rephrases) and called if that search returns it; a tool
  neither search finds is not called. The search log's records go to the memory, each
  with the user's request of the turn, as the search-session core writes them
  (``turn_searches=0``: only the search that returned the called tool teaches);
* ``advisor+turn``: the same with the memory's default ``turn_searches`` (the turn's
  other searches teach too: the user's words that failed to find the tool);
* ``baseline``: the inner index's top 20 fused by reciprocal rank (k = 60) with a
  nearest-neighbour vote: the 10 logged requests nearest the query (the inner index's
  embedder, cosine) each vote their gold tools with their cosine.

    python benchmarks/learning_paths.py --indexes vector --json /tmp/paths.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from toolsearch.indexes import make_index
from toolsearch.indexes.learning.learned import LearnedParams, LearnedToolIndex, inner_embedder
from toolsearch.indexes.learning.memory import UsageMemory, UsageParams, catalog_digest
from toolsearch.observe import hash_session_id
from toolsearch.search import LoggedCalls, LoggedSearch, ToolSearchRequest
from toolsearch_bench.data import Catalog, Query
from toolsearch_bench.metrics import recall_at

try:
    from benchmarks.dev_sets import dev_sets
    from benchmarks.learning_from_use import STAGES, START, _fixed, feed, split
except ImportError:  # run as a script: benchmarks/ is on sys.path
    from dev_sets import dev_sets  # type: ignore[no-redef]
    from learning_from_use import STAGES, START, _fixed, feed, split  # type: ignore[no-redef]

VOTE_SUM = LearnedParams().vote_sum
"""``--vote-sum``: the learned index's summed vote (:class:`LearnedParams`)."""
VARIANTS = ("every-call", "every-call-1", "advisor", "advisor+turn", "baseline")


def _names(index: Any, key: str, text: str, k: int) -> list[str]:
    response = index.search(ToolSearchRequest(key, text, k))
    return [r.tool_name for r in response.tool_references]


def feed_advisor(
    memory: UsageMemory,
    index: LearnedToolIndex,
    key: str,
    digest: str,
    logged: Sequence[Query],
    catalog: Catalog,
    start: int,
) -> dict[str, int]:
    """Each logged request through the advisor's path (see the module docstring)."""
    names = catalog.names
    by_name = {t.name: t for t in catalog.tools}
    found_first = found_second = missed = 0
    for i, query in enumerate(logged):
        at = START + 60.0 * (start + i)
        session = hash_session_id(f"bench-{query.id}")
        gold = [g for g in dict.fromkeys(query.gold) if g in names]
        hits = _names(index, key, query.text, 5)
        memory.record_search(_search(at, session, digest, query.text, hits, query.text))
        called = [g for g in gold if g in hits]
        found_first += len(called)
        for j, tool in enumerate(g for g in gold if g not in hits):
            words = by_name[tool].description[:300] or tool
            again = _names(index, key, words, 5)
            memory.record_search(_search(at + 1 + j, session, digest, words, again, query.text))
            if tool in again:
                called.append(tool)
                found_second += 1
            else:
                missed += 1
        if called:
            ok = (True,) * len(called)
            memory.record_calls(LoggedCalls(at + 30.0, session, digest, tuple(called), ok))
    return {"first": found_first, "second": found_second, "missed": missed}


def _search(
    at: float, session: str, digest: str, text: str, hits: list[str], request: str
) -> LoggedSearch:
    """A search record as the search-session core writes it: ``request`` is the user's
    request of the turn (:attr:`~toolsearch.search.run.SearchRun.user_request`)."""
    return LoggedSearch(
        time=at,
        session=session,
        tool_set=digest,
        query=text,
        index="bench",
        search_type="bench",
        limit=5,
        hits=tuple((h, None) for h in hits),
        total_matches=len(hits),
        request=request,
    )


def baseline_recall(
    cold: LearnedToolIndex, key: str, logged: Sequence[Query], scored: Sequence[Query]
) -> float:
    """The plain baseline's macro R@5 (see the module docstring)."""
    import numpy as np

    embedder = inner_embedder(cold)
    if embedder is None:
        from toolsearch.indexes.specs import resolve_embedder

        embedder = resolve_embedder(None, default="minilm")
    stored = np.asarray(embedder.embed_documents([q.text for q in logged]), dtype=np.float32)
    per = []
    for query in scored:
        inner = _names(cold, key, query.text, 20)
        vector = np.asarray(embedder.embed_query(query.text), dtype=np.float32)
        cosines = stored @ vector
        votes: dict[str, float] = {}
        for j in np.argsort(-cosines)[:10]:
            for tool in dict.fromkeys(logged[int(j)].gold):
                votes[tool] = votes.get(tool, 0.0) + float(cosines[j])
        voted = sorted(votes, key=lambda t: -votes[t])
        fused: dict[str, float] = {}
        for ranking in (inner, voted):
            for rank, tool in enumerate(ranking, start=1):
                fused[tool] = fused.get(tool, 0.0) + 1.0 / (60.0 + rank)
        top = sorted(fused, key=lambda t: -fused[t])[:5]
        per.append(recall_at(top, query.gold, 5))
    return 100.0 * sum(per) / max(len(per), 1)


def _recall(index: Any, key: str, scored: Sequence[Query]) -> float:
    per = [recall_at(_names(index, key, q.text, 5), q.gold, 5) for q in scored]
    return 100.0 * sum(per) / max(len(per), 1)


def run(
    name: str,
    catalog: Catalog,
    queries: Any,
    spec: str,
    variants: Sequence[str],
    prefix: int | None = None,
) -> dict[str, Any] | None:
    logged, scored = split(queries, catalog)
    if prefix is not None:  # the time split moved: the first ``prefix`` logged, the rest scored
        usable = [*logged, *scored]
        if len(usable) < prefix + 200:
            print(f"{name}: {len(usable)} usable requests, left out", file=sys.stderr)
            return None
        logged, scored = usable[:prefix], usable[prefix:]
    tools = list(catalog.tools)
    digest = catalog_digest(tools)
    key = f"bench#{digest}"
    inner = make_index(spec)
    end = START + 60.0 * len(logged) + 60.0
    started = time.perf_counter()
    row: dict[str, Any] = {"set": name, "index": spec, "logged": len(logged), "scored": len(scored)}
    cold = LearnedToolIndex(inner, memory=UsageMemory(clock=_fixed(end)))
    cold.index_tools(key, tools)
    row["cold"] = _recall(cold, key, scored)
    stages = sorted({min(s, len(logged)) for s in STAGES})
    if prefix is not None:
        stages = sorted({min(200, prefix), prefix})
    for variant in variants:
        row[variant] = {}
        if variant == "baseline":
            for n in stages:
                row[variant][str(n)] = baseline_recall(cold, key, logged[:n], scored)
            continue
        learned = LearnedParams(vote_sum=VOTE_SUM)
        if variant == "every-call-1":
            learned = dataclasses.replace(learned, outrank_sessions=1)
        usage = UsageParams(turn_searches=3 if variant == "advisor+turn" else 0)
        memory = UsageMemory(params=usage, clock=_fixed(end))
        index = LearnedToolIndex(inner, memory=memory, params=learned)
        index.index_tools(key, tools)
        fed = 0
        for n in stages:
            if variant.startswith("advisor"):
                row.setdefault(f"{variant}-found", {})[str(n)] = feed_advisor(
                    memory, index, key, digest, logged[fed:n], catalog, fed
                )
            else:
                feed(memory, digest, logged[fed:n], catalog.names)
            fed = n
            row[variant][str(n)] = _recall(index, key, scored)
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=None)
    parser.add_argument("--indexes", nargs="*", default=["vector"])
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS))
    parser.add_argument("--json", default=None)
    parser.add_argument("--prefix", type=int, default=None, help="log the first N, score the rest")
    parser.add_argument("--vote-sum", action="store_true", help="LearnedParams(vote_sum=True)")
    args = parser.parse_args(argv)
    global VOTE_SUM
    VOTE_SUM = VOTE_SUM or args.vote_sum
    rows = []
    for name, catalog, queries in dev_sets(args.sets):
        for spec in args.indexes:
            row = run(name, catalog, queries, spec, args.variants, args.prefix)
            if row is None:
                continue
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json:
                with open(args.json, "w", encoding="utf-8") as out:
                    json.dump(rows, out, indent=1)
    print(markdown(rows, args.variants), file=sys.stderr)
    return 0


def markdown(rows: Sequence[dict[str, Any]], variants: Sequence[str]) -> str:
    """One table per inner index: R@5 at each stage, per variant (delta vs cold)."""
    lines = []
    for spec in dict.fromkeys(r["index"] for r in rows):
        lines += [
            f"\n#### Inner index `{spec}`\n",
            "| set | logged | stage | cold | " + " | ".join(variants) + " |",
        ]
        lines.append("|---|---:|---:|---:|" + "---:|" * len(variants))
        for row in (r for r in rows if r["index"] == spec):
            for stage in row[variants[0]]:
                cells = [
                    f"{row[v][stage]:.1f} ({row[v][stage] - row['cold']:+.1f})" for v in variants
                ]
                lines.append(
                    f"| {row['set']} | {row['logged']} | {stage} | {row['cold']:.1f} | "
                    + " | ".join(cells)
                    + " |"
                )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
