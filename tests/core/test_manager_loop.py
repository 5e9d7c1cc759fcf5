"""ToolCallingManager behaviour through the loop: ChatClient + ToolCallingAdvisor with
scripted FunctionChatModels, and the user-controlled (manual) loop. Offline, deterministic."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from toolsearch import (
    CONVERSATION_ID,
    AssistantMessage,
    ChatClient,
    ChatOptions,
    ChatResponse,
    FunctionToolCallback,
    InMemoryChatMemoryRepository,
    MessageChatMemoryAdvisor,
    MessageWindowChatMemory,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingAdvisor,
    ToolCallingManager,
    ToolContext,
    ToolResponseMessage,
    UserMessage,
    tool,
    tool_callbacks,
)
from toolsearch.errors import (
    ToolCallLimitExceededError,
    ToolDefinitionError,
    ToolExecutionError,
    ToolLoopLimitError,
)
from toolsearch.loop import (
    TOOL_CALLING_ADVISOR_ORDER,
    DefaultToolExecutionExceptionProcessor,
    LimitExceededAction,
    StaticToolCallbackResolver,
    ToolCallLimits,
)
from toolsearch.models import FunctionChatModel

# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------

Script = Callable[[list[Any], list[Any]], Any]


class Ids:
    def __init__(self) -> None:
        self._n = itertools.count(1)

    def call(self, name: str, arguments: Any = None) -> ToolCall:
        if arguments is None:
            arguments = {}
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return ToolCall(id=f"call_{next(self._n)}", name=name, arguments=text)


def calling(*tool_calls: ToolCall, content: str | None = None) -> AssistantMessage:
    return AssistantMessage(content=content, tool_calls=tuple(tool_calls))


def last_results(messages: list[Any]) -> list[str]:
    """The tool results the model is answering to (empty if the last message is not one)."""
    if messages and isinstance(messages[-1], ToolResponseMessage):
        return [r.response_data for r in messages[-1].responses]
    return []


def results_since_last_user(messages: list[Any]) -> list[str]:
    out: list[str] = []
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, ToolResponseMessage):
            out[:0] = [r.response_data for r in message.responses]
    return out


class Recorder:
    def __init__(self) -> None:
        self.runs: list[tuple[str, Any]] = []

    def tool(self, name: str, *, return_direct: bool = False) -> FunctionToolCallback:
        def fn(x: int = 0) -> str:
            self.runs.append((name, x))
            return f"{name}:{x}"

        return FunctionToolCallback.from_function(
            fn, name=name, description=f"The {name} tool", return_direct=return_direct
        )

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.runs if n == name)


def advisor(**limits: Any) -> ToolCallingAdvisor:
    """An advisor with these limits; THROW unless the test says otherwise."""
    limits.setdefault("on_exceed", LimitExceededAction.THROW)
    return ToolCallingAdvisor(
        tool_calling_manager=ToolCallingManager(limits=ToolCallLimits(**limits))
    )


def always_calls(name: str) -> Script:
    ids = Ids()

    def script(messages: list[Any], tools: list[Any]) -> AssistantMessage:
        return calling(ids.call(name, {"x": len(messages)}))

    return script


def calls_until_error(name: str, marker: str = "limit") -> Script:
    """Keeps calling ``name`` until a tool result mentions ``marker``, then reports it."""
    ids = Ids()

    def script(messages: list[Any], tools: list[Any]) -> Any:
        errors = [r for r in last_results(messages) if marker in r.lower()]
        if errors:
            return f"gave up: {errors[0]}"
        return calling(ids.call(name, {"x": len(messages)}))

    return script


@tool(description="Add two integers")
def add(a: int, b: int) -> int:
    return a + b


@tool(description="Fails with the given message")
def explode(message: str) -> str:
    raise RuntimeError(message)


@tool(description="Fails with a ValueError")
def bad_value(message: str) -> str:
    raise ValueError(message)


# ---------------------------------------------------------------------------------------
# limits through the loop
# ---------------------------------------------------------------------------------------


class TestLimitsInTheLoop:
    def test_throw_stops_the_loop_with_the_error(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        spec = (
            ChatClient.create(model).prompt("go").tools(rec.tool("t")).advisors(advisor(per_tool=3))
        )
        with pytest.raises(ToolCallLimitExceededError) as info:
            spec.call().content()
        assert info.value.tool_name == "t"
        assert info.value.limit == 3
        assert rec.count("t") == 3
        assert len(model.requests) == 4

    def test_throw_with_default_advisors(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        client = (
            ChatClient.builder(model)
            .default_tools(rec.tool("t"))
            .default_advisors(advisor(per_tool=2))
            .build()
        )
        with pytest.raises(ToolCallLimitExceededError):
            client.prompt("go").call().content()
        assert rec.count("t") == 2

    def test_default_limit_applies_in_the_loop_without_raising(self) -> None:
        """A model that never stops calling is refused at 41, told once, and the loop ends
        the second time it ignores the refusal: bounded, and no exception for its mistake."""
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        text = ChatClient.create(model).prompt("go").tools(rec.tool("t")).call().content()
        assert rec.count("t") == 40
        assert "limit" in text
        assert "the loop stopped" in text

    def test_return_error_response_feeds_the_error_back(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(calls_until_error("t"))
        text = (
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("t"))
            .advisors(advisor(per_tool=3, on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE))
            .call()
            .content()
        )
        assert text is not None
        assert text.startswith("gave up: ")
        assert "'t'" in text
        assert rec.count("t") == 3
        assert len(model.requests) == 5  # three runs, one refusal, then the answer

    def test_total_limit_in_the_loop(self) -> None:
        rec = Recorder()
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            errors = [r for r in last_results(messages) if "limit" in r.lower()]
            if errors:
                return f"stopped: {errors[0]}"
            return calling(ids.call("a"), ids.call("b"))

        model = FunctionChatModel(script)
        text = (
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("a"), rec.tool("b"))
            .advisors(advisor(total=5, on_exceed="return_error_response"))
            .call()
            .content()
        )
        assert text is not None
        assert "total" in text.lower()
        assert rec.count("a") + rec.count("b") == 5

    def test_limits_are_counted_per_request(self) -> None:
        rec = Recorder()
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            if len(results_since_last_user(messages)) < 2:
                return calling(ids.call("t"))
            return "done"

        client = (
            ChatClient.builder(FunctionChatModel(script))
            .default_tools(rec.tool("t"))
            .default_advisors(advisor(per_tool=2))
            .build()
        )
        assert client.prompt("one").call().content() == "done"
        assert client.prompt("two").call().content() == "done"
        assert rec.count("t") == 4

    def test_earlier_turns_in_memory_do_not_count(self) -> None:
        # memory inside the loop keeps tool calls; the next user turn still starts from zero
        rec = Recorder()
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            if len(results_since_last_user(messages)) < 2:
                return calling(ids.call("t"))
            return "done"

        memory = MessageWindowChatMemory(InMemoryChatMemoryRepository(), max_messages=100)
        model = FunctionChatModel(script)
        client = (
            ChatClient.builder(model)
            .default_tools(rec.tool("t"))
            .default_advisors(
                advisor(per_tool=2),
                MessageChatMemoryAdvisor(memory, order=TOOL_CALLING_ADVISOR_ORDER + 100),
            )
            .build()
        )
        for text in ["first", "second", "third"]:
            answer = client.prompt(text).advisors(lambda a: a.param(CONVERSATION_ID, "c1")).call()
            assert answer.content() == "done"
        assert rec.count("t") == 6
        stored = memory.get("c1")
        assert sum(isinstance(m, ToolResponseMessage) for m in stored) == 6

    def test_counts_accumulate_when_history_is_not_resent(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        limits = ToolCallLimits(per_tool=2, on_exceed=LimitExceededAction.THROW)
        loop = ToolCallingAdvisor(
            tool_calling_manager=ToolCallingManager(limits=limits),
            conversation_history_enabled=False,
        )
        with pytest.raises(ToolCallLimitExceededError):
            ChatClient.create(model).prompt("go").tools(rec.tool("t")).advisors(
                loop
            ).call().content()
        assert rec.count("t") == 2

    def test_excluded_tool_in_the_loop(self) -> None:
        rec = Recorder()
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            if len(results_since_last_user(messages)) < 6:
                return calling(ids.call("free"))
            return "done"

        text = (
            ChatClient.create(FunctionChatModel(script))
            .prompt("go")
            .tools(rec.tool("free"))
            .advisors(advisor(per_tool=1, total=1, excluded_tools={"free"}))
            .call()
            .content()
        )
        assert text == "done"
        assert rec.count("free") == 6

    def test_max_iterations(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        loop = ToolCallingAdvisor(max_iterations=3)
        with pytest.raises(ToolLoopLimitError) as info:
            ChatClient.create(model).prompt("go").tools(rec.tool("t")).advisors(
                loop
            ).call().content()
        assert info.value.max_iterations == 3
        assert len(model.requests) == 3

    def test_a_model_that_ignores_limit_errors_is_stopped_by_the_loop(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        loop = ToolCallingAdvisor(
            tool_calling_manager=ToolCallingManager(
                limits=ToolCallLimits(
                    per_tool=1, on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE
                )
            ),
            max_iterations=5,
        )
        text = (
            ChatClient.create(model).prompt("go").tools(rec.tool("t")).advisors(loop).call()
        ).content()
        assert rec.count("t") == 1
        assert "the loop stopped" in text

    def test_max_iterations_bounds_the_loop_before_the_limits_do(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        loop = ToolCallingAdvisor(
            tool_calling_manager=ToolCallingManager(limits=ToolCallLimits(per_tool=10)),
            max_iterations=2,
        )
        with pytest.raises(ToolLoopLimitError):
            ChatClient.create(model).prompt("go").tools(rec.tool("t")).advisors(
                loop
            ).call().content()
        assert rec.count("t") == 2

    def test_max_iterations_not_reached(self) -> None:
        rec = Recorder()
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            return "done" if last_results(messages) else calling(ids.call("t"))

        loop = ToolCallingAdvisor(max_iterations=2)
        text = (
            ChatClient.create(FunctionChatModel(script))
            .prompt("go")
            .tools(rec.tool("t"))
            .advisors(loop)
            .call()
            .content()
        )
        assert text == "done"

    def test_max_iterations_must_be_positive(self) -> None:
        with pytest.raises(ValueError, match="max_iterations"):
            ToolCallingAdvisor(max_iterations=0)

    def test_throw_under_stream(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        stream = (
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("t"))
            .advisors(advisor(per_tool=2))
            .stream()
        )
        with pytest.raises(ToolCallLimitExceededError):
            list(stream.content())
        assert rec.count("t") == 2

    def test_return_error_response_under_stream(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(calls_until_error("t"))
        chunks = list(
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("t"))
            .advisors(advisor(per_tool=2, on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE))
            .stream()
            .content()
        )
        text = "".join(chunks)
        assert text.startswith("gave up: ")
        assert rec.count("t") == 2

    def test_throw_under_acall(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        spec = (
            ChatClient.create(model).prompt("go").tools(rec.tool("t")).advisors(advisor(per_tool=2))
        )

        async def run() -> Any:
            response = await spec.acall()
            return response.content()

        with pytest.raises(ToolCallLimitExceededError):
            asyncio.run(run())
        assert rec.count("t") == 2


# ---------------------------------------------------------------------------------------
# errors through the loop
# ---------------------------------------------------------------------------------------


class TestErrorsInTheLoop:
    def test_tool_exception_goes_back_to_the_model(self) -> None:
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            results = last_results(messages)
            if results:
                return f"the tool said: {results[0]}"
            return calling(ids.call("explode", {"message": "disk on fire"}))

        model = FunctionChatModel(script)
        text = ChatClient.create(model).prompt("go").tools(explode).call().content()
        assert text is not None
        assert "disk on fire" in text
        assert len(model.requests) == 2

    def test_always_throw_raises_to_the_caller(self) -> None:
        ids = Ids()
        model = FunctionChatModel(
            lambda m, t: (
                "unreachable" if last_results(m) else calling(ids.call("explode", {"message": "x"}))
            )
        )
        loop = ToolCallingAdvisor(
            tool_calling_manager=ToolCallingManager(
                exception_processor=DefaultToolExecutionExceptionProcessor(always_throw=True)
            )
        )
        with pytest.raises(ToolExecutionError) as info:
            ChatClient.create(model).prompt("go").tools(explode).advisors(loop).call().content()
        assert info.value.tool_name == "explode"
        assert len(model.requests) == 1

    def test_rethrow_in_the_loop(self) -> None:
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            results = last_results(messages)
            if not results:
                return calling(ids.call("explode", {"message": "first"}))
            if "first" in results[0]:
                return calling(ids.call("bad_value", {"message": "second"}))
            return "unreachable"

        loop = ToolCallingAdvisor(
            tool_calling_manager=ToolCallingManager(
                exception_processor=DefaultToolExecutionExceptionProcessor(rethrow=(ValueError,))
            )
        )
        model = FunctionChatModel(script)
        with pytest.raises((ValueError, ToolExecutionError)) as info:
            ChatClient.create(model).prompt("go").tools(explode, bad_value).advisors(
                loop
            ).call().content()
        chain: BaseException | None = info.value
        while chain is not None and not isinstance(chain, ValueError):
            chain = chain.__cause__
        assert chain is not None
        assert "second" in str(chain)
        assert len(model.requests) == 2  # the RuntimeError went back to the model

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
    def test_interrupts_propagate_through_the_loop(self, kind: type[BaseException]) -> None:
        @tool
        def interrupt() -> str:
            """Stop."""
            raise kind()

        ids = Ids()
        model = FunctionChatModel(lambda m, t: calling(ids.call("interrupt")))
        with pytest.raises(kind):
            ChatClient.create(model).prompt("go").tools(interrupt).call().content()

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
    def test_interrupts_propagate_through_the_stream(self, kind: type[BaseException]) -> None:
        @tool
        def interrupt() -> str:
            """Stop."""
            raise kind()

        ids = Ids()
        model = FunctionChatModel(lambda m, t: calling(ids.call("interrupt")))
        with pytest.raises(kind):
            list(ChatClient.create(model).prompt("go").tools(interrupt).stream().content())

    @pytest.mark.parametrize(
        ("bad_arguments", "expected"),
        [
            ('{"a": 1, "b": ', "json"),
            ('{"a": "one", "b": 2}', "integer"),
            ('{"a": 1}', "required"),
            ("[1, 2]", "object"),
        ],
    )
    def test_bad_arguments_come_back_and_the_model_retries(
        self, bad_arguments: str, expected: str
    ) -> None:
        ids = Ids()
        seen: list[str] = []

        def script(messages: list[Any], tools: list[Any]) -> Any:
            results = last_results(messages)
            if not results:
                return calling(ids.call("add", bad_arguments))
            seen.append(results[0])
            if results[0].startswith("Error") or "invalid" in results[0].lower():
                return calling(ids.call("add", {"a": 2, "b": 3}))
            return f"sum is {results[0]}"

        text = (
            ChatClient.create(FunctionChatModel(script)).prompt("add").tools(add).call().content()
        )
        assert text == "sum is 5"
        assert expected in seen[0].lower()
        assert "add" in seen[0]

    def test_unknown_tool_comes_back_and_the_model_recovers(self) -> None:
        ids = Ids()
        seen: list[str] = []

        def script(messages: list[Any], tools: list[Any]) -> Any:
            results = last_results(messages)
            if not results:
                return calling(ids.call("addition", {"a": 1, "b": 1}))
            seen.append(results[0])
            if "addition" in results[0]:
                return calling(ids.call("add", {"a": 1, "b": 1}))
            return f"result {results[0]}"

        text = (
            ChatClient.create(FunctionChatModel(script))
            .prompt("add")
            .tools(add, explode)
            .call()
            .content()
        )
        assert text == "result 2"
        assert "addition" in seen[0]
        assert "add" in seen[0].replace("addition", "")
        assert "explode" in seen[0]


# ---------------------------------------------------------------------------------------
# return-direct through the loop
# ---------------------------------------------------------------------------------------


class TestReturnDirectInTheLoop:
    def test_single_return_direct_call(self) -> None:
        rec = Recorder()
        ids = Ids()
        model = FunctionChatModel(
            lambda m, t: (
                "model answer" if last_results(m) else calling(ids.call("direct", {"x": 7}))
            )
        )
        response = (
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("direct", return_direct=True))
            .call()
        )
        assert response.content() == "direct:7"
        chat_response = response.chat_response()
        assert chat_response is not None
        assert not chat_response.has_tool_calls
        assert len(model.requests) == 1

    def test_several_return_direct_results_are_joined_by_newlines(self) -> None:
        rec = Recorder()
        ids = Ids()
        model = FunctionChatModel(
            lambda m, t: (
                "model answer"
                if last_results(m)
                else calling(
                    ids.call("d1", {"x": 1}), ids.call("d2", {"x": 2}), ids.call("d1", {"x": 3})
                )
            )
        )
        text = (
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("d1", return_direct=True), rec.tool("d2", return_direct=True))
            .call()
            .content()
        )
        assert text == "d1:1\nd2:2\nd1:3"
        assert len(model.requests) == 1

    def test_mixed_turn_continues_the_loop(self) -> None:
        rec = Recorder()
        ids = Ids()
        seen: list[list[str]] = []

        def script(messages: list[Any], tools: list[Any]) -> Any:
            results = last_results(messages)
            if results:
                seen.append(results)
                return "model summary"
            return calling(ids.call("direct", {"x": 1}), ids.call("normal", {"x": 2}))

        model = FunctionChatModel(script)
        text = (
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("direct", return_direct=True), rec.tool("normal"))
            .call()
            .content()
        )
        assert text == "model summary"
        assert seen == [["direct:1", "normal:2"]]
        assert len(model.requests) == 2

    def test_return_direct_on_a_later_turn(self) -> None:
        rec = Recorder()
        ids = Ids()

        def script(messages: list[Any], tools: list[Any]) -> Any:
            results = last_results(messages)
            if not results:
                return calling(ids.call("normal", {"x": 1}))
            if results == ["normal:1"]:
                return calling(ids.call("direct", {"x": 2}))
            return "model answer"

        model = FunctionChatModel(script)
        text = (
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("direct", return_direct=True), rec.tool("normal"))
            .call()
            .content()
        )
        assert text == "direct:2"
        assert len(model.requests) == 2

    def test_return_direct_converted_result(self) -> None:
        @tool(return_direct=True)
        def lookup(key: str) -> dict[str, Any]:
            """Look a key up."""
            return {"key": key, "value": 1}

        ids = Ids()
        model = FunctionChatModel(lambda m, t: calling(ids.call("lookup", {"key": "k"})))
        text = ChatClient.create(model).prompt("go").tools(lookup).call().content()
        assert text is not None
        assert json.loads(text) == {"key": "k", "value": 1}

    def test_return_direct_under_stream(self) -> None:
        rec = Recorder()
        ids = Ids()
        model = FunctionChatModel(
            lambda m, t: (
                "model answer"
                if last_results(m)
                else calling(ids.call("d1", {"x": 1}), ids.call("d2", {"x": 2}))
            )
        )
        text = "".join(
            ChatClient.create(model)
            .prompt("go")
            .tools(rec.tool("d1", return_direct=True), rec.tool("d2", return_direct=True))
            .stream()
            .content()
        )
        assert text == "d1:1\nd2:2"


# ---------------------------------------------------------------------------------------
# tool context through the loop
# ---------------------------------------------------------------------------------------


class TestToolContextInTheLoop:
    def test_default_and_per_call_context_merge(self) -> None:
        seen: list[dict[str, Any]] = []

        @tool(description="Get the weather for a city")
        def weather(city: str, ctx: ToolContext) -> str:
            seen.append(dict(ctx.context))
            return f"sunny in {city} for {ctx['tenant_id']}"

        ids = Ids()
        model_views: list[str] = []

        def script(messages: list[Any], tools: list[Any]) -> Any:
            model_views.append(repr(messages) + repr(tools))
            results = last_results(messages)
            if results:
                return results[0]
            return calling(ids.call("weather", {"city": "Oslo"}))

        client = (
            ChatClient.builder(FunctionChatModel(script))
            .default_tools(weather)
            .default_tool_context({"tenant_id": "default-tenant", "region": "eu"})
            .build()
        )
        text = client.prompt("weather?").tool_context({"tenant_id": "acme"}).call().content()
        assert text == "sunny in Oslo for acme"
        assert seen == [{"tenant_id": "acme", "region": "eu"}]
        # the context reaches the tool, never the model (only the tool's result mentions it)
        assert "acme" not in model_views[0]
        assert "default-tenant" not in model_views[0]
        assert all("default-tenant" not in view and "region" not in view for view in model_views)
        schema = weather_schema = tool_callbacks(weather)[0].definition.input_schema
        assert "ctx" not in schema.get("properties", {})
        assert weather_schema["required"] == ["city"]


# ---------------------------------------------------------------------------------------
# resolution through the loop
# ---------------------------------------------------------------------------------------


class TestResolutionInTheLoop:
    def test_tool_names_are_resolved_and_offered(self) -> None:
        ids = Ids()
        offered: list[list[str]] = []

        def script(messages: list[Any], tools: list[Any]) -> Any:
            offered.append([t.name for t in tools])
            results = last_results(messages)
            return results[0] if results else calling(ids.call("add", {"a": 20, "b": 22}))

        manager = ToolCallingManager(resolver=StaticToolCallbackResolver(add, explode))
        text = (
            ChatClient.create(FunctionChatModel(script))
            .prompt("add")
            .tool_names("add")
            .advisors(ToolCallingAdvisor(tool_calling_manager=manager))
            .call()
            .content()
        )
        assert text == "42"
        assert offered[0] == ["add"]

    def test_unknown_tool_names_fail(self) -> None:
        manager = ToolCallingManager(resolver=StaticToolCallbackResolver(add))
        model = FunctionChatModel(lambda m, t: "hi")
        with pytest.raises(ToolDefinitionError) as info:
            (
                ChatClient.create(model)
                .prompt("go")
                .tool_names("nonexistent")
                .advisors(ToolCallingAdvisor(tool_calling_manager=manager))
                .call()
                .content()
            )
        assert "nonexistent" in str(info.value)

    @pytest.mark.parametrize("fallback", [False, True])
    def test_resolver_fallback(self, fallback: bool) -> None:
        rec = Recorder()
        ids = Ids()
        seen: list[str] = []

        def script(messages: list[Any], tools: list[Any]) -> Any:
            results = last_results(messages)
            if results:
                seen.append(results[0])
                return "done"
            return calling(ids.call("hidden", {"x": 5}))

        manager = ToolCallingManager(
            resolver=StaticToolCallbackResolver(rec.tool("hidden")), resolver_fallback=fallback
        )
        text = (
            ChatClient.create(FunctionChatModel(script))
            .prompt("go")
            .tools(add)
            .advisors(ToolCallingAdvisor(tool_calling_manager=manager))
            .call()
            .content()
        )
        assert text == "done"
        if fallback:
            assert seen == ["hidden:5"]
            assert rec.count("hidden") == 1
        else:
            assert "hidden" in seen[0]
            assert "add" in seen[0]
            assert rec.count("hidden") == 0


# ---------------------------------------------------------------------------------------
# the manual loop (user-controlled tool execution)
# ---------------------------------------------------------------------------------------


def alarm_script() -> tuple[Script, Ids]:
    """The reference's alarm example: get the time, then set an alarm, then answer."""
    ids = Ids()

    def script(messages: list[Any], tools: list[Any]) -> Any:
        results = results_since_last_user(messages)
        if not results:
            return calling(ids.call("get_current_date_time"))
        if len(results) == 1:
            return calling(ids.call("set_alarm", {"time": "2030-01-01T10:10:00"}))
        return f"Alarm set: {results[-1]}"

    return script, ids


