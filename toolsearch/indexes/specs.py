"""One registry of names: the specs that stand for an index (and, re-exported from
:mod:`toolsearch.indexes.embedders.specs`, for an embedder).

**Embedder specs** (:func:`embedder_factory`, :func:`load_embedder`,
:func:`resolve_embedder`):

* ``minilm``: the packaged all-MiniLM-L6-v2 (sentence-transformers);
* ``static``: its model2vec distillation (:meth:`StaticEmbedder.from_packaged_minilm`);
* ``tuned``: the model ``toolsearch embedder finetune`` saved at
  :func:`~toolsearch.indexes.embedders.tuned.default_tuned_model_path`;
* the folder of a sentence-transformers model;
* ``hashing`` / ``hashing-DIM``: the dependency-light test double;
* ``openai:MODEL`` and ``gemini:MODEL``, optionally ``?dimensions=N&base_url=URL``: an API
  embedder (:mod:`toolsearch.indexes.embedders.api`). Without ``base_url`` it embeds at
  ``OPENAI_BASE_URL`` / ``GOOGLE_GEMINI_BASE_URL``, else the provider's own endpoint;
  ``vector:openai:text-embedding-3-small`` names a whole index;
* the names embedders report (``sentence-transformers/...``,
  ``model2vec/static-all-MiniLM-L6-v2-pca256``, ``hashing-256``), so a name an index
  recorded resolves to the embedder that reported it.

**Index specs** (:func:`index_factory`, :func:`make_index`): a kind of the table in
:mod:`toolsearch.indexes.kinds` (``regex``, ``bm25``, ``vector``, ``hybrid``, ``milvus``),
and for the kinds that take an embedder ``KIND:EMBEDDER`` with an embedder spec after the
colon (``hybrid:tuned``, ``vector:static``, ``hybrid:/path/to/model``, ``milvus:static``).
Without one, ``vector`` and ``hybrid`` use the packaged MiniLM (``milvus``: the embedder its
collection recorded, else MiniLM). A kind on a server (``milvus``) takes ``uri=`` or reads
its variable (``MILVUS_URI``).

A named embedder is loaded once per spec and process, on first use, and shared by every
index :func:`index_factory` or :func:`make_index` builds with it. :func:`load_embedder`
and :func:`resolve_embedder` load a new one at each call. Unknown names raise
``ValueError`` listing the valid ones.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from toolsearch.indexes import kinds
from toolsearch.indexes.embedders.specs import (
    embedder_factory,
    load_embedder,
    resolve_embedder,
    shared_embedder,
)

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from toolsearch.indexes.embedders import Embedder
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

INDEX_KINDS: tuple[str, ...] = tuple(kind.name for kind in kinds.KINDS)
"""toolsearch's own index kinds (:data:`toolsearch.indexes.kinds.KINDS`), in the order
error messages list them; :func:`toolsearch.indexes.kinds.kind_names` adds the kinds
installed packages register."""

EMBEDDING_KINDS: tuple[str, ...] = tuple(kind.name for kind in kinds.KINDS if kind.embedder)
"""toolsearch's own kinds that take an embedder (``vector:EMBEDDER``, ``hybrid:EMBEDDER``...)."""


def default_index() -> ToolIndex:
    """The index used when none is named: BM25 with ``toolsearch[bm25]``, else regex.

    The one rule for a missing extra: an index you *name* (a constructor, ``make_index``,
    ``index_type`` in the settings) raises :class:`~toolsearch.errors.MissingExtraError`
    naming the extra; only the default, when you name none, falls back to the regex index,
    and says so in a warning (once per process), so the core install still runs.
    """
    try:
        from toolsearch.indexes.lexical.bm25 import Bm25ToolIndex

        return Bm25ToolIndex()
    except ImportError as exc:
        from toolsearch.indexes.lexical.regex import RegexToolIndex

        _warn_fallback(str(exc))
        return RegexToolIndex()


@functools.cache
def _warn_fallback(reason: str) -> None:
    _log.warning(
        "tool search falls back to the regex index: the default BM25 index is not "
        "available (%s). Name an index to choose one yourself.",
        reason,
    )


# -- indexes -----------------------------------------------------------------------------


