"""The embedder specs: the names that stand for an embedder.

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

A named embedder loads on first use (:func:`shared_embedder` keeps one per spec and
process); :func:`load_embedder` and :func:`resolve_embedder` load a new one at each call.
Unknown names raise ``ValueError`` listing the valid ones. The index specs, which take an
embedder spec after the colon, are in :mod:`toolsearch.indexes.specs`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from toolsearch.indexes.embedders.local import (
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    StaticEmbedder,
)
from toolsearch.indexes.embedders.onnx import minilm_embedder
from toolsearch.indexes.embedders.tuned import default_tuned_model_path

if TYPE_CHECKING:
    from toolsearch.indexes.embedders.api_names import ApiEmbedderSpec

__all__ = ["embedder_factory", "load_embedder", "resolve_embedder", "shared_embedder"]


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
        from toolsearch.indexes.embedders.api import create_embedder

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
        from toolsearch.indexes.embedders.onnx import OnnxEmbedder

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
    from toolsearch.indexes.embedders.api_names import ApiEmbedderSpec

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


def shared_embedder(spec: str) -> Callable[[], Embedder]:
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
