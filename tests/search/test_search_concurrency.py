"""Races in one conversation: concurrent requests of one session with different tool sets,
and eviction under every interleaving.

* each request searches its own tools (the registry indexes each tool set of a session
  under its own key), and each distinct tool set is indexed once;
* the tool sets of a session are a bounded LRU, and a tool set a running request
  searches is never cleared;
* no interleaving of requests, index calls, evictions and clock steps leaves an index
  key the registry does not know (an orphan that is never freed);
* the advisor end to end: two conversations, each with two concurrent requests that
  register different tools.

Threads meet at barriers and events, never at sleeps; time comes from an injected clock.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolDefinition,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.indexes import Bm25ToolIndex, RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import (
    CompositeEvictionStrategy,
    EvictionStrategy,
    LruEvictionStrategy,
    NeverEvictStrategy,
    SessionRegistry,
    ToolSearchRequest,
    ToolSearchResponse,
    TtlEvictionStrategy,
)
from toolsearch.search.registry import DEFAULT_MAX_TOOL_SETS, session_of_key, tool_set_key
from toolsearch.testing import FakeClock, tool_definition

TIMEOUT = 30  # seconds a thread may wait at a barrier or event before the test fails

# -- helpers ----------------------------------------------------------------------------


td = partial(tool_definition, schema={"type": "object", "properties": {"q": {"type": "string"}}})


WEATHER = [
    td("weather_forecast", "Weather forecast for a city for the next days."),
    td("weather_alerts", "Severe weather alerts for a region."),
]
STOCKS = [
    td("stock_quote", "Stock price quote for a ticker symbol."),
    td("stock_history", "Historical stock prices of a ticker symbol."),
]
MAIL = [
    td("mail_send", "Send a mail message to a recipient."),
    td("mail_inbox", "Read the mail inbox."),
]
TOOL_SETS = {"weather": WEATHER, "stock": STOCKS, "mail": MAIL}


def names(tools: Sequence[ToolDefinition]) -> set[str]:
    return {t.name for t in tools}


def search(index: Any, key: str, query: str) -> list[str]:
    return list(index.search(ToolSearchRequest(session_id=key, query=query)).tool_names)


class CountingIndex:
    """A ``ToolIndex`` over a :class:`RegexToolIndex` that counts index calls per session
    and yields the interpreter in the middle of every mutation, so other threads run
    between the registry's decisions and the index's work."""

    def __init__(self, inner: Any = None) -> None:
        self.inner = inner if inner is not None else RegexToolIndex()
        self.index_calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        with self._lock:
            session = session_of_key(session_id)
            self.index_calls[session] = self.index_calls.get(session, 0) + 1
        _yield()
        self.inner.index_tools(session_id, tools)
        _yield()

    def search(self, request: ToolSearchRequest) -> ToolSearchResponse:
        return self.inner.search(request)

    def clear_index(self, session_id: str) -> None:
        _yield()
        self.inner.clear_index(session_id)

    def session_ids(self) -> list[str]:
        return self.inner.session_ids()


def _yield() -> None:
    """Let another thread run (``sleep(0)`` releases the GIL; it does not wait for time)."""
    import time

    time.sleep(0)


class GatedIndex(CountingIndex):
    """Blocks ``index_tools`` for one session until ``release`` is set."""

    def __init__(self, gated_session: str) -> None:
        super().__init__()
        self.gated_session = gated_session
        self.entered = threading.Event()
        self.release = threading.Event()

    def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
        if session_of_key(session_id) == self.gated_session:
            self.entered.set()
            assert self.release.wait(TIMEOUT)
        super().index_tools(session_id, tools)


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads far more often than the default 5 ms, for more interleavings."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def assert_no_orphans(registry: SessionRegistry, index: Any) -> None:
    """Every index key belongs to a session the registry knows, and the other way round."""
    known = registry.index_keys()
    assert len(known) == len(set(known))
    assert sorted(index.session_ids()) == sorted(known)
    for key in known:
        assert session_of_key(key) in registry


# -- keys -------------------------------------------------------------------------------


def test_a_tool_set_key_names_its_session_and_ignores_order() -> None:
    fingerprints = [t.fingerprint for t in WEATHER]
    key = tool_set_key("conv#1", fingerprints)
    assert key == tool_set_key("conv#1", reversed(fingerprints))
    assert key == SessionRegistry.index_key("conv#1", WEATHER)
    assert key.startswith("conv#1#")
    assert session_of_key(key) == "conv#1"
    assert tool_set_key("conv#1", [t.fingerprint for t in STOCKS]) != key
    # a session id that looks like another session's key never shares its keys
    assert tool_set_key(key, fingerprints) != key
    assert session_of_key(tool_set_key(key, fingerprints)) == key


def test_max_tool_sets_is_validated_and_documented_default() -> None:
    assert SessionRegistry(RegexToolIndex()).max_tool_sets == DEFAULT_MAX_TOOL_SETS == 4
    with pytest.raises(ValueError, match="max_tool_sets"):
        SessionRegistry(RegexToolIndex(), max_tool_sets=0)


# -- two requests of one conversation, different tool sets --------------------------------


def test_a_request_searches_its_own_tools_while_another_request_indexes_others() -> None:
    """The issue's race made deterministic: request A indexes, request B (same session)
    indexes other tools, then A searches."""
    index = CountingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy())
    registry.acquire("conv")
    key_a = registry.use_tools("conv", WEATHER)
    registry.acquire("conv")
    key_b = registry.use_tools("conv", STOCKS)
    assert key_a != key_b
    assert search(index, key_a, "weather forecast")[0] == "weather_forecast"
    assert search(index, key_b, "stock quote")[0] == "stock_quote"
    assert search(index, key_a, "stock") == []  # sessions' tool sets never mix
    registry.release("conv", [key_b])
    registry.release("conv", [key_a])
    state = registry.get("conv")
    assert state is not None
    assert state.index_count == 2
    assert index.index_calls == {"conv": 2}
    assert state.index_keys == [key_a, key_b]
    # discoveries are per conversation, whatever tool set found them
    registry.mark_discovered("conv", ["weather_forecast"])
    registry.mark_discovered("conv", ["stock_quote"])
    assert registry.discovered("conv") == ["weather_forecast", "stock_quote"]


def test_two_threads_in_one_conversation_never_search_empty_and_index_each_set_once() -> None:
    rounds = 500  # two threads: 1,000 searches
    index = CountingIndex()
    registry = SessionRegistry(index, LruEvictionStrategy(max_sessions=10))
    barrier = threading.Barrier(2)
    empty: list[tuple[str, int]] = []
    foreign: list[tuple[str, list[str]]] = []
    searches = [0, 0]
    errors: list[BaseException] = []

    def worker(slot: int, tools: list[ToolDefinition], query: str) -> None:
        own = names(tools)
        try:
            for i in range(rounds):
                barrier.wait(TIMEOUT)  # both requests start together
                registry.acquire("conv")
                key = registry.use_tools("conv", tools)
                try:
                    barrier.wait(TIMEOUT)  # both tool sets indexed before either searches
                    hits = search(index, key, query)
                    searches[slot] += 1
                    if not hits:
                        empty.append((query, i))
                    if not set(hits) <= own:
                        foreign.append((query, hits))
                finally:
                    registry.release("conv", [key])
        except BaseException as exc:  # reported below
            errors.append(exc)
            barrier.abort()

    threads = [
        threading.Thread(target=worker, args=(0, WEATHER, "weather forecast")),
        threading.Thread(target=worker, args=(1, STOCKS, "stock price")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT * 4)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert searches == [rounds, rounds]
    assert empty == []
    assert foreign == []
    state = registry.get("conv")
    assert state is not None
    assert state.index_count == 2  # one build per distinct tool set, not one per request
    assert index.index_calls == {"conv": 2}
    assert state.active_requests == 0
    assert_no_orphans(registry, index)


# -- the tool sets of a session: a bounded LRU ----------------------------------------------


def distinct_sets(count: int) -> list[list[ToolDefinition]]:
    return [[td(f"tool_{i}", f"Tool number {i} for set {i}.")] for i in range(count)]


def test_a_new_tool_set_per_request_keeps_at_most_max_tool_sets() -> None:
    index = CountingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy(), max_tool_sets=3)
    sets = distinct_sets(10)
    for tools in sets:
        with registry.session("conv"):
            registry.index_tools("conv", tools)
        assert len(registry.index_keys("conv")) <= 3
        assert_no_orphans(registry, index)
    assert registry.index_keys("conv") == [registry.index_key("conv", t) for t in sets[-3:]]
    assert search(index, registry.index_key("conv", sets[0]), "tool_0") == []  # cleared
    state = registry.get("conv")
    assert state is not None
    assert state.index_count == 10


def test_reusing_a_tool_set_refreshes_it_in_the_lru_and_does_not_reindex() -> None:
    index = CountingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy(), max_tool_sets=2)
    a, b, c = distinct_sets(3)
    for tools in (a, b, a, c):  # a was used after b: b goes when c arrives
        with registry.session("conv"):
            registry.index_tools("conv", tools)
    assert registry.index_keys("conv") == [
        registry.index_key("conv", a),
        registry.index_key("conv", c),
    ]
    assert index.index_calls == {"conv": 3}
    # alternating between the kept sets never re-indexes
    for tools in (a, c) * 20:
        with registry.session("conv"):
            assert registry.index_tools("conv", tools) is False
    assert index.index_calls == {"conv": 3}


def test_a_tool_set_a_running_request_searches_is_never_pushed_out() -> None:
    index = CountingIndex()
    registry = SessionRegistry(index, NeverEvictStrategy(), max_tool_sets=2)
    sets = distinct_sets(6)
    keys = []
    for tools in sets:  # six overlapping requests, each with its own tool set
        registry.acquire("conv")
        keys.append(registry.use_tools("conv", tools))
    assert registry.index_keys("conv") == keys  # all held: more than the bound, for now
    for i, key in enumerate(keys):
        assert search(index, key, f"tool_{i}") == [f"tool_{i}"]
    for key in keys[:-1]:
        registry.release("conv", [key])
        assert len(registry.index_keys("conv")) >= 2
        assert keys[-1] in registry.index_keys("conv")  # still held
    registry.release("conv", [keys[-1]])
    assert len(registry.index_keys("conv")) == 2
    assert_no_orphans(registry, index)


# -- eviction while an index call is in flight ---------------------------------------------


@pytest.mark.parametrize("how", ["lru", "explicit", "ttl"])
def test_a_session_evicted_during_its_index_call_leaves_no_orphan(how: str) -> None:
    index = GatedIndex("a")
    clock = FakeClock(1000)
    strategy: EvictionStrategy = (
        TtlEvictionStrategy(10, clock=clock) if how == "ttl" else LruEvictionStrategy(1)
    )
    registry = SessionRegistry(index, strategy)
    errors: list[BaseException] = []

    def index_a() -> None:  # an index call outside any request
        try:
            registry.index_tools("a", WEATHER)
        except BaseException as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=index_a)
    thread.start()
    assert index.entered.wait(TIMEOUT)  # a's tools are being indexed right now
    if how == "lru":
        with registry.session("b"):  # pushes a out of the LRU of one
            registry.index_tools("b", STOCKS)
    elif how == "explicit":
        registry.evict_session("a")
    else:
        clock.advance(60)
        registry.evict_expired()
    assert "a" in registry  # not dropped under its index call
    index.release.set()
    thread.join(TIMEOUT)
    assert not thread.is_alive()
    assert errors == []
    if how == "explicit":
        assert "a" not in registry  # the deferred eviction happened when the call ended
    assert_no_orphans(registry, index)
    for sid in registry.session_ids():
        registry.evict_session(sid)
    assert index.session_ids() == []


def test_a_failing_index_call_leaves_nothing_behind() -> None:
    class Failing(CountingIndex):
        def index_tools(self, session_id: str, tools: Sequence[ToolDefinition]) -> None:
            super().index_tools(session_id, tools)
            raise RuntimeError("index down")

    index = Failing()
    registry = SessionRegistry(index, NeverEvictStrategy())
    with registry.session("a"), pytest.raises(RuntimeError, match="index down"):
        registry.use_tools("a", WEATHER)
    assert registry.index_keys("a") == []
    assert index.session_ids() == []
    state = registry.get("a")
    assert state is not None
    assert state.indexing == 0
    assert state.index_count == 0
    registry.evict_session("a")
    assert "a" not in registry


# -- random interleavings -------------------------------------------------------------------


def strategy_for(kind: str, clock: FakeClock) -> EvictionStrategy:
    if kind == "lru1":
        return LruEvictionStrategy(max_sessions=1)
    if kind == "ttl":
        return TtlEvictionStrategy(5, clock=clock)
    return CompositeEvictionStrategy(
        LruEvictionStrategy(max_sessions=1), TtlEvictionStrategy(5, clock=clock)
    )


def run_trial(seed: int, kind: str) -> list[str]:
    """Four threads, random operations on three sessions; returns what went wrong."""
    rng = random.Random(seed)
    clock = FakeClock(1000)
    index = CountingIndex()
    registry = SessionRegistry(index, strategy_for(kind, clock), max_tool_sets=2)
    sessions = ["s0", "s1", "s2"]
    set_names = list(TOOL_SETS)
    problems: list[str] = []
    plans = [
        [
            (rng.choice(["request", "request", "index", "evict", "expire", "tick"]),
             rng.choice(sessions), rng.choice(set_names), rng.random())
            for _ in range(12)
        ]
        for _ in range(4)
    ]  # fmt: skip
    start = threading.Barrier(len(plans))

    def request(sid: str, set_name: str, x: float) -> None:
        used = [TOOL_SETS[set_name]]
        if x < 0.3:  # a request that uses a second tool set (a nested loop, say)
            used.append(TOOL_SETS[set_names[int(x * 10)]])
        registry.acquire(sid)
        keys: list[str] = []
        try:
            for tools in used:
                keys.append(registry.use_tools(sid, tools))
            _yield()
            for key, tools in zip(keys, used, strict=True):
                hits = search(index, key, tools[0].name)
                if not hits or hits[0] != tools[0].name:
                    problems.append(f"{sid}: search of a held key found {hits}")
        finally:
            registry.release(sid, keys)

    def worker(plan: list[tuple[str, str, str, float]]) -> None:
        try:
            start.wait(TIMEOUT)
            for op, sid, set_name, x in plan:
                if op == "request":
                    request(sid, set_name, x)
                elif op == "index":
                    registry.index_tools(sid, TOOL_SETS[set_name])
                elif op == "evict":
                    registry.evict_session(sid)
                elif op == "expire":
                    registry.evict_expired()
                else:
                    clock.advance(x * 4)
        except BaseException as exc:  # reported below
            problems.append(f"{type(exc).__name__}: {exc}")
            start.abort()

    threads = [threading.Thread(target=worker, args=(plan,)) for plan in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    if any(thread.is_alive() for thread in threads):
        return ["a thread hung"]
    known = set(registry.index_keys())
    orphans = sorted(set(index.session_ids()) - known)
    if orphans:
        problems.append(f"orphans {orphans}")
    missing = sorted(known - set(index.session_ids()))
    if missing:
        problems.append(f"registry keys the index lacks {missing}")
    for sid in registry.session_ids():
        state = registry.get(sid)
        assert state is not None
        if state.active_requests or state.indexing:
            problems.append(f"{sid} still busy: {state}")
        if len(registry.index_keys(sid)) > 2:  # max_tool_sets, once no request holds any
            problems.append(f"{sid} keeps {registry.index_keys(sid)}")
    # everything left can still be freed
    for sid in registry.session_ids():
        registry.evict_session(sid)
    if index.session_ids():
        problems.append(f"left after evicting all: {index.session_ids()}")
    return problems


@pytest.mark.parametrize("kind", ["lru1", "ttl", "lru1+ttl"])
@pytest.mark.usefixtures("busy_switching")
def test_random_interleavings_leave_no_orphan_index_session(kind: str) -> None:
    failures = {}
    for seed in range(120):
        problems = run_trial(seed, kind)
        if problems:
            failures[seed] = problems
    assert failures == {}


# -- the advisor end to end: two conversations, two concurrent requests each -----------------

SEARCH = "toolSearchTool"


class Executions:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.names: list[str] = []

    def record(self, name: str) -> None:
        with self._lock:
            self.names.append(name)


def callbacks(tools: Sequence[ToolDefinition], executions: Executions) -> list[Any]:
    def runner(name: str) -> Callable[[dict[str, Any]], str]:
        def run(arguments: dict[str, Any]) -> str:
            executions.record(name)
            return f"{name} done"

        return run

    return [
        FunctionToolCallback.from_schema(
            runner(t.name), name=t.name, description=t.description, input_schema=t.input_schema
        )
        for t in tools
    ]


def last_user_text(messages: Sequence[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.content or ""
    return ""


def test_two_conversations_each_with_two_concurrent_requests_through_the_advisor() -> None:
    rounds = 15
    conversations = ["c1", "c2"]
    requests = {  # each request of a conversation registers other tools
        "weather": (WEATHER + MAIL, "weather forecast", "weather_forecast"),
        "stock": (STOCKS + MAIL, "stock quote", "stock_quote"),
    }
    loops = len(conversations) * len(requests)
    first_turn = threading.Barrier(loops)
    searched = threading.Barrier(loops)
    results: list[tuple[str, list[str]]] = []
    results_lock = threading.Lock()

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        """Search with the task's words, call the first hit the request shows, answer."""
        task = last_user_text(messages)
        kind = task.split(":")[0]
        visible = {t.name for t in tools}
        last = messages[-1]
        if isinstance(last, ToolResponseMessage):
            response = last.responses[0]
            if response.name != SEARCH:
                return AssistantMessage(content=f"Done: {response.response_data}")
            hits = json.loads(response.response_data)
            with results_lock:
                results.append((task, hits))
            searched.wait(TIMEOUT)  # every loop has searched before any calls a tool
            usable = [h for h in hits if h in visible]
            if not usable:
                return AssistantMessage(content="I found no tool for that.")
            call = ToolCall(id=f"call-{len(messages)}", name=usable[0], arguments="{}")
            return AssistantMessage(tool_calls=(call,))
        first_turn.wait(TIMEOUT)  # all four loops have indexed their tools
        call = ToolCall(
            id=f"call-{len(messages)}",
            name=SEARCH,
            arguments=json.dumps({"query": requests[kind][1]}),
        )
        return AssistantMessage(tool_calls=(call,))

    index = CountingIndex(Bm25ToolIndex())
    # a repeated search finds the same tools again (they are loaded after the first round)
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=index, max_results=3, exclude_loaded_tools=False
    )
    model = FunctionChatModel(agent)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    executions = Executions()
    answers: dict[tuple[str, str, int], str | None] = {}
    errors: list[BaseException] = []

    def converse(conversation: str, kind: str, i: int) -> None:
        tools = callbacks(requests[kind][0], executions)
        try:
            answers[conversation, kind, i] = (
                client.prompt(f"{kind}: round {i} of {conversation}")
                .tools(tools)
                .advisors(lambda a: a.param(CONVERSATION_ID, conversation))
                .call()
                .content()
            )
        except BaseException as exc:  # reported below
            errors.append(exc)
            first_turn.abort()
            searched.abort()

    for i in range(rounds):
        threads = [
            threading.Thread(target=converse, args=(c, k, i))
            for c in conversations
            for k in requests
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT * 2)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []

    assert len(results) == rounds * loops
    for task, hits in results:
        kind = task.split(":")[0]
        own = names(requests[kind][0])
        assert hits, f"empty search for {task!r}"
        assert set(hits) <= own
    for key, answer in answers.items():
        assert answer == f"Done: {requests[key[1]][2]} done"
    assert sorted(executions.names) == sorted(
        requests[k][2] for _ in range(rounds) for _ in conversations for k in requests
    )
    for conversation in conversations:
        state = advisor.registry.get(conversation)
        assert state is not None
        assert state.index_count == 2  # one per distinct tool set, over all 30 requests
        assert state.active_requests == 0
        discovered = advisor.discovered_tools(conversation)
        assert {"weather_forecast", "stock_quote"} <= set(discovered)
        assert set(discovered) <= names(WEATHER + STOCKS + MAIL)
    assert index.index_calls == {"c1": 2, "c2": 2}
    assert_no_orphans(advisor.registry, index)
    for conversation in conversations:
        advisor.registry.evict_session(conversation)
    assert index.session_ids() == []


