"""ToolCallingManager driven directly: execution results, tool context, limits, errors,
return-direct and tool resolution. Offline and deterministic."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from toolsearch import (
    AssistantMessage,
    ChatOptions,
    ChatResponse,
    FunctionToolCallback,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolContext,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
    tool,
    tool_callbacks,
)
from toolsearch.errors import (
    InvalidToolArgumentsError,
    ToolCallLimitExceededError,
    ToolDefinitionError,
    ToolExecutionError,
    ToolsearchError,
)
from toolsearch.loop import (
    DefaultToolExecutionExceptionProcessor,
    DelegatingToolCallbackResolver,
    LimitExceededAction,
    StaticToolCallbackResolver,
    ToolCallingManager,
    ToolCallLimits,
    ToolExecutionResult,
)
from toolsearch.tools import ToolDefinition, ToolMetadata

# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


class Recorder:
    """A family of tools that record every execution, fresh for each test."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, Any]] = []

    def tool(self, name: str, *, return_direct: bool = False, result: Any = None):
        def fn(x: int = 0) -> Any:
            self.runs.append((name, x))
            return result if result is not None else f"{name}:{x}"

        return FunctionToolCallback.from_function(
            fn, name=name, description=f"The {name} tool", return_direct=return_direct
        )

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.runs if n == name)


def call(name: str, arguments: Any = None, *, id: str | None = None) -> ToolCall:
    if arguments is None:
        arguments = {}
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=id or f"id-{name}", name=name, arguments=text)


def calls_response(*tool_calls: ToolCall) -> ChatResponse:
    # give every call a distinct id unless the test set one
    numbered = [
        tc if not tc.id.startswith("id-") else tc.model_copy(update={"id": f"call_{i}"})
        for i, tc in enumerate(tool_calls)
    ]
    return ChatResponse(AssistantMessage(tool_calls=tuple(numbered)))


def prompt_with(
    callbacks: list[Any],
    *,
    messages: list[Any] | None = None,
    context: dict[str, Any] | None = None,
    tool_names: tuple[str, ...] = (),
) -> Prompt:
    msgs = messages if messages is not None else [UserMessage(content="please help")]
    return Prompt(
        msgs,
        ChatOptions(tool_callbacks=callbacks, tool_context=context or {}, tool_names=tool_names),
    )


def results(result: ToolExecutionResult) -> list[str]:
    return [r.response_data for r in result.tool_response_message.responses]


def repeat(name: str, n: int) -> list[ToolCall]:
    return [call(name, {"x": i}) for i in range(n)]


# module-level tools used by several tests


@tool(description="Echo the given text back")
def echo(text: str) -> str:
    return f"echo:{text}"


@tool(description="Add two integers")
def add(a: int, b: int) -> int:
    return a + b


@tool(description="Look up a user profile")
def profile(user: str) -> dict[str, Any]:
    return {"user": user, "active": True}


@tool(description="Return the tenant of the current request")
def tenant(ctx: ToolContext, suffix: str = "") -> str:
    return f"{ctx['tenant_id']}{suffix}"


# ---------------------------------------------------------------------------------------
# ToolExecutionResult
# ---------------------------------------------------------------------------------------


class TestExecutionResult:
    def test_history_is_prompt_messages_then_assistant_then_tool_responses(self) -> None:
        system = SystemMessage(content="You are helpful")
        user = UserMessage(content="echo hi and add 2 and 3")
        prompt = prompt_with(tool_callbacks(echo, add), messages=[system, user])
        assistant = AssistantMessage(
            content="working on it",
            tool_calls=(
                ToolCall(id="a1", name="echo", arguments='{"text": "hi"}'),
                ToolCall(id="a2", name="add", arguments='{"a": 2, "b": 3}'),
            ),
        )
        result = ToolCallingManager().execute_tool_calls(prompt, ChatResponse(assistant))

        assert isinstance(result, ToolExecutionResult)
        history = list(result.conversation_history)
        assert len(history) == 4
        assert history[0] == system
        assert history[1] == user
        assert history[2] == assistant
        assert isinstance(history[3], ToolResponseMessage)
        assert history[3].responses == (
            ToolResponse(id="a1", name="echo", response_data="echo:hi"),
            ToolResponse(id="a2", name="add", response_data="5"),
        )
        assert result.tool_response_message is history[3]
        assert result.return_direct is False
        assert dict(result.call_counts) == {"echo": 1, "add": 1}

    def test_prompt_is_left_unchanged(self) -> None:
        prompt = prompt_with(tool_callbacks(echo))
        before = list(prompt.messages)
        ToolCallingManager().execute_tool_calls(prompt, calls_response(call("echo", {"text": "x"})))
        assert list(prompt.messages) == before

    def test_responses_follow_call_order_with_ids_and_names_matched(self) -> None:
        rec = Recorder()
        tools = [rec.tool("alpha"), rec.tool("beta")]
        response = ChatResponse(
            AssistantMessage(
                tool_calls=(
                    ToolCall(id="z9", name="beta", arguments='{"x": 1}'),
                    ToolCall(id="a0", name="alpha", arguments='{"x": 2}'),
                    ToolCall(id="m5", name="beta", arguments='{"x": 3}'),
                )
            )
        )
        result = ToolCallingManager().execute_tool_calls(prompt_with(tools), response)
        responses = result.tool_response_message.responses
        assert [(r.id, r.name, r.response_data) for r in responses] == [
            ("z9", "beta", "beta:1"),
            ("a0", "alpha", "alpha:2"),
            ("m5", "beta", "beta:3"),
        ]
        assert rec.runs == [("beta", 1), ("alpha", 2), ("beta", 3)]
        assert dict(result.call_counts) == {"beta": 2, "alpha": 1}

    def test_results_are_converted_to_text(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(profile)), calls_response(call("profile", {"user": "ann"}))
        )
        assert json.loads(results(result)[0]) == {"user": "ann", "active": True}

    def test_response_without_tool_calls_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="tool call"):
            ToolCallingManager().execute_tool_calls(
                prompt_with(tool_callbacks(echo)), ChatResponse(AssistantMessage(content="done"))
            )

    def test_return_direct_text_joins_results(self) -> None:
        rec = Recorder()
        tools = [rec.tool("a", return_direct=True), rec.tool("b", return_direct=True)]
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tools), calls_response(call("a", {"x": 1}), call("b", {"x": 2}))
        )
        assert result.return_direct_text() == "a:1\nb:2"


