"""The regex index's prefilter: which tools can match at all, found from a word index.

Running a pattern over every tool costs a call into the regex engine per field per tool
(~287 ms a query at 10,000 tools). The prefilter narrows that to tools that can match,
with results identical to the full scan:

* Every field is split on whitespace (``str.split``) into *tokens*; the distinct tokens of
  a session form a vocabulary, each with its postings (tool and field, count). A literal
  without whitespace occurs in a field exactly when it occurs inside one of the field's
  tokens, so the tools containing a literal are the postings of the vocabulary tokens
  containing it, found by one substring search over the joined vocabulary (tokens are
  joined by newlines, which no literal holds, so no occurrence spans two tokens).
* **Natural mode** (an alternation of literal words): a field has a match exactly when one
  of the words occurs in it, so the matched tools (and their count) come from the index
  alone. The number of matches in a field is at most the sum of the words' occurrence
  counts (:meth:`str.count`, the most non-overlapping occurrences), which bounds each
  tool's score from above; tools are scored exactly, by the same code as the full scan, in
  decreasing order of that bound until the bound falls below the ``limit``-th exact score.
* **Pattern mode** (a model-written regular expression): the literals every match must
  contain are read from the pattern's parse tree (:func:`required_literals`: sequences
  need all of their parts, alternatives one of theirs, a repeat with a minimum of at least
  one its body; everything else, ``.``, classes, optional parts, needs nothing). A match
  lies inside one field, so only the fields containing them run RE2 (a tool's other
  fields score nothing without the call). Case-insensitive literals are looked up in a case-folded
  vocabulary with their ASCII letters only (the characters RE2 folds to an ASCII letter,
  the long s and the Kelvin sign among them, all case-fold to it). A pattern Python's parser
  does not read constrains nothing: every tool runs RE2, as before.
"""

from __future__ import annotations

import bisect
import itertools
import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from toolsearch.indexes.text import QUERY_SEPARATORS

__all__ = ["PatternFinder", "Requirement", "TokenIndex", "pure_literal", "required_literals"]

_SEPARATOR = "\n"


@dataclass(frozen=True)
class Requirement:
    """What a match needs: ``kind`` ``"all"`` (nothing), ``"lit"`` (``text`` occurs,
    case-folded when ``folded``), ``"and"`` / ``"or"`` of ``parts``."""

    kind: str
    text: str = ""
    folded: bool = False
    parts: tuple[Requirement, ...] = field(default=())


ANYTHING = Requirement("all")


def _and(parts: Iterable[Requirement]) -> Requirement:
    kept = tuple(p for p in parts if p.kind != "all")
    if not kept:
        return ANYTHING
    return kept[0] if len(kept) == 1 else Requirement("and", parts=kept)


def _or(parts: Sequence[Requirement]) -> Requirement:
    if not parts or any(p.kind == "all" for p in parts):
        return ANYTHING
    return parts[0] if len(parts) == 1 else Requirement("or", parts=tuple(parts))


_IGNORECASE = sre_constants.SRE_FLAG_IGNORECASE
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}
_POSSESSIVE = getattr(sre_constants, "POSSESSIVE_REPEAT", None)
if _POSSESSIVE is not None:
    _REPEATS.add(_POSSESSIVE)
_ATOMIC = getattr(sre_constants, "ATOMIC_GROUP", None)


