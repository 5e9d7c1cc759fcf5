"""Where models live on disk: the cache folder, the fine-tuned embedder and its record.

``toolsearch embedder finetune`` (:mod:`toolsearch_bench.tuning`) writes its model to
:func:`default_tuned_model_path`, which the embedder name ``tuned`` refers to, and writes
:data:`RECORD_FILE` beside the weights. This module only names those places; it imports
nothing, so the embedders, the embedder registry and the trainer can all depend on it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = [
    "RECORD_FILE",
    "TUNED_MODEL_NAME",
    "default_cache_dir",
    "default_tuned_model_path",
    "recorded_model_id",
]

TUNED_MODEL_NAME = "all-MiniLM-L6-v2-tools"
"""The folder name of the default fine-tuned model under the cache directory."""

RECORD_FILE = "toolsearch-finetune.json"
"""Written beside the weights: the weights' digest (``model_id``), settings, pair count,
losses and time of the run. :class:`~toolsearch.indexes.SentenceTransformerEmbedder` adds
the digest to its name, so an index built with one training run refuses another."""


def default_cache_dir() -> Path:
    """``$TOOLSEARCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolsearch``, else
    ``~/.cache/toolsearch``."""
    explicit = os.environ.get("TOOLSEARCH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolsearch"


def default_tuned_model_path() -> Path:
    """``<cache dir>/models/all-MiniLM-L6-v2-tools``: where ``tuned`` is looked up."""
    return default_cache_dir() / "models" / TUNED_MODEL_NAME


def recorded_model_id(folder: Path) -> str | None:
    """The weights digest in ``folder``'s :data:`RECORD_FILE`, or ``None`` for a model
    that ``toolsearch embedder finetune`` did not write (or an unreadable record)."""
    try:
        record = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    model_id = record.get("model_id") if isinstance(record, dict) else None
    return model_id if isinstance(model_id, str) and model_id else None
