"""A seeded fuzz of hostile queries and tool sets (issue 47): the learned index and the
results-injection path, counting every exception that is not a ``ToolsearchError``.

Two drivers share one generator of hostile text (lone surrogates, NUL, RTL marks, emoji,
regex metacharacters, whitespace only, strings up to 20,000 characters, random code
points over the whole range) and of hostile tool sets (dotted, slashed, unicode and
200+-character names, names that collide once case-folded or normalized, exact
duplicates, hostile descriptions and schemas):

* :func:`fuzz_learned` drives a :class:`~toolsearch.indexes.learning.learned.LearnedToolIndex`
  over a :class:`~toolsearch.indexes.learning.memory.UsageMemory` through ``index_tools``,
  ``record_search`` / ``record_calls`` (live learning), ``search``, ``save`` and ``load``;
* :func:`fuzz_injection` drives the public chat path: a
  :class:`~toolsearch.ToolSearchToolCallingAdvisor` (``injection="tools"`` and
  ``"results"``, names or summaries, one query or several) over a BM25 index, a learned
  index and a hostile index (NaN / infinite scores, huge summaries, unknown and duplicate
  names, thousands of references), answering through the real OpenAI Chat Completions,
  OpenAI Responses and Anthropic SDKs against :class:`ScriptedServer`, a local HTTP
  server that plays the model (search with the hostile query, call what was found). The
  request bodies the SDKs send (where the search results are injected) must parse as
  JSON.

``benchmarks/fuzz_learned.py`` runs the full 10,000 queries / 1,000 tool sets;
``tests/indexes/test_hostile_fuzz.py`` a seeded slice.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import tempfile
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "FuzzReport",
    "HostileText",
    "ScriptedServer",
    "fuzz_injection",
    "fuzz_learned",
]

T0 = 1_700_000_000.0

PIECES = [
    "\ud800", "\udfff", "\udc00\ud800", "\x00", "\x7f", "\u202e", "\u200f", "\u2066",
    "\u200b", "\ufeff", "\uffff", "\ufffd", "🙂", "👨\u200d👩\u200d👧", "🏳️\u200d🌈", " ", "\n\t",
    "\r\n", "\u3000", "\u0301", "ǅ", "ß", "İ", "ﬁ", "ᵃ", "é", "e\u0301", ".*", "(a+)+$",
    "[", "\\", "^$|", "((((", "[a-", "\\C", "AND OR NOT", "title:x^3", "?", "*", '"', "'",
    "{}", "null", "NaN", "-Infinity", "</script>", "%s%n", "${x}", "get_weather", "delete",
    "send email", "a" * 300, "😀" * 60,
]  # fmt: skip
NAMES = [
    "a.b.c", "srv/tool", "srv\\tool", "tööl", "工具", "get-weather", "GET_WEATHER",
    "get_weather", "Get_Weather", "getWeather", "x" * 250, "a__b", "a--b", "🙂tool",
    "\u202eevil", "nul\x00", "_", "-", ".", "toolSearchTool", "callTool", "tool_search",
    "mcp__srv__t", "ﬁle", "file", "e\u0301t\u00e9", "\ud800x",
]  # fmt: skip


class HostileText:
    """Hostile strings, names and schemas from one seeded ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def text(self, parts: int = 6) -> str:
        rng, out = self.rng, []
        roll = rng.random()
        if roll < 0.03:
            return rng.choice(["", " ", "\t\n ", "\u3000\u2003", "\x00" * 5])
        if roll < 0.05:
            return rng.choice(["x", "é", "\ud800", "🙂"]) * rng.choice([5_000, 20_000])
        for _ in range(rng.randint(0, parts)):
            pick = rng.random()
            if pick < 0.55:
                out.append(rng.choice(PIECES))
            elif pick < 0.75:
                out.append(chr(rng.randint(0, 0x10FFFF)))
            else:
                size = rng.randint(1, 12)
                out.append("".join(chr(rng.randint(32, 126)) for _ in range(size)))
        return "".join(out)

    def name(self) -> str:
        rng = self.rng
        base = rng.choice(NAMES) if rng.random() < 0.7 else self.text(2).replace(" ", "_")
        return base + rng.choice(["", "", "_2", ".x", "/y", "\u0301", str(rng.randint(0, 9))])

    def schema(self) -> Any:
        rng = self.rng
        return rng.choice(
            [
                {"type": "object", "properties": {}},
                {
                    "type": "object",
                    "properties": {
                        self.text(2) or "p": {"type": "string", "description": self.text(3)}
                    },
                    "required": [self.text(1)],
                },
                {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}},
                {"type": "object", "properties": {"e": {"enum": [self.text(2), 1, None, 1.5]}}},
                {"anyOf": [{"type": "string"}, {"type": "null"}]},
                {},
                {"type": "object", "properties": {"n": {"type": "number", "maximum": 1e308}}},
                {
                    "type": "object",
                    "properties": {"d": {"default": [[[[[]]]]], "title": self.text(2)}},
                },
            ]
        )