# ---------------------------------------------------------------------------------------
# tool context
# ---------------------------------------------------------------------------------------


class TestToolContext:
    def test_tool_context_is_injected(self) -> None:
        seen: list[ToolContext] = []

        @tool
        def whoami(ctx: ToolContext) -> str:
            """Who is calling."""
            seen.append(ctx)
            return f"{ctx['tenant_id']}/{ctx.context['user']}"

        prompt = prompt_with(tool_callbacks(whoami), context={"tenant_id": "acme", "user": "u-1"})
        result = ToolCallingManager().execute_tool_calls(prompt, calls_response(call("whoami")))
        assert results(result) == ["acme/u-1"]
        assert len(seen) == 1
        assert isinstance(seen[0], ToolContext)
        assert dict(seen[0].context) == {"tenant_id": "acme", "user": "u-1"}

    def test_tool_context_is_not_in_the_schema_and_mixes_with_arguments(self) -> None:
        (cb,) = tool_callbacks(tenant)
        assert set(cb.definition.input_schema.get("properties", {})) == {"suffix"}
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([cb], context={"tenant_id": "t-42"}),
            calls_response(call("tenant", {"suffix": "!"})),
        )
        assert results(result) == ["t-42!"]

    def test_tool_context_is_read_only(self) -> None:
        errors: list[BaseException] = []

        @tool
        def mutate(ctx: ToolContext) -> str:
            """Try to change the context."""
            try:
                ctx.context["tenant_id"] = "evil"  # type: ignore[index]
            except TypeError as exc:
                errors.append(exc)
            return str(ctx["tenant_id"])

        context = {"tenant_id": "acme"}
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(mutate), context=context), calls_response(call("mutate"))
        )
        assert results(result) == ["acme"]
        assert errors, "ToolContext.context must be read-only"
        assert context == {"tenant_id": "acme"}

    def test_empty_context_when_none_given(self) -> None:
        seen: list[Any] = []

        @tool
        def peek(ctx: ToolContext) -> str:
            """Peek at the context."""
            seen.append(ctx)
            return str(len(ctx))

        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(peek)), calls_response(call("peek"))
        )
        assert results(result) == ["0"]
        assert isinstance(seen[0], ToolContext)

    def test_schema_tool_receives_context(self) -> None:
        def fn(arguments: dict[str, Any], context: ToolContext) -> str:
            return f"{arguments['city']}@{context['tenant_id']}"

        cb = FunctionToolCallback.from_schema(
            fn,
            name="weather",
            description="Weather for a city",
            input_schema={
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        )
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([cb], context={"tenant_id": "acme"}),
            calls_response(call("weather", {"city": "Oslo"})),
        )
        assert results(result) == ["Oslo@acme"]


# ---------------------------------------------------------------------------------------
# limits
# ---------------------------------------------------------------------------------------


class TestLimitsConfiguration:
    def test_defaults(self) -> None:
        limits = ToolCallLimits()
        assert limits.per_tool == 40
        assert limits.total == 150
        assert limits.on_exceed is LimitExceededAction.RETURN_ERROR_RESPONSE
        assert dict(limits.per_tool_overrides) == {}
        assert set(limits.excluded_tools) == set()
        assert ToolCallingManager().limits == limits

    def test_limit_for(self) -> None:
        limits = ToolCallLimits(per_tool=5, per_tool_overrides={"a": 2}, excluded_tools={"b"})
        assert limits.limit_for("a") == 2
        assert limits.limit_for("b") is None
        assert limits.limit_for("c") == 5

    @pytest.mark.parametrize(
        "kwargs",
        [{"per_tool": 0}, {"total": 0}, {"per_tool": -1}, {"per_tool_overrides": {"a": -1}}],
    )
    def test_invalid_limits_are_rejected(self, kwargs: dict[str, Any]) -> None:
        with pytest.raises(ValueError, match=r"per_tool|total|limit"):
            ToolCallLimits(**kwargs)

    def test_error_is_a_toolsearch_error(self) -> None:
        assert issubclass(ToolCallLimitExceededError, ToolsearchError)


def manager_with(**limits: Any) -> ToolCallingManager:
    """A manager with these limits; THROW unless the test says otherwise (the tests below
    check both actions; the default action is tested in TestLimitsConfiguration)."""
    limits.setdefault("on_exceed", LimitExceededAction.THROW)
    return ToolCallingManager(limits=ToolCallLimits(**limits))


