"""pydantic-ai's built-in tool search against toolsearch strategies, same agent, same run.

For each request of a catalog's query set, one pydantic-ai ``Agent`` runs with the whole
catalog as deferred tools (``FunctionToolset(...).defer_loading()``) and one ``ToolSearch``
capability: pydantic-ai's own (``ToolSearch()``, which on a model without native tool search
is its local keyword-overlap ``search_tools``), or ``toolsearch_tool_search("bm25")`` /
``toolsearch_tool_search("hybrid")``. The model is pydantic-ai's ``FunctionModel``, scripted
the same way for every row: its first request calls ``search_tools`` with the request text
as the one query; its second reads the tools found and answers. Recall@k is over the names
``search_tools`` returned, in order (``ToolSearch.max_results`` = 10 for every row). Prompt
tokens per request are counted with ``o200k_base`` (exact for OpenAI's encodings) over the
chat-completions rendering of each model request the run makes: its messages and the tool
definitions pydantic-ai offered on it (``AgentInfo.function_tools``), as JSON. The
``all tools, no search`` row sends every tool on one request instead (the cost search saves).

Needs ``toolsearch[pydantic-ai]`` with the harness (``pip install -e benchmarks/harness``)
and BFCL's data (``pip install --no-deps bfcl-eval``). Run:
``python benchmarks/pydantic_ai_search.py --bfcl-every 4 --out
benchmarks/results/pydantic-ai.md`` (``--bfcl-every N`` keeps every Nth BFCL request: the
full 2,501 take about 20 minutes on 2 cores; ``--limit N`` caps each set for a quick look).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import ToolSearch
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import Tool
from pydantic_ai.toolsets import FunctionToolset

from toolsearch.integrations.pydantic_ai import toolsearch_tool_search
from toolsearch.models.openai import openai_tools
from toolsearch.tokens import BpeTokenCounter
from toolsearch.tools.definition import ToolDefinition
from toolsearch_bench.data import Catalog, QuerySet
from toolsearch_bench.loaders import load_bfcl, load_bundled
from toolsearch_bench.metrics import score_rankings

ROOT = Path(__file__).resolve().parents[1]
COUNTER = BpeTokenCounter("o200k_base")


def deferred_toolset(catalog: Catalog) -> FunctionToolset[Any]:
    """The catalog as pydantic-ai tools with their own schemas, all deferred."""

    def make(tool: ToolDefinition) -> Tool[Any]:
        def run(**kwargs: Any) -> str:
            return "ok"

        return Tool.from_schema(
            run,
            name=tool.name,
            description=tool.description,
            json_schema=dict(tool.input_schema),
            takes_ctx=False,
        )

    return FunctionToolset([make(t) for t in catalog.tools]).defer_loading()


def render_request(messages: Sequence[ModelMessage], tools: Sequence[Any]) -> str:
    """A model request as chat-completions JSON: its messages and its tools."""
    rendered: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    rendered.append({"role": "user", "content": str(part.content)})
                elif isinstance(part, ToolReturnPart):
                    rendered.append(
                        {
                            "role": "tool",
                            "tool_call_id": part.tool_call_id,
                            "content": part.model_response_str(),
                        }
                    )
        elif isinstance(message, ModelResponse):
            calls = [
                {
                    "id": p.tool_call_id,
                    "type": "function",
                    "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
                }
                for p in message.parts
                if isinstance(p, ToolCallPart)
            ]
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            rendered.append(entry)
    definitions = [
        ToolDefinition(t.name, t.description or "", t.parameters_json_schema) for t in tools
    ]
    return json.dumps({"messages": rendered, "tools": openai_tools(definitions)})


class Probe:
    """The scripted model: search with the request text, read the result, answer."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.tokens: list[int] = []

    def reset(self) -> None:
        self.found = []
        self.tokens = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tokens.append(COUNTER.count(render_request(messages, info.function_tools)))
        returns = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart) and p.tool_name == "search_tools"
        ]
        if not returns:
            prompt = next(
                p.content
                for m in messages
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, UserPromptPart)
            )
            return ModelResponse(parts=[ToolCallPart("search_tools", {"queries": [prompt]})])
        content = returns[-1].content
        if isinstance(content, dict):
            self.found = [m["name"] for m in content.get("discovered_tools", [])]
        return ModelResponse(parts=[TextPart("done")])


def run_row(
    name: str,
    capability: Callable[[], Any],
    toolset: FunctionToolset[Any],
    queries: QuerySet,
) -> dict[str, Any]:
    probe = Probe()
    agent = Agent(FunctionModel(probe), toolsets=[toolset], capabilities=[capability()])
    rankings: list[tuple[list[str], tuple[str, ...]]] = []
    tokens: list[int] = []
    started = time.perf_counter()
    for query in queries:
        probe.reset()
        agent.run_sync(query.text)
        rankings.append((probe.found, query.gold))
        tokens.extend(probe.tokens)
    seconds = time.perf_counter() - started
    scores = score_rankings(rankings)
    return {
        "row": name,
        "R@1": scores.recall[1],
        "R@5": scores.recall[5],
        "R@10": scores.recall[10],
        "found": sum(len(r) for r, _ in rankings) / len(rankings),
        "tokens": sum(tokens) / len(tokens),
        "requests": len(tokens) / len(rankings),
        "ms": seconds * 1000 / len(rankings),
    }


def all_tools_tokens(catalog: Catalog, queries: QuerySet) -> float:
    """Tokens of one request carrying every tool and the request text (mean)."""
    tools = json.dumps(openai_tools(list(catalog.tools)))
    base = COUNTER.count(json.dumps({"messages": [], "tools": []}))
    tool_tokens = COUNTER.count(tools)
    texts = [COUNTER.count(json.dumps({"role": "user", "content": q.text})) for q in queries]
    return base + tool_tokens + sum(texts) / len(texts)


