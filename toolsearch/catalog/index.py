"""``CatalogIndex``: build a large catalog's index once, load it fast, serve many sessions.

Layout of a built index folder (``indexes/NAME/``)::

    manifest.json           format version, kind, embedder, counts, settings, checksums
    tools.sqlite            definitions, summaries, names (exact lookup)
    fingerprints.npy        raw sha256 fingerprint per tool, catalog order
    fingerprints_sorted.npy, fingerprint_order.npy
                            the same sorted, and their catalog ids (session lookup)
    bm25_*.{txt,npy}        postings (bm25 and hybrid), memory-mapped
    embeddings.npy          unit vectors (vector and hybrid), memory-mapped on load
    vectors.faiss           IndexFlatIP up to 10,000 tools, IndexHNSWFlat above

**Why postings, not a tantivy index directory.** Keyword search is BM25F with the
*searched tools' own* statistics and normalized scores, as in ``Bm25ToolIndex``; a tantivy
index scores fields separately with whole-index statistics, so a session over 500 catalog
tools would rank them differently from a ``Bm25ToolIndex`` over the same 500. The build
analyzes text with the same tantivy analyzer and stores the weighted postings as
memory-mapped ``.npy`` arrays, scored by the same function as the session indexes
(:mod:`toolsearch.indexes.lexical.bm25_scoring`; see ``indexes/README.md``).

**Builds** (:mod:`toolsearch.catalog.build`) stream their sources, analyze them in worker
processes and write into a temporary folder that replaces the target only once complete:
a killed build leaves the previous index as it was.

**Sessions.** A ``CatalogIndex`` is the session layer
(:class:`~toolsearch.indexes.session.SessionIndex`) over a
:class:`~toolsearch.catalog.ranker.CatalogRanker`: ``index_tools(session, tools)`` looks the
tools' fingerprints up in the catalog (no re-indexing) and the session searches only those
tools; tools the catalog does not hold are indexed for that session and ranked together
with its catalog tools, so a mixed session ranks like one session index over all its tools
(BM25: identical hits and scores, tested). Exact names, categories, exclusions and
``max_results`` behave as in every backend. Searches are thread-safe, also while other
sessions register.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
import tokenize
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toolsearch.catalog.bm25_artifact import MappedPostings
from toolsearch.catalog.build import IndexKind, build_index, embedder_option
from toolsearch.catalog.manifest import Manifest, read_manifest, rebuild_command, verify_files
from toolsearch.catalog.pipeline import BuildProgress, iter_source_tools
from toolsearch.catalog.ranker import CatalogRanker
from toolsearch.catalog.store import ToolStore
from toolsearch.catalog.swap import recover_interrupted_swap
from toolsearch.catalog.vector_artifact import VectorArtifact
from toolsearch.errors import IndexCorruptedError, IndexNotFoundError, ManifestMismatchError
from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.params import Bm25Params, FusionParams, VectorParams
from toolsearch.indexes.session import MAX_QUERY_LENGTH, SessionIndex, clean_query, order_hits
from toolsearch.indexes.specs import embedder_factory, resolve_embedder
from toolsearch.search.types import ToolReference, ToolSearchRequest, ToolSearchResponse
from toolsearch.tools.definition import ToolDefinition

_log = logging.getLogger(__name__)

__all__ = [
    "BuildProgress",
    "CatalogIndex",
    "HybridSettings",
    "IndexKind",
    "iter_source_tools",
    "resolve_embedder",
]

HybridSettings = FusionParams
"""The catalog's name for :class:`~toolsearch.indexes.params.FusionParams`."""


_UNREADABLE = (
    OSError,
    ValueError,
    KeyError,
    sqlite3.DatabaseError,
    RuntimeError,
    SyntaxError,  # a damaged .npy header: numpy parses it as a Python literal
    tokenize.TokenError,
)
"""What reading a damaged artifact raises (numpy, FAISS, SQLite): all one typed error."""


