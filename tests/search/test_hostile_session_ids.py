"""Issue 47, item 7: a conversation id holding a lone surrogate (``"\\ud800"``: a JSON body
can carry one, and Python strings hold it) made ``.call()`` raise a bare
``UnicodeEncodeError`` from hashing the session id for spans and logs. It is hashed like
any other id now, with the search log on, and distinct ids keep distinct digests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    tool,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.observe import hash_session_id
from toolsearch.search.logs.sink import JsonlSearchLog

SEARCH = "toolSearchTool"


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def _agent(messages: list[Any], tools: list[Any]) -> AssistantMessage:
    """Search for the weather tool, call it once it is shown, then answer."""
    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        if last.responses[0].name == SEARCH and "get_weather" in {t.name for t in tools}:
            call = ToolCall(id="w1", name="get_weather", arguments='{"city": "Oslo"}')
            return AssistantMessage(tool_calls=(call,))
        return AssistantMessage(content=f"done: {last.responses[0].response_data}")
    query = json.dumps({"query": "weather city"})
    return AssistantMessage(tool_calls=(ToolCall(id="s1", name=SEARCH, arguments=query),))


@pytest.mark.parametrize(
    "session_id", ["u" + chr(0xD800) + "x", chr(0xDFFF), chr(0xD83D)], ids=["high", "low", "lead"]
)
def test_a_conversation_id_with_a_lone_surrogate_is_served(tmp_path: Path, session_id: str) -> None:
    search = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), search_log=JsonlSearchLog(tmp_path / "log.jsonl")
    )
    client = ChatClient.builder(FunctionChatModel(_agent)).default_advisors(search).build()
    answer = (
        client.prompt("What is the weather in Oslo?")
        .tools(get_weather)
        .advisors(lambda a: a.param(CONVERSATION_ID, session_id))
        .call()
        .content()
    )
    assert answer == "done: sunny in Oslo"
    assert search.discovered_tools(session_id) == ["get_weather"]
    assert hash_session_id(session_id) in (tmp_path / "log.jsonl").read_text("utf-8")


def test_distinct_ids_keep_distinct_digests() -> None:
    ids = ["u\ud800", "u\ud801", "u\udc00", "u", "u?", "u\ufffd"]
    assert len({hash_session_id(i) for i in ids}) == len(ids)
    assert hash_session_id("u1") == hash_session_id("u1")


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