@dataclass
class FuzzReport:
    """What a fuzz did: its cases, typed refusals by class, and each untyped exception."""

    queries: int = 0
    tool_sets: int = 0
    requests: int = 0
    warm: int = 0
    """Searches of a learned index whose memory held learned requests for the tool set."""
    typed: Counter[str] = field(default_factory=Counter)
    untyped: list[str] = field(default_factory=list)
    bad_bodies: list[str] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return len(self.untyped) + len(self.bad_bodies)

    def merge(self, other: FuzzReport) -> None:
        self.queries += other.queries
        self.tool_sets += other.tool_sets
        self.requests += other.requests
        self.warm += other.warm
        self.typed.update(other.typed)
        self.untyped += other.untyped
        self.bad_bodies += other.bad_bodies

    @contextlib.contextmanager
    def case(self, where: str) -> Iterator[None]:
        """Count a ``ToolsearchError`` as typed; keep any other exception's traceback."""
        from toolsearch import ToolsearchError

        try:
            yield
        except ToolsearchError as error:
            self.typed[f"{where}: {type(error).__name__}"] += 1
        except Exception as error:  # the finding: untyped
            tail = "".join(traceback.format_exception(error)[-6:])
            self.untyped.append(f"{where}: {type(error).__name__}: {error!r:.200}\n{tail}")


def _tools(gen: HostileText, report: FuzzReport, count: int) -> list[Any]:
    from toolsearch import ToolDefinition

    tools = []
    for _ in range(count):
        with report.case("ToolDefinition"):
            tools.append(
                ToolDefinition(name=gen.name(), description=gen.text(4), input_schema=gen.schema())
            )
    if tools and gen.rng.random() < 0.2:  # an exact duplicate
        tools.append(gen.rng.choice(tools))
    return tools


# -- the learned index --------------------------------------------------------------------


