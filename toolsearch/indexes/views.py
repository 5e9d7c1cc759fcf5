"""A tool's vector is the mean of its views' embeddings, renormalized: written once.

Every vector backend (``VectorToolIndex``, a built catalog's vector artifact, Milvus)
embeds a tool through :func:`embed_views`, so the same tool gets the same vector
everywhere. The views are :attr:`~toolsearch.indexes.text.PreparedTool.embedding_views`.
The mean of unit vectors, renormalized, scores a query by its average cosine with the
views (up to the tool's normalization), so one vector per tool keeps search as cheap as
before; only the build embeds more text (one batch of every view).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolsearch.indexes.embedders import Embedder

__all__ = ["embed_views"]


def embed_views(embedder: Embedder, views: Sequence[Sequence[str]]) -> Any:
    """Unit vectors (float32, one row per tool) of the tools whose views are ``views``.

    All views go to ``embedder.embed_documents`` as one batch; a tool with no views (an
    empty sequence) is not allowed.
    """
    import numpy as np

    if not views:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    counts = [len(group) for group in views]
    if min(counts) < 1:
        raise ValueError("every tool needs at least one text to embed")
    flat = [text for group in views for text in group]
    vectors = np.asarray(embedder.embed_documents(flat), dtype=np.float32)
    if len(set(counts)) == 1:
        mean = vectors.reshape(len(views), counts[0], -1).mean(axis=1)
    else:
        starts = np.cumsum([0, *counts[:-1]])
        mean = np.add.reduceat(vectors, starts, axis=0) / np.asarray(counts)[:, None]
    norms = np.linalg.norm(mean, axis=1, keepdims=True)
    return np.ascontiguousarray(mean / np.where(norms > 0, norms, 1.0), dtype=np.float32)
