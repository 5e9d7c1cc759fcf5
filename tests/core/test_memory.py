"""Chat memory: repositories (in memory, SQLite), the message window, the memory advisor."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    BaseAdvisor,
    ChatClient,
    ChatClientRequest,
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
from toolsearch.loop.advisor import AdvisorChain
from toolsearch.memory import ChatMemory, ChatMemoryRepository
from toolsearch.models import FunctionChatModel
from toolsearch.tools.definition import ToolDefinition

# -- shared fixtures and helpers -----------------------------------------------------------


def _user(text: str) -> UserMessage:
    return UserMessage(content=text)


def _assistant(text: str) -> AssistantMessage:
    return AssistantMessage(content=text)


def _tool_call_message(*calls: tuple[str, str, dict]) -> AssistantMessage:
    return AssistantMessage(
        tool_calls=tuple(
            ToolCall(id=call_id, name=name, arguments=json.dumps(args))
            for call_id, name, args in calls
        )
    )


def _tool_results(*results: tuple[str, str, str]) -> ToolResponseMessage:
    return ToolResponseMessage(
        responses=tuple(
            ToolResponse(id=call_id, name=name, response_data=data)
            for call_id, name, data in results
        )
    )


def _key(message: Message) -> str:
    """A message's identity for duplicate checks (its full JSON form)."""
    return message.model_dump_json()


def _assert_no_duplicates(messages: Sequence[Message]) -> None:
    keys = [_key(m) for m in messages]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    assert not duplicated, f"messages sent more than once: {duplicated}"


def _assert_tool_responses_have_calls(messages: Sequence[Message]) -> None:
    """Every tool result answers a tool call that appears earlier in ``messages``."""
    seen_call_ids: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            seen_call_ids.update(call.id for call in message.tool_calls)
        if isinstance(message, ToolResponseMessage):
            for response in message.responses:
                assert response.id in seen_call_ids, f"orphan tool result {response.id!r}"


@tool(description="Get the current weather for a city")
def get_weather(city: str) -> str:
    return {"Paris": "18 degrees and cloudy", "Rome": "25 degrees and sunny"}.get(city, "unknown")


def weather_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
    """Behaves like a model: asks for the weather tool when asked about the weather,
    answers from a tool result, and otherwise recalls what the user said before."""
    last = messages[-1]
    if isinstance(last, ToolResponseMessage):
        response = last.responses[0]
        city = json.loads(_arguments_of(messages, response.id))["city"]
        return f"In {city}: {response.response_data}."
    assert isinstance(last, UserMessage), f"unexpected last message {last!r}"
    match = re.search(r"weather in (\w+)", last.content)
    if match and any(t.name == "get_weather" for t in tools):
        return AssistantMessage(
            tool_calls=[
                ToolCall(
                    id=f"call-{len(messages)}",
                    name="get_weather",
                    arguments=json.dumps({"city": match.group(1)}),
                )
            ]
        )
    earlier = [m.content for m in messages[:-1] if isinstance(m, UserMessage)]
    if earlier:
        return "Earlier you said: " + " | ".join(earlier)
    return f"Nice to meet you. You said: {last.content}"


def _arguments_of(messages: Sequence[Message], call_id: str) -> str:
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.id == call_id:
                    return call.arguments
    raise AssertionError(f"no tool call {call_id!r} in the request")


@pytest.fixture(params=["in_memory", "sqlite"])
def repository(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChatMemoryRepository]:
    if request.param == "in_memory":
        yield InMemoryChatMemoryRepository()
    else:
        repo = SqliteChatMemoryRepository(tmp_path / "memory.db")
        yield repo
        repo.close()


# -- repositories --------------------------------------------------------------------------


CONVERSATION = [
    SystemMessage(content="You are terse."),
    _user("What is the weather in Paris?"),
    _tool_call_message(("call-1", "get_weather", {"city": "Paris"})),
    _tool_results(("call-1", "get_weather", "18 degrees and cloudy")),
    _assistant("In Paris: 18 degrees and cloudy."),
]