def fuzz_learned(
    tool_sets: int, queries_per_set: int = 10, *, seed: int = 47, folder: Path | None = None
) -> FuzzReport:
    """``tool_sets`` hostile tool sets, ``queries_per_set`` hostile queries each, through a
    learned index (HashingEmbedder vote + BM25 field) and its usage memory: live learning,
    search, save, load and search again. Every third tool set's memory is a file."""
    from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder
    from toolsearch.indexes.learning.learned import LearnedParams, LearnedToolIndex
    from toolsearch.indexes.learning.memory import UsageMemory, UsageParams, catalog_digest
    from toolsearch.search import ToolSearchRequest
    from toolsearch.search.logs.sink import LoggedCalls, LoggedSearch

    gen, report = HostileText(seed), FuzzReport()
    with tempfile.TemporaryDirectory() as scratch:
        root = folder or Path(scratch)
        for number in range(tool_sets):
            report.tool_sets += 1
            tools = _tools(gen, report, gen.rng.randint(1, 12))
            path = root / f"usage-{number % 7}.json"
            usage = gen.rng.choice(
                [UsageParams(), UsageParams(store_text=False), UsageParams(tenant=gen.text(1))]
            )
            learned = gen.rng.choice(
                [LearnedParams(), LearnedParams(shadow=True), LearnedParams(outrank_sessions=1)]
            )
            memory = UsageMemory(
                path if number % 3 == 0 else None,
                params=usage,
                clock=lambda: T0,
                save_at_exit=False,
            )
            index = LearnedToolIndex(
                Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(64), params=learned
            )
            key = gen.text(1) or "k"
            with report.case("index_tools"):
                index.index_tools(key, tools)
            digest = catalog_digest(tools) if tools else "empty"
            for step in range(queries_per_set):
                report.queries += 1
                query = gen.text()
                session = gen.rng.choice(["s1", "s2", "s3", gen.text(1), "ephemeral-x"])
                hits = tuple((t.name, 1.0) for t in gen.rng.sample(tools, min(2, len(tools))))
                with report.case("record_search"):
                    memory.record_search(
                        LoggedSearch(
                            T0 + step, session, digest, query, "learned", "bm25", 5, hits,
                            len(hits), tools=tuple(tools),
                        )
                    )  # fmt: skip
                with report.case("record_calls"):
                    called = tuple(h[0] for h in hits[:1])
                    memory.record_calls(
                        LoggedCalls(T0 + step + 0.5, session, digest, called, (True,) * len(called))
                    )
                limit = gen.rng.choice([None, 1, 4, 10, 1_000])
                with report.case("search"):
                    index.search(ToolSearchRequest(key, query, limit))
                    report.warm += bool(tools) and memory.version(digest) > 0
            with report.case("warm_tools/forget_session"):
                memory.warm_tools(tools)
                if gen.rng.random() < 0.1:
                    memory.forget_session(gen.rng.choice(["s1", gen.text(1)]))
            with report.case("save/load"):
                if memory.store is not None:
                    memory.save()
                    loaded = UsageMemory.load(
                        path, params=usage, clock=lambda: T0, save_at_exit=False
                    )
                    again = LearnedToolIndex(
                        Bm25ToolIndex(), memory=loaded, embedder=HashingEmbedder(64), params=learned
                    )
                    again.index_tools(key, tools)
                    again.search(ToolSearchRequest(key, gen.text(), 5))
                else:
                    memory.save(root / "copy.json")
    return report


# -- the results-injection path -----------------------------------------------------------


class HostileIndex:
    """A tool index that answers with hostile references: NaN and infinite scores, huge or
    odd summaries, names it was never given, duplicates, thousands of references."""

    def __init__(self, gen: HostileText) -> None:
        self.gen = gen
        self.tools: dict[str, list[str]] = {}

    def index_tools(self, session_id: str, tools: Sequence[Any]) -> None:
        self.tools[session_id] = [t.name for t in tools]

    def index_tool(self, session_id: str, tool: Any) -> None:
        self.tools.setdefault(session_id, []).append(tool.name)

    def clear_index(self, session_id: str) -> None:
        self.tools.pop(session_id, None)

    def search(self, request: Any) -> Any:
        from toolsearch.search import ToolReference, ToolSearchResponse

        rng, names = self.gen.rng, self.tools.get(request.session_id, [])
        count = rng.choice([0, 1, 5, 50, 5_000])
        scores = [math.nan, math.inf, -math.inf, None, 1e308, -0.0, -1.0, 0.5]
        references = [
            ToolReference(
                tool_name=rng.choice(names) if names and rng.random() < 0.8 else self.gen.name(),
                summary=rng.choice(["", self.gen.text(3), "s" * 20_000]),
                relevance_score=rng.choice(scores),
            )
            for _ in range(count)
        ]
        return ToolSearchResponse(tool_references=references, total_matches=rng.choice([-1, count]))


