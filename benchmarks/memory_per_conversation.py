"""Heap of a process serving many conversations under an LRU cap (issue 47, item 10).

The tool-search advisor (BM25, 20 tools, LRU of ``--cap`` sessions) serves ``--conversations``
conversations, each a search, a tool call and an answer, and prints tracemalloc's
allocated bytes at checkpoints (tracing starts after ``--cap`` * 3 warm-up conversations).
Deterministic: tracemalloc counts Python allocations, not RSS.

    python benchmarks/memory_per_conversation.py --conversations 10000 --cap 100
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import tracemalloc
from typing import Any

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.models import FunctionChatModel
from toolsearch.search import LruEvictionStrategy

TOOLS = [
    FunctionToolCallback.from_schema(
        lambda arguments: "ok",
        name=f"service_{i}_operation",
        description=f"Service {i}: look up the weather of a city, variant {i % 7}",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    for i in range(20)
]


def agent(messages: list[Any], tools: list[Any]) -> AssistantMessage:
    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        found = [t.name for t in tools if t.name.startswith("service_")]
        if last.responses[0].name == "toolSearchTool" and found:
            return AssistantMessage(tool_calls=(ToolCall(id="c", name=found[0], arguments="{}"),))
        return AssistantMessage(content="done")
    query = json.dumps({"query": "weather city"})
    return AssistantMessage(tool_calls=(ToolCall(id="s", name="toolSearchTool", arguments=query),))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--cap", type=int, default=100)
    args = parser.parse_args()
    logging.disable(logging.INFO)
    advisor = ToolSearchToolCallingAdvisor(
        tool_index=Bm25ToolIndex(), eviction_strategy=LruEvictionStrategy(args.cap)
    )
    model = FunctionChatModel(agent)
    client = ChatClient.builder(model).default_advisors(advisor).build()
    warm = 3 * args.cap
    checkpoints = {warm + 2 * args.cap, 1_000, 2_000, 5_000, args.conversations}
    first: tuple[int, int] | None = None
    for i in range(args.conversations):
        if i == warm:
            gc.collect()
            tracemalloc.start()
        model.requests.clear()  # the scripted model's own record
        client.prompt("weather in Oslo?").tools(*TOOLS).advisors(
            lambda a, i=i: a.param(CONVERSATION_ID, f"conversation-{i}")
        ).call()
        if i + 1 in checkpoints and i + 1 > warm:
            gc.collect()
            allocated = tracemalloc.get_traced_memory()[0]
            if first is None:
                first = (i + 1, allocated)
                print(f"{i + 1:>6} conversations: {allocated / 1024:8.1f} KiB traced")
            else:
                per = (allocated - first[1]) / (i + 1 - first[0])
                print(
                    f"{i + 1:>6} conversations: {allocated / 1024:8.1f} KiB traced, "
                    f"{per:6.1f} bytes per conversation since {first[0]}"
                )
    print(f"sessions held: {len(advisor.registry.session_ids())} (cap {args.cap})")


if __name__ == "__main__":
    main()
