"""``split_name``'s one-word shortcut splits exactly as the character-by-character rules."""

from __future__ import annotations

import random

from toolsearch.indexes.text import _SEPARATORS, split_name


def _by_the_rules(name: str) -> list[str]:
    words: list[str] = []
    for segment in _SEPARATORS.split(name):
        start = 0
        for i in range(1, len(segment)):
            prev, char = segment[i - 1], segment[i]
            following = segment[i + 1] if i + 1 < len(segment) else ""
            if (
                prev.isdigit() != char.isdigit()
                or (prev.islower() and char.isupper())
                or (prev.isupper() and char.isupper() and following.islower())
            ):
                words.append(segment[start:i])
                start = i
        if segment:
            words.append(segment[start:])
    return [w.lower() for w in words if w]


def test_split_name_matches_the_rules_on_mixed_scripts_and_cases() -> None:
    assert split_name("getHTTPResponse2xx") == ["get", "http", "response", "2", "xx"]
    assert split_name("Users") == ["users"]
    assert split_name("HTTP") == ["http"]
    rng = random.Random(5)
    alphabet = "aBcDxyZ09_-. \u00df\u01c5\u03a3\u03c3\u0130\u0131\u212a\u4e2d\u00b2\u02b0"
    for _ in range(20_000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert split_name(name) == _by_the_rules(name), name


def test_split_name_matches_the_rules_on_ascii_identifiers() -> None:
    rng = random.Random(6)
    for _ in range(50_000):
        name = "".join(rng.choice("aAbBzZ019_-.") for _ in range(rng.randint(0, 12)))
        assert split_name(name) == _by_the_rules(name), name
