"""Learning from use (issue 36): R@5 cold (the inner index alone) vs warm (fused with a
usage memory fed by earlier requests), on every development catalog.

A time split per catalog: the queries in a fixed seeded order; the first half are
*logged* requests, each fed to a :class:`~toolsearch.indexes.learning.memory.UsageMemory` as if it
had led to a successful call of its gold tool(s) (a search whose hits hold the gold, then
a calls record with ``ok``, through the memory's ``SearchLog`` methods, one session per
request); the second half is evaluated. Warm after 200 / 1,000 / 3,000 logged requests
feeds the first ``min(n, half)`` of them (no development catalog has 2,000 queries, so the
larger stages feed what the catalog has, and say how many). Inner indexes ``vector`` and
``hybrid`` from :func:`toolsearch.indexes.make_index`, wrapped in
:class:`~toolsearch.indexes.learning.learned.LearnedToolIndex` (with an empty memory it returns the
inner ranking exactly, so "cold" is the inner index).

    python benchmarks/learning_from_use.py                     # the table
    python benchmarks/learning_from_use.py --sets acme tau2    # some sets
    python benchmarks/learning_from_use.py --tune              # knobs, on a nested split
    python benchmarks/learning_from_use.py --feed train --append \
        benchmarks/results/learning-from-use.md                # gorilla: fed from train

``--feed train`` (the sets with another split over the same catalog: the Gorilla hubs and
Seal-Tools): the memory is fed from that split's requests (the APIBench *train* split,
:func:`benchmarks.dev_catalogs.load_gorilla_train`: the eval parser, only rows whose gold
is in the eval catalog; Seal-Tools' two test splits, :func:`~benchmarks.dev_catalogs.
load_seal_train`), in the file's order (a seeded shuffle when the file is grouped by
tool), and the set's *whole* split is scored, warm after 200 / 1,000 / 3,000 and all
logged requests; ``--append`` adds that table to a results file.

``--feed prefix`` (the sets with more than ``PREFIX_FED + MIN_SCORED`` usable requests):
the time split moved to 1,000: the first 1,000 requests in the seeded order are logged,
the rest scored, warm after 200 and 1,000.

``--tune`` never reads the evaluated half: it splits the *logged* half again (the first
three quarters fed, the last quarter scored) and scores a grid of knobs on that.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolsearch.indexes import make_index
from toolsearch.indexes.learning.learned import LearnedParams, LearnedToolIndex, inner_embedder
from toolsearch.indexes.learning.memory import UsageMemory, UsageParams, catalog_digest
from toolsearch.observe import hash_session_id
from toolsearch.search import LoggedCalls, LoggedSearch, ToolSearchRequest
from toolsearch_bench.data import Catalog, Query, QuerySet
from toolsearch_bench.metrics import recall_at

try:
    from benchmarks.dev_catalogs import TRAIN_LOADERS, SnapshotMissing
    from benchmarks.dev_sets import dev_sets, kind_of
except ImportError:  # run as a script: benchmarks/ is on sys.path
    from dev_catalogs import TRAIN_LOADERS, SnapshotMissing  # type: ignore[no-redef]
    from dev_sets import dev_sets, kind_of  # type: ignore[no-redef]

STAGES = (200, 1_000, 3_000)
TRAIN_STAGES: tuple[int | None, ...] = (200, 1_000, 3_000, None)
"""``--feed train``'s stages; ``None``: every kept train request."""
PREFIX_FED = 1_000
"""``--feed prefix``: how many requests are logged (the rest are scored)."""
MIN_SCORED = 200
"""``--feed prefix``: a set needs this many requests after the logged ones to be run."""
PREFIX_STAGES: tuple[int | None, ...] = (200, PREFIX_FED)
INDEXES = ("vector", "hybrid")
SEED = 36
START = 1_700_000_000.0
"""The logged requests' clock: one request a minute from here."""
RESULTS = Path(__file__).resolve().parent / "results" / "learning-from-use.md"


def _fixed(now: float) -> Callable[[], float]:
    """A clock stopped at ``now`` (the end of the logged requests)."""
    return lambda: now


