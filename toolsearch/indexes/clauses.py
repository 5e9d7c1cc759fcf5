"""Long requests read clause by clause: the vector side of a hybrid search.

A request such as "find the invoice from May, then email it to Ana and add a reminder"
asks for three tools. Embedded whole, its vector lands between them and near none. With
``VectorParams(query_clauses=True)`` (the hybrid's default) a request of several clauses
(:func:`split_clauses`: sentences, split again at "then", "and", "also"...) is embedded
clause by clause, in one batch; a tool scores the mean of

* its cosine with the mean of the clause vectors (the request as a whole), and
* its best cosine with any one clause (the step it serves),

so a tool that one clause asks for ranks high even when the others are about something
else. A one-clause request is scored exactly as before. BM25, on the other side of the
hybrid, still reads the whole request. Chosen leave-one-catalog-out on the development
catalogs (``benchmarks/results/retrieval-levers.md``), where it helped the hybrid and, on
its own, not the vector index, which keeps whole-request scoring by default.

:func:`clause_ranking` works on any backend that ranks by a query vector: it searches the
mean and each clause to ``depth`` and combines the lists (a tool missing from a list gets
that list's lowest score, a bound on its own).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["clause_ranking", "query_vectors", "split_clauses"]

_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_CONNECTIVES = re.compile(
    r",?\s+(?:and then|then|after that|afterwards|also|and also|plus|as well as|and)\s+"
    r"|;\s*",
    re.IGNORECASE,
)
MAX_CLAUSES = 8
"""Clauses embedded per request at most (the rest join the last one)."""


def split_clauses(
    text: str, *, min_words: int = 3, connectives: re.Pattern[str] = _CONNECTIVES
) -> list[str]:
    """The request's sentences, each split further at connectives ("then", "and"...).

    Pieces shorter than ``min_words`` words are merged into the piece before them. A
    plain "and" splits too: most requests for two tools join them with one ("get payouts
    for May and add them to the sheet"). A split inside a noun phrase ("the high and low
    temperatures") gives a piece that names no task; its tools still need the other
    pieces' support to outrank the rest. ``connectives`` replaces the pattern the
    sentences are split at.
    """
    pieces: list[str] = []
    for sentence in _SENTENCES.split(text):
        for piece in connectives.split(sentence):
            piece = piece.strip(" ,.;")
            if not piece:
                continue
            if pieces and len(piece.split()) < min_words:
                pieces[-1] = f"{pieces[-1]} {piece}"
            else:
                pieces.append(piece)
    return pieces


def query_vectors(embedder: Any, query: str) -> tuple[Any, Any | None]:
    """``(whole, clauses)``: the query's vector and, for a request of several clauses,
    their vectors (one row each; ``whole`` is then their normalized mean). A one-clause
    query gives its own embedding and ``None``."""
    import numpy as np

    pieces = split_clauses(query)
    if len(pieces) > MAX_CLAUSES:
        pieces = [*pieces[: MAX_CLAUSES - 1], " ".join(pieces[MAX_CLAUSES - 1 :])]
    if len(pieces) < 2:
        return np.asarray(embedder.embed_query(query), dtype=np.float32), None
    batch = getattr(embedder, "embed_queries", None)
    if callable(batch):
        clauses = np.asarray(batch(pieces), dtype=np.float32)
    else:
        clauses = np.stack([np.asarray(embedder.embed_query(p), dtype=np.float32) for p in pieces])
    mean = clauses.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else mean).astype(np.float32), clauses


def clause_ranking(
    search: Callable[[Any, int], Sequence[tuple[int, float]]],
    whole: Any,
    clauses: Any,
    limit: int,
    depth: int = 50,
) -> list[tuple[int, float]]:
    """The best ``limit`` of ``(position, score)``: ``search(vector, depth)`` for the whole
    and for each clause, combined as the module docstring says (score in ``[-1, 1]``)."""
    depth = max(depth, limit)
    base = dict(search(whole, depth))
    floor_base = min(base.values(), default=0.0)
    best: dict[int, float] = {}
    floor_best = -1.0
    for clause in clauses:
        hits = dict(search(clause, depth))
        if not hits:
            continue
        floor_best = max(floor_best, min(hits.values()))
        for position, score in hits.items():
            if score > best.get(position, -2.0):
                best[position] = score
    combined = {
        position: (base.get(position, floor_base) + best.get(position, floor_best)) / 2
        for position in base.keys() | best.keys()
    }
    ranked = sorted(combined.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:limit]
