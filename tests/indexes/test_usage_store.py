"""The usage memory behind its store seam (issue 45): several processes learn into one
memory (a file, Redis) with nothing lost, a restart keeps it, it is saved on close and at
exit, editing one tool forgets only that tool's learning, the warm set, learning the
turn's other searches, and shadow serving."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from toolsearch import ToolDefinition
from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder
from toolsearch.indexes.learning.learned import LearnedToolIndex
from toolsearch.indexes.learning.memory import UsageMemory, UsageParams, catalog_digest
from toolsearch.indexes.learning.store import InMemoryUsageStore
from toolsearch.search import ToolSearchRequest
from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch

T0 = 1_700_000_000.0
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    ToolDefinition(name=n, description=d, input_schema=SCHEMA)
    for n, d in [
        ("get_weather", "Get the weather in a city"),
        ("send_email", "Send an email to a recipient"),
        ("book_flight", "Book a flight between two airports"),
    ]
]
DIGEST = catalog_digest(TOOLS)
ROOT = Path(__file__).resolve().parents[2]

WORKER = """
import sys
from toolsearch.indexes.learning.memory import UsageMemory, UsageParams
from toolsearch.indexes.learning.redis_store import RedisUsageStore
kind, where, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
params = UsageParams(max_per_tool=1_000, session_floor=1_000)
if kind == "file":
    memory = UsageMemory(where, autosave_every=7, params=params)
else:
    store = RedisUsageStore(where, namespace=sys.argv[5])
    memory = UsageMemory(store=store, autosave_every=7, params=params)
for i in range(count):
    at = 1.0 + i
    memory.learn("tools", "send_email", f"{name} request {i}", session=f"{name}-{i}", time=at)
    if kind == "file" and i % 10 == 0:
        memory.learn("tools", "get_weather", f"{name} weather {i}", session=f"w{name}{i}", time=at)
