"""One turn of tool calls in the tool-search advisor: its loop state, which calls the
manager runs and which the advisor answers itself, and the turn written once for the
blocking and the awaiting loop (:func:`turn_steps`, a :mod:`toolsearch._steps` core).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from toolsearch._steps import Steps
from toolsearch.chat.messages import ToolCall, ToolResponse, ToolResponseMessage
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.loop.advisor import ChatClientRequest, ChatClientResponse
from toolsearch.loop.manager import ToolCallingManager, ToolExecutionResult
from toolsearch.search.builtin_tools.call_tool import CallTool
from toolsearch.search.builtin_tools.search_tool import ToolSearchTool
from toolsearch.search.outcomes import TurnOutcomes
from toolsearch.search.run import SearchRun
from toolsearch.search.working_set import ChangeTracker
from toolsearch.tools.callback import ToolCallback

__all__ = ["STATE_KEY", "SearchLoop", "TurnPlan", "merge_turn", "plan_turn", "turn_steps"]

STATE_KEY = "toolsearch.tool_search.loop"
"""Request-context key holding the :class:`SearchLoop` of the running loop."""

Delegated = tuple[Prompt, ChatResponse]
"""The effect of :func:`turn_steps`: run these calls through the tool-calling manager."""


@dataclass
class SearchLoop:
    """Tool-search state of one run of the loop: its callbacks beside the core's run."""

    run: SearchRun
    registered: dict[str, ToolCallback]
    search_tool: ToolSearchTool | None = None
    call_tool: CallTool | None = None
    native: bool = False
    """``search="native"`` on a model with a tool search of its own: every tool deferred."""
    load_all: bool = False
    """The working set holds every tool: the plain loop's requests, no search tool."""
    changes: ChangeTracker = field(default_factory=ChangeTracker)
    """The session's additions and removals (one list per conversation, kept by the
    sessions core), for the requests' ``tool_changes``."""
    earlier: bool = False
    """Whether the session's model had requests before this run (earlier turns)."""


@dataclass(frozen=True)
class TurnPlan:
    """Which calls of a turn the manager runs, and what the advisor answers itself; with a
    search log, the called names and whether each succeeded (reported once they ran)."""

    delegated: list[int]
    answers: dict[int, str]
    called: list[str] = field(default_factory=list)
    outcomes: TurnOutcomes | None = None

    def report(self, run: SearchRun) -> None:
        """The turn's calls with their outcomes, to the search log (after they ran)."""
        if self.outcomes is not None and self.called:
            ok = [self.outcomes.succeeded(run.real(name)) for name in self.called]
            run.record_outcomes(self.called, ok, self.outcomes.started)


