"""Event-loop stall of every async front door during concurrent first runs.

Each front door (pydantic-ai, LangGraph, OpenAI Agents SDK, LangChain middleware, and the
core advisor's ``acall``) runs ``--runs`` concurrent first runs (``asyncio.gather``) over a
synthetic ``--tools``-tool catalog with a fresh ``--index`` (``hybrid`` by default: BM25 +
the packaged MiniLM). A ticker task on the same event loop sleeps 10 ms at a time and
records how late each tick comes back: the *stall* of a tick is its gap minus 10 ms. The
target is a max stall of at most 50 ms, idle and beside CPU-bound neighbour processes
(``--neighbours 0,2`` runs both conditions in one invocation, side by side).

Fairness of "first run":

* the MiniLM model is loaded once per process and warmed (one unrelated text embedded, as a
  document and as a query) before anything is timed: its load is process-wide, not a run's;
* every door gets a fresh index object per condition, and the process-wide tool-embedding
  cache (``toolsearch.indexes.vector._STORE``, read-only use of a private) and the
  embedder's query cache are emptied before each door, so the runs really embed the tools;
* the door objects (index, retriever, middleware, agent) are built on the event loop under
  the ticker too (the *build* columns);
* the loop thread's CPU time in each tick's gap (``time.thread_time``) is recorded beside
  the stall: the work that ran on the loop, which a loaded machine does not inflate.

The scripted models (async, as a real model client is) search once with the user's request
and then answer with the search result; a run counts as completed when it returned and its
answer names a catalog tool.

Attributing stalls: every cyclic-GC pause is recorded (``gc.callbacks``; a collection holds
the GIL whichever thread runs it, and a full one walks every object of a process that has
torch and four agent frameworks loaded), and the report counts the late ticks a pause
covered. ``--gc default,freeze`` runs every condition again with ``gc.freeze()`` in force
(what was alive after warm-up is never scanned again). ``--watchdog`` adds a thread that
samples the event-loop thread's stack whenever a tick is late by more than
``--watchdog-ms`` (it costs a little GIL time; a pause that holds the GIL hides from it).

    .venv/bin/python benchmarks/loop_stall.py [--tools 300] [--runs 10] [--index hybrid]
        [--neighbours 0,2] [--gc default,freeze] [--doors pydantic-ai,...] [--watchdog]
        [--out benchmarks/results/loop-stall.md]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime
import faulthandler
import gc
import json
import os
import platform
import random
import re
import shlex
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# no disk embedding cache: with it, every door after the first would read the catalog's
# 900 embeddings from disk instead of embedding them (set the variable to keep one)
os.environ.setdefault("TOOLSEARCH_EMBEDDING_CACHE", "off")

import toolsearch  # noqa: F401  (first: sets OMP_WAIT_POLICY before torch loads)

TARGET_MS = 50.0
DOORS = (
    "pydantic-ai",
    "langgraph",
    "openai-agents",
    "langchain",
    "advisor",
    "sdk-loop",
    "mcp-proxy",
)

# -- the synthetic catalog -------------------------------------------------------------------

# domain: (label, {object: [(field, json type, description)]})
DOMAINS: dict[str, tuple[str, dict[str, list[tuple[str, str, str]]]]] = {
    "crm": (
        "the CRM",
        {
            "contact": [
                ("email", "string", "The contact's email address"),
                ("full_name", "string", "The contact's full name"),
                ("phone", "string", "The contact's phone number"),
            ],
            "company": [
                ("domain", "string", "The company's web domain"),
                ("industry", "string", "The industry the company works in"),
                ("employees", "integer", "How many people the company employs"),
            ],
            "deal": [
                ("amount", "number", "The deal's value in the account currency"),
                ("stage", "string", "The pipeline stage, e.g. qualified or won"),
                ("close_date", "string", "The expected close date (YYYY-MM-DD)"),
            ],
            "lead": [
                ("source", "string", "Where the lead came from, e.g. webinar"),
                ("score", "integer", "The lead score from 0 to 100"),
                ("owner", "string", "The sales rep who owns the lead"),
            ],
            "note": [
                ("body", "string", "The text of the note"),
                ("pinned", "boolean", "Whether the note stays on top"),
            ],
            "activity": [
                ("kind", "string", "call, meeting or email"),
                ("due_date", "string", "When the activity is due (YYYY-MM-DD)"),
                ("subject", "string", "A short subject line"),
            ],
        },
    ),
    "calendar": (
        "the calendar",
        {
            "event": [
                ("title", "string", "The event title"),
                ("start", "string", "The start time (ISO 8601)"),
                ("attendees", "string", "Comma-separated attendee emails"),
            ],
            "calendar": [
                ("name", "string", "The calendar's name"),
                ("timezone", "string", "The calendar's IANA time zone"),
            ],
            "reminder": [
                ("minutes_before", "integer", "Minutes before the event"),
                ("method", "string", "popup or email"),
            ],
            "room": [
                ("capacity", "integer", "How many people the room seats"),
                ("building", "string", "The building the room is in"),
            ],
            "availability": [
                ("day", "string", "The day to check (YYYY-MM-DD)"),
                ("duration_minutes", "integer", "The slot length in minutes"),
            ],
            "invitation": [
                ("response", "string", "accepted, declined or tentative"),
                ("message", "string", "A note to the organizer"),
            ],
        },
    ),
    "payments": (
        "the payments account",
        {
            "payment": [
                ("amount", "number", "The amount to charge"),
                ("currency", "string", "The three-letter currency code"),
                ("customer_id", "string", "The paying customer's id"),
            ],
            "refund": [
                ("payment_id", "string", "The payment to refund"),
                ("amount", "number", "The amount to refund"),
                ("reason", "string", "Why the money goes back"),
            ],
            "invoice": [
                ("due_date", "string", "When the invoice is due (YYYY-MM-DD)"),
                ("customer_id", "string", "The billed customer's id"),
                ("memo", "string", "A memo printed on the invoice"),
            ],
            "subscription": [
                ("plan", "string", "The price plan's id"),
                ("quantity", "integer", "How many seats"),
                ("trial_days", "integer", "Days of free trial"),
            ],
            "payout": [
                ("amount", "number", "The amount to pay out"),
                ("bank_account", "string", "The destination bank account id"),
            ],
            "dispute": [
                ("evidence", "string", "Evidence text for the card network"),
                ("status", "string", "open, won or lost"),
            ],
        },
    ),
    "files": (
        "the file storage",
        {
            "file": [
                ("path", "string", "The file's path"),
                ("content", "string", "The file's text content"),
                ("mime_type", "string", "The file's media type"),
            ],
            "folder": [
                ("path", "string", "The folder's path"),
                ("color", "string", "The folder's label color"),
            ],
            "share_link": [
                ("expires_in_days", "integer", "Days until the link expires"),
                ("password", "string", "An optional password for the link"),
            ],
            "permission": [
                ("user_email", "string", "Who gets access"),
                ("role", "string", "viewer, commenter or editor"),
            ],
            "revision": [
                ("file_id", "string", "The file the revision belongs to"),
                ("label", "string", "A label for the revision"),
            ],
            "comment": [
                ("text", "string", "The comment's text"),
                ("anchor", "string", "Where in the file the comment points"),
            ],
        },
    ),
    "tickets": (
        "the help desk",
        {
            "ticket": [
                ("subject", "string", "The ticket's subject line"),
                ("priority", "string", "low, normal, high or urgent"),
                ("requester_email", "string", "Who asked for help"),
            ],
            "queue": [
                ("name", "string", "The queue's name"),
                ("sla_hours", "integer", "The response-time target in hours"),
            ],
            "macro": [
                ("title", "string", "The macro's title"),
                ("actions", "string", "The actions the macro applies"),
            ],
            "agent": [
                ("email", "string", "The support agent's email"),
                ("group", "string", "The agent's team"),
            ],
            "tag": [("name", "string", "The tag's name")],
            "satisfaction_survey": [
                ("rating", "integer", "The rating from 1 to 5"),
                ("feedback", "string", "The customer's comment"),
            ],
        },
    ),
}

# verb: (description templates, parameter kind)
VERBS: dict[str, tuple[tuple[str, ...], str]] = {
    "create": (
        ("Create a new {obj} in {label}.", "Add a {obj} to {label} with the given details."),
        "fields",
    ),
    "get": (
        ("Get one {obj} from {label} by its id.", "Fetch the details of a {obj} in {label}."),
        "id",
    ),
    "update": (
        ("Update the fields of an existing {obj} in {label}.", "Change a {obj} in {label}."),
        "id+fields",
    ),
    "delete": (("Delete a {obj} from {label} permanently.", "Remove a {obj} from {label}."), "id"),
    "list": (
        ("List the {objs} in {label}, newest first.", "Page through every {obj} in {label}."),
        "list",
    ),
    "search": (
        ("Search {label} for {objs} matching a text query.", "Find {objs} in {label} by keyword."),
        "query",
    ),
    "archive": (("Archive a {obj} in {label} so it no longer shows in lists.",), "id"),
    "export": (
        ("Export the {objs} of {label} as a CSV file.", "Download every {obj} in {label} as CSV."),
        "export",
    ),
    "assign": (
        (
            "Assign a {obj} in {label} to a teammate.",
            "Hand a {obj} in {label} over to another owner.",
        ),
        "assign",
    ),
    "merge": (("Merge two duplicate {objs} in {label} into one.",), "merge"),
    "count": (("Count the {objs} in {label} that match a filter.",), "list"),
    "restore": (("Restore a deleted or archived {obj} in {label}.",), "id"),
}


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    description: str
    required: bool = True


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[Param, ...]

    def schema(self, *, strict: bool = False) -> dict[str, Any]:
        """The JSON schema of the tool's arguments (``strict``: every property required, no
        extra ones, optional ones nullable, as the Agents SDK's strict mode wants)."""
        properties: dict[str, Any] = {}
        for p in self.params:
            kind: Any = p.type
            if strict and not p.required:
                kind = [p.type, "null"]
            properties[p.name] = {"type": kind, "description": p.description}
        required = [p.name for p in self.params if p.required or strict]
        out: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
        if strict:
            out["additionalProperties"] = False
        return out


