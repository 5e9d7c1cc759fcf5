"""The usage memory: per tool set and tool, the requests that led to a successful call;
bounded, decayed, flood-resistant, deduplicated, persisted, and rebuilt from a search log
exactly as it learns live. Offline and deterministic (an injected clock)."""

from __future__ import annotations

import dataclasses
import json
import logging
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
from toolsearch.indexes.learning.memory import (
    USAGE_FORMAT,
    UsageMemory,
    UsageMemoryError,
    UsageParams,
    catalog_digest,
    normalize_request,
)
from toolsearch.models import FunctionChatModel
from toolsearch.observe import hash_session_id
from toolsearch.search.logs.reader import iter_search_log, read_search_log
from toolsearch.search.logs.sink import JsonlSearchLog, LoggedCalls, LoggedSearch, TeeSearchLog

# search mechanics on a few tools: the plain search loop (tests/conftest.py, cold_search)
pytestmark = pytest.mark.cold_search

DAY = 86_400.0
T0 = 1_700_000_000.0
SET = "digest0"
SEARCH = "toolSearchTool"


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def texts(memory: UsageMemory, tool: str | None = None, tool_set: str = SET) -> list[str]:
    return sorted(r.text for r in memory.requests(tool_set, tool))


def contents(memory: UsageMemory) -> list[tuple[Any, ...]]:
    return sorted(
        (s, r.tool, r.text, round(r.weight, 9), r.support, r.last)
        for s in memory.tool_sets()
        for r in memory.requests(s)
    )


def search(session: str, query: str, hits: Sequence[str], at: float) -> LoggedSearch:
    return LoggedSearch(
        time=at,
        session=session,
        tool_set=SET,
        query=query,
        index="X",
        search_type="x",
        limit=5,
        hits=tuple((h, 1.0) for h in hits),
        total_matches=len(hits),
    )


# -- bounds, decay, floods, duplicates ---------------------------------------------------


def test_a_tool_keeps_at_most_max_per_tool_requests_the_oldest_go_first():
    memory = UsageMemory(params=UsageParams(max_per_tool=4, half_life_days=None))
    for i in range(6):
        assert memory.learn(SET, "t", f"request {i}", session=f"s{i}", time=T0 + i)
    assert texts(memory, "t") == [f"request {i}" for i in range(2, 6)]


def test_weights_halve_every_half_life_in_days_or_in_later_events():
    clock = Clock()
    memory = UsageMemory(params=UsageParams(half_life_days=2.0), clock=clock)
    memory.learn(SET, "t", "old request", session="a", time=T0)
    clock.now = T0 + 2 * DAY
    (request,) = memory.requests(SET)
    assert request.weight == pytest.approx(0.5)
    clock.now = T0 + 4 * DAY
    assert memory.requests(SET)[0].weight == pytest.approx(0.25)

    by_events = UsageMemory(params=UsageParams(half_life_days=None, half_life_events=2))
    by_events.learn(SET, "t", "first", session="a", time=T0)
    for i in range(2):
        by_events.learn(SET, "u", f"later {i}", session=f"b{i}", time=T0 + 1 + i)
    weights = {r.text: r.weight for r in by_events.requests(SET)}
    assert weights["first"] == pytest.approx(0.5)
    assert weights["later 1"] == pytest.approx(1.0)


def test_a_full_tool_drops_its_most_decayed_request_not_the_oldest_made():
    memory = UsageMemory(params=UsageParams(max_per_tool=2, half_life_days=1.0))
    memory.learn(SET, "t", "made first, made again", session="a", time=T0)
    memory.learn(SET, "t", "made once", session="b", time=T0 + DAY)
    memory.learn(SET, "t", "made first, made again", session="c", time=T0 + 5 * DAY)
    memory.learn(SET, "t", "newest", session="d", time=T0 + 6 * DAY)
    assert texts(memory, "t") == ["made first, made again", "newest"]


