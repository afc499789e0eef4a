"""Human approval and deferred tools: what pauses a tool loop, and the decisions that resume it.

Beyond Spring AI 2.0 (which leaves this to checks written inside each tool), after pydantic-ai
(``requires_approval``, ``ApprovalRequired``, deferred tool requests and results) and the OpenAI
Agents SDK (``needs_approval`` and a serialisable run state):

- ``@tool(requires_approval=True)``, or a predicate ``requires_approval=lambda call, context: ...`` of
  the :class:`~toolweave.chat.ToolCall` and the call's :class:`~toolweave.tools.ToolContext`: the
  call waits for a person's decision;
- a tool raises :class:`ApprovalRequired` at run time, before doing anything irreversible, to ask
  for the same (once approved it runs again and :func:`tool_call_approved` is ``True`` inside it);
- ``@tool(deferred=True)``, or a ``FunctionToolCallback`` built without a function: the result
  comes from outside the process (a front-end action, a job queue, a person).

A round that asks for such a call runs its other calls, then the loop pauses: the response lists
the :class:`PendingToolCall` s and carries a :class:`~toolweave.runstate.RunState`. Resume with one
decision per pending call: :class:`Approve`, :class:`Deny` (the model reads the message) or
:class:`DeferredResult` (the call's result, given by you).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from toolweave.chat.messages import ToolCall
    from toolweave.tools.context import ToolContext
    from toolweave.tools.definition import ToolMetadata

__all__ = [
    'APPROVED_TOOL_CALLS_KEY',
    'DENIED_ERROR_TYPE',
    'PAUSED_FINISH_REASON',
    'ApprovalPredicate',
    'ApprovalRequired',
    'Approve',
    'Decision',
    'DeferredResult',
    'Deny',
    'PendingToolCall',
    'approval_hold',
    'tool_call_approved',
]

ApprovalPredicate: TypeAlias = Callable[['ToolCall', 'ToolContext'], bool]
"""``requires_approval`` as a function of the call (id, name, argument text) and its ``ToolContext``."""

APPROVED_TOOL_CALLS_KEY = 'toolweave.approved_tool_calls'
"""Tool-context key: the ids (a ``frozenset``) of the calls a person approved; the manager runs them."""
PAUSED_FINISH_REASON = 'paused'
"""Finish reason of the response of a run paused for decisions."""
DENIED_ERROR_TYPE = 'ToolCallDenied'
"""``ToolResponse.error_type`` of a denied call."""

_APPROVED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar('toolweave_approved', default=frozenset())


class ApprovalRequired(Exception):  # the name pydantic-ai and the issue use: a request, not a failure
    """Raised by a tool, before doing anything irreversible, to pause the run for a person's approval.

    The tool manager answers nothing for the call: the loop runs the round's other calls and pauses
    with this call pending (``reason`` shown to the person). Once approved, the tool runs again,
    with :func:`tool_call_approved` returning ``True``; raised again then, it is an ordinary failure.

    Args:
        reason: Why approval is needed (shown to the person, not to the model).
    """

    def __init__(self, reason: str = '') -> None:
        super().__init__(reason)
        self.reason = reason


def tool_call_approved() -> bool:
    """Whether the tool call running in this context was approved by a person (inside a tool)."""
    from toolweave.tools.context import current_tool_call

    call = current_tool_call()
    return call is not None and call.id in _APPROVED.get()


def approved_scope(ids: frozenset[str]) -> contextvars.Token[frozenset[str]]:
    """Make ``ids`` the approved calls of this context (the manager, around a batch); reset with the token."""
    return _APPROVED.set(ids)


def reset_approved(token: contextvars.Token[frozenset[str]]) -> None:
    """Undo :func:`approved_scope`."""
    _APPROVED.reset(token)


@dataclass(frozen=True)
class PendingToolCall:
    """A tool call the run waits for.

    Attributes:
        id: The call's id (key of the decision).
        name: The tool's name.
        arguments: The argument text parsed (lenient), ``None`` when it is not JSON.
        reason: Why it waits (the default names the tool; an ``ApprovalRequired``'s reason).
        deferred: ``True``: its result comes from outside (give a :class:`DeferredResult`);
            ``False``: it waits for approval.
    """

    id: str
    name: str
    arguments: Any
    reason: str
    deferred: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the fields."""
        return {
            'id': self.id,
            'name': self.name,
            'arguments': self.arguments,
            'reason': self.reason,
            'deferred': self.deferred,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingToolCall:
        """The call :meth:`to_dict` gave ``data`` (``KeyError``/``TypeError`` on a malformed dict)."""
        fields = (data['id'], data['name'], data['reason'])
        if not all(isinstance(value, str) for value in fields) or not isinstance(data['deferred'], bool):
            raise TypeError(f'malformed pending call: {dict(data)!r:.200}')
        return cls(data['id'], data['name'], data['arguments'], data['reason'], data['deferred'])


@dataclass(frozen=True)
class Approve:
    """Run the call (its tool runs with :func:`tool_call_approved` ``True``)."""


@dataclass(frozen=True)
class Deny:
    """Do not run the call; the model reads ``message`` as its (error) result.

    Attributes:
        message: The text the model reads (default: that the user denied the call to that tool).
    """

    message: str | None = None

    def text(self, tool_name: str) -> str:
        """What the model reads for a denied call to ``tool_name``.

        >>> Deny().text('transfer_money')
        "The user denied the call to tool 'transfer_money': it was not executed."
        >>> Deny('Ask for the IBAN first.').text('transfer_money')
        'Ask for the IBAN first.'
        """
        if self.message:
            return self.message
        return f"The user denied the call to tool '{tool_name}': it was not executed."


@dataclass(frozen=True)
class DeferredResult:
    """The result of a call, given from outside: a deferred tool's, or one you ran yourself.

    Attributes:
        value: A ``str`` is sent as it is; anything else as JSON (the tools' default result converter).
        is_error: The result reports a failure (the model reads it as an error result).
    """

    value: Any
    is_error: bool = False


Decision: TypeAlias = Approve | Deny | DeferredResult
"""One decision per pending call, keyed by the call's id."""


def approval_hold(metadata: ToolMetadata, call: ToolCall, context: Callable[[], ToolContext]) -> PendingToolCall | None:
    """The pending call when ``call`` of a tool with ``metadata`` must wait, else ``None``.

    A deferred tool always waits; a tool with ``requires_approval`` (``True``, or a predicate of the
    call and its ``ToolContext`` that returns true) waits for approval. ``context`` makes the call's
    ``ToolContext`` (only asked for by a predicate). An exception the predicate raises propagates.
    """
    if getattr(metadata, 'deferred', False):
        reason = f"Tool '{call.name}' is deferred: its result comes from outside the run."
        return PendingToolCall(call.id, call.name, _parsed(call.arguments), reason, deferred=True)
    rule = getattr(metadata, 'requires_approval', False)
    if rule is True or (callable(rule) and rule(call, context())):
        return PendingToolCall(call.id, call.name, _parsed(call.arguments), f"Tool '{call.name}' requires approval.")
    return None


def asked_pending(call: ToolCall, request: ApprovalRequired) -> PendingToolCall:
    """The pending call for a tool that raised ``request`` at run time."""
    reason = request.reason or f"Tool '{call.name}' asked for approval."
    return PendingToolCall(call.id, call.name, _parsed(call.arguments), reason)


def _parsed(arguments: str) -> Any:
    from toolweave._native import parse_arguments
    from toolweave.exceptions import ToolArgumentsError

    try:
        return parse_arguments(arguments or '{}', 'lenient')
    except ToolArgumentsError:
        return None
