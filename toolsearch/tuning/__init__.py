"""Tune an embedder to tool search with pairs made from a tool catalog (no labels needed).

``toolsearch embedder finetune SOURCE...`` (or :func:`finetune_embedder` with
:func:`training_pairs`) fine-tunes all-MiniLM-L6-v2 on (summary, tool text) pairs and saves
a sentence-transformers model; by default to :func:`default_tuned_model_path`, which the
embedder name ``tuned`` refers to (``--index hybrid:tuned`` in ``toolsearch bench``,
``--embedder tuned`` in ``toolsearch index build``). Needs the ``vector`` extra.

:func:`finetune_reranker` with :func:`reranker_examples` trains a cross-encoder that
re-orders a search's top hits (:class:`~toolsearch.indexes.RerankingToolIndex`). The one
we trained this way did not beat the hybrid index alone (docs/finetune.md), so no command
makes it: it is there to measure a reranker on your own data.
"""

from __future__ import annotations

from toolsearch.indexes.tuned import RECORD_FILE, TUNED_MODEL_NAME, default_tuned_model_path
from toolsearch.tuning.pairs import (
    TrainingPair,
    labeled_pairs,
    read_pairs,
    split_summary,
    training_pairs,
    write_pairs,
)
from toolsearch.tuning.rerank import (
    LabeledSet,
    RerankerResult,
    RerankerSettings,
    RerankExample,
    finetune_reranker,
    reranker_examples,
)
from toolsearch.tuning.train import (
    FinetuneResult,
    FinetuneSettings,
    finetune_embedder,
)

__all__ = [
    "RECORD_FILE",
    "TUNED_MODEL_NAME",
    "FinetuneResult",
    "FinetuneSettings",
    "LabeledSet",
    "RerankExample",
    "RerankerResult",
    "RerankerSettings",
    "TrainingPair",
    "default_tuned_model_path",
    "finetune_embedder",
    "finetune_reranker",
    "labeled_pairs",
    "read_pairs",
    "reranker_examples",
    "split_summary",
    "training_pairs",
    "write_pairs",
]