class AlarmTools:
    def __init__(self) -> None:
        self.alarms: list[str] = []
        self.time_calls = 0

    @tool(description="Get the current date and time in the user's timezone")
    def get_current_date_time(self) -> str:
        self.time_calls += 1
        return "2030-01-01T10:00:00"

    @tool(description="Set a user alarm for the given time, provided in ISO-8601 format")
    def set_alarm(self, time: str) -> str:
        self.alarms.append(time)
        return f"alarm at {time}"


def run_manual_loop(
    client: ChatClient,
    tools: Any,
    *,
    per_call_off: bool = False,
    options: ChatOptions | None = None,
) -> tuple[str | None, int]:
    """What the docs' manual loop does: call, execute tool calls yourself, call again."""
    manager = ToolCallingManager()
    spec = client.prompt("Set an alarm ten minutes from now").tools(tools)
    if per_call_off:
        spec = spec.auto_tool_calling(False)
    if options is not None:
        spec = spec.options(options)
    request, _ = spec.build_request()
    prompt = request.prompt
    response = spec.call().chat_response()
    assert response is not None
    rounds = 0
    while response.has_tool_calls:
        rounds += 1
        result = manager.execute_tool_calls(prompt, response)
        prompt = Prompt(result.conversation_history, prompt.options)
        follow = client.prompt(prompt)
        if per_call_off:
            follow = follow.auto_tool_calling(False)
        response = follow.call().chat_response()
        assert response is not None
    return response.message.content, rounds


