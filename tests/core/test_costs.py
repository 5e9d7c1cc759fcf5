"""The library's cost model (toolsearch.costs), pinned on hand-computed requests: each
family's write premium, each model's minimum cacheable length, traffic against the TTL,
block counts scaled to the request counted whole, prompt_cache_key, and the cause of each
miss. The bench bills with this same model (benchmarks/harness/tests/test_cache_model.py)."""

from __future__ import annotations

import pytest

from toolsearch.costs import (
    CACHE_SHAPES,
    MODEL_FAMILIES,
    TRAFFIC,
    Block,
    PromptCache,
    Traffic,
    cache_shape,
    family_of,
    hold_cost,
)


def tools(*sizes: int) -> list[Block]:
    return [Block(f"tool:{i}", size, "tool") for i, size in enumerate(sizes)]


def msg(key: str, tokens: int) -> Block:
    return Block(key, tokens)


@pytest.mark.parametrize(
    ("family", "read", "write", "minimum", "ttl"),
    [
        ("gpt-5.6", 0.1, 1.25, 1024, 300.0),
        ("gpt-5", 0.1, 1.0, 1024, 300.0),
        ("gpt-4.1", 0.25, 1.0, 1024, 300.0),
        ("gpt-4o", 0.5, 1.0, 1024, 300.0),
        ("claude", 0.1, 1.25, 1024, 300.0),
        ("claude-1h", 0.1, 2.0, 1024, 3600.0),
        ("claude-haiku", 0.1, 1.25, 2048, 300.0),
        ("gemini-2.5", 0.25, 1.0, 2048, 300.0),
        ("gemini-3", 0.25, 1.0, 4096, 300.0),
    ],
)
def test_each_family_has_its_prices_minimum_and_ttl(family, read, write, minimum, ttl) -> None:
    shape = MODEL_FAMILIES[family]
    assert (shape.read, shape.write, shape.minimum, shape.ttl) == (read, write, minimum, ttl)


def test_the_bench_shapes_are_the_current_families() -> None:
    assert CACHE_SHAPES["openai"] is MODEL_FAMILIES["gpt-5.6"]
    assert CACHE_SHAPES["anthropic"] is MODEL_FAMILIES["claude"]
    assert CACHE_SHAPES["anthropic-defer"].write == 1.25
    assert CACHE_SHAPES["openai-results"].write == 1.25
    assert cache_shape("claude-1h").write == 2.0
    with pytest.raises(ValueError, match=r"gpt-5\.6"):
        cache_shape("nonesuch")


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-5.6", "gpt-5.6"),
        ("gpt-5.7-mini", "gpt-5.6"),
        ("gpt-5.10", "gpt-5.6"),
        ("gpt-5.5", "gpt-5"),
        ("gpt-5", "gpt-5"),
        ("gpt-4.1-mini", "gpt-4.1"),
        ("gpt-4o", "gpt-4o"),
        ("claude-haiku-4-5", "claude-haiku"),
        ("claude-sonnet-4-5", "claude"),
        ("gemini-3-pro", "gemini-3"),
        ("gemini-2.5-flash", "gemini-2.5"),
    ],
)
def test_a_model_name_finds_its_family(model, family) -> None:
    assert family_of(model) is MODEL_FAMILIES[family]


def test_gpt_56_bills_its_writes_at_125_and_reads_at_a_tenth() -> None:
    cache = PromptCache(MODEL_FAMILIES["gpt-5.6"])
    first = cache.request([*tools(1000), msg("u", 200)], now=0)
    assert (first.read, first.written, first.fresh) == (0, 1200, 0)
    assert first.billed == pytest.approx(1200 * 1.25)
    second = cache.request([*tools(1000), msg("u", 200), msg("a", 300)], now=5)
    assert (second.read, second.written) == (1152, 348)  # 9 steps of 128 read
    assert second.billed == pytest.approx(348 * 1.25 + 1152 * 0.1)


def test_gpt_5_writes_for_free() -> None:
    cache = PromptCache(MODEL_FAMILIES["gpt-5"])
    first = cache.request([*tools(1000), msg("u", 200)], now=0)
    assert (first.written, first.billed) == (0, 1200)