class TestPerToolLimit:
    def test_default_per_tool_limit_is_40(self) -> None:
        rec = Recorder()
        tools = [rec.tool("t")]
        ok = ToolCallingManager().execute_tool_calls(
            prompt_with(tools), calls_response(*repeat("t", 40))
        )
        assert dict(ok.call_counts) == {"t": 40}
        over = ToolCallingManager().execute_tool_calls(  # by default the model is told
            prompt_with(tools), calls_response(*repeat("t", 41))
        )
        last = over.tool_response_message.responses[-1].response_data
        assert "limit" in last.lower()
        assert rec.count("t") == 80

    def test_throw(self) -> None:
        rec = Recorder()
        tools = [rec.tool("t"), rec.tool("u")]
        manager = manager_with(per_tool=2)
        with pytest.raises(ToolCallLimitExceededError) as info:
            manager.execute_tool_calls(prompt_with(tools), calls_response(*repeat("t", 3)))
        assert info.value.tool_name == "t"
        assert info.value.limit == 2
        assert info.value.total is False
        assert "'t'" in str(info.value)
        assert "2" in str(info.value)
        assert rec.count("t") <= 2  # the call over the limit never ran

    def test_at_the_limit_is_fine(self) -> None:
        rec = Recorder()
        result = manager_with(per_tool=3).execute_tool_calls(
            prompt_with([rec.tool("t")]), calls_response(*repeat("t", 3))
        )
        assert results(result) == ["t:0", "t:1", "t:2"]

    def test_return_error_response(self) -> None:
        rec = Recorder()
        tools = [rec.tool("t"), rec.tool("u")]
        manager = manager_with(per_tool=2, on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE)
        result = manager.execute_tool_calls(
            prompt_with(tools),
            calls_response(
                call("t", {"x": 1}), call("t", {"x": 2}), call("t", {"x": 3}), call("u")
            ),
        )
        texts = results(result)
        assert texts[0] == "t:1"
        assert texts[1] == "t:2"
        assert "'t'" in texts[2]
        assert "limit" in texts[2].lower()
        assert texts[3] == "u:0"
        assert rec.runs == [("t", 1), ("t", 2), ("u", 0)]  # the refused call did not run
        ids = [r.id for r in result.tool_response_message.responses]
        assert ids == ["call_0", "call_1", "call_2", "call_3"]

    def test_on_exceed_accepts_the_string_value(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool=1, on_exceed="return_error_response")
        result = manager.execute_tool_calls(
            prompt_with([rec.tool("t")]), calls_response(*repeat("t", 2))
        )
        assert "limit" in results(result)[1].lower()
        assert rec.count("t") == 1

    def test_overrides(self) -> None:
        rec = Recorder()
        tools = [rec.tool("busy"), rec.tool("rare")]
        manager = manager_with(
            per_tool=1,
            per_tool_overrides={"busy": 3},
            on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE,
        )
        result = manager.execute_tool_calls(
            prompt_with(tools), calls_response(*repeat("busy", 4), *repeat("rare", 2))
        )
        texts = results(result)
        assert texts[:3] == ["busy:0", "busy:1", "busy:2"]
        assert "limit" in texts[3].lower()
        assert "busy" in texts[3]
        assert texts[4] == "rare:0"
        assert "limit" in texts[5].lower()
        assert "rare" in texts[5]
        assert rec.count("busy") == 3
        assert rec.count("rare") == 1

    def test_override_raises_the_limit_above_the_default(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool_overrides={"t": 45})
        result = manager.execute_tool_calls(
            prompt_with([rec.tool("t")]), calls_response(*repeat("t", 45))
        )
        assert rec.count("t") == 45
        assert dict(result.call_counts) == {"t": 45}

    def test_override_zero_forbids_the_tool(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool_overrides={"t": 0})
        with pytest.raises(ToolCallLimitExceededError):
            manager.execute_tool_calls(prompt_with([rec.tool("t")]), calls_response(call("t")))
        assert rec.count("t") == 0

    def test_excluded_tools_are_never_limited(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool=1, total=2, excluded_tools={"free"})
        tools = [rec.tool("free"), rec.tool("a"), rec.tool("b")]
        result = manager.execute_tool_calls(
            prompt_with(tools),
            calls_response(*repeat("free", 10), call("a"), call("b"), *repeat("free", 5)),
        )
        assert rec.count("free") == 15
        assert rec.count("a") == 1
        assert rec.count("b") == 1
        assert all("limit" not in t.lower() for t in results(result))

    def test_excluded_tools_are_not_counted_in_the_total(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool=None, total=2, excluded_tools=frozenset({"free"}))
        tools = [rec.tool("free"), rec.tool("a")]
        with pytest.raises(ToolCallLimitExceededError) as info:
            manager.execute_tool_calls(
                prompt_with(tools),
                calls_response(*repeat("free", 5), *repeat("a", 3)),
            )
        assert info.value.total is True
        assert info.value.limit == 2
        # limits are checked for the whole turn before anything runs: nothing ran
        assert rec.count("free") == 0
        assert rec.count("a") == 0

    def test_no_per_tool_limit(self) -> None:
        rec = Recorder()
        # 200 calls in one answer: past the per-answer bound too, so that goes as well
        result = manager_with(per_tool=None, total=None, per_answer=None).execute_tool_calls(
            prompt_with([rec.tool("t")]), calls_response(*repeat("t", 200))
        )
        assert rec.count("t") == 200
        assert dict(result.call_counts) == {"t": 200}


