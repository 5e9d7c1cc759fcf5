"""The ranker behind :class:`~toolsearch.indexes.milvus.MilvusToolIndex`: writes by
fingerprint, searches with the session as a filter, the three modes, a whole-collection
search. See :mod:`toolsearch.indexes.milvus` for the design."""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args

from toolsearch.errors import IndexUnavailableError
from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.milvus.client import (
    MilvusConnection,
    RetryPolicy,
    in_filter,
    pymilvus,
    string_literal,
)
from toolsearch.indexes.milvus.schema import (
    CollectionSettings,
    bm25_query,
    create_collection,
    tool_row,
)
from toolsearch.indexes.milvus.writes import (
    Progress,
    RefusedTool,
    UpsertReport,
    embed_rows,
    not_loaded,
    refusal,
    server_down,
)
from toolsearch.indexes.params import Bm25Params, FusionParams
from toolsearch.indexes.ranker import Ranking, SessionTools
from toolsearch.indexes.session import MAX_QUERY_LENGTH, clean_query
from toolsearch.indexes.text import prepare_tool
from toolsearch.search.types import (
    SearchMetadata,
    ToolReference,
    ToolSearchResponse,
)
from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "EXACT_TOTAL_UP_TO",
    "MAX_TOP_K",
    "MilvusRanker",
    "MilvusSession",
    "Mode",
    "RefusedTool",
    "UpsertReport",
]

Mode = Literal["bm25", "vector", "hybrid"]

MAX_TOP_K = 16_384
"""The most hits Milvus returns for one search."""

EXACT_TOTAL_UP_TO = 1_024
"""Sessions (or category subsets) of at most this many tools are searched in full, so a
response's ``total_matches`` is exact; larger ones ask for the hits needed only."""

ID_BATCH = 512
"""Fingerprints per existence query and per delete."""

WRITE_BATCH = 256
"""Rows per upsert."""

T = TypeVar("T")

_COLLECTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")
_LOG = logging.getLogger(__name__)