def _plural(obj: str) -> str:
    word = obj.replace("_", " ")
    if word.endswith("y") and not word.endswith(("ay", "ey")):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch")) else "s")


def build_catalog(count: int, seed: int = 7) -> list[ToolSpec]:
    """``count`` tools (5 domains x 6 objects x 12 verbs = 360 distinct, a seeded sample;
    more than 360 repeat them as ``..._v2`` tools), each with a one-sentence description and
    1-3 parameters."""
    rng = random.Random(seed)
    combos = [
        (domain, obj, verb)
        for domain, (_, objects) in DOMAINS.items()
        for obj in objects
        for verb in VERBS
    ]
    rng.shuffle(combos)
    out: list[ToolSpec] = []
    round_ = 0
    while len(out) < count:
        for domain, obj, verb in combos:
            if len(out) >= count:
                break
            label, objects = DOMAINS[domain]
            templates, kind = VERBS[verb]
            words = obj.replace("_", " ")
            text = rng.choice(templates).format(obj=words, objs=_plural(obj), label=label)
            fields = [Param(*f) for f in objects[obj]]
            id_param = Param(f"{obj}_id", "string", f"The id of the {words}")
            params: list[Param]
            if kind == "fields":
                params = rng.sample(fields, k=min(len(fields), rng.randint(1, 3)))
            elif kind == "id":
                params = [id_param]
            elif kind == "id+fields":
                params = [id_param, *rng.sample(fields, k=rng.randint(1, min(2, len(fields))))]
            elif kind == "list":
                params = [Param("limit", "integer", "How many to return at most", False)]
                params += rng.sample(
                    [Param(f.name, f.type, f.description, False) for f in fields], k=1
                )
            elif kind == "query":
                params = [Param("query", "string", "The text to search for")]
                if rng.random() < 0.5:
                    params.append(Param("limit", "integer", "How many results at most", False))
            elif kind == "export":
                params = [Param("since", "string", "Only records changed since this date", False)]
            elif kind == "assign":
                params = [id_param, Param("assignee_email", "string", "Who takes it over")]
            else:  # merge
                params = [
                    Param("primary_id", "string", f"The {words} to keep"),
                    Param("duplicate_id", "string", f"The {words} merged into it"),
                ]
            suffix = f"_v{round_ + 1}" if round_ else ""
            out.append(ToolSpec(f"{domain}_{verb}_{obj}{suffix}", text, tuple(params)))
        round_ += 1
    return out


TASKS = (
    "create a new contact in the CRM for jane@example.com",
    "schedule a meeting event on the calendar with the sales team",
    "refund the last payment of customer 42",
    "share a file with a colleague through a link",
    "close the urgent support ticket from bob",
    "list the overdue invoices",
    "find a free meeting room for ten people",
    "merge two duplicate companies in the CRM",
    "export all tickets of the help desk as CSV",
    "upload the quarterly report file to the finance folder",
)


def result_of(spec: ToolSpec) -> Callable[..., str]:
    def run(*args: Any, **kwargs: Any) -> str:
        return f"{spec.name} ok"

    run.__name__ = spec.name
    return run


# -- measuring -------------------------------------------------------------------------------


