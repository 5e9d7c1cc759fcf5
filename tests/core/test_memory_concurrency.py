"""Chat memory that loses nothing: concurrent appends (threads and processes), window
trimming under concurrent writers, any Python string, and malformed stored rows."""

from __future__ import annotations

import multiprocessing
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ChatMemoryError,
    InMemoryChatMemoryRepository,
    MessageChatMemoryAdvisor,
    MessageWindowChatMemory,
    SqliteChatMemoryRepository,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.chat.messages import Message
from toolsearch.memory import ChatMemoryRepository
from toolsearch.memory.repository import AppendableChatMemoryRepository, append_messages
from toolsearch.models import FunctionChatModel
from toolsearch.tools.definition import ToolDefinition

WRITERS = 4
APPENDS = 250
CONVERSATION = "shared"


def _message(writer: int, i: int) -> UserMessage:
    return UserMessage(content=f"writer {writer} message {i}", metadata={"w": writer, "i": i})


def _by_writer(messages: Sequence[Message]) -> dict[int, list[int]]:
    runs: dict[int, list[int]] = {}
    for message in messages:
        runs.setdefault(message.metadata["w"], []).append(message.metadata["i"])
    return runs


def _assert_all_in_writer_order(messages: Sequence[Message], writers: int, appends: int) -> None:
    assert len(messages) == writers * appends
    assert _by_writer(messages) == {w: list(range(appends)) for w in range(writers)}


def _assert_valid_window(
    snapshot: Sequence[Message], max_messages: int, reader: int | None = None, last: int = -1
) -> None:
    """Each writer's messages in a window are a gap-free run in its own order; the reader's
    own run, if any is left, ends with the message it has just added."""
    assert len(snapshot) <= max_messages
    for writer, run in _by_writer(snapshot).items():
        assert run == list(range(run[0], run[0] + len(run))), f"writer {writer} lost {run}"
        if writer == reader:
            assert run[-1] == last, f"writer {writer} added {last}, the window holds {run}"


# -- processes -----------------------------------------------------------------------------


def _process_writer(path: str, writer: int, mode: str, max_messages: int, start: Any) -> None:
    """One writer process: opens the (possibly new) file itself, once every writer is up."""
    start.wait(60)
    repository = SqliteChatMemoryRepository(path)
    memory = MessageWindowChatMemory(repository, max_messages=max_messages)
    for i in range(APPENDS):
        if mode == "append":
            repository.append(CONVERSATION, [_message(writer, i)])
        else:
            memory.add(CONVERSATION, [_message(writer, i)])
            if mode == "window":
                _assert_valid_window(memory.get(CONVERSATION), max_messages, writer, i)
    repository.close()


def _run_processes(path: Path, mode: str, max_messages: int) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    processes = [
        context.Process(
            target=_process_writer, args=(str(path), w, mode, max_messages, start), daemon=True
        )
        for w in range(WRITERS)
    ]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(120)
    for process in processes:
        if process.is_alive():
            process.kill()
    assert [p.exitcode for p in processes] == [0] * WRITERS, "a writer failed (see stderr)"


def _positions(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT position FROM chat_memory WHERE conversation_id = ? ORDER BY position",
            (CONVERSATION,),
        ).fetchall()
    return [row[0] for row in rows]


@pytest.mark.parametrize("mode", ["append", "memory"])
def test_processes_appending_to_one_conversation_lose_nothing(tmp_path: Path, mode: str) -> None:
    """4 processes x 250 appends to one conversation of one SQLite file, directly and
    through a window memory large enough to hold them all: all 1,000 stored."""
    path = tmp_path / "memory.db"
    _run_processes(path, mode, max_messages=WRITERS * APPENDS)
    repository = SqliteChatMemoryRepository(path)
    try:
        _assert_all_in_writer_order(
            repository.find_by_conversation_id(CONVERSATION), WRITERS, APPENDS
        )
        assert repository.find_conversation_ids() == [CONVERSATION]
    finally:
        repository.close()
    assert _positions(path) == list(range(WRITERS * APPENDS))


