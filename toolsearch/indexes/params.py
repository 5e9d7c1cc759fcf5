"""The parameters of each retrieval method, written once.

The in-process indexes (``Bm25ToolIndex``, ``VectorToolIndex``, ``HybridToolIndex``), the
catalog builder and a built catalog's manifest all read these objects, so a default
changes in one place and a catalog built today ranks like a session index with the same
parameters. Each is frozen and converts to and from the JSON a manifest stores.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, TypedDict

__all__ = [
    "Bm25Options",
    "Bm25Params",
    "FusionOptions",
    "FusionParams",
    "VectorOptions",
    "VectorParams",
]


def _known(cls: type, data: Any) -> dict[str, Any]:
    """The entries of ``data`` (a manifest's JSON object) that ``cls`` has fields for."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in dict(data or {}).items() if k in names}


@dataclass(frozen=True, slots=True)
class Bm25Params:
    """BM25F over three weighted fields, with scores normalized to ``[0, 1)``.

    Attributes:
        k1: Term-frequency saturation.
        b: Length normalization.
        name_weight: Weight of the split tool name (and category).
        description_weight: Weight of the description.
        parameter_weight: Weight of parameter names, descriptions and enum values.
        min_score: Drop hits whose normalized score (0..1) is below this.
    """

    k1: float = 1.2
    b: float = 0.75
    name_weight: float = 3.0
    description_weight: float = 1.0
    parameter_weight: float = 0.5
    min_score: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_score <= 1.0:
            raise ValueError("min_score is a normalized score between 0 and 1")
        if self.k1 < 0 or not 0.0 <= self.b <= 1.0:
            raise ValueError("k1 must be >= 0 and b between 0 and 1")

    @property
    def weights(self) -> tuple[float, float, float]:
        """Name, description and parameter weights, in field order."""
        return (self.name_weight, self.description_weight, self.parameter_weight)

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Bm25Params:
        return cls(**{k: float(v) for k, v in _known(cls, data).items()})


class Bm25Options(TypedDict, total=False):
    """Keyword overrides of :class:`Bm25Params` (what ``Bm25ToolIndex(...)`` accepts)."""

    k1: float
    b: float
    name_weight: float
    description_weight: float
    parameter_weight: float
    min_score: float


@dataclass(frozen=True, slots=True)
class VectorParams:
    """Exact search up to ``hnsw_threshold`` tools, FAISS HNSW (inner product) above.

    Attributes:
        hnsw_threshold: More tools than this use HNSW instead of a flat index.
        hnsw_m: HNSW links per node.
        hnsw_ef_construction: HNSW build breadth (catalog builds).
        hnsw_ef_search: HNSW search breadth (higher: better recall, slower).
        batch_size: Texts per embedding batch (catalog builds).
        min_score: Drop hits whose cosine similarity is below this (session indexes).
        query_clauses: Score a request of several clauses clause by clause
            (:mod:`toolsearch.indexes.clauses`); the hybrid's vector side does by default.
    """

    hnsw_threshold: int = 10_000
    hnsw_m: int = 32
    hnsw_ef_construction: int = 64
    hnsw_ef_search: int = 128
    batch_size: int = 256
    min_score: float | None = None
    query_clauses: bool = False

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if data["min_score"] is None:
            del data["min_score"]  # manifests written before it existed look the same
        if not data["query_clauses"]:
            del data["query_clauses"]  # likewise
        return data

    @classmethod
    def from_json(cls, data: Any) -> VectorParams:
        known = _known(cls, data)
        minimum = known.pop("min_score", None)
        clauses = bool(known.pop("query_clauses", False))
        values: dict[str, Any] = {k: int(v) for k, v in known.items()}
        return cls(
            **values, min_score=None if minimum is None else float(minimum), query_clauses=clauses
        )


class VectorOptions(TypedDict, total=False):
    """Keyword overrides of :class:`VectorParams` (what ``VectorToolIndex(...)`` accepts)."""

    hnsw_threshold: int
    hnsw_m: int
    hnsw_ef_search: int
    min_score: float | None
    query_clauses: bool


@dataclass(frozen=True, slots=True)
class FusionParams:
    """How a hybrid fuses its two rankings.

    Attributes:
        fusion: ``"rrf"``: reciprocal-rank fusion, ``Σ weight / (rrf_k + rank)``;
            ``"convex"``: ``Σ weight · max(score, 0) / Σ weights``.
        rrf_k: The rank-fusion constant (5: only the top of two short lists matters).
        bm25_weight: Weight of the first (keyword) ranking.
        vector_weight: Weight of the second (vector) ranking.
        candidates: How many hits each ranking contributes.
    """

    fusion: Literal["rrf", "convex"] = "rrf"
    rrf_k: float = 5.0
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    candidates: int = 50

    def __post_init__(self) -> None:
        if self.bm25_weight < 0 or self.vector_weight < 0:
            raise ValueError("weights must be non-negative and not both zero")
        if self.bm25_weight + self.vector_weight == 0:
            raise ValueError("weights must be non-negative and not both zero")
        if self.candidates < 1 or self.rrf_k < 0:
            raise ValueError("candidates must be at least 1 and rrf_k non-negative")
        if self.fusion not in ("convex", "rrf"):
            raise ValueError("fusion must be 'convex' or 'rrf'")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> FusionParams:
        known = _known(cls, data)
        for key in ("rrf_k", "bm25_weight", "vector_weight"):
            if key in known:
                known[key] = float(known[key])
        if "candidates" in known:
            known["candidates"] = int(known["candidates"])
        return cls(**known)


class FusionOptions(TypedDict, total=False):
    """Keyword overrides of :class:`FusionParams` (what ``HybridToolIndex(...)`` accepts)."""

    fusion: Literal["rrf", "convex"]
    rrf_k: float
    bm25_weight: float
    vector_weight: float
    candidates: int
