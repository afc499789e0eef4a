"""Whether a model response must go to the tools (Spring AI ``ToolExecutionEligibilityChecker``)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from toolweave.chat.response import ChatResponse

__all__ = [
    'DefaultToolExecutionEligibilityChecker',
    'StrictToolExecutionEligibilityChecker',
    'ToolExecutionEligibilityChecker',
]

TOOL_CALL_FINISH_REASONS = frozenset({'tool_calls', 'tool_use', 'function_call'})


@runtime_checkable
class ToolExecutionEligibilityChecker(Protocol):
    """A predicate over a (round's aggregated) response."""

    def __call__(self, chat_response: ChatResponse | None) -> bool:
        """``True`` when the response's tool calls must be executed."""
        ...


class DefaultToolExecutionEligibilityChecker:
    """Eligible when the response has tool calls (Spring's default)."""

    def __call__(self, chat_response: ChatResponse | None) -> bool:
        """``chat_response.has_tool_calls()``."""
        return chat_response is not None and bool(chat_response.tool_calls)  # the same, without a generator


class StrictToolExecutionEligibilityChecker:
    """Also requires a tool-call finish reason (``tool_calls``, ``tool_use``, ``function_call``).

    For providers that may emit tool calls and then stop for another reason (``length``): such
    truncated calls are not executed.
    """

    def __call__(self, chat_response: ChatResponse | None) -> bool:
        """Has tool calls and a tool-call finish reason."""
        return (
            chat_response is not None
            and chat_response.has_tool_calls()
            and chat_response.has_finish_reasons(TOOL_CALL_FINISH_REASONS)
        )
