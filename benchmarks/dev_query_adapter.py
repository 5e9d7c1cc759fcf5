"""A linear query adapter over the packaged MiniLM (issue 36's optional lever), scored
leave one catalog out on the 13 development catalogs (and Acme's everyday requests).

    python benchmarks/dev_query_adapter.py     # about 30 minutes on two cores

The adapter maps a query's embedding by ``W = I + delta`` (a full 384x384 matrix, or a
diagonal) before the cosine search over the vector index's tool vectors. It is trained
with a softmax loss over each catalog's tools (temperature ``tau``, the gold tools as
targets, each catalog weighing the same), ``reg * |delta|^2`` pulling it to the identity,
full-batch Adam. For each held-out catalog it is trained on the other 12 and scored there
(the everyday set with the adapter that held Acme out). Top-1 and R@5 are plain (no
accepted alternatives), against the identity in the same run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.dev_sets import dev_sets_with_kinds
from toolsearch.indexes.ranker import SessionTools
from toolsearch.indexes.vector import VectorToolIndex, embed_tools
from toolsearch_bench.data import QuerySet

ROOT = Path(__file__).resolve().parent.parent
EVERYDAY = "acme-everyday"
GRID: list[dict[str, Any]] = [
    {"reg": 1e-3, "tau": 0.05, "steps": 100, "lr": 1e-3},
    {"reg": 1e-3, "tau": 0.05, "steps": 300, "lr": 1e-3},
    {"reg": 1e-2, "tau": 0.05, "steps": 100, "lr": 1e-3},
    {"reg": 1e-3, "tau": 0.05, "steps": 300, "lr": 1e-2, "diagonal": True},
]


def embeddings() -> dict[str, dict[str, Any]]:
    """Each set's tool vectors, query vectors and gold positions."""
    sets = list(dev_sets_with_kinds(None))
    acme = next(c for n, _, c, _ in sets if n == "acme")
    everyday = QuerySet.from_jsonl(ROOT / "benchmarks/everyday/acme.jsonl", name="everyday")
    sets.append((EVERYDAY, "everyday", acme, everyday))
    embedder = VectorToolIndex().embedder
    out = {}
    for name, kind, catalog, queries in sets:
        tools = SessionTools.of(list(catalog.tools))
        position = {t.name: i for i, t in enumerate(tools.tools)}
        usable = [q for q in queries if any(g in position for g in q.gold)]
        out[name] = {
            "kind": kind,
            "T": np.asarray(embed_tools(embedder, tools), dtype=np.float32),
            "Q": np.stack([np.asarray(embedder.embed_query(q.text)) for q in usable]),
            "gold": [[position[g] for g in q.gold if g in position] for q in usable],
        }
        print(name, file=sys.stderr, flush=True)
    return out


def score(x: dict[str, Any], w: Any = None) -> tuple[float, float]:
    """Top-1 and R@5 in percent, the queries mapped by ``w`` (None: the identity)."""
    queries = x["Q"] if w is None else x["Q"] @ w
    queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    top = np.argsort(-(queries @ x["T"].T), axis=1)[:, :5]
    top1 = r5 = 0.0
    for row, gold in zip(top, x["gold"], strict=True):
        wanted = set(gold)
        top1 += float(row[0] in wanted)
        r5 += len(wanted & set(row.tolist())) / len(wanted)
    return 100 * top1 / len(x["gold"]), 100 * r5 / len(x["gold"])


def train(
    sets: list[dict[str, Any]],
    reg: float,
    tau: float,
    steps: int,
    lr: float,
    diagonal: bool = False,
) -> Any:
    dimension = sets[0]["T"].shape[1]
    identity = torch.eye(dimension)
    param = torch.zeros(dimension if diagonal else (dimension, dimension), requires_grad=True)
    optimizer = torch.optim.Adam([param], lr=lr)
    batches = []
    for x in sets:
        mask = torch.zeros(len(x["gold"]), len(x["T"]))
        for i, gold in enumerate(x["gold"]):
            mask[i, gold] = 1.0
        batches.append((torch.tensor(x["T"]), torch.tensor(x["Q"]), mask))
    for _ in range(steps):
        delta = torch.diag(param) if diagonal else param
        optimizer.zero_grad()
        loss = torch.zeros(())
        for tools, queries, mask in batches:
            mapped = queries @ (identity + delta)
            mapped = mapped / mapped.norm(dim=1, keepdim=True)
            logp = ((mapped @ tools.T) / tau).log_softmax(dim=1)
            loss = loss + (-(logp * mask).sum(1) / mask.sum(1)).mean()
        loss = loss / len(batches) + reg * (delta**2).sum()
        loss.backward()
        optimizer.step()
    delta = torch.diag(param) if diagonal else param
    return (identity + delta).detach().numpy()


def main() -> None:
    torch.manual_seed(0)
    data = embeddings()
    dev = [n for n in data if n != EVERYDAY]
    base = {n: score(x) for n, x in data.items()}
    print("| setting | macro dR@5 | worst dR@5 | everyday top-1 | " + " | ".join(data) + " |")
    print("|---|---|---|---|" + "---|" * len(data))
    print(
        f"| identity | | | {base[EVERYDAY][0]:.1f} | "
        + " | ".join(f"{base[n][1]:.1f}" for n in data)
        + " |"
    )
    for setting in GRID:
        held_out = {}
        for held in dev:
            w = train([data[n] for n in dev if n != held], **setting)
            held_out[held] = score(data[held], w)
            if held == "acme":
                held_out[EVERYDAY] = score(data[EVERYDAY], w)
        deltas = {n: held_out[n][1] - base[n][1] for n in data}
        print(
            f"| {setting} | {np.mean([deltas[n] for n in dev]):+.2f} | "
            f"{min(deltas[n] for n in dev):+.1f} | {held_out[EVERYDAY][0]:.1f} | "
            + " | ".join(f"{deltas[n]:+.1f}" for n in data)
            + " |",
            flush=True,
        )


if __name__ == "__main__":
    main()
