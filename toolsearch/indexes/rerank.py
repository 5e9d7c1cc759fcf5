"""``RerankingToolIndex``: a first-stage index's top hits re-ordered by a :class:`Reranker`.

A first stage (the hybrid index by default) ranks the session's tools cheaply; the
reranker then reads the request and each of the first ``depth`` tools' texts *together*
(a cross-encoder), which can judge a match better than two separate embeddings, but costs
a model pass per candidate, so it only sees the top of the list. The final order of those
candidates fuses both rankings by reciprocal rank, ``first_stage_weight / (rrf_k +
first-stage rank) + reranker_weight / (rrf_k + reranker rank)``, so a reranker's confident
mistake cannot bury what the first stage put first. Tools below ``depth`` follow in
first-stage order.

:class:`CrossEncoderReranker` runs a Hugging Face sequence-classification model (one
relevance logit per pair), such as :func:`toolsearch.tuning.finetune_reranker` trains.
The one we trained that way (MiniLM, on catalog pairs and NESTFUL requests) did not beat
the hybrid index alone and cost about 0.6 s per search on two cores (docs/finetune.md), so
no reranker is on by default: this is the seam for a better one. :class:`FunctionReranker`
wraps a plain function: a test double, or a way to plug in a hosted reranking API.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.base import BaseToolIndex, SessionTools

logger = logging.getLogger(__name__)

__all__ = [
    "CrossEncoderReranker",
    "FunctionReranker",
    "Reranker",
    "RerankingToolIndex",
    "load_reranker",
]


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each document answers a query; higher is better."""

    @property
    def name(self) -> str: ...

    def score(self, query: str, documents: Sequence[str]) -> list[float]: ...


class FunctionReranker:
    """A :class:`Reranker` from a function ``(query, document) -> score``."""

    def __init__(self, function: Callable[[str, str], float], *, name: str = "function") -> None:
        self._function = function
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        return [float(self._function(query, document)) for document in documents]


