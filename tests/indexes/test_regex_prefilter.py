"""The regex index's prefilter returns exactly what scanning every tool returns."""

from __future__ import annotations

import random

import pytest

from toolsearch.indexes.lexical.regex import RegexRanker
from toolsearch.indexes.lexical.regex_prefilter import TokenIndex, required_literals
from toolsearch.indexes.ranker import SessionTools
from toolsearch.tools.definition import ToolDefinition

WORDS = (  # noqa: SIM905
    "get list create delete update user users account accounts repository repositories "
    "issue issues pull request weather forecast payment payments invoice invoices order "
    "orders search item items status message messages channel slack kubernetes pod pods "
    "playlist listing target budget customer customers address id ids ssh key keys"
).split()

ODD = [  # texts whose case folding or punctuation a prefilter could get wrong
    ("kelvinTool", "Temperature in \u212a and \u017ftatus of the \u017fensor"),
    ("straße_lookup", "Finds a STRASSE or Straße; ΣΊΣΥΦΟΣ and σίσυφος"),
    ("dotted.name-tool", "Reads user.name, (users) and [ids]; e-mail/addresses"),
    ("surrogate", "Broken \ufffd text with naïve café entries"),
    ("LongIdentifier", "supercalifragilisticexpialidocious words internationalization"),
]


def _corpus(count: int, seed: int = 3) -> list[ToolDefinition]:
    rng = random.Random(seed)
    tools = []
    for i in range(count):
        words = rng.sample(WORDS, 3)
        name = f"{words[0]}{words[1].title()}{i}" if i % 2 else f"{words[0]}_{words[1]}_{i}"
        description = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 14)))
        if i % 7 == 0:
            description = description.upper()
        schema = {
            "type": "object",
            "properties": {
                rng.choice(WORDS): {"type": "string", "description": rng.choice(WORDS)},
                "maxResults": {"type": "integer"},
            },
        }
        tools.append(ToolDefinition(name, description, schema, category=rng.choice(WORDS)))
    for name, description in ODD:
        tools.append(ToolDefinition(name, description, {"type": "object"}))
    return tools


NATURAL = [
    "list the users of an account",
    "get weather forecast",
    "Users",
    "createIssue for a repository",
    "pull_request status",
    "playlist",
    "st",
    "the a of",  # stop words only: kept
    "straße",
    "STRASSE",
    "supercalifragilisticexpialidocious internationalization",
    "e-mail addresses",
    "user.name",
    "x" * 400,  # one long term: the pattern keeps a prefix
    " ".join(WORDS),  # more terms than the pattern holds
    "ssh keys for kubernetes pods",
    "naïve café",
    "σίσυφος",
]

PATTERNS = [
    "user",
    "(?i)weather",
    "get.*User",
    "(?i)(list|search)_?items",
    "^get",
    "Repo(sitor(y|ies))?",
    "(?i)status",
    "(?i)kelvin|\u212a",
    "(?i)stat",
    "(?i)STRASSE",
    "(?i)straße",
    "a",
    ".*",
    "pay(ment)?s?",
    "(?i)create.+order",
    "x{2,}",
    "[Ii]nvoice",
    "id\\b",
    "(?i:SLACK)channel",
    "(?i)k8s|kubernetes",
    "(users?|accounts?)_\\d+",
    "(?:pod)+s",
    "user\\.name",
    "e-mail/",
    "(?i)ΣΊΣΥΦΟΣ",
    "naïve",
    "supercalifragilisticexpialidocious",
    "\\Qliteral\\E",  # RE2 syntax Python does not read: no prefilter, every tool scanned
]


def _both(mode: str, tools: list[ToolDefinition]) -> tuple[object, object]:
    snapshot = SessionTools.of(tools)
    filtered = RegexRanker(mode=mode, prefilter_min_tools=0).prepare(snapshot)  # type: ignore[arg-type]
    scanned = RegexRanker(mode=mode, prefilter_min_tools=10**9).prepare(snapshot)  # type: ignore[arg-type]
    return filtered, scanned


@pytest.mark.parametrize("limit", [1, 5, 50, 10_000])
def test_natural_mode_ranks_exactly_as_the_full_scan(limit: int) -> None:
    filtered, scanned = _both("natural", _corpus(400))
    for query in NATURAL:
        assert filtered.rank(query, limit) == scanned.rank(query, limit), query  # type: ignore[attr-defined]


def test_natural_mode_with_allowed_positions_ranks_exactly_as_the_full_scan() -> None:
    tools = _corpus(300)
    filtered, scanned = _both("natural", tools)
    allowed = list(range(0, len(tools), 3))
    for query in NATURAL:
        expected = scanned.rank(query, 7, allowed)  # type: ignore[attr-defined]
        assert filtered.rank(query, 7, allowed) == expected, query  # type: ignore[attr-defined]


@pytest.mark.parametrize("limit", [3, 10_000])
def test_pattern_mode_ranks_exactly_as_the_full_scan(limit: int) -> None:
    pytest.importorskip("re2")
    filtered, scanned = _both("pattern", _corpus(300))
    allowed = list(range(1, 300, 2))
    for pattern in PATTERNS:
        try:
            expected = scanned.rank(pattern, limit)  # type: ignore[attr-defined]
        except Exception as exc:  # the same error from both paths
            with pytest.raises(type(exc)):
                filtered.rank(pattern, limit)  # type: ignore[attr-defined]
            continue
        assert filtered.rank(pattern, limit) == expected, pattern  # type: ignore[attr-defined]
        expected = scanned.rank(pattern, limit, allowed)  # type: ignore[attr-defined]
        assert filtered.rank(pattern, limit, allowed) == expected, pattern  # type: ignore[attr-defined]


