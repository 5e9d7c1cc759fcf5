"""How the simulated agent's query policy was chosen: success on the development sets only.

    python benchmarks/dev_policy.py [--index bm25|minilm|tuned|peer|FOLDER] [--dataset acme ...]

For each development set (acme, BFCL's odd half, NESTFUL, tau2; LiveMCPBench and BFCL's
even half are never read here) and each policy, the agent's discovery is replayed on the
index directly: the policy's queries in order, ``max_results`` 5 each, stopping once every
needed tool was found (as the agent in the tool loop does); a task succeeds when all its
tools were found. This equals the loop's success (the loop calls a tool once it is
discovered) at a fraction of the cost. ``peer`` is the reference's regex algorithm.

Policies: the clause splitter before the change (sentences, then ", and", "then", "also"...)
and the current one (also a plain "and"), each with 4 to 16 searches at most; then the
current one at 12 searches with and without the advisor's ``exclude_loaded_tools`` (a
search skips the tools found before, so each brings 5 new ones). Prints one line per set x
policy: success overall and on multi-tool tasks, searches and tools shown per task.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

from dev_sets import odd_half

from toolsearch_bench.agent import split_clauses
from toolsearch_bench.retrieval import _accept_alternatives

ROUNDS = (4, 6, 8, 12, 16)
MAX_RESULTS = 5

_PREVIOUS_CONNECTIVES = re.compile(
    r",?\s+(?:and then|then|after that|afterwards|also|and also|plus|as well as)\s+"
    r"|,\s+and\s+|;\s*",
    re.IGNORECASE,
)


def previous_split(text: str) -> list[str]:
    """The splitter the agent used before a plain "and" split too."""
    return split_clauses(text, connectives=_PREVIOUS_CONNECTIVES)


SPLITTERS: tuple[tuple[str, Callable[[str], list[str]]], ...] = (
    ("previous", previous_split),
    ("current", split_clauses),
)


def policy_queries(text: str, splitter: Callable[[str], list[str]], rounds: int) -> list[str]:
    queries = [text.strip()]
    for clause in splitter(text):
        if clause not in queries:
            queries.append(clause)
    return queries[:rounds]


def load(name: str) -> tuple[Any, Any]:
    from toolsearch_bench.loaders import load_bfcl, load_bundled, load_nestful, load_tau2

    if name == "bfcl-odd":
        catalog, queries = load_bfcl()
        return catalog, odd_half(queries)
    return {"acme": load_bundled, "nestful": load_nestful, "tau2": load_tau2}[name]()


def make_index(spec: str) -> Any:
    """``bm25``, ``peer`` or the hybrid index with the embedder ``spec`` names."""
    if spec == "peer":
        from toolsearch_bench.peers import ReferenceRegexIndex

        return ReferenceRegexIndex()
    from toolsearch.indexes import specs

    if spec == "bm25":
        return specs.make_index("bm25")
    return specs.make_index("hybrid", embedder=spec)


def measure(dataset: str, spec: str) -> None:
    from toolsearch.search.types import ToolSearchRequest

    catalog, queries = load(dataset)
    index = make_index(spec)
    index.index_tools("dev", list(catalog.tools))
    ranked: dict[tuple[str, int], list[str]] = {}

    def search(text: str, shown: list[str], exclude: bool) -> list[str]:
        limit = MAX_RESULTS + (len(shown) if exclude else 0)
        if (text, limit) not in ranked:
            request = ToolSearchRequest("dev", text, limit)
            ranked[text, limit] = index.search(request).tool_names
        names = ranked[text, limit]
        if exclude:  # as the advisor does: tools found before are skipped
            names = [n for n in names if n not in shown]
        return names[:MAX_RESULTS]

    multi = sum(1 for q in queries if len(set(q.gold)) > 1)
    variants = [
        *((label, splitter, rounds, False) for label, splitter in SPLITTERS for rounds in ROUNDS),
        ("current", split_clauses, 12, True),
    ]
    for label, splitter, rounds, exclude in variants:
        success = success_multi = searches = shown_total = 0
        for query in queries:
            gold, found, shown = set(query.gold), set(), []
            for text in policy_queries(query.text, splitter, rounds):
                if gold <= found:
                    break
                searches += 1
                names = search(text, shown, exclude)
                shown.extend(n for n in names if n not in shown)
                found |= set(_accept_alternatives(names, query))
            success += gold <= found
            success_multi += gold <= found and len(gold) > 1
            shown_total += len(shown)
        print(
            f"{dataset} {spec} {label} rounds={rounds}"
            f"{' exclude-loaded' if exclude else ''}: success "
            f"{100 * success / len(queries):.1f}, multi-tool "
            f"{100 * success_multi / max(1, multi):.1f} ({multi} tasks), searches/task "
            f"{searches / len(queries):.2f}, tools shown/task {shown_total / len(queries):.2f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", action="append", default=[], help="bm25, minilm, tuned, peer...")
    parser.add_argument(
        "--dataset",
        action="append",
        default=[],
        choices=("acme", "bfcl-odd", "nestful", "tau2"),
    )
    args = parser.parse_args()
    for spec in args.index or ["bm25", "minilm"]:
        for dataset in args.dataset or ["acme", "bfcl-odd", "nestful", "tau2"]:
            measure(dataset, spec)


if __name__ == "__main__":
    main()