def test_repository_satisfies_protocol(repository: ChatMemoryRepository) -> None:
    assert isinstance(repository, ChatMemoryRepository)


def test_repository_unknown_conversation_is_empty(repository: ChatMemoryRepository) -> None:
    assert repository.find_by_conversation_id("nobody") == []
    assert repository.find_conversation_ids() == []


def test_repository_keeps_message_order(repository: ChatMemoryRepository) -> None:
    repository.save_all("c1", CONVERSATION)
    assert repository.find_by_conversation_id("c1") == CONVERSATION


def test_repository_save_all_replaces(repository: ChatMemoryRepository) -> None:
    repository.save_all("c1", [_user("one"), _assistant("two"), _user("three")])
    repository.save_all("c1", [_user("four")])
    assert repository.find_by_conversation_id("c1") == [_user("four")]


def test_repository_append_adds_after_stored_messages(repository: ChatMemoryRepository) -> None:
    from toolsearch.memory.repository import append_messages

    append_messages(repository, "c1", [_user("one")])
    append_messages(repository, "c1", [_assistant("two"), _user("three")])
    assert repository.find_by_conversation_id("c1") == [
        _user("one"),
        _assistant("two"),
        _user("three"),
    ]
    # ``retain`` keeps the positions it returns, in stored order, in the same step
    append_messages(repository, "c1", [_assistant("four")], retain=lambda stored: [3, 0])
    assert repository.find_by_conversation_id("c1") == [_user("one"), _assistant("four")]
    append_messages(repository, "c1", [_user("five")])
    assert repository.find_by_conversation_id("c1")[-1] == _user("five")


def test_repository_find_conversation_ids(repository: ChatMemoryRepository) -> None:
    repository.save_all("alice", [_user("hi from alice")])
    repository.save_all("bob", [_user("hi from bob")])
    repository.save_all("alice", [_user("hi again from alice")])
    ids = repository.find_conversation_ids()
    assert sorted(ids) == ["alice", "bob"]
    assert len(ids) == 2


def test_repository_delete(repository: ChatMemoryRepository) -> None:
    repository.save_all("alice", [_user("hi from alice")])
    repository.save_all("bob", [_user("hi from bob")])
    repository.delete_by_conversation_id("alice")
    assert repository.find_by_conversation_id("alice") == []
    assert repository.find_conversation_ids() == ["bob"]
    assert repository.find_by_conversation_id("bob") == [_user("hi from bob")]
    repository.delete_by_conversation_id("never-existed")  # no error
    assert repository.find_conversation_ids() == ["bob"]


def test_repository_conversations_are_isolated(repository: ChatMemoryRepository) -> None:
    repository.save_all("alice", [_user("alice 1"), _assistant("to alice")])
    repository.save_all("bob", [_user("bob 1")])
    assert repository.find_by_conversation_id("alice") == [
        _user("alice 1"),
        _assistant("to alice"),
    ]
    assert repository.find_by_conversation_id("bob") == [_user("bob 1")]


def test_repository_returns_a_copy(repository: ChatMemoryRepository) -> None:
    repository.save_all("c1", [_user("one")])
    found = repository.find_by_conversation_id("c1")
    found.append(_user("not saved"))
    assert repository.find_by_conversation_id("c1") == [_user("one")]