def test_processes_trimming_a_window_drop_only_messages_outside_it(tmp_path: Path) -> None:
    """Trimming under 4 concurrent writer processes: every snapshot is a valid window that
    holds the reader's own newest message, and the end state is exactly the 50 newest of
    the 1,000 appends."""
    path = tmp_path / "window.db"
    window = 50
    _run_processes(path, "window", max_messages=window)
    total = WRITERS * APPENDS
    assert _positions(path) == list(range(total - window, total))
    repository = SqliteChatMemoryRepository(path)
    final = MessageWindowChatMemory(repository, max_messages=window).get(CONVERSATION)
    repository.close()
    assert len(final) == window
    _assert_valid_window(final, window)


# -- threads -------------------------------------------------------------------------------


class _PlainRepository:
    """A custom repository with only the four protocol methods (no ``append``), which
    yields the GIL between reading and writing to provoke lost updates."""

    def __init__(self) -> None:
        self._store: dict[str, list[Message]] = {}

    def find_conversation_ids(self) -> list[str]:
        return list(self._store)

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        found = list(self._store.get(conversation_id, ()))
        time.sleep(0)
        return found

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        self._store[conversation_id] = list(messages)

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        self._store.pop(conversation_id, None)


@pytest.fixture(params=["in_memory", "sqlite", "plain"])
def shared_repository(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], ChatMemoryRepository]]:
    """A factory of repositories over one store: the same in-memory or plain object, or a
    new SQLite instance per call on one file."""
    if request.param == "in_memory":
        in_memory = InMemoryChatMemoryRepository()
        yield lambda: in_memory
    elif request.param == "plain":
        plain = _PlainRepository()
        yield lambda: plain
    else:
        opened: list[SqliteChatMemoryRepository] = []

        def open_sqlite() -> ChatMemoryRepository:
            opened.append(SqliteChatMemoryRepository(tmp_path / "threads.db"))
            return opened[-1]

        yield open_sqlite
        for repository in opened:
            repository.close()


def _run_threads(target: Callable[[int], None]) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(WRITERS)

    def run(writer: int) -> None:
        try:
            start.wait(10)
            target(writer)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(WRITERS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]


def test_threads_appending_to_one_conversation_lose_nothing(
    shared_repository: Callable[[], ChatMemoryRepository],
) -> None:
    """4 threads x 250 adds, each thread through its own window memory over one store
    (for SQLite, its own instance on one file): all 1,000 stored in each writer's order."""
    check = shared_repository()

    def write(writer: int) -> None:
        memory = MessageWindowChatMemory(shared_repository(), max_messages=WRITERS * APPENDS)
        for i in range(APPENDS):
            memory.add(CONVERSATION, [_message(writer, i)])

    _run_threads(write)
    _assert_all_in_writer_order(check.find_by_conversation_id(CONVERSATION), WRITERS, APPENDS)


def test_threads_trimming_a_window_drop_only_messages_outside_it(
    shared_repository: Callable[[], ChatMemoryRepository],
) -> None:
    window = 20
    check = shared_repository()

    def write(writer: int) -> None:
        memory = MessageWindowChatMemory(shared_repository(), max_messages=window)
        for i in range(APPENDS):
            memory.add(CONVERSATION, [_message(writer, i)])
            _assert_valid_window(memory.get(CONVERSATION), window, writer, i)

    _run_threads(write)
    final = MessageWindowChatMemory(check, max_messages=window).get(CONVERSATION)
    assert len(final) == window
    _assert_valid_window(final, window)
    # trimming stores only the window
    assert len(check.find_by_conversation_id(CONVERSATION)) == window


