"""Embedders: text to unit vectors, for the vector, hybrid and learned indexes.

One family, one module each: the seam and the local models (:mod:`.local`), the packaged
MiniLM on ONNX Runtime (:mod:`.onnx`), API embedders (:mod:`.api`, named as in
:mod:`.api_names`), the names that stand for an embedder (:mod:`.specs`) and the on-disk
cache of document embeddings (:mod:`.cache`). This package hands on the names
``toolsearch.indexes.embedders`` had when it was one module.
"""

from toolsearch.indexes.embedders.local import (
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    StaticEmbedder,
    default_cache_dir,
    packaged_minilm_path,
    window_prefix,
)

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "default_cache_dir",
    "packaged_minilm_path",
    "window_prefix",
]
