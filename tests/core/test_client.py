"""``ChatClient``: builder defaults, the per-call fluent API, tools, tool context, options."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import Annotated, Any

import pytest

from toolsearch import (
    AssistantMessage,
    ChatClient,
    ChatOptions,
    ChatResponse,
    DuplicateToolNameError,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingAdvisor,
    ToolContext,
    ToolDefinition,
    ToolParam,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.loop import BaseAdvisor, ChatClientRequest
from toolsearch.loop.advisor import AdvisorChain
from toolsearch.models import FunctionChatModel
from toolsearch.testing import function_tool

# -- helpers ---------------------------------------------------------------------------


def _names(tools: list[ToolDefinition]) -> list[str]:
    return [t.name for t in tools]


def _option_tool_names(prompt: Prompt) -> list[str]:
    return [cb.definition.name for cb in prompt.options.tool_callbacks]


def echo_model() -> FunctionChatModel:
    """Answers ``echo: <last user text>``."""

    def script(messages: list, tools: list) -> str:
        user = [m for m in messages if isinstance(m, UserMessage)]
        return f"echo: {user[-1].content if user else ''}"

    return FunctionChatModel(script)


def call_then_answer(*calls: tuple[str, dict[str, Any]]) -> FunctionChatModel:
    """First request: call the given tools; afterwards: answer with the tool results."""

    def script(messages: list, tools: list) -> AssistantMessage:
        results = [m for m in messages if isinstance(m, ToolResponseMessage)]
        if not results:
            return AssistantMessage(
                tool_calls=[
                    ToolCall(id=f"call-{i}", name=name, arguments=json.dumps(args))
                    for i, (name, args) in enumerate(calls)
                ]
            )
        return AssistantMessage(content="results: " + " | ".join(r.text for r in results))

    return FunctionChatModel(script)


_schema_tool = partial(function_tool, result="ok")


class DateTimeTools:
    def __init__(self) -> None:
        self.alarms: list[str] = []

    @tool(description="Get the current date and time in the user's timezone")
    def get_current_date_time(self) -> str:
        return "2025-01-01T10:00:00"

    @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
    def set_alarm(
        self, time: Annotated[str, ToolParam(description="Time in ISO-8601 format")]
    ) -> str:
        self.alarms.append(time)
        return f"Alarm set for {time}"


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


@tool
def get_time(city: str) -> str:
    """Current time for a city."""
    return f"noon in {city}"


# -- create / builder / basic call -----------------------------------------------------


def test_create_and_call_content() -> None:
    model = echo_model()
    assert ChatClient.create(model).prompt("hello").call().content() == "echo: hello"
    assert model.requests[0].messages == (UserMessage(content="hello"),)


def test_call_chat_response_has_usage_and_finish_reason() -> None:
    response = ChatClient.create(echo_model()).prompt("hello there").call().chat_response()
    assert isinstance(response, ChatResponse)
    assert response.message.content == "echo: hello there"
    assert response.finish_reason == "stop"
    assert response.usage.prompt_tokens > 0
    assert response.usage.completion_tokens > 0


def test_call_runs_the_request_once() -> None:
    model = echo_model()
    result = ChatClient.create(model).prompt("hi").call()
    assert len(model.requests) == 1
    first = result.content()
    assert result.chat_response() is result.chat_response()
    assert result.content() == first
    assert len(model.requests) == 1


def test_builder_defaults_and_default_system() -> None:
    model = echo_model()
    client = ChatClient.builder(model).default_system("You are terse.").build()
    assert client.prompt("hi").call().content() == "echo: hi"
    assert model.requests[0].messages == (
        SystemMessage(content="You are terse."),
        UserMessage(content="hi"),
    )


def test_per_call_system_overrides_default_system() -> None:
    model = echo_model()
    client = ChatClient.builder(model).default_system("default sys").build()
    client.prompt("hi").system("call sys").call().content()
    systems = [m for m in model.requests[0].messages if isinstance(m, SystemMessage)]
    assert systems == [SystemMessage(content="call sys")]


def test_user_and_messages() -> None:
    model = echo_model()
    history = [
        UserMessage(content="earlier question"),
        AssistantMessage(content="earlier answer"),
    ]
    content = (
        ChatClient.create(model)
        .prompt()
        .system("sys")
        .messages(history)
        .user("now")
        .call()
        .content()
    )
    assert content == "echo: now"
    assert model.requests[0].messages == (
        SystemMessage(content="sys"),
        UserMessage(content="earlier question"),
        AssistantMessage(content="earlier answer"),
        UserMessage(content="now"),
    )


def test_messages_varargs() -> None:
    model = echo_model()
    ChatClient.create(model).prompt().messages(
        UserMessage(content="a"), AssistantMessage(content="b"), UserMessage(content="c")
    ).call().content()
    assert [m.text for m in model.requests[0].messages] == ["a", "b", "c"]


def test_prompt_accepts_a_prompt_object() -> None:
    model = echo_model()
    prompt = Prompt([UserMessage(content="from prompt")], ChatOptions(temperature=0.3))
    assert ChatClient.create(model).prompt(prompt).call().content() == "echo: from prompt"
    assert model.requests[0].options.temperature == 0.3


def test_empty_prompt_raises_value_error() -> None:
    client = ChatClient.create(echo_model())
    with pytest.raises(ValueError, match="empty"):
        client.prompt().call().content()


def test_empty_string_prompt_raises_value_error() -> None:
    model = echo_model()
    with pytest.raises(ValueError, match="empty"):
        ChatClient.create(model).prompt("").call().content()
    assert model.requests == []


def test_options_reach_the_model() -> None:
    model = echo_model()
    (
        ChatClient.create(model)
        .prompt("hi")
        .options(ChatOptions(model="m-1", temperature=0.25, max_tokens=50))
        .call()
        .content()
    )
    options = model.requests[0].options
    assert options.model == "m-1"
    assert options.temperature == 0.25
    assert options.max_tokens == 50


def test_per_call_options_override_builder_default_options() -> None:
    model = echo_model()
    client = (
        ChatClient.builder(model)
        .default_options(ChatOptions(model="base", temperature=0.1))
        .build()
    )
    client.prompt("hi").options(ChatOptions(temperature=0.9)).call().content()
    client.prompt("hi").call().content()
    assert model.requests[0].options.model == "base"
    assert model.requests[0].options.temperature == 0.9
    assert model.requests[1].options.temperature == 0.1


# -- tools -----------------------------------------------------------------------------


def test_tools_accepts_every_form() -> None:
    seen: list[list[str]] = []

    def script(messages: list, tools: list) -> str:
        seen.append(_names(tools))
        return "done"

    obj = DateTimeTools()
    (
        ChatClient.create(FunctionChatModel(script))
        .prompt("hi")
        .tools(obj, get_weather, _schema_tool("callback_tool"), [get_time, _schema_tool("in_list")])
        .call()
        .content()
    )
    assert seen == [
        [
            "get_current_date_time",
            "set_alarm",
            "get_weather",
            "callback_tool",
            "get_time",
            "in_list",
        ]
    ]


def test_alarm_in_ten_minutes_through_two_tool_calls() -> None:
    def script(messages: list, tools: list) -> AssistantMessage:
        responses = [m for m in messages if isinstance(m, ToolResponseMessage)]
        if not responses:
            return AssistantMessage(
                tool_calls=[ToolCall(id="1", name="get_current_date_time", arguments="{}")]
            )
        if len(responses) == 1:
            assert responses[0].responses[0].response_data == "2025-01-01T10:00:00"
            return AssistantMessage(
                tool_calls=[
                    ToolCall(id="2", name="set_alarm", arguments='{"time": "2025-01-01T10:10:00"}')
                ]
            )
        return AssistantMessage(content=f"Done: {responses[-1].text}")

    tools = DateTimeTools()
    model = FunctionChatModel(script)
    text = (
        ChatClient.create(model)
        .prompt("Can you set an alarm 10 minutes from now?")
        .tools(tools)
        .call()
        .content()
    )
    assert text == "Done: Alarm set for 2025-01-01T10:10:00"
    assert tools.alarms == ["2025-01-01T10:10:00"]
    assert len(model.requests) == 3


def test_call_tools_append_to_default_tools() -> None:
    seen: list[list[str]] = []

    def script(messages: list, tools: list) -> str:
        seen.append(_names(tools))
        return "ok"

    client = ChatClient.builder(FunctionChatModel(script)).default_tools(get_weather).build()
    client.prompt("a").tools(get_time).call().content()
    client.prompt("b").call().content()
    assert seen == [["get_weather", "get_time"], ["get_weather"]]


def test_tools_called_twice_append() -> None:
    model = echo_model()
    ChatClient.create(model).prompt("a").tools(get_weather).tools(get_time).call().content()
    assert _option_tool_names(model.requests[0]) == ["get_weather", "get_time"]


def test_default_and_call_tools_both_execute() -> None:
    model = call_then_answer(("get_weather", {"city": "Oslo"}), ("get_time", {"city": "Rome"}))
    client = ChatClient.builder(model).default_tools(get_weather).build()
    text = client.prompt("weather and time").tools(get_time).call().content()
    assert text == "results: sunny in Oslo\nnoon in Rome"


def test_duplicate_tool_name_across_default_and_call_raises_at_tools() -> None:
    client = ChatClient.builder(echo_model()).default_tools(get_weather).build()
    spec = client.prompt("hi")
    with pytest.raises(DuplicateToolNameError, match="get_weather") as info:
        spec.tools(_schema_tool("get_weather"))
    assert info.value.tool_name == "get_weather"


def test_duplicate_tool_name_within_one_tools_call_raises() -> None:
    spec = ChatClient.create(echo_model()).prompt("hi")
    with pytest.raises(DuplicateToolNameError, match="get_time"):
        spec.tools(get_time, _schema_tool("get_time"))


def test_duplicate_tool_name_across_two_tools_calls_raises() -> None:
    spec = ChatClient.create(echo_model()).prompt("hi").tools(get_time)
    with pytest.raises(DuplicateToolNameError, match="get_time"):
        spec.tools(get_time)


def test_duplicate_default_tools_raise_at_builder() -> None:
    with pytest.raises(DuplicateToolNameError, match="get_weather"):
        ChatClient.builder(echo_model()).default_tools(get_weather).default_tools(get_weather)


def test_tools_rejects_non_tools() -> None:
    spec = ChatClient.create(echo_model()).prompt("hi")
    with pytest.raises(TypeError):
        spec.tools("not a tool")


def test_client_tools_replace_model_default_tools() -> None:
    seen: list[list[str]] = []

    def script(messages: list, tools: list) -> str:
        seen.append(_names(tools))
        return "ok"

    model = FunctionChatModel(
        script, default_options=ChatOptions(tool_callbacks=[_schema_tool("model_default")])
    )
    client = ChatClient.create(model)
    client.prompt("a").tools(get_time).call().content()
    client.prompt("b").call().content()
    assert seen == [["get_time"], ["model_default"]]


# -- tool context ----------------------------------------------------------------------


def test_tool_context_merges_with_default_and_call_wins() -> None:
    received: list[dict[str, Any]] = []

    @tool
    def get_customer_info(customer_id: str, ctx: ToolContext) -> str:
        """Customer info for a tenant."""
        received.append(dict(ctx.context))
        return f"customer {customer_id} of {ctx['tenant_id']}"

    model = call_then_answer(("get_customer_info", {"customer_id": "42"}))
    client = (
        ChatClient.builder(model)
        .default_tools(get_customer_info)
        .default_tool_context({"tenant_id": "default-tenant", "region": "eu"})
        .build()
    )
    text = client.prompt("info").tool_context({"tenant_id": "acme", "user": "bob"}).call().content()
    assert received == [{"tenant_id": "acme", "region": "eu", "user": "bob"}]
    assert text == "results: customer 42 of acme"
    # the tool context is never shown to the model
    definition = model.requests[0].options.tool_callbacks[0].definition
    assert "ctx" not in json.dumps(definition.input_schema)
    rendered = json.dumps([m.model_dump() for m in model.requests[-1].messages])
    assert "region" not in rendered


def test_default_tool_context_alone() -> None:
    received: list[dict[str, Any]] = []

    @tool
    def who(ctx: ToolContext) -> str:
        """Who."""
        received.append(dict(ctx.context))
        return "ok"

    client = (
        ChatClient.builder(call_then_answer(("who", {})))
        .default_tool_context({"tenant_id": "t1"})
        .build()
    )
    client.prompt("x").tools(who).call().content()
    assert received == [{"tenant_id": "t1"}]


def test_tool_context_is_read_only() -> None:
    errors: list[BaseException] = []

    @tool
    def mutate(ctx: ToolContext) -> str:
        """Mutate."""
        try:
            ctx.context["k"] = "changed"  # type: ignore[index]
        except TypeError as exc:
            errors.append(exc)
        return "ok"

    ChatClient.create(call_then_answer(("mutate", {}))).prompt("x").tools(mutate).tool_context(
        {"k": "v"}
    ).call().content()
    assert len(errors) == 1


# -- advisors and params ---------------------------------------------------------------


class ContextRecorder(BaseAdvisor):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.contexts: list[dict[str, Any]] = []

    def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        self.contexts.append(dict(request.context))
        return request


def test_advisor_param_via_lambda_is_visible_to_advisors() -> None:
    recorder = ContextRecorder()
    (
        ChatClient.create(echo_model())
        .prompt("hi")
        .advisors(recorder)
        .advisors(lambda a: a.param("tenant", "acme").param("flag", True))
        .call()
        .content()
    )
    assert recorder.contexts[0]["tenant"] == "acme"
    assert recorder.contexts[0]["flag"] is True


def test_advisor_params_from_builder_and_call_merge() -> None:
    recorder = ContextRecorder()
    client = (
        ChatClient.builder(echo_model())
        .default_advisors(recorder, lambda a: a.param("a", 1).param("b", 1))
        .build()
    )
    client.prompt("hi").advisors(lambda a: a.param("b", 2)).call().content()
    assert recorder.contexts[0]["a"] == 1
    assert recorder.contexts[0]["b"] == 2


def test_advisors_accepts_lists_and_the_spec_can_add_advisors() -> None:
    first = ContextRecorder(name="first", order=10)
    second = ContextRecorder(name="second", order=20)
    (
        ChatClient.create(echo_model())
        .prompt("hi")
        .advisors([first], lambda a: a.advisors(second).param("k", "v"))
        .call()
        .content()
    )
    assert first.contexts[0]["k"] == "v"
    assert second.contexts[0]["k"] == "v"


def test_default_advisors_run_on_every_request() -> None:
    recorder = ContextRecorder()
    client = ChatClient.builder(echo_model()).default_advisors(recorder).build()
    client.prompt("a").call().content()
    client.prompt("b").call().content()
    assert len(recorder.contexts) == 2


def test_explicit_tool_calling_advisor_in_defaults_runs_the_loop() -> None:
    model = call_then_answer(("get_weather", {"city": "Paris"}))
    client = ChatClient.builder(model).default_advisors(ToolCallingAdvisor()).build()
    assert client.prompt("w").tools(get_weather).call().content() == "results: sunny in Paris"


def test_mutate_keeps_defaults() -> None:
    model = echo_model()
    client = ChatClient.builder(model).default_system("sys").default_tools(get_weather).build()
    other = client.mutate().default_tools(get_time).build()
    other.prompt("hi").call().content()
    assert _option_tool_names(model.requests[0]) == ["get_weather", "get_time"]
    assert model.requests[0].messages[0] == SystemMessage(content="sys")
    client.prompt("hi").call().content()
    assert _option_tool_names(model.requests[1]) == ["get_weather"]


# -- async twin --------------------------------------------------------------------------


def test_acall_content() -> None:
    async def script(messages: list, tools: list) -> AssistantMessage | str:
        if not any(isinstance(m, ToolResponseMessage) for m in messages):
            return AssistantMessage(
                tool_calls=[ToolCall(id="1", name="aweather", arguments='{"city": "Oslo"}')]
            )
        return "final: " + messages[-1].text

    @tool
    async def aweather(city: str) -> str:
        """Async weather."""
        await asyncio.sleep(0)
        return f"rainy in {city}"

    async def main() -> tuple[str | None, ChatResponse | None]:
        spec = ChatClient.create(FunctionChatModel(script)).prompt("weather?").tools(aweather)
        response = await spec.acall()
        return response.content(), response.chat_response()

    content, chat_response = asyncio.run(main())
    assert content == "final: rainy in Oslo"
    assert chat_response is not None
    assert chat_response.usage.total_tokens > 0


def test_tool_names_without_a_tool_advisor_fail_clearly():
    model = FunctionChatModel(lambda messages, tools: "ok")
    spec = ChatClient.create(model).prompt("x").tool_names("add").auto_tool_calling(False)
    with pytest.raises(ValueError, match="tool advisor"):
        spec.call()


def test_stream_is_consumed_once_and_checked_eagerly():
    model = FunctionChatModel(lambda messages, tools: "one two")
    stream = ChatClient.create(model).prompt("x").stream()
    assert "".join(stream.content()) == "one two"
    with pytest.raises(RuntimeError, match="consumed once"):
        list(stream.content())
    assert len(model.requests) == 1
    with pytest.raises(ValueError, match="empty"):
        ChatClient.create(model).prompt().stream()


def test_a_prompts_own_system_message_replaces_the_default_system():
    from toolsearch import Prompt

    model = FunctionChatModel(lambda messages, tools: "ok")
    client = ChatClient.builder(model).default_system("default").build()
    client.prompt(Prompt([SystemMessage(content="own"), UserMessage(content="hi")])).call()
    systems = [m.content for m in model.requests[-1].messages if isinstance(m, SystemMessage)]
    assert systems == ["own"]


def test_two_tool_advisors_fail_when_the_client_is_built():
    from toolsearch import AdvisorChainError, ToolCallingAdvisor

    model = FunctionChatModel(lambda messages, tools: "ok")
    builder = ChatClient.builder(model).default_advisors(ToolCallingAdvisor(), ToolCallingAdvisor())
    with pytest.raises(AdvisorChainError, match="tool-calling advisors"):
        builder.build()


def test_the_auto_tool_advisor_provider_supplies_the_default_tool_advisor():
    """``build()`` asks the installed provider once per client; ``None`` means the plain one;
    a tool advisor the chain already has wins."""
    from toolsearch.loop.client import set_auto_tool_advisor_provider

    calls: list[ToolCallingAdvisor] = []

    def provider() -> ToolCallingAdvisor | None:
        calls.append(ToolCallingAdvisor(name="provided"))
        return calls[-1]

    def tool_advisors(client: ChatClient) -> list[Any]:
        _, chain = client.prompt("hi").build_request()
        return [a for a in chain.advisors if isinstance(a, ToolCallingAdvisor)]

    model = FunctionChatModel(lambda messages, tools: "ok")
    previous = set_auto_tool_advisor_provider(provider)
    try:
        client = ChatClient.builder(model).build()
        assert tool_advisors(client) == tool_advisors(client) == calls  # one per client
        mine = ToolCallingAdvisor()
        assert tool_advisors(ChatClient.builder(model).default_advisors(mine).build()) == [mine]
        set_auto_tool_advisor_provider(lambda: None)
        [plain] = tool_advisors(ChatClient.create(model))
        assert plain.name == "ToolCallingAdvisor"
    finally:
        set_auto_tool_advisor_provider(previous)
