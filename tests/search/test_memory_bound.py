"""Issue 47, item 10: a process serving many conversations under an eviction cap holds
memory bounded by the cap, not by the number of conversations it has seen.

Measured as tracemalloc's allocated bytes (deterministic, unlike RSS or time): after the
cap is reached and every cache has warmed, serving further conversations must not grow
the heap by more than :data:`BOUND_PER_CONVERSATION` bytes each on average. Before the
fix, the loaded-tools tracker kept each evicted conversation's view (its own bound is
10,000 sessions whatever the cap): about 500-900 bytes per conversation ever seen, here
and in ``benchmarks/memory_per_conversation.py`` (see docs/bounds.md).
"""

from __future__ import annotations

import gc
import json
import logging
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import LruEvictionStrategy, TtlEvictionStrategy
from toolsearch.search.registry import SessionRegistry
from toolsearch.search.sessions import ToolSearchSessions
from toolsearch.testing import FakeClock

CAP = 100
BOUND_PER_CONVERSATION = 64
"""Bytes a conversation past the cap may leave behind on average (docs/bounds.md): the
measured figure is about 1 byte; the bound leaves room for interpreter noise."""

TOOLS = [
    FunctionToolCallback.from_schema(
        lambda arguments: "ok",
        name=f"service_{i}_operation",
        description=f"Service {i}: look up the weather of a city, variant {i % 7}",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    for i in range(20)
]


def _agent(messages: list[Any], tools: list[Any]) -> AssistantMessage:
    """Search, call the first tool found, answer."""
    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        found = [t.name for t in tools if t.name.startswith("service_")]
        if last.responses[0].name == "toolSearchTool" and found:
            call = ToolCall(id="c", name=found[0], arguments='{"city": "Oslo"}')
            return AssistantMessage(tool_calls=(call,))
        return AssistantMessage(content="done")
    query = json.dumps({"query": "weather city"})
    return AssistantMessage(tool_calls=(ToolCall(id="s", name="toolSearchTool", arguments=query),))


@pytest.fixture
def quiet() -> Iterator[None]:
    logging.disable(logging.INFO)  # one INFO line per loaded-tools change: not under test
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


@pytest.fixture
def after_each(request: pytest.FixtureRequest) -> Callable[[], None]:
    """With OpenTelemetry's SDK installed, telemetry is on during the measure (spans and
    metrics of every conversation), and the test session's in-memory span exporter is
    emptied after each conversation: its list of finished spans is the test's, not the
    library's (left to grow, it is the ~20 KiB per conversation an earlier span test
    makes the heap grow by)."""
    try:
        otel = request.getfixturevalue("otel")
    except pytest.FixtureLookupError:
        return lambda: None
    clear: Callable[[], None] = otel.exporter.clear
    return clear


def _serve(advisor: ToolSearchToolCallingAdvisor, first: int, count: int, tick: Any = None) -> None:
    model = FunctionChatModel(_agent)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    for i in range(first, first + count):
        model.requests.clear()  # the scripted model's own record is not the library's
        client.prompt("weather in Oslo?").tools(*TOOLS).advisors(
            lambda a, i=i: a.param(CONVERSATION_ID, f"conversation-{i}")
        ).call()
        if tick is not None:
            tick()


def test_lru_cap_bounds_memory_not_the_conversations_seen(
    quiet: None, after_each: Callable[[], None]
) -> None:
    """Past the cap, the heap only churns: dict tables of the 100 live sessions resize now
    and then (a few KiB), which is why the window is several caps long."""
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), eviction_strategy=LruEvictionStrategy(CAP)
    )
    _serve(advisor, 0, 3 * CAP, after_each)  # past the cap, every cache warm
    gc.collect()
    tracemalloc.start()
    try:
        _serve(advisor, 3 * CAP, 2 * CAP, after_each)  # the live sessions' state is all traced now
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        _serve(advisor, 5 * CAP, 4 * CAP, after_each)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(advisor.registry.session_ids()) == CAP
    per_conversation = (after - before) / (4 * CAP)
    print(f"{per_conversation:.1f} bytes per conversation past the cap")
    assert per_conversation < BOUND_PER_CONVERSATION


def test_ttl_eviction_forgets_what_each_session_was_shown(quiet: None) -> None:
    clock = FakeClock()
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), eviction_strategy=TtlEvictionStrategy(60, clock=clock)
    )
    _serve(advisor, 0, 3 * CAP, tick=lambda: clock.advance(1))
    live = advisor.registry.session_ids()
    assert len(live) <= 61
    kept = [i for i in range(3 * CAP) if advisor.loaded(f"conversation-{i}") is not None]
    assert len(kept) <= len(live) + 1  # the views follow the sessions, not the 10,000 bound


def test_an_evicted_session_leaves_no_loaded_view() -> None:
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), eviction_strategy=LruEvictionStrategy(2)
    )
    client = ChatClient.builder(FunctionChatModel(_agent)).default_advisors(advisor).build()
    for sid in ("a", "b", "c"):
        client.prompt("weather?").tools(*TOOLS).advisors(
            lambda a, sid=sid: a.param(CONVERSATION_ID, sid)
        ).call()
    assert advisor.loaded("a") is None  # evicted by "c": its view went with it
    assert advisor.loaded("c") is not None


def test_a_shared_registry_does_not_keep_dropped_front_doors_alive() -> None:
    registry = SessionRegistry(Bm25ToolIndex(), LruEvictionStrategy(CAP))
    doors = [ToolSearchSessions(registry=registry) for _ in range(50)]
    refs = [weakref.ref(door) for door in doors]
    del doors
    gc.collect()
    assert all(ref() is None for ref in refs)
    ToolSearchSessions(registry=registry)
    assert len(registry._forget_listeners) == 1  # dead listeners are pruned on add


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
