"""``RegexToolIndex``: regular-expression search over tool names, descriptions and parameters.

Two modes:

* ``mode="natural"`` (default, the reference's algorithm): the query's non-stop-word terms
  become a case-insensitive alternation (at most 200 characters; trailing terms are dropped
  to fit) matched against the split name, the whole name, the description and the
  parameter text. Scores: each name match counts 2 plus a bonus for an early first match,
  each description match 1 plus half that bonus, each parameter match 0.5.
* ``mode="pattern"`` (the provider's regex tool search): the query *is* a Python-style
  regular expression written by the model. It runs on RE2, whose matching time is linear
  in the input, so no pattern can hang the process. Over 200 characters raises
  :class:`~toolsearch.errors.PatternTooLongError`; a pattern that does not parse raises
  :class:`~toolsearch.errors.InvalidPatternError`. Matching is case-sensitive unless the
  pattern says ``(?i)``. Needs ``pip install 'toolsearch[regex]'`` (google-re2).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolsearch.errors import InvalidPatternError, MissingExtraError, PatternTooLongError
from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.session import SessionIndex, SessionTools
from toolsearch.indexes.text import clean_text, query_terms

__all__ = [
    "MAX_MATCHES_PER_FIELD",
    "MAX_PATTERN_LENGTH",
    "RegexRanker",
    "RegexToolIndex",
    "natural_language_pattern",
]

MAX_PATTERN_LENGTH = 200

Finder = Callable[[str], Iterable[int]]
"""Start offsets of every match of a compiled pattern in a text."""


def natural_language_pattern(query: str, max_length: int = MAX_PATTERN_LENGTH) -> str | None:
    """The reference's conversion: ``"weather tools in Paris"`` → ``(weather|paris)``.

    The alternation keeps the longest run of leading terms that fits in ``max_length``
    characters (trailing terms are dropped; one term too long for it is shortened). Linear
    in the query. Returns ``None`` when the query has no usable term. The pattern is meant
    to be compiled case-insensitively.
    """
    terms = query_terms(query)
    if not terms:
        return None
    kept: list[str] = []
    length = 1  # "(" and ")" plus one "|" per term after the first
    for term in terms:
        escaped = re.escape(term)
        length += len(escaped) + 1
        if length > max_length:
            break
        kept.append(escaped)
    if len(kept) > 1:
        return "(" + "|".join(kept) + ")"
    escaped = ""  # one term: its longest prefix whose escaped form fits
    for char in terms[0]:
        piece = re.escape(char)
        if len(escaped) + len(piece) + 2 > max_length:
            break
        escaped += piece
    return f"({escaped})" if escaped else None


MAX_MATCHES_PER_FIELD = {"natural": 100, "pattern": 20}
"""Matches counted in one field of one tool, per mode: a score does not grow past it, so a
pattern that matches everywhere (``.``, ``(a*)*``) costs a bounded number of match objects
(in pattern mode each one is a call into RE2, a few microseconds; 500 tools x 3 fields x 20
stays far under a second). Natural mode matches escaped words only, so its cap is higher."""


def _score(finder: Finder, cap: int, name_text: str, description: str, parameters: str) -> float:
    score = 0.0
    name_hits = list(itertools.islice(finder(name_text), cap))
    if name_hits:
        score += 2.0 * len(name_hits) + 1.0 / (1.0 + min(name_hits) * 0.1)
    description_hits = list(itertools.islice(finder(description), cap))
    if description_hits:
        score += len(description_hits) + 0.5 / (1.0 + min(description_hits) * 0.1)
    score += 0.5 * sum(1 for _ in itertools.islice(finder(parameters), cap))
    return score


_Fields = tuple[str, str, str]
"""Name text (whole name, split words, category), description, parameter text."""


@dataclass(frozen=True)
class _Session:
    fields: list[_Fields]
    compile: Callable[[str], Finder | None]
    cap: int

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        finder = self.compile(query)
        if finder is None:
            return Ranking()
        positions = allowed if allowed is not None else range(len(self.fields))
        scored = []
        for i in positions:
            score = _score(finder, self.cap, *self.fields[i])
            if score > 0:
                scored.append((i, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return Ranking.of(scored[:limit], len(scored))


class RegexRanker:
    """Regular-expression ranking; see the module docstring for the two modes."""

    search_type = "regex"

    def __init__(self, *, mode: Literal["natural", "pattern"] = "natural") -> None:
        if mode not in ("natural", "pattern"):
            raise ValueError("mode must be 'natural' or 'pattern'")
        self.mode = mode
        if mode == "pattern":
            _re2()  # fail at construction, not at the first search, when RE2 is missing

    def prepare(self, tools: SessionTools) -> _Session:
        """The fields as written (pattern mode) or lower-cased (natural mode), built once."""
        fields = [
            (f"{clean_text(p.name)} {p.name_words} {p.category_words}", p.description, p.parameters)
            for p in tools.prepared
        ]
        if self.mode == "natural":
            fields = [(a.lower(), b.lower(), c.lower()) for a, b, c in fields]
        return _Session(fields, self._compile, MAX_MATCHES_PER_FIELD[self.mode])

    def _compile(self, query: str) -> Finder | None:
        if self.mode == "natural":
            pattern = natural_language_pattern(query)
            if pattern is None:
                return None
            compiled = re.compile(pattern)  # terms and texts are lower-cased already
            return lambda text: (m.start() for m in compiled.finditer(text))
        return _compile_model_pattern(query)


class RegexToolIndex(SessionIndex):
    """Regular-expression tool search; see the module docstring for the two modes."""

    ranker: RegexRanker

    def __init__(self, *, mode: Literal["natural", "pattern"] = "natural") -> None:
        super().__init__(RegexRanker(mode=mode))

    @property
    def mode(self) -> str:
        return self.ranker.mode


def _compile_model_pattern(pattern: str) -> Finder:
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternTooLongError(
            f"the pattern has {len(pattern)} characters; the maximum is {MAX_PATTERN_LENGTH}"
        )
    re2 = _re2()
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True  # only match offsets are read: no group bookkeeping
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise InvalidPatternError(f"the pattern {pattern!r} does not parse: {reason}") from None
    return lambda text: (m.start() for m in compiled.finditer(text))


def _re2() -> Any:
    try:
        import re2
    except ImportError as exc:
        raise MissingExtraError("RegexToolIndex(mode='pattern')", "regex", "google-re2") from exc
    return re2
