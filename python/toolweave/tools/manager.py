"""``ToolCallingManager``: executes one model turn's tool calls (Spring AI ``DefaultToolCallingManager``).

Per call, in order: the limit check (before lookup; every call counts, see :mod:`toolweave.tools.limits`);
empty arguments -> ``"{}"``; lookup in the request's tools, then the resolver (only with
``resolution_fallback_enabled``); an unknown name raises ``LookupError`` (Spring) or, with
``UnknownToolBehavior.RETURN_ERROR_RESPONSE``, is answered with the available tools; one
OpenTelemetry span (``execute_tool <name>``, GenAI conventions); the call; failures through the
exception processor; ``None``-free response text. Text that UTF-8 cannot encode (lone surrogates,
e.g. a file name from ``os.listdir`` that is not UTF-8) becomes U+FFFD in the arguments a tool
receives, the responses and the span attributes, so it never breaks the next request, a memory row
or an exporter. ``return_direct`` is folded with AND over the calls that ran (``False`` when none
ran). The history returned is the prompt's messages + the assistant message + one
``ToolResponseMessage`` in tool-call order. A limit breach with ``THROW`` raises
``ToolCallLimitExceededError`` carrying that history up to the breach.

Approvals (:mod:`toolweave.approvals`): after lookup, a call of a deferred tool, or of a tool whose
``requires_approval`` holds for it, does not run unless its id is among the approved ones (tool
context key ``APPROVED_TOOL_CALLS_KEY``); a tool that raises ``ApprovalRequired`` is not answered
either. Such calls come back as ``ToolExecutionResult.pending`` with no response in the history, the
others run as usual: the loop then pauses.

Beyond Spring (as pydantic-ai and the OpenAI Agents SDK do), :meth:`DefaultToolCallingManager.aexecute_tool_calls`
runs the calls of one turn concurrently: async tools as tasks on the running loop, sync tools in a
worker thread pool, at most ``max_concurrency`` at a time, a ``sequential=True`` tool alone; the
responses keep the call order. Every name is checked (limit, lookup) before any tool of the batch
starts, so an unknown name that raises runs nothing. A per-tool ``timeout`` turns a slow call into an
error text for the model. Cancelling the caller cancels the running tools and returns only once they
have stopped (a sync tool's thread cannot be interrupted: it is waited for). The blocking
:meth:`DefaultToolCallingManager.execute_tool_calls` keeps Spring's one-after-another order in the
caller's thread (a call with a timeout runs in a worker thread so the wait can be bounded).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import enum
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Protocol

from opentelemetry import trace

from toolweave._text import scrub_text
from toolweave.approvals import (
    APPROVED_TOOL_CALLS_KEY,
    ApprovalRequired,
    PendingToolCall,
    approval_hold,
    approved_scope,
    asked_pending,
    reset_approved,
)
from toolweave.chat.content import Media
from toolweave.chat.messages import AssistantMessage, Message, ToolCall, ToolResponse, ToolResponseMessage
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.events import current_tool_listener
from toolweave.exceptions import ToolCallLimitExceededError, ToolExecutionError
from toolweave.tools._concurrent import (
    CarriedError,
    call_async,
    call_blocking,
    carrying,
    executor,
    result_of,
    runs_in_thread,
)
from toolweave.tools.callback import ToolCallback
from toolweave.tools.context import ToolContext, per_call_contexts, tool_call_scope
from toolweave.tools.converter import content_parts
from toolweave.tools.definition import ToolDefinition, ToolMetadata
from toolweave.tools.exception_processor import DefaultToolExecutionExceptionProcessor, ToolExecutionExceptionProcessor
from toolweave.tools.limits import ToolCallCounter, ToolCallLimitBehavior, ToolCallLimits
from toolweave.tools.provider import ToolCallbackResolver
from toolweave.tools.retry import check_retry_budget

__all__ = ['DefaultToolCallingManager', 'ToolCallingManager', 'ToolExecutionResult', 'UnknownToolBehavior']

logger = logging.getLogger('toolweave.tools')
RETURN_DIRECT_FINISH_REASON = 'returnDirect'
_tracer = trace.get_tracer('toolweave')
_COUNTER_CACHE_SIZE = 32


class UnknownToolBehavior(enum.Enum):
    """What a call to a tool the request does not have does (beyond Spring, which always raises)."""

    THROW = 'throw'
    """Raise ``LookupError("No ToolCallback found for tool name: <name>")`` (Spring's behaviour, the default)."""
    RETURN_ERROR_RESPONSE = 'return_error_response'
    """Answer the call with an error text naming the available tools and go on; the call counts
    toward the limits like any other, so a model that keeps calling it is stopped by them."""


@dataclass(frozen=True)
class ToolExecutionResult:
    """The outcome of one batch of tool calls (Spring AI ``ToolExecutionResult``).

    Attributes:
        conversation_history: Prompt messages + assistant message + the ``ToolResponseMessage``.
        return_direct: Whether every tool that ran asked for its result to go to the caller.
        pending: The calls that wait for a decision (approval, or a deferred result), in call order;
            they have no response in ``conversation_history``.
    """

    conversation_history: tuple[Message, ...]
    return_direct: bool = False
    pending: tuple[PendingToolCall, ...] = ()

    def build_generations(self) -> tuple[Generation, ...]:
        """One generation per tool response (Spring ``ToolExecutionResult.buildGenerations``).

        Text = the raw tool output, finish reason ``returnDirect``, metadata ``toolId``/``toolName``.
        """
        last = self.conversation_history[-1] if self.conversation_history else None
        if not isinstance(last, ToolResponseMessage):
            return ()
        return tuple(
            Generation(
                AssistantMessage(r.response_data),
                RETURN_DIRECT_FINISH_REASON,
                {'toolId': r.id, 'toolName': r.name},
            )
            for r in last.responses
        )


class ToolCallingManager(Protocol):
    """Resolves tool definitions for a request and executes a response's tool calls."""

    def resolve_tool_definitions(self, options: ChatOptions | None) -> list[ToolDefinition]:
        """The definitions of the tools of ``options``."""
        ...

    def execute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        """Execute the tool calls of ``chat_response`` (blocking)."""
        ...

    async def aexecute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        """Execute the tool calls of ``chat_response`` (async tools on the loop, sync ones in threads)."""
        ...


class DefaultToolCallingManager:
    """The default manager; see the module docstring for the rules.

    Args:
        tool_callback_resolver: Finds tools not in the request (used only with ``resolution_fallback_enabled``).
        exception_processor: Turns ``ToolExecutionError`` into text (default: message text, never rethrow).
        limits: Per-turn limits (default 40 per tool, 150 per turn, ``THROW``).
        resolution_fallback_enabled: Fall back to the resolver when a name is not in the request.
        record_content: Put arguments and results on the spans (opt-in, may contain personal data).
        max_concurrency: At most this many calls of one turn run at once in the async path
            (``None``: no limit beyond the 32 sync calls the tool worker threads run at once, calls abandoned
            past their timeout not counted).
        default_timeout: Seconds a call may take when its tool sets no ``timeout`` (``None``: no limit).
        log_arguments: Add the call's arguments to the warning logged (logger ``toolweave.tools``) when
            a tool raises or gets invalid arguments (default ``False``: tool name, call id and exception
            type only, since arguments may hold personal data).
        unknown_tool_behavior: A call to a tool the request does not have raises ``LookupError``
            (``THROW``, default, as Spring) or is answered with an error text naming the available
            tools (``RETURN_ERROR_RESPONSE``, marked ``is_error`` with ``error_type='LookupError'``).

    Raises:
        ValueError: ``max_concurrency`` is not a positive int, or ``default_timeout`` not a positive number.
        TypeError: ``tool_callback_resolver``, ``exception_processor``, ``limits`` or
            ``unknown_tool_behavior`` is of the wrong type.
    """

    def __init__(
        self,
        *,
        tool_callback_resolver: ToolCallbackResolver | None = None,
        exception_processor: ToolExecutionExceptionProcessor | None = None,
        limits: ToolCallLimits | None = None,
        resolution_fallback_enabled: bool = False,
        record_content: bool = False,
        max_concurrency: int | None = None,
        default_timeout: float | None = None,
        log_arguments: bool = False,
        unknown_tool_behavior: UnknownToolBehavior = UnknownToolBehavior.THROW,
    ) -> None:
        _check_type('tool_callback_resolver', tool_callback_resolver, ToolCallbackResolver, optional=True)
        _check_type('exception_processor', exception_processor, ToolExecutionExceptionProcessor, optional=True)
        _check_type('limits', limits, ToolCallLimits, optional=True)
        _check_type('unknown_tool_behavior', unknown_tool_behavior, UnknownToolBehavior)
        if max_concurrency is not None and (
            not isinstance(max_concurrency, int) or isinstance(max_concurrency, bool) or max_concurrency < 1
        ):
            raise ValueError(f'max_concurrency must be a positive int or None, got {max_concurrency!r}')
        if default_timeout is not None:
            ToolMetadata(timeout=default_timeout)  # same validation as a tool's own timeout
        self.max_concurrency = max_concurrency
        self.default_timeout = default_timeout
        self._counters: OrderedDict[int, tuple[tuple[Message, ...], ToolCallCounter]] = OrderedDict()
        self._counters_lock = threading.Lock()
        self._tables: tuple[weakref.ref[ChatOptions] | None, Mapping[str, _Tool]] = (None, {})
        self.tool_callback_resolver = tool_callback_resolver
        self.exception_processor = exception_processor or DefaultToolExecutionExceptionProcessor()
        self.limits = limits or ToolCallLimits()
        self.resolution_fallback_enabled = resolution_fallback_enabled
        self.record_content = record_content
        self.log_arguments = log_arguments
        self.unknown_tool_behavior = unknown_tool_behavior

    def resolve_tool_definitions(self, options: ChatOptions | None) -> list[ToolDefinition]:
        """Definitions of the request's tools, then of ``tool_names`` found by the resolver.

        Raises:
            LookupError: a name in ``tool_names`` resolves to nothing.
        """
        if not isinstance(options, ToolCallingChatOptions):
            return []
        definitions = [cb.tool_definition for cb in options.tool_callbacks]
        known = {d.name for d in definitions}
        for name in sorted(options.tool_names - known):
            callback = self.tool_callback_resolver.resolve(name) if self.tool_callback_resolver else None
            if callback is None:
                raise LookupError(f'No ToolCallback found for tool name: {name}')
            definitions.append(callback.tool_definition)
        return definitions

    def execute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        """Run the calls one after another, in order, in the caller's thread (Spring's order).

        Raises:
            TypeError: ``prompt`` is not a ``Prompt`` or ``chat_response`` not a ``ChatResponse``.
            ValueError: ``chat_response`` has no tool call.
            LookupError: a tool name is unknown with ``UnknownToolBehavior.THROW`` (the calls before it have run).
            ToolCallLimitExceededError: a limit was breached with ``ToolCallLimitBehavior.THROW`` (the calls
                before it have run; the error carries the history up to the breach).
            ToolRetryBudgetExceededError: a tool got invalid arguments past its ``max_retries`` this turn.
        """
        batch = _Batch(self, prompt, chat_response)
        token = approved_scope(batch.approved)
        try:
            for index, call in enumerate(batch.message.tool_calls):
                tool = batch.prepare(index, call)
                if tool is not None:
                    self._run_one_blocking(batch, index, call, tool)
        finally:
            reset_approved(token)
        return batch.result()

    async def aexecute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        """Run the calls concurrently (see the module docstring); responses in call order.

        Raises:
            TypeError: ``prompt`` is not a ``Prompt`` or ``chat_response`` not a ``ChatResponse``.
            ValueError: ``chat_response`` has no tool call.
            LookupError: a tool name is unknown with ``UnknownToolBehavior.THROW`` (checked before any
                tool of the batch runs).
            ToolCallLimitExceededError: a limit was breached with ``ToolCallLimitBehavior.THROW``; the
                calls before the breaching one have run and the error carries the history up to the breach.
        """
        batch = _Batch(self, prompt, chat_response)
        planned: list[tuple[int, ToolCall, _Tool]] = []
        breach: ToolCallLimitExceededError | None = None
        for index, call in enumerate(batch.message.tool_calls):
            try:
                tool = batch.prepare(index, call)
            except ToolCallLimitExceededError as error:
                breach = error
                break
            if tool is not None:
                planned.append((index, call, tool))
        semaphore = asyncio.Semaphore(self.max_concurrency) if self.max_concurrency else None
        token = approved_scope(batch.approved)
        try:
            for group in _groups(planned):
                await self._run_group(batch, group, semaphore)
        finally:
            reset_approved(token)
        if breach is not None:
            raise batch.limit_error(breach.tool_name, breach.limit)  # with the responses of the calls that ran
        return batch.result()

    async def _run_group(
        self, batch: _Batch, group: list[tuple[int, ToolCall, _Tool]], semaphore: asyncio.Semaphore | None
    ) -> None:
        # Plain sync tools (no timeout, no concurrency cap) go to the pool together and wake the loop
        # once when the last returns: one event-loop wake-up per group instead of one per call.
        pooled: list[tuple[int, ToolCall, _Tool]] = []
        others: list[tuple[int, ToolCall, _Tool]] = []
        for item in group:
            plain = semaphore is None and runs_in_thread(item[2].callback) and self._timeout(item[2]) is None
            (pooled if plain else others).append(item)
        # one awaitable: awaited in this task (as a task it would add a wake-up, and carrying for nothing)
        if not pooled and len(others) == 1:
            await self._run_one(batch, *others[0], semaphore)
            return
        if pooled and not others:
            await self._run_in_threads(batch, pooled)
            return
        # a tool's KeyboardInterrupt/SystemExit/GeneratorExit leaves a task carried, and is raised here as itself
        tasks = [asyncio.ensure_future(carrying(self._run_one(batch, *item, semaphore))) for item in others]
        if pooled:
            tasks.append(asyncio.ensure_future(carrying(self._run_in_threads(batch, pooled))))
        try:
            await asyncio.gather(*tasks)
            return
        except BaseException as error:
            for task in tasks:
                task.cancel()
            await _settle(tasks)
            if not isinstance(error, CarriedError):
                raise
            failure = error.error
        raise failure

    async def _run_in_threads(self, batch: _Batch, items: list[tuple[int, ToolCall, _Tool]]) -> None:
        """Run sync tools in worker threads at once; on cancellation wait until every thread has returned."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        remaining = [len(items)]
        lock = threading.Lock()

        def finished(_: concurrent.futures.Future[None]) -> None:
            with lock:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last:
                loop.call_soon_threadsafe(_resolve, done)

        futures = []
        for index, call, tool in items:
            context = contextvars.copy_context()
            future = executor().submit(context.run, self._run_one_blocking, batch, index, call, tool)
            future.add_done_callback(finished)
            futures.append(future)
        try:
            await asyncio.shield(done)
        except asyncio.CancelledError:
            for future in futures:
                future.cancel()
            while not done.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(done)
            raise
        for future in futures:
            result_of(future)  # the first failure, in call order

    def _run_one_blocking(self, batch: _Batch, index: int, call: ToolCall, tool: _Tool) -> None:
        callback = tool.callback
        with tool_call_scope(call), batch.span(call, callback) as span:
            batch.started(call)
            try:
                text = call_blocking(callback, batch.arguments(call), batch.context_for(tool), self._timeout(tool))
            except (ToolExecutionError, ApprovalRequired) as raised:
                self._answer_failure(batch, index, call, tool, raised, span)
                return
            batch.record(index, call, tool, text, span)

    async def _run_one(
        self, batch: _Batch, index: int, call: ToolCall, tool: _Tool, semaphore: asyncio.Semaphore | None
    ) -> None:
        callback = tool.callback
        async with _limited(semaphore):
            with tool_call_scope(call), batch.span(call, callback) as span:
                batch.started(call)
                try:
                    context = batch.context_for(tool)
                    text = await call_async(callback, batch.arguments(call), context, self._timeout(tool))
                except (ToolExecutionError, ApprovalRequired) as raised:
                    self._answer_failure(batch, index, call, tool, raised, span)
                    return
                batch.record(index, call, tool, text, span)

    def _answer_failure(
        self,
        batch: _Batch,
        index: int,
        call: ToolCall,
        tool: _Tool,
        raised: ToolExecutionError | ApprovalRequired,
        span: trace.Span,
    ) -> None:
        """A call that raised: held for approval, or logged, counted against the retry budget and answered.

        Runs in a frame of its own, below the runner's ``except`` clause: no frame in ``raised``'s traceback keeps
        the error in a local, which made a reference cycle (error -> traceback -> frame -> error) per failed call.

        Raises:
            ToolRetryBudgetExceededError: past the tool's ``max_retries`` (``tools/retry.py``).
        """
        error = batch.held_or_failure(index, call, tool.callback, raised)
        if error is None:
            return
        self._warn(call, error)
        batch.check_retry_budget(tool.callback, error)
        batch.record(index, call, tool, self._process(error, span), span, error)

    def _timeout(self, tool: _Tool) -> float | None:
        return tool.timeout if tool.timeout is not None else self.default_timeout

    def _counter_for(self, history: tuple[Message, ...]) -> ToolCallCounter:
        """The counter after ``history``: reused from the previous round when it is that round's history.

        The tool loop passes each round's returned history back unchanged, so the count continues
        from the last batch instead of rescanning the turn (which made long loops slower per round).
        """
        with self._counters_lock:
            entry = self._counters.pop(id(history), None)
        if entry is not None and entry[0] is history:
            return entry[1]
        return ToolCallCounter(self.limits, history)

    def _remember(self, history: tuple[Message, ...], counter: ToolCallCounter) -> None:
        with self._counters_lock:
            self._counters[id(history)] = (history, counter)
            while len(self._counters) > _COUNTER_CACHE_SIZE:
                self._counters.popitem(last=False)

    def find(self, options: ChatOptions | None, name: str) -> ToolCallback:
        """The tool called ``name``: the request's first, then the resolver if fallback is enabled.

        Raises:
            TypeError: ``name`` is not a ``str``.
            LookupError: no such tool (after logging a warning that the model may have changed the name).
        """
        _check_type('name', name, str)
        callback = self._lookup(options, name)
        if callback is None:
            raise LookupError(f'No ToolCallback found for tool name: {name}')
        return callback

    def _tools_by_name(self, options: ChatOptions | None) -> Mapping[str, _Tool]:
        """The request's tools by name (the first of a name wins), built once per options object.

        The tool loop hands every round the same options, so the table is kept (by a weak reference)
        for the next batch instead of being rebuilt per batch or scanned per call.
        """
        if not isinstance(options, ToolCallingChatOptions):
            return {}
        ref, table = self._tables
        if ref is not None and ref() is options:
            return table
        table = {}
        for callback in options.tool_callbacks:
            name = callback.tool_definition.name
            if name not in table:
                table[name] = _Tool(callback)
        self._tables = (weakref.ref(options), table)
        return table

    def _lookup(self, options: ChatOptions | None, name: str) -> ToolCallback | None:
        """The tool called ``name``, or ``None`` after warning that the model may have changed the name."""
        tool = self._tools_by_name(options).get(name)
        if tool is not None:
            return tool.callback
        if self.resolution_fallback_enabled and self.tool_callback_resolver is not None:
            resolved = self.tool_callback_resolver.resolve(name)
            if resolved is not None:
                return resolved
        logger.warning(
            "LLM may have adapted the tool name '%s', especially if the name was truncated due to length limits. "
            'If this is the case, give the tool a shorter name (at most 64 characters).',
            scrub_text(name),
        )
        return None

    def _warn(self, call: ToolCall, error: ToolExecutionError) -> None:
        """Log a failed call: tool name, call id, exception type (and the arguments with ``log_arguments``)."""
        name, call_id, error_type = scrub_text(call.name), scrub_text(call.id), type(error.cause).__name__
        if self.log_arguments:
            arguments = scrub_text(call.arguments)
            logger.warning("Tool '%s' (call %s) failed: %s; arguments: %s", name, call_id, error_type, arguments)
        else:
            logger.warning("Tool '%s' (call %s) failed: %s", name, call_id, error_type)

    def _process(self, error: ToolExecutionError, span: trace.Span) -> str:
        span.set_attribute('error.type', type(error.cause).__qualname__)
        span.set_status(trace.StatusCode.ERROR, scrub_text(str(error)))
        return self.exception_processor.process(error)

    @contextmanager
    def _recorded_span(self, call: ToolCall, callback: ToolCallback) -> Iterator[trace.Span]:
        definition = callback.tool_definition
        attributes = {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': scrub_text(definition.name),
            'gen_ai.tool.call.id': scrub_text(call.id),
            'gen_ai.tool.type': 'function',
            'gen_ai.tool.description': scrub_text(definition.description),
        }
        if self.record_content:
            attributes['gen_ai.tool.call.arguments'] = scrub_text(call.arguments)
        span = _tracer.start_span(f'execute_tool {attributes["gen_ai.tool.name"]}', attributes=attributes)
        if not span.get_span_context().is_valid:  # no tracing SDK: nothing to make current
            yield span
            return
        with trace.use_span(span, end_on_exit=True) as current:
            yield current


_NO_SPAN = nullcontext(trace.INVALID_SPAN)


def _tracing_off() -> bool:
    """No tracing SDK behind ``_tracer`` (no tracer provider set yet): its spans would be non-recording no-ops."""
    return tracer_is_noop(_tracer)


def tracer_is_noop(tracer: trace.Tracer) -> bool:
    """Whether ``tracer``'s spans would be non-recording no-ops (no tracing SDK behind it, as yet).

    A proxy tracer's delegate is exactly what its ``start_span`` would use (a ``NoOpTracer`` until a
    provider is set), read without looking the provider up in the environment. Asked once per batch
    (the manager) or round (the tool loop), so a provider set later still gets the next ones' spans.
    """
    proxy = type(tracer) is trace.ProxyTracer or isinstance(tracer, trace.ProxyTracer)  # exact type first: ABCs
    delegate = getattr(tracer, '_tracer', None) if proxy else tracer
    return type(delegate) is trace.NoOpTracer or isinstance(delegate, trace.NoOpTracer)


class _Batch:
    """State of one batch: counter, responses by call index, return_direct fold."""

    def __init__(self, manager: DefaultToolCallingManager, prompt: Prompt, chat_response: ChatResponse) -> None:
        _check_type('prompt', prompt, Prompt)
        _check_type('chat_response', chat_response, ChatResponse)
        self.manager = manager
        self.prompt = prompt
        self.message = _first_tool_call_message(chat_response)
        self.counter = manager._counter_for(prompt.messages)  # taken out of the cache: this batch's own
        self.slots: list[ToolResponse | None] = [None] * len(self.message.tool_calls)
        self.pending: dict[int, PendingToolCall] = {}
        self.return_direct: bool | None = None
        self._lock = threading.Lock()  # tools of one batch may finish in several threads at once
        self._contexts: Callable[[], ToolContext] | None = None
        self.listener = current_tool_listener()
        options = prompt.options
        approved = (
            options.tool_context.get(APPROVED_TOOL_CALLS_KEY) if isinstance(options, ToolCallingChatOptions) else None
        )
        self.approved: frozenset[str] = frozenset(approved) if approved else _NONE_APPROVED
        self.tools = manager._tools_by_name(options)
        self.traced = not _tracing_off()  # asked once per batch: a provider set later gets the next batch's spans

    def context(self) -> ToolContext:
        """A ``ToolContext`` for one call: its own copy of the containers (see :class:`ToolContext`).

        Built on first use: a batch whose tools read no context (and ask no approval predicate) builds none.
        """
        contexts = self._contexts
        if contexts is None:  # two threads may both build it: equal factories, either one serves
            contexts = self._contexts = per_call_contexts(_tool_context_values(self.prompt, self.message))
        return contexts()

    def context_for(self, tool: _Tool) -> ToolContext | None:
        """The context handed to ``tool``'s call: ``None`` for a tool that says it reads none."""
        return self.context() if tool.takes_context else None

    def span(self, call: ToolCall, callback: ToolCallback) -> AbstractContextManager[trace.Span]:
        """The call's ``execute_tool`` span, current inside the block; a no-op span when tracing is off."""
        if not self.traced:  # what the no-op tracer would give, without building the attributes
            return _NO_SPAN
        return self.manager._recorded_span(call, callback)

    def prepare(self, index: int, call: ToolCall) -> _Tool | None:
        """Limit check (every call counts), then lookup; ``None`` when the call was answered with an error text.

        Raises:
            ToolCallLimitExceededError: a limit is breached with ``ToolCallLimitBehavior.THROW``.
            LookupError: the tool is unknown with ``UnknownToolBehavior.THROW``.
        """
        breach = self.counter.breach(call.name)
        self.counter.record(call.name)
        if breach is not None:
            self.answer(index, call, breach.text, ToolCallLimitExceededError.__name__)
            if self.manager.limits.behavior is ToolCallLimitBehavior.THROW:
                raise self.limit_error(breach.tool_name, breach.limit)
            return None
        tool = self.tools.get(call.name)
        if tool is None:
            callback = self.manager._lookup(self.prompt.options, call.name)  # the resolver's, if any
            if callback is None:
                if self.manager.unknown_tool_behavior is UnknownToolBehavior.THROW:
                    raise LookupError(f'No ToolCallback found for tool name: {call.name}')
                self.answer(index, call, _unknown_tool_text(call.name, self.prompt.options), LookupError.__name__)
                return None
            tool = _Tool(callback)
        if tool.may_wait and call.id not in self.approved:
            held = approval_hold(tool.metadata, call, self.context)
            if held is not None:
                with self._lock:
                    self.pending[index] = held
                return None
        return tool

    def held_or_failure(
        self, index: int, call: ToolCall, callback: ToolCallback, raised: ToolExecutionError | ApprovalRequired
    ) -> ToolExecutionError | None:
        """``None`` when the tool asked for approval (the call is now pending), else the failure to answer.

        An approved call that asks again fails like any tool error.
        """
        request = raised if isinstance(raised, ApprovalRequired) else raised.cause
        if isinstance(request, ApprovalRequired) and call.id not in self.approved:
            with self._lock:
                self.pending[index] = asked_pending(call, request)
            return None
        if isinstance(raised, ApprovalRequired):
            return ToolExecutionError(callback.tool_definition, raised)
        return raised

    def answer(self, index: int, call: ToolCall, text: str, error_type: str) -> None:
        """Answer a call that does not run with an error text (a limit breach, an unknown tool)."""
        self.slots[index] = ToolResponse(call.id, call.name, scrub_text(text), True, error_type)

    def limit_error(self, tool_name: str | None, limit: int) -> ToolCallLimitExceededError:
        """The breach error, carrying the history up to the breach (the breaching call's response last)."""
        return ToolCallLimitExceededError(tool_name, limit, self.history())

    def check_retry_budget(self, callback: ToolCallback, error: ToolExecutionError) -> None:
        """Raise ``ToolRetryBudgetExceededError`` past the tool's ``max_retries`` (see ``tools/retry.py``)."""
        max_retries = getattr(callback.tool_metadata, 'max_retries', 1)
        check_retry_budget(error, self.prompt.messages, self.responses(), max_retries)

    @staticmethod
    def arguments(call: ToolCall) -> str:
        """The call's arguments (lone surrogates as U+FFFD), ``"{}"`` when empty (streaming providers may send none)."""
        if call.arguments and call.arguments.strip():
            return scrub_text(call.arguments)
        logger.debug("Tool call '%s' (%s) has empty arguments; using {}", call.name, call.id)
        return '{}'

    def started(self, call: ToolCall) -> None:
        """Tell the loop's listener (if any) that ``call`` starts."""
        if self.listener is not None:
            self.listener.started(call)

    def record(
        self,
        index: int,
        call: ToolCall,
        tool: _Tool,
        text: str | None,
        span: trace.Span,
        failure: ToolExecutionError | None = None,
    ) -> None:
        """Store the response (lone surrogates as U+FFFD) at the call's position and fold ``return_direct`` with AND.

        A ``failure`` marks the response ``is_error`` with the cause's class name as ``error_type``.
        """
        media: tuple[Media, ...] = ()
        if type(text) is str:  # the common case: plain text, no content parts
            response_text = scrub_text(text)
        else:  # a ContentResult's text as a plain str, its parts as media
            response_text = scrub_text(str(text)) if text is not None else ''
            if text is not None:
                media = content_parts(text)
        if self.manager.record_content:
            span.set_attribute('gen_ai.tool.call.result', response_text)
        direct = tool.return_direct
        error_type = type(failure.cause).__name__ if failure is not None else None
        response = ToolResponse(call.id, call.name, response_text, failure is not None, error_type, media)
        with self._lock:
            self.return_direct = direct if self.return_direct is None else self.return_direct and direct
            self.slots[index] = response
        if self.listener is not None:
            self.listener.finished(call, response)

    def responses(self) -> list[ToolResponse]:
        """The responses so far, in call order."""
        return [r for r in self.slots if r is not None]

    def history(self) -> tuple[Message, ...]:
        """Prompt messages + the assistant message + one ``ToolResponseMessage`` of the responses so far."""
        return (*self.prompt.messages, self.message, ToolResponseMessage(tuple(self.responses())))

    def result(self) -> ToolExecutionResult:
        """History + return_direct; the counter of the new history is kept for the next round."""
        history = self.history()
        self.manager._remember(history, self.counter)  # every call of the batch counted, as a fresh count would
        pending = tuple(self.pending[index] for index in sorted(self.pending)) if self.pending else ()
        return ToolExecutionResult(history, bool(self.return_direct), pending)


