"""The advisor chain and ``ToolCallingAdvisor``: order, the single tool advisor, auto
registration, the loop hooks, eligibility, and conversation history."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from toolsearch import (
    AdvisorChainError,
    AssistantMessage,
    ChatClient,
    ChatOptions,
    ChatResponse,
    SystemMessage,
    ToolCall,
    ToolCallingAdvisor,
    ToolDefinition,
    ToolResponseMessage,
    UserMessage,
    tool,
)
from toolsearch.loop import (
    TOOL_CALLING_ADVISOR_ORDER,
    BaseAdvisor,
    ChatClientRequest,
    ChatClientResponse,
    ToolExecutionResult,
)
from toolsearch.loop.advisor import AdvisorChain
from toolsearch.models import FunctionChatModel

# -- helpers ---------------------------------------------------------------------------

executed: list[str] = []


@tool
def step(n: int) -> str:
    """Record a step."""
    executed.append(f"step:{n}")
    return f"step {n} done"


@tool
def other(text: str = "") -> str:
    """Another tool."""
    executed.append("other")
    return "other done"


@pytest.fixture(autouse=True)
def _reset_executed() -> None:
    executed.clear()


def _names(tools: list[ToolDefinition]) -> list[str]:
    return [t.name for t in tools]


def loop_model(rounds: int = 1, tool_name: str = "step") -> FunctionChatModel:
    """Calls ``tool_name`` once per request for ``rounds`` requests, then answers."""

    def script(messages: list, tools: list) -> AssistantMessage:
        # the id of the latest tool result says how many tool turns are done; this works
        # whether or not the loop resends the whole history
        ids = [
            int(r.id[1:])
            for m in messages
            if isinstance(m, ToolResponseMessage)
            for r in m.responses
        ]
        done = max(ids, default=0)
        if done < rounds:
            return AssistantMessage(
                tool_calls=[
                    ToolCall(
                        id=f"c{done + 1}",
                        name=tool_name,
                        arguments=json.dumps({"n": done + 1} if tool_name == "step" else {}),
                    )
                ]
            )
        return AssistantMessage(content=f"finished after {done} tool turns")

    return FunctionChatModel(script)


class Recorder(BaseAdvisor):
    """Logs ``before``/``after`` with its name into a shared list."""

    def __init__(self, log: list[str], *, name: str, order: int) -> None:
        super().__init__(order=order, name=name)
        self.log = log
        self.contexts: list[dict[str, Any]] = []

    def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        self.log.append(f"before:{self.name}")
        self.contexts.append(dict(request.context))
        return request

    def after(self, response: ChatClientResponse, chain: AdvisorChain) -> ChatClientResponse:
        self.log.append(f"after:{self.name}")
        return response


# -- order -----------------------------------------------------------------------------


def test_lower_order_runs_outer() -> None:
    log: list[str] = []
    client = (
        ChatClient.builder(FunctionChatModel(lambda m, t: "ok"))
        .default_advisors(Recorder(log, name="inner", order=50))
        .build()
    )
    client.prompt("hi").advisors(
        Recorder(log, name="outer", order=5), Recorder(log, name="middle", order=20)
    ).call().content()
    assert log == [
        "before:outer",
        "before:middle",
        "before:inner",
        "after:inner",
        "after:middle",
        "after:outer",
    ]


def test_equal_orders_keep_registration_order() -> None:
    log: list[str] = []
    client = (
        ChatClient.builder(FunctionChatModel(lambda m, t: "ok"))
        .default_advisors(Recorder(log, name="d1", order=10), Recorder(log, name="d2", order=10))
        .build()
    )
    client.prompt("hi").advisors(
        Recorder(log, name="c1", order=10), Recorder(log, name="c2", order=10)
    ).call().content()
    assert [e for e in log if e.startswith("before")] == [
        "before:d1",
        "before:d2",
        "before:c1",
        "before:c2",
    ]
    assert [e for e in log if e.startswith("after")] == [
        "after:c2",
        "after:c1",
        "after:d2",
        "after:d1",
    ]


def test_before_can_change_the_request_and_after_the_response() -> None:
    class Shout(BaseAdvisor):
        def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
            messages = [
                m.model_copy(update={"content": m.content.upper()})
                if isinstance(m, UserMessage)
                else m
                for m in request.prompt.messages
            ]
            return request.with_prompt(request.prompt.with_messages(messages))

        def after(self, response: ChatClientResponse, chain: AdvisorChain) -> ChatClientResponse:
            assert response.chat_response is not None
            message = AssistantMessage(content=response.chat_response.text + "!")
            return response.with_chat_response(ChatResponse(message, "stop"))

    model = FunctionChatModel(lambda m, t: f"got {m[-1].content}")
    text = ChatClient.create(model).prompt("hi").advisors(Shout()).call().content()
    assert text == "got HI!"


def test_advisors_outside_the_loop_run_once_inside_run_per_iteration() -> None:
    log: list[str] = []
    outer = Recorder(log, name="outer", order=TOOL_CALLING_ADVISOR_ORDER - 100)
    inner = Recorder(log, name="inner", order=TOOL_CALLING_ADVISOR_ORDER + 100)
    ChatClient.create(loop_model(rounds=2)).prompt("go").tools(step).advisors(
        outer, inner
    ).call().content()
    assert log.count("before:outer") == 1
    assert log.count("after:outer") == 1
    assert log.count("before:inner") == 3
    assert log.count("after:inner") == 3


# -- exactly one tool advisor ----------------------------------------------------------


def test_client_auto_adds_tool_calling_advisor_at_order_300() -> None:
    assert TOOL_CALLING_ADVISOR_ORDER == 300
    assert ToolCallingAdvisor().order == 300
    seen: list[tuple[str, int]] = []

    class ChainSpy(BaseAdvisor):
        def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
            seen.extend((type(a).__name__, a.order) for a in chain.advisors)
            return request

    client = ChatClient.create(loop_model(rounds=1))
    text = client.prompt("go").tools(step).advisors(ChainSpy(order=1)).call().content()
    assert text == "finished after 1 tool turns"
    assert executed == ["step:1"]
    tool_advisors = [entry for entry in seen if entry[0] == "ToolCallingAdvisor"]
    assert tool_advisors == [("ToolCallingAdvisor", 300)]


def test_client_does_not_add_a_second_tool_advisor() -> None:
    calls: list[str] = []

    class CountingToolAdvisor(ToolCallingAdvisor):
        def do_initialize_loop(
            self, request: ChatClientRequest, chain: AdvisorChain
        ) -> ChatClientRequest:
            calls.append("init")
            return request

    seen: list[str] = []

    class ChainSpy(BaseAdvisor):
        def before(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
            seen.extend(type(a).__name__ for a in chain.advisors)
            return request

    ChatClient.create(loop_model()).prompt("go").tools(step).advisors(
        CountingToolAdvisor(), ChainSpy(order=0)
    ).call().content()
    assert calls == ["init"]
    assert seen.count("CountingToolAdvisor") == 1
    assert "ToolCallingAdvisor" not in seen
    assert executed == ["step:1"]


def test_any_advisor_flagged_handles_tool_execution_counts_as_tool_advisor() -> None:
    class ManualLoop:
        handles_tool_execution: ClassVar[bool] = True
        name = "ManualLoop"
        order = 300

        def advise_call(self, request: ChatClientRequest, chain: AdvisorChain):
            return chain.next_call(request)

    response = (
        ChatClient.create(loop_model())
        .prompt("go")
        .tools(step)
        .advisors(ManualLoop())
        .call()
        .chat_response()
    )
    assert response is not None
    assert response.has_tool_calls
    assert executed == []


def test_two_tool_advisors_fail_when_the_request_runs() -> None:
    client = ChatClient.builder(loop_model()).default_advisors(ToolCallingAdvisor()).build()
    spec = client.prompt("go").tools(step).advisors(ToolCallingAdvisor(name="second"))
    with pytest.raises(AdvisorChainError):
        spec.call().content()
    assert executed == []


def test_two_tool_advisors_fail_under_stream() -> None:
    spec = (
        ChatClient.create(loop_model())
        .prompt("go")
        .advisors(ToolCallingAdvisor(), ToolCallingAdvisor())
    )
    with pytest.raises(AdvisorChainError):
        list(spec.stream().content())


def test_auto_tool_calling_off_globally_sends_tools_but_does_not_execute() -> None:
    model = loop_model()
    client = ChatClient.builder(model).default_tools(step).auto_tool_calling(False).build()
    response = client.prompt("go").call().chat_response()
    assert executed == []
    assert len(model.requests) == 1
    assert [cb.definition.name for cb in model.requests[0].options.tool_callbacks] == ["step"]
    assert response is not None
    assert response.message.tool_calls == (ToolCall(id="c1", name="step", arguments='{"n": 1}'),)
    assert response.finish_reason == "tool_calls"
    assert client.prompt("go").call().content() is None


def test_auto_tool_calling_off_per_call() -> None:
    model = loop_model()
    client = ChatClient.builder(model).default_tools(step).build()
    response = client.prompt("go").auto_tool_calling(False).call().chat_response()
    assert response is not None
    assert response.has_tool_calls
    assert executed == []
    # other calls still run the loop
    assert client.prompt("go").call().content() == "finished after 1 tool turns"
    assert executed == ["step:1"]


def test_auto_tool_calling_off_globally_can_be_turned_on_per_call() -> None:
    client = ChatClient.builder(loop_model()).auto_tool_calling(False).build()
    text = client.prompt("go").tools(step).auto_tool_calling(True).call().content()
    assert text == "finished after 1 tool turns"


def test_auto_tool_calling_off_stream_carries_tool_calls() -> None:
    client = ChatClient.builder(loop_model()).auto_tool_calling(False).build()
    chunks = list(client.prompt("go").tools(step).stream().chat_responses())
    assert any(c.message.tool_calls for c in chunks)
    assert executed == []


# -- ToolCallingAdvisor hooks ----------------------------------------------------------


class HookRecorder(ToolCallingAdvisor):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log: list[str] = []

    def do_initialize_loop(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientRequest:
        self.log.append("initialize")
        return super().do_initialize_loop(request, chain)

    def do_before_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        self.log.append("before")
        return super().do_before_call(request, chain)

    def do_after_call(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        self.log.append("after")
        return super().do_after_call(response, chain)

    def do_get_next_instructions_for_tool_call(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        result: ToolExecutionResult,
    ) -> list:
        self.log.append("next")
        return super().do_get_next_instructions_for_tool_call(request, response, result)

    def do_finalize_loop(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        self.log.append("finalize")
        return super().do_finalize_loop(response, chain)


def test_hooks_run_in_order_for_a_two_iteration_loop() -> None:
    advisor = HookRecorder()
    text = (
        ChatClient.create(loop_model(rounds=1))
        .prompt("go")
        .tools(step)
        .advisors(advisor)
        .call()
        .content()
    )
    assert text == "finished after 1 tool turns"
    assert advisor.log == ["initialize", "before", "after", "next", "before", "after", "finalize"]


def test_hooks_counts_for_three_iterations() -> None:
    advisor = HookRecorder()
    ChatClient.create(loop_model(rounds=2)).prompt("go").tools(step).advisors(
        advisor
    ).call().content()
    assert advisor.log.count("initialize") == 1
    assert advisor.log.count("before") == 3
    assert advisor.log.count("after") == 3
    assert advisor.log.count("next") == 2
    assert advisor.log.count("finalize") == 1
    assert executed == ["step:1", "step:2"]


def test_finalize_hook_can_change_the_final_response() -> None:
    class Finalizer(ToolCallingAdvisor):
        def do_finalize_loop(
            self, response: ChatClientResponse, chain: AdvisorChain
        ) -> ChatClientResponse:
            assert response.chat_response is not None
            text = response.chat_response.text + " [final]"
            return response.with_chat_response(ChatResponse(AssistantMessage(content=text)))

    text = (
        ChatClient.create(loop_model())
        .prompt("go")
        .tools(step)
        .advisors(Finalizer())
        .call()
        .content()
    )
    assert text == "finished after 1 tool turns [final]"


def test_before_call_hook_changes_visible_tools() -> None:
    seen: list[list[str]] = []

    def script(messages: list, tools: list) -> AssistantMessage:
        seen.append(_names(tools))
        if not any(isinstance(m, ToolResponseMessage) for m in messages):
            return AssistantMessage(tool_calls=[ToolCall(id="1", name="other", arguments="{}")])
        return AssistantMessage(content="done")

    class SwapTools(ToolCallingAdvisor):
        def do_before_call(
            self, request: ChatClientRequest, chain: AdvisorChain
        ) -> ChatClientRequest:
            options = request.prompt.options.replace(tool_callbacks=[*tool_list(other)])
            return request.with_prompt(request.prompt.with_options(options))

    from toolsearch import tool_callbacks as tool_list

    text = (
        ChatClient.create(FunctionChatModel(script))
        .prompt("go")
        .tools(step)
        .advisors(SwapTools())
        .call()
        .content()
    )
    assert text == "done"
    assert seen == [["other"], ["other"]]
    # the swapped-in tool was also the one executed
    assert executed == ["other"]


def test_initialize_hook_can_add_a_system_message() -> None:
    class Augment(ToolCallingAdvisor):
        def do_initialize_loop(
            self, request: ChatClientRequest, chain: AdvisorChain
        ) -> ChatClientRequest:
            return request.with_prompt(request.prompt.augment_system_message("Use tools."))

    model = loop_model()
    ChatClient.create(model).prompt("go").tools(step).advisors(Augment()).call().content()
    assert all(p.messages[0] == SystemMessage(content="Use tools.") for p in model.requests)


def test_replaceable_eligibility_checker_never_executes() -> None:
    class Never:
        def is_tool_execution_required(self, options: ChatOptions, response: ChatResponse) -> bool:
            return False

    model = loop_model()
    response = (
        ChatClient.create(model)
        .prompt("go")
        .tools(step)
        .advisors(ToolCallingAdvisor(eligibility_checker=Never()))
        .call()
        .chat_response()
    )
    assert executed == []
    assert len(model.requests) == 1
    assert response is not None
    assert response.message.tool_calls[0].name == "step"


def test_internal_tool_execution_disabled_in_options_returns_tool_calls() -> None:
    response = (
        ChatClient.create(loop_model())
        .prompt("go")
        .tools(step)
        .options(ChatOptions(internal_tool_execution_enabled=False))
        .call()
        .chat_response()
    )
    assert response is not None
    assert response.has_tool_calls
    assert executed == []


def test_max_iterations_stops_a_runaway_loop() -> None:
    from toolsearch import ToolLoopLimitError

    spec = (
        ChatClient.create(loop_model(rounds=10))
        .prompt("go")
        .tools(step)
        .advisors(ToolCallingAdvisor(max_iterations=2))
    )
    with pytest.raises(ToolLoopLimitError):
        spec.call().content()


# -- conversation history --------------------------------------------------------------


def test_history_enabled_resends_whole_conversation() -> None:
    model = loop_model(rounds=2)
    ChatClient.create(model).prompt("go").system("sys").tools(step).call().content()
    last = model.requests[-1].messages
    assert [m.role for m in last] == ["system", "user", "assistant", "tool", "assistant", "tool"]


def test_history_disabled_sends_system_and_last_tool_response() -> None:
    model = loop_model(rounds=2)
    ChatClient.create(model).prompt("go").system("sys").tools(step).advisors(
        ToolCallingAdvisor(conversation_history_enabled=False)
    ).call().content()
    assert len(model.requests) == 3
    assert [m.role for m in model.requests[0].messages] == ["system", "user"]
    for later in model.requests[1:]:
        assert [m.role for m in later.messages] == ["system", "tool"]
        assert later.messages[0] == SystemMessage(content="sys")
    assert model.requests[1].messages[1].responses[0].response_data == "step 1 done"
    assert model.requests[2].messages[1].responses[0].response_data == "step 2 done"


class FakeMemory:
    """Looks like a memory advisor; records the messages each iteration carries."""

    is_chat_memory_advisor: ClassVar[bool] = True

    def __init__(self, order: int) -> None:
        self.order = order
        self.name = "FakeMemory"
        self.seen: list[list[str]] = []

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        self.seen.append([m.role for m in request.prompt.messages])
        return chain.next_call(request)


def test_memory_advisor_inside_loop_disables_history() -> None:
    memory = FakeMemory(order=TOOL_CALLING_ADVISOR_ORDER + 100)
    model = loop_model(rounds=2)
    ChatClient.create(model).prompt("go").system("sys").tools(step).advisors(
        memory
    ).call().content()
    assert memory.seen == [["system", "user"], ["system", "tool"], ["system", "tool"]]


def test_memory_advisor_outside_loop_keeps_history() -> None:
    memory = FakeMemory(order=TOOL_CALLING_ADVISOR_ORDER - 100)
    model = loop_model(rounds=1)
    ChatClient.create(model).prompt("go").system("sys").tools(step).advisors(
        memory
    ).call().content()
    assert memory.seen == [["system", "user"]]
    assert [m.role for m in model.requests[-1].messages] == ["system", "user", "assistant", "tool"]


def test_real_memory_advisor_inside_loop_disables_history() -> None:
    from toolsearch import MessageChatMemoryAdvisor, MessageWindowChatMemory

    seen: list[list[str]] = []

    def script(messages: list, tools: list) -> AssistantMessage:
        seen.append([m.role for m in messages])
        if not any(isinstance(m, ToolResponseMessage) for m in messages):
            return AssistantMessage(tool_calls=[ToolCall(id="1", name="step", arguments='{"n":1}')])
        return AssistantMessage(content="done")

    memory = MessageChatMemoryAdvisor(
        MessageWindowChatMemory(), order=TOOL_CALLING_ADVISOR_ORDER + 100
    )
    text = (
        ChatClient.create(FunctionChatModel(script))
        .prompt("go")
        .tools(step)
        .advisors(memory)
        .call()
        .content()
    )
    assert text == "done"
    # the memory re-adds the history, so the tool loop must not duplicate it
    assert seen[-1] == ["user", "assistant", "tool"]


# -- return direct ---------------------------------------------------------------------


def test_return_direct_ends_the_loop_with_the_tool_result() -> None:
    @tool(return_direct=True)
    def direct(n: int) -> str:
        """Direct."""
        return f"direct {n}"

    model = FunctionChatModel(
        lambda m, t: AssistantMessage(
            tool_calls=[ToolCall(id="1", name="direct", arguments='{"n": 7}')]
        )
    )
    text = ChatClient.create(model).prompt("go").tools(direct).call().content()
    assert text == "direct 7"
    assert len(model.requests) == 1


def test_user_message_passes_through_unchanged() -> None:
    model = loop_model()
    ChatClient.create(model).prompt("go").tools(step).call().content()
    assert model.requests[0].messages == (UserMessage(content="go"),)