def test_one_session_cannot_flood_a_tool_or_a_tool_set():
    params = UsageParams(per_session_per_tool=2, session_floor=3, max_session_share=0.25)
    memory = UsageMemory(params=params)
    learned = [memory.learn(SET, "t", f"spam {i}", session="flood", time=T0 + i) for i in range(5)]
    assert learned == [True, True, False, False, False]
    assert not memory.learn(SET, "t", "spam 0", session="flood", time=T0 + 9)  # a repeat
    # across tools: the floor (3) first, then a quarter of the tool set's entries
    assert memory.learn(SET, "u", "spam u", session="flood", time=T0 + 10)
    assert not memory.learn(SET, "v", "spam v", session="flood", time=T0 + 11)
    for i in range(10):
        memory.learn(SET, f"w{i}", "honest request", session=f"user{i}", time=T0 + 20 + i)
    assert memory.learn(SET, "v", "spam v", session="flood", time=T0 + 40)  # 4 <= 13 / 4
    assert memory.stats()["sessions"] == 11


def test_a_request_made_again_is_one_entry_with_more_support():
    memory = UsageMemory()
    memory.learn(SET, "t", "Weather in  Paris", session="a", time=T0)
    memory.learn(SET, "t", "weather in paris ", session="b", time=T0 + 1)
    memory.learn(SET, "t", "WEATHER IN PARIS", session="b", time=T0 + 2)  # b again: no more
    (request,) = memory.requests(SET, "t")
    assert request.text == "Weather in  Paris"  # the first wording is kept
    assert (request.support, request.last) == (2, T0 + 1)
    assert normalize_request("  A\tB ") == "a b"
    assert not memory.learn(SET, "t", "   ", session="c", time=T0)


def test_min_sessions_keeps_a_tool_out_until_enough_sessions_taught_it():
    memory = UsageMemory(params=UsageParams(min_sessions=2))
    memory.learn(SET, "t", "one user says this", session="a", time=T0)
    assert memory.requests(SET) == ()
    memory.learn(SET, "t", "another user says that", session="b", time=T0 + 1)
    assert len(memory.requests(SET)) == 2


def test_forget_session_deletes_what_only_that_session_said():
    memory = UsageMemory()
    memory.learn(SET, "t", "shared request", session="a", time=T0)
    memory.learn(SET, "t", "shared request", session="b", time=T0 + 1)
    memory.learn(SET, "t", "private request", session="a", time=T0 + 2)
    before = memory.version(SET)
    assert memory.forget_session("a") == 1
    assert texts(memory) == ["shared request"]
    assert memory.requests(SET)[0].support == 1
    assert memory.version(SET) > before


# -- only successful calls, joined as the search log joins them ----------------------------


def test_only_a_successful_call_of_a_hit_teaches_its_search():
    memory = UsageMemory()
    memory.record_search(search("s1", "weather please", ["forecast", "alerts"], T0))
    memory.record_calls(LoggedCalls(T0 + 1, "s1", SET, ("forecast",), (False,)))
    assert texts(memory) == []
    memory.record_calls(LoggedCalls(T0 + 2, "s1", SET, ("forecast",), None))  # not recorded
    assert texts(memory) == []
    memory.record_calls(LoggedCalls(T0 + 3, "s1", SET, ("unknown", "forecast"), (True, True)))
    assert texts(memory, "forecast") == ["weather please"]
    memory.record_calls(LoggedCalls(T0 + 4, "s2", SET, ("alerts",), (True,)))  # other session
    assert texts(memory, "alerts") == []
    refused = dataclasses.replace(search("s1", "bad", ["alerts"], T0 + 5), error="invalid")
    memory.record_search(refused)
    memory.record_calls(LoggedCalls(T0 + 6, "s1", SET, ("alerts",), (True,)))
    assert texts(memory, "alerts") == ["weather please"]  # the refused search taught nothing


