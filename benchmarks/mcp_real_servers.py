"""Real MCP servers from npm: dump their tools and measure what the tool-search proxy saves.

    python benchmarks/mcp_real_servers.py --catalog /tmp/mcp-real-tools.jsonl

1. Installs each server package into its own folder under ``--cache`` (``npm install
   --ignore-scripts``: no browser or other post-install download) and times the install.
   Already installed packages are reused (their time is reported as cached).
2. Starts every server over stdio with dummy tokens (enough to list tools; nothing is
   called), through :class:`toolsearch.mcp.McpToolProvider`.
3. Writes their ``tools/list`` to the catalog JSONL at ``--catalog`` (third-party
   definitions: keep that file out of the repository).
4. Counts o200k_base tokens of all tool definitions in the OpenAI request shape against
   the proxy's two tools, plus what typical ``search_tools`` answers add, and writes
   ``mcp_tokens.md`` / ``mcp_tokens.json`` under ``--results``.

Needs node/npm and the npm registry (or a warm cache), ``toolsearch[mcp]`` and the harness
(``pip install -e benchmarks/harness``).
``@modelcontextprotocol/server-puppeteer`` is deliberately absent: it downloads a browser.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.mcp import McpSearchProxy, McpToolProvider, write_catalog
from toolsearch.tokens import BpeTokenCounter
from toolsearch.tools import FunctionToolCallback, ToolDefinition
from toolsearch_bench.render import count_request

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class NpmServer:
    name: str
    package: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


def servers(workdir: Path) -> list[NpmServer]:
    """The servers and the dummy credentials that let them start and list tools."""
    return [
        NpmServer("everything", "@modelcontextprotocol/server-everything", ("stdio",)),
        NpmServer("filesystem", "@modelcontextprotocol/server-filesystem", (str(workdir),)),
        NpmServer("memory", "@modelcontextprotocol/server-memory",
                  env={"MEMORY_FILE_PATH": str(workdir / "memory.json")}),
        NpmServer("github", "@modelcontextprotocol/server-github",
                  env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy_token_for_listing"}),
        NpmServer("slack", "@modelcontextprotocol/server-slack",
                  env={"SLACK_BOT_TOKEN": "xoxb-dummy", "SLACK_TEAM_ID": "T00000000"}),
        NpmServer("playwright", "@playwright/mcp", ("--headless", "--isolated")),
        NpmServer("notion", "@notionhq/notion-mcp-server",
                  env={"NOTION_TOKEN": "ntn_dummy_token_for_listing"}),
        NpmServer("chrome-devtools", "chrome-devtools-mcp", ("--headless", "--isolated"),
                  env={"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"}),
    ]  # fmt: skip


SEARCHES = [
    "read a file from disk",
    "create a github issue",
    "post a message to a slack channel",
    "take a screenshot of the web page",
    "search notion pages",
    "store an entity in the knowledge graph memory",
    "click a button in the browser",
    "list pull requests of a repository",
]


def install(server: NpmServer, cache: Path, timeout: float) -> dict[str, Any]:
    """Install one package into ``cache/<name>``; returns the timing record."""
    prefix = cache / server.name
    manifest = prefix / "node_modules" / server.package / "package.json"
    if manifest.is_file():
        return {"seconds": 0.0, "cached": True, "version": _version(manifest)}
    prefix.mkdir(parents=True, exist_ok=True)
    command = [
        "npm", "install", "--prefix", str(prefix), "--ignore-scripts", "--no-audit",
        "--no-fund", "--loglevel=error", "--no-save", server.package,
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0 or not manifest.is_file():
        raise RuntimeError(f"npm install {server.package} failed: {done.stderr.strip()[-500:]}")
    return {"seconds": round(seconds, 1), "cached": False, "version": _version(manifest)}


def _version(manifest: Path) -> str:
    return str(json.loads(manifest.read_text(encoding="utf-8")).get("version", "?"))


def command_of(server: NpmServer, cache: Path) -> list[str]:
    """``node <the package's bin script>`` (no npx: nothing is looked up at start)."""
    package_dir = cache / server.name / "node_modules" / server.package
    meta = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    bins = meta.get("bin")
    if isinstance(bins, str):
        script = bins
    elif isinstance(bins, dict) and bins:
        script = next(iter(bins.values()))
    else:
        raise RuntimeError(f"{server.package} declares no bin script")
    return [shutil.which("node") or "node", str((package_dir / script).resolve())]


class _Definition:
    """A ToolCallback stand-in that carries only a definition (for token counting)."""

    def __init__(self, definition: ToolDefinition) -> None:
        self.callback = FunctionToolCallback.from_schema(
            lambda arguments: None,
            name=definition.name,
            description=definition.description,
            input_schema=definition.input_schema,
        )


