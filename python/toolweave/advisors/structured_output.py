"""``StructuredOutputAdvisor``: structured output's validation retry loop (Spring ``StructuredOutputValidationAdvisor``).

It sits inside the tool loop (just above the model advisor), so it sees every model round. A round
that calls tools passes through; the round that answers is validated against the output type
(:class:`~toolweave.structured.OutputType`): the answer text (``'native'``, ``'prompted'``) or the output
tool's arguments (``'tool'``). When it does not validate, the errors go back to the model (a user
message, or the output tool's error result) and the round is asked again, up to ``max_retries`` times
(default 2); then :class:`~toolweave.structured.StructuredOutputValidationError` carries the last raw
answer and its errors. The answered round's usage is the sum over its attempts, so the run's usage sums
every attempt. In streaming, an attempt's chunks are held until it validates (a failed attempt never
reaches the tool loop's aggregation) and partial values go to ``on_partial`` as the JSON arrives.

One advisor serves one run (it keeps the run's attempts and result): ``ChatClientRequestSpec.entity``
makes a new one per run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from toolweave.advisors.api import (
    LOWEST_PRECEDENCE,
    CallAdvisor,
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisor,
    StreamAdvisorChain,
)
from toolweave.advisors.usage import UsageAccumulator
from toolweave.chat.messages import AssistantMessage, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.chat.response import ChatResponse
from toolweave.chat.stream import TOOL_CALL_DELTAS, ChatResponseAggregator
from toolweave.structured import (
    OUTPUT_TOOL_NAME,
    OutputType,
    OutputValidationError,
    ResponseEntity,
    Strategy,
    StructuredOutputError,
    StructuredOutputValidationError,
)

__all__ = ['StructuredOutputAdvisor', 'arun_entity', 'run_entity', 'stream_entity']

T = TypeVar('T')

_FEEDBACK = (
    'Your answer did not match the required JSON schema:\n{errors}\n'
    'Answer again with only the corrected JSON, following the schema exactly.'
)
_TOOL_FEEDBACK = 'Invalid final_result arguments:\n{errors}\nCall final_result again with corrected arguments.'
_CALL_THE_TOOL = 'Give your final answer by calling the final_result tool.'


@dataclass(frozen=True)
class _Answer:
    """The part of a round's response that is validated: its raw text and, for the output tool, the call."""

    raw: str
    call_id: str | None


