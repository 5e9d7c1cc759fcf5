"""The working set's change list is part of the session's stored state (issue 44): two
processes sharing a ``RedisSessionStore`` (two advisors, each with its own store object on
one namespace, a real server: the ``redis_url`` fixture) serve one conversation's calls in
turn and send the very requests one process alone sends, each tool change at the same
place; the list goes with the session, stays bounded, and damaged stored data is a
:class:`~toolsearch.errors.SessionStoreError`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.chat.options import ToolChange
from toolsearch.errors import SessionStoreError
from toolsearch.indexes import RegexToolIndex
from toolsearch.memory import MessageChatMemoryAdvisor, MessageWindowChatMemory
from toolsearch.models import FunctionChatModel
from toolsearch.models.anthropic import anthropic_request_body
from toolsearch.search import InMemorySessionStore, RedisSessionStore, StoredChanges
from toolsearch.search.options import PLAIN_SEARCH_LOOP
from toolsearch.search.working_set import ChangeTracker
from toolsearch.stores.session_store import MAX_STORED_CHANGES
from toolsearch.testing import function_tool

TOOLS = [
    function_tool("send_email", "Send an email message to a recipient"),
    function_tool("get_weather", "Get the weather forecast for a city"),
    function_tool("create_ticket", "Open a support ticket for a customer"),
]
ASKS = {"weather in Paris": "get_weather", "email Bob": "send_email", "a ticket": "create_ticket"}
PLAIN = PLAIN_SEARCH_LOOP


def _script(messages: list[Any], tools: list[Any]) -> AssistantMessage:
    """Per call: search for the tool, call it, answer."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    tool = ASKS[messages[start].text]
    done = sum(isinstance(m, ToolResponseMessage) for m in messages[start:])
    if done == 0:
        query = json.dumps({"query": tool.split("_")[1]})
        call = ToolCall(id=f"s-{tool}-{start}", name="toolSearchTool", arguments=query)
        return AssistantMessage(tool_calls=[call])
    if done == 1:
        call = ToolCall(id=f"c-{tool}-{start}", name=tool, arguments="{}")
        return AssistantMessage(tool_calls=[call])
    return AssistantMessage(content=f"done with {tool}")


def _workers(stores: list[Any], options: dict[str, Any]) -> tuple[FunctionChatModel, list[Any]]:
    """One client per store (a worker each), one model and one chat memory shared by all
    (the memory stands for the conversation store every worker reads)."""
    model = FunctionChatModel(_script)
    memory = MessageWindowChatMemory(max_messages=1000)
    clients = []
    for store in stores:
        advisor = ToolSearchToolCallingAdvisor(
            tool_index=RegexToolIndex(), session_store=store, **options
        )
        chat_memory = MessageChatMemoryAdvisor(memory, order=400)
        clients.append(ChatClient.builder(model).default_advisors(advisor, chat_memory).build())
    return model, clients


def _converse(clients: list[Any], asks: list[str]) -> None:
    for number, ask in enumerate(asks):  # each call on the next worker in turn
        client = clients[number % len(clients)]
        client.prompt(ask).tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "c")).call()


def _bodies(model: FunctionChatModel) -> list[str]:
    return [
        json.dumps(
            anthropic_request_body(p, model="claude-test", tool_search="none"), sort_keys=True
        )
        for p in model.requests
    ]


@pytest.fixture
def redis_stores(redis_url: str) -> Iterator[list[RedisSessionStore]]:
    namespace = f"changes-{uuid.uuid4().hex[:12]}"
    stores = [RedisSessionStore(redis_url, namespace=namespace) for _ in range(2)]
    yield stores
    stores[0].clear()


ASK_LIST = [*ASKS, "weather in Paris", "email Bob"]


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(PLAIN, id="additions"),
        pytest.param({**PLAIN, "unload_idle_turns": 1}, id="removals"),
        pytest.param({"load_all": "never", "injection": "results"}, id="results-injection"),
    ],
)
def test_two_workers_send_the_requests_one_process_sends(
    redis_stores: list[RedisSessionStore], options: dict[str, Any]
) -> None:
    alone, clients = _workers([InMemorySessionStore()], options)
    _converse(clients, ASK_LIST)
    shared, clients = _workers(list(redis_stores), options)
    _converse(clients, ASK_LIST)
    assert _bodies(shared) == _bodies(alone)  # byte for byte, every change at its place
    if options.get("injection") == "results":  # the carried exchange sits where it did
        assert [[m.text for m in p.messages] for p in shared.requests] == [
            [m.text for m in p.messages] for p in alone.requests
        ]
        last = shared.requests[-1].messages
        calls = [c.id for m in last for c in (getattr(m, "tool_calls", None) or ())]
        carried = [c for c in calls if c.startswith("toolsearch_carried_")]
        assert carried == [f"toolsearch_carried_{n}" for n in range(3)]  # on both workers
    else:
        changes = [tuple(p.options.tool_changes) for p in shared.requests]
        assert changes == [tuple(p.options.tool_changes) for p in alone.requests]
        assert len(changes[-1]) >= 3  # changes made on both workers, repeated on the last
        if "unload_idle_turns" in options:
            assert any(c.kind == "remove" for c in changes[-1])
    assert redis_stores[1].tool_changes("c") is not None


