"""``ToolCallingAdvisor``: the call-model / execute-tools loop, with hooks for subclasses."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from toolsearch._steps import Steps, adrive, drive
from toolsearch.chat.messages import AssistantMessage, Message, SystemMessage
from toolsearch.chat.prompt import Prompt
from toolsearch.chat.response import ChatResponse, ChatResponseAggregator, FinishReason, Usage
from toolsearch.errors import ToolLoopLimitError
from toolsearch.loop.advisor import (
    TOOL_CALLING_ADVISOR_ORDER,
    AdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    is_chat_memory_advisor,
)
from toolsearch.loop.eligibility import (
    DefaultToolExecutionEligibilityChecker,
    ToolExecutionEligibilityChecker,
)
from toolsearch.loop.manager import ToolCallingManager, ToolExecutionResult

__all__ = [
    "CALLS_WITHOUT_USAGE_KEY",
    "HISTORY_ENABLED_KEY",
    "LOOP_USAGE_KEY",
    "MODEL_CALLS_KEY",
    "ToolCallingAdvisor",
]

_log = logging.getLogger(__name__)

HISTORY_ENABLED_KEY = "toolsearch.tool_loop.conversation_history_enabled"
"""Request-context key holding whether this loop resends the whole history each iteration."""
LOOP_USAGE_KEY = "loop_usage"
"""Final ``ChatResponse.metadata`` key: the summed ``Usage`` of every model call of the loop
that reported one (``ChatResponse.usage`` itself is the last call's)."""
CALLS_WITHOUT_USAGE_KEY = "calls_without_usage"
"""Final ``ChatResponse.metadata`` key: how many of the loop's model calls reported no usage
(``usage=None``), so ``loop_usage`` is known to be a lower bound when it is above 0."""
MODEL_CALLS_KEY = "model_calls"
"""Final ``ChatResponse.metadata`` key: how many times the loop called the model."""


class ToolCallingAdvisor:
    """Runs the tool loop: call the model, execute its tool calls, call it again, until it
    answers without tool calls (or every call of a turn is return-direct).

    Each iteration calls the rest of the chain (advisors inside the loop, then the model).
    Subclasses customize the loop through the ``do_*`` hooks, which all have stream twins
    that default to the blocking ones:

    * ``do_initialize_loop(request, chain)``: once, before the first iteration;
    * ``do_before_call(request, chain)``: before every model call;
    * ``do_after_call(response, chain)``: after every model call;
    * ``do_get_next_instructions_for_tool_call(request, response, result)``: the messages of
      the next iteration;
    * ``do_finalize_loop(response, chain)``: once, on the final response.

    Streaming: tool-call turns are executed, never shown. With ``stream_mode="final_answer"``
    (the default) the caller receives only the final answer's chunks: while tools are
    offered, each model turn is held until it ends, because text a model writes *before* a
    tool call (a preamble) cannot be taken back once sent. ``stream_mode="eager"`` passes
    chunks on as they arrive until a tool call shows up: lowest latency, but a preamble
    reaches the caller. Requests without tools always stream eagerly. The value returned by
    ``do_finalize_loop_stream`` reaches the caller only for a return-direct ending (the
    final answer's chunks have already been sent).

    With ``conversation_history_enabled`` each iteration resends the whole conversation;
    it is switched off automatically when a memory advisor sits inside the loop (order
    above this advisor's), since that advisor re-adds the history itself.
    """

    handles_tool_execution: ClassVar[bool] = True

    def __init__(
        self,
        *,
        tool_calling_manager: ToolCallingManager | None = None,
        order: int = TOOL_CALLING_ADVISOR_ORDER,
        conversation_history_enabled: bool = True,
        eligibility_checker: ToolExecutionEligibilityChecker | None = None,
        max_iterations: int | None = None,
        stream_mode: Literal["final_answer", "eager"] = "final_answer",
        name: str | None = None,
    ) -> None:
        if max_iterations is not None and max_iterations < 1:
            raise ValueError("max_iterations must be at least 1 (or None for no bound)")
        self.tool_calling_manager = tool_calling_manager or ToolCallingManager()
        self._order = order
        self.conversation_history_enabled = conversation_history_enabled
        self.eligibility_checker = eligibility_checker or DefaultToolExecutionEligibilityChecker()
        self.max_iterations = max_iterations
        if stream_mode not in ("final_answer", "eager"):
            raise ValueError("stream_mode must be 'final_answer' or 'eager'")
        self.stream_mode = stream_mode
        self._name = name or type(self).__name__

    @property
    def name(self) -> str:
        return self._name

    @property
    def order(self) -> int:
        return self._order

    # -- the loop -------------------------------------------------------------------------

    # Written once (:mod:`toolsearch._steps`): :meth:`_steps` is the loop, yielding a
    # ``_Model`` effect per model turn, a ``_Tools`` effect per turn of tool calls and (when
    # streaming) ``_Emit`` for held chunks; the four faces below only perform the effects.

    def advise_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientResponse:
        def handle(effect: _Effect) -> Any:
            if isinstance(effect, _Model):
                return chain.next_call(effect.turn)
            assert isinstance(effect, _Tools)  # no _Emit when not streaming
            return self.do_execute_tool_calls(*effect)

        response = drive(self._steps(request, chain, streaming=False), handle)
        assert response is not None
        return response

    async def aadvise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        """Async twin of :meth:`advise_call`: the model and the tools are awaited."""

        def handle(effect: _Effect) -> Awaitable[Any]:
            if isinstance(effect, _Model):
                return chain.anext_call(effect.turn)
            assert isinstance(effect, _Tools)
            return self.ado_execute_tool_calls(*effect)

        response = await adrive(self._steps(request, chain, streaming=False), handle)
        assert response is not None
        return response

    def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> Iterator[ChatClientResponse]:
        steps = self._steps(request, chain, streaming=True)
        value: Any = None
        while (effect := _step(steps, value)) is not None:
            value = None
            if isinstance(effect, _Emit):
                yield from effect.chunks
            elif isinstance(effect, _Tools):
                value = self.do_execute_tool_calls(*effect)
            else:
                buffer = effect.buffer
                assert buffer is not None
                for chunk in chain.next_stream(effect.turn):
                    if buffer.offer(chunk):
                        yield chunk

    async def aadvise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Async twin of :meth:`advise_stream`."""
        steps = self._steps(request, chain, streaming=True)
        value: Any = None
        while (effect := _step(steps, value)) is not None:
            value = None
            if isinstance(effect, _Emit):
                for chunk in effect.chunks:
                    yield chunk
            elif isinstance(effect, _Tools):
                value = await self.ado_execute_tool_calls(*effect)
            else:
                buffer = effect.buffer
                assert buffer is not None
                async for chunk in chain.anext_stream(effect.turn):
                    if buffer.offer(chunk):
                        yield chunk

    def _steps(
        self, request: ChatClientRequest, chain: AdvisorChain, *, streaming: bool
    ) -> Steps[_Effect, ChatClientResponse | None]:
        """The loop, once for all four faces: the final response (``None`` when streaming,
        whose caller receives the chunks through ``_Emit`` and the model turns)."""
        if streaming:
            initialize, before, after = (
                self.do_initialize_loop_stream,
                self.do_before_stream,
                self.do_after_stream,
            )
            finalize = self.do_finalize_loop_stream
            instructions = self.do_get_next_instructions_for_tool_call_stream
        else:
            initialize, before, after = (
                self.do_initialize_loop,
                self.do_before_call,
                self.do_after_call,
            )
            finalize = self.do_finalize_loop
            instructions = self.do_get_next_instructions_for_tool_call
        loop = _Loop(initialize(self._prepare(request, chain), chain))
        while True:
            turn = before(self._next_turn(loop), chain)
            buffer = _TurnBuffer(turn, self.stream_mode) if streaming else None
            response: ChatClientResponse = yield _Model(turn, buffer)
            if buffer is not None:
                response = buffer.response()
            response = after(response, chain)
            if not self._should_execute(loop, turn, response):
                if buffer is not None and buffer.held:
                    yield _Emit(buffer.held)
                break
            result = yield _Tools(turn, response, loop.counts)
            final = self._after_tools(loop, chain, turn, response, result, instructions)
            if final is not None:
                final = finalize(loop.finish(final), chain)
                if streaming:
                    yield _Emit([final])
                    return None
                return final
        final = finalize(loop.finish(response), chain)
        return None if streaming else final

    # -- hooks (override in subclasses) ---------------------------------------------------

    def do_initialize_loop(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientRequest:
        return request

    def do_before_call(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        return request

    def do_after_call(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        return response

    def do_finalize_loop(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        return response

    def do_execute_tool_calls(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> ToolExecutionResult:
        """Run the response's tool calls (default: through the tool-calling manager)."""
        turn = self._tool_turn(request, response, prior_call_counts)
        manager, counts = self.tool_calling_manager, prior_call_counts
        return drive(turn, lambda c: manager.execute_tool_calls(*c, prior_call_counts=counts))

    async def ado_execute_tool_calls(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> ToolExecutionResult:
        """Async twin of :meth:`do_execute_tool_calls`."""
        turn = self._tool_turn(request, response, prior_call_counts)
        manager, counts = self.tool_calling_manager, prior_call_counts
        return await adrive(
            turn, lambda c: manager.aexecute_tool_calls(*c, prior_call_counts=counts)
        )

    def _tool_turn(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        prior_call_counts: Mapping[str, int] | None,
    ) -> Steps[tuple[Prompt, ChatResponse], ToolExecutionResult]:
        """One turn of tool calls, written once for both hooks above: yields the prompt
        and response whose calls the manager runs (blocking or awaited), returns the
        turn's result. The tool-search advisor overrides this, not the two hooks."""
        assert response.chat_response is not None
        result: ToolExecutionResult = yield request.prompt, response.chat_response
        return result

    def do_get_next_instructions_for_tool_call(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        result: ToolExecutionResult,
    ) -> list[Message]:
        """The whole history, or (history disabled) the system message and the tool results."""
        if request.context.get(HISTORY_ENABLED_KEY, self.conversation_history_enabled):
            return list(result.conversation_history)
        system = [m for m in request.prompt.messages if isinstance(m, SystemMessage)][:1]
        return [*system, result.conversation_history[-1]]

    def do_initialize_loop_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientRequest:
        return self.do_initialize_loop(request, chain)

    def do_before_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientRequest:
        return self.do_before_call(request, chain)

    def do_after_stream(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        return self.do_after_call(response, chain)

    def do_finalize_loop_stream(
        self, response: ChatClientResponse, chain: AdvisorChain
    ) -> ChatClientResponse:
        return self.do_finalize_loop(response, chain)

    def do_get_next_instructions_for_tool_call_stream(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        result: ToolExecutionResult,
    ) -> list[Message]:
        return self.do_get_next_instructions_for_tool_call(request, response, result)

    # -- internals ------------------------------------------------------------------------

    def _prepare(self, request: ChatClientRequest, chain: AdvisorChain) -> ChatClientRequest:
        """Resolve ``tool_names`` into callbacks and decide whether history is resent."""
        options = request.prompt.options
        if options.tool_names:
            callbacks = self.tool_calling_manager.resolve_tool_callbacks(options)
            options = options.replace(tool_callbacks=callbacks, tool_names=())
            request = request.with_prompt(request.prompt.with_options(options))
        memory_inside = any(is_chat_memory_advisor(a) for a in chain.remaining)
        enabled = self.conversation_history_enabled and not memory_inside
        return request.with_context(**{HISTORY_ENABLED_KEY: enabled})

    def _next_turn(self, loop: _Loop) -> ChatClientRequest:
        if self.max_iterations is not None and loop.iterations >= self.max_iterations:
            _log.warning("the tool loop stopped after %d model calls", loop.iterations)
            raise ToolLoopLimitError(self.max_iterations)
        loop.iterations += 1
        _log.debug("tool loop: model call %d", loop.iterations)
        return loop.request.with_prompt(loop.request.prompt.with_messages(loop.messages))

    def _should_execute(
        self, loop: _Loop, request: ChatClientRequest, response: ChatClientResponse
    ) -> bool:
        chat_response = response.chat_response
        if chat_response is None:
            return False
        if chat_response.usage is None:
            loop.calls_without_usage += 1
        else:
            loop.usage = loop.usage + chat_response.usage
        required = self.eligibility_checker.is_tool_execution_required(
            request.prompt.options, chat_response
        )
        if _log.isEnabledFor(logging.DEBUG):
            calls = [call.name for call in chat_response.message.tool_calls]
            if required:
                _log.debug("tool loop: the model called %s", calls)
            else:
                _log.debug(
                    "tool loop: final answer after %d model calls (%d tokens in, %d out)",
                    loop.iterations,
                    loop.usage.prompt_tokens,
                    loop.usage.completion_tokens,
                )
        return required

    def _after_tools(
        self,
        loop: _Loop,
        chain: AdvisorChain,
        turn: ChatClientRequest,
        response: ChatClientResponse,
        result: ToolExecutionResult,
        next_instructions: Callable[
            [ChatClientRequest, ChatClientResponse, ToolExecutionResult], list[Message]
        ],
    ) -> ChatClientResponse | None:
        """Record the turn; the final response when it was return-direct, else ``None``."""
        loop.counts = result.call_counts
        if result.return_direct:
            _log.debug("tool loop: ended on a return-direct tool result")
            assert response.chat_response is not None
            direct = _return_direct_response(response.chat_response, result)
            _notify_return_direct(chain, turn, result, direct)
            return response.with_chat_response(direct)
        loop.messages = next_instructions(turn, response, result)
        return None


class _Model(NamedTuple):
    """Effect: run the model on ``turn`` (streaming: its chunks go through ``buffer``)."""

    turn: ChatClientRequest
    buffer: _TurnBuffer | None


class _Tools(NamedTuple):
    """Effect: execute the response's tool calls (the ``do_execute_tool_calls`` hook)."""

    request: ChatClientRequest
    response: ChatClientResponse
    prior_call_counts: Mapping[str, int] | None


class _Emit(NamedTuple):
    """Effect (streaming): pass these responses on to the caller."""

    chunks: Sequence[ChatClientResponse]


_Effect = _Model | _Tools | _Emit


def _step(steps: Steps[_Effect, Any], value: Any) -> _Effect | None:
    """The core's next effect, ``None`` once it ended (the stream drivers' one step)."""
    try:
        return steps.send(value)
    except StopIteration:
        return None


@dataclass
class _Loop:
    """The state of one run of the loop."""

    request: ChatClientRequest
    messages: Sequence[Message] = ()
    counts: Mapping[str, int] | None = None
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    calls_without_usage: int = 0

    def __post_init__(self) -> None:
        self.messages = self.request.prompt.messages

    def finish(self, response: ChatClientResponse) -> ChatClientResponse:
        """The final response, with the whole loop's token usage in its metadata."""
        chat_response = response.chat_response
        if chat_response is None:
            return response
        metadata = {
            **chat_response.metadata,
            LOOP_USAGE_KEY: self.usage,
            MODEL_CALLS_KEY: self.iterations,
            CALLS_WITHOUT_USAGE_KEY: self.calls_without_usage,
        }
        return response.with_chat_response(dataclasses.replace(chat_response, metadata=metadata))


class _TurnBuffer:
    """One streamed model turn: aggregates chunks and decides which to pass on at once."""

    def __init__(self, turn: ChatClientRequest, stream_mode: str) -> None:
        self.aggregator = ChatResponseAggregator()
        self.held: list[ChatClientResponse] = []
        self.context = turn.context
        self.hold_all = stream_mode == "final_answer" and bool(turn.prompt.options.tool_callbacks)

    def offer(self, chunk: ChatClientResponse) -> bool:
        """Take a chunk; whether the caller may see it now (else it is held)."""
        self.context = chunk.context
        if chunk.chat_response is not None:
            self.aggregator.add(chunk.chat_response)
        if self.hold_all or self.aggregator.has_tool_calls:
            self.held.append(chunk)  # maybe a tool turn: keep it from the caller for now
            return False
        return True

    def response(self) -> ChatClientResponse:
        return ChatClientResponse(self.aggregator.result(), self.context)


def _return_direct_response(response: ChatResponse, result: ToolExecutionResult) -> ChatResponse:
    return ChatResponse(
        AssistantMessage(content=result.return_direct_text()),
        FinishReason.RETURN_DIRECT,
        response.usage,
        {**response.metadata, "return_direct": True},
    )


def _notify_return_direct(
    chain: AdvisorChain,
    request: ChatClientRequest,
    result: ToolExecutionResult,
    response: ChatResponse,
) -> None:
    """Tell advisors inside the loop that it ended on tool results they never saw.

    A return-direct turn ends without another pass through the inner chain, so an advisor
    there (a memory advisor) would otherwise keep a tool call without its results.
    """
    for advisor in chain.remaining:
        hook = getattr(advisor, "on_return_direct", None)
        if callable(hook):
            hook(request, result, response)
