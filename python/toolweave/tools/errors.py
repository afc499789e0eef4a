"""Errors of the tool side (Spring AI ``ToolExecutionException``, ``ToolCallLimitExceededException``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolweave.chat.messages import ToolResponse
    from toolweave.tools.definition import ToolDefinition

__all__ = ['ToolCallLimitExceededError', 'ToolExecutionError']


class ToolExecutionError(RuntimeError):
    """A tool failed: bad arguments, or the function raised (as Spring AI's ``ToolExecutionException``).

    The manager's exception processor turns it into text for the model unless told to rethrow.

    Attributes:
        tool_definition: The tool that failed.
        cause: The underlying exception (also ``__cause__``).
    """

    def __init__(self, tool_definition: ToolDefinition, cause: BaseException, message: str | None = None) -> None:
        super().__init__(message if message is not None else str(cause))
        self.tool_definition = tool_definition
        self.cause = cause
        self.__cause__ = cause


class ToolCallLimitExceededError(RuntimeError):
    """A tool-call limit of this turn was breached with ``ToolCallLimitBehavior.THROW``.

    Attributes:
        tool_name: The tool whose call breached the limit.
        partial_responses: Responses of the calls of this batch that ran before the breach.
    """

    def __init__(self, message: str, tool_name: str, partial_responses: Sequence[ToolResponse] = ()) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.partial_responses = tuple(partial_responses)
