"""The core's hook seam (``toolsearch.observe``): the core emits, an observer listens.

Telemetry is one observer among possible others: these tests attach a recording observer
in its place and check what the loop reports, that nothing changes when none listens, and
that no core module imports ``toolsearch.telemetry``.
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from toolsearch import CONVERSATION_ID, AssistantMessage, ChatClient, ToolCall, observe, tool
from toolsearch.chat.model import BaseChatModel
from toolsearch.models import FunctionChatModel
from toolsearch.telemetry.observer import OpenTelemetryObserver

PACKAGE = Path(__file__).resolve().parents[2] / "toolsearch"


class RecordingObserver:
    """Records every hook in order; wraps by calling through."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.model_classes: list[type] = []

    def chat_client_call(self, model: Any, prompt: Any, advisors: Any, run: Any, **kw: Any) -> Any:
        self.events.append(("client", "call"))
        self.conversation = kw.get("conversation_id")
        return run()

    async def chat_client_acall(
        self, model: Any, prompt: Any, advisors: Any, run: Any, **kw: Any
    ) -> Any:
        self.events.append(("client", "acall"))
        return await run()

    def chat_client_stream(
        self, model: Any, prompt: Any, advisors: Any, open_stream: Any, **kw: Any
    ) -> Any:
        self.events.append(("client", "stream"))
        return open_stream()

    def chat_client_astream(
        self, model: Any, prompt: Any, advisors: Any, open_stream: Any, **kw: Any
    ) -> Any:
        self.events.append(("client", "astream"))
        return open_stream()

    def model_class_defined(self, cls: type) -> None:
        self.model_classes.append(cls)

    @contextmanager
    def tool_span(self, callback: Any, call: Any) -> Iterator[Any]:
        events = self.events

        class Report:
            def result(self, text: str) -> None:
                events.append(("tool", call.name, "result", text))

            def failed(self, exc: BaseException) -> None:
                events.append(("tool", call.name, "failed", type(exc).__name__))

        yield Report()

    def annotate_tool_span(self, key: str, value: Any) -> None:
        self.events.append(("annotate", key, value()))

    @contextmanager
    def search_span(self, index: Any, **details: Any) -> Iterator[Any]:
        events = self.events

        class Report:
            def hits(self, names: Any, scores: Any, **kw: Any) -> None:
                events.append(("search", details["query"], tuple(names)))

            def error(self, code: str) -> None:
                events.append(("search", details["query"], code))

        yield Report()


@pytest.fixture
def recorder() -> Iterator[RecordingObserver]:
    observer = RecordingObserver()
    previous = observe.attach_observer(observer)
    try:
        yield observer
    finally:
        observe.attach_observer(previous)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def broken() -> str:
    """Always fails."""
    raise RuntimeError("no")


def _script(messages: list[Any], tools: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "done"
    return AssistantMessage(
        tool_calls=(
            ToolCall(id="1", name="add", arguments='{"a": 2, "b": 3}'),
            ToolCall(id="2", name="broken", arguments="{}"),
        )
    )


def test_the_loop_reports_the_request_and_each_tool(recorder: RecordingObserver) -> None:
    client = ChatClient.builder(FunctionChatModel(_script)).build()
    answer = client.prompt("add").tools(add, broken).call().content()
    assert answer == "done"
    assert recorder.events == [
        ("client", "call"),
        ("tool", "add", "result", "5"),
        ("tool", "broken", "failed", "ToolExecutionError"),
    ]


def test_the_request_tells_the_conversation_it_names(recorder: RecordingObserver) -> None:
    client = ChatClient.builder(FunctionChatModel(lambda m, t: "ok")).build()
    client.prompt("x").advisors(lambda a: a.param(CONVERSATION_ID, "c-9")).call()
    assert recorder.conversation == "c-9"
    client.prompt("x").call()
    assert recorder.conversation is None


def test_async_and_streamed_requests_pass_through_their_hooks(
    recorder: RecordingObserver,
) -> None:
    client = ChatClient.builder(FunctionChatModel(lambda m, t: "hi there")).build()
    assert "".join(client.prompt("x").stream().content()) == "hi there"

    async def run() -> str:
        response = await client.prompt("x").acall()
        chunks = [c async for c in client.prompt("x").astream().content()]
        return (response.content() or "") + "".join(chunks)

    assert asyncio.run(run()) == "hi therehi there"
    assert [e[1] for e in recorder.events] == ["stream", "acall", "astream"]


def test_without_an_observer_every_hook_calls_straight_through() -> None:
    previous = observe.attach_observer(None)
    try:
        client = ChatClient.builder(FunctionChatModel(_script)).build()
        assert client.prompt("add").tools(add, broken).call().content() == "done"
        with observe.tool_span(None, None) as span:
            span.result("x")
        with observe.search_span(None, session_id="s", query="q", limit=1) as search:
            search.hits([], [], search_type=None, total_matches=0)
        observe.annotate_tool_span("k", lambda: pytest.fail("computed with nobody listening"))
    finally:
        observe.attach_observer(previous)


def test_an_observer_attached_later_is_shown_the_model_classes_defined_before() -> None:
    class EarlyModel(BaseChatModel):
        def call(self, prompt: Any) -> Any:
            raise NotImplementedError

    late = RecordingObserver()
    previous = observe.attach_observer(late)
    try:
        assert EarlyModel in late.model_classes
        assert BaseChatModel in late.model_classes

        class LaterModel(EarlyModel):
            pass

        assert late.model_classes[-1] is LaterModel
    finally:
        observe.attach_observer(previous)


def test_import_toolsearch_attaches_opentelemetry_and_it_fits_the_protocol() -> None:
    attached = observe.attached_observer()
    assert isinstance(attached, OpenTelemetryObserver)
    assert isinstance(attached, observe.Observer)


def test_an_augmented_tool_annotates_through_the_hook(recorder: RecordingObserver) -> None:
    from pydantic import BaseModel

    from toolsearch import augment_tools

    class Why(BaseModel):
        reason: str

    seen: list[Any] = []
    (augmented,) = augment_tools(add, arguments=Why, consumer=seen.append)
    augmented.call('{"a": 1, "b": 2, "reason": "test"}')
    assert ("annotate", "toolsearch.tool.augmented_arguments", {"reason": "test"}) in [
        e[:3] for e in recorder.events
    ]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_core_module_imports_telemetry() -> None:
    """Only the package's root (which attaches it) and telemetry itself name it."""
    offenders = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] not in ("telemetry", "__init__.py")
        and any(name.startswith("toolsearch.telemetry") for name in _imports(path))
    )
    assert offenders == []
