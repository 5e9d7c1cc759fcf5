"""The prompt-cache model of the benchmark, pinned on hand-computed request sequences for
each provider shape: a growing conversation, a tool added mid-conversation, a TTL expiry,
a prefix below the minimum, a cache shared across conversations."""

from __future__ import annotations

import itertools

import pytest

from toolsearch_bench.cache import CACHE_SHAPES, MODEL_FAMILIES, Block, PromptCache, request_blocks

GPT5 = MODEL_FAMILIES["gpt-5"]
"""OpenAI before GPT-5.6: no write fee (the current family is pinned in test_costs.py)."""


def blocks(*spec: tuple[str, int]) -> list[Block]:
    return [Block(key, tokens) for key, tokens in spec]


T1, T2, T3 = ("tool:a", 800), ("tool:b", 400), ("tool:c", 300)
S = ("system", 100)
M1, M2, M3 = ("user:1", 200), ("assistant:2", 100), ("tool-result:3", 100)


# -- OpenAI (GPT-5 to 5.5): any prefix, 128-token steps, no write fee ----------------


def test_openai_reads_the_shared_prefix_in_128_token_steps() -> None:
    cache = PromptCache(GPT5)
    first = cache.request(blocks(("a", 1000), ("b", 200)), now=0)
    assert (first.read, first.written, first.billed) == (0, 0, 1200)
    second = cache.request(blocks(("a", 1000), ("b", 200), ("c", 300)), now=5)
    # 1,200 tokens shared, read as 9 steps of 128 = 1,152; the rest is fresh
    assert second.read == 1152
    assert second.billed == pytest.approx(348 + 1152 * 0.1)


def test_openai_cache_expires_after_its_ttl_of_inactivity() -> None:
    cache = PromptCache(GPT5)
    request = blocks(("a", 1000), ("b", 200))
    cache.request(request, now=0)
    assert cache.request(request, now=200).read == 1152  # a hit refreshes: alive to 500
    assert cache.request(request, now=499).read == 1152
    assert cache.request(request, now=800).read == 0  # 301 s idle
    assert cache.request(request, now=801).read == 1152  # written again at 800


def test_openai_prefix_below_the_minimum_is_never_cached() -> None:
    cache = PromptCache(GPT5)
    request = blocks(("a", 500), ("b", 300))
    cache.request(request, now=0)
    again = cache.request(request, now=1)
    assert (again.read, again.billed) == (0, 800)


def test_openai_shares_a_prefix_across_conversations() -> None:
    cache = PromptCache(GPT5)
    cache.request(blocks(T1, T2, ("user:x", 50)), now=0, conversation="x")
    other = cache.request(blocks(T1, T2, ("user:y", 60)), now=30, conversation="y")
    assert other.read == 1152  # the 1,200 tool tokens, in 128-token steps


def test_a_block_that_differs_is_not_read_even_where_its_first_tokens_match() -> None:
    cache = PromptCache(GPT5)
    cache.request(blocks(("a", 1100), ("b", 900)), now=0)
    assert cache.request(blocks(("a", 1100), ("b-changed", 900)), now=1).read == 1024


# -- Anthropic: breakpoints, write premium -------------------------------------------------


def test_anthropic_writes_at_125_and_reads_at_a_tenth() -> None:
    cache = PromptCache(CACHE_SHAPES["anthropic"])
    first = cache.request(blocks(T1, T2, S, M1), now=0, breakpoints=[1, 2, 3])
    assert (first.read, first.written) == (0, 1500)
    assert first.billed == pytest.approx(1500 * 1.25)
    second = cache.request(blocks(T1, T2, S, M1, M2), now=5, breakpoints=[1, 2, 4])
    assert (second.read, second.written) == (1500, 100)
    assert second.billed == pytest.approx(100 * 1.25 + 1500 * 0.1)


def test_anthropic_a_tool_added_mid_conversation_costs_the_system_and_history() -> None:
    """Tools are rendered first: a discovered tool appended to them keeps the tools before
    it cached, and makes everything after (system prompt, history) a new write."""
    cache = PromptCache(CACHE_SHAPES["anthropic"])
    cache.request(blocks(T1, T2, S, M1), now=0, breakpoints=[1, 2, 3])
    cache.request(blocks(T1, T2, S, M1, M2), now=5, breakpoints=[1, 2, 4])
    grown = cache.request(blocks(T1, T2, T3, S, M1, M2, M3), now=10, breakpoints=[2, 3, 6])
    assert (grown.read, grown.written) == (1200, 800)
    assert grown.billed == pytest.approx(800 * 1.25 + 1200 * 0.1)
    same = PromptCache(CACHE_SHAPES["anthropic"])
    same.request(blocks(T1, T2, S, M1), now=0, breakpoints=[1, 2, 3])
    same.request(blocks(T1, T2, S, M1, M2), now=5, breakpoints=[1, 2, 4])
    kept = same.request(blocks(T1, T2, S, M1, M2, M3), now=10, breakpoints=[1, 2, 5])
    assert (kept.read, kept.written) == (1600, 100)  # the same turn with the tool list kept