class Ticker:
    """A task that sleeps ``period`` at a time and records each tick's lateness."""

    def __init__(self, period: float = 0.010, dump: tuple[Any, float] | None = None) -> None:
        self.period = period
        self.dump = dump
        """(file, seconds): have faulthandler dump every thread's stack when no tick came for
        that long (its C thread needs no GIL, so it sees stalls a Python thread cannot)."""
        self.stalls: list[float] = []
        self.cpu: list[float] = []
        """The loop thread's CPU time (``time.thread_time``) in each tick's gap: the work that
        ran on the loop, without the time the machine's load kept the process waiting."""
        self.late: list[tuple[float, float]] = []
        """(start, end) of every tick later than the target."""
        self.last_tick = time.perf_counter()
        self._stop = False
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        self.last_tick = time.perf_counter()
        last_cpu = time.thread_time()
        while not self._stop:
            if self.dump is not None:
                faulthandler.dump_traceback_later(self.dump[1], file=self.dump[0])
            await asyncio.sleep(self.period)
            now, cpu = time.perf_counter(), time.thread_time()
            stall = max(0.0, now - self.last_tick - self.period)
            self.stalls.append(stall)
            self.cpu.append(cpu - last_cpu)
            last_cpu = cpu
            if 1000 * stall > TARGET_MS:
                self.late.append((self.last_tick, now))
            self.last_tick = now

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> list[float]:
        self._stop = True
        if self._task is not None:
            await self._task
        if self.dump is not None:
            faulthandler.cancel_dump_traceback_later()
        return self.stalls


class GcRecorder:
    """Every cyclic-GC pause of the process (``gc.callbacks``): start, end, generation. A
    collection holds the GIL throughout, whichever thread triggered it, so a long one
    stalls the event loop even when it ran on a worker thread."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, float, int]] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((self._started, time.perf_counter(), int(info["generation"])))

    def between(self, start: float, end: float) -> list[tuple[float, float, int]]:
        return [p for p in self.pauses if p[1] >= start and p[0] <= end]


_ATTRIBUTE = ("toolsearch", "pydantic_ai", "langchain", "langgraph", "/agents/", "loop_stall")


def _short(filename: str) -> str:
    parts = Path(filename).parts
    for anchor in ("site-packages", "toolsearch", "benchmarks"):
        if anchor in parts:
            i = parts.index(anchor)
            return "/".join(parts[i + (anchor == "site-packages") :])
    return Path(filename).name


class Watchdog(threading.Thread):
    """Samples the loop thread's stack while the ticker is late by more than ``limit``."""

    def __init__(self, ticker_ref: Callable[[], Ticker | None], limit: float) -> None:
        super().__init__(daemon=True, name="stall-watchdog")
        self.ticker_ref = ticker_ref
        self.limit = limit
        self.loop_thread = threading.get_ident()
        self.samples: collections.Counter[str] = collections.Counter()
        self.by_phase: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter
        )
        self.worst: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter
        )
        self.phase = ""
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(0.005):
            ticker = self.ticker_ref()
            if ticker is None:
                continue
            late = time.perf_counter() - ticker.last_tick - ticker.period
            if late < self.limit:
                continue
            frame = sys._current_frames().get(self.loop_thread)
            if frame is None:
                continue
            stack = list(reversed(traceback.extract_stack(frame)))  # innermost first
            inner = stack[:3]
            ours = [f for f in stack[3:] if any(k in f.filename for k in _ATTRIBUTE)][:3]
            key = " <- ".join(f"{_short(f.filename)}:{f.lineno} {f.name}" for f in [*inner, *ours])
            self.by_phase[self.phase][key] += 1
            self.worst[self.phase][key] = max(self.worst[self.phase][key], late)

    def stop(self) -> None:
        self._stop_event.set()


@dataclass
class Phase:
    wall: float = 0.0
    stalls: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    ok: int = 0
    errors: list[str] = field(default_factory=list)
    embedded: int = 0
    embed_calls: int = 0
    late: list[tuple[float, float]] = field(default_factory=list)
    gc: list[tuple[float, float, int]] = field(default_factory=list)

    def gc_max_ms(self, generation: int | None = None) -> float:
        return 1000 * max(
            (e - s for s, e, g in self.gc if generation is None or g == generation), default=0.0
        )

    def gc_count(self, generation: int) -> int:
        return sum(1 for _, _, g in self.gc if g == generation)

    def late_in_gc(self) -> int:
        """Late ticks (over the target) during which a GC pause took at least half the
        stall."""
        out = 0
        for start, end in self.late:
            stall = end - start
            inside = sum(
                min(end, e) - max(start, s) for s, e, _ in self.gc if e > start and s < end
            )
            if inside >= 0.5 * stall:
                out += 1
        return out

    def over(self, ms: float = TARGET_MS) -> int:
        return sum(1 for s in self.stalls if 1000 * s > ms)

    @property
    def max_ms(self) -> float:
        return 1000 * max(self.stalls, default=0.0)

    @property
    def cpu_max_ms(self) -> float:
        """The most CPU the loop thread spent in one tick's gap."""
        return 1000 * max(self.cpu, default=0.0)

    @property
    def cpu_at_worst_ms(self) -> float:
        """The loop thread's CPU in the gap of the latest tick."""
        if not self.stalls:
            return 0.0
        return 1000 * self.cpu[max(range(len(self.stalls)), key=self.stalls.__getitem__)]

    def pct_ms(self, q: float) -> float:
        if not self.stalls:
            return 0.0
        ordered = sorted(self.stalls)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class DoorResult:
    door: str
    skipped: str | None = None
    build: Phase = field(default_factory=Phase)
    runs: Phase = field(default_factory=Phase)


class EmbedCounter:
    """Counts the texts the shared embedder embeds as documents (wraps the instance's
    method; the library is untouched)."""

    def __init__(self, embedder: Any) -> None:
        self.texts = 0
        self.calls = 0
        original = embedder.embed_documents

        def counted(texts: Any) -> Any:
            self.texts += len(texts)
            self.calls += 1
            return original(texts)

        embedder.embed_documents = counted

    def take(self) -> tuple[int, int]:
        out = (self.texts, self.calls)
        self.texts = self.calls = 0
        return out


def shared_embedder() -> Any:
    from toolsearch.indexes.vector import _default_embedder

    return _default_embedder()


def empty_caches(embedder: Any) -> None:
    from toolsearch.indexes import vector

    store = vector._STORE
    with store._lock:
        store._vectors.clear()
    embedder.clear_query_cache()


# -- the doors -------------------------------------------------------------------------------
# A door factory makes the framework's tool objects (the application's catalog, untimed) and
# returns an async ``build(index_spec) -> run``: build makes the door objects (a fresh index,
# the door, the agent) on the loop, timed; ``await run(i)`` is one first run, returning the
# answer.


def fresh_index(spec: str) -> Any:
    from toolsearch.indexes.specs import make_index

    return make_index(spec)