class StructuredOutputAdvisor(CallAdvisor, StreamAdvisor, Generic[T]):
    """Validates the answer round against ``output`` and asks again with the errors (Spring-style retry loop).

    Args:
        output: The output type.
        strategy: How the request asked for it (decides what is validated: text or the output tool's arguments).
        max_retries: Answers re-asked after the first invalid one (default 2; 0 validates once).
        order: Chain position (default ``LOWEST_PRECEDENCE - 1000``: inside the tool loop, every round).
        on_partial: Called with each new validated partial value while a streamed answer arrives.

    Raises:
        ValueError: ``max_retries`` is negative.
    """

    def __init__(
        self,
        output: OutputType[T],
        strategy: Strategy,
        max_retries: int = 2,
        *,
        order: int = LOWEST_PRECEDENCE - 1000,
        on_partial: Callable[[T], None] | None = None,
    ) -> None:
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError(f'max_retries must be an int >= 0, got {max_retries!r}')
        self.output = output
        self.strategy = strategy
        self.max_retries = max_retries
        self._order = order
        self._on_partial = on_partial
        self.value: T | None = None
        """The validated value of the run's answer (``None`` until a round answered)."""
        self.answered = False

    @property
    def order(self) -> int:
        """Chain position."""
        return self._order

    # -- rules shared by the three paths ---------------------------------------------------------

    def _answer(self, chat: ChatResponse | None) -> _Answer | None:
        """What to validate in this round, or ``None`` when the round calls tools (the loop goes on)."""
        message = chat.generations[0].output if chat is not None and chat.generations else AssistantMessage('')
        calls = message.tool_calls
        if self.strategy == 'tool' and len(calls) == 1 and calls[0].name == OUTPUT_TOOL_NAME:
            return _Answer(calls[0].arguments, calls[0].id)
        if calls:
            return None
        return _Answer(message.text, None)

    def _check(
        self, request: ChatClientRequest, chat: ChatResponse | None, attempt: int, usage: UsageAccumulator
    ) -> ChatClientRequest | None:
        """``None`` when the round may go up the chain, else the request of the next attempt.

        Raises:
            StructuredOutputValidationError: the answer is invalid and ``max_retries`` re-asks are spent.
        """
        answer = self._answer(chat)
        if answer is None:
            return None
        try:
            if self.strategy == 'tool' and answer.call_id is None and not answer.raw.strip():
                raise OutputValidationError(['no final_result call and no JSON answer'])
            self.value = self.output.validate(answer.raw)
            self.answered = True
            return None
        except OutputValidationError as invalid:
            if attempt >= self.max_retries:
                summed = usage.accumulated_usage
                raise StructuredOutputValidationError(answer.raw, invalid.errors, attempt + 1, summed) from invalid
            return self._retry(request, chat, answer, invalid.errors)

    def _retry(
        self, request: ChatClientRequest, chat: ChatResponse | None, answer: _Answer, errors: list[str]
    ) -> ChatClientRequest:
        """The request again, with the invalid answer and the errors after it."""
        listed = '\n'.join(f'- {e}' for e in errors)
        message = chat.generations[0].output if chat is not None and chat.generations else AssistantMessage('')
        if answer.call_id is not None:
            text = _TOOL_FEEDBACK.format(errors=listed)
            feedback: tuple[Any, ...] = (
                message,
                ToolResponseMessage((ToolResponse(answer.call_id, OUTPUT_TOOL_NAME, text, True, 'ValidationError'),)),
            )
        else:
            text = _FEEDBACK.format(errors=listed)
            if self.strategy == 'tool':
                text = f'{text}\n{_CALL_THE_TOOL}'
            feedback = (AssistantMessage(answer.raw), UserMessage(text))
        prompt = request.prompt.with_messages((*request.prompt.messages, *feedback))
        return request.with_prompt(prompt)

    @staticmethod
    def _summed(usage: UsageAccumulator, response: ChatClientResponse) -> ChatClientResponse:
        chat = response.chat_response
        if chat is None or usage.rounds < 2:
            return response
        return ChatClientResponse(usage.apply_accumulated_usage(chat), response.context)

    # -- paths -----------------------------------------------------------------------------------

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Call the model; validate an answer round; re-ask with the errors while the budget lasts."""
        usage = UsageAccumulator()
        attempt = 0
        while True:
            response = chain.next_call(request)
            usage.add_round_response(response.chat_response)
            again = self._check(request, response.chat_response, attempt, usage)
            if again is None:
                return self._summed(usage, response)
            request, attempt = again, attempt + 1

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Async :meth:`advise_call`."""
        usage = UsageAccumulator()
        attempt = 0
        while True:
            response = await chain.anext_call(request)
            usage.add_round_response(response.chat_response)
            again = self._check(request, response.chat_response, attempt, usage)
            if again is None:
                return self._summed(usage, response)
            request, attempt = again, attempt + 1

    async def advise_stream(
        self, request: ChatClientRequest, chain: StreamAdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Stream each attempt, holding its chunks until it validates; report partial values as they arrive."""
        usage = UsageAccumulator()
        attempt = 0
        while True:
            held: list[ChatClientResponse] = []
            aggregator = ChatResponseAggregator()
            partials = _Partials(self)
            async for response in chain.next_stream(request):
                held.append(response)
                if response.chat_response is not None:
                    aggregator.add(response.chat_response)
                    partials.feed(response.chat_response)
            round_response = aggregator.result()
            usage.add_round_response(round_response)
            again = self._check(request, round_response, attempt, usage)
            if again is None:
                for index, response in enumerate(held):
                    last = index == len(held) - 1
                    yield self._summed(usage, response) if last and response.chat_response is not None else response
                return
            request, attempt = again, attempt + 1

    def listen(self, on_partial: Callable[[T], None] | None) -> None:
        """Set (or clear) the partial-value listener."""
        self._on_partial = on_partial

    def partial(self, value: T) -> None:
        """Hand a partial value to ``on_partial`` (if any)."""
        if self._on_partial is not None:
            self._on_partial(value)

    def result(self) -> T:
        """The run's validated value.

        Raises:
            StructuredOutputError: the run ended without an answer round (e.g. a ``return_direct`` tool ended it).
        """
        if not self.answered:
            raise StructuredOutputError('the run ended without a structured answer (a return_direct tool ended it?)')
        return self.value  # type: ignore[return-value]


def run_entity(
    request: ChatClientRequest, chain: CallAdvisorChain, advisor: StructuredOutputAdvisor[T]
) -> ResponseEntity[T]:
    """Run ``chain`` (which holds ``advisor``) on ``request``; the validated value and the final response.

    Raises:
        StructuredOutputValidationError: the retry budget ran out.
        StructuredOutputError: the run ended without an answer round.
    """
    response = chain.next_call(request)
    return ResponseEntity(advisor.result(), response.chat_response)


async def arun_entity(
    request: ChatClientRequest, chain: CallAdvisorChain, advisor: StructuredOutputAdvisor[T]
) -> ResponseEntity[T]:
    """Async :func:`run_entity`."""
    response = await chain.anext_call(request)
    return ResponseEntity(advisor.result(), response.chat_response)


_END = object()


async def stream_entity(
    request: ChatClientRequest, chain: StreamAdvisorChain, advisor: StructuredOutputAdvisor[T]
) -> AsyncIterator[T]:
    """Stream the run; yield each new validated partial value as the JSON arrives, the validated value last.

    A value equal to the one yielded before is not yielded again. When an answer fails validation and is
    asked again, the partial values start over from the new answer.

    Raises:
        StructuredOutputValidationError: the retry budget ran out.
        StructuredOutputError: the run ended without an answer round.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()
    advisor.listen(queue.put_nowait)

    async def drive() -> None:
        try:
            async for _ in chain.next_stream(request):
                pass
        finally:
            queue.put_nowait(_END)

    task = asyncio.ensure_future(drive())
    last: Any = _END
    try:
        while (item := await queue.get()) is not _END:
            last = item
            yield item
        await task  # the run's error, if any
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        advisor.listen(None)
    final = advisor.result()
    if final != last:
        yield final


class _Partials:
    """Follows one streamed attempt: text deltas (or the output tool's argument fragments) -> partial values."""

    def __init__(self, advisor: StructuredOutputAdvisor[Any]) -> None:
        self._advisor = advisor
        self._text: list[str] = []
        self._tool_index: int | None = None
        self._last: Any = None

    def feed(self, chunk: ChatResponse) -> None:
        if self._advisor._on_partial is None:
            return
        before = len(self._text)
        if self._advisor.strategy == 'tool':
            for delta in chunk.metadata.get(TOOL_CALL_DELTAS, ()):
                if delta.name == OUTPUT_TOOL_NAME:
                    self._tool_index = delta.index
                if delta.index == self._tool_index and delta.arguments:
                    self._text.append(delta.arguments)
        elif chunk.generations and chunk.generations[0].output.content:
            self._text.append(chunk.generations[0].output.content)
        if len(self._text) == before:
            return
        value = self._advisor.output.partial(''.join(self._text))
        if value is not None and value != self._last:
            self._last = value
            self._advisor.partial(value)
