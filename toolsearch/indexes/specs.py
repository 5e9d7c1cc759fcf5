"""One registry of names: the specs that stand for an embedder or an index.

**Embedder specs** (:func:`embedder_factory`, :func:`load_embedder`,
:func:`resolve_embedder`):

* ``minilm``: the packaged all-MiniLM-L6-v2 (sentence-transformers);
* ``static``: its model2vec distillation (:meth:`StaticEmbedder.from_packaged_minilm`);
* ``tuned``: the model ``toolsearch embedder finetune`` saved at
  :func:`~toolsearch.indexes.tuned.default_tuned_model_path`;
* the folder of a sentence-transformers model;
* ``hashing`` / ``hashing-DIM``: the dependency-light test double;
* ``openai:MODEL`` and ``gemini:MODEL``, optionally ``?dimensions=N&base_url=URL``: an API
  embedder (:mod:`toolsearch.indexes.api_embedders`). Without ``base_url`` it embeds at
  ``OPENAI_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL``, else the provider's own endpoint;
  ``vector:openai:text-embedding-3-small`` names a whole index;
* the names embedders report (``sentence-transformers/...``,
  ``model2vec/static-all-MiniLM-L6-v2-pca256``, ``hashing-256``), so a name an index
  recorded resolves to the embedder that reported it.

**Index specs** (:func:`index_factory`, :func:`make_index`): ``regex``, ``bm25``,
``vector``, ``hybrid``, and ``vector:EMBEDDER`` / ``hybrid:EMBEDDER`` with an embedder spec
after the colon (``hybrid:tuned``, ``vector:static``, ``hybrid:/path/to/model``). Without
one, ``vector`` and ``hybrid`` use the packaged MiniLM.

A named embedder is loaded once per spec and process, on first use, and shared by every
index :func:`index_factory` or :func:`make_index` builds with it. :func:`load_embedder`
and :func:`resolve_embedder` load a new one at each call. Unknown names raise
``ValueError`` listing the valid ones.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from toolsearch.indexes.embedders import (
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    StaticEmbedder,
)
from toolsearch.indexes.onnx_embedder import minilm_embedder
from toolsearch.indexes.tuned import default_tuned_model_path

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from toolsearch.indexes.api_names import ApiEmbedderSpec
    from toolsearch.indexes.rerank import Reranker
    from toolsearch.search.types import ToolIndex

__all__ = [
    "EMBEDDING_KINDS",
    "INDEX_KINDS",
    "default_index",
    "embedder_factory",
    "index_factory",
    "load_embedder",
    "make_index",
    "resolve_embedder",
]

INDEX_KINDS: tuple[str, ...] = ("regex", "bm25", "vector", "hybrid")
"""The index kinds, in the order error messages list them."""

EMBEDDING_KINDS: tuple[str, ...] = ("vector", "hybrid")
"""The kinds that take an embedder (``vector:EMBEDDER``, ``hybrid:EMBEDDER``)."""


def default_index() -> ToolIndex:
    """The index used when none is named: BM25 with ``toolsearch[bm25]``, else regex.

    The one rule for a missing extra: an index you *name* (a constructor, ``make_index``,
    ``index_type`` in the settings) raises :class:`~toolsearch.errors.MissingExtraError`
    naming the extra; only the default, when you name none, falls back to the regex index,
    and says so in a warning (once per process), so the core install still runs.
    """
    try:
        from toolsearch.indexes.bm25 import Bm25ToolIndex

        return Bm25ToolIndex()
    except ImportError as exc:
        from toolsearch.indexes.regex import RegexToolIndex

        _warn_fallback(str(exc))
        return RegexToolIndex()


@functools.cache
def _warn_fallback(reason: str) -> None:
    _log.warning(
        "tool search falls back to the regex index: the default BM25 index is not "
        "available (%s). Name an index to choose one yourself.",
        reason,
    )


# -- embedders ---------------------------------------------------------------------------


def embedder_factory(name: str, *, local_only: bool = False) -> Callable[[], Embedder]:
    """How to create the embedder ``name`` stands for (see the module docs), without
    loading it yet; ``ValueError`` for an unknown name.

    ``local_only``: only names that load from this machine (the packaged models, their
    distillation, ``tuned``, existing model folders, the hashing embedder): a name that would
    make sentence-transformers download a model from a hub is a ``ValueError``. A built
    index's manifest is resolved this way, so a shared index folder never picks weights to
    download. An API embedder's name is allowed, but its endpoint comes from the
    environment, never from the name: a name recording another endpoint than
    ``OPENAI_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL`` names (or the provider's own when they
    are unset) is a ``ValueError`` saying which to set, so a manifest never sends queries
    (with this machine's API key) somewhere of its choosing.
    """
    spec = name.strip()
    api = _api_spec(spec)
    if api is not None:
        if local_only:  # a recorded name never chooses where queries and the key go
            api.check_environment()
            api = dataclasses.replace(api, base_url=None)
        from toolsearch.indexes.api_embedders import create_embedder

        return functools.partial(create_embedder, api)
    if spec == "static":
        return StaticEmbedder.from_packaged_minilm
    if spec.startswith("model2vec/static-all-MiniLM-L6-v2-pca") and spec[37:].isdigit():
        return lambda: StaticEmbedder.from_packaged_minilm(pca_dims=int(spec[37:]))
    if spec in ("minilm", "sentence-transformers/all-MiniLM-L6-v2"):
        return minilm_embedder
    if spec == "minilm-torch":
        return SentenceTransformerEmbedder
    if spec == "minilm-onnx":
        from toolsearch.indexes.onnx_embedder import OnnxEmbedder

        return OnnxEmbedder.from_packaged_minilm
    if spec.startswith("sentence-transformers/"):  # "#id" names a fine-tuned model's weights
        model = spec.split("/", 1)[1].split("#", 1)[0]
        if local_only and not Path(model).expanduser().is_dir():
            raise ValueError(
                f"embedder {name!r} is not a model folder on this machine; it would be "
                "downloaded from a model hub, which an index's manifest may not ask for"
            )
        return lambda: SentenceTransformerEmbedder(model)
    if spec == "hashing":
        return HashingEmbedder
    if spec.startswith("hashing-") and spec[8:].isdigit():
        return lambda: HashingEmbedder(int(spec[8:]))
    if spec == "tuned":
        return _tuned_embedder
    if spec and Path(spec).expanduser().is_dir():
        return lambda: SentenceTransformerEmbedder(Path(spec).expanduser())
    raise ValueError(
        f"unknown embedder {name!r}: use minilm, minilm-onnx, minilm-torch, static, tuned, "
        "hashing, hashing-DIM, openai:MODEL, gemini:MODEL or the folder of a "
        "sentence-transformers model (or pass an Embedder object)"
    )


def _api_spec(spec: str) -> ApiEmbedderSpec | None:
    """The API embedder ``spec`` names (``openai:...``, ``gemini:...``), else ``None``;
    the module holding them is imported only for such a name."""
    prefix = spec.partition(":")[0]
    if prefix not in ("openai", "gemini"):
        return None
    from toolsearch.indexes.api_names import ApiEmbedderSpec

    return ApiEmbedderSpec.parse(spec)


def load_embedder(name: str) -> Embedder:
    """The embedder a spec stands for, loaded now; see :func:`embedder_factory`."""
    return embedder_factory(name)()


def resolve_embedder(spec: str | Embedder | None, default: str = "static") -> Embedder:
    """An embedder object as is; a spec (``None`` or ``""``: ``default``) loaded now."""
    if spec is not None and not isinstance(spec, str):
        return spec
    return load_embedder(spec or default)


def _tuned_embedder() -> Embedder:
    path = default_tuned_model_path()
    if not (path / "config.json").is_file():
        raise ValueError(
            f"no fine-tuned embedder at {path}; make it with: toolsearch embedder finetune "
            "SOURCE... (see docs/finetune.md)"
        )
    return SentenceTransformerEmbedder(path)


def _shared_embedder(spec: str) -> Callable[[], Embedder]:
    """One loader per spec and process: the model is loaded on its first call. ``tuned``
    is keyed by the folder it names now (``TOOLSEARCH_CACHE_DIR`` may change), an API
    embedder by the endpoint it resolves to now (``OPENAI_BASE_URL`` may change), so an
    embedder made for one place never answers for another."""
    where = ""
    if spec == "tuned":
        where = str(default_tuned_model_path())
    else:
        api = _api_spec(spec)
        if api is not None:
            where = api.name  # the endpoint the environment names now
    return _loader(spec, where)


@functools.cache
def _loader(spec: str, where: str) -> Callable[[], Embedder]:
    return functools.cache(embedder_factory(spec))


# -- indexes -----------------------------------------------------------------------------


def index_factory(
    spec: str, *, extra: Mapping[str, Callable[[], ToolIndex]] | None = None
) -> Callable[[], ToolIndex]:
    """The factory behind an index spec, without building anything (or loading a model).

    A plain kind gives its class (``index_factory("bm25") is Bm25ToolIndex``); a spec with
    an embedder gives the same factory each time in a process, so every index it builds
    shares one loaded model. ``extra`` adds names of the caller's own (the benchmark's
    peers), looked up first and listed in the error. ``ValueError`` for an unknown index
    or embedder name.
    """
    if extra and spec in extra:
        return extra[spec]
    kind, embedder = _parse(spec, extra or ())
    classes = _index_classes()  # imported now, so building imports no more of ours
    if embedder is None:
        return classes[kind]
    _shared_embedder(embedder)  # an unknown embedder fails now; nothing is loaded
    return _with_embedder(spec)


@functools.cache  # one factory per spec, so a name rebuilds the very same index
def _with_embedder(spec: str) -> Callable[[], ToolIndex]:
    return functools.partial(make_index, spec)


def make_index(
    spec: str,
    *,
    embedder: str | Embedder | None = None,
    bm25_min_score: float = 0.0,
    reranker: str | Path | Reranker | None = None,
) -> ToolIndex:
    """Build the index ``spec`` names, configured.

    Args:
        spec: An index spec (``"bm25"``, ``"hybrid"``, ``"hybrid:tuned"``...).
        embedder: For ``vector`` and ``hybrid``: an embedder spec or object, instead of
            one after the colon (``None`` or ``""``: the packaged MiniLM).
        bm25_min_score: The BM25 index's ``min_score`` (``bm25`` and ``hybrid``; ignored
            by the other kinds).
        reranker: A cross-encoder folder (loaded with
            :func:`~toolsearch.indexes.load_reranker`) or a ``Reranker``: the index
            becomes the first stage of a :class:`~toolsearch.indexes.RerankingToolIndex`.

    Raises:
        ValueError: An unknown index, embedder or reranker; an embedder for a kind
            without vectors; an embedder both in ``spec`` and in ``embedder``.
    """
    kind, named = _parse(spec)
    if named is not None:
        if embedder is not None:
            raise ValueError(f"index {spec!r} names its embedder: do not pass embedder= too")
        embedder = named
    if isinstance(embedder, str) and not embedder.strip():
        embedder = None
    if embedder is not None and kind not in EMBEDDING_KINDS:
        raise ValueError(
            f"embedder={embedder!r} applies to index 'vector' or 'hybrid', not {kind!r}"
        )
    model = _shared_embedder(embedder)() if isinstance(embedder, str) else embedder
    index = _build(kind, model, bm25_min_score)
    if reranker is None:
        return index
    from toolsearch.indexes import rerank

    if isinstance(reranker, str | Path):
        reranker = rerank.load_reranker(reranker)
    return rerank.RerankingToolIndex(reranker, first_stage=index)


def _parse(spec: str, extra: Iterable[str] = ()) -> tuple[str, str | None]:
    """``(kind, embedder spec or None)``; ``ValueError`` naming the valid specs (and
    ``extra``)."""
    kind, colon, embedder = spec.partition(":")
    if kind in INDEX_KINDS and (not colon or (embedder and kind in EMBEDDING_KINDS)):
        return kind, embedder or None
    raise ValueError(
        f"unknown index {spec!r}; choose from {', '.join([*INDEX_KINDS, *extra])} "
        "(vector and hybrid also as vector:EMBEDDER, hybrid:EMBEDDER)"
    )


def _index_classes() -> dict[str, Callable[[], ToolIndex]]:
    from toolsearch.indexes.bm25 import Bm25ToolIndex
    from toolsearch.indexes.hybrid import HybridToolIndex
    from toolsearch.indexes.regex import RegexToolIndex
    from toolsearch.indexes.vector import VectorToolIndex

    return {
        "regex": RegexToolIndex,
        "bm25": Bm25ToolIndex,
        "vector": VectorToolIndex,
        "hybrid": HybridToolIndex,
    }


def _build(kind: str, embedder: Embedder | None, bm25_min_score: float) -> ToolIndex:
    from toolsearch.indexes.bm25 import Bm25ToolIndex
    from toolsearch.indexes.hybrid import HybridToolIndex
    from toolsearch.indexes.regex import RegexToolIndex
    from toolsearch.indexes.vector import VectorToolIndex

    if kind == "regex":
        return RegexToolIndex()
    if kind == "bm25":
        return Bm25ToolIndex(min_score=bm25_min_score)
    if kind == "vector":
        return VectorToolIndex(embedder=embedder)
    return HybridToolIndex(
        bm25=Bm25ToolIndex(min_score=bm25_min_score),
        vector=VectorToolIndex(embedder=embedder),
    )