def test_sqlite_round_trips_tool_calls_and_responses_faithfully(tmp_path: Path) -> None:
    messages: list[Message] = [
        SystemMessage(content="system", metadata={"source": "test"}),
        UserMessage(content="Weather in Paris and Rome? \u00e9\u00e8 \u2603", metadata={"n": 1}),
        AssistantMessage(
            content=None,
            tool_calls=(
                ToolCall(id="call-a", name="get_weather", arguments='{"city": "Paris"}'),
                ToolCall(id="call-b", name="get_weather", arguments='{"city":"Rome"}'),
            ),
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="call-a", name="get_weather", response_data="18 degrees"),
                ToolResponse(id="call-b", name="get_weather", response_data='{"temp": 25}'),
            )
        ),
        AssistantMessage(
            content="Thinking...",
            tool_calls=(ToolCall(id="call-c", name="noop", arguments="{}"),),
        ),
        ToolResponseMessage(responses=(ToolResponse(id="call-c", name="noop", response_data=""),)),
        AssistantMessage(content="Paris 18, Rome 25.", metadata={"finish": "stop"}),
    ]
    repo = SqliteChatMemoryRepository(tmp_path / "faithful.db")
    repo.save_all("c1", messages)
    found = repo.find_by_conversation_id("c1")
    repo.close()

    assert found == messages
    assert [type(m) for m in found] == [type(m) for m in messages]
    assistant = found[2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.content is None
    assert [(c.id, c.name, c.arguments) for c in assistant.tool_calls] == [
        ("call-a", "get_weather", '{"city": "Paris"}'),
        ("call-b", "get_weather", '{"city":"Rome"}'),
    ]
    results = found[3]
    assert isinstance(results, ToolResponseMessage)
    assert [r.response_data for r in results.responses] == ["18 degrees", '{"temp": 25}']


def test_sqlite_persists_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "persist.db"
    first = SqliteChatMemoryRepository(path)
    first.save_all("alice", CONVERSATION)
    first.save_all("bob", [_user("bob here")])
    first.close()

    second = SqliteChatMemoryRepository(str(path))
    try:
        assert sorted(second.find_conversation_ids()) == ["alice", "bob"]
        assert second.find_by_conversation_id("alice") == CONVERSATION
        assert second.find_by_conversation_id("bob") == [_user("bob here")]
        second.delete_by_conversation_id("bob")
    finally:
        second.close()

    third = SqliteChatMemoryRepository(path)
    try:
        assert third.find_conversation_ids() == ["alice"]
    finally:
        third.close()


def test_sqlite_two_instances_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    writer = SqliteChatMemoryRepository(path)
    reader = SqliteChatMemoryRepository(path)
    try:
        writer.save_all("c1", [_user("one")])
        assert reader.find_by_conversation_id("c1") == [_user("one")]
    finally:
        writer.close()
        reader.close()


# -- MessageWindowChatMemory ---------------------------------------------------------------


def test_window_memory_is_a_chat_memory() -> None:
    assert isinstance(MessageWindowChatMemory(), ChatMemory)


def test_window_keeps_last_n_messages() -> None:
    memory = MessageWindowChatMemory(max_messages=3)
    for i in range(3):
        memory.add("c1", [_user(f"u{i}"), _assistant(f"a{i}")])
    assert memory.get("c1") == [_assistant("a1"), _user("u2"), _assistant("a2")]


def test_window_add_appends_in_order_under_limit() -> None:
    memory = MessageWindowChatMemory(max_messages=10)
    memory.add("c1", [_user("u0")])
    memory.add("c1", [_assistant("a0")])
    memory.add("c1", [])
    assert memory.get("c1") == [_user("u0"), _assistant("a0")]


def test_window_system_messages_do_not_count_and_only_newest_kept() -> None:
    memory = MessageWindowChatMemory(max_messages=2)
    memory.add("c1", [SystemMessage(content="old rules"), _user("u0"), _assistant("a0")])
    memory.add("c1", [SystemMessage(content="new rules"), _user("u1")])
    kept = memory.get("c1")
    systems = [m for m in kept if isinstance(m, SystemMessage)]
    assert systems == [SystemMessage(content="new rules")]
    assert [m for m in kept if not isinstance(m, SystemMessage)] == [_assistant("a0"), _user("u1")]
    assert kept[0] == SystemMessage(content="new rules")


@pytest.mark.parametrize("max_messages", [1, 2, 3, 4, 5, 6, 7])
def test_window_never_starts_with_an_orphan_tool_response(max_messages: int) -> None:
    history: list[Message] = [
        _user("weather in Paris and Rome?"),
        _tool_call_message(("c1", "get_weather", {"city": "Paris"})),
        _tool_results(("c1", "get_weather", "18")),
        _tool_call_message(("c2", "get_weather", {"city": "Rome"})),
        _tool_results(("c2", "get_weather", "25")),
        _assistant("Paris 18, Rome 25."),
        _user("thanks"),
    ]
    memory = MessageWindowChatMemory(max_messages=max_messages)
    memory.add("c1", history)
    kept = memory.get("c1")
    assert len(kept) <= max_messages
    assert kept, "the window must keep at least the newest message"
    assert not isinstance(kept[0], ToolResponseMessage)
    _assert_tool_responses_have_calls(kept)
    # the window is a suffix of the history
    assert kept == history[len(history) - len(kept) :]


def test_window_drops_orphan_tool_response_at_cut() -> None:
    memory = MessageWindowChatMemory(max_messages=3)
    memory.add(
        "c1",
        [
            _user("weather?"),
            _tool_call_message(("c1", "get_weather", {"city": "Paris"})),
            _tool_results(("c1", "get_weather", "18")),
            _assistant("18 degrees."),
            _user("thanks"),
        ],
    )
    assert memory.get("c1") == [_assistant("18 degrees."), _user("thanks")]


def test_window_clear_and_isolation() -> None:
    memory = MessageWindowChatMemory(max_messages=5)
    memory.add("alice", [_user("alice")])
    memory.add("bob", [_user("bob")])
    memory.clear("alice")
    assert memory.get("alice") == []
    assert memory.get("bob") == [_user("bob")]


def test_window_over_sqlite_repository(tmp_path: Path) -> None:
    path = tmp_path / "window.db"
    repo = SqliteChatMemoryRepository(path)
    memory = MessageWindowChatMemory(repo, max_messages=4)
    memory.add("c1", CONVERSATION)
    repo.close()
    reopened = MessageWindowChatMemory(SqliteChatMemoryRepository(path), max_messages=4)
    assert reopened.get("c1") == CONVERSATION  # system + 4 others
    reopened.clear("c1")
    assert reopened.get("c1") == []


def test_window_rejects_non_positive_size() -> None:
    with pytest.raises(ValueError, match="max_messages"):
        MessageWindowChatMemory(max_messages=0)


# -- MessageChatMemoryAdvisor --------------------------------------------------------------


def test_conversation_id_key() -> None:
    assert CONVERSATION_ID == "chat_memory_conversation_id"


def test_advisor_default_order_is_outside_the_loop() -> None:
    assert MessageChatMemoryAdvisor(MessageWindowChatMemory()).order == 200


def test_advisor_default_conversation_id_is_default() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()
    answer = client.prompt("Hello, I am Ada").call().content()
    assert answer == "Nice to meet you. You said: Hello, I am Ada"
    assert memory.get("default") == [_user("Hello, I am Ada"), _assistant(answer)]


def test_advisor_conversation_id_from_param() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()
    answer = (
        client.prompt("Hello, I am Ada")
        .advisors(lambda a: a.param(CONVERSATION_ID, "u1"))
        .call()
        .content()
    )
    assert memory.get("u1") == [_user("Hello, I am Ada"), _assistant(answer)]
    assert memory.get("default") == []


def test_advisor_conversation_id_from_default_param() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = (
        ChatClient.builder(model)
        .default_advisors(
            MessageChatMemoryAdvisor(memory), lambda a: a.param(CONVERSATION_ID, "from-builder")
        )
        .build()
    )
    client.prompt("hi").call().content()
    client.prompt("again").advisors(lambda a: a.param(CONVERSATION_ID, "per-call")).call().content()
    assert [m.text for m in memory.get("from-builder")] == ["hi", "Nice to meet you. You said: hi"]
    assert [m.text for m in memory.get("per-call")] == [
        "again",
        "Nice to meet you. You said: again",
    ]
    assert memory.get("default") == []


def test_second_call_sees_first_exchange() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()

    def ask(text: str) -> str | None:
        return (
            client.prompt(text).advisors(lambda a: a.param(CONVERSATION_ID, "u1")).call().content()
        )

    first = ask("My name is Ada")
    second = ask("What is my name?")

    assert first == "Nice to meet you. You said: My name is Ada"
    assert second == "Earlier you said: My name is Ada"
    assert list(model.requests[1].messages) == [
        _user("My name is Ada"),
        _assistant(first),
        _user("What is my name?"),
    ]
    assert memory.get("u1") == [
        _user("My name is Ada"),
        _assistant(first),
        _user("What is my name?"),
        _assistant(second),
    ]


def test_system_message_is_sent_once_and_not_duplicated_across_turns() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = (
        ChatClient.builder(model)
        .default_system("You are terse.")
        .default_advisors(MessageChatMemoryAdvisor(memory))
        .build()
    )
    client.prompt("one").call().content()
    client.prompt("two").call().content()
    sent = list(model.requests[-1].messages)
    assert sent[0] == SystemMessage(content="You are terse.")
    assert sum(isinstance(m, SystemMessage) for m in sent) == 1
    assert [m.text for m in sent[1:]] == [
        "one",
        "Nice to meet you. You said: one",
        "two",
    ]
    _assert_no_duplicates(sent)


def test_conversations_are_isolated() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()

    def ask(conversation: str, text: str) -> str | None:
        return (
            client.prompt(text)
            .advisors(lambda a: a.param(CONVERSATION_ID, conversation))
            .call()
            .content()
        )

    ask("alice", "I am Alice")
    ask("bob", "I am Bob")
    answer = ask("alice", "Who am I?")

    assert answer == "Earlier you said: I am Alice"
    bob_request = model.requests[1]
    assert list(bob_request.messages) == [_user("I am Bob")]
    assert all("Bob" not in m.text for m in model.requests[2].messages)
    assert [m.text for m in memory.get("bob")] == [
        "I am Bob",
        "Nice to meet you. You said: I am Bob",
    ]


def _memory_client(
    model: FunctionChatModel, memory: ChatMemory, order: int | None, *, system: str | None = None
) -> ChatClient:
    advisor = (
        MessageChatMemoryAdvisor(memory)
        if order is None
        else MessageChatMemoryAdvisor(memory, order=order)
    )
    builder = ChatClient.builder(model).default_tools(get_weather).default_advisors(advisor)
    if system is not None:
        builder = builder.default_system(system)
    return builder.build()


def test_outside_the_loop_memory_holds_only_user_and_final_answer() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = _memory_client(model, memory, None)

    answer = client.prompt("What is the weather in Paris?").call().content()

    assert answer == "In Paris: 18 degrees and cloudy."
    assert memory.get("default") == [_user("What is the weather in Paris?"), _assistant(answer)]
    # the tool loop itself resent the history to the model on the second iteration
    assert len(model.requests) == 2
    second = list(model.requests[1].messages)
    assert [type(m) for m in second] == [UserMessage, AssistantMessage, ToolResponseMessage]
    _assert_no_duplicates(second)


def test_outside_the_loop_next_turn_sees_no_tool_messages() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = _memory_client(model, memory, 200)
    first = client.prompt("What is the weather in Paris?").call().content()
    client.prompt("And what did I ask?").call().content()
    assert list(model.requests[-1].messages) == [
        _user("What is the weather in Paris?"),
        _assistant(first),
        _user("And what did I ask?"),
    ]


class _Recorder(BaseAdvisor):
    """Records the messages each request carries at its position in the chain."""

    def __init__(self, order: int) -> None:
        super().__init__(order=order)
        self.seen: list[list[Message]] = []

    def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        self.seen.append(list(request.prompt.messages))
        return request


def test_inside_the_loop_memory_holds_tool_messages() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = _memory_client(model, memory, 400, system="You are terse.")

    answer = client.prompt("What is the weather in Paris?").call().content()

    assert answer == "In Paris: 18 degrees and cloudy."
    stored = memory.get("default")
    assert [type(m) for m in stored] == [
        UserMessage,
        AssistantMessage,
        ToolResponseMessage,
        AssistantMessage,
    ]
    assert stored[0] == _user("What is the weather in Paris?")
    call_message = stored[1]
    assert isinstance(call_message, AssistantMessage)
    assert [(c.name, json.loads(c.arguments)) for c in call_message.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    results = stored[2]
    assert isinstance(results, ToolResponseMessage)
    assert [(r.id, r.response_data) for r in results.responses] == [
        (call_message.tool_calls[0].id, "18 degrees and cloudy")
    ]
    assert stored[3] == _assistant(answer)

    # each model request carries the whole conversation exactly once
    assert len(model.requests) == 2
    first, second = (list(r.messages) for r in model.requests)
    assert first == [SystemMessage(content="You are terse."), stored[0]]
    assert second == [SystemMessage(content="You are terse."), *stored[:3]]
    for request in model.requests:
        _assert_no_duplicates(request.messages)


def test_inside_the_loop_the_tool_loop_stops_resending_history() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    recorder = _Recorder(order=350)  # between the tool loop (300) and memory (400)
    client = _memory_client(model, memory, 400)

    client.prompt("What is the weather in Paris?").advisors(recorder).call().content()

    assert len(recorder.seen) == 2
    second_iteration = recorder.seen[1]
    # the loop hands on only the new tool results; memory re-adds the rest
    assert _user("What is the weather in Paris?") not in second_iteration
    assert not any(isinstance(m, AssistantMessage) for m in second_iteration)
    assert isinstance(second_iteration[-1], ToolResponseMessage)


def test_inside_the_loop_second_turn_sees_whole_conversation_once() -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = _memory_client(model, memory, 400)

    def ask(text: str) -> str | None:
        return (
            client.prompt(text).advisors(lambda a: a.param(CONVERSATION_ID, "u1")).call().content()
        )

    ask("What is the weather in Paris?")
    first_turn = memory.get("u1")
    answer = ask("What is the weather in Rome?")

    assert answer == "In Rome: 25 degrees and sunny."
    assert len(model.requests) == 4
    third = list(model.requests[2].messages)
    assert third == [*first_turn, _user("What is the weather in Rome?")]
    fourth = list(model.requests[3].messages)
    assert fourth[: len(third)] == third
    assert [type(m) for m in fourth[len(third) :]] == [AssistantMessage, ToolResponseMessage]
    for request in model.requests:
        _assert_no_duplicates(request.messages)
        _assert_tool_responses_have_calls(request.messages)
    assert len(memory.get("u1")) == 8


def test_inside_the_loop_with_sqlite_memory_survives_restart(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    repo = SqliteChatMemoryRepository(path)
    model = FunctionChatModel(weather_model)
    client = _memory_client(model, MessageWindowChatMemory(repo), 400)
    client.prompt("What is the weather in Paris?").call().content()
    stored = MessageWindowChatMemory(repo).get("default")
    repo.close()

    repo2 = SqliteChatMemoryRepository(path)
    try:
        model2 = FunctionChatModel(weather_model)
        client2 = _memory_client(model2, MessageWindowChatMemory(repo2), 400)
        client2.prompt("What did I ask?").call().content()
        assert list(model2.requests[0].messages) == [*stored, _user("What did I ask?")]
        assert [type(m) for m in stored] == [
            UserMessage,
            AssistantMessage,
            ToolResponseMessage,
            AssistantMessage,
        ]
    finally:
        repo2.close()


@pytest.mark.parametrize(
    ("order", "expected_types"),
    [
        (200, [UserMessage, AssistantMessage]),
        (400, [UserMessage, AssistantMessage, ToolResponseMessage, AssistantMessage]),
    ],
    ids=["outside", "inside"],
)
def test_memory_under_stream(order: int, expected_types: list[type]) -> None:
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = _memory_client(model, memory, order)

    chunks = list(
        client.prompt("What is the weather in Paris?")
        .advisors(lambda a: a.param(CONVERSATION_ID, "s1"))
        .stream()
        .content()
    )

    assert "".join(chunks) == "In Paris: 18 degrees and cloudy."
    stored = memory.get("s1")
    assert [type(m) for m in stored] == expected_types
    assert stored[0] == _user("What is the weather in Paris?")
    assert stored[-1] == _assistant("In Paris: 18 degrees and cloudy.")
    for request in model.requests:
        _assert_no_duplicates(request.messages)

    # the next streamed turn sees the remembered conversation
    list(
        client.prompt("What did I ask?")
        .advisors(lambda a: a.param(CONVERSATION_ID, "s1"))
        .stream()
        .content()
    )
    assert list(model.requests[-1].messages) == [*stored, _user("What did I ask?")]


def test_memory_under_async_call() -> None:
    import asyncio

    memory = MessageWindowChatMemory()
    model = FunctionChatModel(weather_model)
    client = _memory_client(model, memory, 200)

    async def run() -> str | None:
        response = await client.prompt("What is the weather in Rome?").acall()
        return response.content()

    assert asyncio.run(run()) == "In Rome: 25 degrees and sunny."
    assert memory.get("default") == [
        _user("What is the weather in Rome?"),
        _assistant("In Rome: 25 degrees and sunny."),
    ]


@tool(description="Look up a stored answer and hand it straight to the user", return_direct=True)
def lookup_answer(question: str) -> str:
    return f"stored answer to {question}"


def lookup_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, UserMessage) and any(t.name == "lookup_answer" for t in tools):
        return AssistantMessage(
            tool_calls=[
                ToolCall(
                    id=f"call-{len(messages)}",
                    name="lookup_answer",
                    arguments=json.dumps({"question": last.content}),
                )
            ]
        )
    return "answered by the model"


@pytest.mark.parametrize("order", [200, 400], ids=["outside", "inside"])
def test_return_direct_leaves_no_dangling_tool_call_in_memory(order: int) -> None:
    """A return-direct turn must not leave a tool call without its result in memory:
    the next request would carry an unanswered tool call, which providers reject."""
    memory = MessageWindowChatMemory()
    model = FunctionChatModel(lookup_model)
    client = (
        ChatClient.builder(model)
        .default_tools(lookup_answer)
        .default_advisors(MessageChatMemoryAdvisor(memory, order=order))
        .build()
    )

    assert client.prompt("q1").call().content() == "stored answer to q1"
    client.prompt("q2").call().content()

    stored = memory.get("default")
    assert stored[0] == _user("q1")
    for messages in (stored, list(model.requests[-1].messages)):
        answered = {
            r.id for m in messages if isinstance(m, ToolResponseMessage) for r in m.responses
        }
        calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
        assert set(calls) <= answered, f"tool calls without results: {messages}"
        _assert_tool_responses_have_calls(messages)


def test_a_turn_that_failed_half_way_leaves_no_unanswered_tool_call_in_the_next_request():
    from toolsearch import ToolExecutionError, tool
    from toolsearch.loop import DefaultToolExecutionExceptionProcessor, ToolCallingAdvisor
    from toolsearch.loop import ToolCallingManager as Manager

    @tool
    def boom() -> str:
        """Always fails."""
        raise RuntimeError("down")

    def script(messages, tools):
        if isinstance(messages[-1], UserMessage) and messages[-1].content == "first":
            return AssistantMessage(tool_calls=[ToolCall(id="b1", name="boom")])
        return "fine"

    memory = MessageWindowChatMemory()
    model = FunctionChatModel(script)
    manager = Manager(exception_processor=DefaultToolExecutionExceptionProcessor(always_throw=True))
    client = (
        ChatClient.builder(model)
        .default_advisors(
            MessageChatMemoryAdvisor(memory, order=400),
            ToolCallingAdvisor(tool_calling_manager=manager),
        )
        .build()
    )
    with pytest.raises(ToolExecutionError):
        client.prompt("first").tools(boom).call()
    assert client.prompt("second").call().content() == "fine"
    sent = model.requests[-1].messages
    assert not any(isinstance(m, AssistantMessage) and m.tool_calls for m in sent)


def test_sqlite_reports_unserializable_metadata_as_a_memory_error():
    from toolsearch import ChatMemoryError

    repository = SqliteChatMemoryRepository()
    with pytest.raises(ChatMemoryError, match="not JSON-serializable"):
        repository.save_all("c", [UserMessage(content="x", metadata={"bad": object()})])
