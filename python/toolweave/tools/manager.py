"""``ToolCallingManager``: executes one model turn's tool calls (Spring AI ``DefaultToolCallingManager``).

Per call, in order: the limit check (before lookup); empty arguments -> ``"{}"``; lookup in the
request's tools, then the resolver (only with ``resolution_fallback_enabled``); one OpenTelemetry
span (``execute_tool <name>``, GenAI conventions); the call; failures through the exception
processor; ``None``-free response text. ``return_direct`` is folded with AND over the calls that ran
(``False`` when none ran). The history returned is the prompt's messages + the assistant message +
one ``ToolResponseMessage`` in tool-call order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from opentelemetry import trace

from toolweave.chat.messages import AssistantMessage, Message, ToolCall, ToolResponse, ToolResponseMessage
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.exceptions import ToolCallLimitExceededError, ToolExecutionError
from toolweave.tools.callback import ToolCallback
from toolweave.tools.context import ToolContext
from toolweave.tools.definition import ToolDefinition
from toolweave.tools.exception_processor import DefaultToolExecutionExceptionProcessor, ToolExecutionExceptionProcessor
from toolweave.tools.limits import ToolCallCounter, ToolCallLimitBehavior, ToolCallLimits
from toolweave.tools.provider import ToolCallbackResolver

__all__ = ['DefaultToolCallingManager', 'ToolCallingManager', 'ToolExecutionResult']

logger = logging.getLogger('toolweave.tools')
RETURN_DIRECT_FINISH_REASON = 'returnDirect'
_tracer = trace.get_tracer('toolweave')


@dataclass(frozen=True)
class ToolExecutionResult:
    """The outcome of one batch of tool calls (Spring AI ``ToolExecutionResult``).

    Attributes:
        conversation_history: Prompt messages + assistant message + the ``ToolResponseMessage``.
        return_direct: Whether every tool that ran asked for its result to go to the caller.
    """

    conversation_history: tuple[Message, ...]
    return_direct: bool = False

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
    """

    def __init__(
        self,
        *,
        tool_callback_resolver: ToolCallbackResolver | None = None,
        exception_processor: ToolExecutionExceptionProcessor | None = None,
        limits: ToolCallLimits | None = None,
        resolution_fallback_enabled: bool = False,
        record_content: bool = False,
    ) -> None:
        self.tool_callback_resolver = tool_callback_resolver
        self.exception_processor = exception_processor or DefaultToolExecutionExceptionProcessor()
        self.limits = limits or ToolCallLimits()
        self.resolution_fallback_enabled = resolution_fallback_enabled
        self.record_content = record_content

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
        """Run the calls one after another, in order.

        Raises:
            ValueError: ``chat_response`` has no tool call.
            LookupError: a tool name is unknown.
            ToolCallLimitExceededError: a limit was breached with ``ToolCallLimitBehavior.THROW``.
        """
        batch = _Batch(self, prompt, chat_response)
        for call in batch.message.tool_calls:
            callback = batch.prepare(call)
            if callback is None:
                continue
            with self._span(call, callback) as span:
                try:
                    text = callback.call(batch.arguments(call), batch.context)
                except ToolExecutionError as error:
                    text = self._process(error, span)
            batch.record(call, callback, text, span)
        return batch.result()

    async def aexecute_tool_calls(self, prompt: Prompt, chat_response: ChatResponse) -> ToolExecutionResult:
        """Async :meth:`execute_tool_calls`: same rules, awaiting each tool's ``acall``."""
        batch = _Batch(self, prompt, chat_response)
        for call in batch.message.tool_calls:
            callback = batch.prepare(call)
            if callback is None:
                continue
            with self._span(call, callback) as span:
                try:
                    text = await callback.acall(batch.arguments(call), batch.context)
                except ToolExecutionError as error:
                    text = self._process(error, span)
            batch.record(call, callback, text, span)
        return batch.result()

    def find(self, options: ChatOptions | None, name: str) -> ToolCallback:
        """The tool called ``name``: the request's first, then the resolver if fallback is enabled.

        Raises:
            LookupError: no such tool (after logging a warning that the model may have changed the name).
        """
        if isinstance(options, ToolCallingChatOptions):
            for callback in options.tool_callbacks:
                if callback.tool_definition.name == name:
                    return callback
        if self.resolution_fallback_enabled and self.tool_callback_resolver is not None:
            resolved = self.tool_callback_resolver.resolve(name)
            if resolved is not None:
                return resolved
        logger.warning(
            "LLM may have adapted the tool name '%s', especially if the name was truncated due to length limits. "
            'If this is the case, give the tool a shorter name (at most 64 characters).',
            name,
        )
        raise LookupError(f'No ToolCallback found for tool name: {name}')

    def _process(self, error: ToolExecutionError, span: trace.Span) -> str:
        span.set_attribute('error.type', type(error.cause).__qualname__)
        span.set_status(trace.StatusCode.ERROR, str(error))
        return self.exception_processor.process(error)

    @contextmanager
    def _span(self, call: ToolCall, callback: ToolCallback) -> Iterator[trace.Span]:
        definition = callback.tool_definition
        attributes = {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': definition.name,
            'gen_ai.tool.call.id': call.id,
            'gen_ai.tool.type': 'function',
            'gen_ai.tool.description': definition.description,
        }
        if self.record_content:
            attributes['gen_ai.tool.call.arguments'] = call.arguments
        with _tracer.start_as_current_span(f'execute_tool {definition.name}', attributes=attributes) as span:
            yield span