def test_calls_teach_the_latest_earlier_search_not_one_of_their_own_turn():
    params = UsageParams(count_unknown_outcomes=True, turn_searches=0)  # the join alone
    memory = UsageMemory(params=params)
    memory.record_search(search("s", "first words", ["t"], T0))
    memory.record_search(search("s", "second words", ["t"], T0 + 10))
    memory.record_search(search("s", "same turn", ["t"], T0 + 21))  # after the turn began
    memory.record_calls(LoggedCalls(T0 + 20, "s", SET, ("t",), (True,)))
    assert texts(memory) == ["second words"]
    memory.record_calls(LoggedCalls(T0 + 30, "s", SET, ("t",), None))  # an old-style line
    assert texts(memory) == ["same turn", "second words"]
    # by default the turn's other searches teach too (never a later turn's)
    memory = UsageMemory(params=UsageParams(count_unknown_outcomes=True))
    memory.record_search(search("s", "first words", ["t"], T0))
    memory.record_search(search("s", "second words", ["t"], T0 + 10))
    memory.record_search(search("s", "same turn", ["t"], T0 + 21))
    memory.record_calls(LoggedCalls(T0 + 20, "s", SET, ("t",), (True,)))
    assert texts(memory) == ["first words", "second words"]


def tools() -> list[FunctionToolCallback]:
    def fail(arguments: dict[str, Any]) -> str:
        raise RuntimeError("service down")

    specs = {
        "get_forecast": ("Get the weather forecast for a city", lambda _: "sunny"),
        "send_email": ("Send an email to a recipient", fail),
        "create_invoice": ("Create an invoice for a customer", lambda _: "invoice 7"),
    }
    return [
        FunctionToolCallback.from_schema(
            function, name=name, description=text, input_schema={"type": "object"}
        )
        for name, (text, function) in specs.items()
    ]


def chat(advisor: ToolSearchToolCallingAdvisor, steps: Sequence[tuple[str, str]], session: str):
    def script(messages: list[Any], _tools: list[ToolDefinition]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn >= len(steps):
            return AssistantMessage(content="done")
        kind, text = steps[turn]
        name, arguments = (
            (SEARCH, json.dumps({"query": text})) if kind == "search" else (text, "{}")
        )
        return AssistantMessage(
            tool_calls=(ToolCall(id=f"c{turn}", name=name, arguments=arguments),)
        )

    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    # the user asks in the words of the first search (the search log carries the request)
    request = next((text for kind, text in steps if kind == "search"), "help")
    client.prompt(request).tools(tools()).advisors(
        lambda a: a.param(CONVERSATION_ID, session)
    ).call()


def test_the_advisor_logs_outcomes_and_the_memory_learns_only_successes(tmp_path, caplog):
    path = tmp_path / "searches.jsonl"
    memory = UsageMemory(clock=Clock())
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=TeeSearchLog(JsonlSearchLog(path), memory)
    )
    with caplog.at_level(logging.WARNING):
        chat(advisor, [("search", "weather"), ("call", "get_forecast")], "user-1")
        chat(advisor, [("search", "email"), ("call", "send_email")], "user-2")  # it raises
    digest = catalog_digest(cb.definition for cb in tools())
    assert texts(memory, tool_set=digest) == ["weather"]
    calls = [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "calls"]
    assert [(c["names"], c["ok"]) for c in calls] == [
        (["get_forecast"], [True]),
        (["send_email"], [False]),
    ]
    labeled = read_search_log(path).labeled
    assert [(s.called, s.outcomes, s.succeeded) for s in labeled] == [
        (("get_forecast",), (True,), ("get_forecast",)),
        (("send_email",), (False,), ()),
    ]


