"""``ToolCallingAdvisor``: the tool loop on the advisor chain (Spring AI 2.0 ``ToolCallingAdvisor``).

Blocking: a do-while that calls ``chain.copy(self).next_call`` each round, executes the tool calls
with the ``ToolCallingManager``, and stops when the checker says no tools are needed, on
``return_direct``, or on a tool-call limit breach. Streaming: the same rounds over
``chain.copy(self).next_stream`` (Spring recurses; we iterate); chunks are forwarded as they
arrive, except chunks with tool calls, which stay inside the loop. Usage is summed over rounds.

Hooks for subclasses (count rounds, audit, stop the loop): ``do_initialize_loop``,
``do_before_call``, ``do_after_call``, ``do_finalize_loop`` and their ``*_stream`` twins, plus
``do_get_next_instructions_for_tool_call``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

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
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import ChatResponseAggregator
from toolweave.exceptions import ToolCallLimitExceededError
from toolweave.tools.manager import DefaultToolCallingManager, ToolCallingManager, ToolExecutionResult

__all__ = ['TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON', 'ToolCallingAdvisor']

TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON = 'toolCallLimitExceeded'


class ToolCallingAdvisor(CallAdvisor, StreamAdvisor):
    """Runs the tool-calling rounds of one request.

    Args:
        tool_calling_manager: Executes tool calls (default :class:`DefaultToolCallingManager`).
        order: Chain position, strictly between ``HIGHEST_PRECEDENCE`` and ``LOWEST_PRECEDENCE``
            (default ``HIGHEST_PRECEDENCE + 300``: inside memory advisors, outside everything else).
        conversation_history_enabled: Send the full history each round; when ``False`` only the
            system message and the last message (a downstream memory advisor rebuilds the rest).
        eligibility_checker: Decides whether a round's response goes to the tools.

    Raises:
        ValueError: ``order`` is not strictly between the bounds.
    """

    DEFAULT_ORDER = HIGHEST_PRECEDENCE + 300

    def __init__(
        self,
        tool_calling_manager: ToolCallingManager | None = None,
        *,
        order: int = DEFAULT_ORDER,
        conversation_history_enabled: bool = True,
        eligibility_checker: ToolExecutionEligibilityChecker | None = None,
    ) -> None:
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
            round_request = self.do_before_call(loop.round_request(), chain)
            response = self.do_after_call(chain.copy(self).next_call(round_request), chain)
            if not loop.needs_tools(response):
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
            round_request = self.do_before_call(loop.round_request(), chain)
            response = self.do_after_call(await chain.copy(self).anext_call(round_request), chain)
            if not loop.needs_tools(response):
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
            round_request = self.do_before_stream(loop.round_request(), chain)
            aggregator = ChatResponseAggregator()
            last_context = round_request.context
            async for chunk in chain.copy(self).next_stream(round_request):
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
            try:
                result = await self.tool_calling_manager.aexecute_tool_calls(loop.turn_prompt(), _chat(aggregated))
            except ToolCallLimitExceededError as breach:
                yield loop.finish(loop.limit_response(aggregated, breach))
                return
            if result.return_direct:
                yield loop.finish(loop.return_direct_response(aggregated, result))
                return
            loop.advance(result, self.do_get_next_instructions_for_tool_call(request, aggregated, result))

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


def _chat(response: ChatClientResponse) -> ChatResponse:
    if response.chat_response is None:
        raise ValueError('the chain returned no ChatResponse for a tool-calling round')
    return response.chat_response