_NONE_APPROVED: frozenset[str] = frozenset()


class _Tool:
    """A request's tool with what every call of it reads, taken from the callback once per request.

    Attributes:
        callback: The tool.
        metadata: Its ``tool_metadata``.
        timeout: Its own ``timeout`` (``None``: the manager's default applies).
        return_direct: Its ``return_direct`` flag.
        may_wait: Deferred, or with a ``requires_approval`` rule: each call asks :func:`approval_hold`.
        takes_context: Its ``call`` reads the ``ToolContext`` (a callback's ``takes_tool_context``,
            ``True`` when it does not say): only then is one built for the call.
    """

    __slots__ = ('callback', 'may_wait', 'metadata', 'return_direct', 'takes_context', 'timeout')

    def __init__(self, callback: ToolCallback) -> None:
        metadata = callback.tool_metadata
        self.callback = callback
        self.metadata = metadata
        self.timeout: float | None = getattr(metadata, 'timeout', None)
        self.return_direct = bool(metadata.return_direct)
        rule = getattr(metadata, 'requires_approval', False)
        self.may_wait = bool(getattr(metadata, 'deferred', False)) or rule is True or callable(rule)
        self.takes_context = getattr(callback, 'takes_tool_context', True) is not False


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


def _groups(planned: list[tuple[int, ToolCall, _Tool]]) -> list[list[tuple[int, ToolCall, _Tool]]]:
    """Consecutive calls that may overlap; a ``sequential`` tool forms a group of its own."""
    groups: list[list[tuple[int, ToolCall, _Tool]]] = []
    current: list[tuple[int, ToolCall, _Tool]] = []
    for item in planned:
        if getattr(item[2].metadata, 'sequential', False):
            if current:
                groups.append(current)
                current = []
            groups.append([item])
        else:
            current.append(item)
    if current:
        groups.append(current)
    return groups


