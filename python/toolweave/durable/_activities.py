"""The activities of a durable run: one model round, one tool call, the memory's load and store.

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

from toolweave.advisors.api import ChatClientRequest, ChatClientResponse
from toolweave.advisors.memory import MessageChatMemoryAdvisor
from toolweave.approvals import ApprovalRequired, approved_scope, reset_approved
from toolweave.chat.messages import ToolCall
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse
from toolweave.durable._codec import from_json_value, to_json_value
from toolweave.durable._records import MemoryCall, ModelAnswer, ModelCall, ToolInvocation, ToolOutcome
from toolweave.durable._registry import NON_RETRYABLE, DurableRegistry
from toolweave.exceptions import InvalidToolArgumentsError, ProviderError, RateLimitError, ToolExecutionError
from toolweave.memory.base import DEFAULT_CONVERSATION_ID
from toolweave.tools._concurrent import call_async
from toolweave.tools.context import ToolContext, tool_call_scope
from toolweave.tools.retry import is_invalid_arguments

__all__ = [
    'MEMORY_AFTER',
    'MEMORY_BEFORE',
    'MODEL_CALL',
    'TOOL_CALL',
    'ToolweaveActivities',
    'option_fields',
    'options_of',
]

MODEL_CALL = 'toolweave.model_call'
TOOL_CALL = 'toolweave.tool_call'
MEMORY_BEFORE = 'toolweave.memory_before'
MEMORY_AFTER = 'toolweave.memory_after'
TOO_LARGE = 'ToolResultTooLargeError'
"""``error_type`` of a tool result longer than the registry's ``max_tool_result_bytes``."""

_OPTION_FIELDS = ('model', 'temperature', 'max_tokens', 'top_p', 'stop', 'seed', 'extra_body')
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
        return [self.model_call, self.tool_call, self.memory_before, self.memory_after]

    @activity.defn(name=MODEL_CALL)
    async def model_call(self, call: ModelCall) -> ModelAnswer:
        """One model round (``acall``) of the registered model, with the registered tools offered."""
        entry = self.registry.model(call.model)
        callbacks = tuple(self.registry.tool(name).callback for name in call.tools)
        options = ToolCallingChatOptions(tool_callbacks=callbacks, **option_fields(call.options))
        prompt = Prompt(tuple(from_json_value(call.messages)), options)
        try:
            response = await entry.model.acall(prompt)
        except ProviderError as error:
            raise provider_failure(error) from None
        return ModelAnswer(response=to_json_value(response))

    @activity.defn(name=TOOL_CALL)
    async def tool_call(self, invocation: ToolInvocation) -> ToolOutcome:
        """One tool call, heartbeating while it runs; its failure comes back as an outcome (see the module)."""
        entry = self.registry.tool(invocation.tool)
        context = ToolContext({k: from_json_value(v) for k, v in invocation.context.items()})
        started = time.perf_counter()
        try:
            async with _heartbeating(self.registry.heartbeat_timeout / 3):
                call = ToolCall(invocation.call_id, 'function', invocation.tool, invocation.arguments)
                with tool_call_scope(call), _approved(invocation.call_id if invocation.approved else None):
                    text = await call_async(entry.callback, invocation.arguments, context, invocation.timeout)
        except ApprovalRequired as request:  # the workflow's manager holds the call for a decision
            return ToolOutcome(error_type=type(request).__name__, message=request.reason)
        except ToolExecutionError as error:
            last = activity.info().attempt >= entry.retry.attempts
            if entry.retry.retry_errors and not last and not is_invalid_arguments(error):
                raise ApplicationError(str(error), type=type(error.cause).__name__) from None
            return _failed(error, time.perf_counter() - started)
        size = len(text.encode('utf-8', 'replace'))
        if size > self.registry.max_tool_result_bytes:
            message = (
                f"Tool '{invocation.tool}' returned {size} bytes, more than a durable run carries "
                f'(max_tool_result_bytes={self.registry.max_tool_result_bytes}).'
            )
            return ToolOutcome(error_type=TOO_LARGE, message=message, duration=time.perf_counter() - started)
        return ToolOutcome(text=text, duration=time.perf_counter() - started)

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
