"""Per-tool retry budget for invalid arguments (beyond Spring AI; DESIGN section 4).

An invalid-arguments error goes back to the model as the tool response, so the model can correct
itself. ``max_retries`` (default 1, on :class:`~toolweave.tools.ToolMetadata`) bounds how many such
answers one tool gets per turn: when the model sends invalid arguments once more, the manager
raises :class:`~toolweave.exceptions.ToolRetryBudgetExceededError` and the run ends.

Stateless: earlier failures are counted from the turn's ``ToolResponseMessage``s (a turn starts at
the last ``UserMessage``, as for the call limits), so concurrent conversations never share a count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolweave.chat.messages import Message, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.exceptions import (
    InvalidToolArgumentsError,
    ToolArgumentsError,
    ToolExecutionError,
    ToolRetryBudgetExceededError,
)

__all__ = ['check_retry_budget', 'is_invalid_arguments']


def is_invalid_arguments(error: ToolExecutionError) -> bool:
    """Whether ``error`` is about the model's arguments (bad JSON or schema failure), not the tool's own failure."""
    return isinstance(error.cause, (InvalidToolArgumentsError, ToolArgumentsError))


def _prefix(tool_name: str) -> str:
    return f"Invalid arguments for tool '{tool_name}':"


def check_retry_budget(
    error: ToolExecutionError,
    history: Sequence[Message],
    batch_responses: Iterable[ToolResponse],
    max_retries: int,
) -> None:
    """Raise when this invalid-arguments ``error`` exceeds the tool's budget for the turn.

    Args:
        error: The callback's error; other errors than invalid arguments are ignored.
        history: The prompt messages of the turn (earlier rounds' tool responses are counted).
        batch_responses: Responses already produced in the current batch.
        max_retries: Invalid calls of this tool answered with the error text before giving up.

    Raises:
        ToolRetryBudgetExceededError: ``max_retries`` earlier invalid calls of this tool in the turn.
    """
    if not is_invalid_arguments(error):
        return
    name = error.tool_definition.name
    start = next((i for i in range(len(history) - 1, -1, -1) if isinstance(history[i], UserMessage)), -1)
    earlier = [r for m in history[start + 1 :] if isinstance(m, ToolResponseMessage) for r in m.responses]
    earlier.extend(batch_responses)
    prefix = _prefix(name)
    failures = sum(1 for r in earlier if r.name == name and r.response_data.startswith(prefix))
    if failures >= max_retries:
        raise ToolRetryBudgetExceededError(name, max_retries, str(error)) from error