class MilvusRanker:
    """Ranks a session's tools inside a Milvus collection; see the module docstring.

    Args:
        uri: ``"./tools.db"`` (embedded Milvus Lite), ``"http://host:port"`` (a Lite server
            or a cluster), or any URI ``pymilvus.MilvusClient`` takes.
        collection: The collection of this catalog (created on first use).
        mode: ``"bm25"``, ``"vector"`` or ``"hybrid"``.
        embedder: The embedder of the collection's vectors. ``None``: the one the collection
            records; for a new collection, none in ``bm25`` mode (a BM25-only collection)
            and the packaged MiniLM otherwise.
        catalog: The ``catalog`` field of the rows this ranker writes.
        token: A cluster's token (``"user:password"`` or an API key).
        db_name: The database (``""``: the server's default).
        bm25: BM25 parameters of a new collection (``k1``, ``b``, field weights; an
            existing collection keeps its own; ``min_score`` is not supported).
        fusion: Hybrid fusion: ``"rrf"`` (equal weights) with ``rrf_k``, or ``"convex"``
            (the engine's weighted ranker); a weight of 0 skips that side; ``candidates``
            hits per side.
        retry: The retry policy for transient failures.
        timeout: Seconds per server call.
        client: A ``MilvusClient`` to use instead of connecting (tests).
    """

    def __init__(
        self,
        uri: str = "./tools.db",
        *,
        collection: str = "toolsearch_tools",
        mode: Mode = "hybrid",
        embedder: Embedder | None = None,
        catalog: str = "default",
        token: str = "",
        db_name: str = "",
        bm25: Bm25Params | None = None,
        fusion: FusionParams | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 10.0,
        client: Any = None,
    ) -> None:
        if mode not in get_args(Mode):
            raise ValueError(f"mode must be one of {', '.join(get_args(Mode))}, not {mode!r}")
        if not _COLLECTION_NAME.fullmatch(collection):
            raise ValueError(
                f"invalid Milvus collection name {collection!r}: letters, digits and "
                "underscores, not starting with a digit, at most 255 characters"
            )
        if bm25 is not None and bm25.min_score:
            raise ValueError("MilvusRanker scores raw BM25: min_score is not supported")
        self.fusion = fusion or FusionParams()
        if mode == "hybrid":
            _check_fusion(self.fusion)
        self.connection = MilvusConnection(
            uri, token=token, db_name=db_name, timeout=timeout, retry=retry, client=client
        )
        self.collection = collection
        self.mode: Mode = mode
        self.catalog = catalog
        self._embedder = embedder
        self._bm25 = bm25
        self._settings: CollectionSettings | None = None
        self._lock = threading.RLock()
        self.rows_written = 0
        """Rows this ranker upserted (what tests of idempotence count)."""
        self.write_calls = 0
        """Upsert calls this ranker made."""

    # -- the Ranker protocol -----------------------------------------------------------

    @property
    def search_type(self) -> str:
        return f"milvus-{self.mode}"

    def prepare(self, tools: SessionTools) -> MilvusSession:
        """The session ranker of ``tools``, after writing the ones the collection lacks (if
        the server is down, the session's first search writes them)."""
        session = MilvusSession(self, tools)
        try:
            session.ensure_written()
        except IndexUnavailableError as exc:  # the first search writes them
            _LOG.warning("Milvus is unavailable; tools are written on first search: %s", exc)
        return session

    # -- writing ------------------------------------------------------------------------

    def upsert_tools(
        self,
        tools: Iterable[ToolDefinition],
        *,
        batch_size: int = WRITE_BATCH,
        progress: Progress | None = None,
        total: int | None = None,
    ) -> UpsertReport:
        """Write the tools whose fingerprints the collection lacks, in batches (each batch:
        one existence query, embedding of the missing tools only, one upsert)."""
        written = present = 0
        refused: list[RefusedTool] = []
        batch: list[ToolDefinition] = []
        done = 0

        def flush() -> None:
            nonlocal written, present, done
            new, lost = self._write_batch(batch)
            written += new
            refused.extend(lost)
            present += len(batch) - new - len(lost)
            done += len(batch)
            batch.clear()
            if progress is not None:
                progress(done, total if total is not None else done)

        for tool in tools:
            batch.append(tool)
            if len(batch) >= max(1, batch_size):
                flush()
        if batch:
            flush()
        return UpsertReport(written, present, tuple(refused))

    def delete_tools(self, fingerprints: Iterable[str]) -> int:
        """Delete rows by fingerprint (a catalog's maintenance: sessions that still list a
        deleted tool no longer find it). Returns how many fingerprints were asked for."""
        ids = list(dict.fromkeys(fingerprints))
        self.settings()
        for start in range(0, len(ids), ID_BATCH):
            chunk = ids[start : start + ID_BATCH]
            self.connection.call("delete tools", functools.partial(self._delete, chunk))
        return len(ids)

    def existing(self, fingerprints: Sequence[str]) -> set[str]:
        """Which of ``fingerprints`` the collection holds."""
        self.settings()
        found: set[str] = set()
        for start in range(0, len(fingerprints), ID_BATCH):
            chunk = list(fingerprints[start : start + ID_BATCH])
            rows = self.call_loaded("look up tools", functools.partial(self._get, chunk))
            found.update(str(row["id"]) for row in rows)
        return found

    def _write_batch(self, tools: Sequence[ToolDefinition]) -> tuple[int, list[RefusedTool]]:
        """Write the batch's missing tools: ``(rows written, tools refused)``."""
        unique = list({t.fingerprint: t for t in tools}.values())
        if not unique:
            return 0, []
        have = self.existing([t.fingerprint for t in unique])
        missing = [t for t in unique if t.fingerprint not in have]
        if not missing:
            return 0, []
        settings = self.settings()
        prepared = [prepare_tool(t) for t in missing]
        vectors: Sequence[Any] = [None] * len(missing)
        if settings.has_vectors:
            vectors = embed_rows(self.embedder, missing, prepared)
        rows = [
            tool_row(tool, text, vector, catalog=self.catalog, params=settings.bm25)
            for tool, text, vector in zip(missing, prepared, vectors, strict=True)
        ]
        written = 0
        refused: list[RefusedTool] = []
        for start in range(0, len(rows), WRITE_BATCH):
            chunk = rows[start : start + WRITE_BATCH]
            try:
                self._write_rows(chunk)
                written += len(chunk)
            except IndexUnavailableError as exc:
                if server_down(exc):
                    raise
                # a row the server refuses (too large, unencodable): try each alone, so one
                # bad tool costs only itself
                for row, tool in zip(chunk, missing[start : start + WRITE_BATCH], strict=True):
                    try:
                        self._write_rows([row])
                        written += 1
                    except IndexUnavailableError as alone:
                        if server_down(alone):
                            raise
                        refused.append(refusal(tool, alone))
        return written, refused

    def _write_rows(self, rows: list[dict[str, Any]]) -> None:
        self.connection.call("write tools", functools.partial(self._upsert, rows))
        with self._lock:
            self.write_calls += 1
            self.rows_written += len(rows)

    def call_loaded(self, what: str, action: Callable[[Any], T]) -> T:
        """``connection.call(what, action)`` for a read, which needs the collection loaded: a
        collection the server released (it restarted, or someone released it) is loaded
        again and the read retried once, so the index recovers by itself."""
        try:
            return self.connection.call(what, action)
        except IndexUnavailableError as exc:
            if not not_loaded(exc):
                raise
            _LOG.warning(
                "Milvus collection %r was released (the server restarted?); loading it again",
                self.collection,
            )
        self.connection.call("load the collection", lambda c: c.load_collection(self.collection))
        return self.connection.call(what, action)

    def _get(self, ids: list[str], client: Any) -> Any:
        return client.get(self.collection, ids=ids, output_fields=["id"])

    def _upsert(self, rows: list[dict[str, Any]], client: Any) -> Any:
        return client.upsert(self.collection, data=rows)

    def _delete(self, ids: list[str], client: Any) -> Any:
        return client.delete(self.collection, ids=ids)

    # -- the collection ---------------------------------------------------------------

    def settings(self) -> CollectionSettings:
        """The collection's settings, creating the collection on first use (and checking
        that an existing one fits this ranker's mode and embedder)."""
        with self._lock:
            if self._settings is None:
                self._settings = self.connection.call("open the collection", self._open)
            return self._settings

    def _open(self, client: Any) -> CollectionSettings:
        if not client.has_collection(self.collection):
            wanted = self._new_settings()
            try:
                create_collection(client, self.collection, wanted)
                return wanted
            except Exception:
                if not client.has_collection(self.collection):  # not a lost race
                    raise
        described = client.describe_collection(self.collection)
        settings = CollectionSettings.from_properties(described.get("properties"), self.collection)
        self._check(settings)
        client.load_collection(self.collection)
        return settings

    def _new_settings(self) -> CollectionSettings:
        bm25 = self._bm25 or Bm25Params()
        if self._embedder is None and self.mode == "bm25":
            return CollectionSettings(None, None, bm25)
        model = self.embedder_for(None)
        return CollectionSettings(model.name, model.dimension, bm25)

    def _check(self, settings: CollectionSettings) -> None:
        if self.mode != "bm25" and not settings.has_vectors:
            raise ValueError(
                f"Milvus collection {self.collection!r} holds no vectors (it was created for "
                f"BM25 only): mode {self.mode!r} cannot search it"
            )
        if self._bm25 is not None and self._bm25 != settings.bm25:
            raise ValueError(
                f"Milvus collection {self.collection!r} was written with BM25 parameters "
                f"{settings.bm25.to_json()}, not {self._bm25.to_json()}"
            )
        model = self._embedder
        if (
            model is not None
            and settings.has_vectors
            and (model.name, model.dimension) != (settings.embedder, settings.dimension)
        ):
            raise ValueError(
                f"Milvus collection {self.collection!r} holds vectors of "
                f"{settings.embedder} ({settings.dimension}-d), not of {model.name} "
                f"({model.dimension}-d)"
            )

    @property
    def embedder(self) -> Embedder:
        """The collection's embedder (resolved from its recorded name when none was given)."""
        return self.embedder_for(self.settings())

    def embedder_for(self, settings: CollectionSettings | None) -> Embedder:
        with self._lock:
            if self._embedder is None:
                if settings is not None and settings.embedder:
                    from toolsearch.indexes.embedders.specs import embedder_factory

                    self._embedder = embedder_factory(settings.embedder, local_only=True)()
                else:
                    from toolsearch.indexes.vector import _default_embedder

                    self._embedder = _default_embedder()
            return self._embedder

    def exists(self) -> bool:
        """Whether the collection exists (nothing is created)."""
        return bool(
            self.connection.call(
                "look up the collection", lambda c: c.has_collection(self.collection)
            )
        )

    def count(self) -> int:
        """Rows in the collection."""
        self.settings()
        stats = self.connection.call(
            "count tools", lambda c: c.get_collection_stats(self.collection)
        )
        return int(stats.get("row_count", 0))

    def drop(self) -> None:
        """Drop the collection (everything every process wrote to it)."""
        self.connection.call("drop the collection", lambda c: c.drop_collection(self.collection))
        with self._lock:
            self._settings = None

    def close(self) -> None:
        self.connection.close()

    # -- searching ----------------------------------------------------------------------

    def search_ids(
        self, query: str, limit: int, expression: str | None, candidates: int | None
    ) -> tuple[list[tuple[str, float]], int]:
        """The best ``limit`` rows for ``query`` among those ``expression`` selects
        (``candidates`` of them, when known): ``(id, score)`` best first, and the total."""
        hits, total = self._search(query, limit, expression, candidates, ["id"])
        return [(str(hit["id"]), score) for hit, score in hits], total

    def _search(
        self,
        query: str,
        limit: int,
        expression: str | None,
        candidates: int | None,
        fields: list[str],
    ) -> tuple[list[tuple[dict[str, Any], float]], int]:
        settings = self.settings()
        cap = MAX_TOP_K if candidates is None else max(1, min(candidates, MAX_TOP_K))
        text = bm25_query(query) if self.mode != "vector" else ""
        requests: list[tuple[str, Any, str]] = []  # (field, data, metric)
        if self.mode in ("bm25", "hybrid") and text and self.fusion_weight("bm25"):
            requests.append(("sparse", text, "BM25"))
        if self.mode in ("vector", "hybrid") and self.fusion_weight("vector"):
            vector = self.embedder_for(settings).embed_query(query)
            requests.append(("vector", [float(x) for x in vector], "COSINE"))
        if not requests:
            return [], 0
        if self.mode == "hybrid":  # each side as deep as the in-process hybrid's
            side = min(max(limit, self.fusion.candidates), cap)
            found = self.call_loaded(
                "search", lambda c: self._hybrid(c, requests, side, expression, fields)
            )
        else:
            anns, data, metric = requests[0]
            depth = min(max(1, limit), cap)
            if self.mode == "bm25" and candidates is not None and candidates <= EXACT_TOTAL_UP_TO:
                depth = cap  # every matching tool, so the total is exact
            found = self.call_loaded(
                "search",
                lambda c: c.search(
                    self.collection,
                    data=[data],
                    anns_field=anns,
                    limit=depth,
                    filter=expression or "",
                    output_fields=fields,
                    search_params={"metric_type": metric},
                ),
            )
        hits = [(_entity(hit), abs(float(hit["distance"]))) for hit in (found[0] if found else [])]
        if self.mode == "vector" and candidates is not None:
            return hits, candidates  # every candidate has a cosine
        return hits, len(hits)

    def _hybrid(
        self,
        client: Any,
        requests: list[tuple[str, Any, str]],
        side: int,
        expression: str | None,
        fields: list[str],
    ) -> Any:
        module = pymilvus()
        searches = [
            module.AnnSearchRequest(
                data=[data],
                anns_field=anns,
                param={"metric_type": metric},
                limit=side,
                expr=expression or None,
            )
            for anns, data, metric in requests
        ]
        if self.fusion.fusion == "rrf":
            reranker: Any = module.RRFRanker(int(self.fusion.rrf_k))
        else:
            weights = [
                self.fusion_weight("bm25" if a == "sparse" else "vector") for a, *_ in requests
            ]
            reranker = module.WeightedRanker(*weights)
        return client.hybrid_search(
            self.collection,
            searches,
            reranker,
            limit=min(side * len(searches), MAX_TOP_K),
            output_fields=fields,
        )

    def fusion_weight(self, side: str) -> float:
        if self.mode != "hybrid":
            return 1.0
        return self.fusion.bm25_weight if side == "bm25" else self.fusion.vector_weight

    def search_catalog(
        self,
        query: str,
        max_results: int | None = 10,
        *,
        category: str | None = None,
        catalog: str | None = None,
    ) -> ToolSearchResponse:
        """Search the whole collection (or one ``catalog`` of it, or one category) without a
        session: the tool whose name is the query first (case-sensitive), then the ranking."""
        started = time.perf_counter()
        given = clean_query(query)
        text = given[:MAX_QUERY_LENGTH]
        if not text.strip():
            return self._response([], 0, given, started)
        limit = max(1, int(max_results)) if max_results is not None else 10
        clauses = []
        if catalog is not None:
            clauses.append(f"catalog == {string_literal(catalog)}")
        if category is not None:
            clauses.append(f"category == {string_literal(category)}")
        scope = " and ".join(clauses) or None
        exact_filter = " and ".join([*clauses, f"name == {string_literal(text.strip())}"])
        exact = self.call_loaded(
            "search",
            lambda c: c.query(
                self.collection, filter=exact_filter, output_fields=["name", "summary"], limit=1
            ),
        )
        hits, total = self._search(text, limit + 1, scope, None, ["name", "summary"])
        references: list[ToolReference] = []
        if exact:
            best = max((score for _, score in hits), default=None)
            references.append(ToolReference(exact[0]["name"], exact[0]["summary"], best))
        for entity, score in hits:
            if exact and entity.get("name") == exact[0]["name"]:
                continue
            references.append(ToolReference(entity["name"], entity.get("summary", ""), score))
        if exact and all(e.get("name") != exact[0]["name"] for e, _ in hits):
            total += 1
        references = references[:limit]
        return self._response(references, max(total, len(references)), given, started)

    def _response(
        self, references: list[ToolReference], total: int, query: str, started: float
    ) -> ToolSearchResponse:
        return ToolSearchResponse(
            tuple(references),
            total,
            SearchMetadata(self.search_type, query, (time.perf_counter() - started) * 1000.0),
        )

    def __repr__(self) -> str:
        return (
            f"MilvusRanker({self.connection.uri!r}, collection={self.collection!r}, "
            f"mode={self.mode!r})"
        )


