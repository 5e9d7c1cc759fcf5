"""Search logs: ``JsonlSearchLog`` on the tool-search advisor records every search (time,
hashed session, query, index, hits with scores, the tools the model had) and every turn's
calls; ``read_search_log`` joins them so that a search's labels are the hits the model then
called in that session."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolDefinition,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import RegexToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import (
    JsonlSearchLog,
    LoggedCalls,
    LoggedSearch,
    SearchLog,
    read_search_log,
)
from toolsearch.search.logs.reader import parse_part, session_part
from toolsearch.telemetry import hash_session_id

SEARCH = "toolSearchTool"

TOOLS = {
    "get_forecast": "Get the weather forecast for a city",
    "get_alerts": "List severe weather alerts for a region",
    "send_email": "Send an email to a recipient",
    "create_invoice": "Create an invoice for a customer",
    "refund_payment": "Refund a card payment",
}


def callbacks() -> list[FunctionToolCallback]:
    return [
        FunctionToolCallback.from_schema(
            lambda name=name: f"{name} done",
            name=name,
            description=description,
            input_schema={"type": "object", "properties": {}},
        )
        for name, description in TOOLS.items()
    ]


class Scripted:
    """A model that plays ``steps`` in order: ``("search", query)`` or ``("call", name)``,
    then answers; a call waits until its tool is visible (it searches the next query)."""

    def __init__(self, steps: Sequence[tuple[str, str]]) -> None:
        self.steps = list(steps)

    def __call__(self, messages: list[Any], tools: list[ToolDefinition]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn >= len(self.steps):
            return AssistantMessage(content="done")
        kind, text = self.steps[turn]
        if kind == "search":
            call = ToolCall(id=f"c{turn}", name=SEARCH, arguments=json.dumps({"query": text}))
        else:
            call = ToolCall(id=f"c{turn}", name=text, arguments="{}")
        return AssistantMessage(tool_calls=(call,))


def run(advisor: ToolSearchToolCallingAdvisor, steps, session: str | None = "user-1") -> None:
    client = ChatClient.builder(FunctionChatModel(Scripted(steps))).default_advisors(advisor)
    # the user asks in the words of the first search (the search log carries the request)
    words = next((text for kind, text in steps if kind == "search"), "help me")
    request = client.build().prompt(words).tools(callbacks())
    if session is not None:
        request = request.advisors(lambda a: a.param(CONVERSATION_ID, session))
    request.call()


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_advisor_logs_searches_calls_and_the_tool_set_once(tmp_path):
    path = tmp_path / "logs" / "searches.jsonl"
    log = JsonlSearchLog(path)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search_log=log)
    assert advisor.search_log is log
    assert not path.exists()  # nothing is written before the first search
    run(advisor, [("search", "weather"), ("call", "get_forecast"), ("search", "email")])
    run(advisor, [("search", "invoice")], session="user-2")
    records = lines(path)
    assert [r["type"] for r in records] == ["tools", "search", "calls", "search", "search"]
    tools = records[0]
    assert [t["name"] for t in tools["tools"]] == list(TOOLS)
    assert tools["tools"][0]["description"] == TOOLS["get_forecast"]
    first = records[1]
    assert first["v"] == 1
    assert first["session"] == hash_session_id("user-1")
    assert "user-1" not in path.read_text(encoding="utf-8")  # sessions only hashed
    assert first["query"] == "weather"
    assert first["index"] == "RegexToolIndex"
    assert first["tool_set"] == tools["tool_set"]
    assert {h["name"] for h in first["hits"]} == {"get_forecast", "get_alerts"}
    assert all(isinstance(h["score"], float) for h in first["hits"])
    assert first["loaded"] == []
    assert first["visible_tools"] == 1
    assert isinstance(first["time"], float)
    assert records[2]["names"] == ["get_forecast"]
    assert records[2]["session"] == first["session"]
    # the second search left out the two tools the model already had
    assert sorted(records[3]["loaded"]) == ["get_alerts", "get_forecast"]
    assert [h["name"] for h in records[3]["hits"]] == ["send_email"]
    assert records[4]["session"] == hash_session_id("user-2")


def test_reading_joins_each_call_to_the_search_that_returned_it(tmp_path):
    path = tmp_path / "searches.jsonl"
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=JsonlSearchLog(path)
    )
    run(
        advisor,
        [
            ("search", "weather"),
            ("search", "email"),
            ("call", "get_forecast"),  # returned by the first search
            ("call", "send_email"),  # by the second
            ("search", "refund"),  # never called: no label
        ],
    )
    run(advisor, [("search", "invoice"), ("call", "create_invoice")], session="user-2")
    contents = read_search_log(path)
    assert [(s.query, s.called) for s in contents.searches] == [
        ("weather", ("get_forecast",)),
        ("email", ("send_email",)),
        ("refund", ()),
        ("invoice", ("create_invoice",)),
    ]
    assert [s.query for s in contents.labeled] == ["weather", "email", "invoice"]
    assert contents.sessions == [hash_session_id("user-1"), hash_session_id("user-2")]
    [tool_set] = contents.tool_sets.values()
    assert [t.name for t in tool_set] == list(TOOLS)
    assert [t.name for t in contents.catalog_tools()] == list(TOOLS)
    assert contents.searches[1].loaded == ("get_forecast", "get_alerts")


def test_a_call_in_a_later_request_of_the_session_labels_the_earlier_search(tmp_path):
    path = tmp_path / "searches.jsonl"
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=JsonlSearchLog(path)
    )
    run(advisor, [("search", "alerts")])
    run(advisor, [("call", "get_alerts")])  # same conversation, the tool still loaded
    [search] = read_search_log(path).searches
    assert search.called == ("get_alerts",)


def test_ephemeral_sessions_are_logged_apart(tmp_path):
    path = tmp_path / "searches.jsonl"
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=JsonlSearchLog(path)
    )
    run(advisor, [("search", "weather"), ("call", "get_forecast")], session=None)
    run(advisor, [("search", "weather")], session=None)
    searches = read_search_log(path).searches
    assert len({s.session for s in searches}) == 2
    assert [s.called for s in searches] == [("get_forecast",), ()]


def test_a_refused_search_is_logged_with_its_error_and_left_out_when_read(tmp_path):
    path = tmp_path / "searches.jsonl"
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(mode="pattern"), search_log=JsonlSearchLog(path)
    )
    run(advisor, [("search", "a" * 300)])
    [record] = [r for r in lines(path) if r["type"] == "search"]
    assert record["error"] == "pattern_too_long"
    assert record["hits"] == []
    contents = read_search_log(path)
    assert contents.searches == ()
    assert contents.skipped == 1


def test_a_failing_search_log_never_fails_the_request(caplog):
    class Broken:
        def record_search(self, search: LoggedSearch) -> None:
            raise OSError("disk full")

        def record_calls(self, calls: LoggedCalls) -> None:
            raise OSError("disk full")

    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search_log=Broken())
    with caplog.at_level(logging.WARNING, logger="toolsearch.search.advisor"):
        run(advisor, [("search", "weather"), ("call", "get_forecast")])
    assert advisor.discovered_tools("user-1") == ["get_forecast", "get_alerts"]
    assert sum("search log" in r.getMessage() for r in caplog.records) == 2


def test_a_sink_of_my_own_needs_two_methods():
    got: list[Any] = []

    class Mine:
        def record_search(self, search: LoggedSearch) -> None:
            got.append(search.to_record())

        def record_calls(self, calls: LoggedCalls) -> None:
            got.append(calls.to_record())

    assert isinstance(Mine(), SearchLog)
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search_log=Mine())
    run(advisor, [("search", "refund"), ("call", "refund_payment")])
    assert [(r["type"], r.get("query"), r.get("names")) for r in got] == [
        ("search", "refund", None),
        ("calls", None, ["refund_payment"]),
    ]
    assert "tools" not in got[0]  # the definitions travel on the object, not in the record


def test_writes_from_many_threads_and_logs_of_one_path_make_whole_lines(tmp_path):
    path = tmp_path / "searches.jsonl"
    logs = [JsonlSearchLog(path), JsonlSearchLog(str(path))]  # one file handle for both
    tools = [ToolDefinition(name="t", description="d", input_schema={"type": "object"})]

    def write(worker: int) -> None:
        for i in range(200):
            log = logs[i % 2]
            log.record_search(
                LoggedSearch(
                    time=float(i),
                    session=f"{worker:016x}",
                    tool_set="abc",
                    query="ü" * 300 + str(i),
                    index="X",
                    search_type="x",
                    limit=5,
                    hits=(("t", 1.0),),
                    total_matches=1,
                    tools=tools,
                )
            )
            log.record_calls(LoggedCalls(float(i), f"{worker:016x}", "abc", ("t",)))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    logs[0].close()
    records = lines(path)
    assert len(records) == 1 + 6 * 200 * 2  # the tool set once
    assert sum(r["type"] == "tools" for r in records) == 1
    contents = read_search_log(path)
    assert len(contents.labeled) == 6 * 200


def test_a_log_without_tools_and_a_search_log_setting(tmp_path, monkeypatch):
    from toolsearch.settings import load_settings, tool_search_advisor

    bare = tmp_path / "bare.jsonl"
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=JsonlSearchLog(bare, tools=False)
    )
    run(advisor, [("search", "weather")])
    assert [r["type"] for r in lines(bare)] == ["search"]
    assert read_search_log(bare).tool_sets == {}

    config = tmp_path / "toolsearch.toml"
    target = tmp_path / "from-settings.jsonl"
    config.write_text(f'[tool_search]\nsearch_log = "{target.as_posix()}"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLSEARCH_CONFIG_FILE", str(config))
    configured = tool_search_advisor(load_settings().tool_search)
    assert isinstance(configured.search_log, JsonlSearchLog)
    assert configured.search_log.path == target
    monkeypatch.setenv("TOOLSEARCH_CONFIG_FILE", str(tmp_path / "none.toml"))
    assert tool_search_advisor(load_settings().tool_search).search_log is None


def test_malformed_lines_name_the_line_and_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / "searches.jsonl"
    good = {"type": "calls", "session": "a", "tool_set": "x", "names": ["t"]}
    path.write_text(json.dumps(good) + "\n" + "{oops\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"searches\.jsonl:2: not valid JSON"):
        read_search_log(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps({"type": "search"}) + "\n")
    with pytest.raises(ValueError, match=r"searches\.jsonl:2: a malformed 'search' line"):
        read_search_log(path)
    path.write_text(json.dumps(good) + "\n" + '{"type": "search", "sess')  # a crash mid-line
    assert read_search_log(path).searches == ()


def test_session_parts_split_every_session_into_exactly_one_part():
    sessions = [hash_session_id(f"user-{i}") for i in range(400)]
    halves = [[s for s in sessions if session_part(s, (k, 2))] for k in (1, 2)]
    assert sorted(halves[0] + halves[1]) == sorted(sessions)
    assert 150 < len(halves[0]) < 250
    assert all(session_part(s, None) for s in sessions)
    assert parse_part("2/3") == (2, 3)
    for bad in ("0/2", "3/2", "half", "1/0"):
        with pytest.raises(ValueError, match="K/N"):
            parse_part(bad)


def test_a_torn_last_line_then_new_appends_leave_the_log_readable(tmp_path, caplog):
    """A crash cut the last line short; a restarted process appends to the same log. The
    writer starts its records on a line of their own, and the reader skips a fragment
    that an older writer joined to the next record, reading that record."""
    path = tmp_path / "searches.jsonl"
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=JsonlSearchLog(path)
    )
    run(advisor, [("search", "weather"), ("call", "get_forecast")])
    JsonlSearchLog(path).close()
    text = path.read_text(encoding="utf-8")
    path.write_text(text + '{"v":1,"type":"search","sess', encoding="utf-8")  # the crash
    from toolsearch.search.logs import sink as search_log

    search_log._writers.clear()  # a new process: no open handle, no tool sets written yet
    again = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=JsonlSearchLog(path)
    )
    run(again, [("search", "invoice"), ("call", "create_invoice")], session="user-2")

    contents = read_search_log(path)
    assert [(s.query, s.called) for s in contents.searches] == [
        ("weather", ("get_forecast",)),
        ("invoice", ("create_invoice",)),
    ]
    # and a log written before this fix, with the fragment joined to the next record:
    joined = text + '{"v":1,"type":"search","sess' + text.splitlines(keepends=True)[-1]
    path.write_text(joined, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert len(read_search_log(path).searches) == 1
    assert "cut short by a crash" in caplog.text


def test_a_huge_query_is_logged_as_far_as_the_index_reads_it(tmp_path):
    from toolsearch.search.types import MAX_QUERY_LENGTH

    path = tmp_path / "searches.jsonl"
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=JsonlSearchLog(path)
    )
    run(advisor, [("search", "weather " * 1_250_000)])  # a 10 MB query

    [search] = [line for line in lines(path) if line["type"] == "search"]
    assert len(search["query"]) == MAX_QUERY_LENGTH
    assert path.stat().st_size < 200_000


def test_the_usage_memory_setting_learns_from_a_real_turn_and_saves(tmp_path, monkeypatch):
    """``TOOLSEARCH_TOOL_SEARCH__USAGE_MEMORY``: the configured advisor ranks through a
    learned index and feeds the memory beside the JSONL log; a successful call is learned."""
    from toolsearch.indexes.learning.learned import LearnedToolIndex
    from toolsearch.indexes.learning.memory import UsageMemory
    from toolsearch.search.logs.sink import TeeSearchLog
    from toolsearch.settings import load_settings, tool_search_advisor

    memory_file = tmp_path / "usage.json"
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__INDEX_TYPE", "regex")
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__SEARCH_LOG", str(tmp_path / "log.jsonl"))
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__USAGE_MEMORY", str(memory_file))
    monkeypatch.setenv("TOOLSEARCH_TOOL_SEARCH__USAGE_MEMORY_AUTOSAVE_EVERY", "1")
    advisor = tool_search_advisor(load_settings().tool_search)
    assert isinstance(advisor.tool_index, LearnedToolIndex)
    assert isinstance(advisor.search_log, TeeSearchLog)
    run(advisor, [("search", "weather"), ("call", "get_forecast")])
    learned = UsageMemory.load(memory_file)
    [tool_set] = learned.tool_sets()
    assert [r.text for r in learned.requests(tool_set, "get_forecast")] == ["weather"]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
