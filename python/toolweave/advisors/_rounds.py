"""The tool loop's rounds, defined once: a sans-IO engine that the blocking, async and streaming drivers feed.

A driver asks the engine for the next round's request, does the I/O (the model call or stream, the
tool calls) and hands the outcome back; the engine answers with what to do next:

- :class:`ExecuteTools`: run these tool calls with the manager (``prompt`` is the whole turn's history,
  so limits count right), then call :meth:`RoundEngine.on_tool_results` (or
  :meth:`RoundEngine.on_limit_breach` when the manager raised ``ToolCallLimitExceededError``);
- :class:`Finish`: the run is over; return ``response`` (streaming: yield ``chunks`` first);
- :class:`Pause` (a ``Finish``): the run waits for decisions on some tool calls (approval, deferred
  results; :mod:`toolweave.approvals`): return or yield its response as a ``Finish``; ``state`` is the
  run's :class:`~toolweave.runstate.RunState`;
- ``None`` (after the tools ran): start the next round.

A driver starts with :meth:`RoundEngine.start`: ``None`` for a new run; for a resumed run (a
:class:`~toolweave.runstate.state.Resumption` in the request context) the decisions applied, then the
approved calls to execute (``ExecuteTools``), or the next step.

The engine owns everything else, so every loop feature is written here once: the advisor's hooks
(``do_initialize_loop``, ``do_before_call``, ``do_after_call``, ``do_finalize_loop`` and their
``*_stream`` twins, ``do_get_next_instructions_for_tool_call``) in their documented order, the
eligibility check, the guards (``max_rounds``, optionally ending with one last model call without
tools, ``max_identical_tool_calls``, calls of a round cut off with finish reason ``length``), the
pause for decisions and the resume, ``return_direct`` and
limit-breach answers, the usage summed over rounds, the history and next instructions, and the run
events (:mod:`toolweave.events`). The drivers keep the round spans (tracing is I/O).

Hook order per run: initialize once; per round ``before`` (request), ``after`` (blocking: the
response; streaming: every chunk); finalize once, on every way the loop ends, a pause included
(blocking: it may replace the final response; streaming: it sees the final response, usage summed).
A resumed run has no initialize-to-finalize history of its own: initialize runs again, then the
decided calls, then its rounds.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ContextManager

import orjson

from toolweave._native import parse_arguments
from toolweave.advisors.api import ChatClientRequest, ChatClientResponse
from toolweave.advisors.usage import UsageAccumulator
from toolweave.approvals import (
    APPROVED_TOOL_CALLS_KEY,
    DENIED_ERROR_TYPE,
    PAUSED_FINISH_REASON,
    Approve,
    Decision,
    DeferredResult,
    PendingToolCall,
)
from toolweave.chat.messages import AssistantMessage, Message, ToolCall, ToolResponse, ToolResponseMessage
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import TOOL_CALL_DELTAS, ChatResponseAggregator, ToolCallDelta
from toolweave.events import (
    ON_EVENT_CONTEXT_KEY,
    ApprovalRequested,
    ReasoningDelta,
    RoundFinished,
    RoundStarted,
    RunEvent,
    RunFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallReady,
    ToolCallStarted,
    ToolExecutionStarted,
    ToolResult,
    listening_to_tools,
)
from toolweave.exceptions import ToolArgumentsError, ToolCallLimitExceededError
from toolweave.runstate.state import RESUME_CONTEXT_KEY, Resumption, RunState, new_run_id
from toolweave.tools.converter import DefaultToolCallResultConverter
from toolweave.tools.manager import ToolExecutionResult

if TYPE_CHECKING:
    from toolweave.advisors.tool_calling import ToolCallingAdvisor

try:  # the core's incremental partial parser, when this build has it
    from toolweave._native import PartialArguments as _PartialArguments  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # pragma: no cover - depends on the build
    _PartialArguments = None  # type: ignore[assignment,misc,unused-ignore]

__all__ = [
    'LENGTH_FINISH_REASON',
    'MAX_ROUNDS_FINISH_REASON',
    'REPEATED_TOOL_CALL_FINISH_REASON',
    'TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON',
    'ExecuteTools',
    'Finish',
    'Pause',
    'RoundEngine',
]

TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON = ToolCallLimitExceededError.FINISH_REASON
MAX_ROUNDS_FINISH_REASON = 'maxRoundsReached'
"""Finish reason when ``max_rounds`` model rounds all asked for tools."""
REPEATED_TOOL_CALL_FINISH_REASON = 'repeatedToolCall'
"""Finish reason when one tool was asked for with identical arguments ``max_identical_tool_calls`` times in a row."""
LENGTH_FINISH_REASON = 'length'
"""The common finish reason of a round cut off by the output-token bound (every provider normalises to it)."""
RUN_STATE_METADATA_KEY = 'runState'
"""Response metadata of a paused run: its :class:`~toolweave.runstate.RunState`."""
_NOT_RUN = frozenset({'LookupError', ToolCallLimitExceededError.__name__})
"""Error types of responses the manager gives calls it did not run (unknown tool, limit breach)."""


@dataclass(frozen=True)
class ExecuteTools:
    """Run the tool calls of ``response`` with the manager, over ``prompt`` (the turn's whole history).

    A streaming driver yields ``chunks`` first (the round's chunks held back until its end).
    """

    prompt: Prompt
    response: ChatResponse
    chunks: tuple[ChatClientResponse, ...] = ()


@dataclass(frozen=True)
class Finish:
    """The run ends with ``response``; a streaming driver yields ``chunks`` first (none when ``stream`` yields it)."""

    response: ChatClientResponse
    chunks: tuple[ChatClientResponse, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Pause(Finish):
    """The run waits for decisions: end it as a :class:`Finish`; ``state`` continues it (also in ``response``)."""

    state: RunState


Step = ExecuteTools | Finish


class RoundEngine:
    """The state and rules of one run of the tool loop (one request), with no I/O.

    Args:
        advisor: The tool advisor: settings (manager, checker, guards, history) and hooks.
        request: The request as it reached the advisor; its context may hold an ``on_event`` handler
            under :data:`~toolweave.events.ON_EVENT_CONTEXT_KEY`.
        chain: The chain the advisor got (passed to the hooks only).
        streaming: Use the streaming hooks and the chunk methods.

    The initialize hook runs here.
    """

    def __init__(
        self, advisor: ToolCallingAdvisor, request: ChatClientRequest, chain: Any, *, streaming: bool = False
    ) -> None:
        self.advisor = advisor
        self.chain = chain
        self.streaming = streaming
        self.emit: Callable[[RunEvent], None] | None = request.context.get(ON_EVENT_CONTEXT_KEY)
        self.pace: Callable[[], Awaitable[None]] | None = getattr(self.emit, 'drained', None)
        """The handler's ``drained()``, awaited by the streaming driver after each chunk (see ``events``)."""
        resumption = request.context.get(RESUME_CONTEXT_KEY)
        self._resumption = resumption if isinstance(resumption, Resumption) else None
        if self._resumption is not None:  # the run's own prompt, not the (empty) one of the resume request
            state = self._resumption.state
            request = request.with_prompt(Prompt(state.messages[: state.prompt_length], request.prompt.options))
        self._before: Callable[[ChatClientRequest, Any], ChatClientRequest]
        if streaming:
            self._before = advisor.do_before_stream
            request = advisor.do_initialize_loop_stream(request, chain)
        else:
            self._before = advisor.do_before_call
            request = advisor.do_initialize_loop(request, chain)
        self.request = request
        self.options = request.prompt.options
        self._round_options = self.options  # the options the ``before`` hook left for this round
        self.instructions: tuple[Message, ...] = request.prompt.messages
        self.history: tuple[Message, ...] = request.prompt.messages
        self.usage = UsageAccumulator()
        self.rounds = 0
        self._last_call: tuple[str, str] | None = None
        self._streak = 0
        self._response: ChatClientResponse | None = None  # the round whose tools run
        self._stream: _StreamRound | None = None
        self._listener: _ToolEvents | None = None
        self._final = False  # max_rounds reached: the next round is the last, without tools
        self._resumed: _Resumed | None = None  # the paused round being completed (after start())
        if self._resumption is not None:
            self._restore(self._resumption.state)

    # -- pause and resume ----------------------------------------------------------------------

    def _restore(self, state: RunState) -> None:
        """Continue where ``state`` stopped: history, rounds, usage, the guards' counts, advisor extras."""
        self.history = state.messages
        self.rounds = state.rounds
        if state.usage is not None:
            self.usage.add_round_response(ChatResponse((), usage=state.usage))
        if state.repeat is not None:
            self._last_call, self._streak = (state.repeat[0], state.repeat[1]), state.repeat[2]
        bound = self.advisor.max_rounds
        self._final = self.advisor.final_answer_on_max_rounds and bound is not None and self.rounds >= bound
        self.advisor.do_restore_run_state(self.request, state.extras)

    def start(self) -> ExecuteTools | Finish | None:
        """The first step: ``None`` for a new run (go to :meth:`next_request`).

        A resumed run first applies its decisions: denied and deferred calls get their responses,
        approved calls come back as ``ExecuteTools`` (then :meth:`on_tool_results`, which completes
        the paused round); with none approved the paused round completes here.
        """
        if self._resumption is None:
            return None
        state, decisions = self._resumption.state, self._resumption.decisions
        self._resumption = None
        asking = state.tool_call_message
        self._response = ChatClientResponse(ChatResponse((Generation(asking),)), self.request.context)
        answered = list(state.answered.responses)
        approved: list[ToolCall] = []
        for pending in state.pending:
            decision = decisions[pending.id]
            if isinstance(decision, Approve):
                approved.append(state.pending_call(pending.id))
                continue
            response = _decided(pending, decision)
            answered.append(response)
            if self.emit is not None:
                self.emit(ToolExecutionStarted(self.rounds, state.pending_call(pending.id)))
                self.emit(_tool_result(self.rounds, response, 0.0))
        self._resumed = _Resumed(state.messages[:-1], tuple(answered), state.return_direct, bool(approved))
        so_far = (*state.messages[:-1], ToolResponseMessage(tuple(answered)))
        if not approved:
            return self.on_tool_results(ToolExecutionResult(so_far))
        options = self.options
        if isinstance(options, ToolCallingChatOptions):
            ids = frozenset(call.id for call in approved)
            options = replace(options, tool_context={**options.tool_context, APPROVED_TOOL_CALLS_KEY: ids})
        batch = ChatResponse((Generation(AssistantMessage(None, tuple(approved))),))
        return ExecuteTools(Prompt(so_far, options), batch)

    def _complete_paused_round(self, result: ToolExecutionResult) -> ToolExecutionResult:
        """The resumed round's result: the asking message and every response, in call order."""
        resumed, self._resumed = self._resumed, None
        assert resumed is not None
        ran = _last_responses(result.conversation_history) if resumed.executed else ()
        by_id = {response.id: response for response in (*resumed.answered, *ran)}
        asking = resumed.base[-1]
        assert isinstance(asking, AssistantMessage)
        responses = tuple(by_id[call.id] for call in asking.tool_calls if call.id in by_id)
        folded = [
            d for d in (resumed.return_direct, result.return_direct if resumed.executed else None) if d is not None
        ]
        direct = bool(folded) and all(folded)
        return ToolExecutionResult((*resumed.base, ToolResponseMessage(responses)), direct)

    def _pause(self, result: ToolExecutionResult) -> Pause:
        """End this run with its state: the round's other calls ran, ``result.pending`` wait for decisions."""
        history = result.conversation_history
        ran = any(r.error_type not in _NOT_RUN for r in _last_responses(history))
        state = RunState(
            run_id=new_run_id(),
            messages=history,
            prompt_length=len(self.request.prompt.messages),
            rounds=self.rounds,
            usage=self.usage.accumulated_usage,
            pending=result.pending,
            return_direct=result.return_direct if ran else None,
            repeat=(*self._last_call, self._streak) if self._last_call is not None else None,
            extras=dict(self.advisor.do_save_run_state(self.request)),
        )
        assert self._response is not None
        calls = {call.id: call for call in _chat(self._response).tool_calls}
        waiting = tuple(calls[p.id] for p in result.pending if p.id in calls)
        generation = Generation(AssistantMessage(''), PAUSED_FINISH_REASON, {'pendingToolCalls': waiting})
        step = self._finish(self._with_generation(self._response, generation), paused=state)
        assert isinstance(step, Pause)
        return step

    # -- a round -------------------------------------------------------------------------------

    def next_request(self) -> ChatClientRequest:
        """Start a round: its request for the model, after the ``before`` hook."""
        self.rounds += 1
        if self.emit is not None:
            self.emit(RoundStarted(self.rounds))
        if self.streaming:
            self._stream = _StreamRound(self.rounds, self.emit, self.usage, self.request.context)
        request = self._before(self.request.with_prompt(Prompt(self.instructions, self.options)), self.chain)
        if request is None:
            raise TypeError(f'{type(self.advisor).__name__}.{self._before.__name__} returned None, not a request')
        self._round_options = _execution_options(request.prompt.options, self.options)
        options = request.prompt.options
        if self._final and isinstance(options, ToolCallingChatOptions):  # the last call: answer, no more tools
            request = request.with_prompt(Prompt(request.prompt.messages, replace(options, tool_choice='none')))
        return request

    def on_response(self, response: ChatClientResponse) -> Step:
        """A blocking round's whole response (``after`` hook, then the decision)."""
        response = self.advisor.do_after_call(response, self.chain)
        if self.emit is not None and response.chat_response is not None:
            for index, call in enumerate(response.chat_response.tool_calls):
                self.emit(ToolCallStarted(self.rounds, index, call.id, call.name))
        return self._decide(response)

    def on_chunk(self, chunk: ChatClientResponse) -> ChatClientResponse | None:
        """One streamed chunk (``after`` hook): the chunk to forward to the caller, or ``None`` to keep it.

        From the round's first chunk with tool calls or tool-call fragments on, chunks are held until
        the round ends (:meth:`on_stream_end` decides); a forwarded chunk that carries usage gets the
        earlier rounds' usage added.
        """
        chunk = self.advisor.do_after_stream(chunk, self.chain)
        assert self._stream is not None, 'on_chunk before next_request'
        return self._stream.add(chunk)

    def on_stream_end(self) -> Step:
        """The streamed round ended: decide on its aggregated response.

        The chunks held back since the round's first tool-call chunk come with the step (``chunks``):
        all of them when the checker says the round does not go to the tools (as a blocking call
        returns that response), else those without tool calls.
        """
        assert self._stream is not None, 'on_stream_end before next_request'
        response = self._stream.finish()
        eligible = self.advisor.eligibility_checker(response.chat_response)
        held = self._stream.release(keep_tool_calls=not eligible)
        step = self._decide(response, eligible=eligible)
        return replace(step, chunks=(*held, *step.chunks))

    def on_tool_results(self, result: ToolExecutionResult) -> Finish | None:
        """The manager ran the round's calls: end on ``return_direct``, else ``None`` (next round)."""
        response = self._response
        assert response is not None, 'on_tool_results without ExecuteTools'
        resumed = self._resumed is not None
        if resumed:
            result = self._complete_paused_round(result)
        elif self.emit is not None:
            self._report_unlistened(result.conversation_history)
        if result.pending:
            return self._pause(result)
        if result.return_direct:
            chat = replace(_chat(response), generations=result.build_generations())
            return self._finish(response.with_chat_response(chat))
        self.history = result.conversation_history
        self.instructions = self.advisor.do_get_next_instructions_for_tool_call(self.request, response, result)
        if resumed:
            self.instructions = _with_asking(self.instructions, self.history)
        return None

    def on_limit_breach(self, breach: ToolCallLimitExceededError) -> Finish:
        """The manager raised a limit breach: end with its one generation (Spring ``buildGeneration``)."""
        assert self._response is not None, 'on_limit_breach without ExecuteTools'
        self._resumed = None
        return self._finish(self._with_generation(self._response, breach.build_generation()))

    # -- I/O helpers the drivers use -----------------------------------------------------------

    def listening(self, loop: asyncio.AbstractEventLoop | None = None) -> ContextManager[None]:
        """Around the manager's work: report each tool call's start and result as events.

        Args:
            loop: The event loop the events must be emitted on (async drivers: calls that run in worker
                threads hand their events over to it); ``None`` emits in the calling thread.
        """
        if self.emit is None:
            return _NOT_LISTENING
        self._listener = _ToolEvents(self.rounds, self.emit, loop)
        return listening_to_tools(self._listener)

    # -- rules ---------------------------------------------------------------------------------

    def _decide(self, response: ChatClientResponse, *, eligible: bool | None = None) -> Step:
        chat = response.chat_response
        if eligible is None:
            eligible = self.advisor.eligibility_checker(chat)
        self.usage.add_round_response(chat)
        if self.emit is not None:
            self._round_finished(chat)
        if not eligible:
            return self._finish(response, natural=True)
        stop = self._guard(response)
        if stop is not None:
            return self._finish(stop)
        self._response = response
        return ExecuteTools(Prompt(self.history, self._round_options), _chat(response))

    def _guard(self, response: ChatClientResponse) -> ChatClientResponse | None:
        """A final response when ``max_rounds`` or the repetition check ends the loop, else ``None``."""
        chat = _chat(response)
        calls = chat.tool_calls
        if not self.advisor.execute_truncated_tool_calls and _cut_off(chat):
            text = (
                f'Tool-calling loop stopped: the model reached its output-token limit (finish reason length) '
                f'while asking for tools; {len(calls)} tool call(s) not executed, their arguments may be cut short.'
            )
            return self._stopped(response, text, LENGTH_FINISH_REASON, calls, {})
        bound = self.advisor.max_rounds
        if bound is not None and self.rounds >= bound and self.advisor.final_answer_on_max_rounds and not self._final:
            self._final = True  # these calls run, then one last model call without tools
        elif bound is not None and self.rounds >= bound:
            text = (
                f'Tool-calling loop stopped: the model still asked for tools after {self.rounds} rounds '
                f'(max_rounds={bound}).'
            )
            return self._stopped(response, text, MAX_ROUNDS_FINISH_REASON, calls, {})
        limit = self.advisor.max_identical_tool_calls
        if limit is None:
            return None
        for call in calls:
            key = (call.name, _canonical_arguments(call.arguments))
            self._streak = self._streak + 1 if key == self._last_call else 1
            self._last_call = key
            if self._streak >= limit:
                text = (
                    f"Tool-calling loop stopped: tool '{call.name}' was called {limit} times in a row "
                    'with identical arguments.'
                )
                extra = {'repeatedToolCall': call.name}
                return self._stopped(response, text, REPEATED_TOOL_CALL_FINISH_REASON, calls, extra)
        return None

    def _stopped(
        self,
        response: ChatClientResponse,
        text: str,
        finish_reason: str,
        calls: tuple[ToolCall, ...],
        extra: dict[str, Any],
    ) -> ChatClientResponse:
        generation = Generation(AssistantMessage(text), finish_reason, {'pendingToolCalls': calls, **extra})
        return self._with_generation(response, generation)

    @staticmethod
    def _with_generation(response: ChatClientResponse, generation: Generation) -> ChatClientResponse:
        return response.with_chat_response(replace(_chat(response), generations=(generation,)))

    def _finish(self, response: ChatClientResponse, *, natural: bool = False, paused: RunState | None = None) -> Finish:
        """The final response (usage summed, rounds counted), the finalize hook and ``RunFinished``.

        ``natural``: the model answered without tools. Streaming then yields nothing more than a usage
        correction (the chunks went out already); every other end yields the final response.
        ``paused``: the run pauses with this state (metadata ``runState``, event ``ApprovalRequested``).
        """
        final = response
        if response.chat_response is not None:
            chat = self.usage.apply_accumulated_usage(response.chat_response)
            extra = {RUN_STATE_METADATA_KEY: paused} if paused is not None else {}
            chat = replace(chat, metadata={**chat.metadata, 'toolCallingRounds': self.rounds, **extra})
            final = response.with_chat_response(chat)
        chunks: tuple[ChatClientResponse, ...] = ()
        if self.streaming:
            if not natural:
                chunks = (final,)
            elif response.chat_response is not None:
                correction = self.usage.emit_final_usage_correction_if_necessary(response.chat_response)
                chunks = (ChatClientResponse(correction, response.context),) if correction is not None else ()
            self.advisor.do_finalize_loop_stream(final, self.chain)
        else:
            final = self.advisor.do_finalize_loop(final, self.chain)
        if paused is not None:
            if self.emit is not None:
                self.emit(ApprovalRequested(self.rounds, paused.pending, paused))
            return Pause(final, chunks, state=paused)
        if self.emit is not None and final.chat_response is not None:
            self.emit(RunFinished(self.rounds, final.chat_response, final.chat_response.usage))
        return Finish(final, chunks)

    # -- events --------------------------------------------------------------------------------

    def _round_finished(self, chat: ChatResponse | None) -> None:
        assert self.emit is not None
        calls = chat.tool_calls if chat is not None else ()
        if self._stream is not None:
            self._stream.close_calls(calls)
        for index, call in enumerate(calls):
            self.emit(ToolCallReady(self.rounds, index, call, _parsed(call.arguments)))
        generation = chat.result if chat is not None else None
        finish_reason = generation.finish_reason if generation is not None else None
        self.emit(RoundFinished(self.rounds, finish_reason, chat.usage if chat is not None else None))

    def _report_unlistened(self, history: tuple[Message, ...]) -> None:
        """``ToolExecutionStarted``/``ToolResult`` for calls a manager did not report (answered without running)."""
        assert self.emit is not None and self._response is not None
        last = history[-1] if history else None
        if not isinstance(last, ToolResponseMessage):
            return
        reported = self._listener.reported if self._listener is not None else set()
        self._listener = None
        calls = {call.id: call for call in _chat(self._response).tool_calls}
        for response in last.responses:
            if response.id in reported or response.id not in calls:
                continue
            self.emit(ToolExecutionStarted(self.rounds, calls[response.id]))
            self.emit(_tool_result(self.rounds, response, 0.0))


class _StreamRound:
    """One streamed round: the aggregation, the chunks kept inside, and the delta events.

    Given what it uses of the engine, not the engine: the engine holds it, and a reference back would make a
    reference cycle per streamed request, left to the garbage collector.
    """

    def __init__(
        self,
        round_no: int,
        emit: Callable[[RunEvent], None] | None,
        usage: UsageAccumulator,
        context: dict[str, Any],
    ) -> None:
        self.round = round_no
        self.emit = emit
        self.usage = usage
        self.aggregator = ChatResponseAggregator()
        self.context = context
        self.calls: dict[int, _CallArguments] = {}
        self.whole = 0  # whole tool calls seen so far in this round
        self.held: list[ChatClientResponse] | None = None
        """From the first tool-call chunk on, the round's chunks wait for the checker's verdict (in order)."""

    def add(self, chunk: ChatClientResponse) -> ChatClientResponse | None:
        self.context = chunk.context
        chat = chunk.chat_response
        if chat is None and self.held is None:
            return chunk
        if chat is not None:
            self.aggregator.add(chat)
            if self.emit is not None:
                self._events(chat)
        if self.held is None and not _tool_call_chunk(chunk):
            return self._with_usage(chunk)
        if self.held is None:
            self.held = []
        self.held.append(chunk)
        return None

    def release(self, *, keep_tool_calls: bool) -> tuple[ChatClientResponse, ...]:
        """The held chunks to forward now: all (``keep_tool_calls``) or those without tool calls."""
        held, self.held = self.held or [], None
        return tuple(self._with_usage(c) for c in held if keep_tool_calls or not _tool_call_chunk(c))

    def _with_usage(self, chunk: ChatClientResponse) -> ChatClientResponse:
        """A chunk that carries usage gets the earlier rounds' usage added."""
        chat = chunk.chat_response
        if chat is None or chat.usage is None:
            return chunk
        return chunk.with_chat_response(self.usage.apply_previous_accumulated_usage_to_chunk(chat))

    def finish(self) -> ChatClientResponse:
        return ChatClientResponse(self.aggregator.result(), self.context)

    def _events(self, chat: ChatResponse) -> None:
        emit, round_no = self.emit, self.round
        assert emit is not None
        generation = chat.result
        if generation is not None:
            if generation.output.content:
                emit(TextDelta(round_no, generation.output.content))
            reasoning = generation.output.metadata.get('reasoning') if generation.output.metadata else None
            if isinstance(reasoning, str) and reasoning:
                emit(ReasoningDelta(round_no, reasoning))
        deltas: tuple[ToolCallDelta, ...] = chat.metadata.get(TOOL_CALL_DELTAS, ()) if chat.metadata else ()
        for delta in deltas:
            self._fragment(delta.index, delta.id or '', delta.name or '', delta.arguments)
        for call in chat.tool_calls:
            self._whole_call(call)

    def _fragment(self, index: int, call_id: str, name: str, arguments: str) -> None:
        emit, round_no = self.emit, self.round
        assert emit is not None
        state = self.calls.get(index)
        if state is None:
            state = self.calls[index] = _CallArguments()
            emit(ToolCallStarted(round_no, index, call_id, name))
        if arguments:
            emit(ToolCallArgumentsDelta(round_no, index, arguments, state.feed(arguments)))

    def _whole_call(self, call: ToolCall) -> None:
        """A whole call in a chunk: started now, or the rest of its arguments after its fragments."""
        index, self.whole = self.whole, self.whole + 1
        state = self.calls.get(index)
        if state is None:
            self._fragment(index, call.id, call.name, call.arguments)
        else:
            self._rest(index, state, call.arguments)

    def close_calls(self, calls: tuple[ToolCall, ...]) -> None:
        """Before ``ToolCallReady``: the argument text the fragments did not carry (when they were a prefix)."""
        for index, call in enumerate(calls):
            state = self.calls.get(index)
            if state is None:
                self._fragment(index, call.id, call.name, call.arguments)
            elif index >= self.whole:
                self._rest(index, state, call.arguments)

    def _rest(self, index: int, state: _CallArguments, arguments: str) -> None:
        emit = self.emit
        assert emit is not None
        seen = state.text
        if len(arguments) > len(seen) and arguments.startswith(seen):
            rest = arguments[len(seen) :]
            emit(ToolCallArgumentsDelta(self.round, index, rest, state.feed(rest)))


class _CallArguments:
    """The argument text of one streamed call so far, and its partial parse (see :func:`_partial_parser`)."""

    def __init__(self) -> None:
        self.text = ''
        self._parser = _partial_parser()

    def feed(self, fragment: str) -> Any:
        self.text += fragment
        return self._parser(fragment)


def _partial_parser() -> Callable[[str], Any]:
    """A function of the next argument fragment returning the arguments parsed so far (partial mode).

    ``None`` while the text so far is not the start of a JSON object. The one place that computes
    ``ToolCallArgumentsDelta.partial``: the core's incremental ``PartialArguments`` (each byte scanned
    once, the value updated in place) when this build has it, else a one-shot partial parse of the
    whole text so far per fragment.
    """
    if _PartialArguments is not None:
        parser = _PartialArguments()

        def feed_incremental(fragment: str) -> Any:
            try:
                return parser.feed(fragment)
            except ToolArgumentsError:
                return None

        return feed_incremental
    text: list[str] = []

    def feed(fragment: str) -> Any:
        text.append(fragment)
        try:
            return parse_arguments(''.join(text), 'partial')
        except ToolArgumentsError:
            return None

    return feed


class _ToolEvents:
    """The manager's listener for one round: ``ToolExecutionStarted``/``ToolResult`` with each call's duration.

    Thread-safe: calls that run in worker threads hand their events to ``loop`` (when given).
    """

    def __init__(self, round_no: int, emit: Callable[[RunEvent], None], loop: asyncio.AbstractEventLoop | None) -> None:
        self.round = round_no
        self.emit = emit
        self.loop = loop
        self.thread = threading.get_ident()
        self.starts: dict[int, float] = {}
        self.reported: set[str] = set()

    def started(self, call: ToolCall) -> None:
        self.starts[id(call)] = time.perf_counter()
        self._post(ToolExecutionStarted(self.round, call))

    def finished(self, call: ToolCall, response: ToolResponse) -> None:
        self.reported.add(call.id)
        start = self.starts.pop(id(call), None)
        duration = time.perf_counter() - start if start is not None else 0.0
        self._post(_tool_result(self.round, response, duration))

    def _post(self, event: RunEvent) -> None:
        if self.loop is None or threading.get_ident() == self.thread:
            self.emit(event)
        else:
            self.loop.call_soon_threadsafe(self.emit, event)


def _execution_options(round_options: ChatOptions | None, loop_options: ChatOptions | None) -> ChatOptions | None:
    """The options the manager runs a round's tools with: the ``before`` hook's, tools first.

    Tools the hook took away stay executable after the hook's own (a hook that narrows what the model
    is sent, as tool search does, must not make a tool the model names exactly unknown).
    """
    if round_options is loop_options:  # the hook left them (the common case)
        return round_options
    if not isinstance(round_options, ToolCallingChatOptions) or not isinstance(loop_options, ToolCallingChatOptions):
        return round_options
    names = {callback.tool_definition.name for callback in round_options.tool_callbacks}
    kept = tuple(c for c in loop_options.tool_callbacks if c.tool_definition.name not in names)
    return replace(
        round_options,
        tool_callbacks=(*round_options.tool_callbacks, *kept),
        tool_names=round_options.tool_names | loop_options.tool_names,
    )


_NOT_LISTENING: ContextManager[None] = nullcontext()


def _cut_off(chat: ChatResponse) -> bool:
    """A generation finished with ``length`` (any case), as ``chat.has_finish_reasons({'length'})``, without sets."""
    for generation in chat.generations:
        reason = generation.finish_reason
        if reason is not None and reason.lower() == LENGTH_FINISH_REASON:
            return True
    return False


def _tool_call_chunk(chunk: ChatClientResponse) -> bool:
    """A chunk with whole tool calls, or with tool-call fragments and no text."""
    chat = chunk.chat_response
    return chat is not None and (chat.has_tool_calls() or (TOOL_CALL_DELTAS in chat.metadata and not chat.text))


def _tool_result(round_no: int, response: ToolResponse, duration: float) -> ToolResult:
    return ToolResult(
        round_no, response.id, response.name, response.response_data, response.is_error, response.error_type, duration
    )


def _parsed(arguments: str) -> Any:
    """Complete arguments parsed (lenient mode), ``None`` when they are not a JSON object."""
    try:
        return parse_arguments(arguments or '{}', 'lenient')
    except ToolArgumentsError:
        return None


def _canonical_arguments(arguments: str) -> str:
    """Arguments compared by value: key order and spacing do not matter."""
    try:
        return orjson.dumps(orjson.loads(arguments or '{}'), option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONDecodeError:
        return arguments.strip()


@dataclass(frozen=True)
class _Resumed:
    """The paused round a resumed run completes: its messages up to the asking one, the answers so far."""

    base: tuple[Message, ...]
    answered: tuple[ToolResponse, ...]
    return_direct: bool | None
    executed: bool  # approved calls were handed to the manager


def _decided(pending: PendingToolCall, decision: Decision) -> ToolResponse:
    """The response of a call a person denied, or whose result was given (a deferred call's)."""
    if isinstance(decision, DeferredResult):
        value = decision.value
        text = value if isinstance(value, str) else DefaultToolCallResultConverter().convert(value, None)
        return ToolResponse(
            pending.id, pending.name, text, decision.is_error, 'DeferredResult' if decision.is_error else None
        )
    assert not isinstance(decision, Approve)
    return ToolResponse(pending.id, pending.name, decision.text(pending.name), True, DENIED_ERROR_TYPE)


def _last_responses(history: tuple[Message, ...]) -> tuple[ToolResponse, ...]:
    last = history[-1] if history else None
    return last.responses if isinstance(last, ToolResponseMessage) else ()


def _with_asking(instructions: tuple[Message, ...], history: tuple[Message, ...]) -> tuple[Message, ...]:
    """The next round's messages with the assistant message asking for the last tool responses before them.

    A resumed run sends it even without history: a memory advisor below stores the two together (the
    asking message could not wait in a request context across the pause).
    """
    if len(history) < 2 or not instructions or instructions[-1] is not history[-1]:
        return instructions
    asking = history[-2]
    if len(instructions) >= 2 and instructions[-2] is asking:
        return instructions
    return (*instructions[:-1], asking, instructions[-1])


def _chat(response: ChatClientResponse) -> ChatResponse:
    if response.chat_response is None:
        raise ValueError('the chain returned no ChatResponse for a tool-calling round')
    return response.chat_response