def split(queries: QuerySet, catalog: Catalog, seed: int = SEED) -> tuple[list[Query], list[Query]]:
    """The queries with a gold tool in the catalog, in a seeded order, halved."""
    names = catalog.names
    usable = [q for q in queries if any(g in names for g in q.gold)]
    random.Random(seed).shuffle(usable)
    half = len(usable) // 2
    return usable[:half], usable[half:]


def feed(memory: UsageMemory, digest: str, logged: Sequence[Query], names: frozenset[str]) -> None:
    """Each logged request as one session: its search returned its gold tools, and the
    model then called them, successfully."""
    for i, query in enumerate(logged):
        at = START + 60.0 * i
        session = hash_session_id(f"bench-{query.id}")
        gold = tuple(dict.fromkeys(g for g in query.gold if g in names))
        memory.record_search(
            LoggedSearch(
                time=at,
                session=session,
                tool_set=digest,
                query=query.text,
                index="bench",
                search_type="bench",
                limit=5,
                hits=tuple((g, None) for g in gold),
                total_matches=len(gold),
            )
        )
        memory.record_calls(LoggedCalls(at + 1.0, session, digest, gold, (True,) * len(gold)))


def recall(
    index: LearnedToolIndex, key: str, queries: Sequence[Query], times: list[float] | None = None
) -> tuple[float, list[float]]:
    """Macro R@5 in percent, and each query's R@5 (``times`` gains each search's ms, with
    the embedder's query cache emptied first: each pass pays for its query embeddings)."""
    clear = getattr(inner_embedder(index), "clear_query_cache", None)
    if times is not None and callable(clear):
        clear()
    per = []
    for query in queries:
        started = time.perf_counter()
        response = index.search(ToolSearchRequest(key, query.text, 5))
        if times is not None:
            times.append((time.perf_counter() - started) * 1000.0)
        per.append(recall_at([r.tool_name for r in response.tool_references], query.gold, 5))
    return 100.0 * sum(per) / max(len(per), 1), per


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")


def _mean(values: Sequence[float]) -> float:
    return 100.0 * sum(values) / len(values) if values else float("nan")


def run_set(
    name: str,
    catalog: Catalog,
    queries: QuerySet,
    spec: str,
    learned: LearnedParams,
    usage: UsageParams,
    *,
    logged: Sequence[Query] | None = None,
    scored: Sequence[Query] | None = None,
    stages: Sequence[int | None] = STAGES,
) -> dict[str, Any]:
    """Cold and warm R@5 of one inner index on one catalog (the second half scored; or,
    given ``logged`` and ``scored``, those fed and scored; a stage ``None`` is "all",
    keyed ``"all"``)."""
    if logged is None or scored is None:
        logged, scored = split(queries, catalog)
    tools, names = list(catalog.tools), catalog.names
    digest, key = catalog_digest(tools), f"bench#{catalog_digest(tools)}"
    end = START + 60.0 * len(logged) + 60.0
    memory = UsageMemory(params=usage, clock=_fixed(end))
    inner = make_index(spec)
    index = LearnedToolIndex(inner, memory=memory, params=learned)
    started = time.perf_counter()
    index.index_tools(key, tools)
    cold_ms: list[float] = []
    warm_ms: list[float] = []
    cold, cold_per = recall(index, key, scored, cold_ms)
    row: dict[str, Any] = {
        "set": name,
        "kind": _kind(name),
        "index": spec,
        "logged": len(logged),
        "scored": len(scored),
        "cold": cold,
        "warm": {},
    }
    fed, warm_per = 0, cold_per
    warm = cold
    for stage in stages:
        n = len(logged) if stage is None else min(stage, len(logged))
        if n > fed:
            feed(memory, digest, logged[fed:n], names)
            fed = n
            warm_ms.clear()
            warm, warm_per = recall(index, key, scored, warm_ms)
        row["warm"]["all" if stage is None else str(stage)] = {"fed": n, "r5": warm}
    seen_tools = {g for q in logged for g in q.gold}
    seen = [i for i, q in enumerate(scored) if set(q.gold) & names <= seen_tools]
    unseen = [i for i in range(len(scored)) if i not in set(seen)]
    row["seen"] = {
        "queries": len(seen),
        "cold": _mean([cold_per[i] for i in seen]),
        "warm": _mean([warm_per[i] for i in seen]),
    }
    row["unseen"] = {
        "queries": len(unseen),
        "cold": _mean([cold_per[i] for i in unseen]),
        "warm": _mean([warm_per[i] for i in unseen]),
    }
    row["p50_ms"] = {"cold": round(_median(cold_ms), 2), "warm": round(_median(warm_ms), 2)}
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