class TestManualLoop:
    def test_builder_switch_returns_tool_calls_unexecuted(self) -> None:
        script, _ = alarm_script()
        model = FunctionChatModel(script)
        tools = AlarmTools()
        client = ChatClient.builder(model).auto_tool_calling(False).build()
        response = client.prompt("Set an alarm").tools(tools).call().chat_response()
        assert response is not None
        assert response.has_tool_calls
        assert [c.name for c in response.message.tool_calls] == ["get_current_date_time"]
        assert tools.time_calls == 0
        assert [d.name for d in model.requests[0].tool_definitions] == [
            "get_current_date_time",
            "set_alarm",
        ]

    def test_builder_switch_manual_loop(self) -> None:
        script, _ = alarm_script()
        tools = AlarmTools()
        client = ChatClient.builder(FunctionChatModel(script)).auto_tool_calling(False).build()
        text, rounds = run_manual_loop(client, tools)
        assert text == "Alarm set: alarm at 2030-01-01T10:10:00"
        assert rounds == 2
        assert tools.time_calls == 1
        assert tools.alarms == ["2030-01-01T10:10:00"]

    def test_per_call_switch(self) -> None:
        script, _ = alarm_script()
        tools = AlarmTools()
        client = ChatClient.create(FunctionChatModel(script))
        response = client.prompt("Set an alarm").tools(tools).auto_tool_calling(False).call()
        chat_response = response.chat_response()
        assert chat_response is not None
        assert chat_response.has_tool_calls
        assert tools.time_calls == 0
        text, rounds = run_manual_loop(client, tools, per_call_off=True)
        assert text == "Alarm set: alarm at 2030-01-01T10:10:00"
        assert rounds == 2
        assert tools.alarms == ["2030-01-01T10:10:00"]

    def test_internal_tool_execution_disabled_in_options(self) -> None:
        script, _ = alarm_script()
        tools = AlarmTools()
        model = FunctionChatModel(script)
        client = ChatClient.create(model)
        options = ChatOptions(internal_tool_execution_enabled=False)
        response = (
            client.prompt("Set an alarm").tools(tools).options(options).call().chat_response()
        )
        assert response is not None
        assert response.has_tool_calls
        assert tools.time_calls == 0
        assert len(model.requests) == 1
        assert [d.name for d in model.requests[0].tool_definitions] == [
            "get_current_date_time",
            "set_alarm",
        ]
        text, rounds = run_manual_loop(client, tools, options=options)
        assert text == "Alarm set: alarm at 2030-01-01T10:10:00"
        assert rounds == 2
        assert tools.time_calls == 1

    def test_internal_tool_execution_disabled_in_default_options(self) -> None:
        script, _ = alarm_script()
        tools = AlarmTools()
        client = (
            ChatClient.builder(FunctionChatModel(script))
            .default_options(ChatOptions(internal_tool_execution_enabled=False))
            .build()
        )
        response = client.prompt("Set an alarm").tools(tools).call().chat_response()
        assert response is not None
        assert response.has_tool_calls
        assert tools.time_calls == 0
        text, rounds = run_manual_loop(client, tools)
        assert text == "Alarm set: alarm at 2030-01-01T10:10:00"
        assert rounds == 2

    def test_manual_loop_on_the_model(self) -> None:
        # the reference's manual example: ChatModel + ToolCallingManager in a while loop
        script, _ = alarm_script()
        tools = AlarmTools()
        model = FunctionChatModel(script)
        manager = ToolCallingManager()
        options = ChatOptions(
            tool_callbacks=tool_callbacks(tools), internal_tool_execution_enabled=False
        )
        prompt = Prompt(
            [SystemMessage(content="You set alarms"), UserMessage(content="Alarm in ten minutes")],
            options,
        )
        response = model.call(prompt)
        while response.has_tool_calls:
            result = manager.execute_tool_calls(prompt, response)
            prompt = Prompt(result.conversation_history, options)
            response = model.call(prompt)
        assert response.message.content == "Alarm set: alarm at 2030-01-01T10:10:00"
        assert tools.alarms == ["2030-01-01T10:10:00"]
        # the final history the model saw: system, user, then two tool rounds
        roles = [m.role for m in model.requests[-1].messages]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]

    def test_manual_loop_limits_count_through_history(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        limits = ToolCallLimits(per_tool=3, on_exceed=LimitExceededAction.THROW)
        manager = ToolCallingManager(limits=limits)
        options = ChatOptions(tool_callbacks=[rec.tool("t")])

        def manual_loop() -> None:
            prompt = Prompt([UserMessage(content="go")], options)
            response = model.call(prompt)
            while response.has_tool_calls:
                result = manager.execute_tool_calls(prompt, response)
                prompt = Prompt(result.conversation_history, options)
                response = model.call(prompt)

        with pytest.raises(ToolCallLimitExceededError):
            manual_loop()
        assert rec.count("t") == 3

    def test_a_manual_loop_that_honours_return_direct_ends_at_the_default_limits(self) -> None:
        rec = Recorder()
        model = FunctionChatModel(always_calls("t"))
        manager = ToolCallingManager(limits=ToolCallLimits(per_tool=3))
        options = ChatOptions(tool_callbacks=[rec.tool("t")])
        prompt = Prompt([UserMessage(content="go")], options)
        response = model.call(prompt)
        turns = 0
        while response.has_tool_calls:
            turns += 1
            result = manager.execute_tool_calls(prompt, response)
            if result.return_direct:
                break
            prompt = Prompt(result.conversation_history, options)
            response = model.call(prompt)
        assert rec.count("t") == 3
        assert turns == 5  # 3 calls, the first refusal, then the loop stops
        last = result.tool_response_message.responses[-1].response_data
        assert "the loop stopped" in last

    def test_manual_loop_with_return_direct(self) -> None:
        rec = Recorder()
        ids = Ids()
        model = FunctionChatModel(
            lambda m, t: (
                "model answer" if last_results(m) else calling(ids.call("direct", {"x": 3}))
            )
        )
        manager = ToolCallingManager()
        options = ChatOptions(tool_callbacks=[rec.tool("direct", return_direct=True)])
        prompt = Prompt([UserMessage(content="go")], options)
        response: ChatResponse = model.call(prompt)
        answer = None
        while response.has_tool_calls:
            result = manager.execute_tool_calls(prompt, response)
            if result.return_direct:
                answer = result.return_direct_text()
                break
            prompt = Prompt(result.conversation_history, options)
            response = model.call(prompt)
        assert answer == "direct:3"
        assert len(model.requests) == 1
