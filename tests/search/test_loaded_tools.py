"""What a session's model sees: the loaded-tools view, its log line per change, its span
attribute, and throwaway sessions leaving nothing behind."""

from __future__ import annotations

import json
import logging

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
from toolsearch.search.loaded import LoadedTracker
from toolsearch.search.sessions import ToolSearchSessions
from toolsearch.testing import function_tool
from toolsearch.tokens import WhitespaceTokenCounter

TOOLS = [
    function_tool("send_email", "Send an email message to a recipient"),
    function_tool("get_weather", "Get the weather forecast for a city"),
    function_tool("create_ticket", "Open a support ticket for a customer"),
]


def scripted(query: str, call: str):
    """Search ``query``, call ``call``, then answer."""

    def model(messages, tools):
        done = sum(isinstance(m, ToolResponseMessage) for m in messages)
        if done == 0:
            arguments = json.dumps({"query": query})
            search = ToolCall(id="s1", name="toolSearchTool", arguments=arguments)
            return AssistantMessage(content="", tool_calls=[search])
        if done == 1:
            found = ToolCall(id="c1", name=call, arguments="{}")
            return AssistantMessage(content="", tool_calls=[found])
        return AssistantMessage(content="done")

    return FunctionChatModel(model)


def run(advisor: ToolSearchToolCallingAdvisor, session: str, query: str, call: str) -> None:
    client = ChatClient.builder(scripted(query, call)).default_advisors(advisor).build()
    client.prompt("help").tools(TOOLS).advisors(lambda a: a.param(CONVERSATION_ID, session)).call()


def test_the_advisor_shows_what_each_session_loaded_with_its_tokens() -> None:
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    assert advisor.loaded("a") is None
    run(advisor, "a", "weather", "get_weather")
    view = advisor.loaded("a")
    assert view is not None
    assert view.names == ["toolSearchTool", "get_weather"]
    assert [t.reason for t in view.tools] == ["search", "discovered"]
    counter = WhitespaceTokenCounter()
    weather = TOOLS[1].definition
    expected = counter.count(json.dumps(weather.to_dict(), separators=(",", ":")))
    assert view.tools[1].tokens == expected
    assert view.tokens == sum(t.tokens for t in view.tools)
    assert view.counter == "approximate-words"
    assert advisor.loaded("b") is None  # sessions are apart


def test_one_log_line_per_change_naming_what_came_and_went(caplog) -> None:
    sessions = ToolSearchSessions(RegexToolIndex())
    search = sessions.search_definition()
    email, weather = TOOLS[0].definition, TOOLS[1].definition
    with caplog.at_level(logging.INFO, logger="toolsearch.search"):
        sessions.note_loaded("s", [email])
        sessions.note_loaded("s", [email])  # unchanged: no line
        sessions.note_loaded("s", [email, weather])
        sessions.note_loaded("s", [weather])
    lines = [r.getMessage() for r in caplog.records if "tools loaded" in r.getMessage()]
    assert len(lines) == 3
    assert "+toolSearchTool, +send_email" in lines[0]
    assert lines[1].endswith("(+get_weather)")
    assert lines[2].endswith("(-send_email)")
    assert "s:" not in lines[0]  # the session id is hashed, as in spans
    assert sessions.loaded("s").names == [search.name, "get_weather"]


def test_pinned_tools_are_marked_and_the_tracker_is_bounded() -> None:
    tracker = LoadedTracker(max_sessions=2)
    search = TOOLS[2].definition
    tracker.update("a", search, [TOOLS[0].definition], pinned=["send_email"])
    assert [t.reason for t in tracker.get("a").tools] == ["search", "pinned"]
    tracker.update("b", search, [], pinned=())
    tracker.update("c", search, [], pinned=())
    assert tracker.get("a") is None  # least recently changed out
    tracker.forget("c")
    assert tracker.get("c") is None


def test_a_throwaway_session_leaves_no_view_behind() -> None:
    sessions = ToolSearchSessions(RegexToolIndex())
    with sessions.open(tools=[t.definition for t in TOOLS]) as run_:
        run_.visible_names()
        throwaway = run_.session_id
        assert sessions.loaded(throwaway) is not None
    assert sessions.loaded(throwaway) is None


def test_the_search_span_carries_the_loaded_tokens(otel) -> None:
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    run(advisor, "a", "weather", "get_weather")
    (span,) = [s for s in otel.spans() if s.name.startswith("retrieval")]
    # at the search, the model had seen the search tool alone
    search_tokens = advisor.loaded("a").tools[0].tokens
    assert span.attributes["toolsearch.tools.loaded_tokens"] == search_tokens


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
