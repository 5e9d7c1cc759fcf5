"""One test per example of the reference "Tool Calling" chapter, on scripted offline models.

Every scripted model behaves like a real one: it decides only from the messages and the
tool definitions of the request it receives.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Annotated

import pytest

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ChatOptions,
    LimitExceededAction,
    MessageChatMemoryAdvisor,
    MessageWindowChatMemory,
    Prompt,
    ToolCall,
    ToolCallingAdvisor,
    ToolCallingManager,
    ToolCallLimitExceededError,
    ToolCallLimits,
    ToolContext,
    ToolParam,
    ToolResponseMessage,
    UserMessage,
    tool,
    tool_callbacks,
)
from toolsearch.chat.messages import Message
from toolsearch.models import FunctionChatModel
from toolsearch.tools.definition import ToolDefinition

# -- helpers -------------------------------------------------------------------------------


def _since_last_user(messages: list[Message]) -> list[Message]:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], UserMessage):
            return messages[i + 1 :]
    return list(messages)


def _last_user(messages: list[Message]) -> UserMessage:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message
    raise AssertionError("the request has no user message")


def _results_this_turn(messages: list[Message]) -> dict[str, list[str]]:
    """Tool name -> results received since the last user message, in order."""
    results: dict[str, list[str]] = {}
    for message in _since_last_user(messages):
        if isinstance(message, ToolResponseMessage):
            for response in message.responses:
                results.setdefault(response.name, []).append(response.response_data)
    return results


def _calls_this_turn(messages: list[Message]) -> int:
    return sum(
        len(m.tool_calls) for m in _since_last_user(messages) if isinstance(m, AssistantMessage)
    )


def _call(messages: list[Message], name: str, **arguments: object) -> AssistantMessage:
    call_id = f"call_{len(messages)}_{name}"
    return AssistantMessage(
        tool_calls=[ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))]
    )


# -- 1. DateTimeTools: an alarm ten minutes from now, through two tool calls ---------------

FIXED_NOW = datetime(2025, 5, 17, 9, 30, 0, tzinfo=timezone(timedelta(hours=2)))


class DateTimeTools:
    def __init__(self, now: datetime = FIXED_NOW) -> None:
        self._now = now
        self.alarms: list[datetime] = []

    @tool(description="Get the current date and time in the user's timezone")
    def get_current_date_time(self) -> str:
        return self._now.isoformat()

    @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
    def set_alarm(
        self, time: Annotated[str, ToolParam(description="Time in ISO-8601 format")]
    ) -> str:
        alarm = datetime.fromisoformat(time)
        self.alarms.append(alarm)
        return f"Alarm set for {alarm.isoformat()}"


def alarm_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
    """Asks for the time, then sets the alarm relative to it, then confirms."""
    names = {t.name for t in tools}
    results = _results_this_turn(messages)
    if "set_alarm" in results:
        return f"Done. {results['set_alarm'][-1]}."
    match = re.search(r"alarm (\d+) minutes from now", _last_user(messages).content)
    if match is None:
        return "I can only set alarms relative to now."
    if "get_current_date_time" in results:
        now = datetime.fromisoformat(results["get_current_date_time"][-1])
        when = now + timedelta(minutes=int(match.group(1)))
        if "set_alarm" not in names:
            return f"I cannot set alarms, but it would be at {when.isoformat()}."
        return _call(messages, "set_alarm", time=when.isoformat())
    if "get_current_date_time" in names:
        return _call(messages, "get_current_date_time")
    return "I do not know what time it is."


def test_alarm_ten_minutes_from_now_via_two_tool_calls() -> None:
    tools = DateTimeTools()
    model = FunctionChatModel(alarm_model)

    answer = (
        ChatClient.create(model)
        .prompt("Can you set an alarm 10 minutes from now?")
        .tools(tools)
        .call()
        .content()
    )

    expected = datetime(2025, 5, 17, 9, 40, 0, tzinfo=timezone(timedelta(hours=2)))
    assert tools.alarms == [expected]
    assert answer == f"Done. Alarm set for {expected.isoformat()}."
    assert len(model.requests) == 3

    definitions = {d.name: d for d in model.requests[0].tool_definitions}
    assert set(definitions) == {"get_current_date_time", "set_alarm"}
    assert definitions["get_current_date_time"].description == (
        "Get the current date and time in the user's timezone"
    )
    assert definitions["get_current_date_time"].input_schema.get("properties", {}) == {}
    alarm_schema = definitions["set_alarm"].input_schema
    assert definitions["set_alarm"].description == (
        "Set a user alarm for the given time, provided in ISO-8601 format"
    )
    assert alarm_schema["properties"]["time"]["type"] == "string"
    assert alarm_schema["properties"]["time"]["description"] == "Time in ISO-8601 format"
    assert alarm_schema["required"] == ["time"]
    assert "self" not in alarm_schema["properties"]

    # the final request carries both tool turns in order
    final = list(model.requests[2].messages)
    assert [type(m) for m in final] == [
        UserMessage,
        AssistantMessage,
        ToolResponseMessage,
        AssistantMessage,
        ToolResponseMessage,
    ]
    assert final[2].text == FIXED_NOW.isoformat()


# -- 2. Weather with a tenant id in the tool context ---------------------------------------

FORECASTS = {
    "acme": {"Paris": "18 degrees and cloudy"},
    "globex": {"Paris": "forecast service unavailable for your plan"},
}


class WeatherTools:
    def __init__(self) -> None:
        self.seen_contexts: list[dict[str, object]] = []

    @tool(description="Get the current weather for a city")
    def get_weather(
        self,
        city: Annotated[str, ToolParam(description="The city name")],
        context: ToolContext,
    ) -> str:
        self.seen_contexts.append(dict(context.context))
        tenant = context.context["tenantId"]
        return FORECASTS[tenant].get(city, "unknown city")


def weather_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
    results = _results_this_turn(messages)
    if "get_weather" in results:
        return f"The weather in Paris: {results['get_weather'][-1]}."
    match = re.search(r"weather in (\w+)", _last_user(messages).content)
    if match and any(t.name == "get_weather" for t in tools):
        return _call(messages, "get_weather", city=match.group(1))
    return "I cannot check the weather."


def _assert_model_never_saw(model: FunctionChatModel, secret: str) -> None:
    for request in model.requests:
        for message in request.messages:
            assert secret not in message.model_dump_json(), f"{secret!r} leaked in {message!r}"
        for definition in request.tool_definitions:
            assert secret not in json.dumps(definition.input_schema)
            assert secret not in definition.description


def test_weather_with_tenant_id_in_tool_context() -> None:
    tools = WeatherTools()
    model = FunctionChatModel(weather_model)
    client = (
        ChatClient.builder(model)
        .default_tools(tools)
        .default_tool_context({"tenantId": "acme", "region": "eu-west"})
        .build()
    )

    answer = client.prompt("What is the weather in Paris?").call().content()

    assert answer == "The weather in Paris: 18 degrees and cloudy."
    assert tools.seen_contexts == [{"tenantId": "acme", "region": "eu-west"}]

    schema = model.requests[0].tool_definitions[0].input_schema
    assert set(schema["properties"]) == {"city"}
    assert schema["required"] == ["city"]
    _assert_model_never_saw(model, "acme")
    _assert_model_never_saw(model, "tenantId")
    _assert_model_never_saw(model, "eu-west")


def test_weather_per_call_tool_context_overrides_default() -> None:
    tools = WeatherTools()
    model = FunctionChatModel(weather_model)
    client = (
        ChatClient.builder(model)
        .default_tools(tools)
        .default_tool_context({"tenantId": "acme", "region": "eu-west"})
        .build()
    )

    answer = (
        client.prompt("What is the weather in Paris?")
        .tool_context({"tenantId": "globex"})
        .call()
        .content()
    )

    assert answer == "The weather in Paris: forecast service unavailable for your plan."
    assert tools.seen_contexts == [{"tenantId": "globex", "region": "eu-west"}]
    _assert_model_never_saw(model, "globex")
    _assert_model_never_saw(model, "tenantId")

    # the override was for that call only
    client.prompt("What is the weather in Paris?").call().content()
    assert tools.seen_contexts[-1] == {"tenantId": "acme", "region": "eu-west"}


# -- 3. Return direct ----------------------------------------------------------------------

BOOKS = {
    "Tolkien": [
        {"title": "The Hobbit", "year": 1937},
        {"title": "The Lord of the Rings", "year": 1954},
    ]
}


@tool(description="Retrieve the books written by an author", return_direct=True)
def books_by_author(author: Annotated[str, ToolParam(description="The author's surname")]) -> list:
    return BOOKS.get(author, [])


def books_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
    results = _results_this_turn(messages)
    if "books_by_author" in results:
        return "Here are some books (the model should never get to say this)."
    match = re.search(r"books by (\w+)", _last_user(messages).content)
    if match and any(t.name == "books_by_author" for t in tools):
        return _call(messages, "books_by_author", author=match.group(1))
    return "I do not know."


def test_return_direct_returns_tool_result_without_second_model_call() -> None:
    model = FunctionChatModel(books_model)

    content = (
        ChatClient.create(model)
        .prompt("Which books by Tolkien do you have?")
        .tools(books_by_author)
        .call()
        .content()
    )

    assert content is not None
    assert json.loads(content) == BOOKS["Tolkien"]
    assert len(model.requests) == 1


def test_return_direct_under_stream() -> None:
    model = FunctionChatModel(books_model)
    chunks = list(
        ChatClient.create(model)
        .prompt("Which books by Tolkien do you have?")
        .tools(books_by_author)
        .stream()
        .content()
    )
    assert json.loads("".join(chunks)) == BOOKS["Tolkien"]
    assert len(model.requests) == 1


# -- 4. Limits: THROW vs RETURN_ERROR_RESPONSE ---------------------------------------------


class SearchTools:
    def __init__(self) -> None:
        self.queries: list[str] = []

    @tool(description="Search the web and return the top result")
    def search_web(self, query: str) -> str:
        self.queries.append(query)
        return f"no useful result for {query!r}"


def stubborn_model(messages: list[Message], tools: list[ToolDefinition]) -> AssistantMessage | str:
    """Keeps searching until a tool result says it hit a limit (gives up after 6 calls)."""
    results = _results_this_turn(messages).get("search_web", [])
    if results and "limit" in results[-1]:
        return f"I stopped after {len(results) - 1} searches: the search limit was reached."
    if _calls_this_turn(messages) >= 6:
        return "I give up."
    return _call(messages, "search_web", query=f"attempt {len(results) + 1}")


def _limited_client(model: FunctionChatModel, action: LimitExceededAction) -> ChatClient:
    manager = ToolCallingManager(limits=ToolCallLimits(per_tool=2, on_exceed=action))
    advisor = ToolCallingAdvisor(tool_calling_manager=manager, max_iterations=10)
    return ChatClient.builder(model).default_advisors(advisor).build()


def test_limit_throw_raises_to_the_caller() -> None:
    tools = SearchTools()
    model = FunctionChatModel(stubborn_model)
    client = _limited_client(model, LimitExceededAction.THROW)

    with pytest.raises(ToolCallLimitExceededError, match="search_web") as info:
        client.prompt("Find me something").tools(tools).call().content()

    assert info.value.tool_name == "search_web"
    assert info.value.limit == 2
    assert tools.queries == ["attempt 1", "attempt 2"]
    assert len(model.requests) == 3


def test_limit_return_error_response_tells_the_model() -> None:
    tools = SearchTools()
    model = FunctionChatModel(stubborn_model)
    client = _limited_client(model, LimitExceededAction.RETURN_ERROR_RESPONSE)

    answer = client.prompt("Find me something").tools(tools).call().content()

    assert answer == "I stopped after 2 searches: the search limit was reached."
    assert tools.queries == ["attempt 1", "attempt 2"]
    assert len(model.requests) == 4
    refusal = list(model.requests[3].messages)[-1]
    assert isinstance(refusal, ToolResponseMessage)
    assert "search_web" in refusal.text
    assert "limit" in refusal.text

    # limits count since the last user message: a new request may search again
    again = client.prompt("Find me something else").tools(tools).call().content()
    assert again == answer
    assert tools.queries[2:] == ["attempt 1", "attempt 2"]


# -- 5. Memory inside vs outside the loop --------------------------------------------------


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (None, ["user", "assistant"]),
        (400, ["user", "assistant", "tool", "assistant"]),
    ],
    ids=["outside-default-200", "inside-400"],
)
def test_memory_inside_vs_outside_the_loop(order: int | None, expected: list[str]) -> None:
    memory = MessageWindowChatMemory()
    advisor = (
        MessageChatMemoryAdvisor(memory)
        if order is None
        else MessageChatMemoryAdvisor(memory, order=order)
    )
    model = FunctionChatModel(weather_model)
    tools = WeatherTools()
    client = (
        ChatClient.builder(model)
        .default_tools(tools)
        .default_tool_context({"tenantId": "acme"})
        .default_advisors(advisor)
        .build()
    )

    answer = client.prompt("What is the weather in Paris?").call().content()

    assert answer == "The weather in Paris: 18 degrees and cloudy."
    stored = memory.get("default")
    assert [m.role for m in stored] == expected
    assert stored[-1].text == answer
    # whatever the placement, the model saw every message once
    second = [m.model_dump_json() for m in model.requests[1].messages]
    assert len(second) == len(set(second)) == 3


# -- 6. The manual loop (user-controlled tool execution) -----------------------------------


def _manual_loop(client: ChatClient, prompt: Prompt) -> tuple[str | None, int]:
    manager = ToolCallingManager()
    response = client.prompt(prompt).call().chat_response()
    assert response is not None
    rounds = 0
    while response.has_tool_calls:
        rounds += 1
        result = manager.execute_tool_calls(prompt, response)
        assert not result.return_direct
        prompt = Prompt(result.conversation_history, prompt.options)
        response = client.prompt(prompt).call().chat_response()
        assert response is not None
    return response.message.content, rounds


@pytest.mark.parametrize("switch", ["builder", "options"])
def test_manual_loop_with_tool_calling_manager(switch: str) -> None:
    tools = DateTimeTools()
    model = FunctionChatModel(alarm_model)
    if switch == "builder":
        client = ChatClient.builder(model).auto_tool_calling(False).build()
        options = ChatOptions(tool_callbacks=tool_callbacks(tools))
    else:
        client = ChatClient.create(model)
        options = ChatOptions(
            tool_callbacks=tool_callbacks(tools), internal_tool_execution_enabled=False
        )
    prompt = Prompt([UserMessage(content="Can you set an alarm 10 minutes from now?")], options)

    # the client sends the tools but does not run them: the caller gets the tool calls
    first = client.prompt(prompt).call().chat_response()
    assert first is not None
    assert [c.name for c in first.message.tool_calls] == ["get_current_date_time"]
    assert tools.alarms == []
    assert len(model.requests) == 1

    answer, rounds = _manual_loop(client, prompt)

    expected = FIXED_NOW + timedelta(minutes=10)
    assert rounds == 2
    assert tools.alarms == [expected]
    assert answer == f"Done. Alarm set for {expected.isoformat()}."
    last = list(model.requests[-1].messages)
    assert [type(m) for m in last] == [
        UserMessage,
        AssistantMessage,
        ToolResponseMessage,
        AssistantMessage,
        ToolResponseMessage,
    ]


def test_manual_loop_on_the_model_directly() -> None:
    tools = DateTimeTools()
    model = FunctionChatModel(alarm_model)
    options = ChatOptions(
        tool_callbacks=tool_callbacks(tools), internal_tool_execution_enabled=False
    )
    prompt = Prompt([UserMessage(content="Can you set an alarm 10 minutes from now?")], options)
    manager = ToolCallingManager()

    assert [d.name for d in manager.resolve_tool_definitions(options)] == [
        "get_current_date_time",
        "set_alarm",
    ]
    response = model.call(prompt)
    while response.has_tool_calls:
        result = manager.execute_tool_calls(prompt, response)
        prompt = Prompt(result.conversation_history, options)
        response = model.call(prompt)

    expected = FIXED_NOW + timedelta(minutes=10)
    assert tools.alarms == [expected]
    assert response.message.content == f"Done. Alarm set for {expected.isoformat()}."
    assert len(model.requests) == 3