class ScriptedServer:
    """A local HTTP server that plays the model for the OpenAI Chat Completions, OpenAI
    Responses and Anthropic Messages APIs: its first answer searches with ``query``, its
    second calls a tool the request shows (a loaded tool, a referenced or carried one, or
    through the call tool), then it answers with text. Each request body must parse as
    JSON; those that do not are kept in ``bad_bodies``."""

    def __init__(self) -> None:
        self.query: Any = {"query": "x"}
        self.requests = 0
        self.bad_bodies: list[str] = []
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def root(self) -> str:
        port = self._http.server_address[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)

    def answer(self, path: str, raw: bytes) -> dict[str, Any]:
        self.requests += 1
        try:
            body = json.loads(raw)
        except ValueError as error:
            self.bad_bodies.append(f"{path}: {error}")
            body = {}
        if path.endswith("/messages"):
            return _anthropic(body, self.query)
        if path.endswith("/responses"):
            return _responses(body, self.query)
        return _chat(body, self.query)


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            data = json.dumps(server.answer(self.path, raw)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def _first_name(text: Any) -> str | None:
    """The first tool name a search result's text gives (names, summaries or definitions)."""
    try:
        found = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return None
    if isinstance(found, list) and found:
        first = found[0]
        return (
            first
            if isinstance(first, str)
            else first.get("name")
            if isinstance(first, dict)
            else None
        )
    return None


def _pick(loaded: list[str], result: Any, search: str) -> tuple[str, str]:
    """The call of the second answer: ``(name, arguments)``."""
    found = _first_name(result)
    if "callTool" in loaded and found:
        return "callTool", json.dumps({"name": found, "arguments": {}})
    others = [n for n in loaded if n not in (search, "callTool")]
    return (others[-1] if others else found or "nothing"), "{}"


def _chat(body: dict[str, Any], query: Any) -> dict[str, Any]:
    messages = body.get("messages", [])
    done = [m for m in messages if m.get("role") == "tool"]
    names = [t["function"]["name"] for t in body.get("tools", [])]
    message: dict[str, Any] = {"role": "assistant", "content": "done"}
    if len(done) < 2:
        if not done:
            name, arguments = "toolSearchTool", json.dumps(query)
        else:
            name, arguments = _pick(names, done[-1].get("content"), "toolSearchTool")
        call = {
            "id": f"c{len(done)}",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "finish_reason": "stop", "message": message}
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]}


def _responses(body: dict[str, Any], query: Any) -> dict[str, Any]:
    items = body.get("input", [])
    done = [i for i in items if i.get("type") in ("function_call_output", "tool_search_output")]
    tools = body.get("tools", [])
    hosted = any(t.get("type") == "tool_search" and t.get("execution") == "client" for t in tools)
    names = [t["name"] for t in tools if t.get("type") == "function"]
    output: list[dict[str, Any]]
    if not done:
        if hosted:
            output = [
                {
                    "type": "tool_search_call",
                    "id": "ts",
                    "call_id": "c0",
                    "execution": "client",
                    "status": "completed",
                    "arguments": query,
                }
            ]
        else:
            output = [
                {
                    "type": "function_call",
                    "id": "f0",
                    "call_id": "c0",
                    "name": "toolSearchTool",
                    "arguments": json.dumps(query),
                }
            ]
    elif len(done) < 2:
        last = done[-1]
        carried = [t.get("name") for t in last.get("tools", []) if isinstance(t, dict)]
        name, arguments = _pick(
            names + [n for n in carried if n], last.get("output"), "toolSearchTool"
        )
        output = [
            {
                "type": "function_call",
                "id": "f1",
                "call_id": "c1",
                "name": name,
                "arguments": arguments,
            }
        ]
    else:
        output = [
            {
                "type": "message",
                "id": "m",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "done", "annotations": []}],
            }
        ]
    return {
        "id": "r",
        "object": "response",
        "created_at": 1,
        "model": "m",
        "status": "completed",
        "output": output,
    }