def required_literals(pattern: str) -> Requirement:
    """The literals every match of ``pattern`` contains (see the module docstring);
    :data:`ANYTHING` when the pattern does not parse as Python's ``re`` reads it."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, ValueError, OverflowError):
        return ANYTHING
    flags = parsed.state.flags
    if flags & (sre_constants.SRE_FLAG_VERBOSE | sre_constants.SRE_FLAG_LOCALE):
        return ANYTHING
    try:
        return _sequence(list(parsed.data), bool(flags & _IGNORECASE))
    except RecursionError:
        return ANYTHING


def _sequence(items: list[tuple[Any, Any]], folded: bool) -> Requirement:
    parts: list[Requirement] = []
    run: list[str] = []
    for op, value in items:
        if op is sre_constants.LITERAL:
            run.append(chr(value))
            continue
        if run:
            parts.append(Requirement("lit", "".join(run), folded))
            run = []
        parts.append(_node(op, value, folded))
    if run:
        parts.append(Requirement("lit", "".join(run), folded))
    return _and(parts)


def _node(op: Any, value: Any, folded: bool) -> Requirement:
    if op is sre_constants.SUBPATTERN:
        _group, add_flags, del_flags, body = value
        if add_flags & sre_constants.SRE_FLAG_VERBOSE:
            return ANYTHING
        inner = (folded or bool(add_flags & _IGNORECASE)) and not del_flags & _IGNORECASE
        return _sequence(list(body), inner)
    if op is sre_constants.BRANCH:
        return _or([_sequence(list(alternative), folded) for alternative in value[1]])
    if op in _REPEATS:
        low, _high, body = value
        return _sequence(list(body), folded) if low >= 1 else ANYTHING
    if _ATOMIC is not None and op is _ATOMIC:
        return _sequence(list(value), folded)
    return ANYTHING  # ., classes, anchors, lookarounds, back-references: no literal


def fold(text: str) -> str:
    """The case-folded text the folded vocabulary is built from."""
    return text.casefold()


_KEY = 12
"""Characters of each suffix the suffix array is sorted by: a literal this long or shorter
is found by binary search alone; a longer one by its first ``_KEY`` characters, then
checked against each candidate token."""


def _suffix_array(joined: str) -> Any:
    """The positions of ``joined`` that are not separators, ordered as
    ``sorted(positions, key=lambda i: joined[i : i + _KEY])`` orders them (code point by
    code point, a shorter slice first, equal slices by position), sorted in numpy: each
    code point plus one takes 21 bits, three to a 64-bit key (0 past the end, below every
    character), and the keys of each position sort stably, the first one primary."""
    import numpy as np

    size = len(joined)
    padded = np.zeros(size + _KEY, dtype=np.uint64)
    padded[:size] = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    padded[:size] += 1
    positions = np.flatnonzero(padded[:size] != ord(_SEPARATOR) + 1)
    keys = []
    for start in range(0, _KEY, 3):
        key = padded[start : start + size] << np.uint64(42)
        key |= padded[start + 1 : start + 1 + size] << np.uint64(21)
        key |= padded[start + 2 : start + 2 + size]
        keys.append(key[positions])
    del padded
    return positions[np.lexsort(keys[::-1])]


class TokenIndex:
    """The tokens of a session's fields, with postings (see the module docstring).

    A token is a maximal run of characters that :data:`~toolsearch.indexes.text.
    QUERY_SEPARATORS` does not split on, so a query word (which holds none of them) occurs
    in a field exactly when it occurs inside one of the field's tokens. ``fields`` holds
    each tool's fields (the same number per tool); ``key = tool * width + field``
    identifies one field of one tool in the postings. The distinct tokens, joined by
    newlines, are indexed by a suffix array: the tokens containing a literal are one range
    of it, found by binary search.
    """

    def __init__(self, fields: Sequence[Sequence[str]]) -> None:
        import numpy as np

        self.tools = len(fields)
        self.width = len(fields[0]) if fields else 1
        ids: dict[str, int] = {}
        keys = array("q")  # machine integers: a third of a list of Python ints' memory
        counts = array("q")
        owners = array("q")
        width = self.width
        split = QUERY_SEPARATORS.split
        for tool, texts in enumerate(fields):
            base = tool * width
            for offset, text in enumerate(texts):
                key = base + offset
                seen: dict[str, int] = {}
                for token in split(text):
                    if token:
                        seen[token] = seen.get(token, 0) + 1
                for token, count in seen.items():
                    token_id = ids.get(token)
                    if token_id is None:
                        token_id = ids[token] = len(ids)
                    owners.append(token_id)
                    keys.append(key)
                    counts.append(count)
        self.vocabulary = list(ids)
        owner = np.frombuffer(owners, dtype=np.int64)
        order = np.argsort(owner, kind="stable")
        self.keys = np.frombuffer(keys, dtype=np.int64)[order]
        self.counts = np.frombuffer(counts, dtype=np.int64)[order].astype(np.float64)
        self.offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=len(ids)), out=self.offsets[1:])
        self.joined = _SEPARATOR.join(self.vocabulary)
        lengths = np.fromiter((len(t) + 1 for t in self.vocabulary), np.int64, len(ids))
        self.starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(ids) else lengths
        self.suffixes = _suffix_array(self.joined)

    def tokens_containing(self, literal: str) -> tuple[Any, Any]:
        """The vocabulary tokens that contain ``literal`` (which holds no separator), and
        how many times each does (overlapping occurrences: at least :meth:`str.count`)."""
        import numpy as np

        joined, suffixes = self.joined, self.suffixes
        probe = literal[:_KEY]
        size = len(probe)

        def prefix(position: int) -> str:
            return joined[position : position + size]

        low = bisect.bisect_left(suffixes, probe, key=prefix)
        high = bisect.bisect_right(suffixes, probe, lo=low, key=prefix)
        tokens = np.searchsorted(self.starts, suffixes[low:high], side="right") - 1
        found, occurrences = np.unique(tokens, return_counts=True)
        if len(literal) > _KEY:  # the range holds the tokens with its first _KEY characters
            vocabulary = self.vocabulary
            exact = [vocabulary[t].count(literal) for t in found.tolist()]
            counts = np.asarray(exact, dtype=np.int64)
            keep = counts > 0
            found, occurrences = found[keep], counts[keep]
        return found, occurrences

    def postings(self, tokens: Any) -> tuple[Any, Any, Any]:
        """The concatenated postings of ``tokens``: keys, counts and each posting's token
        (its place in ``tokens``)."""
        import numpy as np

        token_ids = np.asarray(tokens, dtype=np.int64)
        starts = self.offsets[token_ids]
        lengths = self.offsets[token_ids + 1] - starts
        total = int(lengths.sum())
        owner = np.repeat(np.arange(len(token_ids)), lengths)
        within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        picked = np.repeat(starts, lengths) + within
        return self.keys[picked], self.counts[picked], owner

    def tools_containing(self, literal: str) -> Any:
        """A boolean mask over tools: those with ``literal`` in some field."""
        return self.fields_containing(literal).reshape(self.tools, self.width).any(axis=1)

    def fields_containing(self, literal: str) -> Any:
        """A boolean mask over fields (``key = tool * width + field``): those holding
        ``literal``."""
        import numpy as np

        mask = np.zeros(self.tools * self.width, dtype=bool)
        tokens, _occurrences = self.tokens_containing(literal)
        keys, _counts, _owner = self.postings(tokens)
        mask[keys] = True
        return mask


def splittable(text: str) -> bool:
    """Whether ``text`` holds a character tokens are split on (then no token holds it)."""
    return QUERY_SEPARATORS.search(text) is not None


def literal_pieces(literal: str, folded: bool) -> list[str]:
    """The separator-free pieces of ``literal`` a field must contain, as the index reads
    them. A case-insensitive literal keeps its runs of ASCII characters, case-folded (see
    the module docstring). Pieces shorter than two characters constrain too little to be
    worth a lookup."""
    if folded:
        runs = re.split(r"[^\x00-\x7f]+", literal)
        words = [w for run in runs for w in QUERY_SEPARATORS.split(fold(run))]
    else:
        words = QUERY_SEPARATORS.split(literal)
    return [w for w in words if len(w) >= 2]


def pure_literal(pattern: str) -> str | None:
    """The text ``pattern`` matches when it is one plain literal with no flags (an escaped
    word, ``user\\.name``), else ``None``."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    if parsed.state.flags & ~sre_constants.SRE_FLAG_UNICODE:
        return None
    chars = []
    for op, value in parsed:
        if op != sre_constants.LITERAL:
            return None
        chars.append(chr(value))
    return "".join(chars) or None