def pydantic_ai_door(catalog: list[ToolSpec]) -> Callable[[str], Awaitable[Any]]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.toolsets import FunctionToolset

    from toolsearch.integrations.pydantic_ai import toolsearch_tool_search

    async def model_fn(messages: list[Any], info: Any) -> Any:  # async, as a real model is
        last = messages[-1]
        for part in last.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name == "search_tools":
                return ModelResponse(parts=[TextPart(f"found {part.content}")])
        prompt = next(
            p.content for m in messages for p in m.parts if type(p).__name__ == "UserPromptPart"
        )
        return ModelResponse(
            parts=[ToolCallPart("search_tools", {"queries": [prompt]}, tool_call_id="s1")]
        )

    tools = [
        Tool.from_schema(
            result_of(t), name=t.name, description=t.description, json_schema=t.schema()
        )
        for t in catalog
    ]

    async def build(spec: str) -> Callable[[int], Awaitable[str]]:
        agent = Agent(
            FunctionModel(model_fn),
            toolsets=[FunctionToolset(tools).defer_loading()],
            capabilities=[toolsearch_tool_search(fresh_index(spec))],
        )

        async def run(i: int) -> str:
            result = await agent.run(TASKS[i % len(TASKS)])
            return str(result.output)

        return run

    return build


def _fake_chat_model(search_name: str) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class SearchingFakeModel(GenericFakeChatModel):
        """Searches with the user's words, then answers with the search result (decided
        from the messages alone, so concurrent runs can share it)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _reply(self, messages: list[Any]) -> AIMessage:
            last = messages[-1]
            if isinstance(last, ToolMessage):
                return AIMessage(f"found {last.content}")
            user = next(m.content for m in messages if isinstance(m, HumanMessage))
            call = {"name": search_name, "args": {"query": user}, "id": "s1"}
            return AIMessage("", tool_calls=[call])

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            return self._generate(messages)

    return SearchingFakeModel(messages=iter(()))


def _langchain_tools(catalog: list[ToolSpec]) -> list[Any]:
    from langchain_core.tools import StructuredTool
    from pydantic import Field, create_model

    py = {"string": str, "integer": int, "number": float, "boolean": bool}
    tools = []
    for t in catalog:
        fields: dict[str, Any] = {}
        for p in t.params:
            kind = py[p.type]
            if p.required:
                fields[p.name] = (kind, Field(description=p.description))
            else:
                fields[p.name] = (kind | None, Field(default=None, description=p.description))
        model = create_model(f"{t.name}_args", **fields)
        tools.append(
            StructuredTool.from_function(
                func=result_of(t), name=t.name, description=t.description, args_schema=model
            )
        )
    return tools


def langgraph_door(catalog: list[ToolSpec]) -> Callable[[str], Awaitable[Any]]:
    from toolsearch.integrations.langgraph import ToolSearchToolRetriever, create_agent

    tools = _langchain_tools(catalog)

    async def build(spec: str) -> Callable[[int], Awaitable[str]]:
        retriever = ToolSearchToolRetriever(tools, index=fresh_index(spec))  # indexes here
        graph = create_agent(_fake_chat_model("retrieve_tools"), retriever).compile()

        async def run(i: int) -> str:
            out = await graph.ainvoke(
                {"messages": [("user", TASKS[i % len(TASKS)])]},
                config={"configurable": {"thread_id": f"langgraph-{i}-{time.time_ns()}"}},
            )
            return str(out["messages"][-1].content)

        return run

    return build


def openai_agents_door(catalog: list[ToolSpec]) -> Callable[[str], Awaitable[Any]]:
    from agents import Agent, FunctionTool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call

    from toolsearch.integrations.openai_agents import ToolSearchAgentTools

    set_tracing_disabled(True)

    def function_tool_of(t: ToolSpec) -> FunctionTool:
        fn = result_of(t)

        async def invoke(ctx: Any, arguments: str) -> str:
            return fn(**json.loads(arguments or "{}"))

        return FunctionTool(
            name=t.name,
            description=t.description,
            params_json_schema=t.schema(strict=True),
            on_invoke_tool=invoke,
        )

    function_tools = [function_tool_of(t) for t in catalog]

    async def build(spec: str) -> Callable[[int], Awaitable[str]]:
        search = ToolSearchAgentTools(function_tools, index=fresh_index(spec))

        async def run(i: int) -> str:
            task = TASKS[i % len(TASKS)]
            model = ScriptedModel(
                [
                    [
                        function_call(
                            "search_tools", {"query": task, "maxResults": None}, call_id=f"s{i}"
                        )
                    ],
                    [assistant_message("done")],
                ]
            )
            agent = Agent(name=f"a{i}", model=model, tools=search.tools)
            result = await search.run(agent, task)
            outputs = [
                str(item.output)
                for item in result.new_items
                if getattr(item, "type", "") == "tool_call_output_item"
            ]
            return f"{result.final_output}: {' '.join(outputs)}"

        return run

    return build


def langchain_door(catalog: list[ToolSpec]) -> Callable[[str], Awaitable[Any]]:
    from langchain.agents import create_agent

    from toolsearch.integrations.langchain import ToolSearchMiddleware

    tools = _langchain_tools(catalog)

    async def build(spec: str) -> Callable[[int], Awaitable[str]]:
        middleware = ToolSearchMiddleware(index=fresh_index(spec))
        agent = create_agent(
            _fake_chat_model(middleware.search_tool_name), tools=tools, middleware=[middleware]
        )

        async def run(i: int) -> str:
            out = await agent.ainvoke(
                {"messages": [{"role": "user", "content": TASKS[i % len(TASKS)]}]},
                config={"configurable": {"thread_id": f"langchain-{i}-{time.time_ns()}"}},
            )
            return str(out["messages"][-1].content)

        return run

    return build


def advisor_door(catalog: list[ToolSpec]) -> Callable[[str], Awaitable[Any]]:
    from toolsearch import (
        AssistantMessage,
        ChatClient,
        FunctionToolCallback,
        ToolCall,
        ToolResponseMessage,
        ToolSearchToolCallingAdvisor,
        UserMessage,
    )
    from toolsearch.models import FunctionChatModel

    async def model_fn(messages: list[Any], tools: list[Any]) -> Any:  # async, as a real model
        last = messages[-1]
        if isinstance(last, ToolResponseMessage):
            return AssistantMessage(content=f"found {last.responses[0].response_data}")
        user = next(m.content for m in messages if isinstance(m, UserMessage))
        search_name = next(t.name for t in tools)  # the search tool comes first
        call = ToolCall(id="s1", name=search_name, arguments=json.dumps({"query": user}))
        return AssistantMessage(content=None, tool_calls=(call,))

    tools = [
        FunctionToolCallback.from_schema(
            result_of(t), name=t.name, description=t.description, input_schema=t.schema()
        )
        for t in catalog
    ]

    async def build(spec: str) -> Callable[[int], Awaitable[str]]:
        advisor = ToolSearchToolCallingAdvisor(tool_index=fresh_index(spec))
        client = ChatClient.builder(FunctionChatModel(model_fn)).default_advisors(advisor).build()

        async def run(i: int) -> str:
            response = await client.prompt(TASKS[i % len(TASKS)]).tools(tools).acall()
            return str(response.content())

        return run

    return build


def sdk_loop_door(catalog: list[ToolSpec]) -> Callable[[str], Awaitable[Any]]:
    """An ``AsyncOpenAI``-style hand-written loop over the SDK-loop door's async twins:
    the tool list, then the model's search call answered with ``aopenai_result``."""
    from toolsearch.integrations.sdk_loop import ToolSearchLoop

    definitions = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.schema()},
        }
        for t in catalog
    ]

    async def build(spec: str) -> Callable[[int], Awaitable[str]]:
        loop = ToolSearchLoop(definitions, index=fresh_index(spec))

        async def run(i: int) -> str:
            task = TASKS[i % len(TASKS)]
            session = loop.session(f"sdk-loop-{i}-{time.time_ns()}")
            tools = await session.atools("openai")
            name = tools[0]["function"]["name"]  # the search tool comes first
            call = {
                "id": f"s{i}",
                "function": {"name": name, "arguments": json.dumps({"query": task})},
            }
            result = await session.aopenai_result(call)
            await session.atools("openai")  # the next request's list
            return f"found {result['content'] if result else ''}"

        return run

    return build