def _anthropic(body: dict[str, Any], query: Any) -> dict[str, Any]:
    turns = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
    results = [b for c in turns if isinstance(c, list) for b in c if b.get("type") == "tool_result"]
    names = [t["name"] for t in body.get("tools", []) if "name" in t]
    content: list[dict[str, Any]] = [{"type": "text", "text": "done"}]
    stop = "end_turn"
    if len(results) < 2:
        stop = "tool_use"
        if not results:
            content = [{"type": "tool_use", "id": "t0", "name": "toolSearchTool", "input": query}]
        else:
            last = results[-1].get("content")
            refs = (
                [str(b.get("tool_name")) for b in last if isinstance(b, dict)]
                if isinstance(last, list)
                else []
            )
            name, arguments = _pick([*names, *refs], last, "toolSearchTool")
            content = [
                {"type": "tool_use", "id": "t1", "name": name, "input": json.loads(arguments)}
            ]
    return {
        "id": "msg", "type": "message", "role": "assistant", "model": "m", "content": content,
        "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }  # fmt: skip


def _models(server: ScriptedServer) -> dict[str, Callable[[], Any]]:
    import anthropic
    import openai

    from toolsearch.models import AnthropicChatModel, OpenAIChatModel
    from toolsearch.models.openai_responses import OpenAIResponsesChatModel

    def client() -> Any:
        return openai.OpenAI(base_url=server.root + "/v1", api_key="k", max_retries=0)

    return {
        "openai-chat": lambda: OpenAIChatModel("m", client=client()),
        "openai-responses": lambda: OpenAIResponsesChatModel("m", client=client()),
        "anthropic": lambda: AnthropicChatModel(
            "m", client=anthropic.Anthropic(base_url=server.root, api_key="k", max_retries=0)
        ),
    }


def fuzz_injection(tool_sets: int, queries_per_set: int = 10, *, seed: int = 4747) -> FuzzReport:
    """``tool_sets`` hostile tool sets, ``queries_per_set`` model turns each through the
    advisor and a real provider SDK (the three in turn) against :class:`ScriptedServer`;
    options and index vary per tool set."""
    from toolsearch import (
        CONVERSATION_ID,
        ChatClient,
        FunctionToolCallback,
        ToolSearchToolCallingAdvisor,
    )
    from toolsearch.indexes import Bm25ToolIndex, HashingEmbedder
    from toolsearch.indexes.learning.learned import LearnedToolIndex
    from toolsearch.indexes.learning.memory import UsageMemory

    gen, report = HostileText(seed), FuzzReport()
    with ScriptedServer() as server:
        makers = _models(server)
        for number in range(tool_sets):
            report.tool_sets += 1
            rng = gen.rng
            callbacks = []
            tools = {t.name: t for t in _tools(gen, report, rng.randint(1, 10))}  # one each
            for tool in tools.values():
                with report.case("FunctionToolCallback"):
                    callbacks.append(
                        FunctionToolCallback.from_schema(
                            lambda _a, n=tool.name: f"{n} ok",
                            name=tool.name,
                            description=tool.description,
                            input_schema=tool.input_schema,
                        )
                    )
            memory = UsageMemory(clock=lambda: T0, save_at_exit=False)
            choice = rng.choice(["bm25", "learned", "hostile"])
            index: Any = (
                Bm25ToolIndex()
                if choice == "bm25"
                else HostileIndex(gen)
                if choice == "hostile"
                else LearnedToolIndex(Bm25ToolIndex(), memory=memory, embedder=HashingEmbedder(64))
            )
            kind = list(makers)[number % len(makers)]
            options: dict[str, Any] = {
                "injection": rng.choice(["tools", "results"]),
                "search_results_with_summaries": rng.random() < 0.5,
                "multi_query": rng.random() < 0.3,
            }
            client = None
            with report.case(f"advisor {options}"):
                advisor = ToolSearchToolCallingAdvisor(
                    tool_index=index, search_log=memory, **options
                )
                client = ChatClient.builder(makers[kind]()).default_advisors(advisor).build()
            if client is None:
                continue
            for _ in range(queries_per_set):
                report.queries += 1
                known = [t.name for t in tools.values()] + [t.description for t in tools.values()]
                text = rng.choice(known) if known and rng.random() < 0.4 else gen.text()
                query: Any = {"query": text}  # a tool's own name or words: hits to inject
                if options["multi_query"] and rng.random() < 0.5:
                    query = {"queries": [gen.text() for _ in range(rng.randint(1, 7))]}
                if rng.random() < 0.2:
                    query["maxResults"] = rng.choice([0, -1, 10**9, 1.5, "x", None])
                server.query = query
                session = rng.choice(["u1", "u2", gen.text(1) or "u3"])
                with report.case(f"{kind} {options}"):
                    client.prompt("hi " + gen.text(3)).tools(callbacks).advisors(
                        lambda a, s=session: a.param(CONVERSATION_ID, s)
                    ).call()
        report.requests = server.requests
        report.bad_bodies = server.bad_bodies
    return report