def test_appendable_protocol_and_fallback() -> None:
    assert isinstance(InMemoryChatMemoryRepository(), AppendableChatMemoryRepository)
    assert isinstance(SqliteChatMemoryRepository(), AppendableChatMemoryRepository)
    plain = _PlainRepository()
    assert isinstance(plain, ChatMemoryRepository)
    assert not isinstance(plain, AppendableChatMemoryRepository)
    append_messages(plain, "c", [_message(0, 0), _message(0, 1)])
    append_messages(plain, "c", [_message(0, 2)], retain=lambda stored: [len(stored) - 1])
    assert plain.find_by_conversation_id("c") == [_message(0, 2)]


def test_window_keeps_the_newest_system_message_when_trimming(tmp_path: Path) -> None:
    repository = SqliteChatMemoryRepository(tmp_path / "system.db")
    memory = MessageWindowChatMemory(repository, max_messages=2)
    memory.add("c", [SystemMessage(content="old"), _message(0, 0)])
    memory.add("c", [SystemMessage(content="new"), _message(0, 1), _message(0, 2)])
    memory.add("c", [_message(0, 3)])
    assert memory.get("c") == [SystemMessage(content="new"), _message(0, 2), _message(0, 3)]
    # the stored rows are the window, in the order they were added
    assert repository.find_by_conversation_id("c") == [
        SystemMessage(content="new"),
        _message(0, 2),
        _message(0, 3),
    ]


# -- any Python string ---------------------------------------------------------------------

ODD_TEXTS = [
    "lone high \ud800",
    "lone low \udfff at the end",
    "\ud83d\ude00 two surrogate code points, not one emoji",
    "\udc80\udcff bytes smuggled by surrogateescape",
    "nul \x00 and control \x1b characters",
    "plain \u00e9 \u2603 \U0001f600",
]


@pytest.fixture(params=["in_memory", "sqlite"])
def any_repository(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "in_memory":
        yield InMemoryChatMemoryRepository()
    else:
        repository = SqliteChatMemoryRepository(tmp_path / "text.db")
        yield repository
        repository.close()


def test_any_python_string_round_trips_exactly(any_repository: Any) -> None:
    messages: list[Message] = [
        SystemMessage(content=ODD_TEXTS[0], metadata={ODD_TEXTS[1]: ODD_TEXTS[2]}),
        UserMessage(content=ODD_TEXTS[1]),
        AssistantMessage(
            content=ODD_TEXTS[2],
            tool_calls=(ToolCall(id=ODD_TEXTS[3], name="f", arguments=ODD_TEXTS[0]),),
        ),
        ToolResponseMessage(
            responses=(ToolResponse(id=ODD_TEXTS[3], name="f", response_data=ODD_TEXTS[4]),)
        ),
        AssistantMessage(content=ODD_TEXTS[5]),
    ]
    conversation = "conversation \ud800"
    any_repository.save_all(conversation, messages[:2])
    any_repository.append(conversation, messages[2:])
    found = any_repository.find_by_conversation_id(conversation)
    assert found == messages
    assert [m.text for m in found] == [m.text for m in messages]  # code point for code point
    assert any_repository.find_conversation_ids() == [conversation]
    any_repository.delete_by_conversation_id(conversation)
    assert any_repository.find_conversation_ids() == []


def test_odd_text_survives_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "reopen.db"
    first = SqliteChatMemoryRepository(path)
    first.append("c", [UserMessage(content=t) for t in ODD_TEXTS])
    first.close()
    second = SqliteChatMemoryRepository(path)
    try:
        assert [m.text for m in second.find_by_conversation_id("c")] == ODD_TEXTS
    finally:
        second.close()


@tool(description="Echo a word back, with a lone surrogate")
def echo(word: str) -> str:
    return f"echo {word} \udfff"


def _echo_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, UserMessage) and last.content.startswith("echo") and tools:
        return AssistantMessage(tool_calls=[ToolCall(id=f"e{len(messages)}", name="echo")])
    if isinstance(last, ToolResponseMessage):
        return f"the tool said {last.responses[0].response_data}"
    return f"you said {last.text} \ud800"


