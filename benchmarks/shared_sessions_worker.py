"""One worker process of a scaled-out deployment: a ``ChatClient`` with the tool-search
advisor over a shared session store, answering requests read as JSON lines on stdin.

Used by ``benchmarks/scale_out.py`` (4 workers, 1,000 conversations routed at random) and by
``tests/search/test_shared_sessions.py`` (two processes, one conversation each way).

Each request names a conversation and the tool it needs (``{"conversation": "c1", "want":
"tool_weather"}``); a scripted model searches for the tool only when the request does not
show it, then calls it. The reply is one JSON line: the tools the model saw on its first
call (``first_seen``), whether it searched, which tool it called, the request's wall time
and the time spent in the session store (``store_ms``).

    python benchmarks/shared_sessions_worker.py --redis URL --namespace NS [--max-sessions N]
        [--milvus URI --collection NAME]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
    UserMessage,
)
from toolsearch.search import LruEvictionStrategy, RedisSessionStore
from toolsearch.search.options import PLAIN_SEARCH_LOOP

SEARCH = "toolSearchTool"
TOPICS = [
    "weather",
    "calendar",
    "email",
    "invoice",
    "payment",
    "shipping",
    "inventory",
    "refund",
    "ticket",
    "contract",
    "payroll",
    "timesheet",
    "expense",
    "budget",
    "forecast",
    "lead",
    "campaign",
    "survey",
    "backup",
    "deploy",
    "incident",
    "alert",
    "metric",
    "log",
    "cluster",
    "volume",
    "certificate",
    "domain",
    "firewall",
    "vpn",
    "printer",
    "meeting",
    "reminder",
    "note",
    "translation",
    "recipe",
    "flight",
    "hotel",
    "taxi",
    "parking",
]
"""40 topics: one tool each (``tool_<topic>``)."""


def tools() -> list[FunctionToolCallback]:
    def make(topic: str) -> FunctionToolCallback:
        return FunctionToolCallback.from_schema(
            lambda arguments, topic=topic: f"{topic}: done",
            name=f"tool_{topic}",
            description=f"Handle the {topic} requests of the {topic} service.",
            input_schema={"type": "object", "properties": {}},
        )

    return [make(topic) for topic in TOPICS]


class TimedRedisStore(RedisSessionStore):
    """A Redis store that adds up the time its commands take (the store's added latency)."""

    spent = 0.0

    def _call(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return super()._call(function, *args, **kwargs)
        finally:
            TimedRedisStore.spent += time.perf_counter() - start


class WorkerProcess:
    """This script run as a child process, and its client: one request at a time."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lock = threading.Lock()
        assert json.loads(self._line()) == {"ready": True}

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker exited with {self.process.wait()}")
        return line

    def ask(self, conversation: str, want: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        with self.lock:
            request = json.dumps({"conversation": conversation, "want": want})
            self.process.stdin.write(request + "\n")
            self.process.stdin.flush()
            return dict(json.loads(self._line()))

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def model_reply(messages: list[Any], visible: list[Any]) -> AssistantMessage:
    """Search for the wanted tool unless it is shown, call it, then answer."""
    user = next(m for m in reversed(messages) if isinstance(m, UserMessage))
    want = json.loads(user.content)["want"]
    since = messages[messages.index(user) + 1 :]
    answered = [r.name for m in since if isinstance(m, ToolResponseMessage) for r in m.responses]
    if want in answered:
        return AssistantMessage(content="done")
    names = {definition.name for definition in visible}
    if want in names:
        return AssistantMessage(tool_calls=(ToolCall(id="call-want", name=want, arguments="{}"),))
    if SEARCH in answered:
        return AssistantMessage(content="not found")
    query = json.dumps({"query": f"{want.removeprefix('tool_')} requests"})
    return AssistantMessage(tool_calls=(ToolCall(id="call-search", name=SEARCH, arguments=query),))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--max-sessions", type=int, default=1000)
    parser.add_argument("--milvus")
    parser.add_argument("--collection", default="shared_sessions")
    parser.add_argument("--memory", action="store_true", help="in-process store (baseline)")
    args = parser.parse_args()

    from toolsearch.models import FunctionChatModel

    strategy = LruEvictionStrategy(args.max_sessions)
    if args.memory:
        store = None
        advisor_options: dict[str, Any] = {"eviction_strategy": strategy}
    else:
        store = TimedRedisStore(args.redis, namespace=args.namespace, eviction_strategy=strategy)
        advisor_options = {"session_store": store}
    if args.milvus:
        from toolsearch.indexes import MilvusToolIndex

        index: Any = MilvusToolIndex(uri=args.milvus, collection=args.collection, mode="bm25")
    else:
        from toolsearch.indexes import Bm25ToolIndex

        index = Bm25ToolIndex()
    seen: list[list[str]] = []
    called: list[str] = []

    def reply(messages: list[Any], visible: list[Any]) -> AssistantMessage:
        seen.append([d.name for d in visible if d.name != SEARCH])
        answer = model_reply(messages, visible)
        called.extend(call.name for call in answer.tool_calls)
        return answer

    model = FunctionChatModel(reply, count_usage=False)
    # the plain search loop: this worker measures discoveries shared through the store, which
    # the working set's pre-retrieval (on by default) would make before any search
    options = {**PLAIN_SEARCH_LOOP, **advisor_options}
    advisor = ToolSearchToolCallingAdvisor(tool_index=index, max_results=1, **options)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    catalog = tools()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        seen.clear()
        called.clear()
        TimedRedisStore.spent = 0.0
        start = time.perf_counter()
        client.prompt().user(json.dumps({"want": request["want"]})).tools(*catalog).advisors(
            lambda a, c=request["conversation"]: a.param(CONVERSATION_ID, c)
        ).call()
        elapsed = time.perf_counter() - start
        result = {
            "first_seen": seen[0] if seen else [],
            "searched": SEARCH in called,
            "called": [name for name in called if name != SEARCH],
            "ms": elapsed * 1000,
            "store_ms": TimedRedisStore.spent * 1000,
        }
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