# -- feeding from the Gorilla train splits ---------------------------------------------------


def grouped(queries: Sequence[Query]) -> bool:
    """Whether the queries come grouped by gold: fewer runs of equal gold than half of them."""
    runs = sum(1 for i, q in enumerate(queries) if i == 0 or q.gold != queries[i - 1].gold)
    return runs < len(queries) / 2


def train_order(train: QuerySet, catalog: Catalog, seed: int = SEED) -> tuple[list[Query], bool]:
    """The train requests with a gold tool in ``catalog``, in the file's order (a seeded
    shuffle when :func:`grouped`), and whether they were shuffled."""
    names = catalog.names
    kept = [q for q in train if any(g in names for g in q.gold)]
    shuffled = grouped(kept)
    if shuffled:
        random.Random(seed).shuffle(kept)
    return kept, shuffled


def run_train(
    sets: Sequence[tuple[str, Catalog, QuerySet]],
    specs: Sequence[str],
    learned: LearnedParams,
    usage: UsageParams,
    mirror: Path | None = None,
) -> list[dict[str, Any]]:
    """``--feed train``: each set fed from its other split, its own split scored whole (a
    set whose other split is not on this machine is left out, with a line on stderr)."""
    rows = []
    for name, catalog, queries in sets:
        if name not in TRAIN_LOADERS:
            print(f"{name}: no train split, left out", file=sys.stderr, flush=True)
            continue
        try:
            _, train_catalog, train = TRAIN_LOADERS[name](mirror)
        except SnapshotMissing as missing:
            print(f"{name}: left out: {missing}", file=sys.stderr, flush=True)
            continue
        assert [t.name for t in train_catalog.tools] == [t.name for t in catalog.tools]
        logged, shuffled = train_order(train, catalog)
        scored = [q for q in queries if any(g in catalog.names for g in q.gold)]
        eval_texts = {q.text for q in scored}
        for spec in specs:
            row = run_set(
                name,
                catalog,
                queries,
                spec,
                learned,
                usage,
                logged=logged,
                scored=scored,
                stages=TRAIN_STAGES,
            )
            row["train"] = {
                "rows": train.notes.get("train_rows"),
                "kept": len(logged),
                "shuffled": shuffled,
                "same_text_as_eval": sum(q.text in eval_texts for q in logged),
                "eval_tools": len({g for q in scored for g in q.gold}),
                "train_tools": len({g for q in logged for g in q.gold}),
            }
            rows.append(row)
            _report(row)
    return rows


def run_prefix(
    sets: Sequence[tuple[str, Catalog, QuerySet]],
    specs: Sequence[str],
    learned: LearnedParams,
    usage: UsageParams,
) -> list[dict[str, Any]]:
    """``--feed prefix``: the first :data:`PREFIX_FED` requests (seeded order) logged, the
    rest scored; a set with fewer than ``PREFIX_FED + MIN_SCORED`` is left out, with a line
    on stderr."""
    rows = []
    for name, catalog, queries in sets:
        usable = [q for q in queries if any(g in catalog.names for g in q.gold)]
        if len(usable) < PREFIX_FED + MIN_SCORED:
            print(f"{name}: {len(usable)} usable requests, left out", file=sys.stderr)
            continue
        random.Random(SEED).shuffle(usable)
        logged, scored = usable[:PREFIX_FED], usable[PREFIX_FED:]
        for spec in specs:
            row = run_set(
                name,
                catalog,
                queries,
                spec,
                learned,
                usage,
                logged=logged,
                scored=scored,
                stages=PREFIX_STAGES,
            )
            rows.append(row)
            _report(row)
    return rows


