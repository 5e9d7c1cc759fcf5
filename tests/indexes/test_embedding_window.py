"""``window_prefix``: where a long text is cut before tokenizing (pure string logic)."""

from __future__ import annotations

from toolsearch.indexes.embedders.local import CHARS_PER_TOKEN_BOUND, window_prefix


def test_short_texts_are_not_cut() -> None:
    text = "word " * (10 * CHARS_PER_TOKEN_BOUND // 5)
    assert window_prefix(text, 10) is None
    assert window_prefix("anything at all", 0) is None


def test_a_long_text_is_cut_at_its_last_whitespace_within_the_bound() -> None:
    text = "alpha beta\tgamma\ndelta " * 100
    cut = window_prefix(text, 8)
    assert cut is not None
    limit = 8 * CHARS_PER_TOKEN_BOUND
    assert len(cut) <= limit
    assert text.startswith(cut)
    assert text[len(cut)].isspace()  # whole words only: the same tokens as the full text
    assert not any(ch.isspace() for ch in text[len(cut) + 1 : limit + 1])


def test_a_text_without_whitespace_in_the_bound_is_left_whole() -> None:
    assert window_prefix("x" * 10_000, 8) is None
