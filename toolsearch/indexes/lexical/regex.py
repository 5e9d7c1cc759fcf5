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

import heapq
import itertools
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from cachetools import LRUCache

from toolsearch.errors import InvalidPatternError, MissingExtraError, PatternTooLongError
from toolsearch.indexes.lexical.regex_prefilter import (
    PatternFinder,
    Requirement,
    TokenIndex,
    fold,
    literal_pieces,
    pure_literal,
    required_literals,
    splittable,
)
from toolsearch.indexes.ranker import Ranking
from toolsearch.indexes.session import SessionIndex, SessionTools
from toolsearch.indexes.text import clean_text, query_terms

__all__ = [
    "MAX_MATCHES_PER_FIELD",
    "MAX_PATTERN_LENGTH",
    "RegexRanker",
    "PREFILTER_MIN_TOOLS",
    "RegexToolIndex",
    "natural_language_pattern",
    "natural_language_terms",
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
    terms = natural_language_terms(query, max_length)
    if terms is None:
        return None
    return _alternation(terms)


def _alternation(terms: Sequence[str]) -> str:
    return "(" + "|".join(re.escape(term) for term in terms) + ")"


def natural_language_terms(query: str, max_length: int = MAX_PATTERN_LENGTH) -> list[str] | None:
    """The words :func:`natural_language_pattern` alternates, unescaped, in its order."""
    terms = query_terms(query)
    if not terms:
        return None
    kept: list[str] = []
    length = 1  # "(" and ")" plus one "|" per term after the first
    for term in terms:
        length += len(re.escape(term)) + 1
        if length > max_length:
            break
        kept.append(term)
    if len(kept) > 1:
        return kept
    prefix = ""  # one term: its longest prefix whose escaped form fits
    escaped_length = 0
    for char in terms[0]:
        piece = len(re.escape(char))
        if escaped_length + piece + 2 > max_length:
            break
        escaped_length += piece
        prefix += char
    return [prefix] if prefix else None


MAX_MATCHES_PER_FIELD = {"natural": 100, "pattern": 20}
"""Matches counted in one field of one tool, per mode: a score does not grow past it, so a
pattern that matches everywhere (``.``, ``(a*)*``) costs a bounded number of match objects
(in pattern mode each one is a call into RE2, a few microseconds; 500 tools x 3 fields x 20
stays far under a second). Natural mode matches escaped words only, so its cap is higher."""


def _score(finder: Finder, cap: int, name_text: str, description: str, parameters: str) -> float:
    fast = getattr(finder, "score", None)
    if fast is not None:
        return float(fast(cap, name_text, description, parameters))
    return _score_matches(finder, cap, name_text, description, parameters)


def _score_matches(
    finder: Finder, cap: int, name_text: str, description: str, parameters: str
) -> float:
    score = 0.0
    name_hits = list(itertools.islice(finder(name_text), cap))
    if name_hits:
        score += 2.0 * len(name_hits) + 1.0 / (1.0 + min(name_hits) * 0.1)
    description_hits = list(itertools.islice(finder(description), cap))
    if description_hits:
        score += len(description_hits) + 0.5 / (1.0 + min(description_hits) * 0.1)
    score += 0.5 * sum(1 for _ in itertools.islice(finder(parameters), cap))
    return score


def _conflicts(words: Sequence[str]) -> tuple[str, ...]:
    """The texts whose presence lets occurrences of two different ``words`` overlap: a word
    holding another, and for a word ending with the start of another, the two run together
    (``"list"`` and ``"store"``: ``"listore"``). A text holding none of them has no such
    overlap: every occurrence of every word is a match of their alternation."""
    found: dict[str, None] = {}
    for a in words:
        for b in words:
            if a is b:
                continue
            if a in b:
                found[b] = None
                continue
            for size in range(1, min(len(a), len(b))):
                if a.endswith(b[:size]):
                    found[a + b[size:]] = None
    return tuple(found)


class _NaturalFinder:
    """A natural-mode pattern (Python ``re``): the match starts of a text, and the same
    score as :func:`_score_matches` computed in C: the number of matches is ``findall``'s
    length capped, the first match's start ``search``'s (matches come in text order).

    In a field where no occurrences of two different words overlap (it holds none of their
    :func:`_conflicts`), the regex matches every occurrence of every word, each word's as
    :meth:`str.count` counts them (leftmost, non-overlapping), and the first match is the
    leftmost :meth:`str.find`: the field is scored from those substring searches, several
    times cheaper than the regex scan over a long parameter text. Other fields run the
    regex."""

    def __init__(self, compiled: re.Pattern[str], terms: Sequence[str] = ()) -> None:
        self._compiled = compiled
        self.terms = list(terms)
        self._words = tuple(dict.fromkeys(terms))
        self.conflicts = _conflicts(self._words)
        self.countable = bool(self._words) and not any(map(_self_overlapping, self._words))
        """Whether the word index's counts are the match counts (see :meth:`score_counted`)."""

    def __call__(self, text: str) -> Iterable[int]:
        return (m.start() for m in self._compiled.finditer(text))

    def _matches(self, text: str, first: bool) -> tuple[int, int]:
        """How many matches ``text`` holds, and (if ``first``) where the first starts."""
        if not text:
            return 0, -1
        words = self._words
        if words:
            count = sum([text.count(w) for w in words])
            if not count:
                return 0, -1
            if not any(c in text for c in self.conflicts):
                if not first:
                    return count, -1
                return count, min([p for p in map(text.find, words) if p >= 0])
        return self._regex_matches(text, first)

    def _regex_matches(self, text: str, first: bool) -> tuple[int, int]:
        compiled = self._compiled
        count = len(compiled.findall(text))
        if not count or not first:
            return count, -1
        match = compiled.search(text)
        assert match is not None
        return count, match.start()

    def score(self, cap: int, name_text: str, description: str, parameters: str) -> float:
        score = 0.0
        count, first = self._matches(name_text, True)
        count = min(count, cap)
        if count:
            score += 2.0 * count + 1.0 / (1.0 + first * 0.1)
        count, first = self._matches(description, True)
        count = min(count, cap)
        if count:
            score += count + 0.5 / (1.0 + first * 0.1)
        count, _ = self._matches(parameters, False)
        score += 0.5 * min(count, cap)
        return score

    def score_counted(
        self,
        cap: int,
        counts: Sequence[float],
        conflicted: Sequence[bool],
        name_text: str,
        description: str,
        parameters: str,
    ) -> float:
        """:meth:`score` from each field's occurrence counts in the word index (exact when
        :attr:`countable`: no word overlaps itself, so its occurrences are the ones
        :meth:`str.count` counts) wherever no two words' occurrences can overlap (the field
        holds none of :attr:`conflicts`; ``conflicted`` says which do: the regex scores
        those). Only the first match's place is searched for, in the name and description."""
        score = 0.0
        words = self._words
        if conflicted[0]:
            count, first = self._regex_matches(name_text, True)
        else:
            count = int(counts[0])
            first = min([p for p in map(name_text.find, words) if p >= 0]) if count else -1
        count = min(count, cap)
        if count:
            score += 2.0 * count + 1.0 / (1.0 + first * 0.1)
        if conflicted[1]:
            count, first = self._regex_matches(description, True)
        else:
            count = int(counts[1])
            first = min([p for p in map(description.find, words) if p >= 0]) if count else -1
        count = min(count, cap)
        if count:
            score += count + 0.5 / (1.0 + first * 0.1)
        count = self._regex_matches(parameters, False)[0] if conflicted[2] else int(counts[2])
        score += 0.5 * min(count, cap)
        return score


def _self_overlapping(word: str) -> bool:
    """Whether two occurrences of ``word`` can overlap (it ends with its own start)."""
    return any(word.endswith(word[:size]) for size in range(1, len(word)))


_Fields = tuple[str, str, str]
"""Name text (whole name, split words, category), description, parameter text."""

TERM_CACHE_SIZE = 512
"""Query words whose postings a large session keeps (least recently used go first)."""
_TERM_LOCK = threading.Lock()

PREFILTER_MIN_TOOLS = 1000
"""Sessions with at least this many tools search through the prefilter
(:mod:`toolsearch.indexes.lexical.regex_prefilter`), built on their first search; smaller ones
scan every tool, which costs less than building the index (~30 ms a query at 1,000)."""


@dataclass(frozen=True)
class _Session:
    fields: list[_Fields]
    compile: Callable[[str], Finder | None]
    cap: int
    mode: str = "natural"
    prefilter_min_tools: int = PREFILTER_MIN_TOOLS

    def rank(self, query: str, limit: int, allowed: Sequence[int] | None = None) -> Ranking:
        finder = self.compile(query)
        if finder is None:
            return Ranking()
        if len(self.fields) >= self.prefilter_min_tools:
            if isinstance(finder, _NaturalFinder):
                terms = finder.terms
                if terms and not any(splittable(term) for term in terms):
                    return self._rank_natural(finder, terms, limit, allowed)
            else:
                return self._rank_candidates(finder, query, limit, allowed)
        positions = allowed if allowed is not None else range(len(self.fields))
        return self._scan(finder, positions, limit)

    def _scan(self, finder: Finder, positions: Iterable[int], limit: int) -> Ranking:
        scored = []
        for i in positions:
            score = _score(finder, self.cap, *self.fields[i])
            if score > 0:
                scored.append((i, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return Ranking.of(scored[:limit], len(scored))

    @cached_property
    def _index(self) -> TokenIndex:
        """Tokens of the fields as searched (lower-cased in natural mode)."""
        return TokenIndex(self.fields)

    @cached_property
    def _folded_index(self) -> TokenIndex:
        """Tokens of the case-folded fields (pattern mode's case-insensitive literals)."""
        return TokenIndex([tuple(fold(text) for text in texts) for texts in self.fields])

    @cached_property
    def _term_cache(self) -> LRUCache[str, tuple[Any, Any]]:
        return LRUCache(TERM_CACHE_SIZE)

    def _term_postings(self, term: str) -> tuple[Any, Any]:
        """The fields holding ``term`` and its occurrences in each (at most the number of
        non-overlapping ones: a bound), kept for the session's next queries: words recur
        across queries, and finding them is most of a search's index work."""
        cache = self._term_cache
        with _TERM_LOCK:  # cachetools caches are not thread-safe
            found = cache.get(term)
        if found is None:
            index = self._index
            tokens, occurrences = index.tokens_containing(term)
            keys, counts, owner = index.postings(tokens)
            found = (keys, counts * occurrences[owner])
            with _TERM_LOCK:
                cache[term] = found
        return found

    def _rank_natural(
        self, finder: Finder, terms: list[str], limit: int, allowed: Sequence[int] | None
    ) -> Ranking:
        """Exact scores of the tools that can reach the top ``limit``, the matched count
        from the index (see :mod:`toolsearch.indexes.lexical.regex_prefilter`)."""
        import numpy as np

        index = self._index
        keys_parts, weight_parts = [], []
        for term in terms:
            keys, weights = self._term_postings(term)
            if len(keys):
                keys_parts.append(keys)
                weight_parts.append(weights)
        if not keys_parts:
            return Ranking()
        width = index.width
        keys = np.concatenate(keys_parts)
        sums = np.bincount(
            keys, weights=np.concatenate(weight_parts), minlength=index.tools * width
        ).reshape(index.tools, width)
        hit = np.zeros(index.tools, dtype=bool)  # the tools holding a word: all else is 0
        hit[keys // width] = True
        if allowed is not None:
            inside = np.zeros(index.tools, dtype=bool)
            inside[np.asarray(allowed, dtype=np.int64)] = True
            hit &= inside
        candidates = np.flatnonzero(hit)
        capped = np.minimum(np.take(sums, candidates, axis=0), float(self.cap))  # take: 4x []
        name, description, parameters = capped[:, 0], capped[:, 1], capped[:, 2]
        # the bound adds the parts in _score's order: rounding keeps it above the score
        bound = np.zeros(index.tools)
        bound[candidates] = (
            (2.0 * name + (name > 0)) + (description + 0.5 * (description > 0))
        ) + 0.5 * parameters
        counted = finder if isinstance(finder, _NaturalFinder) and finder.countable else None
        conflicted: Any = None
        if counted is not None:  # the fields where two words' occurrences can overlap
            flat = np.zeros(index.tools * width, dtype=bool)
            for text in counted.conflicts:
                flat[self._term_postings(text)[0]] = True
            conflicted = flat.reshape(index.tools, width)
        best: list[tuple[float, int]] = []  # a min-heap of (score, -position)
        step = 64
        for chunk in _by_bound(candidates, bound[candidates], max(step, 2 * limit), step):
            counts = sums[chunk].tolist()  # a field without any word: no match, no scan
            clashes = conflicted[chunk].tolist() if conflicted is not None else counts
            rows = zip(chunk.tolist(), bound[chunk].tolist(), counts, clashes, strict=True)
            for i, ceiling, held, clash in rows:
                if len(best) >= limit and (ceiling, -i) < best[0]:
                    break  # no tool from here on can enter the top `limit`
                name_text, description, parameters = self.fields[i]
                if counted is not None:
                    score = counted.score_counted(
                        self.cap, held, clash, name_text, description, parameters
                    )
                else:
                    score = _score(
                        finder,
                        self.cap,
                        name_text if held[0] else "",
                        description if held[1] else "",
                        parameters if held[2] else "",
                    )
                if len(best) < limit:
                    heapq.heappush(best, (score, -i))
                elif (score, -i) > best[0]:
                    heapq.heapreplace(best, (score, -i))
            else:
                continue
            break
        hits = sorted(((-neg, score) for score, neg in best), key=lambda h: (-h[1], h[0]))
        return Ranking.of(hits[:limit], len(candidates))

    def _rank_candidates(
        self, finder: Finder, pattern: str, limit: int, allowed: Sequence[int] | None
    ) -> Ranking:
        """RE2 over the fields holding the pattern's required literals only (a match lies
        inside one field, so a field without them scores nothing)."""
        import numpy as np

        mask = self._requirement_mask(required_literals(pattern))
        if mask is None:
            positions: Iterable[int] = allowed if allowed is not None else range(len(self.fields))
            return self._scan(finder, positions, limit)
        present = mask.reshape(len(self.fields), -1)
        hit = present.any(axis=1)
        if allowed is not None:
            positions = [i for i in allowed if hit[i]]
        else:
            positions = np.flatnonzero(hit).tolist()

        score = finder.score_nonempty if isinstance(finder, PatternFinder) else None
        scored = []
        for i in positions:
            texts = [t if keep else "" for t, keep in zip(self.fields[i], present[i], strict=True)]
            value = _score(finder, self.cap, *texts) if score is None else score(self.cap, *texts)
            if value > 0:
                scored.append((i, value))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return Ranking.of(scored[:limit], len(scored))

    def _requirement_mask(self, requirement: Requirement) -> Any:
        """The fields that can meet ``requirement``: a boolean mask over ``tool * width +
        field``, or None for all."""
        if requirement.kind == "lit":
            index = self._folded_index if requirement.folded else self._index
            mask = None
            for piece in literal_pieces(requirement.text, requirement.folded):
                found = index.fields_containing(piece)
                mask = found if mask is None else mask & found
            return mask
        if requirement.kind == "and":
            mask = None
            for part in requirement.parts:
                found = self._requirement_mask(part)
                if found is not None:
                    mask = found if mask is None else mask & found
            return mask
        if requirement.kind == "or":
            masks = [self._requirement_mask(part) for part in requirement.parts]
            if any(m is None for m in masks):
                return None
            combined = masks[0]
            for found in masks[1:]:
                combined = combined | found
            return combined
        return None


def _by_bound(candidates: Any, bounds: Any, head: int, step: int = 64) -> Iterable[Any]:
    """``candidates`` in decreasing ``bounds`` (ties: increasing position), in chunks of
    ``step``: the ``head`` highest first (all tied with the last of them included), sorted
    without sorting the rest, which most searches never reach; then the rest, sorted."""
    import numpy as np

    if len(candidates) > head:
        threshold = np.partition(bounds, len(bounds) - head)[len(bounds) - head]
        top = bounds >= threshold
        parts = [(candidates[top], bounds[top]), (candidates[~top], bounds[~top])]
    else:
        parts = [(candidates, bounds)]
    for positions, values in parts:
        order = positions[np.lexsort((positions, -values))]
        for start in range(0, len(order), step):
            yield order[start : start + step]


class RegexRanker:
    """Regular-expression ranking; see the module docstring for the two modes."""

    search_type = "regex"

    def __init__(
        self,
        *,
        mode: Literal["natural", "pattern"] = "natural",
        prefilter_min_tools: int = PREFILTER_MIN_TOOLS,
    ) -> None:
        if mode not in ("natural", "pattern"):
            raise ValueError("mode must be 'natural' or 'pattern'")
        self.mode = mode
        self.prefilter_min_tools = prefilter_min_tools
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
        return _Session(
            fields,
            self._compile,
            MAX_MATCHES_PER_FIELD[self.mode],
            self.mode,
            self.prefilter_min_tools,
        )

    def _compile(self, query: str) -> Finder | None:
        if self.mode == "natural":
            terms = natural_language_terms(query)
            if terms is None:
                return None
            # terms and texts are lower-cased
            return _NaturalFinder(re.compile(_alternation(terms)), terms)
        return _compile_model_pattern(query)


class RegexToolIndex(SessionIndex):
    """Regular-expression tool search; see the module docstring for the two modes."""

    ranker: RegexRanker

    def __init__(
        self,
        *,
        mode: Literal["natural", "pattern"] = "natural",
        prefilter_min_tools: int = PREFILTER_MIN_TOOLS,
    ) -> None:
        super().__init__(RegexRanker(mode=mode, prefilter_min_tools=prefilter_min_tools))

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
    return PatternFinder(compiled, pure_literal(pattern))


def _re2() -> Any:
    try:
        import re2
    except ImportError as exc:
        raise MissingExtraError("RegexToolIndex(mode='pattern')", "regex", "google-re2") from exc
    return re2
