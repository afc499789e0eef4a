"""Tool failures -> text for the model, or re-raised (Spring AI ``DefaultToolExecutionExceptionProcessor``).

Python mapping of Spring's rules: ``BaseException``s that are not ``Exception``s
(``KeyboardInterrupt``, ``SystemExit``, ``CancelledError``) never reach here because tools only wrap
``Exception``; ``MemoryError`` and ``RecursionError`` play Java's ``Error`` and always propagate; a cause
in the ``rethrow`` allowlist (subclasses match) is re-raised as it is; ``always_throw`` re-raises the
wrapper; anything else becomes the error message, or ``Exception occurred in tool: <name> (<Type>)``
when the message is empty or blank.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from toolweave.exceptions import ToolExecutionError

__all__ = ['DefaultToolExecutionExceptionProcessor', 'ToolExecutionExceptionProcessor']

_ALWAYS_PROPAGATE = (MemoryError, RecursionError)


@runtime_checkable
class ToolExecutionExceptionProcessor(Protocol):
    """Decides what a failed tool call becomes."""

    def process(self, error: ToolExecutionError) -> str:
        """Return the text for the model, or raise."""
        ...


class DefaultToolExecutionExceptionProcessor:
    """Default policy: tool errors become text the model can react to.

    Args:
        always_throw: Re-raise every ``ToolExecutionError`` instead of returning text.
        rethrow: Exception types whose instances (as the error's cause) are re-raised unwrapped.

    Raises:
        TypeError: ``rethrow`` is not an iterable of exception classes.
    """

    def __init__(self, always_throw: bool = False, rethrow: Iterable[type[BaseException]] = ()) -> None:
        if rethrow is None or isinstance(rethrow, (str, bytes)) or not isinstance(rethrow, Iterable):
            raise TypeError(f'rethrow must be an iterable of exception classes, not {type(rethrow).__name__}')
        self.always_throw = always_throw
        self.rethrow = tuple(rethrow)
        wrong = [kind for kind in self.rethrow if not (isinstance(kind, type) and issubclass(kind, BaseException))]
        if wrong:
            raise TypeError(f'rethrow must hold exception classes, got {wrong!r}')

    def process(self, error: ToolExecutionError) -> str:
        """The message for the model: the error's message, or the fallback text when it is empty or blank.

        Raises:
            TypeError: ``error`` is not a ``ToolExecutionError``.
            BaseException: the cause, when it must propagate or is in ``rethrow``.
            ToolExecutionError: ``error`` itself, when ``always_throw`` is set.
        """
        if not isinstance(error, ToolExecutionError):
            raise TypeError(f'error must be a ToolExecutionError, not {type(error).__name__}')
        cause = error.cause
        if not isinstance(cause, Exception) or isinstance(cause, _ALWAYS_PROPAGATE):
            raise cause
        if self.rethrow and isinstance(cause, self.rethrow):
            raise cause
        if self.always_throw:
            raise error
        message = str(error)
        if message.strip():
            return message
        return f'Exception occurred in tool: {error.tool_definition.name} ({type(cause).__name__})'
