"""The activities of a durable run: one model round, one tool call, the memory's load and store, a tool-search session.

Each runs in a worker process with the objects of its :class:`~toolweave.durable.DurableRegistry`.
Failures cross to the workflow as Temporal ``ApplicationError``s typed by the toolweave class name
(``AuthenticationError``, ``ContextLengthError``, ...); the types of
:data:`~toolweave.durable._registry.NON_RETRYABLE` are never retried. A tool's own failure is not an
activity failure: it returns as a :class:`~toolweave.durable._records.ToolOutcome`, and the workflow's
tool-calling manager answers the model with it exactly as in-process (unless the tool's
:class:`~toolweave.durable.ToolRetry` asks Temporal to retry it first).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from toolweave.advisors._rounds import RoundEngine
from toolweave.advisors.api import ChatClientRequest, ChatClientResponse
from toolweave.advisors.memory import MessageChatMemoryAdvisor
from toolweave.advisors.tool_calling import ToolCallingAdvisor
from toolweave.advisors.tool_search import ToolSearchToolCallingAdvisor
from toolweave.approvals import ApprovalRequired, approved_scope, reset_approved
from toolweave.chat.content import Media
from toolweave.chat.messages import ToolCall
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse
from toolweave.chat.stream import ChatResponseAggregator
from toolweave.durable._codec import from_json_value, to_json_value
from toolweave.durable._records import (
    MemoryCall,
    ModelAnswer,
    ModelCall,
    SearchScope,
    SearchSession,
    ToolInvocation,
    ToolOutcome,
)
from toolweave.durable._registry import NON_RETRYABLE, DurableRegistry
from toolweave.events import (
    ON_EVENT_CONTEXT_KEY,
    ReasoningDelta,
    RunEvent,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStarted,
)
from toolweave.exceptions import InvalidToolArgumentsError, ProviderError, RateLimitError, ToolExecutionError
from toolweave.memory.base import DEFAULT_CONVERSATION_ID
from toolweave.search._search_tool import ToolSearchTool
from toolweave.tools._concurrent import call_async
from toolweave.tools.context import ToolContext, tool_call_scope
from toolweave.tools.converter import content_parts
from toolweave.tools.definition import ToolDefinition, ToolMetadata
from toolweave.tools.retry import is_invalid_arguments

__all__ = [
    'DELTAS_SIGNAL',
    'MEMORY_AFTER',
    'MEMORY_BEFORE',
    'MODEL_CALL',
    'SEARCH_SESSION',
    'TOOL_CALL',
    'ToolweaveActivities',
    'option_fields',
    'options_of',
]

MODEL_CALL = 'toolweave.model_call'
TOOL_CALL = 'toolweave.tool_call'
MEMORY_BEFORE = 'toolweave.memory_before'
MEMORY_AFTER = 'toolweave.memory_after'
SEARCH_SESSION = 'toolweave.search_session'
DELTAS_SIGNAL = 'deltas'
"""The workflow signal a streaming model round sends its delta events with (tagged JSON, in order)."""
TOO_LARGE = 'ToolResultTooLargeError'
"""``error_type`` of a tool result longer than the registry's ``max_tool_result_bytes``."""

_OPTION_FIELDS = ('model', 'temperature', 'max_tokens', 'top_p', 'stop', 'seed', 'extra_body', 'output_schema')
_DELTA_EVENTS = (TextDelta, ReasoningDelta, ToolCallStarted, ToolCallArgumentsDelta)
_DELTA_INTERVAL = 0.05
"""Seconds a streaming round gathers delta events before it sends them (one signal each time)."""
_TOOL_OPTION_FIELDS = ('tool_choice', 'parallel_tool_calls')


def options_of(options: ChatOptions | None) -> dict[str, Any]:
    """The JSON fields of ``options`` that travel with a round (the tools travel by name)."""
    if options is None:
        return {}
    names = _OPTION_FIELDS + (_TOOL_OPTION_FIELDS if isinstance(options, ToolCallingChatOptions) else ())
    return {name: to_json_value(getattr(options, name)) for name in names if getattr(options, name) not in (None, {})}


