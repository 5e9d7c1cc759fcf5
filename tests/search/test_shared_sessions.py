"""Two worker processes share one conversation through Redis and Milvus (real servers).

A conversation discovers a tool in the first process; its next request, served by the
second process, shows that tool without searching; another conversation served by the
second process sees none of it. The workers are ``benchmarks/shared_sessions_worker.py``
(a ``ChatClient`` with ``ToolSearchToolCallingAdvisor(session_store=RedisSessionStore(...),
tool_index=MilvusToolIndex(...))`` and a scripted model), one OS process each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

WORKER = Path(__file__).resolve().parents[2] / "benchmarks" / "shared_sessions_worker.py"


class Worker:
    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert json.loads(self._line()) == {"ready": True}

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"worker exited with {self.process.wait()}")
        return line

    def ask(self, conversation: str, want: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"conversation": conversation, "want": want}) + "\n")
        self.process.stdin.flush()
        return json.loads(self._line())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


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