def test_the_async_loop_records_outcomes_too():
    import asyncio

    memory = UsageMemory(clock=Clock())
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), search_log=memory)
    steps = [("search", "weather"), ("call", "get_forecast"), ("search", "email")]
    steps += [("call", "send_email")]

    def script(messages: list[Any], _tools: list[ToolDefinition]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn >= len(steps):
            return AssistantMessage(content="done")
        kind, text = steps[turn]
        name, arguments = (
            (SEARCH, json.dumps({"query": text})) if kind == "search" else (text, "{}")
        )
        return AssistantMessage(
            tool_calls=(ToolCall(id=f"c{turn}", name=name, arguments=arguments),)
        )

    client = ChatClient.builder(FunctionChatModel(script)).default_advisors(advisor).build()
    request = (
        client.prompt("weather").tools(tools()).advisors(lambda a: a.param(CONVERSATION_ID, "u"))
    )
    asyncio.run(request.acall())
    digest = catalog_digest(cb.definition for cb in tools())
    assert [(r.tool, r.text) for r in memory.requests(digest)] == [("get_forecast", "weather")]


def test_old_log_lines_without_outcomes_still_read(tmp_path):
    path = tmp_path / "old.jsonl"
    old = [
        {
            "v": 1,
            "type": "search",
            "time": T0,
            "session": "s",
            "tool_set": SET,
            "query": "q",
            "hits": [{"name": "t", "score": 1.0}],
        },
        {"v": 1, "type": "calls", "time": T0 + 1, "session": "s", "tool_set": SET, "names": ["t"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    (labeled,) = read_search_log(path).searches
    assert (labeled.called, labeled.outcomes, labeled.succeeded) == (("t",), (None,), ())
    records = list(iter_search_log(path))
    assert isinstance(records[1], LoggedCalls)
    assert records[1].ok is None
    assert UsageMemory().replay(path).learned == 0
    lenient = UsageMemory(params=UsageParams(count_unknown_outcomes=True))
    assert lenient.replay(path).learned == 1


def test_rebuilding_from_the_log_equals_learning_live(tmp_path):
    path = tmp_path / "searches.jsonl"
    clock = Clock(T0 + 10 * DAY)
    live = UsageMemory(clock=clock, params=UsageParams(half_life_days=1.0, max_per_tool=2))
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=RegexToolIndex(), search_log=TeeSearchLog(JsonlSearchLog(path), live)
    )
    plays = [
        [("search", "weather"), ("call", "get_forecast")],
        [("search", "forecast"), ("call", "get_forecast"), ("search", "invoice")],
        [("search", "invoice"), ("call", "create_invoice"), ("call", "create_invoice")],
        [("search", "email"), ("call", "send_email")],
        [("search", "weather forecast"), ("call", "get_forecast")],
    ]
    for steps, session in zip(plays, ["u0", "u1", "u2", "u0", "u3"], strict=True):
        chat(advisor, steps, session)
    rebuilt = UsageMemory(clock=clock, params=live.params)
    stats = rebuilt.replay(path)
    assert (stats.searches, stats.calls, stats.learned) == (6, 6, 4)
    assert contents(rebuilt) == contents(live)
    assert len(contents(live)) == 3  # max_per_tool=2 dropped one of get_forecast's three
    assert texts(live, "get_forecast", tool_set=contents(live)[0][0]) == [
        "forecast",
        "weather forecast",
    ]


# -- persistence ---------------------------------------------------------------------------


def test_a_saved_memory_loads_the_same_lazily(tmp_path):
    path = tmp_path / "idx" / "usage.json"
    clock = Clock(T0 + DAY)
    memory = UsageMemory(path, clock=clock)
    memory.learn(SET, "t", "naïve request ✓", session=hash_session_id("u"), time=T0)
    memory.learn("other", "u", "another", session="x", time=T0 + 5)
    assert memory.save() == path
    # no staging file left (the lock file beside it is how processes merge in turn)
    assert sorted(p.name for p in path.parent.iterdir()) == [".usage.json.lock", "usage.json"]
    document = json.loads(path.read_text(encoding="utf-8"))
    assert (document["format"], document["version"]) == (USAGE_FORMAT, 1)
    again = UsageMemory(path, clock=clock)
    path.rename(path.with_suffix(".moved"))  # read on first use, not at construction
    path.with_suffix(".moved").rename(path)
    assert contents(again) == contents(memory)
    assert again.version(SET) > 0
    assert UsageMemory(tmp_path / "missing.json").stats()["requests"] == 0


def test_autosave_writes_after_so_many_learned_requests(tmp_path):
    path = tmp_path / "usage.json"
    memory = UsageMemory(path, autosave_every=2)
    memory.learn(SET, "t", "one", session="a", time=T0)
    assert not path.exists()
    memory.learn(SET, "t", "two", session="b", time=T0)
    assert len(UsageMemory.load(path).requests(SET)) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps([1, 2]), "not a usage memory file"),
        (json.dumps({"format": "something-else", "version": 1}), "not a usage memory file"),
        (json.dumps({"format": USAGE_FORMAT, "version": 99, "tool_sets": {}}), "newer"),
        (json.dumps({"format": USAGE_FORMAT, "version": 1, "tool_sets": {"d": {}}}), "malformed"),
    ],
)
def test_a_corrupt_or_foreign_file_is_a_clear_error_and_is_never_overwritten(
    tmp_path: Path, content: str, message: str
):
    path = tmp_path / "usage.json"
    path.write_text(content, encoding="utf-8")
    memory = UsageMemory(path)  # lazily: nothing read yet
    with pytest.raises(UsageMemoryError, match=message) as raised:
        memory.requests(SET)
    assert str(path) in str(raised.value)
    with pytest.raises(UsageMemoryError):
        memory.learn(SET, "t", "x", session="a", time=T0)
    with pytest.raises(UsageMemoryError):
        memory.save()
    assert path.read_text(encoding="utf-8") == content
    with pytest.raises(UsageMemoryError):
        UsageMemory.load(path)