def test_anthropic_one_hour_writes_at_2x_and_outlives_five_minutes() -> None:
    cache = PromptCache(MODEL_FAMILIES["claude-1h"])
    request = [*tools(1500), msg("u", 100)]
    first = cache.request(request, now=0, breakpoints=[0, 1])
    assert first.billed == pytest.approx(1600 * 2.0)
    later = cache.request(request, now=1800, breakpoints=[0, 1])  # 30 min: alive
    assert (later.read, later.billed) == (1600, pytest.approx(160.0))
    five = PromptCache(MODEL_FAMILIES["claude"])
    five.request(request, now=0, breakpoints=[0, 1])
    assert five.request(request, now=1800, breakpoints=[0, 1]).read == 0


@pytest.mark.parametrize(
    ("family", "cached"), [("claude", True), ("claude-haiku", False), ("gemini-3", False)]
)
def test_a_1500_token_prefix_is_cached_only_above_the_models_minimum(family, cached) -> None:
    shape = MODEL_FAMILIES[family]
    cache = PromptCache(shape)
    request = [*tools(1500), msg("u", 100)]
    points = [0, 1] if shape.breakpoints else []
    cache.request(request, now=0, breakpoints=points)
    again = cache.request(request, now=1, breakpoints=points)
    assert (again.read > 0) is cached
    assert (again.cause == "under the minimum") is (not cached)


def test_traffic_decides_whether_the_next_conversation_reads_the_tools() -> None:
    """One conversation every 30 s keeps a 5-minute entry alive; every 10 min it is gone."""
    request = [*tools(3000), msg("u", 50)]
    for traffic, read in ((TRAFFIC["30s"], 2944), (TRAFFIC["10min"], 0)):
        cache = PromptCache(MODEL_FAMILIES["gpt-5.6"])
        cache.request(request, now=0, conversation="a")
        other = [*tools(3000), msg("v", 60)]
        nxt = cache.request(other, now=traffic.conversation_gap, conversation="b")
        assert nxt.read == read
    assert Traffic(30).warm_share(300) == 1.0
    assert Traffic(600).warm_share(300) == 0.0


def test_hold_cost_weighs_traffic_and_the_minimum() -> None:
    shape = MODEL_FAMILIES["gpt-5.6"]
    assert hold_cost(500, shape, 3, Traffic(30)) == 1500  # under the minimum: fresh
    assert hold_cost(2000, shape, 3, Traffic(30)) == pytest.approx(2000 * 0.3)
    assert hold_cost(2000, shape, 3, Traffic(600)) == pytest.approx(2000 * (1.25 + 0.2))


def test_block_counts_are_scaled_to_the_request_counted_whole() -> None:
    """Blocks counted one by one sum to 2,000 but the request is 2,200 tokens whole: a
    read of the whole shared prefix is 2,200 tokens (in 128-token steps), not 2,000."""
    cache = PromptCache(MODEL_FAMILIES["gpt-5"])
    request = [*tools(1000, 1000)]
    cache.request(request, now=0, total=2200)
    again = cache.request(request, now=1, total=2200)
    assert again.read == 2176


def test_a_prompt_cache_key_keeps_two_keys_apart() -> None:
    cache = PromptCache(MODEL_FAMILIES["gpt-5"])
    request = [*tools(2000), msg("u", 10)]
    cache.request(request, now=0, cache_key="tenant-a")
    assert cache.request(request, now=1, cache_key="tenant-b").read == 0
    assert cache.request(request, now=2, cache_key="tenant-a").read > 0


def test_each_miss_says_why() -> None:
    cache = PromptCache(MODEL_FAMILIES["gpt-5.6"])
    base = [*tools(800, 400), msg("system", 100), msg("u", 200)]
    assert cache.request(base, now=0, conversation="c").cause == "new prefix"
    grown = [*base, msg("a", 100)]
    assert cache.request(grown, now=5, conversation="c").cause is None
    added = [*tools(800, 400, 300), msg("system", 100), msg("u", 200), msg("a", 100)]
    assert cache.request(added, now=10, conversation="c").cause == "tool added"
    removed = [*tools(800, 400), msg("system", 100), msg("u", 200), msg("a", 100)]
    assert cache.request(removed, now=15, conversation="c").cause == "tool removed"
    system = [*tools(800, 400), Block("system2", 100, "system"), msg("u", 200)]
    assert cache.request(system, now=20, conversation="c").cause == "system changed"
    assert cache.request(system, now=1000, conversation="c").cause == "ttl"
    small = PromptCache(MODEL_FAMILIES["gpt-5.6"])
    assert small.request([msg("u", 300)], now=0).cause == "under the minimum"
