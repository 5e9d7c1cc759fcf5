"""What a request costs with the provider's prompt cache on: a simulated prefix cache per
provider shape, fed the adapters' real request bodies.

Providers cache byte-exact **prefixes** of the rendered prompt, and render the tool
definitions first, so a request reads from the cache the longest prefix it shares with an
earlier request (of the same conversation, or of any conversation where the provider's
cache is shared, as all three are) that is still alive; the rest is fresh, and where the
provider charges for writing the cache (Anthropic), the part it newly caches is billed at
the write price. Billed input is counted in fresh-token equivalents::

    billed = fresh + written * write_price + read * read_price

A request is a list of **blocks** in the provider's render order (each tool definition,
the system prompt, each message), each a key (its exact JSON) and a token count. Prefixes
are compared block by block, so a block that differs is not read even where its first
tokens match: the model is a little pessimistic, never optimistic, about reads.

=============  =======  =============  =========  ====  ============  ==========================
shape          read     write          minimum    TTL   where cached  render order
=============  =======  =============  =========  ====  ============  ==========================
``openai``     0.1x     1x (no fee)    1,024      5 m   any prefix,   tools, then messages
                                                        128-token     (system first among them)
                                                        steps
``anthropic``  0.1x     1.25x          1,024      5 m   at breakpoints tools, system, messages
                                                        (end of tools,
                                                        system, last
                                                        message)
``gemini``     0.25x    1x (no fee)    2,048      5 m   any prefix    tools, system, contents
                                                                      (assumed)
=============  =======  =============  =========  ====  ============  ==========================

Sources (read 2026-12-02): OpenAI's prompt-caching guide (automatic from 1,024 tokens,
hits in 128-token increments, no fee for writes, caches cleared after 5-10 minutes idle
and within an hour; cached input of the GPT-5 family at 0.1x, GPT-4.1 0.25x, GPT-4o
0.5x); Anthropic's prompt-caching docs (``cache_control`` breakpoints, at most 4, a 20-block
lookback before each; reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x; minimum 1,024
tokens on Sonnet and Opus, 2,048 on Haiku; the TTL refreshed on each hit; order tools,
system, messages); Gemini's caching docs (implicit caching on 2.5 and newer models, minimum
2,048 tokens on 2.5 Flash and Pro, 4,096 on 3.x; 2.5 models bill cached tokens at 0.25x).
Gemini documents neither its TTL nor its render order: 5 minutes and tools first are
assumptions. The Anthropic shape assumes the adapter's ``cache_prompt=True`` breakpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "CACHE_SHAPES",
    "Block",
    "CacheShape",
    "CachedRequest",
    "PromptCache",
    "cache_shape",
    "request_blocks",
]


@dataclass(frozen=True)
class CacheShape:
    """How one provider caches prompts and bills what it caches (see the module table)."""

    provider: str
    read: float
    """Price of a cached token read, as a multiple of a fresh input token."""
    write: float
    """Price of a token written to the cache (1.0: no write fee)."""
    minimum: int
    """Tokens a prefix needs before it is cached at all."""
    ttl: float
    """Seconds an entry lives after it was last written or read."""
    step: int = 1
    """Reads are whole multiples of this many tokens (OpenAI: 128)."""
    breakpoints: bool = False
    """Entries only where a request places a breakpoint (Anthropic); else at every prefix."""
    lookback: int = 20
    """Blocks before a breakpoint at which a hit is still found (Anthropic)."""
    across_conversations: bool = True
    """Whether one conversation reads what another cached."""

    def with_prices(self, *, read: float | None = None, write: float | None = None) -> CacheShape:
        """This shape at other prices (another model's)."""
        return replace(
            self,
            read=self.read if read is None else read,
            write=self.write if write is None else write,
        )


CACHE_SHAPES: dict[str, CacheShape] = {
    "openai": CacheShape("openai", read=0.1, write=1.0, minimum=1024, ttl=300.0, step=128),
    "anthropic": CacheShape(
        "anthropic", read=0.1, write=1.25, minimum=1024, ttl=300.0, breakpoints=True
    ),
    "gemini": CacheShape("gemini", read=0.25, write=1.0, minimum=2048, ttl=300.0),
}
CACHE_SHAPES["anthropic-defer"] = replace(CACHE_SHAPES["anthropic"], provider="anthropic-defer")
CACHE_SHAPES["openai-results"] = replace(CACHE_SHAPES["openai"], provider="openai-results")
CACHE_SHAPES["openai-responses"] = replace(CACHE_SHAPES["openai"], provider="openai-responses")
"""The Anthropic adapter's ``defer_loading`` shape is billed as Anthropic bills."""


def cache_shape(provider: str, read: float | None = None) -> CacheShape:
    """The ``provider``'s cache shape, at another read price when ``read`` is given."""
    try:
        shape = CACHE_SHAPES[provider]
    except KeyError:
        raise ValueError(
            f"no prompt-cache shape for {provider!r}; expected one of {', '.join(CACHE_SHAPES)}"
        ) from None
    return shape if read is None else shape.with_prices(read=read)


@dataclass(frozen=True)
class Block:
    """One unit of a rendered request: its exact text (the key) and its tokens."""

    key: str
    tokens: int


@dataclass(frozen=True)
class CachedRequest:
    """One request's input under the cache: tokens read, written and fresh."""

    total: int
    read: int
    written: int
    billed: float

    @property
    def fresh(self) -> int:
        return self.total - self.read - self.written


@dataclass
class PromptCache:
    """The provider's cache as a set of cached prefixes, each alive until ``ttl`` seconds
    after its last write or read. One cache serves one catalog's traffic."""

    shape: CacheShape
    _expires: dict[Any, float] = field(default_factory=dict, repr=False)
    """When each cached prefix (by its key) expires."""

    def request(
        self,
        blocks: Sequence[Block],
        *,
        now: float,
        conversation: str = "",
        breakpoints: Sequence[int] = (),
        total: int | None = None,
    ) -> CachedRequest:
        """Bill one request made at ``now`` (seconds) and cache what it caches.

        ``breakpoints``: indices of the blocks that end with a breakpoint (Anthropic shape;
        the last block when none are given). ``total``: the request's exact token count,
        when known (the blocks' sum otherwise): reads and writes are bounded by it, and
        what they leave is fresh."""
        shape = self.shape
        scope = "" if shape.across_conversations else conversation
        prefix = _prefixes(blocks, scope)
        sizes = _cumulative(blocks)
        whole = sizes[-1] if sizes else 0
        total = whole if total is None else total
        ends = sorted({b for b in breakpoints if 0 <= b < len(blocks)}) or [len(blocks) - 1]
        read_blocks = self._longest_hit(prefix, ends, now)
        read = sizes[read_blocks - 1] if read_blocks else 0
        if shape.step > 1:
            read -= read % shape.step
        if read < shape.minimum:
            read = 0
        # what this request caches: every prefix (or breakpoint) long enough
        cached_to = 0
        positions = [e + 1 for e in ends] if shape.breakpoints else range(1, len(blocks) + 1)
        for count in positions:
            length = sizes[count - 1]
            if length >= shape.minimum:  # written, or refreshed when it was alive
                self._expires[prefix[count - 1]] = now + shape.ttl
                cached_to = max(cached_to, length)
        written = max(0, cached_to - read) if shape.write != 1.0 else 0
        # blocks counted one by one may sum a little off the request's exact count
        read = min(read, total)
        written = min(written, total - read)
        fresh = total - read - written
        billed = fresh + written * shape.write + read * shape.read
        return CachedRequest(total=total, read=read, written=written, billed=billed)

    def _longest_hit(self, prefix: list[Any], ends: list[int], now: float) -> int:
        """Blocks of the longest live cached prefix this request can read (0: none)."""
        shape = self.shape
        for count in range(len(prefix), 0, -1):
            expires = self._expires.get(prefix[count - 1])
            if expires is None or expires < now:
                continue
            if shape.breakpoints and not any(e - shape.lookback < count - 1 <= e for e in ends):
                continue  # Anthropic looks back a bounded number of blocks per breakpoint
            self._expires[prefix[count - 1]] = now + shape.ttl  # a hit refreshes the entry
            return count
        return 0


def _prefixes(blocks: Sequence[Block], scope: str) -> list[Any]:
    """A key per prefix: ``prefix[i]`` identifies blocks ``0..i`` (and the scope)."""
    keys: list[Any] = []
    current: Any = scope
    for block in blocks:
        current = hash((current, block.key))
        keys.append(current)
    return keys


def _cumulative(blocks: Sequence[Block]) -> list[int]:
    sizes: list[int] = []
    running = 0
    for block in blocks:
        running += block.tokens
        sizes.append(running)
    return sizes


def request_blocks(
    body: dict[str, Any], provider: str, count: Any, tools: list[Block] | None = None
) -> tuple[list[Block], list[int]]:
    """A provider's request body as blocks in its render order, and the block indices where
    the Anthropic adapter's ``cache_prompt`` breakpoints fall (end of the tools, of the
    system prompt and of the last message). ``count(text)`` counts a block's tokens;
    ``tools``: the tool blocks already rendered (the body's ``tools`` are then ignored)."""
    import json

    def block(value: Any) -> Block:
        key = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
        return Block(key, count(key))

    if tools is None:
        tools = [block(tool) for tool in body.get("tools") or ()]
    if provider.startswith("anthropic"):
        system = [block(body["system"])] if body.get("system") else []
        messages = [block(message) for message in body.get("messages") or ()]
    elif provider == "gemini":
        system = [block(body["systemInstruction"])] if body.get("systemInstruction") else []
        messages = [block(content) for content in body.get("contents") or ()]
    else:  # OpenAI chat completions and responses: the system prompt is the first message
        system = []
        messages = [block(message) for message in body.get("messages") or body.get("input") or ()]
    blocks = [*tools, *system, *messages]
    breakpoints = []
    if tools:
        breakpoints.append(len(tools) - 1)
    if system:
        breakpoints.append(len(tools) + len(system) - 1)
    if messages:
        breakpoints.append(len(blocks) - 1)
    return blocks, breakpoints