@asynccontextmanager
async def _limited(semaphore: asyncio.Semaphore | None) -> AsyncIterator[None]:
    if semaphore is None:
        yield
        return
    async with semaphore:
        yield


async def _settle(tasks: Sequence[asyncio.Future[None]]) -> None:
    """Wait until every (cancelled) task has finished, even when cancelled again meanwhile."""
    while not all(task.done() for task in tasks):
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))


def _check_type(name: str, value: object, kind: type, *, optional: bool = False) -> None:
    """Raise ``TypeError`` naming the argument when ``value`` is not a ``kind`` (``None`` allowed with ``optional``)."""
    if value is None and optional:
        return
    if not isinstance(value, kind):
        raise TypeError(f'{name} must be a {kind.__name__}, not {type(value).__name__}')


def _unknown_tool_text(name: str, options: ChatOptions | None) -> str:
    """The answer to a call of an unknown tool: the name and the request's tools, so the model can correct itself."""
    names = (
        [cb.tool_definition.name for cb in options.tool_callbacks]
        if isinstance(options, ToolCallingChatOptions)
        else []
    )
    available = ', '.join(f"'{n}'" for n in names) if names else 'none'
    return f"Unknown tool '{name}': no tool with this name exists. Available tools: {available}."


def _first_tool_call_message(chat_response: ChatResponse) -> AssistantMessage:
    for generation in chat_response.generations:
        if generation.output.tool_calls:
            return generation.output
    raise ValueError('No tool call requested by the chat model')


def _tool_context_values(prompt: Prompt, message: AssistantMessage) -> dict[str, object]:
    options = prompt.options
    values = dict(options.tool_context) if isinstance(options, ToolCallingChatOptions) else {}
    values[ToolContext.TOOL_CALL_HISTORY] = (*prompt.messages, message)
    return values