def test_the_advisor_releases_its_tool_sets_so_the_lru_bound_holds() -> None:
    """A client that sends a new tool set on every request: the conversation keeps at most
    ``max_tool_sets`` of them indexed (each request's hold ends with the request)."""

    def agent(messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, ToolResponseMessage):
            return AssistantMessage(content=last.responses[0].response_data)
        call = ToolCall(id="s", name=SEARCH, arguments=json.dumps({"query": "tool"}))
        return AssistantMessage(tool_calls=(call,))

    index = CountingIndex()
    advisor = ToolSearchToolCallingAdvisor(tool_index=index)
    advisor.registry.max_tool_sets = 2
    client = ChatClient.builder(FunctionChatModel(agent)).default_advisors(advisor).build()
    executions = Executions()
    for i, tools in enumerate(distinct_sets(8)):
        answer = (
            client.prompt(f"request {i}")
            .tools(callbacks(tools, executions))
            .advisors(lambda a: a.param(CONVERSATION_ID, "conv"))
            .call()
            .content()
        )
        assert json.loads(answer or "[]") == [f"tool_{i}"]  # its own tool, only
        assert len(advisor.registry.index_keys("conv")) <= 2
        assert_no_orphans(advisor.registry, index)
    assert advisor.discovered_tools("conv") == [f"tool_{i}" for i in range(8)]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