def _report(row: dict[str, Any]) -> None:
    print(
        f"{row['set']} {row['index']}: cold {row['cold']:.1f}, warm "
        + ", ".join(f"{v['r5']:.1f}@{v['fed']}" for v in row["warm"].values())
        + f" ({row['seconds']} s)",
        file=sys.stderr,
        flush=True,
    )


def markdown_prefix(
    rows: Sequence[dict[str, Any]], command: str, learned: LearnedParams, usage: UsageParams
) -> str:
    """The ``--feed prefix`` table, as a section to append to the results file."""
    stages = [str(s) for s in PREFIX_STAGES]
    lines = [
        f"## The time split at {PREFIX_FED:,} logged requests",
        "",
        f"Command: `{command}`",
        "",
        f"Each set with at least {PREFIX_FED + MIN_SCORED:,} usable requests: in the seeded "
        f"order above, the first {PREFIX_FED:,} are logged and the rest scored (the same "
        "scored requests at every stage). Default knobs (none tuned here).",
        "",
        f"Index knobs: `{_knobs(learned)}`.",
        "",
        f"Memory knobs: `{_knobs(usage)}`.",
        "",
        "| set | kind | index | logged | scored | cold | "
        + " | ".join(f"warm@{s}" for s in stages)
        + " | seen: cold → warm | unseen: cold → warm |",
        "|---|---|---|---:|---:|---:|" + "---:|" * len(stages) + "---:|---:|",
    ]
    for r in rows:
        warm = [r["warm"][s]["r5"] for s in stages]
        cells = [f"{w:.1f} ({w - r['cold']:+.1f})" for w in warm]
        lines.append(
            f"| {r['set']} | {r['kind']} | {r['index']} | {r['logged']} | {r['scored']} | "
            f"{r['cold']:.1f} | " + " | ".join(cells) + f" | {' | '.join(_parts(r))} |"
        )
    return "\n".join(lines)


def _parts(row: dict[str, Any]) -> list[str]:
    """The seen and unseen cells: cold → warm R@5 (how many scored requests)."""
    return [
        f"{part['cold']:.1f} → {part['warm']:.1f} ({part['queries']})"
        if part["queries"]
        else "— (0)"
        for part in (row["seen"], row["unseen"])
    ]


def markdown_train(
    rows: Sequence[dict[str, Any]], command: str, learned: LearnedParams, usage: UsageParams
) -> str:
    """The ``--feed train`` table, as a section to append to the results file."""
    stages = ["all" if s is None else str(s) for s in TRAIN_STAGES]
    lines = [
        "## Fed from another split (warm after 1,000 logged requests)",
        "",
        f"Command: `{command}`",
        "",
        "The memory is fed from another split's requests over the same catalog (APIBench's "
        "*train* split, read by the eval split's parser, only rows whose gold tool is in "
        "the eval catalog; Seal-Tools' two test splits, in-domain then out-of-domain), in "
        f"the file's order (a seeded shuffle (seed {SEED}) only when the file is grouped by "
        "tool), one session a minute as above; the set's **whole split** is scored (eval; "
        "Seal-Tools' dev). *warm@N*: after the first "
        "min(N, kept) train requests; the number in parentheses after a cell is how many "
        "were fed when fewer than N. Default knobs (none tuned here).",
        "",
        f"Index knobs: `{_knobs(learned)}`.",
        "",
        f"Memory knobs: `{_knobs(usage)}`.",
        "",
        "| set | index | train rows | kept | shuffled | eval scored | cold | "
        + " | ".join(f"warm@{s}" for s in stages)
        + " | seen: cold → warm | unseen: cold → warm |",
        "|---|---|---:|---:|---|---:|---:|" + "---:|" * len(stages) + "---:|---:|",
    ]
    for r in rows:
        cells = []
        for s in stages:
            warm = r["warm"][s]
            note = "" if s == "all" or warm["fed"] == int(s) else f" ({warm['fed']})"
            cells.append(f"{warm['r5']:.1f} ({warm['r5'] - r['cold']:+.1f}){note}")
        train, parts = r["train"], _parts(r)
        lines.append(
            f"| {r['set']} | {r['index']} | {train['rows']} | {train['kept']} | "
            f"{'yes' if train['shuffled'] else 'no'} | {r['scored']} | {r['cold']:.1f} | "
            + " | ".join(cells)
            + f" | {parts[0]} | {parts[1]} |"
        )
    return "\n".join(lines)