def mcp_proxy_door(catalog: list[ToolSpec]) -> Callable[[str], Awaitable[Any]]:
    """The MCP search proxy's ``search_tools`` as its MCP server answers it, over an
    in-process provider (no subprocess): ``start()`` indexes, each run searches once."""
    from toolsearch.mcp.proxy import McpSearchProxy
    from toolsearch.tools.function import FunctionToolCallback

    callbacks = [
        FunctionToolCallback.from_schema(
            result_of(t), name=t.name, description=t.description, input_schema=t.schema()
        )
        for t in catalog
    ]

    class Provider:
        server_names = ("bench",)
        connected_servers: dict[str, Any] = {}  # noqa: RUF012

        async def aconnect(self) -> None: ...

        def add_listener(self, listener: Any) -> None: ...

        def current_tool_callbacks(self) -> list[Any]:
            return callbacks

    async def build(spec: str) -> Callable[[int], Awaitable[str]]:
        proxy = McpSearchProxy(Provider(), index=fresh_index(spec))  # type: ignore[arg-type]

        async def run(i: int) -> str:
            query = TASKS[i % len(TASKS)]
            result = await proxy._handle(proxy.search_tool_name, {"query": query})
            return "".join(getattr(block, "text", "") for block in result.content)

        return run

    return build


DOOR_FACTORIES: dict[str, Callable[[list[ToolSpec]], Callable[[str], Awaitable[Any]]]] = {
    "sdk-loop": sdk_loop_door,
    "mcp-proxy": mcp_proxy_door,
    "pydantic-ai": pydantic_ai_door,
    "langgraph": langgraph_door,
    "openai-agents": openai_agents_door,
    "langchain": langchain_door,
    "advisor": advisor_door,
}


# -- running ---------------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.catalog = build_catalog(args.tools, args.seed)
        self.names = {t.name for t in self.catalog}
        self.ticker: Ticker | None = None
        self.watchdog: Watchdog | None = None
        self.embedder: Any = None
        self.counter: EmbedCounter | None = None
        self.builders: dict[str, Callable[[str], Awaitable[Any]] | str] = {}
        self.faiss_import: float | None = None
        self.gc = GcRecorder()
        self.dump_file: Any = None

    def prepare(self) -> float:
        """Warm the shared MiniLM (load it, embed one unrelated text) and import every door;
        returns the seconds it took."""
        started = time.perf_counter()
        if self.args.index in ("vector", "hybrid"):
            self.embedder = shared_embedder()
            self.embedder.embed_documents(["a warm-up sentence about the weather in Lisbon"])
            self.embedder.embed_query("warm-up query about sourdough bread")
            self.counter = EmbedCounter(self.embedder)
            t = time.perf_counter()
            import faiss  # noqa: F401  (process-wide too: VectorToolIndex() imports it)

            self.faiss_import = time.perf_counter() - t
        for door in self.args.doors:
            try:
                self.builders[door] = DOOR_FACTORIES[door](self.catalog)
            except Exception as exc:  # a door whose framework (or module) is missing
                self.builders[door] = f"{type(exc).__name__}: {exc}"
        if self.args.warm == "run":
            asyncio.run(self._warm_doors())
        else:
            asyncio.run(self._build_doors())
        return time.perf_counter() - started

    async def _build_doors(self) -> None:
        """``--warm build``: build every door once over a small catalog, as an app does at
        start-up (each door imports what it needs when it is built), and run nothing: the
        first timed runs include each door's first request."""
        small = [
            ToolSpec(f"warmup_{t.name}", t.description, t.params)
            for t in build_catalog(8, self.args.seed + 1)
        ]
        for door, builder in list(self.builders.items()):
            if isinstance(builder, str):
                continue
            try:
                await DOOR_FACTORIES[door](small)("bm25")
            except Exception as exc:
                self.builders[door] = f"build failed, {type(exc).__name__}: {exc}"

    async def _warm_doors(self) -> None:
        """One untimed run of every door over a small, different catalog with a BM25 index:
        the frameworks' and toolsearch's lazy imports happen here, not in a timed phase."""
        small = [
            ToolSpec(f"warmup_{t.name}", t.description, t.params)
            for t in build_catalog(8, self.args.seed + 1)
        ]
        for door, builder in list(self.builders.items()):
            if isinstance(builder, str):
                continue
            try:
                run = await DOOR_FACTORIES[door](small)("bm25")
                await run(0)
            except Exception as exc:
                self.builders[door] = f"warm-up failed, {type(exc).__name__}: {exc}"

    async def _measured(self, phase: Phase, work: Callable[[], Awaitable[Any]], name: str) -> Any:
        if self.watchdog is not None:
            self.watchdog.phase = name
        dump = None
        if self.dump_file is not None:
            os.write(self.dump_file.fileno(), f"=== phase {name}\n".encode())
            dump = (self.dump_file, self.args.dump_ms / 1000)
        ticker = Ticker(self.args.tick_ms / 1000, dump)
        ticker.start()
        await asyncio.sleep(0.05)  # the ticker is running before the work starts
        self.ticker = ticker
        if self.counter is not None:
            self.counter.take()
        started = time.perf_counter()
        try:
            return await work()
        finally:
            phase.wall = time.perf_counter() - started
            self.ticker = None
            phase.stalls = await ticker.stop()
            phase.cpu = ticker.cpu
            phase.late = ticker.late
            phase.gc = self.gc.between(started, time.perf_counter())
            if self.counter is not None:
                phase.embedded, phase.embed_calls = self.counter.take()

    async def control(self, seconds: float = 2.0) -> Phase:
        """The ticker alone: what the machine itself costs a 10 ms sleep."""
        phase = Phase()
        await self._measured(phase, lambda: asyncio.sleep(seconds), "control")
        phase.ok = 1
        return phase

    async def door(self, door: str, condition: str) -> DoorResult:
        out = DoorResult(door)
        builder = self.builders[door]
        if isinstance(builder, str):
            out.skipped = builder
            return out
        if self.embedder is not None:
            empty_caches(self.embedder)

        run = await self._measured(
            out.build, lambda: builder(self.args.index), f"{condition}/{door}/build"
        )

        async def runs() -> list[Any]:
            return await asyncio.gather(
                *(run(i) for i in range(self.args.runs)), return_exceptions=True
            )

        results = await self._measured(out.runs, runs, f"{condition}/{door}/runs")
        for r in results:
            if isinstance(r, BaseException):
                out.runs.errors.append(f"{type(r).__name__}: {str(r)[:200]}")
            elif any(name in r for name in self.names):
                out.runs.ok += 1
            else:
                out.runs.errors.append(f"no tool found: {r[:200]!r}")
        return out

    async def condition(self, condition: str) -> tuple[Phase, list[DoorResult]]:
        control = await self.control()
        doors = []
        for door in self.args.doors:
            result = await self.door(door, condition)
            doors.append(result)
            print(
                f"  {condition:>13} {door:<14} "
                + (
                    f"skipped ({result.skipped})"
                    if result.skipped
                    else f"build {result.build.wall:6.2f}s max {result.build.max_ms:7.1f} ms | "
                    f"runs {result.runs.wall:6.2f}s max {result.runs.max_ms:7.1f} ms "
                    f"p95 {result.runs.pct_ms(0.95):6.1f} ms "
                    f"ok {result.runs.ok}/{self.args.runs} | "
                    f"gen2 {result.runs.gc_count(2)} longest {result.runs.gc_max_ms(2):.0f} ms, "
                    f"late in GC {result.runs.late_in_gc()}/{len(result.runs.late)}"
                ),
                flush=True,
            )
        return control, doors