ROWS: list[tuple[str, Callable[[], Any]]] = [
    ("pydantic-ai built-in (`ToolSearch()`, keywords)", ToolSearch),
    ('toolsearch BM25 (`toolsearch_tool_search("bm25")`)', lambda: toolsearch_tool_search("bm25")),
    (
        'toolsearch hybrid (`toolsearch_tool_search("hybrid")`, BM25 + MiniLM)',
        lambda: toolsearch_tool_search("hybrid"),
    ),
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bfcl-every", type=int, default=1, help="keep every Nth BFCL request")
    parser.add_argument("--limit", type=int, default=0, help="at most N requests per set")
    parser.add_argument("--out", type=Path, default=None, help="write the markdown here")
    args = parser.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(1)  # a single-query encode is faster on one thread here
    except ImportError:
        pass
    acme_catalog, acme_queries = load_bundled()
    bfcl_catalog, bfcl_queries = load_bfcl()
    if args.bfcl_every > 1:
        kept = bfcl_queries.queries[:: args.bfcl_every]
        bfcl_queries = QuerySet(bfcl_queries.name, kept, bfcl_queries.notes)
    sets = [("acme", acme_catalog, acme_queries), ("bfcl", bfcl_catalog, bfcl_queries)]
    if args.limit:
        sets = [(n, c, QuerySet(q.name, q.queries[: args.limit], q.notes)) for n, c, q in sets]
    started = time.perf_counter()
    load_start = os.getloadavg()
    sections = []
    for set_name, catalog, queries in sets:
        toolset = deferred_toolset(catalog)
        results = []
        for row_name, capability in ROWS:
            result = run_row(row_name, capability, toolset, queries)
            print(set_name, json.dumps(result), file=sys.stderr, flush=True)
            results.append(result)
        sections.append((set_name, catalog, queries, results, all_tools_tokens(catalog, queries)))
    elapsed = time.perf_counter() - started
    load_end = os.getloadavg()
    text = render(sections, args, elapsed, load_start, load_end)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


def render(
    sections: list[tuple[str, Catalog, QuerySet, list[dict[str, Any]], float]],
    args: argparse.Namespace,
    elapsed: float,
    load_start: tuple[float, float, float],
    load_end: tuple[float, float, float],
) -> str:
    import pydantic_ai

    command = "python benchmarks/pydantic_ai_search.py"
    if args.bfcl_every > 1:
        command += f" --bfcl-every {args.bfcl_every}"
    if args.limit:
        command += f" --limit {args.limit}"
    command += " --out benchmarks/results/pydantic-ai.md"
    lines = [
        "# pydantic-ai tool search: built-in vs toolsearch",
        "",
        f"Generated by `{command}` (pydantic-ai-slim {pydantic_ai.__version__}, Python "
        f"{platform.python_version()}, 2 CPU cores, {elapsed:.0f} s in all). Load average "
        f"(1/5/15 min) at the start {' '.join(f'{x:.2f}' for x in load_start)}, at the end "
        f"{' '.join(f'{x:.2f}' for x in load_end)}.",
        "",
        "Same agent, same run: for every request, one pydantic-ai `Agent` with the whole "
        "catalog as deferred tools (`FunctionToolset(tools).defer_loading()`) and pydantic-ai's "
        "`FunctionModel`, scripted alike for every row: its first request calls `search_tools` "
        "with the request text as its one query, its second reads what the search returned "
        "and answers. Only the `ToolSearch` capability differs. Recall@k (percent, mean over "
        "requests of the share of gold tools found) is over the names `search_tools` returned, "
        "in order (`max_results` 10 in every row). *Prompt tokens / request* are `o200k_base` "
        "tokens (exact for OpenAI's encodings; approximate for other providers) of each model "
        "request of the run rendered as a chat-completions body: its messages and the tools "
        "offered on it as JSON, averaged over the run's requests (2 per request here: the search, "
        "then the answer with the tools found). *All tools, no search* sends the whole catalog "
        "on a single request instead. *ms / request* is the agent run's wall time (the scripted "
        "model included; query embedding included for the hybrid row).",
        "",
    ]
    for set_name, catalog, queries, results, everything in sections:
        note = ""
        if set_name == "bfcl" and args.bfcl_every > 1:
            note = (
                f"; subsetted evenly to keep the run near 10 minutes: every "
                f"{args.bfcl_every}th request in file order, all categories"
            )
        lines += [
            f"### {set_name} ({len(catalog)} tools, {len(queries)} requests{note})",
            "",
            "| search | R@1 | R@5 | R@10 | tools found | prompt tokens / request | ms / request |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in results:
            lines.append(
                f"| {r['row']} | {r['R@1']:.1f} | {r['R@5']:.1f} | {r['R@10']:.1f} | "
                f"{r['found']:.1f} | {r['tokens']:.0f} | {r['ms']:.1f} |"
            )
        lines.append(
            f"| all tools, no search | - | - | - | {len(catalog)} | {everything:.0f} | - |"
        )
        lines.append("")
    lines += [
        "Reading it: every row returns about 10 tools per search, so prompt tokens differ only "
        "by which tools' definitions were found (toolsearch's pick runs slightly longer "
        "schemas); the recall is what differs. A row's first search indexes the catalog (the "
        "hybrid row embeds every tool then; that time is in its ms / request). The ms of the "
        "BFCL rows are mostly pydantic-ai's own per-request work over 1,853 deferred tools, the "
        "same in every row; latencies are inflated by other jobs on the same 2 cores (see the "
        "load average above).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