@pytest.mark.parametrize("order", [200, 400], ids=["outside", "inside"])
def test_surrogates_round_trip_through_the_advisor(tmp_path: Path, order: int) -> None:
    """A user message, a tool result and an answer holding lone surrogates are remembered
    exactly and resent on the next turn; the calls never fail."""

    def echo_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage:
        last = messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("echo"):
            return AssistantMessage(
                tool_calls=[ToolCall(id="e1", name="echo", arguments='{"word": "w\\ud800"}')]
            )
        if isinstance(last, ToolResponseMessage):
            return AssistantMessage(content=f"the tool said {last.responses[0].response_data}")
        return AssistantMessage(content=f"you said {last.text} \ud800")

    repository = SqliteChatMemoryRepository(tmp_path / "advisor.db")
    model = FunctionChatModel(echo_model)
    client = (
        ChatClient.builder(model)
        .default_tools(echo)
        .default_advisors(
            MessageChatMemoryAdvisor(MessageWindowChatMemory(repository), order=order),
            lambda a: a.param(CONVERSATION_ID, "c\udc80"),
        )
        .build()
    )
    first = client.prompt("hi \ud800\udc00 \udfff").call().content()
    assert first == "you said hi \ud800\udc00 \udfff \ud800"
    second = client.prompt("echo please").call().content()
    assert second == "the tool said echo w\ud800 \udfff"
    third = client.prompt("and now?").call().content()
    assert third == "you said and now? \ud800"

    sent = list(model.requests[-1].messages)
    assert sent[:2] == [
        UserMessage(content="hi \ud800\udc00 \udfff"),
        AssistantMessage(content=first),
    ]
    assert sent[-1] == UserMessage(content="and now?")
    if order == 400:  # inside the loop, the tool call and result are remembered exactly
        results = [m for m in sent if isinstance(m, ToolResponseMessage)]
        assert [r.responses[0].response_data for r in results] == ["echo w\ud800 \udfff"]
    repository.close()
    reopened = SqliteChatMemoryRepository(tmp_path / "advisor.db")
    try:
        assert reopened.find_conversation_ids() == ["c\udc80"]
        assert reopened.find_by_conversation_id("c\udc80")[0] == sent[0]
    finally:
        reopened.close()


class _Utf8OnlyRepository(InMemoryChatMemoryRepository):
    """A custom store that, like many external stores, accepts only valid UTF-8."""

    def append(self, conversation_id: str, messages: Sequence[Message], **kwargs: Any) -> None:
        for message in messages:
            try:
                message.text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ChatMemoryError(f"cannot store {message.role} message: {exc}") from exc
        super().append(conversation_id, messages, **kwargs)


def test_advisor_stores_replacement_characters_when_a_store_rejects_surrogates(
    caplog: pytest.LogCaptureFixture,
) -> None:
    repository = _Utf8OnlyRepository()
    model = FunctionChatModel(_echo_model)
    client = (
        ChatClient.builder(model)
        .default_advisors(MessageChatMemoryAdvisor(MessageWindowChatMemory(repository)))
        .build()
    )
    with caplog.at_level("WARNING", logger="toolsearch.memory.advisor"):
        assert client.prompt("a\ud800b").call().content() == "you said a\ud800b \ud800"
    assert repository.find_by_conversation_id("default") == [
        UserMessage(content="a\ufffdb"),
        AssistantMessage(content="you said a\ufffdb \ufffd"),
    ]
    assert "U+FFFD" in caplog.text


def test_advisor_still_raises_other_memory_errors() -> None:
    class Broken(InMemoryChatMemoryRepository):
        def append(self, conversation_id: str, messages: Sequence[Message], **kwargs: Any) -> None:
            raise ChatMemoryError("disk full")

    client = (
        ChatClient.builder(FunctionChatModel(_echo_model))
        .default_advisors(MessageChatMemoryAdvisor(MessageWindowChatMemory(Broken())))
        .build()
    )
    with pytest.raises(ChatMemoryError, match="disk full"):
        client.prompt("hello").call()


