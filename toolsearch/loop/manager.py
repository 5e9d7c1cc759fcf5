"""``ToolCallingManager``: resolves a request's tools and executes a model's tool calls."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import toolsearch.observe as hooks
from toolsearch._steps import Steps, adrive, drive
from toolsearch.chat.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolsearch.chat.options import ChatOptions
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse
from toolsearch.errors import (
    InvalidToolArgumentsError,
    ToolCallLimitExceededError,
    ToolDefinitionError,
    ToolExecutionError,
)
from toolsearch.loop.exceptions import (
    DefaultToolExecutionExceptionProcessor,
    ToolExecutionExceptionProcessor,
)
from toolsearch.loop.limits import LimitExceededAction, ToolCallLimits
from toolsearch.loop.resolver import ToolCallbackResolver
from toolsearch.tools.callback import ToolCallback
from toolsearch.tools.collect import ensure_unique_names
from toolsearch.tools.context import ToolContext
from toolsearch.tools.definition import ToolDefinition

__all__ = ["ToolCallingManager", "ToolExecutionResult", "calls_since_last_user_message"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolExecutionResult:
    """What executing one turn's tool calls produced.

    ``conversation_history`` is the prompt's messages plus the assistant's tool-call message
    and the tool response message; ``return_direct`` is true when every call of the turn was
    to a return-direct tool; ``call_counts`` counts calls per tool since the last user
    message, this turn included (pass it back as ``prior_call_counts`` next turn).
    """

    conversation_history: Sequence[Message]
    return_direct: bool = False
    call_counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def tool_response_message(self) -> ToolResponseMessage:
        last = self.conversation_history[-1]
        assert isinstance(last, ToolResponseMessage)
        return last

    def return_direct_text(self) -> str:
        """The results of the turn's calls joined by newlines (what return-direct returns)."""
        return "\n".join(r.response_data for r in self.tool_response_message.responses)


def calls_since_last_user_message(messages: Sequence[Message]) -> Counter[str]:
    """Count tool calls per name in the assistant messages after the last user message."""
    counts: Counter[str] = Counter()
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, AssistantMessage):
            counts.update(call.name for call in message.tool_calls)
    return counts


_ToolRun = tuple[ToolCallback, ToolCall, ToolContext]
"""An effect of :meth:`ToolCallingManager._execution`: run this callback on this call."""


@dataclass(frozen=True)
class _Step:
    """One planned call: the tool to run, or the text to answer instead (error, refusal)."""

    call: ToolCall
    callback: ToolCallback | None
    text: str | None
    refused_again: bool = False
    """Refused by a limit, and not for the first time: the model ignored the refusal."""
    over_answer: bool = False
    """Past the answer's ``per_answer`` calls: answered without a lookup."""