def start_neighbours(n: int) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(n)
    ]


def stop_neighbours(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- reporting -------------------------------------------------------------------------------


def _versions() -> str:
    names = [
        "pydantic-ai-slim",
        "langgraph",
        "langchain",
        "langchain-core",
        "openai-agents",
        "sentence-transformers",
        "torch",
        "faiss-cpu",
    ]
    out = []
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out.append(f"{name} {metadata.version(name)}")
    return ", ".join(out)


def _revision() -> str:
    """The toolsearch commit measured, and whether its package files had local changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "toolsearch"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "toolsearch (not a git checkout)"
    changed = [line for line in dirty if line.strip()]
    extra = (
        f" plus uncommitted changes to {len(changed)} files under toolsearch/" if changed else ""
    )
    return f"toolsearch at commit {head}{extra}"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


Cond = tuple[int, bool]
"""A condition: how many neighbour processes, and whether ``gc.freeze()`` was in force."""


def _label(cond: Cond) -> str:
    n, frozen = cond
    text = "idle" if n == 0 else f"{n} neighbours"
    return f"{text}, gc.freeze()" if frozen else text


def _verdict(ms: float) -> str:
    return "ok" if ms <= TARGET_MS else "**over**"


def report(
    args: argparse.Namespace,
    command: str,
    warm: float,
    results: dict[Cond, tuple[Phase, list[DoorResult]]],
    loads: dict[Cond, tuple[float, float, float]],
    stacks: dict[str, collections.Counter[str]] | None,
    worsts: dict[str, collections.Counter[str]],
    faiss_import: float | None,
    started: datetime.datetime,
    elapsed: float,
) -> str:
    conds = list(results)
    revision = _revision()
    lines = [
        "# Event-loop stall of the async front doors",
        "",
        f"{args.runs} concurrent first runs per door (`asyncio.gather`), `{args.index}` index, "
        f"{args.tools}-tool synthetic catalog (CRM, calendar, payments, files, tickets; seed "
        f"{args.seed}), a {args.tick_ms:g} ms ticker on the same event loop. *Stall* of a tick: "
        f"its gap minus {args.tick_ms:g} ms. Target: max stall <= {TARGET_MS:g} ms.",
        "",
        f"Command: `{command}`",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC; total {elapsed:.0f} s. Machine: {os.cpu_count()} "
        f"CPUs (`nproc` {len(os.sched_getaffinity(0))}), {_cpu()}; Python "
        f"{platform.python_version()}; {_versions()}; {revision}.",
        "",
        "Load average (1/5/15 min) when each condition started: "
        + "; ".join(f"{_label(n)}: {' / '.join(f'{x:.2f}' for x in loads[n])}" for n in conds)
        + ".",
        "",
        "The MiniLM model was loaded and warmed (one unrelated text embedded as a document and "
        "as a query) once before timing ("
        + (
            "the library then freezes the objects alive out of the cyclic GC), and every door "
            "ran once, untimed, over an 8-tool catalog with a BM25 index, so no phase pays "
            "for first imports"
            if args.warm == "run"
            else "the library then freezes the objects alive out of the cyclic GC), and every "
            "door was built once over an 8-tool catalog, as an app builds its doors at "
            "start-up, and not run: the first condition's runs include each door's first "
            "request"
        )
        + f" ({warm:.1f} s in all, not counted)"
        + (
            f"; `import faiss`, which the first `VectorToolIndex()` of a process does, was done "
            f"then too ({1000 * faiss_import:.0f} ms)"
            if faiss_import is not None
            else ""
        )
        + ". Each door "
        "got a fresh index per condition, and the process-wide tool-embedding cache and the "
        "query cache were emptied before each door, so its runs embed the tools. Neighbours: "
        "`python -c 'while True: pass'` processes started by the script for the condition "
        "and killed after it.",
        "",
        "## Runs: max / p50 / p95 stall, wall time, runs completed",
        "",
    ]
    head = "| door |" + "".join(
        f" {_label(n)}: max ms | p50 | p95 | ticks > {TARGET_MS:g} ms | wall s | runs |"
        for n in conds
    )
    lines += [head, "|---|" + "---:|---:|---:|---:|---:|---:|" * len(conds)]
    control_row = "| (ticker alone, 2 s) |" + "".join(
        f" {results[n][0].max_ms:.1f} | {results[n][0].pct_ms(0.5):.2f} | "
        f"{results[n][0].pct_ms(0.95):.2f} | {results[n][0].over()} of "
        f"{len(results[n][0].stalls)} | - | - |"
        for n in conds
    )
    lines.append(control_row)
    for i, door in enumerate(args.doors):
        cells = []
        for n in conds:
            r = results[n][1][i]
            if r.skipped:
                cells.append(" skipped | | | | | |")
                continue
            p = r.runs
            cells.append(
                f" {p.max_ms:.1f} {_verdict(p.max_ms)} | {p.pct_ms(0.5):.2f} | "
                f"{p.pct_ms(0.95):.2f} | {p.over()} of {len(p.stalls)} | {p.wall:.2f} | "
                f"{p.ok}/{args.runs} |"
            )
        lines.append(f"| {door} |" + "".join(cells))
    lines += [
        "",
        "## Building the door objects on the loop (fresh index, door, agent; the tools exist)",
        "",
        "| door |" + "".join(f" {_label(n)}: max ms | wall s | texts embedded |" for n in conds),
        "|---|" + "---:|---:|---:|" * len(conds),
    ]
    for i, door in enumerate(args.doors):
        cells = []
        for n in conds:
            r = results[n][1][i]
            if r.skipped:
                cells.append(" skipped | | |")
                continue
            b = r.build
            cells.append(f" {b.max_ms:.1f} {_verdict(b.max_ms)} | {b.wall:.2f} | {b.embedded} |")
        lines.append(f"| {door} |" + "".join(cells))
    lines += [
        "",
        "## Work on the loop: the loop thread's CPU time in a tick's gap",
        "",
        "`time.thread_time()` of the event-loop thread between two ticks: the synchronous "
        "work that ran on the loop in that gap (GC pauses the loop thread triggered included), "
        "without the time the process waited for a CPU or for the GIL, so it reads the same on "
        "a loaded machine. *Max*: the busiest gap; *at worst*: the gap of the latest tick "
        "(a stall far above it was waiting, not work on the loop).",
        "",
        "| door |"
        + "".join(
            f" {_label(n)}: runs max ms | runs at worst | build max ms | build at worst |"
            for n in conds
        ),
        "|---|" + "---:|---:|---:|---:|" * len(conds),
    ]
    control_cpu = "| (ticker alone, 2 s) |" + "".join(
        f" {results[n][0].cpu_max_ms:.1f} | {results[n][0].cpu_at_worst_ms:.1f} | - | - |"
        for n in conds
    )
    lines.append(control_cpu)
    for i, door in enumerate(args.doors):
        cells = []
        for n in conds:
            r = results[n][1][i]
            if r.skipped:
                cells.append(" skipped | | | |")
                continue
            cells.append(
                f" {r.runs.cpu_max_ms:.1f} | {r.runs.cpu_at_worst_ms:.1f} | "
                f"{r.build.cpu_max_ms:.1f} | {r.build.cpu_at_worst_ms:.1f} |"
            )
        lines.append(f"| {door} |" + "".join(cells))
    lines += [
        "",
        "## Texts the shared embedder embedded during the runs (calls)",
        "",
        "| door |" + "".join(f" {_label(n)} |" for n in conds),
        "|---|" + "---:|" * len(conds),
    ]
    for i, door in enumerate(args.doors):
        cells = []
        for n in conds:
            r = results[n][1][i]
            cells.append(" - |" if r.skipped else f" {r.runs.embedded} ({r.runs.embed_calls}) |")
        lines.append(f"| {door} |" + "".join(cells))
    lines += [
        "",
        "## Cyclic GC during the runs",
        "",
        "A collection holds the GIL from start to end, whichever thread triggered it. "
        f"*Late ticks in GC*: ticks over {TARGET_MS:g} ms of which a GC pause covered at "
        "least half.",
        "",
        "| door |"
        + "".join(
            f" {_label(n)}: gen-2 collections | longest gen 2 ms | longest any ms | "
            f"late ticks in GC |"
            for n in conds
        ),
        "|---|" + "---:|---:|---:|---:|" * len(conds),
    ]
    for i, door in enumerate(args.doors):
        cells = []
        for n in conds:
            r = results[n][1][i]
            if r.skipped:
                cells.append(" - | | | |")
                continue
            p = r.runs
            cells.append(
                f" {p.gc_count(2)} | {p.gc_max_ms(2):.0f} | {p.gc_max_ms():.0f} | "
                f"{p.late_in_gc()} of {len(p.late)} |"
            )
        lines.append(f"| {door} |" + "".join(cells))
    skipped = {r.door: r.skipped for n in conds for r in results[n][1] if r.skipped}
    errors = [(n, r.door, e) for n in conds for r in results[n][1] for e in r.runs.errors[:3]]
    if skipped or errors:
        lines += ["", "## Skipped doors and failed runs", ""]
        lines += [f"- {door}: skipped, {why}" for door, why in skipped.items()]
        lines += [f"- {_label(n)}, {door}: {e}" for n, door, e in errors]
    if stacks:
        lines += [
            "",
            "## Where the threads were during stalls",
            "",
            f"`--watchdog`: the loop thread's stack, sampled every 5 ms while a tick was over "
            f"{args.watchdog_ms:g} ms late (innermost first). `--dump-ms`: faulthandler dumps "
            f"taken {args.dump_ms:g} ms into a stall: the loop thread's innermost frames, and "
            "the innermost frames of every worker thread that was not waiting idle.",
            "",
        ]
        for phase, counter in stacks.items():
            total = sum(counter.values())
            lines.append(f"- `{phase}` ({total} samples):")
            worst = worsts.get(phase, collections.Counter())
            for key, count in counter.most_common(6):
                late = f", up to {1000 * worst[key]:.0f} ms late" if key in worst else ""
                lines.append(f"  - {count}x{late}: `{key}`")
    return "\n".join(lines) + "\n"


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
_IDLE = ("threading.py", "queue.py", "selectors.py", "thread.py")


def summarize_dumps(text: str) -> dict[str, collections.Counter[str]]:
    """Per phase: how often each (loop thread's innermost frames | busy worker threads'
    innermost frames) was seen in a faulthandler dump taken during a stall."""
    main = f"0x{threading.main_thread().ident:016x}"
    out: dict[str, collections.Counter[str]] = {}
    for block in text.split("=== phase ")[1:]:
        name, _, body = block.partition("\n")
        counter = out.setdefault(f"dumps: {name}", collections.Counter())
        for dump in body.split("Timeout (")[1:]:
            loop_frames: list[str] = []
            busy: list[str] = []
            for thread in re.split(r"\n(?=(?:Current thread|Thread) 0x)", dump)[1:]:
                frames = [
                    f"{_short(m['file'])}:{m['line']} {m['func']}" for m in _FRAME.finditer(thread)
                ]
                if main in thread.split("\n", 1)[0]:
                    loop_frames = frames[:3]
                elif frames and not frames[0].split(":")[0].endswith(_IDLE):
                    busy.append(" <- ".join(frames[:2]))
            key = "loop: " + " <- ".join(loop_frames) + " || busy: " + (" ; ".join(busy) or "-")
            counter[key] += 1
    return {k: v for k, v in out.items() if v}


def print_table(
    args: argparse.Namespace, results: dict[Cond, tuple[Phase, list[DoorResult]]]
) -> None:
    """One table per condition (rich if installed, else plain text)."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Console = Table = None  # type: ignore[assignment,misc]
    headers = ["door", "max ms", "p50 ms", "p95 ms", f"ticks > {TARGET_MS:g} ms", "wall s"]
    headers += ["runs", "build max ms", "loop CPU max ms", "gen-2 GCs", "longest GC ms"]
    for cond, (control, doors) in results.items():
        rows = [["(ticker alone)", f"{control.max_ms:.1f}", f"{control.pct_ms(0.5):.2f}"]]
        rows[0] += [f"{control.pct_ms(0.95):.2f}", str(control.over()), "-", "-", "-"]
        rows[0] += [f"{control.cpu_max_ms:.1f}", "-", "-"]
        for r in doors:
            if r.skipped:
                rows.append([r.door, "skipped", *[""] * (len(headers) - 2)])
                continue
            p = r.runs
            row = [r.door, f"{p.max_ms:.1f}", f"{p.pct_ms(0.5):.2f}", f"{p.pct_ms(0.95):.2f}"]
            row += [str(p.over()), f"{p.wall:.2f}", f"{p.ok}/{args.runs}", f"{r.build.max_ms:.1f}"]
            row += [f"{p.cpu_max_ms:.1f}", str(p.gc_count(2)), f"{p.gc_max_ms():.0f}"]
            rows.append(row)
        title = f"{_label(cond)}: {args.runs} concurrent first runs, {args.index}"
        if Table is not None:
            table = Table(title=title)
            for h in headers:
                table.add_column(h, justify="left" if h == "door" else "right")
            for row in rows:
                table.add_row(*row)
            Console(width=None if sys.stdout.isatty() else 160).print(table)
        else:
            print(title)
            print(" | ".join(headers))
            for row in rows:
                print(" | ".join(row))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=300)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--index", default="hybrid", help="an index spec (hybrid, bm25...)")
    parser.add_argument(
        "--neighbours", default="0,2", help="comma-separated neighbour counts, one condition each"
    )
    parser.add_argument("--doors", default=",".join(DOORS), help=f"subset of {','.join(DOORS)}")
    parser.add_argument(
        "--gc",
        default="default",
        help="default and/or freeze (gc.freeze() after warm-up): one set of "
        "conditions each, e.g. default,freeze",
    )
    parser.add_argument(
        "--warm",
        choices=("build", "run"),
        default="build",
        help="before timing: build each door once (build: the first timed runs include the "
        "first request) or also run it once untimed (run: the old protocol)",
    )
    parser.add_argument("--tick-ms", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--watchdog", action="store_true", help="sample the loop thread's stack during stalls"
    )
    parser.add_argument("--watchdog-ms", type=float, default=40.0)
    parser.add_argument(
        "--dump-ms",
        type=float,
        default=0.0,
        help="dump every thread's stack (faulthandler) when the loop has not "
        "ticked for this long; summarized in the report (0: off). A diagnostic: "
        "faulthandler reads other threads' frames unsafely and the process "
        "may crash (seen once here)",
    )
    parser.add_argument("--out", type=Path, default=None, help="markdown report to write")
    args = parser.parse_args()
    args.doors = [d.strip() for d in args.doors.split(",") if d.strip()]
    unknown = set(args.doors) - set(DOORS)
    if unknown:
        parser.error(f"unknown doors {sorted(unknown)}")
    counts = [int(x) for x in args.neighbours.split(",") if x.strip()]
    modes = []
    for mode in (m.strip() for m in args.gc.split(",") if m.strip()):
        if mode not in ("default", "freeze"):
            parser.error(f"--gc takes default and/or freeze, not {mode!r}")
        modes.append(mode == "freeze")
    command = " ".join(
        shlex.quote(a) for a in [".venv/bin/python", "benchmarks/loop_stall.py", *sys.argv[1:]]
    )
    started = datetime.datetime.now(datetime.UTC)
    t0 = time.perf_counter()

    bench = Bench(args)
    warm = bench.prepare()
    dump_path = None
    if args.dump_ms > 0:
        dump_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"loop_stall_dumps_{os.getpid()}.txt"
        bench.dump_file = dump_path.open("w+")
    gc.callbacks.append(bench.gc)
    print(f"warm-up {warm:.1f} s; {len(bench.catalog)} tools; doors {', '.join(args.doors)}")
    for door, builder in bench.builders.items():
        if isinstance(builder, str):
            print(f"  SKIP {door}: {builder}")

    results: dict[Cond, tuple[Phase, list[DoorResult]]] = {}
    loads: dict[Cond, tuple[float, float, float]] = {}

    async def run_all() -> None:
        if args.watchdog:
            bench.watchdog = Watchdog(lambda: bench.ticker, args.watchdog_ms / 1000)
            bench.watchdog.start()
        for frozen in modes:
            for n in counts:
                cond = (n, frozen)
                procs = start_neighbours(n)
                try:
                    if frozen:
                        gc.collect()
                        gc.freeze()  # what is alive now is never scanned by a collection
                    if procs:
                        await asyncio.sleep(1.0)
                    loads[cond] = os.getloadavg()
                    results[cond] = await bench.condition(_label(cond))
                finally:
                    if frozen:
                        gc.unfreeze()
                    stop_neighbours(procs)
        if bench.watchdog is not None:
            bench.watchdog.stop()

    asyncio.run(run_all())
    print_table(args, results)
    stacks = dict(bench.watchdog.by_phase) if bench.watchdog is not None else None
    worsts = dict(bench.watchdog.worst) if bench.watchdog is not None else {}
    if bench.dump_file is not None:
        bench.dump_file.flush()
        stacks = {**(stacks or {}), **summarize_dumps(dump_path.read_text())}
        print(f"thread dumps: {dump_path}")
    text = report(
        args,
        command,
        warm,
        results,
        loads,
        stacks,
        worsts,
        bench.faiss_import,
        started,
        time.perf_counter() - t0,
    )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}")
    over = [
        (n, r.door)
        for n in results
        for r in results[n][1]
        if not r.skipped and r.runs.max_ms > TARGET_MS
    ]
    for n, door in over:
        print(f"over target: {door} ({_label(n)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
