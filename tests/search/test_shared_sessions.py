"""Two worker processes share one conversation through Redis and Milvus (real servers).

A conversation discovers a tool in the first process; its next request, served by the
second process, shows that tool without searching; another conversation served by the
second process sees none of it. The workers are ``benchmarks/shared_sessions_worker.py``
(a ``ChatClient`` with ``ToolSearchToolCallingAdvisor(session_store=RedisSessionStore(...),
tool_index=MilvusToolIndex(...))`` and a scripted model), one OS process each.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from shared_sessions_worker import WorkerProcess as Worker


@pytest.fixture
def workers(redis_url: str, milvus_uri: str) -> Iterator[tuple[Worker, Worker]]:
    pytest.importorskip("pymilvus", reason="the [milvus] extra is not installed")
    namespace = f"shared-{uuid.uuid4().hex[:8]}"
    collection = f"shared_{uuid.uuid4().hex[:8]}"
    options = ["--redis", redis_url, "--namespace", namespace]
    options += ["--milvus", milvus_uri, "--collection", collection]
    first = Worker(*options)
    try:
        second = Worker(*options)
    except BaseException:
        first.close()
        raise
    yield first, second
    first.close()
    second.close()


def test_a_conversation_keeps_its_discoveries_across_processes(
    workers: tuple[Worker, Worker],
) -> None:
    first, second = workers
    found = first.ask("alice", "tool_weather")
    assert found["searched"] is True
    assert found["called"] == ["tool_weather"]

    following = second.ask("alice", "tool_weather")
    assert following["first_seen"] == ["tool_weather"]  # shown before any search
    assert following["searched"] is False
    assert following["called"] == ["tool_weather"]

    stranger = second.ask("bob", "tool_weather")
    assert stranger["first_seen"] == []  # bob discovered nothing yet
    assert stranger["searched"] is True

    back = first.ask("alice", "tool_invoice")  # alice adds a tool in the first process
    assert back["first_seen"] == ["tool_weather"]
    assert back["called"] == ["tool_invoice"]
    assert second.ask("alice", "tool_invoice")["first_seen"] == ["tool_weather", "tool_invoice"]
    assert second.ask("bob", "tool_weather")["first_seen"] == ["tool_weather"]


# search-loop mechanics on a few tools: the plain loop (see cold_search in tests/conftest.py)
pytestmark = pytest.mark.cold_search