class CatalogIndex(SessionIndex):
    """A built catalog index; see the module docstring.

    Build with :meth:`build`, open with :meth:`load`. Search the whole catalog with
    :meth:`search_catalog`, or use it as the ``tool_index`` of a
    ``ToolSearchToolCallingAdvisor`` (sessions over subsets of the catalog).
    """

    ranker: CatalogRanker

    def __init__(
        self,
        path: Path,
        manifest: Manifest,
        store: ToolStore,
        bm25: MappedPostings | None,
        vector: VectorArtifact | None,
        embedder: Embedder | None,
        hybrid: FusionParams,
    ) -> None:
        self.path = path
        self.manifest = manifest
        self.kind: str = manifest.kind
        self.hybrid = hybrid
        self._store = store
        self._embedder = embedder
        self._embedder_factory: Callable[[], Embedder] | None = None
        self._embedder_lock = threading.Lock()
        super().__init__(
            CatalogRanker(
                manifest.kind,
                store,
                postings=bm25,
                vectors=vector,
                embedder=self._query_embedder,
                vector_params=VectorParams.from_json(manifest.settings.get("vector")),
                fusion=hybrid,
            )
        )

    # -- build and load -----------------------------------------------------------------

    @classmethod
    def build(
        cls,
        sources: Iterable[str | os.PathLike[str] | ToolDefinition] | str | os.PathLike[str],
        **options: Any,
    ) -> CatalogIndex:
        """Build an index of ``sources`` and return it loaded; the keywords are
        :func:`toolsearch.catalog.build.build_index`'s (``out``, ``kind``, ``embedder``,
        ``source_kind``, ``progress``, ``bm25``, ``vector``, ``hybrid``,
        ``reuse_embeddings``, ``command``, ``workers``)."""
        target, model = build_index(sources, **options)
        return cls.load(target, embedder=model)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        embedder: Embedder | str | None = None,
        verify: bool | None = None,
    ) -> CatalogIndex:
        """Open a built index (memory-mapped; nothing is re-indexed).

        Args:
            path: The index folder.
            embedder: For vector/hybrid indexes: the query embedder. Omitted, the one named
                in the manifest is created. Another embedder than the one that built the
                index raises :class:`ManifestMismatchError`.
            verify: Check every artifact's sha256 (``True``), only sizes (``False``), or
                the sha256 when the artifacts are small (``None``, the default: see
                :mod:`toolsearch.catalog.manifest`). The manifest's own checksum and the
                sizes are always checked.

        Raises:
            IndexNotFoundError, ManifestMismatchError, IndexCorruptedError.
        """
        folder = Path(path)
        try:
            manifest = read_manifest(folder)
        except IndexNotFoundError:
            # a build killed between its two renames leaves the previous index aside
            if not recover_interrupted_swap(folder):
                raise
            manifest = read_manifest(folder)
        model: Embedder | None = None
        if manifest.kind != "bm25" and embedder is not None:
            model = resolve_embedder(embedder)
            if (
                model.name != manifest.embedder_name
                or int(model.dimension) != manifest.embedder_dimension
            ):
                raise ManifestMismatchError(
                    str(folder),
                    f"built with embedder {manifest.embedder_name!r} "
                    f"({manifest.embedder_dimension}-d), asked to search with "
                    f"{model.name!r} ({model.dimension}-d); load it without an embedder, "
                    f"or rebuild it for this one: toolsearch index build "
                    f"{' '.join(manifest.sources) or 'SOURCE...'} --kind {manifest.kind} "
                    f"--out {folder} --embedder {embedder_option(model) or 'NAME'}",
                )
        verify_files(folder, manifest, checksums=verify)
        bm25_params, vector_params, fusion_params = _settings_of(folder, manifest)
        try:
            store = ToolStore(folder)
            bm25 = MappedPostings(folder, bm25_params) if manifest.kind != "vector" else None
            vector = None
            if manifest.kind != "bm25":
                vector_settings = manifest.settings.get("vector") or {}
                vector = VectorArtifact(
                    folder, vector_params, str(vector_settings.get("index", "flat"))
                )
        except _UNREADABLE as exc:
            raise IndexCorruptedError(
                str(folder),
                f"an artifact cannot be read ({exc}); rebuild with: "
                f"{rebuild_command(folder, manifest)}",
            ) from exc
        factory: Callable[[], Embedder] | None = None
        if manifest.kind != "bm25" and model is None:
            name = manifest.embedder_name or ""
            try:
                # created on first use (loads stay fast), and only from local models: a
                # manifest never chooses weights to download
                factory = embedder_factory(name, local_only=True)
            except ValueError as exc:
                raise ManifestMismatchError(
                    str(folder),
                    f"built with embedder {name!r}, which cannot be recreated from a local "
                    f"model ({exc}); "
                    "pass the same embedder (CatalogIndex.load(path, embedder=...)), or "
                    "rebuild it with a named one: toolsearch index build "
                    f"{' '.join(manifest.sources) or 'SOURCE...'} --kind {manifest.kind} "
                    f"--out {folder} --embedder static",
                ) from exc
        index = cls(
            folder,
            manifest,
            store,
            bm25,
            vector,
            model,
            fusion_params,
        )
        index._embedder_factory = factory
        return index

    @property
    def embedder(self) -> Embedder | None:
        """The query embedder (vector and hybrid indexes); the one named in the manifest is
        created on first use when ``load`` was not given one."""
        if self._embedder is None and self._embedder_factory is not None:
            with self._embedder_lock:
                if self._embedder is None:
                    self._embedder = self._embedder_factory()
                    if self._embedder.name != self.manifest.embedder_name:
                        raise ManifestMismatchError(
                            str(self.path),
                            f"built with embedder {self.manifest.embedder_name!r}, "
                            f"recreated {self._embedder.name!r}; rebuild with: "
                            f"{rebuild_command(self.path, self.manifest)}",
                        )
        return self._embedder

    def close(self) -> None:
        self._store.close()

    def __len__(self) -> int:
        return len(self._store)

    def __repr__(self) -> str:
        return f"CatalogIndex({str(self.path)!r}, kind={self.kind}, tools={len(self)})"

    # -- the catalog as a whole -----------------------------------------------------------

    def tool(self, name: str) -> ToolDefinition | None:
        """The catalog's definition of ``name`` (exact, then case-insensitive)."""
        found = self._store.find_name(name)
        return None if found is None else self._store.definition(found)

    def tools(self) -> Iterator[ToolDefinition]:
        """Every tool of the catalog, in catalog order (streamed from the store)."""
        return iter(self._store.iter_definitions())

    def _query_embedder(self) -> Embedder:
        embedder = self.embedder
        assert embedder is not None, "a bm25 catalog has no embedder"
        return embedder

    def search(self, request: ToolSearchRequest) -> ToolSearchResponse:
        with self._reading():
            return super().search(request)

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        with self._reading():
            super().index_tools(session_id, tools)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Failures of the artifacts' content (a damaged byte in a large index that was not
        checksummed at load) as :class:`IndexCorruptedError`, with the rebuild command."""
        try:
            yield
        except (IndexError, sqlite3.DatabaseError, OSError, ValueError) as exc:
            _log.error("catalog index %s: an artifact is damaged (%s)", self.path, exc)
            raise IndexCorruptedError(
                str(self.path),
                f"an artifact does not hold what its manifest says ({type(exc).__name__}: "
                f"{exc}); check it with: toolsearch index info {self.path} --verify; "
                f"rebuild with: {rebuild_command(self.path, self.manifest)}",
            ) from exc

    def search_catalog(
        self, query: str, max_results: int | None = 10, *, category: str | None = None
    ) -> ToolSearchResponse:
        """Search the whole catalog (what ``toolsearch index search`` runs)."""
        with self._reading():
            return self._search_catalog(query, max_results, category)

    def _search_catalog(
        self, query: str, max_results: int | None, category: str | None
    ) -> ToolSearchResponse:
        import numpy as np

        started = time.perf_counter()
        given = clean_query(query)
        text = given[:MAX_QUERY_LENGTH]
        if not text.strip():
            return self._response([], 0, given, started)
        limit = max(1, int(max_results)) if max_results is not None else 10
        allowed: list[int] | None = None
        exact = self._store.find_name(text)
        if category is not None:
            allowed = self._store.ids_in_category(category)
            if not allowed:
                return self._response([], 0, given, started)
            if exact is not None:  # allowed ids are increasing
                at = int(np.searchsorted(allowed, exact))
                exact = exact if at < len(allowed) and allowed[at] == exact else None
        ranking = self.ranker.whole().rank(text, limit + 1, allowed)
        hits = order_hits(ranking, exact, set(), limit)
        total = ranking.total
        if exact is not None and all(doc != exact for doc, _ in ranking.hits):
            total += 1
        info = self._store.summaries(doc for doc, _ in hits)
        references = [ToolReference(info[doc][0], info[doc][1], score) for doc, score in hits]
        return self._response(references, max(total, len(references)), given, started)


def _settings_of(folder: Path, manifest: Manifest) -> tuple[Bm25Params, VectorParams, FusionParams]:
    """The index's search settings from its manifest; a value of the wrong type or out of
    range (a manifest edited and checksummed again) is an :class:`IndexCorruptedError`
    naming the setting, not a bare ``TypeError`` (issue 47)."""
    parsed: list[Any] = []
    for section, parse in (
        ("bm25", Bm25Params.from_json),
        ("vector", VectorParams.from_json),
        ("hybrid", FusionParams.from_json),
    ):
        try:
            parsed.append(parse(manifest.settings.get(section)))
        except (TypeError, ValueError, OverflowError) as exc:
            raise IndexCorruptedError(
                str(folder),
                f"settings.{section} in its manifest is invalid ({exc}); rebuild with: "
                f"{rebuild_command(folder, manifest)}",
            ) from exc
    return parsed[0], parsed[1], parsed[2]