@dataclass(eq=False)
class MilvusSession:
    """One tool set's view of the collection: its fingerprints, searched as a filter."""

    ranker: MilvusRanker
    tools: SessionTools
    positions: dict[str, int] = field(init=False)
    written: bool = field(default=False, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.positions = {fp: i for i, fp in enumerate(self.tools.fingerprints)}

    def ensure_written(self) -> None:
        """Write the tools the collection lacks, once (retried by later searches if the
        server was down)."""
        if self.written:
            return
        with self._lock:
            if not self.written:
                self.ranker.upsert_tools(self.tools.tools)
                self.written = True

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        if not len(self.tools):
            return Ranking()
        self.ensure_written()
        fingerprints = self.tools.fingerprints
        ids = fingerprints if allowed is None else [fingerprints[i] for i in allowed]
        if not ids:
            return Ranking()
        found, total = self.ranker.search_ids(query, limit, in_filter("id", ids), len(ids))
        hits = [(self.positions[i], s) for i, s in found if i in self.positions]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return Ranking.of(hits[:limit], max(total, len(hits)))


def _check_fusion(fusion: FusionParams) -> None:
    if fusion.fusion == "rrf":
        if (
            fusion.bm25_weight
            and fusion.vector_weight
            and fusion.bm25_weight != fusion.vector_weight
        ):
            raise ValueError("Milvus's RRF ranker has no weights: use equal weights or 'convex'")
        if fusion.rrf_k != int(fusion.rrf_k) or not 0 < fusion.rrf_k < MAX_TOP_K:
            raise ValueError("Milvus's RRF ranker takes a whole rrf_k between 1 and 16383")


def _entity(hit: Any) -> dict[str, Any]:
    entity = dict(hit.get("entity") or {})
    entity.setdefault("id", hit.get("id"))
    return entity
