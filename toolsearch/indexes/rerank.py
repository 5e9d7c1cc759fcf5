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
relevance logit per pair). No reranker is on by default: a cross-encoder reads every
candidate with the request, so it must earn its cost per search, and this module is the
seam for one that does (the one we measured: docs/finetune.md, "A reranker on top").
:class:`FunctionReranker` wraps a plain function: a test double, or a way to plug in a
hosted reranking API.

A cross-encoder scores a search's candidates with ``query_threads`` torch threads (one by
default; ``TOOLSEARCH_QUERY_THREADS`` or the argument to change it): one search's twenty
short pairs are too little work to share out, and a shared-out pass waits for whichever
thread a busy machine has not scheduled (:mod:`toolsearch.indexes.threads`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypedDict, Unpack, runtime_checkable

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.ranker import Ranker, Ranking, SessionRanker
from toolsearch.indexes.session import SessionIndex, SessionTools, as_ranker
from toolsearch.indexes.threads import query_threads as resolve_query_threads
from toolsearch.indexes.threads import torch_query_threads

logger = logging.getLogger(__name__)

__all__ = [
    "CrossEncoderReranker",
    "FunctionReranker",
    "RerankParams",
    "Reranker",
    "RerankingRanker",
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
            sequence-classification model with one output label.
        max_length: Tokens per pair; longer pairs lose the end of the longer text first.
        batch_size: Pairs per forward pass.
        device: Torch device (``"cpu"`` by default).
        query_threads: Torch threads per :meth:`score` call; ``None`` (the default) reads
            ``TOOLSEARCH_QUERY_THREADS`` at each call (or takes an enclosing index's
            count), else 1; ``0`` leaves torch's own count.
    """

    def __init__(
        self,
        model: str | Path,
        *,
        max_length: int = 160,
        batch_size: int = 32,
        device: str = "cpu",
        query_threads: int | None = None,
    ) -> None:
        if max_length < 8 or batch_size < 1:
            raise ValueError("max_length must be at least 8 and batch_size at least 1")
        if query_threads is not None:
            resolve_query_threads(query_threads)  # a bad count fails before the model loads
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
        self.query_threads = query_threads
        self._lock = threading.Lock()  # torch modules are not safe to call from several threads

    @property
    def name(self) -> str:
        return self._name

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        scores: list[float] = []
        # the thread scope sits inside the lock: it applies to exactly these forward passes
        with self._lock, torch_query_threads(self.query_threads), self._torch.inference_mode():
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


@dataclass(frozen=True)
class _Session:
    owner: RerankingRanker
    first: SessionRanker
    tools: SessionTools

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        owner, params = self.owner, self.owner.params
        first = self.first.rank(query, max(limit, params.depth), allowed)
        ranked, total = list(first.hits), first.total
        head, tail = ranked[: params.depth], ranked[params.depth :]
        if not head or params.reranker_weight == 0:
            return Ranking.of(ranked[:limit], total)
        try:
            scores = owner.scores(query, [self.tools.prepared[i].full_text for i, _ in head])
        except Exception:
            if params.on_error == "raise":
                raise
            logger.warning(
                "reranker %r failed; answering in first-stage order",
                owner.reranker.name,
                exc_info=True,
            )
            return Ranking.of(ranked[:limit], total)
        by_reranker = sorted(range(len(head)), key=lambda j: (-scores[j], j))
        reranker_rank = {j: rank for rank, j in enumerate(by_reranker, start=1)}
        fused = [
            (
                position,
                params.first_stage_weight / (params.rrf_k + rank)
                + params.reranker_weight / (params.rrf_k + reranker_rank[rank - 1]),
            )
            for rank, (position, _score) in enumerate(head, start=1)
        ]
        fused.sort(key=lambda item: -item[1])  # stable: ties keep the first-stage order
        # below every reranked hit: their first-stage part alone is already larger
        ordered = fused + [
            (position, params.first_stage_weight / (params.rrf_k + rank))
            for rank, (position, _score) in enumerate(tail, start=len(head) + 1)
        ]
        return Ranking.of(ordered[:limit], total)


@dataclass(frozen=True, slots=True)
class RerankParams:
    """How a reranker's order is fused with the first stage's; see :class:`RerankingToolIndex`."""

    depth: int = 20
    first_stage_weight: float = 1.0
    reranker_weight: float = 1.0
    rrf_k: float = 5.0
    on_error: Literal["raise", "first_stage"] = "raise"

    def __post_init__(self) -> None:
        if self.on_error not in ("raise", "first_stage"):
            raise ValueError(f"on_error must be 'raise' or 'first_stage', got {self.on_error!r}")
        if self.depth < 1 or self.rrf_k < 0:
            raise ValueError("depth must be at least 1 and rrf_k non-negative")
        if self.first_stage_weight < 0 or self.reranker_weight < 0:
            raise ValueError("weights must be non-negative")
        if self.first_stage_weight + self.reranker_weight == 0:
            raise ValueError("weights must not both be zero")


class RerankOptions(TypedDict, total=False):
    """Keyword overrides of :class:`RerankParams`."""

    depth: int
    first_stage_weight: float
    reranker_weight: float
    rrf_k: float
    on_error: Literal["raise", "first_stage"]


class RerankingRanker:
    """A first-stage ranker's top ``depth`` hits re-ordered by a :class:`Reranker`; see
    :class:`RerankingToolIndex` for the arguments."""

    search_type = "rerank"

    def __init__(
        self, reranker: Reranker, first_stage: Ranker, params: RerankParams | None = None
    ) -> None:
        self.reranker = reranker
        self.first_stage = first_stage
        self.params = params or RerankParams()

    def prepare(self, tools: SessionTools) -> _Session:
        return _Session(self, self.first_stage.prepare(tools), tools)

    def scores(self, query: str, documents: list[str]) -> list[float]:
        scores = list(self.reranker.score(query, documents))
        if len(scores) != len(documents):
            raise ValueError(
                f"reranker {self.reranker.name!r} returned {len(scores)} scores for "
                f"{len(documents)} documents"
            )
        return scores


class RerankingToolIndex(SessionIndex):
    """Another index's top ``depth`` hits, re-ordered with a :class:`Reranker`.

    Args:
        reranker: What scores (request, tool text) pairs.
        first_stage: The index (or :class:`~toolsearch.indexes.ranker.Ranker`) that
            proposes candidates (a default :class:`~toolsearch.indexes.hybrid.HybridToolIndex`
            when omitted).
        depth: How many first-stage hits the reranker reads per search.
        first_stage_weight: Weight of the first-stage rank in the fusion.
        reranker_weight: Weight of the reranker's rank (0 keeps the first-stage order).
        rrf_k: The rank-fusion constant (5, as in the hybrid index).
        on_error: What a search does when the reranker raises (a hosted API down, say):
            ``"raise"`` (default) passes the error on; ``"first_stage"`` logs a warning
            and answers in first-stage order.
    """

    ranker: RerankingRanker

    def __init__(
        self,
        reranker: Reranker,
        *,
        first_stage: Any = None,
        params: RerankParams | None = None,
        **options: Unpack[RerankOptions],
    ) -> None:
        settings = dataclasses.replace(params or RerankParams(), **options)  # before any model
        if first_stage is None:
            from toolsearch.indexes.hybrid import HybridToolIndex

            first_stage = HybridToolIndex()
        self.first_stage = first_stage
        stage = as_ranker(first_stage, "first_stage")
        super().__init__(RerankingRanker(reranker, stage, settings))

    @property
    def reranker(self) -> Reranker:
        return self.ranker.reranker

    @property
    def params(self) -> RerankParams:
        return self.ranker.params

    @property
    def depth(self) -> int:
        return self.params.depth


def load_reranker(name: str | Path) -> Reranker:
    """The :class:`CrossEncoderReranker` in the folder ``name``; ``ValueError`` if there is
    no such folder."""
    path = Path(name).expanduser()
    if not str(name).strip() or not path.is_dir():
        raise ValueError(f"no reranker folder {str(name)!r}: give the folder of a cross-encoder")
    return CrossEncoderReranker(path)