def plan_turn(
    loop: SearchLoop,
    request: ChatClientRequest,
    response: ChatClientResponse,
    *,
    manager: ToolCallingManager,
    call_tool_name: str,
    log_outcomes: bool,
) -> tuple[TurnPlan, Prompt, ChatResponse | None]:
    """Split one turn's calls: the ones the manager runs (a call of the call tool as a call
    of its tool, with the prompt whose callbacks it runs them through, and the response
    holding only those calls; ``None`` when there are none) and the ones answered here
    (the per-answer cap, undiscovered and unknown tools)."""
    assert response.chat_response is not None
    assert loop.search_tool is not None
    run = loop.run
    message = response.chat_response.message
    visible = [cb.definition.name for cb in request.prompt.options.tool_callbacks]
    if loop.call_tool is not None:  # every discovered tool is callable through it
        visible += run.loaded()
    delegated: list[int] = []
    answers: dict[int, str] = {}
    through: dict[int, ToolCall] = {}  # calls of the call tool, as calls of their tool
    cap = manager.limits.per_answer  # issue 47: before any lookup
    for i, call in enumerate(message.tool_calls):
        if cap is not None and i >= cap:
            answers[i] = manager.too_many_calls_message(len(message.tool_calls), cap)
            continue
        if loop.call_tool is not None and run.real(call.name) == call_tool_name:
            decision, arguments = run.unwrap_call(call.arguments)
            if decision.allowed:
                through[i] = call.model_copy(update={"name": decision.name, "arguments": arguments})
        else:
            decision = run.check_call(call.name, visible=visible)
        if decision.allowed:
            delegated.append(i)
        else:
            answers[i] = decision.message or ""
    calls = [through.get(i, message.tool_calls[i]) for i in delegated]
    called = [call.name for call in calls]
    # with a search log, the calls are logged once they ran, each with its outcome
    outcomes = TurnOutcomes() if log_outcomes else None
    run.record_calls(called, defer_log=outcomes is not None)
    run.begin_turn(searching=any(call.name == run.sessions.search_tool_name for call in calls))
    callbacks = list(loop.registered.values())
    if outcomes is not None:  # only the tools this turn calls need watching
        watched = {run.real(name) for name in called}
        callbacks = [
            outcomes.watch(cb) if cb.definition.name in watched else cb for cb in callbacks
        ]
    options = request.prompt.options.replace(tool_callbacks=[loop.search_tool, *callbacks])
    prompt = request.prompt.with_options(options)
    plan = TurnPlan(delegated, answers, called, outcomes)
    if not delegated:
        return plan, prompt, None
    subset = ChatResponse(
        message.model_copy(update={"tool_calls": tuple(calls)}),
        response.chat_response.finish_reason,
        response.chat_response.usage,
        response.chat_response.metadata,
    )
    return plan, prompt, subset


def merge_turn(
    loop: SearchLoop,
    request: ChatClientRequest,
    response: ChatClientResponse,
    plan: TurnPlan,
    result: ToolExecutionResult | None,
    prior_call_counts: Mapping[str, int] | None,
) -> ToolExecutionResult:
    """The turn's result: the answers given here and the manager's, in call order."""
    loop.run.end_turn()
    assert response.chat_response is not None
    message = response.chat_response.message
    executed = iter(result.tool_response_message.responses if result else ())
    responses = []
    for i, call in enumerate(message.tool_calls):
        if i in plan.answers:
            responses.append(
                ToolResponse(id=call.id, name=call.name, response_data=plan.answers[i])
            )
        else:  # a call of the call tool keeps its own name in the history
            executed_response = next(executed)
            if executed_response.name != call.name:
                executed_response = executed_response.model_copy(update={"name": call.name})
            responses.append(executed_response)
    history = [
        *request.prompt.messages,
        message,
        ToolResponseMessage(responses=tuple(responses)),
    ]
    return ToolExecutionResult(
        history,
        return_direct=bool(result and result.return_direct and not plan.answers),
        call_counts=dict(result.call_counts if result else (prior_call_counts or {})),
    )


def turn_steps(
    request: ChatClientRequest,
    response: ChatClientResponse,
    prior_call_counts: Mapping[str, int] | None,
    *,
    manager: ToolCallingManager,
    call_tool_name: str,
    log_outcomes: bool,
) -> Steps[Delegated, ToolExecutionResult]:
    """One turn, for both loops: yields the calls the manager runs (the advisor's sync face
    runs them with ``execute_tool_calls``, its async face awaits ``aexecute_tool_calls``),
    is sent their result, and returns the whole turn's."""
    loop: SearchLoop = request.context[STATE_KEY]
    assert response.chat_response is not None
    if loop.search_tool is None:  # the plain loop's turn
        result: ToolExecutionResult = yield request.prompt, response.chat_response
        return result
    plan, prompt, delegated = plan_turn(
        loop,
        request,
        response,
        manager=manager,
        call_tool_name=call_tool_name,
        log_outcomes=log_outcomes,
    )
    try:
        executed = (yield prompt, delegated) if delegated is not None else None
    finally:
        plan.report(loop.run)
    return merge_turn(loop, request, response, plan, executed, prior_call_counts)
