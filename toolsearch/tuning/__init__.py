"""Tune an embedder to tool search with pairs made from a tool catalog (no labels needed).

``toolsearch embedder finetune SOURCE...`` (or :func:`finetune_embedder` with
:func:`training_pairs`) fine-tunes all-MiniLM-L6-v2 on (summary, tool text) pairs and saves
a sentence-transformers model; by default to :func:`default_tuned_model_path`, which the
embedder name ``tuned`` refers to (``--index hybrid:tuned`` in ``toolsearch bench``,
``--embedder tuned`` in ``toolsearch index build``). Needs the ``vector`` extra.
"""

from __future__ import annotations

from pathlib import Path

from toolsearch.indexes.embedders import default_cache_dir
from toolsearch.tuning.pairs import (
    TrainingPair,
    labeled_pairs,
    read_pairs,
    split_summary,
    training_pairs,
    write_pairs,
)
from toolsearch.tuning.train import (
    RECORD_FILE,
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

TUNED_MODEL_NAME = "all-MiniLM-L6-v2-tools"
"""The folder name of the default fine-tuned model under the cache directory."""


def default_tuned_model_path() -> Path:
    """``<cache dir>/models/all-MiniLM-L6-v2-tools``: where ``tuned`` is looked up."""
    return default_cache_dir() / "models" / TUNED_MODEL_NAME
