"""What a request costs with a provider's prompt cache on: one cost model for the working
set's run-time policy and for the benchmark's billing, so that what the policy optimises is
what the report measures.

Providers cache byte-exact **prefixes** of the rendered prompt, tools first, so a request
reads from the cache the longest prefix it shares with an earlier request that is still
alive; the rest is fresh, and the part it newly caches is billed at the write price.
Billed input is counted in fresh-token equivalents::

    billed = fresh + written * write + read * read_price

A request is a list of :class:`Block` objects in the provider's render order (each tool
definition, the system prompt, each message), each a key (its exact text), a token count
and a kind (``"tool"``, ``"system"``, ``"message"``). Prefixes are compared block by
block, so a block that differs is not read even where its first tokens match: the model is
a little pessimistic, never optimistic, about reads. When the request's exact token count
is known, the blocks' counts are scaled to it, so a prefix's tokens are those of the
request counted whole (per-block counts summed run a few percent over or under it).

Prices per model family (:data:`MODEL_FAMILIES`; multiples of a fresh input token):

================  =====  ======  =======  ======  =========================================
family            read   write   minimum  TTL     caching
================  =====  ======  =======  ======  =========================================
``gpt-5.6``       0.1    1.25    1,024    5 min   any prefix, 128-token steps (GPT-5.6 on)
``gpt-5``         0.1    1.0     1,024    5 min   the same, writes free (GPT-5 to 5.5)
``gpt-4.1``       0.25   1.0     1,024    5 min   the same
``gpt-4o``        0.5    1.0     1,024    5 min   the same
``claude``        0.1    1.25    1,024    5 min   breakpoints, 20-block lookback (Sonnet, Opus)
``claude-1h``     0.1    2.0     1,024    1 h     the same with the 1-hour TTL
``claude-haiku``  0.1    1.25    2,048    5 min   the same, Haiku's minimum
``gemini-2.5``    0.25   1.0     2,048    5 min   any prefix (TTL assumed)
``gemini-3``      0.25   1.0     4,096    5 min   any prefix (read price and TTL assumed)
================  =====  ======  =======  ======  =========================================

Sources (read 2026-12-02 and 2026-12-07): OpenAI's prompt-caching guide (automatic from
1,024 tokens, hits in 128-token steps, ``prompt_cache_key`` routes requests that share a
prefix; cached input 0.1x on the GPT-5 family, 0.25x GPT-4.1, 0.5x GPT-4o; cache writes
billed at 1.25x from GPT-5.6 on, reported as ``cache_write_tokens``); Anthropic's
prompt-caching docs (``cache_control`` breakpoints, at most 4, a 20-block lookback; reads
0.1x, 5-minute writes 1.25x, 1-hour writes 2x; minimum 1,024 tokens on Sonnet and Opus,
2,048 on Haiku; order tools, system, messages); Gemini's caching docs (implicit caching,
minimum 2,048 tokens on 2.5 Flash and Pro, 4,096 on 3.x; 2.5 bills cached tokens at 0.25x).
Gemini documents neither its TTL nor its render order, nor 3.x's cached price: 5 minutes,
tools first and 0.25x are assumptions.

The benchmark's request shapes (:data:`CACHE_SHAPES`: ``openai``, ``anthropic``,
``gemini`` and their variants) are the current families of each provider.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "CACHE_SHAPES",
    "MODEL_FAMILIES",
    "TRAFFIC",
    "Block",
    "CacheShape",
    "MISS_CAUSES",
    "CachedRequest",
    "PromptCache",
    "Traffic",
    "cache_shape",
    "family_of",
    "hold_cost",
]

MISS_CAUSES = (
    "new prefix",
    "tool added",
    "tool removed",
    "system changed",
    "history changed",
    "ttl",
    "under the minimum",
)
"""Why a request read less than it shared with the request before it (or nothing)."""


@dataclass(frozen=True)
class CacheShape:
    """How one model family caches prompts and bills what it caches (see the module table)."""

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
    """Whether one conversation reads what another cached (all three providers do, within
    one organisation; a ``prompt_cache_key`` narrows it, see :meth:`PromptCache.request`)."""
    family: str = ""
    """The model family whose prices these are (:data:`MODEL_FAMILIES`)."""
    changes_keep_prefix: bool = False
    """Whether a change of the tools the model holds leaves the cached prefix in place.
    False for a tools-first request (OpenAI chat completions, Anthropic with every tool
    in full): the tool list comes first, so a change rewrites everything after it. True
    where a discovered or added tool travels in the messages and the ``tools`` array
    stays put (Anthropic's ``mid-conversation-tool-changes`` beta, whose ``tool_addition``
    blocks are appended): a change then costs its own tokens. Not Anthropic's
    ``defer_loading`` search alone: a tool a search result names expands in place, but a
    tool the working set loads itself (pre-retrieval) joins the ``tools`` array in full."""

    def with_prices(self, *, read: float | None = None, write: float | None = None) -> CacheShape:
        """This shape at other prices (another model's)."""
        return replace(
            self,
            read=self.read if read is None else read,
            write=self.write if write is None else write,
        )


def _openai(family: str, read: float, write: float) -> CacheShape:
    return CacheShape("openai", read, write, 1024, 300.0, step=128, family=family)


def _claude(family: str, write: float, minimum: int, ttl: float) -> CacheShape:
    return CacheShape("anthropic", 0.1, write, minimum, ttl, breakpoints=True, family=family)


MODEL_FAMILIES: dict[str, CacheShape] = {
    "gpt-5.6": _openai("gpt-5.6", 0.1, 1.25),
    "gpt-5": _openai("gpt-5", 0.1, 1.0),
    "gpt-4.1": _openai("gpt-4.1", 0.25, 1.0),
    "gpt-4o": _openai("gpt-4o", 0.5, 1.0),
    "claude": _claude("claude", 1.25, 1024, 300.0),
    "claude-1h": _claude("claude-1h", 2.0, 1024, 3600.0),
    "claude-haiku": _claude("claude-haiku", 1.25, 2048, 300.0),
    "gemini-2.5": CacheShape("gemini", 0.25, 1.0, 2048, 300.0, family="gemini-2.5"),
    "gemini-3": CacheShape("gemini", 0.25, 1.0, 4096, 300.0, family="gemini-3"),
}
"""Each model family's cache prices and rules (the module table gives the sources)."""

CACHE_SHAPES: dict[str, CacheShape] = {
    "openai": MODEL_FAMILIES["gpt-5.6"],
    "anthropic": MODEL_FAMILIES["claude"],
    "gemini": MODEL_FAMILIES["gemini-2.5"],
}
CACHE_SHAPES["anthropic-defer"] = replace(CACHE_SHAPES["anthropic"], provider="anthropic-defer")
CACHE_SHAPES["anthropic-changes"] = replace(
    CACHE_SHAPES["anthropic"], provider="anthropic-changes", changes_keep_prefix=True
)
CACHE_SHAPES["openai-results"] = replace(CACHE_SHAPES["openai"], provider="openai-results")
CACHE_SHAPES["openai-responses"] = replace(CACHE_SHAPES["openai"], provider="openai-responses")
"""The benchmark's request shapes at each provider's current prices (the Anthropic
``defer_loading`` and ``mid-conversation-tool-changes`` shapes are billed as Anthropic
bills, and the latter's tool changes keep the prefix; the OpenAI variants as OpenAI)."""


def family_of(model: str | None, provider: str = "openai") -> CacheShape:
    """The cache shape of a model name (``gpt-5.6-mini``, ``claude-haiku-4-5``...), or of
    the provider's current family when the name says nothing known."""
    name = (model or "").casefold()
    if name.startswith("gpt-4o"):
        return MODEL_FAMILIES["gpt-4o"]
    if name.startswith("gpt-4.1"):
        return MODEL_FAMILIES["gpt-4.1"]
    if name.startswith("gpt-5"):
        minor = name[len("gpt-5") :]
        if minor.startswith("."):
            digits = "".join(c for c in minor[1:] if c.isdigit()) or "0"
            return MODEL_FAMILIES["gpt-5.6" if int(digits[:2] or "0") >= 6 else "gpt-5"]
        return MODEL_FAMILIES["gpt-5"]
    if "haiku" in name:
        return MODEL_FAMILIES["claude-haiku"]
    if name.startswith("claude"):
        return MODEL_FAMILIES["claude"]
    if name.startswith("gemini-3"):
        return MODEL_FAMILIES["gemini-3"]
    if name.startswith("gemini"):
        return MODEL_FAMILIES["gemini-2.5"]
    return cache_shape(provider)


def cache_shape(provider: str, read: float | None = None) -> CacheShape:
    """The request shape's cache (:data:`CACHE_SHAPES`) or a family's
    (:data:`MODEL_FAMILIES`), at another read price when ``read`` is given."""
    shape = CACHE_SHAPES.get(provider) or MODEL_FAMILIES.get(provider)
    if shape is None:
        known = ", ".join([*CACHE_SHAPES, *MODEL_FAMILIES])
        raise ValueError(f"no prompt-cache shape for {provider!r}; expected one of {known}")
    return shape if read is None else shape.with_prices(read=read)


@dataclass(frozen=True)
class Traffic:
    """When requests are made, for the cache's TTL: one conversation starts every
    ``conversation_gap`` seconds, and within one the model answers every ``step``
    seconds. Traffic decides whether what one conversation cached is still alive for the
    next: a conversation every 30 s keeps a 5-minute cache warm, one every 10 min does not.
    """

    conversation_gap: float = 30.0
    step: float = 5.0

    def warm_share(self, ttl: float) -> float:
        """The share of conversations that find what the one before cached still alive
        (1.0 when conversations come within the TTL, 0.0 when they never do)."""
        return 1.0 if self.conversation_gap <= ttl else 0.0


TRAFFIC: dict[str, Traffic] = {
    "30s": Traffic(30.0),
    "2min": Traffic(120.0),
    "4min": Traffic(240.0),
    "10min": Traffic(600.0),
}
"""The traffic levels the benchmark's sensitivity table reports (a conversation every ...)."""


@dataclass(frozen=True)
class Block:
    """One unit of a rendered request: its exact text (the key), its tokens, its kind."""

    key: str
    tokens: int
    kind: str = "message"
    """``"tool"``, ``"system"`` or ``"message"``: what a change of it means for a miss."""


@dataclass(frozen=True)
class CachedRequest:
    """One request's input under the cache: tokens read, written and fresh, what it was
    billed, and why it read less than it shared with the request before (``cause``)."""

    total: int
    read: int
    written: int
    billed: float
    cause: str | None = None
    """One of :data:`MISS_CAUSES`, or ``None`` when it read all it could."""

    @property
    def fresh(self) -> int:
        return self.total - self.read - self.written


@dataclass
class PromptCache:
    """The provider's cache as a set of cached prefixes, each alive until ``ttl`` seconds
    after its last write or read. One cache serves one organisation's traffic."""

    shape: CacheShape
    _expires: dict[Any, float] = field(default_factory=dict, repr=False)
    """When each cached prefix (by its key) expires."""
    _last: dict[str, list[Block]] = field(default_factory=dict, repr=False)
    """Each conversation's latest request, to say why the next one missed."""

    def request(
        self,
        blocks: Sequence[Block],
        *,
        now: float,
        conversation: str = "",
        breakpoints: Sequence[int] = (),
        total: int | None = None,
        cache_key: str | None = None,
    ) -> CachedRequest:
        """Bill one request made at ``now`` (seconds) and cache what it caches.

        ``breakpoints``: indices of the blocks that end with a breakpoint (Anthropic shape;
        the last block when none are given). ``total``: the request's exact token count,
        when known: the blocks' counts are scaled to it. ``cache_key``: OpenAI's
        ``prompt_cache_key``; requests with different keys never share entries."""
        shape = self.shape
        scope = cache_key or ("" if shape.across_conversations else conversation)
        prefix = _prefixes(blocks, scope)
        sizes = _cumulative(blocks)
        whole = sizes[-1] if sizes else 0
        total = whole if total is None else total
        if whole and total != whole:  # the request counted whole: scale every prefix to it
            sizes = [round(size * total / whole) for size in sizes]
        ends = sorted({b for b in breakpoints if 0 <= b < len(blocks)}) or [len(blocks) - 1]
        read_blocks = self._longest_hit(prefix, ends, now)
        read = sizes[read_blocks - 1] if read_blocks else 0
        if shape.step > 1:
            read -= read % shape.step
        if read < shape.minimum:
            read = 0
        cached_to = 0
        positions = [e + 1 for e in ends] if shape.breakpoints else range(1, len(blocks) + 1)
        for count in positions:
            length = sizes[count - 1]
            if length >= shape.minimum:  # written, or refreshed when it was alive
                self._expires[prefix[count - 1]] = now + shape.ttl
                cached_to = max(cached_to, length)
        written = max(0, cached_to - read) if shape.write != 1.0 else 0
        read = min(read, total)
        written = min(written, total - read)
        fresh = total - read - written
        billed = fresh + written * shape.write + read * shape.read
        cause = self._cause(blocks, sizes, read, total, conversation)
        self._last[conversation] = list(blocks)
        return CachedRequest(total=total, read=read, written=written, billed=billed, cause=cause)

    def _cause(
        self, blocks: Sequence[Block], sizes: list[int], read: int, total: int, conversation: str
    ) -> str | None:
        """Why this request read less than the prefix it shares with the conversation's
        request before it (``None``: it read that prefix, give or take a read step)."""
        if total < self.shape.minimum:
            return "under the minimum"
        before = self._last.get(conversation)
        if before is None:
            return "new prefix" if read == 0 else None
        shared = 0
        for old, new in zip(before, blocks, strict=False):
            if old.key != new.key:
                break
            shared += 1
        if shared < len(before):  # this request does not extend the one before
            differs = [b.kind for b in (before[shared], *blocks[shared : shared + 1])]
            if "tool" in differs:
                old_tools = {b.key for b in before if b.kind == "tool"}
                new_tools = {b.key for b in blocks if b.kind == "tool"}
                return "tool added" if new_tools - old_tools else "tool removed"
            if "system" in differs:
                return "system changed"
            return "history changed"
        shared_tokens = sizes[shared - 1] if shared else 0
        if read >= shared_tokens - max(self.shape.step, 1) + 1:
            return None
        if sum(b.tokens for b in before) < self.shape.minimum:
            return "under the minimum"  # the request before was too short to be cached
        return "ttl"

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
    current = hashlib.blake2b(scope.encode(), digest_size=16)
    for block in blocks:
        current.update(b"\x00")
        current.update(block.key.encode())
        keys.append(current.digest())
    return keys


def _cumulative(blocks: Sequence[Block]) -> list[int]:
    sizes: list[int] = []
    running = 0
    for block in blocks:
        running += block.tokens
        sizes.append(running)
    return sizes


def hold_cost(tokens: int, shape: CacheShape, requests: float, traffic: Traffic) -> float:
    """Expected billed tokens of holding a **stable** prefix of ``tokens`` over
    ``requests`` requests of one conversation: written once per conversation unless the
    traffic keeps it warm across conversations, then read; fresh each time under the
    minimum."""
    if tokens < shape.minimum:
        return tokens * requests
    warm = traffic.warm_share(shape.ttl)
    first = warm * shape.read + (1.0 - warm) * shape.write
    return tokens * (first + shape.read * max(0.0, requests - 1.0))
