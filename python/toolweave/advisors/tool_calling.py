"""``ToolCallingAdvisor``: the tool loop on the advisor chain (Spring AI 2.0 ``ToolCallingAdvisor``).

Blocking: a do-while that calls ``chain.copy(self).next_call`` each round, executes the tool calls
with the ``ToolCallingManager``, and stops when the checker says no tools are needed, on
``return_direct``, or on a tool-call limit breach. Streaming: the same rounds over
``chain.copy(self).next_stream`` (Spring recurses; we iterate); chunks are forwarded as they
arrive, except chunks with tool calls, which stay inside the loop. Usage is summed over rounds.

Beyond Spring, off by default: ``max_rounds`` ends the loop once that many model rounds still ask
for tools (finish reason ``maxRoundsReached``), and ``max_identical_tool_calls`` ends it when the
model asks for the same tool with the same arguments that many times in a row (finish reason
``repeatedToolCall``); both answer with one generation explaining why, the unexecuted calls under
metadata ``pendingToolCalls``. They bound loops that the tool-call limits cannot (limits excluded
or unlimited, or ``RETURN_ERROR_RESPONSE``). Tracing: one span per model round
(``toolweave.round``) wraps the model call and that round's ``execute_tool`` spans, in every path.

Hooks for subclasses (count rounds, audit, stop the loop): ``do_initialize_loop``,
``do_before_call``, ``do_after_call``, ``do_finalize_loop`` and their ``*_stream`` twins, plus
``do_get_next_instructions_for_tool_call``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

import orjson
from opentelemetry import context as otel_context
from opentelemetry import trace

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
from toolweave.advisors.usage import UsageAccumulator
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, ToolCall
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import ChatResponseAggregator
from toolweave.exceptions import ToolCallLimitExceededError
from toolweave.tools.manager import DefaultToolCallingManager, ToolCallingManager, ToolExecutionResult

__all__ = [
    'MAX_ROUNDS_FINISH_REASON',
    'REPEATED_TOOL_CALL_FINISH_REASON',
    'TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON',
    'ToolCallingAdvisor',
]

TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON = 'toolCallLimitExceeded'
MAX_ROUNDS_FINISH_REASON = 'maxRoundsReached'
"""Finish reason when ``max_rounds`` model rounds all asked for tools."""
REPEATED_TOOL_CALL_FINISH_REASON = 'repeatedToolCall'
"""Finish reason when one tool was asked for with identical arguments ``max_identical_tool_calls`` times in a row."""
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
        }
        settings.update(changes)
        return type(self)(**settings)

    # -- blocking and async -------------------------------------------------------------------

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """The blocking loop (Spring ``adviseCall``)."""
        if not isinstance(request.prompt.options, ToolCallingChatOptions):
            return chain.next_call(request)
        loop = _Loop(self, self.do_initialize_loop(request, chain))
        while True:
            with loop.round_span():
                round_request = self.do_before_call(loop.round_request(), chain)
                response = self.do_after_call(chain.copy(self).next_call(round_request), chain)
                if not loop.needs_tools(response):
                    break
                stop = loop.guard(response)
                if stop is not None:
                    response = stop
                    break
                try:
                    result = self.tool_calling_manager.execute_tool_calls(loop.turn_prompt(), _chat(response))
                except ToolCallLimitExceededError as breach:
                    response = loop.limit_response(response, breach)
                    break
                if result.return_direct:
                    response = loop.return_direct_response(response, result)
                    break
                loop.advance(result, self.do_get_next_instructions_for_tool_call(request, response, result))
        return self.do_finalize_loop(loop.finish(response), chain)

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """The async loop: same rules, awaiting the chain and the tools."""
        if not isinstance(request.prompt.options, ToolCallingChatOptions):
            return await chain.anext_call(request)
        loop = _Loop(self, self.do_initialize_loop(request, chain))
        while True:
            with loop.round_span():
                round_request = self.do_before_call(loop.round_request(), chain)
                response = self.do_after_call(await chain.copy(self).anext_call(round_request), chain)
                if not loop.needs_tools(response):
                    break
                stop = loop.guard(response)
                if stop is not None:
                    response = stop
                    break
                try:
                    result = await self.tool_calling_manager.aexecute_tool_calls(loop.turn_prompt(), _chat(response))
                except ToolCallLimitExceededError as breach:
                    response = loop.limit_response(response, breach)
                    break
                if result.return_direct:
                    response = loop.return_direct_response(response, result)
                    break
                loop.advance(result, self.do_get_next_instructions_for_tool_call(request, response, result))
        return self.do_finalize_loop(loop.finish(response), chain)

    # -- streaming ----------------------------------------------------------------------------

    async def advise_stream(
        self, request: ChatClientRequest, chain: StreamAdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """The streaming loop (Spring ``adviseStream``): forward chunks, keep tool-call chunks inside."""
        if not isinstance(request.prompt.options, ToolCallingChatOptions):
            async for response in chain.next_stream(request):
                yield response
            return
        loop = _Loop(self, self.do_initialize_loop_stream(request, chain))
        while True:
            span = _tracer.start_span(ROUND_SPAN_NAME, attributes={'toolweave.round.number': loop.rounds + 1})
            try:
                round_request = self.do_before_stream(loop.round_request(), chain)
                aggregator = ChatResponseAggregator()
                last_context = round_request.context
                chunks = chain.copy(self).next_stream(round_request)
                while (chunk := await _in_span(span, anext(chunks, None))) is not None:
                    chunk = self.do_after_stream(chunk, chain)
                    last_context = chunk.context
                    if chunk.chat_response is None:
                        yield chunk
                        continue
                    aggregator.add(chunk.chat_response)
                    if not chunk.chat_response.has_tool_calls():
                        usage_chunk = loop.usage.apply_previous_accumulated_usage_to_chunk(chunk.chat_response)
                        yield replace(chunk, chat_response=usage_chunk)
                aggregated = ChatClientResponse(aggregator.result(), last_context)
                if not loop.needs_tools(aggregated):
                    correction = loop.usage.emit_final_usage_correction_if_necessary(_chat(aggregated))
                    if correction is not None:
                        yield ChatClientResponse(correction, last_context)
                    self.do_finalize_loop_stream(aggregated, chain)
                    return
                stop = loop.guard(aggregated)
                if stop is not None:
                    yield loop.finish(stop)
                    return
                try:
                    prompt = loop.turn_prompt()
                    result = await _in_span(
                        span, self.tool_calling_manager.aexecute_tool_calls(prompt, _chat(aggregated))
                    )
                except ToolCallLimitExceededError as breach:
                    yield loop.finish(loop.limit_response(aggregated, breach))
                    return
                if result.return_direct:
                    yield loop.finish(loop.return_direct_response(aggregated, result))
                    return
                loop.advance(result, self.do_get_next_instructions_for_tool_call(request, aggregated, result))
            finally:
                span.end()

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

    def do_get_next_instructions_for_tool_call(
        self, request: ChatClientRequest, response: ChatClientResponse, result: ToolExecutionResult
    ) -> tuple[Message, ...]:
        """Messages for the next round: the full history, or ``[system, last]`` without history."""
        history = result.conversation_history
        if self.conversation_history_enabled:
            return history
        system = next((m for m in history if isinstance(m, SystemMessage)), None)
        return (system, history[-1]) if system is not None else (history[-1],)


class _Loop:
    """Per-request loop state: instructions, full turn history, usage."""

    def __init__(self, advisor: ToolCallingAdvisor, request: ChatClientRequest) -> None:
        self.advisor = advisor
        self.request = request
        self.options = request.prompt.options
        self.instructions: tuple[Message, ...] = request.prompt.messages
        self.history: tuple[Message, ...] = request.prompt.messages
        self.usage = UsageAccumulator()
        self.rounds = 0
        self.last_call: tuple[str, str] | None = None
        self.streak = 0

    @contextmanager
    def round_span(self) -> Iterator[trace.Span]:
        """The span of the next round (blocking and async paths: current for the whole round)."""
        span = _tracer.start_span(ROUND_SPAN_NAME, attributes={'toolweave.round.number': self.rounds + 1})
        if not span.get_span_context().is_valid:  # no tracing SDK: nothing to make current
            yield span
            return
        with trace.use_span(span, end_on_exit=True) as current:
            yield current

    def guard(self, response: ChatClientResponse) -> ChatClientResponse | None:
        """A final response when ``max_rounds`` or the repetition check ends the loop, else ``None``."""
        calls = _tool_calls(_chat(response))
        bound = self.advisor.max_rounds
        if bound is not None and self.rounds >= bound:
            text = f'Tool-calling loop stopped: the model still asked for tools after {self.rounds} rounds (max_rounds={bound}).'
            return self.stop_response(response, text, MAX_ROUNDS_FINISH_REASON, calls, {})
        limit = self.advisor.max_identical_tool_calls
        if limit is None:
            return None
        for call in calls:
            key = (call.name, _canonical_arguments(call.arguments))
            self.streak = self.streak + 1 if key == self.last_call else 1
            self.last_call = key
            if self.streak >= limit:
                text = (
                    f"Tool-calling loop stopped: tool '{call.name}' was called {limit} times in a row "
                    'with identical arguments.'
                )
                extra = {'repeatedToolCall': call.name}
                return self.stop_response(response, text, REPEATED_TOOL_CALL_FINISH_REASON, calls, extra)
        return None

    def stop_response(
        self,
        response: ChatClientResponse,
        text: str,
        finish_reason: str,
        calls: tuple[ToolCall, ...],
        extra: dict[str, Any],
    ) -> ChatClientResponse:
        generation = Generation(AssistantMessage(text), finish_reason, {'pendingToolCalls': calls, **extra})
        return replace(response, chat_response=replace(_chat(response), generations=(generation,)))

    def round_request(self) -> ChatClientRequest:
        self.rounds += 1
        return self.request.with_prompt(Prompt(self.instructions, self.options))

    def turn_prompt(self) -> Prompt:
        """The manager always gets the full history, so limits count right."""
        return Prompt(self.history, self.options)

    def needs_tools(self, response: ChatClientResponse) -> bool:
        self.usage.add_round_response(response.chat_response)
        return self.advisor.eligibility_checker(response.chat_response)

    def advance(self, result: ToolExecutionResult, instructions: tuple[Message, ...]) -> None:
        self.history = result.conversation_history
        self.instructions = instructions

    def limit_response(self, response: ChatClientResponse, breach: ToolCallLimitExceededError) -> ChatClientResponse:
        generation = Generation(
            AssistantMessage(str(breach)),
            TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON,
            {'partialToolResponses': breach.partial_responses},
        )
        chat = replace(_chat(response), generations=(generation,))
        return replace(response, chat_response=chat)

    def return_direct_response(self, response: ChatClientResponse, result: ToolExecutionResult) -> ChatClientResponse:
        chat = replace(_chat(response), generations=result.build_generations())
        return replace(response, chat_response=chat)

    def finish(self, response: ChatClientResponse) -> ChatClientResponse:
        if response.chat_response is None:
            return response
        chat = self.usage.apply_accumulated_usage(response.chat_response)
        chat = replace(chat, metadata={**chat.metadata, 'toolCallingRounds': self.rounds})
        return replace(response, chat_response=chat)


def _check_bound(name: str, value: int | None, minimum: int) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < minimum):
        raise ValueError(f'{name} must be an int >= {minimum} or None, got {value!r}')


def _tool_calls(chat: ChatResponse) -> tuple[ToolCall, ...]:
    return next((g.output.tool_calls for g in chat.generations if g.output.tool_calls), ())


def _canonical_arguments(arguments: str) -> str:
    """Arguments compared by value: key order and spacing do not matter."""
    try:
        return orjson.dumps(orjson.loads(arguments or '{}'), option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONDecodeError:
        return arguments.strip()


async def _in_span(span: trace.Span, awaitable: Awaitable[_T]) -> _T:
    """Await with ``span`` current only for this step (an async generator must not keep a context across ``yield``)."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        return await awaitable
    finally:
        otel_context.detach(token)


def _chat(response: ChatClientResponse) -> ChatResponse:
    if response.chat_response is None:
        raise ValueError('the chain returned no ChatResponse for a tool-calling round')
    return response.chat_response