def _kind(name: str) -> str:
    try:
        return str(kind_of(name))
    except KeyError:
        return ""


# -- tuning on a nested split of the logged half --------------------------------------------

GRID: dict[str, Sequence[Any]] = {
    "vote_weight": (0.5, 1.0, 2.0, 3.0),
    "bm25_weight": (0.0, 0.5, 1.0),
    "vote_min_cosine": (0.4, 0.5, 0.6, 0.7),
    "vote_k": (5, 10, 20),
}


def tune(
    sets: Sequence[tuple[str, Catalog, QuerySet]],
    specs: Sequence[str],
    grid: dict[str, Sequence[Any]] = GRID,
) -> list[dict[str, Any]]:
    """Score every grid point on each set's logged half (3/4 fed, 1/4 scored): the mean
    gain over sets and inner indexes per point (and the worst one), best first."""
    points = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    gains: dict[int, list[float]] = {i: [] for i in range(len(points))}
    for name, catalog, queries in sets:
        logged, _ = split(queries, catalog)
        cut = (len(logged) * 3) // 4
        fed, scored = logged[:cut], logged[cut:]
        tools = list(catalog.tools)
        digest, key = catalog_digest(tools), f"tune#{catalog_digest(tools)}"
        memory = UsageMemory(clock=_fixed(START + 60.0 * len(fed) + 60.0))
        for spec in specs:
            inner = make_index(spec)
            cold_index = LearnedToolIndex(inner, memory=UsageMemory())
            cold_index.index_tools(key, tools)
            cold, _ = recall(cold_index, key, scored)
            if not memory.version(digest):
                feed(memory, digest, fed, catalog.names)
            for i, point in enumerate(points):
                index = LearnedToolIndex(inner, memory=memory, **point)
                index.index_tools(key, tools)
                warm, _ = recall(index, key, scored)
                gains[i].append(warm - cold)
            print(f"tuned {name} {spec}", file=sys.stderr, flush=True)
    table = [
        {**point, "mean_gain": sum(gains[i]) / len(gains[i]), "worst": min(gains[i])}
        for i, point in enumerate(points)
    ]
    return sorted(table, key=lambda row: -row["mean_gain"])


# -- report ---------------------------------------------------------------------------------


def _cell(row: dict[str, Any], stage: int) -> str:
    warm = row["warm"][str(stage)]
    delta = warm["r5"] - row["cold"]
    note = "" if warm["fed"] == stage else f" ({warm['fed']})"
    return f"{warm['r5']:.1f} ({delta:+.1f}){note}"