def test_case_insensitive_literals_find_long_s_and_kelvin_sign() -> None:
    pytest.importorskip("re2")
    filtered, scanned = _both("pattern", _corpus(20))
    for pattern in ("(?i)status of", "(?i)sensor", "(?i)in k and"):
        found = filtered.rank(pattern, 5)  # type: ignore[attr-defined]
        assert found == scanned.rank(pattern, 5)  # type: ignore[attr-defined]
        assert found.total >= 1, pattern


def test_required_literals_of_common_shapes() -> None:
    assert required_literals("abc").kind == "lit"
    assert required_literals("a.*b").kind == "and"
    assert required_literals("(foo|bar)baz").kind == "and"
    assert required_literals("foo|.*").kind == "all"
    assert required_literals("(foo)?").kind == "all"
    assert required_literals("(?i)abc").folded
    assert required_literals("[").kind == "all"  # does not parse: nothing required


def test_token_index_finds_tokens_containing_a_literal_and_counts_occurrences() -> None:
    index = TokenIndex([("getUsers users", "a user, the users."), ("list", "")])
    tokens, occurrences = index.tokens_containing("user")
    names = sorted(index.vocabulary[t] for t in tokens.tolist())
    assert names == ["user", "users"]  # case-sensitive: "getUsers" holds "Users"
    assert occurrences.tolist() == [1] * len(names)
    long_tokens, _ = index.tokens_containing("getUsers")
    assert [index.vocabulary[t] for t in long_tokens.tolist()] == ["getUsers"]


def test_natural_scores_computed_in_c_equal_the_match_by_match_scores() -> None:
    from toolsearch.indexes.lexical.regex import _score_matches

    ranker = RegexRanker(mode="natural")
    session = ranker.prepare(SessionTools.of(_corpus(200)))
    for query in NATURAL:
        finder = ranker._compile(query)
        if finder is None:
            continue
        crowded = ("user " * 150, "users user " * 120, "the user " * 130)  # over the cap
        for fields in [*session.fields, crowded]:
            fast = finder.score(session.cap, *fields)  # type: ignore[attr-defined]
            assert fast == _score_matches(finder, session.cap, *fields), query


def test_natural_mode_counts_exactly_where_query_words_overlap() -> None:
    """Words that run together (``ab`` / ``bc`` in ``abc``), hold one another (``ab`` in
    ``abab``) or overlap themselves (``aba`` in ``ababa``): the counts read from the word
    index and ``str.count`` must still be the regex's matches, field by field."""
    rng = random.Random(11)

    def text() -> str:
        return " ".join(
            "".join(rng.choice("abc") for _ in range(rng.randint(1, 9)))
            for _ in range(rng.randint(0, 12))
        )

    tools = [
        ToolDefinition(f"t{i}_{text().replace(' ', '_')}", text(), {"type": "object"})
        for i in range(300)
    ]
    filtered, scanned = _both("natural", tools)
    for _ in range(150):
        words = [
            "".join(rng.choice("abc") for _ in range(rng.randint(2, 5)))
            for _ in range(rng.randint(1, 5))
        ]
        query = " ".join(words)
        for limit in (1, 4, 1000):
            expected = scanned.rank(query, limit)  # type: ignore[attr-defined]
            assert filtered.rank(query, limit) == expected, query  # type: ignore[attr-defined]


def test_suffix_array_orders_positions_as_sorting_their_slices() -> None:
    import numpy as np

    from toolsearch.indexes.lexical.regex_prefilter import _KEY, _suffix_array

    rng = random.Random(8)
    alphabet = "ab\nc\x00\x01\U0010ffff\u212a\u4e2dzZ"
    for _ in range(2000):
        joined = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        expected = sorted(
            (i for i, char in enumerate(joined) if char != "\n"),
            key=lambda i: joined[i : i + _KEY],
        )
        assert np.array_equal(_suffix_array(joined), expected), repr(joined)


def test_pattern_scores_after_non_ascii_text_equal_the_full_scan() -> None:
    """Pattern mode scores a candidate's fields on their UTF-8 bytes: the first match's
    offset (which the score reads) must still count characters, not bytes."""
    pytest.importorskip("re2")
    tools = [
        *_corpus(40),
        ToolDefinition("café_report", "Ünïcödé résumé first, then the report: report ✓ report"),
        ToolDefinition("naïve_status", "状态 status — status of ΣΊΣΥΦΟΣ", {"type": "object"}),
        ToolDefinition(
            "plain_report",
            "report",
            {"type": "object", "properties": {"señal": {"description": "Señal del report"}}},
        ),
    ]
    filtered, scanned = _both("pattern", tools)
    for pattern in ("report", "status", "(?i)RÉSUMÉ|report", "s[eé]ñal", "(?i)σίσυφος", "✓ re"):
        for limit in (1, 3, 100):
            found = filtered.rank(pattern, limit)  # type: ignore[attr-defined]
            assert found == scanned.rank(pattern, limit), pattern  # type: ignore[attr-defined]
            assert found.total >= 1, pattern


def test_pure_literals_are_recognised_and_nothing_else() -> None:
    from toolsearch.indexes.lexical.regex_prefilter import pure_literal

    assert pure_literal("user") == "user"
    assert pure_literal("user\\.name") == "user.name"
    assert pure_literal("naïve café") == "naïve café"
    for pattern in ("(?i)user", "user.", "users?", "^user", "u[st]er", "a|b", "", "(", "\\Qx\\E"):
        assert pure_literal(pattern) is None, pattern
