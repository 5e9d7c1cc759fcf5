"""Tune an embedder to tool search with pairs made from a tool catalog (no labels needed).

``toolsearch embedder finetune SOURCE...`` (or :func:`finetune_embedder` with
:func:`training_pairs`) fine-tunes all-MiniLM-L6-v2 on (summary, tool text) pairs and saves
a sentence-transformers model; by default to :func:`default_tuned_model_path`, which the
embedder name ``tuned`` refers to (``--index hybrid:tuned`` in ``toolsearch bench``,
``--embedder tuned`` in ``toolsearch index build``). Needs the ``vector`` extra.
"""

from __future__ import annotations

from toolsearch.indexes.embedders.tuned import (
    RECORD_FILE,
    TUNED_MODEL_NAME,
    default_tuned_model_path,
)
from toolsearch_bench.tuning.pairs import (
    TrainingPair,
    labeled_pairs,
    read_pairs,
    split_summary,
    training_pairs,
    write_pairs,
)
from toolsearch_bench.tuning.train import (
    FinetuneResult,
    FinetuneSettings,
    finetune_embedder,
)

__all__ = [
    "RECORD_FILE",
    "TUNED_MODEL_NAME",
    "FinetuneResult",
    "FinetuneSettings",
    "TrainingPair",
    "default_tuned_model_path",
    "finetune_embedder",
    "labeled_pairs",
    "read_pairs",
    "split_summary",
    "training_pairs",
    "write_pairs",
]