def definition_tokens(definitions: list[ToolDefinition], counter: BpeTokenCounter) -> int:
    callbacks = [_Definition(d).callback for d in definitions]
    prompt = Prompt.of("x", ChatOptions(tool_callbacks=callbacks))
    return count_request(prompt, "openai", counter).definitions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, required=True, help="catalog JSONL to write")
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "toolsearch" / "npm-mcp"
    )
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--install-timeout", type=float, default=600.0)
    parser.add_argument("--only", nargs="*", help="server names to include")
    parser.add_argument("--note", default="", help="a remark to keep with the results")
    args = parser.parse_args()
    if shutil.which("npm") is None or shutil.which("node") is None:
        sys.exit("needs node and npm on PATH")

    workdir = Path(tempfile.mkdtemp(prefix="mcp-real-"))
    chosen = [s for s in servers(workdir) if not args.only or s.name in args.only]
    installs: dict[str, Any] = {}
    config: dict[str, Any] = {}
    for server in chosen:
        try:
            installs[server.name] = install(server, args.cache, args.install_timeout)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            installs[server.name] = {"error": str(exc)[:300]}
            print(f"{server.name}: install failed: {exc}", file=sys.stderr)
            continue
        print(f"{server.name}: {installs[server.name]}", file=sys.stderr)
        config[server.name] = {
            "command": command_of(server, args.cache)[0],
            "args": [*command_of(server, args.cache)[1:], *server.args],
            "env": server.env,
            "cwd": str(workdir),
            "connect_timeout": 60,
        }

    log = (workdir / "servers.stderr.log").open("w", encoding="utf-8")
    start = time.perf_counter()
    with McpToolProvider(config, on_connect_error="skip", errlog=log) as provider:
        callbacks = provider.tool_callbacks()
        connect_seconds = time.perf_counter() - start
        definitions = [cb.definition for cb in callbacks]
        count = write_catalog(definitions, args.catalog)
        failures = provider.failures
        proxy = McpSearchProxy(provider, index="bm25", max_results=5)
        asyncio.run(proxy.start())
        counter = BpeTokenCounter("o200k_base")
        per_server = {}
        for name in config:
            mine = [d for d in definitions if d.category == name]
            per_server[name] = {
                "tools": len(mine),
                "tokens": definition_tokens(mine, counter) if mine else 0,
                "package_version": installs[name].get("version"),
                "install_seconds": installs[name].get("seconds"),
                "install_cached": installs[name].get("cached"),
            }
        all_tokens = definition_tokens(definitions, counter)
        proxy_tokens = definition_tokens(proxy.tool_definitions(), counter)
        answers = []
        for query in SEARCHES:
            found = proxy.search(query, 5)
            text = json.dumps(found, ensure_ascii=False)
            answers.append(
                {
                    "query": query,
                    "names": [t["name"] for t in found["tools"]],
                    "answer_tokens": counter.count(text),
                }
            )
    log.close()
    print(f"wrote {count} tools to {args.catalog}", file=sys.stderr)

    mean_answer = sum(a["answer_tokens"] for a in answers) / max(1, len(answers))
    record = {
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python benchmarks/mcp_real_servers.py " + " ".join(_without_note(sys.argv[1:])),
        "machine": {
            "python": platform.python_version(),
            "node": subprocess.run(
                ["node", "--version"], capture_output=True, text=True, check=False
            ).stdout.strip(),
            "cpus": os.cpu_count(),
            "loadavg": Path("/proc/loadavg").read_text().split()[:3]
            if Path("/proc/loadavg").exists()
            else None,
        },
        "tokenizer": "o200k_base (exact, bpe-openai)",
        "request_shape": "OpenAI chat completions `tools` array, compact JSON",
        "servers": per_server,
        "failures": failures,
        "total_tools": len(definitions),
        "all_definitions_tokens": all_tokens,
        "proxy_definitions_tokens": proxy_tokens,
        "saving_per_request_pct": round(100 * (1 - proxy_tokens / all_tokens), 1)
        if all_tokens
        else None,
        "search_answers": answers,
        "mean_search_answer_tokens_k5": round(mean_answer, 1),
        "connect_and_list_seconds": round(connect_seconds, 1),
        "note": args.note,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "mcp_tokens.json").write_text(json.dumps(record, indent=2) + "\n")
    (args.results / "mcp_tokens.md").write_text(markdown(record))
    print(markdown(record))


def _without_note(argv: list[str]) -> list[str]:
    out, skip = [], False
    for item in argv:
        if skip:
            skip = False
        elif item == "--note":
            skip = True
        elif not item.startswith("--note="):
            out.append(item)
    return out


def markdown(r: dict[str, Any]) -> str:
    lines = [
        "# Real MCP servers: tool definitions vs the tool-search proxy",
        "",
        f"Generated {r['generated']} by `{r['command']}`; tokens: {r['tokenizer']}, "
        f"{r['request_shape']}. Machine: Python {r['machine']['python']}, node "
        f"{r['machine']['node']}, {r['machine']['cpus']} CPUs, load average "
        f"{' '.join(r['machine']['loadavg'] or ['?'])} when run.",
        "",
        "| server | package version | tools | definition tokens | npm install (s) |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for name, s in r["servers"].items():
        install_time = "cached" if s["install_cached"] else f"{s['install_seconds']:.1f}"
        lines.append(
            f"| {name} | {s['package_version']} | {s['tools']} | {s['tokens']:,} | {install_time} |"
        )
    lines += [
        f"| **all** | | **{r['total_tools']}** | **{r['all_definitions_tokens']:,}** | |",
        "",
        f"- Every request of a plain tool loop carries all {r['total_tools']} definitions: "
        f"**{r['all_definitions_tokens']:,} tokens**.",
        f"- Behind `toolsearch mcp proxy` the client sees two tools (`search_tools`, "
        f"`call_tool`): **{r['proxy_definitions_tokens']:,} tokens** per request, "
        f"{r['saving_per_request_pct']}% less.",
        f"- Each `search_tools` answer (5 tools with full input schemas) adds "
        f"{r['mean_search_answer_tokens_k5']:,.0f} tokens on average to the conversation "
        "(once per search, not per request).",
        f"- Starting all servers and listing their tools took {r['connect_and_list_seconds']} s.",
    ]
    if r["failures"]:
        lines.append(f"- Left out (could not start): {r['failures']}")
    if r.get("note"):
        lines.append(f"- Note: {r['note']}")
    lines += ["", "## Searches", "", "| query | top 5 | answer tokens |", "| --- | --- | ---: |"]
    for a in r["search_answers"]:
        lines.append(f"| {a['query']} | {', '.join(a['names'])} | {a['answer_tokens']:,} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