def test_params_are_checked():
    with pytest.raises(ValueError, match="at least 1"):
        UsageParams(max_per_tool=0)
    with pytest.raises(ValueError, match="half-life"):
        UsageParams(half_life_days=0)
    with pytest.raises(ValueError, match="share"):
        UsageParams(max_session_share=0)
    with pytest.raises(ValueError, match="no path"):
        UsageMemory().save()


# -- the command line ----------------------------------------------------------------------


def test_the_learn_command_rebuilds_a_memory_from_a_log(tmp_path):
    import typer
    from typer.testing import CliRunner

    from toolsearch.catalog.cli.learn import learn_command

    log = tmp_path / "searches.jsonl"
    records = [
        search("s1", "weather please", ["forecast"], T0).to_record(),
        LoggedCalls(T0 + 1, "s1", SET, ("forecast",), (True,)).to_record(),
        search("s2", "mail my boss", ["email"], T0 + 2).to_record(),
        LoggedCalls(T0 + 3, "s2", SET, ("email",), (False,)).to_record(),
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    app = typer.Typer()
    app.command("learn")(learn_command)
    app.command("other")(lambda: None)  # two commands: "learn" is a subcommand
    out = tmp_path / "index" / "usage.json"
    result = CliRunner().invoke(app, ["learn", str(log), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "requests learned" in result.output
    assert "user request text" in result.output
    assert texts(UsageMemory.load(out)) == ["weather please"]
    again = CliRunner().invoke(app, ["learn", str(log), "--out", str(out), "--append"])
    assert again.exit_code == 0
    assert texts(UsageMemory.load(out)) == ["weather please"]  # the same session: once
    missing = CliRunner().invoke(app, ["learn", str(tmp_path / "none.jsonl"), "--out", str(out)])
    assert missing.exit_code == 1
    assert "no search log" in missing.output
    bad = CliRunner().invoke(app, ["learn", str(log), "--out", str(out), "--max-per-tool", "0"])
    assert bad.exit_code == 2