class TestTotalLimit:
    def test_default_total_is_150(self) -> None:
        rec = Recorder()
        tools = [rec.tool(f"t{i}") for i in range(4)]
        ok_calls = [call(f"t{i % 4}", {"x": i}) for i in range(150)]
        ToolCallingManager().execute_tool_calls(prompt_with(tools), calls_response(*ok_calls))
        over = ToolCallingManager().execute_tool_calls(  # by default the model is told
            prompt_with(tools), calls_response(*ok_calls, call("t0"))
        )
        assert "limit" in over.tool_response_message.responses[-1].response_data.lower()
        with pytest.raises(ToolCallLimitExceededError) as info:
            manager_with().execute_tool_calls(
                prompt_with(tools), calls_response(*ok_calls, call("t0"))
            )
        assert info.value.total is True
        assert info.value.limit == 150

    def test_throw(self) -> None:
        rec = Recorder()
        tools = [rec.tool("a"), rec.tool("b"), rec.tool("c")]
        manager = manager_with(total=3)
        with pytest.raises(ToolCallLimitExceededError) as info:
            manager.execute_tool_calls(
                prompt_with(tools), calls_response(call("a"), call("b"), call("c"), call("a"))
            )
        assert info.value.total is True
        assert info.value.limit == 3
        assert "total" in str(info.value)
        assert len(rec.runs) <= 3

    def test_return_error_response(self) -> None:
        rec = Recorder()
        tools = [rec.tool("a"), rec.tool("b"), rec.tool("c")]
        manager = manager_with(total=2, on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE)
        result = manager.execute_tool_calls(
            prompt_with(tools), calls_response(call("a"), call("b"), call("c"))
        )
        texts = results(result)
        assert texts[:2] == ["a:0", "b:0"]
        assert "total" in texts[2].lower()
        assert "limit" in texts[2].lower()
        assert rec.count("c") == 0


class TestCountingWindow:
    def earlier_turn(self, n: int) -> list[Any]:
        """A finished earlier user turn in which ``t`` was called ``n`` times."""
        tool_calls = tuple(ToolCall(id=f"old{i}", name="t", arguments='{"x": 0}') for i in range(n))
        return [
            UserMessage(content="first question"),
            AssistantMessage(tool_calls=tool_calls),
            ToolResponseMessage(
                responses=tuple(
                    ToolResponse(id=c.id, name="t", response_data="t:0") for c in tool_calls
                )
            ),
            AssistantMessage(content="first answer"),
        ]

    def test_earlier_user_turns_do_not_count(self) -> None:
        rec = Recorder()
        messages = [*self.earlier_turn(2), UserMessage(content="second question")]
        result = manager_with(per_tool=2, total=2).execute_tool_calls(
            prompt_with([rec.tool("t")], messages=messages), calls_response(*repeat("t", 2))
        )
        assert rec.count("t") == 2
        assert dict(result.call_counts) == {"t": 2}

    def test_calls_since_the_last_user_message_count(self) -> None:
        rec = Recorder()
        # the current turn already made two calls to t (history after the last user message)
        messages = [UserMessage(content="question"), *self.earlier_turn(2)[1:3]]
        manager = manager_with(per_tool=2)
        with pytest.raises(ToolCallLimitExceededError):
            manager.execute_tool_calls(
                prompt_with([rec.tool("t")], messages=messages), calls_response(call("t"))
            )
        assert rec.count("t") == 0

    def test_history_counts_are_included_in_call_counts(self) -> None:
        rec = Recorder()
        messages = [UserMessage(content="question"), *self.earlier_turn(2)[1:3]]
        result = manager_with(per_tool=5).execute_tool_calls(
            prompt_with([rec.tool("t")], messages=messages), calls_response(call("t"))
        )
        assert dict(result.call_counts) == {"t": 3}

    def test_total_counts_only_since_last_user_message(self) -> None:
        rec = Recorder()
        messages = [*self.earlier_turn(3), UserMessage(content="again")]
        manager = manager_with(total=3)
        manager.execute_tool_calls(
            prompt_with([rec.tool("t")], messages=messages), calls_response(*repeat("t", 3))
        )
        assert rec.count("t") == 3

    def test_prior_call_counts_are_respected(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool=2)
        with pytest.raises(ToolCallLimitExceededError):
            manager.execute_tool_calls(
                prompt_with([rec.tool("t")]), calls_response(call("t")), prior_call_counts={"t": 2}
            )
        assert rec.count("t") == 0

    def test_prior_call_counts_add_up(self) -> None:
        rec = Recorder()
        result = manager_with(per_tool=5).execute_tool_calls(
            prompt_with([rec.tool("t"), rec.tool("u")]),
            calls_response(call("t"), call("u")),
            prior_call_counts={"t": 2, "v": 1},
        )
        assert dict(result.call_counts) == {"t": 3, "u": 1, "v": 1}

    def test_prior_call_counts_count_toward_total(self) -> None:
        rec = Recorder()
        manager = manager_with(total=3, on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE)
        result = manager.execute_tool_calls(
            prompt_with([rec.tool("t"), rec.tool("u")]),
            calls_response(call("t"), call("u")),
            prior_call_counts={"v": 2},
        )
        assert results(result)[0] == "t:0"
        assert "limit" in results(result)[1].lower()

    def test_prior_call_counts_replace_history_counting(self) -> None:
        rec = Recorder()
        messages = [UserMessage(content="question"), *self.earlier_turn(2)[1:3]]
        result = manager_with(per_tool=2).execute_tool_calls(
            prompt_with([rec.tool("t")], messages=messages),
            calls_response(call("t")),
            prior_call_counts={},
        )
        assert results(result) == ["t:0"]
        assert dict(result.call_counts) == {"t": 1}

    def test_call_counts_feed_the_next_turn(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool=3)
        tools = [rec.tool("t")]
        first = manager.execute_tool_calls(prompt_with(tools), calls_response(*repeat("t", 2)))
        second = manager.execute_tool_calls(
            prompt_with(tools), calls_response(call("t")), prior_call_counts=first.call_counts
        )
        assert dict(second.call_counts) == {"t": 3}
        with pytest.raises(ToolCallLimitExceededError):
            manager.execute_tool_calls(
                prompt_with(tools), calls_response(call("t")), prior_call_counts=second.call_counts
            )


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------


