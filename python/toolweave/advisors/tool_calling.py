"""``ToolCallingAdvisor``: the tool loop on the advisor chain (Spring AI 2.0 ``ToolCallingAdvisor``).

Blocking: a do-while that calls ``chain.copy(self).next_call`` each round, executes the tool calls
with the ``ToolCallingManager``, and stops when the checker says no tools are needed, on
``return_direct``, or on a tool-call limit breach. Streaming: the same rounds over
``chain.copy(self).next_stream`` (Spring recurses; we iterate); chunks are forwarded as they
arrive, except chunks with tool calls, which stay inside the loop. Usage is summed over rounds.
The three methods here only do I/O: the rules of a round are written once, in the sans-IO
:class:`~toolweave.advisors._rounds.RoundEngine`, which also emits the run events
(:mod:`toolweave.events`) when the request context holds an ``on_event`` handler.

Beyond Spring, off by default: ``max_rounds`` ends the loop once that many model rounds still ask
for tools (finish reason ``maxRoundsReached``), and ``max_identical_tool_calls`` ends it when the
model asks for the same tool with the same arguments that many times in a row (finish reason
``repeatedToolCall``); both answer with one generation explaining why, the unexecuted calls under
metadata ``pendingToolCalls``. They bound loops that the tool-call limits cannot (limits excluded
or unlimited, or ``RETURN_ERROR_RESPONSE``). Unlike Spring, the calls of a round that ended with
finish reason ``length`` are not executed (their arguments may be cut short): the loop ends with
finish reason ``length`` and the calls under ``pendingToolCalls``, unless
``execute_truncated_tool_calls=True``. With ``final_answer_on_max_rounds=True`` the round that
reaches ``max_rounds`` runs its tools and one last model call follows with ``tool_choice='none'``:
the run ends with the model's own answer instead of the canned text (if it still asks for tools, the
canned text ends it). Tool calls that wait for a person's decision, or for a result from outside,
pause the run (:mod:`toolweave.approvals`): the response carries a
:class:`~toolweave.runstate.RunState`; a request whose context holds a resumption continues the run
where it stopped (``ChatClient.resume``). Tracing: one span per model round
(``toolweave.round``) wraps the model call and that round's ``execute_tool`` spans, in every path.

Hooks for subclasses (count rounds, audit, stop the loop): ``do_initialize_loop``,
``do_before_call``, ``do_after_call``, ``do_finalize_loop`` and their ``*_stream`` twins, plus
``do_get_next_instructions_for_tool_call``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace

from toolweave.advisors._rounds import (
    LENGTH_FINISH_REASON,
    MAX_ROUNDS_FINISH_REASON,
    REPEATED_TOOL_CALL_FINISH_REASON,
    TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON,
    ExecuteTools,
    Finish,
    RoundEngine,
)
from toolweave.advisors.api import (
    HIGHEST_PRECEDENCE,
    LOWEST_PRECEDENCE,
    CallAdvisor,
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisor,
    StreamAdvisorChain,
)
from toolweave.advisors.eligibility import DefaultToolExecutionEligibilityChecker, ToolExecutionEligibilityChecker
from toolweave.chat.messages import Message, SystemMessage
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.exceptions import ToolCallLimitExceededError
from toolweave.tools.manager import DefaultToolCallingManager, ToolCallingManager, ToolExecutionResult, tracer_is_noop

__all__ = [
    'LENGTH_FINISH_REASON',
    'MAX_ROUNDS_FINISH_REASON',
    'REPEATED_TOOL_CALL_FINISH_REASON',
    'TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON',
    'ToolCallingAdvisor',
]

ROUND_SPAN_NAME = 'toolweave.round'
_tracer = trace.get_tracer('toolweave')
_T = TypeVar('_T')


class ToolCallingAdvisor(CallAdvisor, StreamAdvisor):
    """Runs the tool-calling rounds of one request.

    Args:
        tool_calling_manager: Executes tool calls (default :class:`DefaultToolCallingManager`).
        order: Chain position, strictly between ``HIGHEST_PRECEDENCE`` and ``LOWEST_PRECEDENCE``
            (default ``HIGHEST_PRECEDENCE + 300``: inside memory advisors, outside everything else).
        conversation_history_enabled: Send the full history each round; when ``False`` only the
            system message and the last message (a downstream memory advisor rebuilds the rest).
        eligibility_checker: Decides whether a round's response goes to the tools.
        max_rounds: End the loop when this many model rounds have asked for tools (``None``: no bound).
        max_identical_tool_calls: End the loop when the model asks for one tool with identical
            arguments this many times in a row (``None``: no check; 2 or more).
        execute_truncated_tool_calls: Run the tool calls of a round that ended with finish reason
            ``length`` (Spring's behaviour). Default ``False``: their arguments may be cut short, so
            the loop ends with finish reason ``length`` and the calls under metadata ``pendingToolCalls``.
        final_answer_on_max_rounds: When ``max_rounds`` is reached, run that round's tools and make one
            last model call with ``tool_choice='none'`` for a real answer (default ``False``: end with
            the canned text, finish reason ``maxRoundsReached``).

    Raises:
        ValueError: ``order`` is not strictly between the bounds, or a bound is not a positive int
            (``max_identical_tool_calls`` at least 2).
    """

    DEFAULT_ORDER = HIGHEST_PRECEDENCE + 300

    def __init__(
        self,
        tool_calling_manager: ToolCallingManager | None = None,
        *,
        order: int = DEFAULT_ORDER,
        conversation_history_enabled: bool = True,
        eligibility_checker: ToolExecutionEligibilityChecker | None = None,
        max_rounds: int | None = None,
        max_identical_tool_calls: int | None = None,
        execute_truncated_tool_calls: bool = False,
        final_answer_on_max_rounds: bool = False,
    ) -> None:
        _check_bound('max_rounds', max_rounds, 1)
        _check_bound('max_identical_tool_calls', max_identical_tool_calls, 2)
        self.max_rounds = max_rounds
        self.max_identical_tool_calls = max_identical_tool_calls
        if not HIGHEST_PRECEDENCE < order < LOWEST_PRECEDENCE:
            raise ValueError(
                f'ToolCallingAdvisor order must be between HIGHEST_PRECEDENCE and LOWEST_PRECEDENCE (exclusive), '
                f'got {order}'
            )
        self.tool_calling_manager = tool_calling_manager or DefaultToolCallingManager()
        self._order = order
        self.conversation_history_enabled = conversation_history_enabled
        self.eligibility_checker = eligibility_checker or DefaultToolExecutionEligibilityChecker()
        if not isinstance(execute_truncated_tool_calls, bool):
            raise TypeError(f'execute_truncated_tool_calls must be a bool, got {execute_truncated_tool_calls!r}')
        self.execute_truncated_tool_calls = execute_truncated_tool_calls
        if not isinstance(final_answer_on_max_rounds, bool):
            raise TypeError(f'final_answer_on_max_rounds must be a bool, got {final_answer_on_max_rounds!r}')
        self.final_answer_on_max_rounds = final_answer_on_max_rounds

    @property
    def name(self) -> str:
        """``'Tool Calling Advisor'`` (Spring's name)."""
        return 'Tool Calling Advisor'

    @property
    def order(self) -> int:
        """Chain position."""
        return self._order

    def copy(self, **changes: Any) -> ToolCallingAdvisor:
        """A new advisor with the same settings except ``changes`` (the shared template stays untouched)."""
        settings: dict[str, Any] = {
            'tool_calling_manager': self.tool_calling_manager,
            'order': self._order,
            'conversation_history_enabled': self.conversation_history_enabled,
            'eligibility_checker': self.eligibility_checker,
            'max_rounds': self.max_rounds,
            'max_identical_tool_calls': self.max_identical_tool_calls,
            'execute_truncated_tool_calls': self.execute_truncated_tool_calls,
            'final_answer_on_max_rounds': self.final_answer_on_max_rounds,
        }
        settings.update(changes)
        return type(self)(**settings)

    # -- drivers: I/O only, the rules are in the engine (advisors/_rounds.py) ---------------------

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """The blocking loop (Spring ``adviseCall``).

        Raises:
            ValueError: ``request`` or ``chain`` is ``None``.
        """
        _check_arguments(request, chain)
        if not isinstance(request.prompt.options, ToolCallingChatOptions):
            return chain.next_call(request)
        engine = RoundEngine(self, request, chain)
        below = chain.copy(self)
        step = engine.start()
        while not isinstance(step, Finish):
            if isinstance(step, ExecuteTools):  # a resumed run's approved calls
                step = self._execute(engine, step)
                continue
            with _round_span(engine.rounds + 1):
                step = engine.on_response(below.next_call(engine.next_request()))
                if isinstance(step, ExecuteTools):
                    step = self._execute(engine, step)
        return step.response

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """The async loop: same rules, awaiting the chain and the tools."""
        _check_arguments(request, chain)
        if not isinstance(request.prompt.options, ToolCallingChatOptions):
            return await chain.anext_call(request)
        engine = RoundEngine(self, request, chain)
        below = chain.copy(self)
        step = engine.start()
        while not isinstance(step, Finish):
            if isinstance(step, ExecuteTools):  # a resumed run's approved calls
                step = await self._aexecute(engine, step)
                continue
            with _round_span(engine.rounds + 1):
                step = engine.on_response(await below.anext_call(engine.next_request()))
                if isinstance(step, ExecuteTools):
                    step = await self._aexecute(engine, step)
        return step.response

    async def advise_stream(
        self, request: ChatClientRequest, chain: StreamAdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """The streaming loop (Spring ``adviseStream``): forward chunks, keep tool-call chunks inside."""
        _check_arguments(request, chain)
        if not isinstance(request.prompt.options, ToolCallingChatOptions):
            async for response in chain.next_stream(request):
                yield response
            return
        engine = RoundEngine(self, request, chain, streaming=True)
        below = chain.copy(self)
        step = engine.start()
        if isinstance(step, ExecuteTools):  # a resumed run's approved calls
            step = await self._aexecute(engine, step)
        while step is None:
            span = _open_round_span(engine.rounds + 1)
            traced = span.get_span_context().is_valid
            chunks = below.next_stream(engine.next_request())
            try:
                while (
                    chunk := await (_in_span(span, anext(chunks, None)) if traced else anext(chunks, None))
                ) is not None:
                    forwarded = engine.on_chunk(chunk)
                    if engine.pace is not None:
                        await engine.pace()
                    if forwarded is not None:
                        yield forwarded
                step = engine.on_stream_end()
                if isinstance(step, ExecuteTools):
                    for held in step.chunks:
                        yield held
                    execution = self._aexecute(engine, step)
                    step = await (_in_span(span, execution) if traced else execution)
            finally:
                await _close(chunks)
                span.end()
        for final in step.chunks:
            yield final

    def _execute(self, engine: RoundEngine, step: ExecuteTools) -> Finish | None:
        """Run one round's tools in this thread; the engine's next step."""
        try:
            with engine.listening():
                result = self.tool_calling_manager.execute_tool_calls(step.prompt, step.response)
        except ToolCallLimitExceededError as breach:
            return engine.on_limit_breach(breach)
        return engine.on_tool_results(result)

    async def _aexecute(self, engine: RoundEngine, step: ExecuteTools) -> Finish | None:
        """Run one round's tools on the running loop; the engine's next step."""
        try:
            with engine.listening(asyncio.get_running_loop() if engine.emit is not None else None):
                result = await self.tool_calling_manager.aexecute_tool_calls(step.prompt, step.response)
        except ToolCallLimitExceededError as breach:
            return engine.on_limit_breach(breach)
        return engine.on_tool_results(result)

    # -- hooks (Spring's protected template methods) -------------------------------------------

    def do_initialize_loop(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientRequest:
        """Once before the first round (blocking)."""
        return request

    def do_before_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientRequest:
        """Before each round's model call (blocking)."""
        return request

    def do_after_call(self, response: ChatClientResponse, chain: CallAdvisorChain) -> ChatClientResponse:
        """After each round's model call (blocking)."""
        return response

    def do_finalize_loop(self, response: ChatClientResponse, chain: CallAdvisorChain) -> ChatClientResponse:
        """Once after the loop (blocking)."""
        return response

    def do_initialize_loop_stream(self, request: ChatClientRequest, chain: StreamAdvisorChain) -> ChatClientRequest:
        """Once before the first round (streaming)."""
        return request

    def do_before_stream(self, request: ChatClientRequest, chain: StreamAdvisorChain) -> ChatClientRequest:
        """Before each round's model stream."""
        return request

    def do_after_stream(self, chunk: ChatClientResponse, chain: StreamAdvisorChain) -> ChatClientResponse:
        """On each chunk of each round."""
        return chunk

    def do_finalize_loop_stream(self, response: ChatClientResponse, chain: StreamAdvisorChain) -> None:
        """Once after the last round, with that round's aggregated response (streaming)."""

    def do_save_run_state(self, request: ChatClientRequest) -> Mapping[str, Any]:
        """What this advisor keeps across a pause: JSON values, by a key of its own (default nothing)."""
        return {}

    def do_restore_run_state(self, request: ChatClientRequest, extras: Mapping[str, Any]) -> None:
        """Take back what :meth:`do_save_run_state` kept, when a paused run resumes (after the initialize hook)."""

    def do_get_next_instructions_for_tool_call(
        self, request: ChatClientRequest, response: ChatClientResponse, result: ToolExecutionResult
    ) -> tuple[Message, ...]:
        """Messages for the next round: the full history, or ``[system, last]`` without history.

        Without history the system message is the request's (Spring ``prompt().getSystemMessage()``),
        never one taken from the manager's history.
        """
        history = result.conversation_history
        if self.conversation_history_enabled:
            return history
        system = next((m for m in request.prompt.messages if isinstance(m, SystemMessage)), None)
        return (system, history[-1]) if system is not None else (history[-1],)


def _check_arguments(request: ChatClientRequest | None, chain: object) -> None:
    """``ValueError`` naming the argument that is ``None`` (Spring's ``Assert.notNull``)."""
    if request is None:
        raise ValueError('request must not be None')
    if chain is None:
        raise ValueError('chain must not be None')


def _check_bound(name: str, value: int | None, minimum: int) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < minimum):
        raise ValueError(f'{name} must be an int >= {minimum} or None, got {value!r}')


def _open_round_span(number: int) -> trace.Span:
    """A started span for model round ``number`` (the caller ends it).

    The no-op span, without starting one, when no tracing SDK is behind the tracer (asked each round).
    """
    if tracer_is_noop(_tracer):
        return trace.INVALID_SPAN
    return _tracer.start_span(ROUND_SPAN_NAME, attributes={'toolweave.round.number': number})


def _round_span(number: int) -> AbstractContextManager[trace.Span]:
    """The span of round ``number``, current for the whole block (blocking and async drivers)."""
    span = _open_round_span(number)
    if span is trace.INVALID_SPAN:
        return _NO_SPAN
    if not span.get_span_context().is_valid:  # a non-recording span: nothing to make current
        return nullcontext(span)
    return trace.use_span(span, end_on_exit=True)


_NO_SPAN = nullcontext(trace.INVALID_SPAN)


async def _in_span(span: trace.Span, awaitable: Awaitable[_T]) -> _T:
    """Await with ``span`` current only for this step (an async generator must not keep a context across ``yield``)."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        return await awaitable
    finally:
        otel_context.detach(token)


async def _close(chunks: AsyncIterator[ChatClientResponse]) -> None:
    """Close a round's stream now (not when it is garbage-collected): the provider's connection goes at once."""
    aclose = getattr(chunks, 'aclose', None)
    if aclose is not None:
        await aclose()