def test_without_the_stored_list_a_second_worker_would_move_the_changes(
    redis_stores: list[RedisSessionStore],
) -> None:
    """The control: the same two workers, the change list wiped from the store before
    each call: the requests differ from one process's (what the stored list prevents)."""
    alone, clients = _workers([InMemorySessionStore()], PLAIN)
    _converse(clients, ASK_LIST)
    shared, clients = _workers(list(redis_stores), PLAIN)
    state = redis_stores[0]._keys("c")[0]
    for number, ask in enumerate(ASK_LIST):
        redis_stores[0].client.hdel(state, "changes")
        client = clients[number % 2]
        client.prompt(ask).tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, "c")).call()
    assert _bodies(shared) != _bodies(alone)


def test_the_change_list_goes_with_the_evicted_session(
    redis_stores: list[RedisSessionStore],
) -> None:
    model, clients = _workers(list(redis_stores), PLAIN)
    _converse(clients, ["weather in Paris"])
    weather = ToolChange("add", ("get_weather",), 4)
    assert redis_stores[1].tool_changes("c") == StoredChanges(
        ("toolSearchTool", "get_weather"), (weather,)
    )
    redis_stores[1].evict("c")  # by the other worker
    assert redis_stores[0].tool_changes("c") is None
    _converse(clients[1:], ["email Bob"])  # a new life: a new list, from this call on
    stored = redis_stores[0].tool_changes("c")
    assert stored is not None
    assert weather not in stored.changes
    assert [c.names for c in stored.changes] == [("send_email",)]
    assert tuple(model.requests[-1].options.tool_changes) == stored.changes


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[]",
        '{"held": null, "changes": [["grow", ["a"], 1]], "carried": []}',
        '{"held": null, "changes": [["add", ["a"], "1"]], "carried": []}',
        '{"held": [1], "changes": [], "carried": []}',
        '{"held": null, "changes": [], "carried": null}',
        json.dumps({"held": None, "changes": [["add", ["a"], 1]] * 300, "carried": []}),
    ],
)
def test_damaged_stored_changes_are_a_session_store_error(
    redis_stores: list[RedisSessionStore], raw: str
) -> None:
    store = redis_stores[0]
    store.end(store.begin("d"))
    store.client.hset(store._keys("d")[0], "changes", raw)
    with pytest.raises(SessionStoreError, match="tool changes that does not decode"):
        store.tool_changes("d")


def test_a_damaged_tool_set_is_a_session_store_error(
    redis_stores: list[RedisSessionStore],
) -> None:
    store = redis_stores[0]
    store.end(store.begin("d"))
    store.client.hset(store._keys("d")[0], mapping={"fingerprints": "{", "names": "[]"})
    with pytest.raises(SessionStoreError, match="tool set that does not decode"):
        store.tools("d")


# -- the tracker's state ----------------------------------------------------------------------


def test_the_tracker_saves_once_per_request_that_changed_it() -> None:
    saved: list[StoredChanges] = []
    tracker = ChangeTracker(save=saved.append)
    tracker.update(["search"], 0)
    assert saved == [StoredChanges(("search",))]
    tracker.update(["search"], 2)  # nothing changed: nothing to save
    assert len(saved) == 1
    tracker.update(["search", "a"], 2)  # a new change: saved once placed
    assert len(saved) == 1
    tracker.anchor(5)
    assert saved[-1] == StoredChanges(("search", "a"), (ToolChange("add", ("a",), 5),))
    assert tracker.saved is saved[-1]
    assert tracker.holds(saved[-1])
    again = ChangeTracker.restore(saved[-1])
    assert again.update(["search", "a", "b"], 7) == (
        ToolChange("add", ("a",), 5),
        ToolChange("add", ("b",), 7),
    )
    assert not tracker.holds(again.state())


def test_the_in_memory_store_keeps_the_trackers_own_state() -> None:
    """In memory nothing is copied: the tracker is reused while the store holds its state."""
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), **PLAIN)
    model = FunctionChatModel(_script)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    client.prompt("weather in Paris").tools(TOOLS).advisors(
        lambda a: a.param(CONVERSATION_ID, "m")
    ).call()
    tracker = advisor.sessions.change_tracker("m")
    assert advisor.registry.store.tool_changes("m") is tracker.saved
    assert advisor.sessions.change_tracker("m") is tracker


def test_a_full_change_list_starts_over_from_the_current_tools() -> None:
    saved: list[StoredChanges] = []
    tracker = ChangeTracker(["s"], save=saved.append, max_changes=2)
    tracker.update(["s", "a"], 1)
    tracker.anchor(1)
    tracker.update(["s", "b"], 3)  # a removal and an addition: 3 changes, over the bound
    assert tracker.changes == []
    assert tracker.anchor(3) == ()
    assert saved[-1] == StoredChanges(("s", "b"))
    assert tracker.update(["s", "b", "c"], 5) == (ToolChange("add", ("c",), 5),)
    with pytest.raises(ValueError, match="max_changes"):
        ChangeTracker(max_changes=MAX_STORED_CHANGES + 1)


class _OlderStore:
    """A custom store written before the change list was stored (no ``tool_changes``)."""

    def __init__(self) -> None:
        self._inner = InMemorySessionStore()

    def __getattr__(self, name: str) -> Any:
        if name in ("tool_changes", "record_tool_changes"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._inner

    def __len__(self) -> int:
        return len(self._inner)


def test_a_store_without_the_change_list_keeps_it_in_the_process() -> None:
    alone, clients = _workers([InMemorySessionStore()], PLAIN)
    _converse(clients, ASK_LIST)
    older, clients = _workers([_OlderStore()], PLAIN)
    _converse(clients, ASK_LIST)
    assert _bodies(older) == _bodies(alone)