class Boom(Exception):
    pass


@tool(description="A tool that fails with the given message")
def explode(message: str) -> str:
    raise RuntimeError(message)


@tool(description="A tool that fails with a ValueError")
def bad_value(message: str) -> str:
    raise ValueError(message)


@tool(description="A tool that fails without a message")
def silent_failure() -> str:
    raise Boom()


def find_in_chain(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, kind):
            return seen
        seen = seen.__cause__
    return None


class RawCallback:
    """A third-party ToolCallback (not a FunctionToolCallback) that raises directly."""

    def __init__(self, name: str, error: BaseException | None = None) -> None:
        self._definition = ToolDefinition(
            name=name, description=f"raw {name}", input_schema={"type": "object"}
        )
        self._error = error
        self.calls = 0

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    def call(self, input_json: str, context: ToolContext | None = None) -> str:
        self.calls += 1
        if self._error is not None:
            raise self._error
        return "raw ok"

    async def acall(self, input_json: str, context: ToolContext | None = None) -> str:
        return self.call(input_json, context)


class TestToolExceptions:
    def test_exception_becomes_the_tool_result(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(explode, echo)),
            calls_response(
                call("explode", {"message": "disk on fire"}), call("echo", {"text": "still here"})
            ),
        )
        texts = results(result)
        assert "disk on fire" in texts[0]
        assert texts[1] == "echo:still here"  # later calls of the turn still run
        assert result.tool_response_message.responses[0].name == "explode"

    def test_exception_without_message_names_its_type(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(silent_failure)), calls_response(call("silent_failure"))
        )
        assert "Boom" in results(result)[0]

    def test_raw_callback_exception_becomes_the_tool_result(self) -> None:
        raw = RawCallback("raw", RuntimeError("raw failure"))
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([raw]), calls_response(call("raw"))
        )
        assert "raw failure" in results(result)[0]

    def test_always_throw_raises_tool_execution_error(self) -> None:
        manager = ToolCallingManager(
            exception_processor=DefaultToolExecutionExceptionProcessor(always_throw=True)
        )
        with pytest.raises(ToolExecutionError) as info:
            manager.execute_tool_calls(
                prompt_with(tool_callbacks(explode)),
                calls_response(call("explode", {"message": "disk on fire"})),
            )
        assert info.value.tool_name == "explode"
        assert isinstance(info.value.__cause__, RuntimeError)
        assert "disk on fire" in str(info.value)

    def test_always_throw_raw_callback(self) -> None:
        manager = ToolCallingManager(
            exception_processor=DefaultToolExecutionExceptionProcessor(always_throw=True)
        )
        with pytest.raises(ToolExecutionError) as info:
            manager.execute_tool_calls(
                prompt_with([RawCallback("raw", RuntimeError("nope"))]), calls_response(call("raw"))
            )
        assert info.value.tool_name == "raw"
        assert find_in_chain(info.value, RuntimeError) is not None

    def test_always_throw_does_not_raise_for_invalid_arguments(self) -> None:
        # a model's mistake is never raised, even when tool failures are
        manager = ToolCallingManager(
            exception_processor=DefaultToolExecutionExceptionProcessor(always_throw=True)
        )
        result = manager.execute_tool_calls(
            prompt_with(tool_callbacks(add)), calls_response(call("add", "{not json"))
        )
        assert "json" in results(result)[0].lower()

    def test_rethrow_raises_only_the_listed_types(self) -> None:
        manager = ToolCallingManager(
            exception_processor=DefaultToolExecutionExceptionProcessor(rethrow=(ValueError,))
        )
        tools = tool_callbacks(explode, bad_value)
        ok = manager.execute_tool_calls(
            prompt_with(tools), calls_response(call("explode", {"message": "runtime trouble"}))
        )
        assert "runtime trouble" in results(ok)[0]

        with pytest.raises((ValueError, ToolExecutionError)) as info:
            manager.execute_tool_calls(
                prompt_with(tools), calls_response(call("bad_value", {"message": "bad input"}))
            )
        original = find_in_chain(info.value, ValueError)
        assert original is not None
        assert "bad input" in str(original)

    def test_rethrow_matches_subclasses(self) -> None:
        class Special(ValueError):
            pass

        @tool
        def special() -> str:
            """Raise a ValueError subclass."""
            raise Special("special")

        manager = ToolCallingManager(
            exception_processor=DefaultToolExecutionExceptionProcessor(rethrow=(ValueError,))
        )
        with pytest.raises((ValueError, ToolExecutionError)) as info:
            manager.execute_tool_calls(
                prompt_with(tool_callbacks(special)), calls_response(call("special"))
            )
        assert find_in_chain(info.value, Special) is not None

    def test_custom_exception_processor(self) -> None:
        seen: list[ToolExecutionError] = []

        class Processor:
            def process(self, error: ToolExecutionError) -> str:
                seen.append(error)
                return f"custom: {error.tool_name} failed"

        manager = ToolCallingManager(exception_processor=Processor())
        result = manager.execute_tool_calls(
            prompt_with(tool_callbacks(explode)),
            calls_response(call("explode", {"message": "x"})),
        )
        assert results(result) == ["custom: explode failed"]
        assert isinstance(seen[0], ToolExecutionError)
        assert isinstance(seen[0].cause, RuntimeError)

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
    def test_interrupts_always_propagate(self, kind: type[BaseException]) -> None:
        @tool
        def interrupt() -> str:
            """Stop everything."""
            raise kind()

        with pytest.raises(kind):
            ToolCallingManager().execute_tool_calls(
                prompt_with(tool_callbacks(interrupt, echo)),
                calls_response(call("interrupt"), call("echo", {"text": "x"})),
            )

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
    def test_interrupts_from_raw_callbacks_propagate(self, kind: type[BaseException]) -> None:
        raw = RawCallback("raw", kind())
        with pytest.raises(kind):
            ToolCallingManager().execute_tool_calls(prompt_with([raw]), calls_response(call("raw")))

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
    def test_interrupts_propagate_with_a_lenient_processor(self, kind: type[BaseException]) -> None:
        class Lenient:
            def process(self, error: ToolExecutionError) -> str:
                return "swallowed"

        @tool
        def interrupt() -> str:
            """Stop everything."""
            raise kind()

        with pytest.raises(kind):
            ToolCallingManager(exception_processor=Lenient()).execute_tool_calls(
                prompt_with(tool_callbacks(interrupt)), calls_response(call("interrupt"))
            )