# no save(): what is left is saved at exit
"""


def workers(kind: str, where: str, *extra: str, count: int = 50) -> None:
    script = textwrap.dedent(WORKER)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, kind, where, name, str(count), *extra], env=env
        )
        for name in ("a", "b")
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]


def every_text(memory: UsageMemory) -> set[str]:
    return {r.text for r in memory.requests("tools")}


def test_two_processes_learn_into_one_file_with_nothing_lost(tmp_path):
    path = tmp_path / "usage.json"
    workers("file", str(path))
    memory = UsageMemory(path, params=UsageParams(max_per_tool=1_000, session_floor=1_000))
    texts = every_text(memory)
    assert {f"{n} request {i}" for n in "ab" for i in range(50)} <= texts
    assert len(texts) == 110  # and both processes' weather requests


def test_two_processes_learn_into_one_redis_memory_and_a_restart_keeps_it(redis_url):
    from toolsearch.indexes.learning.redis_store import RedisUsageStore

    namespace = f"usage-{uuid.uuid4().hex[:10]}"
    store = RedisUsageStore(redis_url, namespace=namespace)
    try:
        workers("redis", redis_url, namespace)
        params = UsageParams(max_per_tool=1_000, session_floor=1_000)
        restarted = UsageMemory(
            store=RedisUsageStore(redis_url, namespace=namespace), params=params
        )
        assert every_text(restarted) == {f"{n} request {i}" for n in "ab" for i in range(50)}
    finally:
        store.clear()


def test_memories_sharing_a_store_see_each_others_learning_after_a_save():
    store = InMemoryUsageStore()
    one, two = UsageMemory(store=store), UsageMemory(store=store)
    one.learn("tools", "send_email", "mail bob", session="a", time=T0)
    two.learn("tools", "send_email", "mail alice", session="b", time=T0)
    one.save()
    two.save()
    assert every_text(two) == {"mail bob", "mail alice"}
    one.save()
    assert every_text(one) == {"mail bob", "mail alice"}


def test_a_memory_is_saved_on_close(tmp_path):
    path = tmp_path / "usage.json"
    memory = UsageMemory(path)
    memory.learn("tools", "send_email", "mail bob", session="a", time=T0)
    memory.close()
    assert every_text(UsageMemory(path)) == {"mail bob"}


def test_forgetting_a_session_is_not_undone_by_the_stores_copy(tmp_path):
    path = tmp_path / "usage.json"
    memory = UsageMemory(path)
    memory.learn("tools", "send_email", "mail bob", session="a", time=T0)
    memory.learn("tools", "send_email", "mail carol", session="b", time=T0)
    memory.save()
    memory.forget_session("a")
    memory.save()
    assert every_text(UsageMemory(path)) == {"mail carol"}


def test_editing_one_tool_forgets_only_that_tools_learning():
    memory = UsageMemory(clock=lambda: T0)
    index = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(64))
    index.index_tools("s", TOOLS)
    index.search(ToolSearchRequest("s", "anything", 3))  # the memory notes the tool set
    for tool, text in [("send_email", "ping dana"), ("get_weather", "umbrella needed")]:
        memory.record_search(
            LoggedSearch(T0, "x", DIGEST, text, "i", "t", 5, ((tool, 1.0),), 1, tools=TOOLS)
        )
        memory.record_calls(LoggedCalls(T0 + 1, "x", DIGEST, (tool,), (True,)))
    edited = [
        *TOOLS[:2],
        ToolDefinition(
            name="book_flight", description="Book a train or a flight", input_schema=SCHEMA
        ),
    ]
    reworded = [
        ToolDefinition(name="get_weather", description="Forecast for a city", input_schema=SCHEMA),
        *TOOLS[1:],
    ]
    for tools, kept in [(edited, {"send_email", "get_weather"}), (reworded, {"send_email"})]:
        digest = catalog_digest(tools)
        assert memory.adopt(tools)
        assert {r.tool for r in memory.requests(digest)} == kept


def test_the_warm_set_is_the_most_used_tools_with_their_success():
    memory = UsageMemory(clock=lambda: T0 + 10)
    for i, (names, ok) in enumerate(
        [
            (("send_email",), (True,)),
            (("send_email", "get_weather"), (True, False)),
            (("get_weather",), (True,)),
            (("send_email",), (True,)),
        ]
    ):
        memory.record_calls(LoggedCalls(T0 + i, f"s{i}", DIGEST, names, ok))
    from toolsearch.search.working_set.warm import WarmSetSource

    assert isinstance(memory, WarmSetSource)
    warm = memory.warm_tools(TOOLS, limit=5)
    assert [w.name for w in warm] == ["send_email", "get_weather"]
    assert warm[0].success_rate == pytest.approx(1.0)
    assert warm[1].success_rate == pytest.approx(0.5, abs=0.01)
    assert memory.warm_tools(TOOLS, limit=1)[0].name == "send_email"
    assert memory.warm_tools(TOOLS[:1]) == []  # a tool set it never saw


def test_with_turn_searches_the_words_that_failed_to_find_a_tool_are_learned():
    for turn_searches, expected in [
        (0, {"flights to lisbon"}),
        (3, {"get me to lisbon friday", "flights to lisbon"}),
    ]:
        memory = UsageMemory(params=UsageParams(turn_searches=turn_searches))
        memory.record_search(
            LoggedSearch(
                T0, "x", DIGEST, "get me to lisbon friday", "i", "t", 5, (("get_weather", 1.0),), 1
            )
        )
        memory.record_search(
            LoggedSearch(
                T0 + 1, "x", DIGEST, "flights to lisbon", "i", "t", 5, (("book_flight", 1.0),), 1
            )
        )
        memory.record_calls(LoggedCalls(T0 + 2, "x", DIGEST, ("book_flight",), (True,)))
        # a later turn's search is not this call's turn
        memory.record_search(
            LoggedSearch(T0 + 3, "x", DIGEST, "and the weather", "i", "t", 5, (), 0)
        )
        memory.record_calls(LoggedCalls(T0 + 4, "x", DIGEST, ("book_flight",), (True,)))
        assert {r.text for r in memory.requests(DIGEST, "book_flight")} == expected


def test_a_search_that_found_another_called_tool_does_not_teach_this_one():
    # the turn: the user's words find get_weather, a second search finds book_flight;
    # both are called. The second search was looking for book_flight, not get_weather.
    memory = UsageMemory(params=UsageParams(turn_searches=3))
    for i, (query, hit) in enumerate(
        [("weather in lisbon and a flight there", "get_weather"), ("book a flight", "book_flight")]
    ):
        memory.record_search(
            LoggedSearch(T0 + i, "x", DIGEST, query, "i", "t", 5, ((hit, 1.0),), 1)
        )
    names = ("get_weather", "book_flight")
    memory.record_calls(LoggedCalls(T0 + 2, "x", DIGEST, names, (True, True)))
    assert {r.text for r in memory.requests(DIGEST, "get_weather")} == {
        "weather in lisbon and a flight there"
    }
    assert {r.text for r in memory.requests(DIGEST, "book_flight")} == {"book a flight"}


def test_the_users_request_of_the_turn_teaches_every_tool_called_in_it():
    memory = UsageMemory(params=UsageParams(turn_searches=3))
    user = "weather in lisbon and a flight there"
    for i, (query, hit) in enumerate([(user, "get_weather"), ("book a flight", "book_flight")]):
        memory.record_search(
            LoggedSearch(T0 + i, "x", DIGEST, query, "i", "t", 5, ((hit, 1.0),), 1, request=user)
        )
    names = ("get_weather", "book_flight")
    memory.record_calls(LoggedCalls(T0 + 2, "x", DIGEST, names, (True, True)))
    assert {r.text for r in memory.requests(DIGEST, "get_weather")} == {user}
    assert {r.text for r in memory.requests(DIGEST, "book_flight")} == {"book a flight", user}


def test_a_memory_marked_not_served_ranks_cold_and_reports_what_it_would_serve():
    memory = UsageMemory(clock=lambda: T0)
    index = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(256))
    index.index_tools("s", TOOLS)
    cold = [
        r.tool_name
        for r in index.search(ToolSearchRequest("s", "ping dana about the trip", 3)).tool_references
    ]
    for i in range(3):
        memory.learn(DIGEST, "send_email", "ping dana about the trip", session=f"s{i}", time=T0)
    warm = [
        r.tool_name
        for r in index.search(ToolSearchRequest("s", "ping dana about the trip", 3)).tool_references
    ]
    assert warm[0] == "send_email"
    assert warm != cold
    seen: list[tuple[str, list[str], list[str]]] = []
    index.ranker.shadow_listener = lambda q, served, would: seen.append((q, served, would))
    memory.set_serving(DIGEST, False)
    again = [
        r.tool_name
        for r in index.search(ToolSearchRequest("s", "ping dana about the trip", 3)).tool_references
    ]
    assert again == cold
    assert seen
    assert seen[-1][2][0] == "send_email"


# -- shadow evaluation on a held-back tail ----------------------------------------------------


def _log_of(tmp_path: Path, head: tuple[str, str], tail: tuple[str, str], n: int = 10) -> Path:
    """A search log: ``n`` sessions searching ``head[0]`` and calling ``head[1]``, then
    ``n // 4`` searching ``tail[0]`` and calling ``tail[1]`` (every search returns every
    tool)."""
    from toolsearch.search.logs.sink import JsonlSearchLog

    path = tmp_path / f"searches-{head[1]}-{tail[1]}.jsonl"
    log = JsonlSearchLog(path)
    hits = tuple((t.name, 1.0) for t in TOOLS)
    rows = [head] * n + [tail] * (n // 4)
    for i, (query, tool) in enumerate(rows):
        at = T0 + 10 * i
        log.record_search(
            LoggedSearch(at, f"u{i}", DIGEST, query, "i", "t", 5, hits, 3, tools=TOOLS)
        )
        log.record_calls(LoggedCalls(at + 1, f"u{i}", DIGEST, (tool,), (True,)))
    log.close()
    return path


def test_the_learn_command_evaluates_a_held_back_tail_and_only_serves_what_helps(tmp_path):
    import typer
    from typer.testing import CliRunner

    from toolsearch.catalog.cli.learn import learn_command

    app = typer.Typer()
    app.command("learn")(learn_command)
    app.command("other")(lambda: None)
    out = tmp_path / "usage.json"
    helps = _log_of(tmp_path, ("ping dana", "send_email"), ("ping dana", "send_email"))
    result = CliRunner().invoke(
        app, ["learn", str(helps), "--out", str(out), "--evaluate", "--index", "bm25", "-k", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "cold" in result.output
    assert "+100.0" in result.output
    assert UsageMemory(out).serving(DIGEST)

    cold = LearnedToolIndex(Bm25ToolIndex(), memory=UsageMemory())
    cold.index_tools("c", TOOLS)
    top = cold.search(ToolSearchRequest("c", "flight city", 1)).tool_references[0].tool_name
    other = next(n for n in ("get_weather", "book_flight") if n != top)
    hurts = _log_of(tmp_path, ("flight city", other), ("flight city", top))
    result = CliRunner().invoke(
        app, ["learn", str(hurts), "--out", str(out), "--evaluate", "--index", "bm25", "-k", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "no (shadow)" in result.output
    assert not UsageMemory(out).serving(DIGEST)


def test_the_settings_build_a_redis_memory_with_a_tenant_text_free_and_shadow(
    redis_url, monkeypatch
):
    from toolsearch.indexes.learning.redis_store import RedisUsageStore
    from toolsearch.settings import load_settings, tool_search_advisor

    for name in list(__import__("os").environ):
        if name.startswith("TOOLSEARCH_"):
            monkeypatch.delenv(name)
    namespace = f"usage-{uuid.uuid4().hex[:10]}"
    for key, value in {
        "INDEX_TYPE": "bm25",
        "USAGE_MEMORY_REDIS_URL": redis_url,
        "USAGE_MEMORY_NAMESPACE": namespace,
        "USAGE_MEMORY_TENANT": "acme",
        "USAGE_MEMORY_STORE_TEXT": "false",
        "USAGE_MEMORY_SHADOW": "true",
    }.items():
        monkeypatch.setenv(f"TOOLSEARCH_TOOL_SEARCH__{key}", value)
    advisor = tool_search_advisor(load_settings().tool_search)
    index = advisor.tool_index
    assert isinstance(index, LearnedToolIndex)
    assert index.params.shadow
    memory = index.memory
    assert isinstance(memory.store, RedisUsageStore)
    assert memory.store.key == f"{namespace}:usage"
    assert memory.params.tenant == "acme"
    assert not memory.params.store_text
    assert advisor.search_log is memory


def test_a_recorded_user_request_is_learned_beside_the_search_that_found_the_tool():
    memory = UsageMemory()
    record = LoggedSearch(
        T0,
        "x",
        DIGEST,
        "flights",
        "i",
        "t",
        5,
        (("book_flight", 1.0),),
        1,
        request="get me to lisbon on friday",
    )
    assert LoggedSearch.from_record(record.to_record()).request == record.request
    memory.record_search(record)
    memory.record_calls(LoggedCalls(T0 + 1, "x", DIGEST, ("book_flight",), (True,)))
    texts = {r.text for r in memory.requests(DIGEST, "book_flight")}
    assert texts == {"flights", "get me to lisbon on friday"}


def test_an_incremental_view_update_ranks_as_a_full_rebuild():
    memory = UsageMemory(clock=lambda: T0)
    live = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(128))
    live.index_tools("s", TOOLS)
    queries = ["ping dana", "umbrella needed", "lisbon friday", "city flight", "mail"]
    lessons = [
        ("send_email", "ping dana"),
        ("get_weather", "umbrella needed"),
        ("book_flight", "lisbon friday"),
        ("send_email", "mail the team"),
        ("book_flight", "city hop flight"),
    ]
    for i, (tool, text) in enumerate(lessons * 3):
        memory.learn(DIGEST, tool, text, session=f"s{i}", time=T0)
        live.search(ToolSearchRequest("s", queries[i % len(queries)], 3))  # partial updates
    fresh = LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(128))
    fresh.index_tools("s", TOOLS)
    for query in queries:
        mine = live.search(ToolSearchRequest("s", query, 3)).tool_references
        full = fresh.search(ToolSearchRequest("s", query, 3)).tool_references
        assert [(r.tool_name, round(r.relevance_score or 0, 9)) for r in mine] == [
            (r.tool_name, round(r.relevance_score or 0, 9)) for r in full
        ]
    assert memory.changes(DIGEST, memory.version(DIGEST) - 1)[1] == {"book_flight"}


def test_a_summed_vote_counts_many_neighbours_of_one_tool():
    import numpy as np

    from toolsearch.indexes.learning.learned import LearnedParams, LearnedRanker, _View

    embedder = HashingEmbedder(64)
    q = np.asarray(embedder.embed_query("find it"), dtype=np.float32)
    other = np.roll(q, 7)
    other -= other.dot(q) * q
    other /= np.linalg.norm(other)

    def near(cosine: float) -> Any:
        return cosine * q + (1 - cosine**2) ** 0.5 * other

    vectors = np.stack([near(0.6), near(0.6), near(0.6), near(0.7)]).astype(np.float32)
    positions = np.asarray([0, 0, 0, 1])
    weights = np.ones(4)
    view = _View(1, T0, positions, weights, vectors, None, positions[:0], None, positions, weights)
    for vote_sum, first in [(False, 1), (True, 0)]:
        params = LearnedParams(vote_sum=vote_sum)
        ranker = LearnedRanker(Bm25ToolIndex().ranker, UsageMemory(), embedder, params)
        hits = ranker.vote(view, "find it", 5, None)
        assert hits[0][0] == first
        assert dict(hits)[0] == pytest.approx(0.6, abs=1e-4)  # the score stays the best
