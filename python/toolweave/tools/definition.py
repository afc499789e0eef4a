"""What the model sees of a tool: ``ToolDefinition`` and ``ToolMetadata`` (Spring AI names)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolweave.approvals import ApprovalPredicate

__all__ = ['ToolDefinition', 'ToolMetadata', 'check_text']


@dataclass(frozen=True)
class ToolDefinition:
    """Name, description and JSON Schema of a tool's input, as sent to the model.

    Attributes:
        name: Unique tool name (``^[a-zA-Z0-9_.-]+$``, at most 64 characters for most providers).
        description: What the tool does, written for the model.
        input_schema: JSON Schema (2020-12) of the argument object.

    Raises:
        TypeError: ``name`` or ``description`` is not a ``str``, or ``input_schema`` not a mapping.
        ValueError: ``name`` or ``description`` is empty or blank (Spring's ``DefaultToolDefinition``).
    """

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {'type': 'object', 'properties': {}})

    def __post_init__(self) -> None:
        check_text('name', self.name)
        check_text('description', self.description)
        if not isinstance(self.input_schema, Mapping):
            raise TypeError(
                f'input_schema must be a mapping (a JSON Schema object), not {type(self.input_schema).__name__}'
            )

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI Chat Completions ``tools[]`` entry: ``{'type': 'function', 'function': {...}}``."""
        return {
            'type': 'function',
            'function': {'name': self.name, 'description': self.description, 'parameters': dict(self.input_schema)},
        }


def check_text(argument: str, value: object) -> None:
    """Raise unless ``value`` is a non-blank ``str`` (a tool's name or description).

    Raises:
        TypeError: ``value`` is not a ``str`` (the message names ``argument``).
        ValueError: ``value`` is empty or blank.
    """
    if not isinstance(value, str):
        raise TypeError(f'{argument} must be a str, not {type(value).__name__}')
    if not value.strip():
        raise ValueError(f'{argument} cannot be empty')


@dataclass(frozen=True)
class ToolMetadata:
    """How the framework treats a tool's result (Spring AI ``ToolMetadata``).

    Attributes:
        return_direct: Hand the result to the caller instead of back to the model.
        sequential: Run this tool alone: the calls before it in a turn finish before it starts and the
            calls after it start once it has returned (beyond Spring, which runs every call in order).
        timeout: Seconds the manager waits for one call; on expiry the model gets an error text
            (``None``: no limit, or the manager's ``default_timeout``).
        max_retries: Invalid-argument calls per turn answered with the error text before the
            manager gives up with ``ToolRetryBudgetExceededError`` (beyond Spring AI).
        requires_approval: ``True``, or a predicate of the call and its ``ToolContext``: a call that
            needs it waits for a person's decision and the run pauses (:mod:`toolweave.approvals`).
        deferred: The result comes from outside the process: every call pauses the run until it is given.

    Raises:
        ValueError: ``timeout`` is not a positive number, or ``max_retries`` is negative.
        TypeError: ``requires_approval`` is neither a bool nor callable, or ``deferred`` not a bool.
    """

    return_direct: bool = False
    sequential: bool = False
    timeout: float | None = None
    max_retries: int = 1
    requires_approval: bool | ApprovalPredicate = False
    deferred: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.requires_approval, bool) and not callable(self.requires_approval):
            raise TypeError(f'requires_approval must be a bool or a callable, got {self.requires_approval!r}')
        if not isinstance(self.deferred, bool):
            raise TypeError(f'deferred must be a bool, got {self.deferred!r}')
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f'max_retries must be >= 0, got {self.max_retries!r}')
        if self.timeout is not None and (
            isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or not self.timeout > 0
        ):
            raise ValueError(f'a tool timeout must be a positive number of seconds, got {self.timeout!r}')
