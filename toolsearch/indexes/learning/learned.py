"""``LearnedToolIndex``: an index's ranking fused with the requests that led to each tool.

Learning from use, without a training step or a new dependency: a
:class:`~toolsearch.indexes.learning.memory.UsageMemory` holds, per tool set and tool, the requests
that were followed by a successful call of that tool. This wrapper answers with the inner
index's ranking fused (reciprocal rank, ``Σ weight / (rrf_k + rank)`` as in the hybrid
index, each learned hit's share scaled by how clearly it qualifies: :func:`fuse_learned`)
with two rankings of what was learned:

* a **nearest-neighbour vote**: the query's embedding against the stored requests'
  embeddings (extra vector views of each tool); over the ``vote_k`` best-scoring requests
  whose cosine is at least ``vote_min_cosine`` (a weak neighbour must not lift a tool),
  tools are ordered by the sum of their requests' decay-weighted cosines (``vote_sum``;
  else by their best) and scored by their best;
* a **BM25 field** over each tool's learned requests (the pure functions of
  :mod:`toolsearch.indexes.lexical.bm25_scoring`, one document per tool, term frequencies
  weighted by each request's decayed weight), hits below ``bm25_min_score`` left out.

Why fuse rather than replace: the inner index still finds tools nobody has used yet and
requests nobody has made; what use taught only moves tools it has evidence for. Why scale
by confidence: by rank alone, a request that only just passes its floor pulls as hard as
a near-duplicate of the query, and a catalog's sibling tools (``get user`` beside
``delete user``) sit just above the floor; a decayed request pulls less too. Cold, with no
learned request for the tool set (or none the query is near), the answer is exactly the
inner index's ranking.

The vote embeds with the inner index's embedder when it has one (a vector or hybrid
index: stored requests and tools then share one space, and a repeated query costs a cache
lookup), else with ``embedder`` (a spec or an object; the packaged MiniLM by default,
loaded on the first warm search). What was learned is read from the memory at most every
``refresh_seconds`` and whenever it changed; request embeddings are cached by text.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Unpack

from cachetools import LRUCache

from toolsearch.indexes.embedders import Embedder
from toolsearch.indexes.learning.fusion import (
    LearnedOptions,
    LearnedParams,
    fuse_learned,
    guard_top,
)
from toolsearch.indexes.learning.memory import (
    LearnedRequest,
    UsageMemory,
    UsageMemoryError,
    catalog_digest,
)
from toolsearch.indexes.learning.model import hash_terms
from toolsearch.indexes.lexical import bm25_scoring
from toolsearch.indexes.params import Bm25Params
from toolsearch.indexes.ranker import Hit, Ranker, Ranking, SessionRanker, SessionTools
from toolsearch.indexes.session import SessionIndex, as_ranker

__all__ = [
    "LearnedOptions",
    "LearnedParams",
    "LearnedRanker",
    "LearnedToolIndex",
    "fuse_learned",
    "guard_top",
    "inner_embedder",
]

_log = logging.getLogger(__name__)

REQUEST_EMBEDDINGS_CACHE_SIZE = 100_000
"""Learned-request embeddings a ranker keeps (least recently used go first)."""


def _numpy() -> Any:
    import numpy

    return numpy


def inner_embedder(part: Any) -> Embedder | None:
    """The embedder an index or ranker searches with (a vector index's, a hybrid's vector
    side's, a reranker's first stage's...), or ``None`` when it has none."""
    queue, seen = [part], set()
    while queue:
        item = queue.pop(0)
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        found = getattr(item, "embedder", None)
        if isinstance(found, Embedder):
            return found
        queue.extend(
            getattr(item, name, None)
            for name in ("ranker", "vector", "second", "first_stage", "first", "inner")
        )
    return None


@dataclass
class _Part:
    """One tool's share of a learned view (reused until that tool's learning changes)."""

    weights: Any  # per request: its decayed weight
    sessions: frozenset[str]
    vectors: Any  # per voting request: its embedding, or None
    vote_weights: Any
    document: dict[str, float]


@dataclass
class _View:
    """What one tool set learned, over one session snapshot's positions."""

    version: int
    built: float
    positions: Any  # per request: its tool's position (int64)
    weights: Any  # per request: its decayed weight (float64)
    vectors: Any  # per request: its embedding (float32 rows), or None without a vote
    postings: bm25_scoring.MemoryPostings | None
    doc_positions: Any  # per BM25 document (a tool with requests): its position
    scope: bm25_scoring.Scope | None
    vote_positions: Any = None  # per voting request (one with a vector): its position
    vote_weights: Any = None
    support: dict[int, int] = dataclasses.field(default_factory=dict)
    serve: bool = True
    parts: dict[int, _Part] = dataclasses.field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not len(self.positions)


class _LearnedSession:
    """The inner ranker prepared for one tool set, and that tool set's learned view."""

    def __init__(
        self, owner: LearnedRanker, inner: SessionRanker, tools: SessionTools, digest: str
    ) -> None:
        self.owner = owner
        self.inner = inner
        self.tools = tools
        self.digest = digest
        self._view: _View | None = None
        self._lock = threading.Lock()
        self._adopted = False

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        view = self.view()
        if view is None or view.empty:  # cold: exactly the inner index's answer
            return self.inner.rank(query, limit, allowed)
        params = self.owner.params
        depth = max(limit, params.candidates)
        first = self.inner.rank(query, depth, allowed)
        learned: list[tuple[Sequence[Hit], float, float]] = []
        for ranking, weight, floor in (
            (self.owner.vote, params.vote_weight, params.vote_min_cosine),
            (self.owner.bm25, params.bm25_weight, params.bm25_min_score),
        ):
            hits = ranking(view, query, depth, allowed) if weight > 0 else []
            if hits:
                learned.append((hits, weight, floor))
        if not learned:  # nothing learned is near this query
            return Ranking.of(first.hits[:limit], first.total)
        fused = guard_top(
            fuse_learned(first.hits, learned, params),
            first.hits,
            view.support,
            params.outrank_sessions,
        )
        if params.shadow or not view.serve:
            self.owner.shadowed(query, first.hits[:limit], fused[:limit], self.tools)
            return Ranking.of(first.hits[:limit], first.total)
        return Ranking.of(fused[:limit], max(first.total, len(fused)))

    def view(self) -> _View | None:
        """The learned view, rebuilt when the memory changed or ``refresh_seconds`` passed;
        ``None`` when the tool set learned nothing (or the memory cannot be read)."""
        memory, params = self.owner.memory, self.owner.params
        try:
            version = memory.version(self.digest)
        except UsageMemoryError as error:
            self.owner.warn_once(error)
            return None
        if version == 0:
            if self._adopted:
                return None
            self._adopted = True  # a changed tool set: carry over its unchanged tools' learning
            if not memory.adopt(self.tools.tools):
                return None
            try:
                version = memory.version(self.digest)
            except UsageMemoryError:
                return None
            if version == 0:
                return None
        now = memory.clock()
        with self._lock:
            current = self._view
            fresh = current is not None and now - current.built < params.refresh_seconds
            if current is not None and current.version == version and fresh:
                return current
            try:
                version, changed = memory.changes(
                    self.digest, current.version if fresh and current else 0
                )
                if changed is None:  # everything: a full rebuild (and fresh weights)
                    requests = memory.requests(self.digest)
                    view = self.owner.build(self.tools, requests, version, now)
                else:  # a few tools changed: rebuild only their parts
                    requests = tuple(
                        r for name in changed for r in memory.requests(self.digest, name)
                    )
                    view = self.owner.build(
                        self.tools,
                        requests,
                        version,
                        current.built if current else now,
                        current,
                        sorted(changed),
                    )
                view.serve = memory.serving(self.digest)
            except UsageMemoryError as error:
                self.owner.warn_once(error)
                return None
            self._view = view
            return view


class LearnedRanker:
    """The inner ranker fused with a usage memory's vote and BM25 field; see
    :class:`LearnedToolIndex` for the arguments."""

    def __init__(
        self,
        inner: Ranker,
        memory: UsageMemory,
        embedder: Embedder | str | None = None,
        params: LearnedParams | None = None,
    ) -> None:
        self.inner = inner
        self.memory = memory
        self.params = params or LearnedParams()
        self._embedder_source = embedder
        self._embedder: Embedder | None = embedder if isinstance(embedder, Embedder) else None
        self._vectors: LRUCache[tuple[str, str], Any] = LRUCache(REQUEST_EMBEDDINGS_CACHE_SIZE)
        self._terms: LRUCache[str, Counter[str]] = LRUCache(REQUEST_EMBEDDINGS_CACHE_SIZE)
        self._lock = threading.Lock()
        self._warned = False
        self.shadow_listener: Callable[[str, list[str], list[str]], None] | None = None
        """Called in shadow mode with the query, the names served and the names the
        learned ranking would have served."""
        if not memory.params.store_text and self.params.vote_weight > 0:
            memory.attach_embedder(self._embedder_name(), self._embed_texts)
        if self.params.bm25_weight > 0:
            from toolsearch.indexes.lexical.analysis import analyze

            analyze("probe")  # fail now, naming the extra, if tantivy is missing

    @property
    def search_type(self) -> str:
        return f"{self.inner.search_type}+learned"

    def prepare(self, tools: SessionTools) -> _LearnedSession:
        return _LearnedSession(self, self.inner.prepare(tools), tools, catalog_digest(tools.tools))

    @property
    def embedder(self) -> Embedder:
        """The vote's embedder (a spec or the default is loaded on first use)."""
        with self._lock:
            if self._embedder is None:
                from toolsearch.indexes.specs import resolve_embedder

                source = self._embedder_source
                self._embedder = resolve_embedder(
                    source if isinstance(source, str) else None, default="minilm"
                )
            return self._embedder

    def _embedder_name(self) -> str:
        source = self._embedder_source
        if isinstance(source, Embedder):
            return source.name
        return source or "minilm"

    def _embed_texts(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self._embed(texts)]

    def shadowed(
        self, query: str, served: Sequence[Hit], learned: Sequence[Hit], tools: SessionTools
    ) -> None:
        """Report what the learned ranking would have answered (shadow mode)."""
        names = [tools.tools[p].name for p, _ in served]
        would = [tools.tools[p].name for p, _ in learned]
        _log.debug("shadow: served %s, learned would serve %s", names, would)
        listener = self.shadow_listener
        if listener is not None:
            try:
                listener(query, names, would)
            except Exception:
                _log.warning("shadow listener failed", exc_info=True)

    def warn_once(self, error: Exception) -> None:
        if not self._warned:
            self._warned = True
            # the memory logged it once already (a warning naming the store)
            _log.debug("usage memory unreadable, searching without it: %s", error)

    # -- building a view ---------------------------------------------------------------

    def build(
        self,
        tools: SessionTools,
        requests: Sequence[LearnedRequest],
        version: int,
        now: float,
        base: _View | None = None,
        changed: Sequence[str] | None = None,
    ) -> _View:
        """The learned view of ``requests``. With ``base`` and ``changed`` (tool names),
        an incremental update: only those tools' parts are rebuilt from ``requests`` (which
        then hold only their requests), every other tool's part is reused."""
        by_tool: dict[int, list[LearnedRequest]] = {}
        for request in requests:
            position = tools.by_name.get(request.tool)
            if position is not None and request.weight > 0:
                by_tool.setdefault(position, []).append(request)
        if base is None or changed is None:
            parts: dict[int, _Part] = {}
            texts = [r.text for rs in by_tool.values() for r in rs if r.text]
            if texts and self.params.vote_weight > 0:
                self._embed(texts)  # one batch: the parts then read the cache
        else:
            parts = dict(base.parts)
            for name in changed:
                if name in tools.by_name:
                    parts.pop(tools.by_name[name], None)
        for position, rows in by_tool.items():
            parts[position] = self._part(rows)
        return self._assemble(parts, version, now)

    def _part(self, rows: Sequence[LearnedRequest]) -> _Part:
        """One tool's share of the view: its requests' weights, contributors, voting
        vectors and BM25 document."""
        np = _numpy()
        weights = np.asarray([r.weight for r in rows], dtype=np.float64)
        sessions = frozenset(s for r in rows for s in r.sessions)
        vectors, vote_weights = None, np.zeros(0)
        if self.params.vote_weight > 0:
            vectors, vote_weights = self._vote_rows(rows)
        document = self._document(rows) if self.params.bm25_weight > 0 else {}
        return _Part(weights, sessions, vectors, vote_weights, document)

    def _assemble(self, parts: dict[int, _Part], version: int, now: float) -> _View:
        np = _numpy()
        order = sorted(parts)
        positions = np.asarray(
            [p for p in order for _ in range(len(parts[p].weights))], dtype=np.int64
        )
        weights = np.concatenate([parts[p].weights for p in order]) if order else np.zeros(0)
        voting = [p for p in order if parts[p].vectors is not None]
        vectors = None
        vote_positions, vote_weights = np.zeros(0, dtype=np.int64), np.zeros(0)
        if voting:
            vectors = np.ascontiguousarray(
                np.concatenate([parts[p].vectors for p in voting]), dtype=np.float32
            )
            vote_positions = np.asarray(
                [p for p in voting for _ in range(len(parts[p].vote_weights))], dtype=np.int64
            )
            vote_weights = np.concatenate([parts[p].vote_weights for p in voting])
        postings, doc_positions, scope = None, np.zeros(0, dtype=np.int64), None
        documents = [p for p in order if parts[p].document]
        if documents:
            postings = bm25_scoring.MemoryPostings()
            for position in documents:
                postings.add(parts[position].document)
            doc_positions = np.asarray(documents, dtype=np.int64)
            scope = bm25_scoring.scope_of(postings, np.arange(len(documents)))
        support = {p: len(parts[p].sessions) for p in order}
        return _View(
            version,
            now,
            positions,
            weights,
            vectors,
            postings,
            doc_positions,
            scope,
            vote_positions,
            vote_weights,
            support,
            parts=parts,
        )

    def _vote_rows(self, rows: Sequence[LearnedRequest]) -> tuple[Any, Any]:
        """The voting requests' vectors and weights: a stored request's text is embedded
        (cached), a text-free one votes with its stored vector when it was made by this
        embedder."""
        np = _numpy()
        embedder = self.embedder
        texts = [r.text for r in rows if r.text]
        embedded = iter(self._embed(texts)) if texts else iter(())
        kept, vectors = [], []
        for request in rows:
            if request.text:
                vectors.append(next(embedded))
                kept.append(request.weight)
            elif request.vector is not None and request.embedder == embedder.name:
                vectors.append(np.asarray(request.vector, dtype=np.float32))
                kept.append(request.weight)
        if not kept:
            return None, np.zeros(0)
        return np.stack(vectors).astype(np.float32), np.asarray(kept, dtype=np.float64)

    def _embed(self, texts: list[str]) -> Any:
        np = _numpy()
        embedder = self.embedder
        keys = [(embedder.name, text) for text in texts]
        with self._lock:
            found = {k: self._vectors.get(k) for k in keys}
        missing = list(dict.fromkeys(k[1] for k, v in found.items() if v is None))
        if missing:
            fresh = np.asarray(embedder.embed_documents(missing), dtype=np.float32)
            with self._lock:
                for text, row in zip(missing, fresh, strict=True):
                    found[(embedder.name, text)] = row
                    self._vectors[(embedder.name, text)] = row
        return np.ascontiguousarray(np.stack([found[k] for k in keys]), dtype=np.float32)

    def _document(self, rows: Sequence[LearnedRequest]) -> dict[str, float]:
        """A tool's BM25 document: its requests' terms, each weighted by the request's
        decayed weight and ``1 + ln(support)``."""
        import math

        from toolsearch.indexes.lexical.analysis import analyze

        hashed = not self.memory.params.store_text
        document: dict[str, float] = {}
        for request in rows:
            counts: Counter[str] | None = request.terms
            if counts is None:
                with self._lock:
                    counts = self._terms.get(request.text)
                if counts is None:
                    terms = analyze(request.text)
                    counts = hash_terms(terms) if hashed else Counter(terms)
                    with self._lock:
                        self._terms[request.text] = counts
            scale = request.weight * (1.0 + math.log(max(request.support, 1)))
            for term, count in counts.items():
                document[term] = document.get(term, 0.0) + scale * count
        return document

    # -- the two learned rankings ---------------------------------------------------------

    def vote(self, view: _View, query: str, depth: int, allowed: Sequence[int] | None) -> list[Hit]:
        """Tools by their best decay-weighted cosine among the ``vote_k`` best requests."""
        if view.vectors is None:
            return []
        np, params = _numpy(), self.params
        vector = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        cosines = np.einsum("ij,j->i", view.vectors, vector)
        keep = cosines >= params.vote_min_cosine
        if allowed is not None:
            keep &= np.isin(view.vote_positions, np.asarray(list(allowed), dtype=np.int64))
        picked = np.flatnonzero(keep)
        if not len(picked):
            return []
        scores = cosines[picked] * view.vote_weights[picked]
        best: dict[int, float] = {}
        total: dict[int, float] = {}
        for j in np.argsort(-scores, kind="stable")[: params.vote_k]:
            position = int(view.vote_positions[picked[j]])
            best.setdefault(position, float(scores[j]))
            total[position] = total.get(position, 0.0) + float(scores[j])
        order = total if params.vote_sum else best  # the score stays the best (confidence)
        ranked = sorted(best, key=lambda p: (-order[p], p))
        return [(position, best[position]) for position in ranked[:depth]]

    def bm25(self, view: _View, query: str, depth: int, allowed: Sequence[int] | None) -> list[Hit]:
        """Tools by BM25 over their learned requests (normalized scores, weak hits out)."""
        if view.postings is None or view.scope is None:
            return []
        from toolsearch.indexes.lexical.analysis import analyze

        np = _numpy()
        scope, docs = view.scope, None
        if allowed is not None:
            docs = np.flatnonzero(np.isin(view.doc_positions, np.asarray(list(allowed))))
            if not len(docs):
                return []
            scope = bm25_scoring.scope_of(view.postings, docs)
        settings = Bm25Params(k1=self.params.k1, b=self.params.b)
        terms = analyze(query)
        if not self.memory.params.store_text:
            terms = list(hash_terms(terms).elements())
        places, scores, _total = bm25_scoring.rank(view.postings, terms, scope, settings, depth)
        hits = []
        for place, score in zip(places.tolist(), scores.tolist(), strict=True):
            if score < self.params.bm25_min_score:
                continue
            doc = place if docs is None else int(docs[place])
            hits.append((int(view.doc_positions[doc]), float(score)))
        return hits


class LearnedToolIndex(SessionIndex):
    """Another index's ranking fused with what a :class:`UsageMemory` learned from use.

    Args:
        inner: The index (or :class:`~toolsearch.indexes.ranker.Ranker`) whose ranking is
            the base (``make_index("hybrid")``, say). Cold, its answer is returned as is.
        memory: The usage memory to read (pass the same object to the advisor as its
            ``search_log`` to learn live).
        embedder: The vote's embedder, when the inner index has none (an ``Embedder`` or a
            spec: ``"minilm"``, ``"static"``...); ``None``: the inner index's, else the
            packaged MiniLM (loaded on the first warm search).
        params: :class:`LearnedParams`; its fields can also be given as keywords
            (``vote_weight=2.0``).
    """

    ranker: LearnedRanker

    def __init__(
        self,
        inner: Any,
        *,
        memory: UsageMemory,
        embedder: Embedder | str | None = None,
        params: LearnedParams | None = None,
        **options: Unpack[LearnedOptions],
    ) -> None:
        settings = dataclasses.replace(params or LearnedParams(), **options)
        if not isinstance(memory, UsageMemory):
            raise TypeError(f"memory must be a UsageMemory, not {type(memory).__name__}")
        self.inner = inner
        source = embedder if embedder is not None else inner_embedder(inner)
        super().__init__(LearnedRanker(as_ranker(inner, "inner"), memory, source, settings))

    @property
    def memory(self) -> UsageMemory:
        return self.ranker.memory

    @property
    def params(self) -> LearnedParams:
        return self.ranker.params