# -- malformed stored rows -----------------------------------------------------------------

MALFORMED = {
    "not json": "{not json",
    "json but not a message": '{"role": "robot", "content": "beep"}',
    "a message missing its content": '{"role": "user"}',
    "a json list": "[1, 2, 3]",
    "invalid utf-8": b"\xff\xfe{}",
    "a number": 42,
    "deeply nested": "[" * 200_000,
}


@pytest.mark.parametrize("value", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_row_raises_chat_memory_error_naming_conversation_and_row(
    tmp_path: Path, value: object
) -> None:
    path = tmp_path / "malformed.db"
    repository = SqliteChatMemoryRepository(path)
    repository.append("victim", [_message(0, 0), _message(0, 1)])
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE chat_memory SET message = ? WHERE conversation_id = ? AND position = 1",
            (value, "victim"),
        )
    try:
        with pytest.raises(ChatMemoryError) as raised:
            repository.find_by_conversation_id("victim")
        assert "'victim'" in str(raised.value)
        assert "position 1" in str(raised.value)
        assert "\n" not in str(raised.value)
        # trimming reads the rows too: the append fails as a whole and stores nothing
        memory = MessageWindowChatMemory(repository, max_messages=5)
        with pytest.raises(ChatMemoryError, match="position 1"):
            memory.add("victim", [_message(0, 2)])
        with pytest.raises(ChatMemoryError, match="position 1"):
            memory.get("victim")
        assert _positions_of(path, "victim") == [0, 1]
        # other conversations are unaffected, and clearing the broken one recovers it
        repository.append("other", [_message(1, 0)])
        assert repository.find_by_conversation_id("other") == [_message(1, 0)]
        memory.clear("victim")
        memory.add("victim", [_message(0, 3)])
        assert memory.get("victim") == [_message(0, 3)]
    finally:
        repository.close()


def test_a_malformed_row_fails_the_advisor_with_chat_memory_error(tmp_path: Path) -> None:
    path = tmp_path / "advisor.db"
    repository = SqliteChatMemoryRepository(path)
    repository.append("default", [UserMessage(content="hi")])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE chat_memory SET message = '{\"role\": 1}'")
    client = (
        ChatClient.builder(FunctionChatModel(_echo_model))
        .default_advisors(MessageChatMemoryAdvisor(MessageWindowChatMemory(repository)))
        .build()
    )
    try:
        with pytest.raises(ChatMemoryError, match=r"'default'.*position 0"):
            client.prompt("hello").call()
    finally:
        repository.close()


def _positions_of(path: Path, conversation_id: str) -> list[int]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT position FROM chat_memory WHERE conversation_id = ? ORDER BY position",
            (conversation_id,),
        ).fetchall()
    return [row[0] for row in rows]


def test_sqlite_write_waits_for_another_writer_then_reports_a_memory_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "busy.db"
    SqliteChatMemoryRepository(path).close()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    repository = SqliteChatMemoryRepository(path, timeout=0.2)
    try:
        started = time.monotonic()
        with pytest.raises(ChatMemoryError, match="cannot append to conversation 'c'"):
            repository.append("c", [_message(0, 0)])
        assert time.monotonic() - started >= 0.15
        blocker.execute("ROLLBACK")
        repository.append("c", [_message(0, 0)])
        assert repository.find_by_conversation_id("c") == [_message(0, 0)]
    finally:
        blocker.close()
        repository.close()


def test_sqlite_file_uses_wal(tmp_path: Path) -> None:
    repository = SqliteChatMemoryRepository(tmp_path / "wal.db")
    repository.close()
    with sqlite3.connect(tmp_path / "wal.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