class PatternFinder:
    """A compiled RE2 pattern: its matches' starts (a :data:`Finder`) and, when no match can
    be empty, a tool's score from its fields' UTF-8 bytes: google-re2 on ``str`` converts
    every match's offsets to characters (most of a query at 10,000 tools); here only the
    first match's, which a score reads. A pattern that is one plain literal (``literal``:
    :func:`pure_literal`) is counted with :meth:`str.count` and found with :meth:`str.find`
    (RE2's matches of a literal are its non-overlapping occurrences). Scores equal
    ``toolsearch.indexes.lexical.regex._score_matches``'s."""

    __slots__ = ("compiled", "literal")

    def __init__(self, compiled: Any, literal: str | None = None) -> None:
        self.compiled = compiled
        self.literal = literal

    def __call__(self, text: str) -> Iterable[int]:
        return (m.start() for m in self.compiled.finditer(text))

    def _counted(self, text: str, cap: int) -> tuple[int, int]:
        """Matches in ``text`` (at most ``cap``) and the first one's character offset."""
        if not text:
            return 0, 0
        if self.literal:
            count = min(text.count(self.literal), cap)
            return count, text.find(self.literal) if count else 0
        data = text.encode("utf-8")
        count = first = 0
        for match in itertools.islice(self.compiled.finditer(data), cap):
            if not count:
                first = match.start()
            count += 1
        if count and first and not text.isascii():
            first = len(data[:first].decode("utf-8"))
        return count, first

    def score_nonempty(self, cap: int, name_text: str, description: str, parameters: str) -> float:
        """``_score_matches`` for a pattern that cannot match the empty string."""
        score = 0.0
        count, first = self._counted(name_text, cap)
        if count:
            score += 2.0 * count + 1.0 / (1.0 + first * 0.1)
        count, first = self._counted(description, cap)
        if count:
            score += count + 0.5 / (1.0 + first * 0.1)
        score += 0.5 * self._counted(parameters, cap)[0]
        return score