class TestAsyncTools:
    def test_async_tool_runs_and_gets_context(self) -> None:
        @tool
        async def slow_tenant(ctx: ToolContext, n: int) -> str:
            """An async tool."""
            await asyncio.sleep(0)
            return f"{ctx['tenant_id']}:{n}"

        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(slow_tenant), context={"tenant_id": "acme"}),
            calls_response(call("slow_tenant", {"n": 2})),
        )
        assert results(result) == ["acme:2"]

    def test_async_tool_exception_becomes_the_result(self) -> None:
        @tool
        async def failing() -> str:
            """An async tool that fails."""
            await asyncio.sleep(0)
            raise RuntimeError("async trouble")

        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(failing)), calls_response(call("failing"))
        )
        assert "async trouble" in results(result)[0]

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
    def test_async_tool_interrupts_propagate(self, kind: type[BaseException]) -> None:
        @tool
        async def interrupt() -> str:
            """Stop."""
            await asyncio.sleep(0)
            raise kind()

        with pytest.raises(kind):
            ToolCallingManager().execute_tool_calls(
                prompt_with(tool_callbacks(interrupt)), calls_response(call("interrupt"))
            )


class TestSharedManager:
    def test_counts_are_per_execution_not_per_manager(self) -> None:
        # one manager shared by concurrent requests: each request has its own counts
        rec = Recorder()
        tools = [rec.tool("t")]
        manager = manager_with(per_tool=3, total=3)

        def run(_: int) -> dict[str, int]:
            result = manager.execute_tool_calls(prompt_with(tools), calls_response(*repeat("t", 3)))
            return dict(result.call_counts)

        with ThreadPoolExecutor(max_workers=8) as pool:
            counts = list(pool.map(run, range(32)))
        assert counts == [{"t": 3}] * 32
        assert rec.count("t") == 96


