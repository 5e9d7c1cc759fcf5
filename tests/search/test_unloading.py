"""Unloading idle discovered tools: the idle-turn limit, the cap, pinned tools, the moment
(only with a discovery by default, so a cached prompt prefix breaks where it breaks anyway),
a tool coming back when found again, and nothing counted when the options are off."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import InMemorySessionStore
from toolsearch.testing import function_tool

TOOLS = [
    function_tool("send_email", "Send an email message to a recipient"),
    function_tool("get_weather", "Get the weather forecast for a city"),
    function_tool("create_ticket", "Open a support ticket for a customer"),
    function_tool("book_flight", "Book a flight between two airports"),
]


class Conversation:
    """One session driven turn by turn: each turn searches ``query`` (unless ``None``) and
    calls ``call``; every request's tool names are kept."""

    def __init__(self, advisor: ToolSearchToolCallingAdvisor, session: str = "a") -> None:
        self.advisor = advisor
        self.session = session
        self.requests: list[list[str]] = []

    def turn(self, query: str | None, call: str) -> None:
        steps: list[ToolCall] = []
        if query is not None:
            steps.append(
                ToolCall(id="s", name="toolSearchTool", arguments=json.dumps({"query": query}))
            )
        steps.append(ToolCall(id="c", name=call, arguments="{}"))

        def model(messages: Sequence[object], tools: Sequence[object]) -> AssistantMessage:
            self.requests.append([t.name for t in tools])  # type: ignore[attr-defined]
            start = max(i for i, m in enumerate(messages) if type(m).__name__ == "UserMessage")
            done = sum(isinstance(m, ToolResponseMessage) for m in messages[start:])
            if done < len(steps):
                return AssistantMessage(content="", tool_calls=[steps[done]])
            return AssistantMessage(content="done")

        client = ChatClient.builder(FunctionChatModel(model)).default_advisors(self.advisor).build()
        client.prompt("help").tools(TOOLS).advisors(
            lambda a: a.param(CONVERSATION_ID, self.session)
        ).call()

    @property
    def last(self) -> list[str]:
        return self.requests[-1]


def test_nothing_unloads_and_no_turn_is_counted_by_default() -> None:
    store = InMemorySessionStore()
    chat = Conversation(
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), session_store=store)
    )
    for query, call in [
        ("email", "send_email"),
        ("weather", "get_weather"),
        ("ticket", "create_ticket"),
    ]:
        chat.turn(query, call)
    assert chat.last == ["toolSearchTool", "send_email", "get_weather", "create_ticket"]
    assert store.begin_turn("a") == 1  # no run counted one before


def test_a_tool_idle_for_k_turns_unloads_at_the_next_discovery() -> None:
    chat = Conversation(
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), unload_idle_turns=2)
    )
    chat.turn("email", "send_email")  # turn 1
    chat.turn("weather", "get_weather")  # turn 2
    chat.turn(None, "get_weather")  # turn 3: no discovery, the list stays as it is
    assert chat.last == ["toolSearchTool", "send_email", "get_weather"]
    chat.turn("ticket", "create_ticket")  # turn 4: email idle since turn 1, weather since 3
    assert chat.last == ["toolSearchTool", "get_weather", "create_ticket"]
    assert chat.advisor.discovered_tools("a") == ["get_weather", "create_ticket"]
    view = chat.advisor.loaded("a")
    assert view is not None
    assert view.names == chat.last


def test_a_call_keeps_a_tool_loaded() -> None:
    chat = Conversation(
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), unload_idle_turns=2)
    )
    chat.turn("email", "send_email")
    chat.turn("weather", "send_email")  # found weather, called email: email used on turn 2
    chat.turn("ticket", "create_ticket")  # turn 3: weather found on 2, email called on 2
    assert chat.last == ["toolSearchTool", "send_email", "get_weather", "create_ticket"]


def test_the_cap_unloads_the_least_recently_used_first() -> None:
    chat = Conversation(
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_loaded_tools=2)
    )
    chat.turn("email", "send_email")  # 1
    chat.turn("weather", "get_weather")  # 2
    chat.turn(None, "send_email")  # 3: email used again, weather is now the oldest use
    chat.turn("ticket", "create_ticket")  # 4: three discovered, cap 2
    assert chat.last == ["toolSearchTool", "send_email", "create_ticket"]


def test_pinned_tools_never_unload_nor_count_against_the_cap() -> None:
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(),
        max_loaded_tools=1,
        unload_idle_turns=1,
        pinned_tools=["book_flight"],
    )
    chat = Conversation(advisor)
    chat.turn("email", "send_email")
    chat.turn("weather", "get_weather")
    chat.turn("ticket", "create_ticket")
    assert chat.last == ["toolSearchTool", "book_flight", "create_ticket"]


def test_an_unloaded_tool_found_again_comes_back_at_the_end() -> None:
    chat = Conversation(
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_loaded_tools=2)
    )
    chat.turn("email", "send_email")
    chat.turn("weather", "get_weather")
    chat.turn("ticket", "create_ticket")  # email out
    assert "send_email" not in chat.last
    chat.turn("email", "send_email")  # found again; weather is now the oldest
    assert chat.last == ["toolSearchTool", "create_ticket", "send_email"]


def test_a_call_to_an_unloaded_tool_runs_and_loads_it_again_under_execute() -> None:
    chat = Conversation(
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_loaded_tools=1)
    )
    chat.turn("email", "send_email")
    chat.turn("weather", "get_weather")  # email out
    chat.turn(None, "send_email")  # the model remembers it from the history
    assert chat.advisor.discovered_tools("a")[-1] == "send_email"


def test_by_default_a_turn_without_a_discovery_never_changes_the_tool_list() -> None:
    chat = Conversation(
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), unload_idle_turns=1)
    )
    chat.turn("email", "send_email")
    chat.turn("weather", "get_weather")
    before = list(chat.last)
    for _ in range(3):
        chat.turn(None, "get_weather")
        assert chat.last == before  # idle email waits for a discovery


def test_unloading_when_a_turn_starts_is_the_other_choice() -> None:
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), unload_idle_turns=1, unload_at="turn"
    )
    chat = Conversation(advisor)
    chat.turn("email", "send_email")
    chat.turn("weather", "get_weather")  # turn 2 starts: email idle for 1 turn -> out
    assert chat.requests[-1] == ["toolSearchTool", "get_weather"]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("max_loaded_tools", 0, "max_loaded_tools"),
        ("unload_idle_turns", -1, "unload_idle_turns"),
        ("unload_at", "never", "unload_at"),
    ],
)
def test_bad_unloading_options_are_clear_errors(option: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), **{option: value})


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