def index_factory(
    spec: str, *, extra: Mapping[str, Callable[[], ToolIndex]] | None = None
) -> Callable[[], ToolIndex]:
    """The factory behind an index spec, without building anything (or loading a model).

    A plain kind gives its class (``index_factory("bm25") is Bm25ToolIndex``); a spec with
    an embedder, or a kind on a server (``milvus``: its URI from ``MILVUS_URI`` when it is
    built), gives the same factory each time in a process, so every index it builds
    shares one loaded model. ``extra`` adds names of the caller's own (the benchmark's
    peers), looked up first and listed in the error. ``ValueError`` for an unknown index
    or embedder name.
    """
    if extra and spec in extra:
        return extra[spec]
    name, embedder = _parse(spec, extra or ())
    kind = kinds.index_kind(name)
    cls = kind.index_class()  # imported now, so building imports no more of ours
    if embedder is None and not kind.needs_uri:
        return cls
    if embedder is not None:
        shared_embedder(embedder)  # an unknown embedder fails now; nothing is loaded
    return _with_embedder(spec)  # a server's URI is read when it is built


@functools.cache  # one factory per spec, so a name rebuilds the very same index
def _with_embedder(spec: str) -> Callable[[], ToolIndex]:
    return functools.partial(make_index, spec)


def make_index(
    spec: str,
    *,
    embedder: str | Embedder | None = None,
    bm25_min_score: float = 0.0,
    reranker: str | Path | Reranker | None = None,
    uri: str | None = None,
    collection: str | None = None,
) -> ToolIndex:
    """Build the index ``spec`` names, configured.

    Args:
        spec: An index spec (``"bm25"``, ``"hybrid"``, ``"hybrid:tuned"``, ``"milvus"``...).
        embedder: For the kinds that take one (``vector``, ``hybrid``, ``milvus``): an
            embedder spec or object, instead of one after the colon (``None`` or ``""``:
            the kind's default, the packaged MiniLM).
        bm25_min_score: The BM25 index's ``min_score`` (``bm25`` and ``hybrid``; ignored
            by ``regex`` and ``vector``; ``milvus`` refuses one).
        reranker: A cross-encoder folder (loaded with
            :func:`~toolsearch.indexes.load_reranker`) or a ``Reranker``: the index
            becomes the first stage of a :class:`~toolsearch.indexes.RerankingToolIndex`.
        uri: For a kind on a server (``milvus``): its URI; ``None``: the kind's variable
            (``MILVUS_URI``).
        collection: For a kind on a server: the collection (``None``: the backend's).

    Raises:
        ValueError: An unknown index, embedder or reranker; an embedder for a kind
            without vectors; an embedder both in ``spec`` and in ``embedder``; ``uri`` or
            ``collection`` for an in-process kind, or no URI for a kind on a server.
        MissingExtraError: The kind's extra is not installed.
    """
    name, named = _parse(spec)
    kind = kinds.index_kind(name)
    if named is not None:
        if embedder is not None:
            raise ValueError(f"index {spec!r} names its embedder: do not pass embedder= too")
        embedder = named
    if isinstance(embedder, str) and not embedder.strip():
        embedder = None
    if embedder is not None and not kind.embedder:
        raise ValueError(
            f"embedder={embedder!r} applies to index {_either(kinds.embedding_kind_names())}, "
            f"not {name!r}"
        )
    for option, value in (("uri", uri), ("collection", collection)):
        if value is not None and not kind.needs_uri:
            raise ValueError(
                f"{option}={value!r} applies to index {_either(kinds.server_kind_names())}, "
                f"not {name!r}"
            )
    model = shared_embedder(embedder)() if isinstance(embedder, str) else embedder
    index = kind.make(
        kinds.IndexOptions(
            embedder=model, bm25_min_score=bm25_min_score, uri=uri, collection=collection
        )
    )
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
    row = kinds.find_kind(kind)  # an installed package's kind is looked up only now
    if row is not None and (not colon or (embedder and row.embedder)):
        return kind, embedder or None
    embedding = kinds.embedding_kind_names()
    forms = ", ".join(f"{name}:EMBEDDER" for name in embedding)
    raise ValueError(
        f"unknown index {spec!r}; choose from {', '.join([*kinds.kind_names(), *extra])} "
        f"({', '.join(embedding)} also as {forms})"
    )


def _either(names: tuple[str, ...]) -> str:
    """``'vector', 'hybrid' or 'milvus'``."""
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