class TestModelMistakes:
    def test_malformed_json(self) -> None:
        rec: list[int] = []

        @tool
        def store(value: int) -> str:
            """Store a value."""
            rec.append(value)
            return "stored"

        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(store)), calls_response(call("store", '{"value": 1'))
        )
        text = results(result)[0]
        assert "store" in text
        assert "json" in text.lower()
        assert rec == []

    def test_non_object_json(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(add)), calls_response(call("add", "[1, 2]"))
        )
        assert "object" in results(result)[0].lower()

    def test_wrong_type(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(add)), calls_response(call("add", {"a": "one", "b": 2}))
        )
        text = results(result)[0]
        assert "add" in text
        assert "a" in text
        assert "integer" in text.lower()

    def test_missing_required(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(add)), calls_response(call("add", {"a": 1}))
        )
        text = results(result)[0]
        assert "b" in text
        assert "required" in text.lower()

    def test_hand_written_schema_violation(self) -> None:
        ran: list[Any] = []
        cb = FunctionToolCallback.from_schema(
            ran.append,
            name="set_level",
            description="Set a level",
            input_schema={
                "type": "object",
                "properties": {"level": {"type": "integer", "minimum": 1, "maximum": 5}},
                "required": ["level"],
            },
        )
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([cb]),
            calls_response(call("set_level", {"level": 9}), call("set_level", {})),
        )
        texts = results(result)
        assert "level" in texts[0]
        assert "maximum" in texts[0]
        assert "level" in texts[1]
        assert ran == []

    def test_raw_callback_raising_invalid_arguments(self) -> None:
        raw = RawCallback("raw", InvalidToolArgumentsError("raw", "field 'q' is missing"))
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([raw]), calls_response(call("raw"))
        )
        assert "field 'q' is missing" in results(result)[0]

    def test_empty_arguments_mean_no_arguments(self) -> None:
        rec = Recorder()
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([rec.tool("t")]), calls_response(call("t", ""))
        )
        assert results(result) == ["t:0"]

    def test_unknown_tool_lists_available_tools(self) -> None:
        rec = Recorder()
        tools = [rec.tool("alpha"), rec.tool("beta")]
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tools), calls_response(call("gamma"), call("alpha"))
        )
        text = results(result)[0]
        assert "gamma" in text
        assert "alpha" in text
        assert "beta" in text
        assert results(result)[1] == "alpha:0"
        assert result.tool_response_message.responses[0].name == "gamma"
        assert result.return_direct is False

    def test_unknown_tool_with_no_tools(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([]), calls_response(call("gamma"))
        )
        assert "gamma" in results(result)[0]

    def test_all_mistakes_in_one_turn_never_raise(self) -> None:
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(add, explode)),
            calls_response(
                call("add", "{oops"),
                call("add", {"a": "x", "b": 1}),
                call("nope"),
                call("explode", {"message": "kaboom"}),
                call("add", {"a": 1, "b": 2}),
            ),
        )
        texts = results(result)
        assert len(texts) == 5
        assert texts[-1] == "3"
        assert "kaboom" in texts[3]
        assert "nope" in texts[2]


# ---------------------------------------------------------------------------------------
# return-direct
# ---------------------------------------------------------------------------------------


class TestReturnDirect:
    def test_all_return_direct(self) -> None:
        rec = Recorder()
        tools = [rec.tool("a", return_direct=True), rec.tool("b", return_direct=True)]
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tools), calls_response(call("a"), call("b"))
        )
        assert result.return_direct is True

    def test_single_return_direct(self) -> None:
        rec = Recorder()
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([rec.tool("a", return_direct=True)]), calls_response(call("a"))
        )
        assert result.return_direct is True
        assert result.return_direct_text() == "a:0"

    @pytest.mark.parametrize("order", [("a", "n"), ("n", "a")])
    def test_mixed_turn_is_not_return_direct(self, order: tuple[str, str]) -> None:
        rec = Recorder()
        tools = [rec.tool("a", return_direct=True), rec.tool("n")]
        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tools), calls_response(*(call(name) for name in order))
        )
        assert result.return_direct is False
        assert rec.count("a") == 1
        assert rec.count("n") == 1

    def test_unknown_tool_in_the_turn_is_not_return_direct(self) -> None:
        rec = Recorder()
        result = ToolCallingManager().execute_tool_calls(
            prompt_with([rec.tool("a", return_direct=True)]),
            calls_response(call("a"), call("ghost")),
        )
        assert result.return_direct is False

    def test_refused_call_is_not_return_direct(self) -> None:
        rec = Recorder()
        manager = manager_with(per_tool=1, on_exceed=LimitExceededAction.RETURN_ERROR_RESPONSE)
        result = manager.execute_tool_calls(
            prompt_with([rec.tool("a", return_direct=True)]), calls_response(*repeat("a", 2))
        )
        assert result.return_direct is False

    def test_decorated_return_direct(self) -> None:
        @tool(return_direct=True)
        def lookup(key: str) -> str:
            """Look a key up."""
            return f"value-of-{key}"

        result = ToolCallingManager().execute_tool_calls(
            prompt_with(tool_callbacks(lookup)), calls_response(call("lookup", {"key": "k"}))
        )
        assert result.return_direct is True
        assert result.return_direct_text() == "value-of-k"


# ---------------------------------------------------------------------------------------
# resolution
# ---------------------------------------------------------------------------------------


