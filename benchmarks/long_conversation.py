"""Many tasks in one conversation: what the full loop and tool search cost when the history
and the discovered tools pile up, raw and with the provider's prompt cache on.

``--tasks`` requests of one catalog (``--catalog``: the bundled Acme one or BFCL's pooled
1,853 functions; every k-th request, so they spread over the catalog) are sent one after
another in **one conversation**: a ``ChatClient`` with a ``MessageChatMemoryAdvisor``
inside the tool loop (it keeps tool calls and results, as an agent's memory does) and
either the plain tool loop or the tool-search advisor (BM25) with the library's defaults
(the working set: pre-retrieval, every tool when that costs less, from the start or once
the history a change would rewrite has grown; docs/working-set.md), without the working
set, with each unloading policy, and with ``injection="results"`` (``POLICIES``).
The benchmark's simulated agent plays the model, one agent per task, reading the
conversation from that task's own request on. Every request of every task is rendered by
the ``--provider`` adapter, counted with ``o200k_base`` and billed under that provider's
cache model (:mod:`toolsearch_bench.cache`; the model answers every 5 s, a new task starts
20 s after the last answer). Reported per loop: task success, prompt tokens per task
(raw), billed input per task, the tools loaded at the end, and the savings of search
against the full loop, raw and billed.

    python benchmarks/long_conversation.py --tasks 30 --provider openai --catalog acme
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from toolsearch import CONVERSATION_ID, ChatClient, ToolSearchToolCallingAdvisor
from toolsearch.chat.messages import UserMessage
from toolsearch.indexes import Bm25ToolIndex
from toolsearch.loop.tool_calling_advisor import ToolCallingAdvisor
from toolsearch.memory import MessageChatMemoryAdvisor, MessageWindowChatMemory
from toolsearch.models.function import FunctionChatModel
from toolsearch.tokens import BpeTokenCounter
from toolsearch_bench.agent import SimulatedAgent, called_tools
from toolsearch_bench.cache import CACHE_SHAPES, PromptCache
from toolsearch_bench.live import SyntheticTool
from toolsearch_bench.loaders import load_bfcl, load_bundled
from toolsearch_bench.render import count_request
from toolsearch_bench.savings import (
    CANNED_RESULT,
    NO_WORKING_SET,
    prompt_blocks,
    working_set_options,
)

STEP = 5.0
"""Seconds between two model answers."""
PAUSE = 20.0
"""Seconds between the end of one task and the next request."""

POLICIES: dict[str, dict[str, Any]] = {
    "search": {},
    "search, no working set": dict(NO_WORKING_SET),
    "search, idle 3 turns": {"unload_idle_turns": 3},
    "search, idle 1 turn": {"unload_idle_turns": 1},
    "search, cap 10": {"max_loaded_tools": 10},
    "search, idle 3 turns, at turn start": {"unload_idle_turns": 3, "unload_at": "turn"},
    "search, injection results": {"injection": "results"},
    "search, injection results, no working set": {"injection": "results", **NO_WORKING_SET},
}
"""The search loops measured (advisor options over the library's defaults, which hold the
working set: pre-retrieval, every tool when that costs less): the defaults, the plain
search loop without the working set, each unloading policy, and ``injection="results"``
(the tool list fixed to the search tool and the call tool; pre-retrieved tools handed
over as a search exchange at the place they were found)."""


def anchored_changes(prompts: list[Any]) -> list[Any]:
    """``prompts`` with their ``tool_changes`` as the ``ToolChange`` contract asks (every
    change of the conversation so far, each at the position where it first showed).

    The advisor records a change at the message count it sees, and a chat memory inside
    the tool loop adds the conversation's messages after it (so it sees the system prompt
    and the user's message only: every change says ``after_message=2``); and each turn's
    run starts its changes afresh. Both put the change messages inside the history
    (rewriting it) and declare the earlier turns' tools in full. Here each change keeps
    the position of the end of the request where it first showed, and every later
    request repeats it: what a run that knew the whole conversation would send."""
    from toolsearch.chat.options import ToolChange

    kept: list[ToolChange] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for prompt in prompts:
        for change in prompt.options.tool_changes:
            key = (change.kind, change.names)
            if key not in seen:
                seen.add(key)
                kept.append(ToolChange(change.kind, change.names, len(prompt.messages)))
        options = prompt.options.replace(tool_changes=tuple(kept))
        out.append(prompt.with_options(options))
    return out


def run_loop(
    mode: str,
    tasks: list[Any],
    catalog: Any,
    provider: str,
    options: dict[str, Any] | None = None,
    *,
    anchor: bool = False,
) -> dict[str, Any]:
    """One conversation of ``tasks`` through the ``mode`` loop (``"full"``, or a search
    loop with the advisor ``options``); its costs and successes. ``anchor``: bill the
    requests with their tool changes anchored (:func:`anchored_changes`)."""
    counter = BpeTokenCounter()
    tools = [SyntheticTool(d, CANNED_RESULT) for d in catalog.tools]
    current: list[SimulatedAgent] = []
    task_of_request: list[int] = []

    def model_function(messages: list[Any], offered: list[Any]) -> Any:
        start = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
        task_of_request.append(len(current) - 1)
        return current[-1](messages[start:], offered, earlier=messages[:start])

    model = FunctionChatModel(model_function)
    options = {**working_set_options(provider), "traffic_seconds": PAUSE, **(options or {})}
    advisor: ToolCallingAdvisor = (
        ToolSearchToolCallingAdvisor(tool_index=Bm25ToolIndex(), token_counter=counter, **options)
        if mode != "full"
        else ToolCallingAdvisor()
    )
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(max_messages=100_000), order=400)
    client = ChatClient.builder(model).default_advisors(advisor, memory).build()
    successes = []
    for query in tasks:
        current.append(SimulatedAgent(query.text, query.gold))
        before = len(model.requests)
        client.prompt(query.text).tools(tools).advisors(
            lambda a: a.param(CONVERSATION_ID, "long")
        ).call()
        called = {
            name for prompt in model.requests[before:] for name in called_tools(prompt.messages)
        }
        successes.append(set(query.gold) <= called)
    cache = PromptCache(CACHE_SHAPES[provider])
    counts: dict[Any, Any] = {}  # definition counts per tool list
    blocks_seen: dict[Any, Any] = {}  # blocks per tool list and per text
    raw = [0] * len(tasks)
    billed = [0.0] * len(tasks)
    now = 0.0
    previous_task = 0
    requests = anchored_changes(list(model.requests)) if anchor else list(model.requests)
    for prompt, task in zip(requests, task_of_request, strict=True):
        now += PAUSE if task != previous_task else STEP
        previous_task = task
        tokens = count_request(prompt, provider, counter, cache=counts)  # type: ignore[arg-type]
        blocks, breakpoints = prompt_blocks(prompt, provider, counter, blocks_seen)  # type: ignore[arg-type]
        cost = cache.request(blocks, now=now, breakpoints=breakpoints, total=tokens.total)
        raw[task] += tokens.total
        billed[task] += cost.billed
    loaded = len(model.requests[-1].tool_definitions)
    peak = max(len(prompt.tool_definitions) for prompt in model.requests)
    return {
        "mode": mode,
        "tasks": len(tasks),
        "success": 100.0 * sum(successes) / len(tasks),
        "raw_per_task": statistics.fmean(raw),
        "billed_per_task": statistics.fmean(billed),
        "last_task_raw": raw[-1],
        "last_task_billed": billed[-1],
        "tools_loaded_at_end": loaded,
        "tools_loaded_at_most": peak,
        "requests": len(model.requests),
        "task_successes": successes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--provider", default="openai", choices=sorted(CACHE_SHAPES))
    parser.add_argument("--catalog", default="acme", choices=["acme", "bfcl"])
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--loops", help="search loops to run, separated by semicolons (default: all)"
    )
    parser.add_argument(
        "--anchor-changes",
        action="store_true",
        help="bill the search loops' tool changes at the position where each first showed, "
        "repeated on every later request (what the ToolChange contract asks; the advisor "
        "under a chat memory inside the loop does not send that yet)",
    )
    args = parser.parse_args()
    catalog, queries = load_bundled() if args.catalog == "acme" else load_bfcl()
    every = max(1, len(queries) // args.tasks)
    tasks = list(queries)[::every][: args.tasks]
    full = run_loop("full", tasks, catalog, args.provider)
    chosen = args.loops.split(";") if args.loops else list(POLICIES)
    rows = [full] + [
        run_loop(name, tasks, catalog, args.provider, POLICIES[name], anchor=args.anchor_changes)
        for name in chosen
    ]
    command = (
        f"python benchmarks/long_conversation.py --tasks {args.tasks} "
        f"--provider {args.provider} --catalog {args.catalog}"
        + (f" --loops '{args.loops}'" if args.loops else "")
        + (" --anchor-changes" if args.anchor_changes else "")
    )
    lines = [
        f"# {args.tasks} tasks in one conversation ({args.catalog}, {len(catalog)} tools; "
        f"{args.provider} request shape and cache)",
        "",
        f"`{command}`",
        "",
        "| loop | success % | prompt tokens per task | billed per task | raw saved % "
        "| billed saved % | last task billed | tools loaded at the end (most) | requests |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        raw_saved = 100 * (1 - row["raw_per_task"] / full["raw_per_task"])
        billed_saved = 100 * (1 - row["billed_per_task"] / full["billed_per_task"])
        lines.append(
            f"| {row['mode']} | {row['success']:.1f} | {row['raw_per_task']:,.0f} | "
            f"{row['billed_per_task']:,.0f} | {raw_saved:.1f} | {billed_saved:.1f} | "
            f"{row['last_task_billed']:,.0f} | {row['tools_loaded_at_end']} "
            f"({row['tools_loaded_at_most']}) | {row['requests']} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
