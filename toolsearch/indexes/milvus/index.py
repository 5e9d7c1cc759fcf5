"""``MilvusToolIndex``: tool search in a Milvus collection, shared by every process.

The index is the session layer (:class:`~toolsearch.indexes.session.SessionIndex`: snapshots,
isolation, categories, exact name first, exclusions, ``max_results``) over a
:class:`MilvusRanker`, which ranks inside Milvus through ``pymilvus.MilvusClient``. The same
code talks to an embedded Milvus Lite file (``uri="./tools.db"``), a Milvus Lite server
(``uri="http://127.0.0.1:19530"``) or a Milvus Standalone/Distributed cluster (``uri`` and
``token``). Install ``toolsearch[milvus]``.

* **One collection per catalog**, one row per tool keyed by its fingerprint (the fields:
  :mod:`toolsearch.indexes.milvus.schema`). Preparing a session's tools asks the server
  which fingerprints it already holds and upserts only the others, so re-registering
  unchanged tools (in any process) writes nothing, and a tool is embedded once.
* **Sessions are filters inside the search**: every search carries ``id in [...]`` with the
  session's fingerprints (or, for a category, the allowed ones), each escaped, so the
  engine ranks only that session's tools; there is never a global top-k filtered
  afterwards.
* ``mode="bm25"``: the server's BM25 function over our analyzed, field-weighted text;
  ``"vector"``: cosine over our :class:`~toolsearch.indexes.embedders.Embedder`'s vectors;
  ``"hybrid"``: both in one ``hybrid_search``, fused by the engine's own ``RRFRanker``
  (``rrf_k`` of :class:`~toolsearch.indexes.params.FusionParams`, 5 by default), or its
  ``WeightedRanker`` for ``fusion="convex"``.
* A server that is unreachable or fails is retried (:class:`RetryPolicy`), then raises
  :class:`~toolsearch.errors.IndexUnavailableError`, which the search tool hands to the
  model as an error result. Preparing a session never raises for a dead server: the
  writes are made by the session's first search instead. A collection the server released
  (it restarted) is loaded again by the first read it fails; a row the server refuses costs
  only its own tool (:class:`UpsertReport` ``refused``), not the session.

:meth:`MilvusRanker.search_catalog` searches a whole collection (optionally one
``catalog`` or category) without a session: what ``toolsearch index search --engine milvus``
runs. Up to :data:`EXACT_TOTAL_UP_TO` candidate tools, a search asks for all of them, so
``total_matches`` is exact; above that it is the number of hits returned.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.milvus.client import RetryPolicy
from toolsearch.indexes.milvus.ranker import (
    EXACT_TOTAL_UP_TO,
    MAX_TOP_K,
    MilvusRanker,
    MilvusSession,
    Mode,
    RefusedTool,
    UpsertReport,
)
from toolsearch.indexes.session import SessionIndex
from toolsearch.search.types import ToolSearchResponse
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "EXACT_TOTAL_UP_TO",
    "MAX_TOP_K",
    "MilvusRanker",
    "MilvusSession",
    "MilvusToolIndex",
    "Mode",
    "RefusedTool",
    "RetryPolicy",
    "UpsertReport",
]


class MilvusToolIndex(SessionIndex):
    """A ``ToolIndex`` over a Milvus collection; see the module docstring. Takes the
    arguments of :class:`MilvusRanker` (``uri`` first, the rest as keywords)."""

    ranker: MilvusRanker

    def __init__(self, uri: str = "./tools.db", **options: Any) -> None:
        super().__init__(MilvusRanker(uri, **options))

    @property
    def mode(self) -> str:
        return self.ranker.mode

    @property
    def collection(self) -> str:
        return self.ranker.collection

    @property
    def embedder(self) -> Embedder:
        return self.ranker.embedder

    def upsert_tools(self, tools: Iterable[ToolDefinition], **options: Any) -> UpsertReport:
        """Write a catalog's tools the collection lacks (see :meth:`MilvusRanker.upsert_tools`)."""
        return self.ranker.upsert_tools(tools, **options)

    def delete_tools(self, fingerprints: Iterable[str]) -> int:
        return self.ranker.delete_tools(fingerprints)

    def search_catalog(
        self, query: str, max_results: int | None = 10, *, category: str | None = None
    ) -> ToolSearchResponse:
        """Search the whole collection, no session (:meth:`MilvusRanker.search_catalog`)."""
        return self.ranker.search_catalog(query, max_results, category=category)

    def exists(self) -> bool:
        return self.ranker.exists()

    def count(self) -> int:
        return self.ranker.count()

    def drop(self) -> None:
        self.ranker.drop()

    def close(self) -> None:
        self.ranker.close()