class TestResolution:
    def test_resolve_tool_definitions_of_the_request(self) -> None:
        options = ChatOptions(tool_callbacks=tool_callbacks(echo, add))
        definitions = ToolCallingManager().resolve_tool_definitions(options)
        assert [d.name for d in definitions] == ["echo", "add"]
        assert all(isinstance(d, ToolDefinition) for d in definitions)
        assert definitions[1].input_schema["required"] == ["a", "b"]

    def test_resolve_no_tools(self) -> None:
        assert ToolCallingManager().resolve_tool_definitions(ChatOptions()) == []

    def test_tool_names_resolve_through_the_resolver(self) -> None:
        resolver = StaticToolCallbackResolver(add, profile)
        manager = ToolCallingManager(resolver=resolver)
        options = ChatOptions(tool_callbacks=tool_callbacks(echo), tool_names=("profile",))
        names = [d.name for d in manager.resolve_tool_definitions(options)]
        assert names == ["echo", "profile"]

    def test_tool_name_already_in_the_request_is_not_duplicated(self) -> None:
        manager = ToolCallingManager(resolver=StaticToolCallbackResolver(echo))
        options = ChatOptions(tool_callbacks=tool_callbacks(echo), tool_names=("echo",))
        assert [d.name for d in manager.resolve_tool_definitions(options)] == ["echo"]

    def test_unknown_tool_names_raise(self) -> None:
        manager = ToolCallingManager(resolver=StaticToolCallbackResolver(add))
        with pytest.raises(ToolDefinitionError) as info:
            manager.resolve_tool_definitions(ChatOptions(tool_names=("missing_tool",)))
        assert "missing_tool" in str(info.value)
        assert info.value.tool_name == "missing_tool"

    def test_tool_names_without_a_resolver_raise(self) -> None:
        with pytest.raises(ToolDefinitionError) as info:
            ToolCallingManager().resolve_tool_definitions(ChatOptions(tool_names=("add",)))
        assert "add" in str(info.value)

    def test_tool_names_are_executed_through_the_resolver(self) -> None:
        manager = ToolCallingManager(resolver=StaticToolCallbackResolver(add))
        result = manager.execute_tool_calls(
            prompt_with([], tool_names=("add",)), calls_response(call("add", {"a": 4, "b": 5}))
        )
        assert results(result) == ["9"]

    def test_fallback_is_off_by_default(self) -> None:
        rec = Recorder()
        hidden = rec.tool("hidden")
        manager = ToolCallingManager(resolver=StaticToolCallbackResolver(hidden))
        assert manager.resolver_fallback is False
        result = manager.execute_tool_calls(
            prompt_with(tool_callbacks(echo)), calls_response(call("hidden"))
        )
        text = results(result)[0]
        assert "hidden" in text
        assert "echo" in text
        assert rec.count("hidden") == 0

    def test_fallback_on(self) -> None:
        rec = Recorder()
        hidden = rec.tool("hidden")
        manager = ToolCallingManager(
            resolver=StaticToolCallbackResolver(hidden), resolver_fallback=True
        )
        result = manager.execute_tool_calls(
            prompt_with(tool_callbacks(echo)), calls_response(call("hidden", {"x": 7}))
        )
        assert results(result) == ["hidden:7"]
        assert rec.count("hidden") == 1

    def test_fallback_on_but_resolver_does_not_know_the_name(self) -> None:
        manager = ToolCallingManager(
            resolver=StaticToolCallbackResolver(add), resolver_fallback=True
        )
        result = manager.execute_tool_calls(
            prompt_with(tool_callbacks(echo)), calls_response(call("ghost"))
        )
        assert "ghost" in results(result)[0]

    def test_request_tools_win_over_the_resolver(self) -> None:
        rec = Recorder()
        other = Recorder()
        manager = ToolCallingManager(
            resolver=StaticToolCallbackResolver(other.tool("t")), resolver_fallback=True
        )
        manager.execute_tool_calls(prompt_with([rec.tool("t")]), calls_response(call("t")))
        assert rec.count("t") == 1
        assert other.count("t") == 0

    def test_unknown_tool_message_lists_tools_offered_by_name(self) -> None:
        # tools the request offers through tool_names exist too; the model should hear of them
        manager = ToolCallingManager(resolver=StaticToolCallbackResolver(add))
        result = manager.execute_tool_calls(
            prompt_with(tool_callbacks(echo), tool_names=("add",)), calls_response(call("ghost"))
        )
        text = results(result)[0]
        assert "ghost" in text
        assert "echo" in text
        assert "add" in text

    def test_delegating_resolver(self) -> None:
        first, second = Recorder(), Recorder()
        resolver = DelegatingToolCallbackResolver(
            [
                StaticToolCallbackResolver(first.tool("shared")),
                StaticToolCallbackResolver(second.tool("shared"), second.tool("only2")),
            ]
        )
        assert resolver.resolve("nothing") is None
        manager = ToolCallingManager(resolver=resolver)
        result = manager.execute_tool_calls(
            prompt_with([], tool_names=("shared", "only2")),
            calls_response(call("shared"), call("only2")),
        )
        assert results(result) == ["shared:0", "only2:0"]
        assert first.count("shared") == 1
        assert second.count("shared") == 0

    def test_static_resolver_accepts_tool_objects(self) -> None:
        class Tools:
            @tool
            def ping(self) -> str:
                """Ping."""
                return "pong"

        resolver = StaticToolCallbackResolver(Tools(), echo)
        assert set(resolver.names) == {"ping", "echo"}
        found = resolver.resolve("ping")
        assert found is not None
        assert found.call("{}") == "pong"
        assert resolver.resolve("nope") is None


def test_hallucinated_tool_names_never_trip_a_limit() -> None:
    rec = Recorder()
    manager = manager_with(per_tool=1, total=1)
    result = manager.execute_tool_calls(
        prompt_with([rec.tool("real")]), calls_response(*repeat("web_search", 5), call("real"))
    )
    texts = results(result)
    assert all("no tool named 'web_search'" in t for t in texts[:5])
    assert rec.count("real") == 1


def test_parallel_calls_without_ids_stay_separate_through_a_scripted_model() -> None:
    from toolsearch.models import FunctionChatModel

    model = FunctionChatModel(
        lambda messages, tools: AssistantMessage(
            tool_calls=[ToolCall(id="", name="a"), ToolCall(id="", name="b")]
        )
    )
    response = model.call(Prompt([UserMessage(content="x")]))
    assert [c.name for c in response.message.tool_calls] == ["a", "b"]