def markdown(
    rows: Sequence[dict[str, Any]], command: str, learned: LearnedParams, usage: UsageParams
) -> str:
    lines = [
        "# Learning from use: R@5 cold vs warm",
        "",
        f"Command: `{command}`",
        "",
        "Each catalog's queries in a fixed seeded order (seed "
        f"{SEED}); the first half are logged requests fed to a `UsageMemory` as successful "
        "calls of their gold tools (one session each, one a minute), the second half is "
        "scored. *warm@N*: after the first min(N, half) logged requests; the number in "
        "parentheses after a cell is how many the catalog had when fewer than N. "
        "Deltas are against cold (the inner index alone).",
        "",
        f"Index knobs: `{_knobs(learned)}`.",
        "",
        f"Memory knobs: `{_knobs(usage)}`.",
        "",
    ]
    for spec in dict.fromkeys(r["index"] for r in rows):
        mine = [r for r in rows if r["index"] == spec]
        lines += [
            f"## Inner index `{spec}`",
            "",
            "| set | kind | logged | scored | cold | warm@200 | warm@1000 | warm@3000 "
            "| seen: cold → warm | unseen: cold → warm |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in mine:
            seen, unseen = r["seen"], r["unseen"]
            lines.append(
                f"| {r['set']} | {r['kind']} | {r['logged']} | {r['scored']} | {r['cold']:.1f} | "
                + " | ".join(_cell(r, s) for s in STAGES)
                + f" | {seen['cold']:.1f} → {seen['warm']:.1f} ({seen['queries']})"
                f" | {unseen['cold']:.1f} → {unseen['warm']:.1f} ({unseen['queries']}) |"
            )
        cold = sum(r["cold"] for r in mine) / len(mine)
        cells = []
        for stage in STAGES:
            warm = sum(r["warm"][str(stage)]["r5"] for r in mine) / len(mine)
            cells.append(f"{warm:.1f} ({warm - cold:+.1f})")
        lines.append(
            f"| **macro** ({len(mine)} sets) | | | | {cold:.1f} | " + " | ".join(cells) + " | | |"
        )
        lines.append("")
    lines += [
        "## Search latency (p50 ms per search, this machine, the last stage)",
        "",
        "| set | " + " | ".join(f"{spec} cold | {spec} warm" for spec in _specs(rows)) + " |",
        "|---|" + "---:|---:|" * len(_specs(rows)),
    ]
    for name in dict.fromkeys(r["set"] for r in rows):
        cells = []
        for spec in _specs(rows):
            (r,) = [r for r in rows if r["set"] == name and r["index"] == spec]
            cells.append(f"{r['p50_ms']['cold']:.1f} | {r['p50_ms']['warm']:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _specs(rows: Sequence[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["index"] for r in rows))


def _knobs(params: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in dataclasses.asdict(params).items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=None)
    parser.add_argument("--indexes", nargs="*", default=list(INDEXES))
    parser.add_argument(
        "--feed",
        choices=("split", "train", "prefix"),
        default="split",
        help="train: fed from another split, the set's own scored; prefix: 1,000 logged",
    )
    parser.add_argument("--append", type=Path, default=None, help="train/prefix: append to")
    parser.add_argument("--tune", action="store_true", help="score the knob grid (nested split)")
    parser.add_argument("--grid", type=json.loads, default=None, help="--tune's grid as JSON")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the markdown table")
    parser.add_argument("--json", type=Path, default=None, help="the rows as JSON")
    parser.add_argument("--mirror", type=Path, default=None)
    for field in dataclasses.fields(LearnedParams):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=float, default=None)
    parser.add_argument("--half-life-days", type=float, default=None, help="0: no time decay")
    parser.add_argument("--half-life-events", type=float, default=None)
    args = parser.parse_args(argv)
    if args.feed == "train" and args.sets is None:
        args.sets = sorted(TRAIN_LOADERS)
    sets = dev_sets(args.sets, mirror=args.mirror)
    if args.tune:
        table = tune(sets, args.indexes, args.grid or GRID)
        for row in table[:15]:
            print(json.dumps(row))
        return 0
    overrides: dict[str, Any] = {}
    for field in dataclasses.fields(LearnedParams):
        value = getattr(args, field.name)
        if value is not None:
            kind = {"int": int, "bool": bool}.get(str(field.type), float)
            overrides[field.name] = kind(value)
    learned = LearnedParams(**overrides)
    usage = UsageParams()
    if args.half_life_days is not None:
        usage = dataclasses.replace(usage, half_life_days=args.half_life_days or None)
    if args.half_life_events is not None:
        usage = dataclasses.replace(usage, half_life_events=args.half_life_events)
    if args.feed in ("train", "prefix"):
        command = "python benchmarks/learning_from_use.py " + " ".join(argv or sys.argv[1:])
        if args.feed == "train":
            rows = run_train(sets, args.indexes, learned, usage, args.mirror)
            text = markdown_train(rows, command.strip(), learned, usage)
        else:
            rows = run_prefix(sets, args.indexes, learned, usage)
            text = markdown_prefix(rows, command.strip(), learned, usage)
        print(text)
        if args.append:
            with args.append.open("a", encoding="utf-8") as out:
                out.write("\n" + text + "\n")
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        return 0
    rows = []
    for name, catalog, queries in sets:
        for spec in args.indexes:
            row = run_set(name, catalog, queries, spec, learned, usage)
            rows.append(row)
            _report(row)
    command = "python benchmarks/learning_from_use.py " + " ".join(argv or sys.argv[1:])
    text = markdown(rows, command.strip(), learned, usage)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
