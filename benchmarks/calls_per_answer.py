"""Time one model answer of N tool calls through the tool loop (issue 47, item 11).

A scripted model answers N calls (to offered tools, or to unknown names) with T tools
offered, then answers once it reads the results. Prints the seconds the call took.

    python benchmarks/calls_per_answer.py --calls 10000 --tools 1000 --kind unknown
    python benchmarks/calls_per_answer.py --calls 10000 --tools 1000 --kind known --search
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    FunctionToolCallback,
    ToolCall,
    ToolCallingAdvisor,
    ToolResponseMessage,
    ToolSearchToolCallingAdvisor,
)
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.models import FunctionChatModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--tools", type=int, default=1_000)
    parser.add_argument("--kind", choices=["known", "unknown"], default="unknown")
    parser.add_argument("--search", action="store_true", help="the tool-search advisor")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    tools = [
        FunctionToolCallback.from_schema(
            lambda arguments: "ok",
            name=f"tool_{i}",
            description=f"does thing {i} with the weather",
            input_schema={"type": "object", "properties": {}},
        )
        for i in range(args.tools)
    ]

    def agent(messages: list[Any], offered: list[Any]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, ToolResponseMessage) and len(last.responses) > 1:
            return AssistantMessage(content="done")
        names = [
            f"tool_{i % args.tools}" if args.kind == "known" else f"x{i}" for i in range(args.calls)
        ]
        calls = tuple(ToolCall(id=f"c{i}", name=n, arguments="{}") for i, n in enumerate(names))
        if args.search and not isinstance(messages[-1], ToolResponseMessage):
            search = ToolCall(id="s", name="toolSearchTool", arguments='{"query": "weather"}')
            return AssistantMessage(tool_calls=(search,))
        return AssistantMessage(tool_calls=calls)

    advisor = (
        ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex())
        if args.search
        else ToolCallingAdvisor()
    )
    client = ChatClient.builder(FunctionChatModel(agent)).default_advisors(advisor).build()
    start = time.perf_counter()
    client.prompt("weather").tools(*tools).advisors(lambda a: a.param(CONVERSATION_ID, "b")).call()
    print(
        f"{args.calls} {args.kind} calls, {args.tools} tools, "
        f"{'tool-search' if args.search else 'tool-calling'} advisor: "
        f"{time.perf_counter() - start:.2f} s"
    )


if __name__ == "__main__":
    main()