def option_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The ``ChatOptions`` fields :func:`options_of` gave ``data`` from."""
    return {name: from_json_value(value) for name, value in data.items()}


class ToolweaveActivities:
    """The activities bound to one registry (give :meth:`all` to the Temporal ``Worker``)."""

    def __init__(self, registry: DurableRegistry) -> None:
        self.registry = registry

    def all(self) -> list[Any]:
        """Every activity of a durable run."""
        return [self.model_call, self.tool_call, self.memory_before, self.memory_after, self.search_session]

    @activity.defn(name=MODEL_CALL)
    async def model_call(self, call: ModelCall) -> ModelAnswer:
        """One model round of the registered model, with the tools offered: ``acall``, or streamed with ``deltas``."""
        entry = self.registry.model(call.model)
        callbacks = tuple(self.registry.tool(name).callback for name in call.tools)
        offered = (*callbacks, *(_Offered(ToolDefinition(**d)) for d in call.definitions))
        options = ToolCallingChatOptions(tool_callbacks=offered, **option_fields(call.options))
        prompt = Prompt(tuple(from_json_value(call.messages)), options)
        try:
            async with _heartbeating(self.registry.heartbeat_timeout / 3):  # as a tool call: a lost worker is seen
                response = await (
                    _streamed(entry.model, prompt, call.round) if call.deltas else entry.model.acall(prompt)
                )
        except ProviderError as error:
            raise provider_failure(error) from None
        return ModelAnswer(response=to_json_value(response))

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, invocation: ToolInvocation) -> ToolOutcome:
        """One tool call, heartbeating while it runs; its failure comes back as an outcome (see the module)."""
        entry = self.registry.tool(invocation.tool) if invocation.search is None else None
        callback = entry.callback if entry is not None else self._search_tool(invocation.search)
        attempts = entry.retry.attempts if entry is not None else 1
        context = ToolContext({k: from_json_value(v) for k, v in invocation.context.items()})
        started = time.perf_counter()
        try:
            async with _heartbeating(self.registry.heartbeat_timeout / 3):
                call = ToolCall(invocation.call_id, 'function', invocation.tool, invocation.arguments)
                with tool_call_scope(call), _approved(invocation.call_id if invocation.approved else None):
                    text = await call_async(callback, invocation.arguments, context, invocation.timeout)
        except ApprovalRequired as request:  # the workflow's manager holds the call for a decision
            return ToolOutcome(error_type=type(request).__name__, message=request.reason)
        except ToolExecutionError as error:
            last = activity.info().attempt >= attempts
            if entry is not None and entry.retry.retry_errors and not last and not is_invalid_arguments(error):
                raise ApplicationError(str(error), type=type(error.cause).__name__) from None
            return _failed(error, time.perf_counter() - started)
        media = content_parts(text)
        size = len(text.encode('utf-8', 'replace')) + sum(_carried_bytes(part) for part in media)
        if size > self.registry.max_tool_result_bytes:
            message = (
                f"Tool '{invocation.tool}' returned {size} bytes, more than a durable run carries "
                f'(max_tool_result_bytes={self.registry.max_tool_result_bytes}).'
            )
            return ToolOutcome(error_type=TOO_LARGE, message=message, duration=time.perf_counter() - started)
        carried = [to_json_value(part) for part in media]
        return ToolOutcome(text=str(text), media=carried, duration=time.perf_counter() - started)

    @activity.defn(name=SEARCH_SESSION)
    async def search_session(self, session: SearchSession) -> list[str]:
        """A run's tool-search session: its tools indexed (``index``), ``add`` recorded; every name it holds."""
        advisor, session_id = self._search_loop(session.scope), session.scope.session_id

        def work() -> list[str]:
            if session.index:
                definitions = self._definitions(session.scope)
                with advisor.sessions.using_index(session_id, definitions, advisor.tool_index_factory):
                    pass
            if session.add:
                advisor.sessions.add(session_id, session.add)
            return list(advisor.sessions.discovered(session_id))

        return await asyncio.to_thread(work)

    def _search_loop(self, scope: SearchScope) -> ToolSearchToolCallingAdvisor:
        advisor = self.registry.loop(scope.loop)
        if not isinstance(advisor, ToolSearchToolCallingAdvisor):
            raise ApplicationError(f'loop {scope.loop!r} is not a ToolSearchToolCallingAdvisor', type='TypeError')
        return advisor

    def _definitions(self, scope: SearchScope) -> tuple[ToolDefinition, ...]:
        return tuple(self.registry.tool(name).callback.tool_definition for name in scope.tools)

    def _search_tool(self, scope: SearchScope | None) -> ToolSearchTool:
        """The registered loop's search tool over its sessions (as its ``do_initialize_loop`` makes it)."""
        assert scope is not None
        advisor = self._search_loop(scope)
        return ToolSearchTool(
            advisor.search_tool_name,
            advisor.max_results,
            advisor.sessions,
            scope.session_id,
            self._definitions(scope),
            advisor.tool_index_factory,
        )

    @activity.defn(name=MEMORY_BEFORE)
    async def memory_before(self, call: MemoryCall) -> MemoryCall:
        """``MessageChatMemoryAdvisor.before``: the history prepended, the user message stored."""
        advisor = MessageChatMemoryAdvisor(self.registry.memory(call.memory))
        request = ChatClientRequest(Prompt(tuple(from_json_value(call.messages))))
        conversation = call.conversation_id or DEFAULT_CONVERSATION_ID
        merged = await asyncio.to_thread(advisor.before, request, conversation)
        return call.model_copy(update={'messages': to_json_value(list(merged.prompt.messages))})

    @activity.defn(name=MEMORY_AFTER)
    async def memory_after(self, call: MemoryCall) -> None:
        """``MessageChatMemoryAdvisor.after``: the final answer stored."""
        advisor = MessageChatMemoryAdvisor(self.registry.memory(call.memory))
        response = from_json_value(call.response)
        if isinstance(response, ChatResponse):
            conversation = call.conversation_id or DEFAULT_CONVERSATION_ID
            await asyncio.to_thread(advisor.after, ChatClientResponse(response), conversation, {})