class _Batch:
    """State of one batch: counter, responses, return_direct fold."""

    def __init__(self, manager: DefaultToolCallingManager, prompt: Prompt, chat_response: ChatResponse) -> None:
        self.manager = manager
        self.prompt = prompt
        self.message = _first_tool_call_message(chat_response)
        self.counter = ToolCallCounter(manager.limits, prompt.messages)
        self.responses: list[ToolResponse] = []
        self.return_direct: bool | None = None
        self.context = _tool_context(prompt, self.message)

    def prepare(self, call: ToolCall) -> ToolCallback | None:
        """Limit check then lookup; ``None`` when the call was answered with a breach text."""
        breach = self.counter.breach(call.name)
        if breach is not None:
            if self.manager.limits.behavior is ToolCallLimitBehavior.THROW:
                raise ToolCallLimitExceededError(breach, call.name, self.responses)
            self.responses.append(ToolResponse(call.id, call.name, breach))
            return None
        callback = self.manager.find(self.prompt.options, call.name)
        self.counter.record(call.name)
        return callback

    @staticmethod
    def arguments(call: ToolCall) -> str:
        """The call's arguments, ``"{}"`` when empty (streaming providers may send none)."""
        if call.arguments and call.arguments.strip():
            return call.arguments
        logger.debug("Tool call '%s' (%s) has empty arguments; using {}", call.name, call.id)
        return '{}'

    def record(self, call: ToolCall, callback: ToolCallback, text: str | None, span: trace.Span) -> None:
        """Add the response and fold ``return_direct`` with AND."""
        response_text = text if text is not None else ''
        if self.manager.record_content:
            span.set_attribute('gen_ai.tool.call.result', response_text)
        direct = callback.tool_metadata.return_direct
        self.return_direct = direct if self.return_direct is None else self.return_direct and direct
        self.responses.append(ToolResponse(call.id, call.name, response_text))

    def result(self) -> ToolExecutionResult:
        """History + return_direct."""
        history = (*self.prompt.messages, self.message, ToolResponseMessage(tuple(self.responses)))
        return ToolExecutionResult(history, bool(self.return_direct))


def _first_tool_call_message(chat_response: ChatResponse) -> AssistantMessage:
    for generation in chat_response.generations:
        if generation.output.tool_calls:
            return generation.output
    raise ValueError('No tool call requested by the chat model')


def _tool_context(prompt: Prompt, message: AssistantMessage) -> ToolContext:
    options = prompt.options
    values = dict(options.tool_context) if isinstance(options, ToolCallingChatOptions) else {}
    values[ToolContext.TOOL_CALL_HISTORY] = (*prompt.messages, message)
    return ToolContext(values)