class CrossEncoderReranker:
    """A cross-encoder: a sequence-classification model that reads (query, document) pairs.

    Args:
        model: A local folder (or a model name your Hugging Face cache already holds) of a
            model with one output label, e.g. what :func:`~toolsearch.tuning.finetune_reranker`
            saved.
        max_length: Tokens per pair; longer pairs lose the end of the longer text first.
        batch_size: Pairs per forward pass.
        device: Torch device (``"cpu"`` by default).
    """

    def __init__(
        self,
        model: str | Path,
        *,
        max_length: int = 160,
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        if max_length < 8 or batch_size < 1:
            raise ValueError("max_length must be at least 8 and batch_size at least 1")
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:
            raise MissingExtraError("CrossEncoderReranker", "vector", "transformers") from exc
        path = Path(model).expanduser()
        source = str(path) if path.exists() else str(model)
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(source)
        loaded = AutoModelForSequenceClassification.from_pretrained(source)
        if loaded.config.num_labels != 1:
            raise ValueError(
                f"{model} has {loaded.config.num_labels} output labels; a reranker needs one "
                "relevance score per pair"
            )
        self._model = loaded.to(device).eval()
        self._device = device
        self._max_length = max_length
        self._batch_size = batch_size
        self._name = f"cross-encoder/{Path(str(model)).name}"
        self._lock = threading.Lock()  # one forward pass at a time: torch already uses the cores

    @property
    def name(self) -> str:
        return self._name

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        scores: list[float] = []
        with self._lock, self._torch.inference_mode():
            for start in range(0, len(documents), self._batch_size):
                chunk = list(documents[start : start + self._batch_size])
                encoded = self._tokenizer(
                    [query] * len(chunk),
                    chunk,
                    truncation="longest_first",
                    max_length=self._max_length,
                    padding=True,
                    return_tensors="pt",
                ).to(self._device)
                scores += self._model(**encoded).logits.view(-1).tolist()
        return scores


class RerankingToolIndex(BaseToolIndex[Any]):
    """Another index's top ``depth`` hits, re-ordered with a :class:`Reranker`.

    Args:
        reranker: What scores (request, tool text) pairs.
        first_stage: The index that proposes candidates (a default
            :class:`~toolsearch.indexes.hybrid.HybridToolIndex` when omitted). It must be a
            :class:`BaseToolIndex`: the reranking index shares its views and sessions logic.
        depth: How many first-stage hits the reranker reads per search.
        first_stage_weight: Weight of the first-stage rank in the fusion.
        reranker_weight: Weight of the reranker's rank (0 keeps the first-stage order).
        rrf_k: The rank-fusion constant (5, as in the hybrid index).
        on_error: What a search does when the reranker raises (a hosted API down, say):
            ``"raise"`` (default) passes the error on; ``"first_stage"`` logs a warning
            and answers in first-stage order.
    """

    search_type = "rerank"

    def __init__(
        self,
        reranker: Reranker,
        *,
        first_stage: BaseToolIndex[Any] | None = None,
        depth: int = 20,
        first_stage_weight: float = 1.0,
        reranker_weight: float = 1.0,
        rrf_k: float = 5.0,
        on_error: Literal["raise", "first_stage"] = "raise",
    ) -> None:
        if on_error not in ("raise", "first_stage"):
            raise ValueError(f"on_error must be 'raise' or 'first_stage', got {on_error!r}")
        if depth < 1 or rrf_k < 0:
            raise ValueError("depth must be at least 1 and rrf_k non-negative")
        if first_stage_weight < 0 or reranker_weight < 0:
            raise ValueError("weights must be non-negative")
        if first_stage_weight + reranker_weight == 0:
            raise ValueError("weights must not both be zero")
        if first_stage is None:
            from toolsearch.indexes.hybrid import HybridToolIndex

            first_stage = HybridToolIndex()
        super().__init__()
        self.reranker = reranker
        self.first_stage = first_stage
        self.depth = depth
        self.first_stage_weight = first_stage_weight
        self.reranker_weight = reranker_weight
        self.rrf_k = rrf_k
        self.on_error = on_error

    def _build_view(self, snapshot: SessionTools) -> Any:
        return self.first_stage._build_view(snapshot)

    def _rank(
        self,
        view: Any,
        snapshot: SessionTools,
        query: str,
        limit: int,
        allowed: Sequence[int] | None,
    ) -> tuple[list[tuple[int, float]], int]:
        ranked, total = self.first_stage._rank(
            view, snapshot, query, max(limit, self.depth), allowed
        )
        head, tail = ranked[: self.depth], ranked[self.depth :]
        if not head or self.reranker_weight == 0:
            return ranked[:limit], total
        try:
            scores = self._scores(query, [snapshot.prepared[i].full_text for i, _ in head])
        except Exception:
            if self.on_error == "raise":
                raise
            logger.warning(
                "reranker %r failed; answering in first-stage order",
                self.reranker.name,
                exc_info=True,
            )
            return ranked[:limit], total
        by_reranker = sorted(range(len(head)), key=lambda j: (-scores[j], j))
        reranker_rank = {j: rank for rank, j in enumerate(by_reranker, start=1)}
        fused = [
            (
                position,
                self.first_stage_weight / (self.rrf_k + rank)
                + self.reranker_weight / (self.rrf_k + reranker_rank[rank - 1]),
            )
            for rank, (position, _score) in enumerate(head, start=1)
        ]
        fused.sort(key=lambda item: -item[1])  # stable: ties keep the first-stage order
        # below every reranked hit: their first-stage part alone is already larger
        ordered = fused + [
            (position, self.first_stage_weight / (self.rrf_k + rank))
            for rank, (position, _score) in enumerate(tail, start=len(head) + 1)
        ]
        return ordered[:limit], total

    def _scores(self, query: str, documents: list[str]) -> list[float]:
        scores = list(self.reranker.score(query, documents))
        if len(scores) != len(documents):
            raise ValueError(
                f"reranker {self.reranker.name!r} returned {len(scores)} scores for "
                f"{len(documents)} documents"
            )
        return scores


def load_reranker(name: str | Path) -> Reranker:
    """The :class:`CrossEncoderReranker` in the folder ``name``; ``ValueError`` if there is
    no such folder."""
    path = Path(name).expanduser()
    if not str(name).strip() or not path.is_dir():
        raise ValueError(f"no reranker folder {str(name)!r}: give the folder of a cross-encoder")
    return CrossEncoderReranker(path)