def provider_failure(error: ProviderError) -> ApplicationError:
    """A provider error as an activity failure of the same type name (non-retryable: see ``NON_RETRYABLE``)."""
    kind = type(error).__name__
    delay = None
    if isinstance(error, RateLimitError) and error.retry_after is not None:
        delay = timedelta(seconds=error.retry_after)
    return ApplicationError(
        str(error),
        {'status_code': error.status_code, 'provider': error.provider},
        type=kind,
        non_retryable=kind in NON_RETRYABLE,
        next_retry_delay=delay,
    )


class _Offered:
    """A tool offered to the model by definition only (the workflow runs it, not this activity)."""

    def __init__(self, definition: ToolDefinition) -> None:
        self.tool_definition = definition
        self.tool_metadata = ToolMetadata()

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Not run here."""
        raise TypeError(f'{self.tool_definition.name} is run by the workflow')

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Not run here."""
        raise TypeError(f'{self.tool_definition.name} is run by the workflow')


async def _streamed(model: Any, prompt: Prompt, round_no: int) -> ChatResponse:
    """The round streamed: its chunks aggregated, its delta events sent to the workflow as they come.

    The events are those of the in-process streaming loop (the engine's own streaming round makes them:
    ``TextDelta``, ``ReasoningDelta``, ``ToolCallStarted``, ``ToolCallArgumentsDelta``), sent every
    ``_DELTA_INTERVAL`` seconds and at the end, each batch awaited before the next, so they are in the
    history before the round's result.
    """
    batch: list[RunEvent] = []

    def collect(event: RunEvent) -> None:
        if isinstance(event, _DELTA_EVENTS):
            batch.append(event)

    info = activity.info()
    assert info.workflow_id is not None, 'a model round runs in a workflow'
    handle = activity.client().get_workflow_handle(info.workflow_id, run_id=info.workflow_run_id)

    async def send() -> None:
        if batch:
            events = [to_json_value(e) for e in batch]
            batch.clear()
            await handle.signal(DELTAS_SIGNAL, events)

    engine = RoundEngine(
        ToolCallingAdvisor(), ChatClientRequest(prompt, {ON_EVENT_CONTEXT_KEY: collect}), None, streaming=True
    )
    engine.rounds = round_no - 1
    engine.next_request()
    aggregator = ChatResponseAggregator()
    sent = time.monotonic()
    async for chunk in model.stream(prompt):
        aggregator.add(chunk)
        engine.on_chunk(ChatClientResponse(chunk))
        if time.monotonic() - sent >= _DELTA_INTERVAL:
            await send()
            sent = time.monotonic()
    engine.on_stream_end()  # the rest of the arguments the fragments did not carry
    await send()
    return aggregator.result()


def _failed(error: ToolExecutionError, duration: float) -> ToolOutcome:
    cause = error.cause
    problems = list(cause.problems) if isinstance(cause, InvalidToolArgumentsError) else []
    return ToolOutcome(error_type=type(cause).__name__, message=str(error), problems=problems, duration=duration)


@contextlib.contextmanager
def _approved(call_id: str | None) -> Iterator[None]:
    """Inside the block, ``tool_call_approved()`` is true for ``call_id`` (a person approved it)."""
    if call_id is None:
        yield
        return
    token = approved_scope(frozenset({call_id}))
    try:
        yield
    finally:
        reset_approved(token)


@contextlib.asynccontextmanager
async def _heartbeating(every: float) -> AsyncIterator[None]:
    """Heartbeat every ``every`` seconds inside the block (a dead worker's call is then retried quickly)."""

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(every)

    task = asyncio.ensure_future(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _carried_bytes(part: Media) -> int:
    """Bytes a content part takes in the payload: its base64 text (4 per 3 bytes), or its URL."""
    if isinstance(part.data, str):
        return len(part.data.encode('utf-8', 'replace'))
    return (len(part.data) + 2) // 3 * 4