def test_anthropic_below_the_minimum_pays_no_write_premium() -> None:
    cache = PromptCache(CACHE_SHAPES["anthropic"])
    request = blocks(("tool", 500), ("user", 300))
    first = cache.request(request, now=0, breakpoints=[0, 1])
    assert (first.read, first.written, first.billed) == (0, 0, 800)
    assert cache.request(request, now=1, breakpoints=[0, 1]).read == 0


def test_anthropic_finds_a_hit_only_within_its_lookback_before_a_breakpoint() -> None:
    cache = PromptCache(CACHE_SHAPES["anthropic"])
    head = blocks(("tools", 1100))
    cache.request(head, now=0, breakpoints=[0])
    tail = [Block(f"m{i}", 10) for i in range(25)]
    far = cache.request(head + tail, now=1, breakpoints=[25])  # 25 blocks after the entry
    assert far.read == 0
    near = cache.request(head + tail, now=2, breakpoints=[0, 25])
    assert near.read == 1100 + 250  # the breakpoint at 25 was written by the request before


# -- Gemini: any prefix, 0.25x, a 2,048-token minimum -------------------------------------


def test_gemini_reads_at_a_quarter_from_2048_tokens() -> None:
    cache = PromptCache(CACHE_SHAPES["gemini"])
    small = blocks(("a", 1500), ("b", 100))
    cache.request(small, now=0)
    assert cache.request(small, now=1).read == 0
    large = blocks(("c", 2000), ("d", 100))
    cache.request(large, now=2)
    again = cache.request([*large, Block("e", 50)], now=3)
    assert again.read == 2100
    assert again.billed == pytest.approx(50 + 2100 * 0.25)


def test_exact_totals_keep_the_tokens_outside_blocks_fresh() -> None:
    cache = PromptCache(GPT5)
    request = blocks(("a", 2048))
    cache.request(request, now=0, total=2060)
    again = cache.request(request, now=1, total=2060)
    assert (again.read, again.fresh) == (2048, 12)


# -- request bodies as blocks ---------------------------------------------------------------


def test_request_blocks_follow_each_providers_render_order() -> None:
    count = len
    anthropic = {
        "tools": [{"name": "a"}, {"name": "b"}],
        "system": "be brief",
        "messages": [{"role": "user", "content": "hi"}],
    }
    found, breakpoints = request_blocks(anthropic, "anthropic", count)
    assert [b.key for b in found] == [
        '{"name":"a"}',
        '{"name":"b"}',
        '"be brief"',
        '{"role":"user","content":"hi"}',
    ]
    assert breakpoints == [1, 2, 3]
    openai = {"tools": [{"type": "function"}], "messages": [{"role": "system"}, {"role": "user"}]}
    found, breakpoints = request_blocks(openai, "openai", count)
    assert [b.key for b in found] == ['{"type":"function"}', '{"role":"system"}', '{"role":"user"}']
    gemini = {"tools": [{"f": 1}], "systemInstruction": {"parts": []}, "contents": [{"r": 1}]}
    found, _ = request_blocks(gemini, "gemini", count)
    assert [b.key for b in found] == ['{"f":1}', '{"parts":[]}', '{"r":1}']


# -- the injection shapes across a discovery ------------------------------------------------


def _search_loop_prompts(provider_catalog):
    """The prompts of one search-loop task (the simulated agent through the advisor)."""
    from toolsearch import ChatClient, ToolSearchToolCallingAdvisor
    from toolsearch.indexes import RegexToolIndex
    from toolsearch.models import FunctionChatModel
    from toolsearch_bench.agent import SimulatedAgent
    from toolsearch_bench.live import SyntheticTool
    from toolsearch_bench.savings import CANNED_RESULT

    tools = [SyntheticTool(d, CANNED_RESULT) for d in provider_catalog.tools]
    request = "Refund order 8812. Then email the customer that the money is on its way."
    agent = SimulatedAgent(request, ("refund_payment", "send_email"))
    model = FunctionChatModel(agent)
    # a discovery by the agent's search is the point: no pre-retrieval, no full list
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), preload_results=0, load_all="never"
    )
    ChatClient.builder(model).default_advisors(advisor).build().prompt(request).tools(tools).call()
    return model.requests


def _prefix_and_messages(prompt, provider):
    import json

    from toolsearch_bench.render import prompt_body

    body = prompt_body(prompt, provider)
    head = json.dumps([body.get("tools"), body.get("system")], sort_keys=True)
    return head, [json.dumps(m, sort_keys=True) for m in body["messages"]]


def test_defer_loading_keeps_the_prefix_byte_identical_across_a_discovery() -> None:
    """With the Anthropic adapter's ``defer_loading`` shape, a discovered tool reaches the
    model as a reference in the conversation: the tools and system prompt, the start of
    every request, stay byte-identical, and each request extends the one before. Without
    it the discovered tools join the tool list, so the start of the request changes."""
    from test_bench_agent import CATALOG

    prompts = _search_loop_prompts(CATALOG)
    assert len(prompts) >= 3  # a search, a discovery, calls
    deferred = [_prefix_and_messages(p, "anthropic-defer") for p in prompts]
    assert len({head for head, _ in deferred}) == 1
    for (_, before), (_, after) in itertools.pairwise(deferred):
        assert after[: len(before) - 1] == before[:-1]  # history kept; the newest turn grows
    plain = [_prefix_and_messages(p, "anthropic")[0] for p in prompts]
    assert len(set(plain)) > 1