class ToolCallingManager:
    """Runs tool calls with limits, argument checks and error handling.

    Tools are looked up in the request's own tool callbacks. With a ``resolver``, the
    names in ``ChatOptions.tool_names`` are resolved through it. ``resolver_fallback=True``
    also lets the model call any tool the resolver knows even if the request did not offer
    it: **risky** (the model can reach tools you did not mean to expose in this request),
    so it is off by default.
    """

    def __init__(
        self,
        *,
        limits: ToolCallLimits | None = None,
        exception_processor: ToolExecutionExceptionProcessor | None = None,
        resolver: ToolCallbackResolver | None = None,
        resolver_fallback: bool = False,
    ) -> None:
        self.limits = limits or ToolCallLimits()
        self.exception_processor = exception_processor or DefaultToolExecutionExceptionProcessor()
        self.resolver = resolver
        self.resolver_fallback = resolver_fallback

    # -- resolution -------------------------------------------------------------------

    def resolve_tool_callbacks(self, options: ChatOptions) -> list[ToolCallback]:
        """The request's tool callbacks followed by its ``tool_names`` resolved."""
        callbacks = list(options.tool_callbacks)
        for name in options.tool_names:
            if any(cb.definition.name == name for cb in callbacks):
                continue
            found = self.resolver.resolve(name) if self.resolver else None
            if found is None:
                raise ToolDefinitionError(
                    name, "is listed in tool_names but no tool resolver knows it"
                )
            callbacks.append(found)
        ensure_unique_names(callbacks)
        return callbacks

    def resolve_tool_definitions(self, options: ChatOptions) -> list[ToolDefinition]:
        """Definitions of every tool the request offers the model."""
        return [cb.definition for cb in self.resolve_tool_callbacks(options)]

    def find_tool(self, name: str, options: ChatOptions) -> ToolCallback | None:
        """The callback a call to ``name`` runs: the request's own first, then the fallback."""
        for callback in options.tool_callbacks:
            if callback.definition.name == name:
                return callback
        if self.resolver is not None and (self.resolver_fallback or name in options.tool_names):
            return self.resolver.resolve(name)
        return None

    # -- execution --------------------------------------------------------------------

    def execute_tool_calls(
        self,
        prompt: Prompt,
        response: ChatResponse,
        *,
        prior_call_counts: Mapping[str, int] | None = None,
    ) -> ToolExecutionResult:
        """Run every tool call of ``response`` and append the results to the conversation.

        Model mistakes (unknown names, bad arguments) and tool failures become error results;
        only limit violations with action THROW and failures the exception processor
        re-raises propagate.
        """
        steps = self._execution(prompt, response, prior_call_counts)
        return drive(steps, lambda run: self.execute_one(*run))

    async def aexecute_tool_calls(
        self,
        prompt: Prompt,
        response: ChatResponse,
        *,
        prior_call_counts: Mapping[str, int] | None = None,
    ) -> ToolExecutionResult:
        """Async twin of :meth:`execute_tool_calls`: tools run through ``ToolCallback.acall``
        on the caller's event loop, one after another in call order."""
        steps = self._execution(prompt, response, prior_call_counts)
        return await adrive(steps, lambda run: self.aexecute_one(*run))

    def _execution(
        self,
        prompt: Prompt,
        response: ChatResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> Steps[_ToolRun, ToolExecutionResult]:
        """One turn's execution, written once (:mod:`toolsearch._steps`): yields each call
        to run, in call order, and is sent its result text."""
        plan, counts = self._plan(prompt, response, prior_call_counts)
        context = ToolContext(prompt.options.tool_context)
        texts = []
        for step in plan:
            if step.text is not None:
                texts.append(step.text)
            else:
                assert step.callback is not None
                texts.append((yield step.callback, step.call, context))
        return self._result(prompt, response, plan, texts, counts)

    def _plan(
        self,
        prompt: Prompt,
        response: ChatResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> tuple[list[_Step], Counter[str]]:
        """Look every call up and apply the limits before anything runs.

        Unknown names are answered with an error and never count towards a limit: a model's
        hallucinated tool must not end the loop.
        """
        if not response.message.tool_calls:
            raise ValueError("the response has no tool calls to execute")
        options = prompt.options
        if prior_call_counts is not None:
            counts: Counter[str] = Counter(prior_call_counts)
        else:
            counts = Counter(
                {
                    name: n
                    for name, n in calls_since_last_user_message(prompt.messages).items()
                    if self.find_tool(name, options) is not None
                }
            )
        plan = []
        calls = response.message.tool_calls
        cap = self.limits.per_answer
        if cap is not None and len(calls) > cap:
            _log.warning(
                "the model's answer has %d tool calls; only the first %d are run "
                "(ToolCallLimits.per_answer), the rest are answered with an error",
                len(calls),
                cap,
            )
            calls, over = calls[:cap], calls[cap:]
        else:
            over = ()
        found: dict[str, ToolCallback | None] = {}
        for call in calls:
            if call.name not in found:  # one lookup per name, not per call
                found[call.name] = self.find_tool(call.name, options)
            callback = found[call.name]
            if callback is None:
                _log.debug("the model called %r, which the request does not offer", call.name)
                plan.append(_Step(call, None, self.unknown_tool_message(call.name, options)))
                continue
            counts[call.name] += 1
            refusal, again = self._check_limits(call.name, counts)
            plan.append(_Step(call, callback, refusal, again))
        if over:
            text = self.too_many_calls_message(len(response.message.tool_calls), cap or 0)
            plan.extend(_Step(call, None, text, over_answer=True) for call in over)
        return plan, counts

    def _result(
        self,
        prompt: Prompt,
        response: ChatResponse,
        plan: list[_Step],
        texts: list[str],
        counts: Counter[str],
    ) -> ToolExecutionResult:
        responses = tuple(
            ToolResponse.of(id=step.call.id, name=step.call.name, result=text)
            for step, text in zip(plan, texts, strict=True)
        )
        return_direct = all(
            step.callback is not None and step.text is None and step.callback.metadata.return_direct
            for step in plan
        )
        # a model that keeps calling after a refusal would loop for ever: the second time
        # every call of a turn is refused, the loop ends with the refusal as its answer
        return_direct = return_direct or all(
            step.refused_again for step in plan if not step.over_answer
        )
        history = [*prompt.messages, response.message, ToolResponseMessage(responses=responses)]
        return ToolExecutionResult(history, return_direct, dict(counts))

    def execute_one(self, callback: ToolCallback, call: ToolCall, context: ToolContext) -> str:
        """Run one call; argument errors and tool failures become result text.

        Callbacks raise on failure (the ``ToolCallback`` contract, :mod:`toolsearch.errors`):
        :class:`~toolsearch.errors.InvalidToolArgumentsError` becomes
        :meth:`invalid_arguments_message`; a :class:`~toolsearch.errors.ToolExecutionError`
        (its :class:`~toolsearch.errors.ToolTransportError` subclass included) goes to the
        exception processor, which returns the text or raises; any other exception from a
        callback outside the contract is wrapped in a ``ToolExecutionError`` first.

        Each call runs under the observer's tool hook (:func:`toolsearch.observe.tool_span`;
        with telemetry, an ``execute_tool {name}`` span): a failure marks it, and an
        exception the processor re-raises leaves through it.
        """
        return drive(self._one(callback, call), lambda c: c.call(call.arguments, context))

    async def aexecute_one(
        self, callback: ToolCallback, call: ToolCall, context: ToolContext
    ) -> str:
        """Async twin of :meth:`execute_one`."""
        return await adrive(self._one(callback, call), lambda c: c.acall(call.arguments, context))

    def _one(self, callback: ToolCallback, call: ToolCall) -> Steps[ToolCallback, str]:
        """One call under its span, written once: yields the callback to run (sync or
        async), is sent its result or has its failure thrown in."""
        with hooks.tool_span(callback, call) as span:
            _log.debug("executing tool %r (call %s)", call.name, call.id)
            try:
                result: str = yield callback
            except Exception as exc:
                span.failed(exc)
                return self._failure_text(callback, call, exc)
            span.result(result)
            return result

    def _failure_text(self, callback: ToolCallback, call: ToolCall, exc: Exception) -> str:
        if isinstance(exc, InvalidToolArgumentsError):
            _log.debug("tool %r: the model's arguments do not fit its schema", call.name)
            return self.invalid_arguments_message(callback, exc)
        if not isinstance(exc, ToolExecutionError):  # a third-party callback raised directly
            exc = ToolExecutionError(call.name, exc)
        cause = getattr(exc, "cause", None) or exc
        _log.warning("tool %r failed (%s)", call.name, type(cause).__name__)
        return self.exception_processor.process(exc)

    def _check_limits(self, name: str, counts: Counter[str]) -> tuple[str | None, bool]:
        """The refusal text of a call over a limit (``None`` when within), and whether the
        model was already refused for this limit in this turn."""
        limits = self.limits
        per_tool = limits.limit_for(name)
        error: ToolCallLimitExceededError | None = None
        over = 0
        if per_tool is not None and counts[name] > per_tool:
            error = ToolCallLimitExceededError(name, per_tool)
            over = counts[name] - per_tool
        elif limits.total is not None and name not in limits.excluded_tools:
            total = sum(n for tool, n in counts.items() if tool not in limits.excluded_tools)
            if total > limits.total:
                error = ToolCallLimitExceededError(name, limits.total, total=True)
                over = total - limits.total
        if error is None:
            return None, False
        _log.warning("tool call refused: %s (action %s)", error, limits.on_exceed.name)
        if limits.on_exceed is LimitExceededAction.THROW:
            raise error
        if over > 1:
            return f"Error: {error}. The calls were not executed, and the loop stopped.", True
        return f"Error: {error}. The call was not executed; answer with what you have.", False

    # -- messages the model reads (override to change the wording) ---------------------

    def unknown_tool_message(self, name: str, options: ChatOptions) -> str:
        names = [cb.definition.name for cb in options.tool_callbacks]
        names += [n for n in options.tool_names if n not in names]
        available = ", ".join(names) or "none"
        return f"Error: there is no tool named {name!r}. Available tools: {available}."

    def too_many_calls_message(self, count: int, limit: int) -> str:
        """The result of each call past an answer's ``per_answer`` calls (one text, shared)."""
        return (
            f"Error: your answer had {count} tool calls; only the first {limit} were "
            "considered (ToolCallLimits.per_answer). This call was not executed: make "
            "fewer calls per answer."
        )

    def invalid_arguments_message(
        self, callback: ToolCallback, error: InvalidToolArgumentsError
    ) -> str:
        return f"Error: {error}. Fix the arguments to match the tool's input schema and retry."
