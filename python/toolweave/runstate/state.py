"""``RunState``: everything a paused tool loop needs to continue, JSON-serialisable and versioned.

A run pauses when a round asks for calls that wait for a decision (:mod:`toolweave.approvals`). Its
state holds the turn's messages up to the pause (the assistant message asking for the calls and the
responses of the calls that ran), the model rounds made so far, the usage summed so far, the
repetition guard's count, the pending calls, whether the calls that ran were ``return_direct``, and
what advisors keep for themselves (the tool-search session's finds). The per-tool call limits and
retry budgets count from the turn's messages (see :mod:`toolweave.tools.limits` and
:mod:`toolweave.tools.retry`), so they carry across the pause with them. Nothing in it refers to
process memory: any worker that has the same tools can continue the run.

The JSON form (:meth:`RunState.to_json`) is ``{"format", "version", "body", "digest"}``: ``digest``
is the HMAC-SHA256 of the body's canonical JSON, keyed with your ``key`` (a secret: then only holders
of the key can make a state the loop accepts) or a fixed public key (then it detects corruption and
truncation, not a deliberate forgery). A state of another format version, or whose digest does not
match, is refused with a typed error.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolweave.approvals import Approve, Decision, DeferredResult, Deny, PendingToolCall
from toolweave.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.chat.response import Usage
from toolweave.memory.serialization import message_from_dict, message_to_dict

__all__ = [
    'RESUME_CONTEXT_KEY',
    'RUN_STATE_VERSION',
    'InvalidDecisionError',
    'InvalidRunStateError',
    'MissingDecisionError',
    'Resumption',
    'RunAlreadyResumedError',
    'RunState',
    'RunStateError',
    'RunStateNotFoundError',
    'RunStateVersionError',
    'UnknownToolCallError',
    'new_run_id',
]

RESUME_CONTEXT_KEY = 'toolweave.resume'
"""Request-context key of the :class:`Resumption` the tool loop continues (``ChatClient`` puts it there)."""
RUN_STATE_VERSION = 1
"""The format version this build writes and reads."""
_FORMAT = 'toolweave.run_state'
_PUBLIC_KEY = b'toolweave.run_state.v1'


class RunStateError(ValueError):
    """Base of the errors of pausing and resuming runs; raising one changes nothing (no tool ran, nothing stored)."""


class InvalidRunStateError(RunStateError):
    """The state is not a run state of this format: truncated, tampered with (digest), or malformed."""


class RunStateVersionError(RunStateError):
    """The state was written in another format version (``version``) than this build reads.

    Attributes:
        version: The state's version.
    """

    def __init__(self, version: object) -> None:
        super().__init__(
            f'run state format version {version!r} is not supported (this build reads {RUN_STATE_VERSION})'
        )
        self.version = version


class RunAlreadyResumedError(RunStateError):
    """The run was resumed already (by this or another process): a paused run continues once.

    Attributes:
        run_id: The run's id.
    """

    def __init__(self, run_id: str) -> None:
        super().__init__(f'run {run_id!r} was resumed already: a paused run continues once')
        self.run_id = run_id


class RunStateNotFoundError(RunStateError, LookupError):
    """No paused run with this id in the store (never stored, or its time to live ran out).

    Attributes:
        run_id: The id asked for.
    """

    def __init__(self, run_id: str) -> None:
        super().__init__(f'no paused run {run_id!r} in the store (never stored, or expired)')
        self.run_id = run_id


class RunPausedError(RuntimeError):
    """A stream's ``collect()``/``acollect()`` ended in a pause for decisions on tool calls, not in an answer.

    Those helpers return only text, so the pause is raised with what resuming needs; ``call()`` and
    ``stream().events()`` give the pause as a value instead (``response.is_paused()``, ``ApprovalRequested``).

    Attributes:
        state: The paused run's state: ``client.resume(error.state, decisions)`` continues it.
        text: The text the stream delivered before it paused (often ``''``).
    """

    def __init__(self, state: RunState, text: str = '') -> None:
        names = ', '.join(dict.fromkeys(call.name for call in state.pending))
        super().__init__(
            f'the run paused for decisions on {len(state.pending)} tool call(s) ({names}): resume it with '
            'client.resume(error.state, decisions)'
        )
        self.state = state
        self.text = text

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle/copy rebuild from the state and text (the default gives ``args``, the message only)
        return type(self), (self.state, self.text), self.__dict__ or None


class UnknownToolCallError(RunStateError):
    """Decisions name calls that are not pending in the run.

    Attributes:
        call_ids: The unknown ids, sorted.
    """

    def __init__(self, call_ids: Sequence[str]) -> None:
        super().__init__(f'decisions for tool calls that are not pending in this run: {", ".join(call_ids)}')
        self.call_ids = tuple(call_ids)


class MissingToolError(RunStateError, LookupError):
    """Approved calls name tools the resuming request does not have (give it the run's tools).

    Attributes:
        tool_names: The missing tools' names, sorted.
    """

    def __init__(self, tool_names: Sequence[str]) -> None:
        names = ', '.join(repr(n) for n in tool_names)
        super().__init__(f"approved tool calls need tools this request does not have: {names}; pass the run's tools")
        self.tool_names = tuple(tool_names)


class MissingDecisionError(RunStateError):
    """A pending call has no decision.

    Attributes:
        call_ids: The pending calls without a decision, in call order.
    """

    def __init__(self, call_ids: Sequence[str]) -> None:
        super().__init__(f'no decision for the pending tool call(s): {", ".join(call_ids)}')
        self.call_ids = tuple(call_ids)


class InvalidDecisionError(RunStateError):
    """A decision does not fit its call (not an ``Approve``/``Deny``/``DeferredResult``, or ``Approve`` of a deferred call)."""


def new_run_id() -> str:
    """A fresh random run id (32 hex digits)."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class RunState:
    """A paused run (see the module docstring); make it with the loop, not by hand.

    Attributes:
        run_id: The run's id (key of a :class:`~toolweave.runstate.RunStateStore`).
        messages: The turn's messages up to the pause: the prompt, every round, the assistant message
            asking for the pending calls and a tool-response message with the calls that ran.
        prompt_length: How many of ``messages`` were the run's prompt.
        rounds: Model rounds made so far.
        usage: Usage summed over those rounds (``None``: none reported).
        pending: The calls that wait for a decision, in call order.
        return_direct: Whether the calls that ran in the paused round were all ``return_direct``
            (``None``: none ran).
        repeat: The repetition guard's state: ``[tool name, canonical arguments, streak]`` or ``None``.
        extras: What advisors keep across the pause, JSON values by advisor key.
        version: The format version.
    """

    run_id: str
    messages: tuple[Message, ...]
    prompt_length: int
    rounds: int
    usage: Usage | None
    pending: tuple[PendingToolCall, ...]
    return_direct: bool | None = None
    repeat: tuple[str, str, int] | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    version: int = RUN_STATE_VERSION

    @property
    def tool_call_message(self) -> AssistantMessage:
        """The assistant message that asked for the pending calls."""
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage) and message.tool_calls:
                return message
        raise InvalidRunStateError('the run state has no assistant message asking for tools')

    @property
    def answered(self) -> ToolResponseMessage:
        """The responses of the paused round's calls that ran."""
        last = self.messages[-1] if self.messages else None
        if not isinstance(last, ToolResponseMessage):
            raise InvalidRunStateError('the run state does not end with the paused round tool responses')
        return last

    def pending_call(self, call_id: str) -> ToolCall:
        """The pending call ``call_id`` as the model sent it."""
        return next(c for c in self.tool_call_message.tool_calls if c.id == call_id)

    def check_decisions(self, decisions: Mapping[str, Decision]) -> None:
        """Check that ``decisions`` hold exactly one fitting decision per pending call.

        Raises:
            UnknownToolCallError: a decision names a call that is not pending.
            MissingDecisionError: a pending call has no decision.
            InvalidDecisionError: a decision is of the wrong type, approves a deferred call, or holds a
                field of the wrong type (a ``Deny`` message that is not text, a ``DeferredResult`` whose
                ``is_error`` is not a bool or whose value the tools' result converter cannot convert):
                caught here, before the run is claimed, instead of failing the claimed run.
        """
        if not isinstance(decisions, Mapping):
            raise InvalidDecisionError(f'decisions must be a mapping of call id to decision, got {decisions!r:.80}')
        pending = {call.id: call for call in self.pending}
        unknown = sorted(str(call_id) for call_id in decisions if call_id not in pending)
        if unknown:
            raise UnknownToolCallError(unknown)
        missing = [call.id for call in self.pending if call.id not in decisions]
        if missing:
            raise MissingDecisionError(missing)
        for call_id, decision in decisions.items():
            if not isinstance(decision, Approve | Deny | DeferredResult):
                raise InvalidDecisionError(
                    f'the decision for {call_id!r} must be Approve(), Deny(...) or DeferredResult(...), '
                    f'got {decision!r:.80}'
                )
            if isinstance(decision, Approve) and pending[call_id].deferred:
                raise InvalidDecisionError(
                    f"call {call_id!r} of deferred tool '{pending[call_id].name}' cannot be approved: "
                    'give its result with DeferredResult(...) (or Deny it)'
                )
            _check_fields(call_id, decision)

    # -- JSON ----------------------------------------------------------------------------------

    def to_dict(self, key: bytes | None = None) -> dict[str, Any]:
        """The JSON-ready form ``{"format", "version", "body", "digest"}`` (see the module docstring).

        Raises:
            TypeError: a message's metadata or an extra holds a value JSON cannot represent.
        """
        body = {
            'run_id': self.run_id,
            'messages': [message_to_dict(m) for m in self.messages],
            'prompt_length': self.prompt_length,
            'rounds': self.rounds,
            'usage': self.usage.to_dict() if self.usage is not None else None,
            'pending': [p.to_dict() for p in self.pending],
            'return_direct': self.return_direct,
            'repeat': list(self.repeat) if self.repeat is not None else None,
            'extras': dict(self.extras),
        }
        return {'format': _FORMAT, 'version': self.version, 'body': body, 'digest': _digest(body, key)}

    def to_json(self, key: bytes | None = None) -> str:
        """:meth:`to_dict` as compact JSON text (UTF-8 safe)."""
        return orjson.dumps(self.to_dict(key)).decode()

    @classmethod
    def from_dict(cls, data: object, key: bytes | None = None) -> RunState:
        """The state :meth:`to_dict` made ``data`` from.

        Raises:
            RunStateVersionError: another format version.
            InvalidRunStateError: not a run state, a digest that does not match (tampered), or a malformed body.
        """
        if not isinstance(data, Mapping) or data.get('format') != _FORMAT:
            raise InvalidRunStateError('not a toolweave run state (format field missing or wrong)')
        version = data.get('version')
        if version != RUN_STATE_VERSION or isinstance(version, bool):
            raise RunStateVersionError(version)
        body = data.get('body')
        digest = data.get('digest')
        if not isinstance(body, Mapping) or not isinstance(digest, str):
            raise InvalidRunStateError('run state without body or digest')
        try:
            expected = _digest(body, key)
        except TypeError as exc:
            raise InvalidRunStateError(f'run state body is not JSON: {exc}') from exc
        if not hmac.compare_digest(expected, digest):
            raise InvalidRunStateError('run state digest does not match: it was changed (or signed with another key)')
        try:
            return _from_body(body)
        except (KeyError, TypeError, ValueError, IndexError) as exc:  # the text is cut: a body may be megabytes
            raise InvalidRunStateError(f'malformed run state body: {exc!s:.300}') from exc

    @classmethod
    def from_json(cls, text: str | bytes, key: bytes | None = None) -> RunState:
        """The state :meth:`to_json` wrote.

        Raises:
            InvalidRunStateError: not JSON (truncated), or as :meth:`from_dict`.
            RunStateVersionError: another format version.
        """
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise InvalidRunStateError(f'run state is not JSON (truncated?): {exc}') from exc
        return cls.from_dict(data, key)


def _check_fields(call_id: str, decision: Decision) -> None:
    """Raise :class:`InvalidDecisionError` when ``decision``'s fields cannot make a tool response."""
    if isinstance(decision, Deny) and not isinstance(decision.message, str | None):
        raise InvalidDecisionError(
            f'the Deny message for {call_id!r} must be text or None, got {type(decision.message).__name__}'
        )
    if isinstance(decision, DeferredResult):
        if not isinstance(decision.is_error, bool):
            raise InvalidDecisionError(
                f'DeferredResult.is_error for {call_id!r} must be a bool, got {type(decision.is_error).__name__}'
            )
        from toolweave.tools.converter import DefaultToolCallResultConverter

        try:
            DefaultToolCallResultConverter().convert(decision.value, None)
        except (TypeError, ValueError) as exc:
            raise InvalidDecisionError(
                f'the DeferredResult value for {call_id!r} cannot be sent to the model: {exc!s:.200}'
            ) from exc


def _digest(body: Mapping[str, Any], key: bytes | None) -> str:
    canonical = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    return hmac.new(key or _PUBLIC_KEY, canonical, hashlib.sha256).hexdigest()


def _from_body(body: Mapping[str, Any]) -> RunState:
    """The state of a body whose digest matched, every field checked for its type.

    The public key does not stop a crafted body, so nothing is trusted (``TypeError``/``ValueError``/``KeyError``:
    malformed).
    """
    messages = tuple(_message(m) for m in _typed(body['messages'], list))
    usage = Usage.from_openai(_typed(body['usage'], Mapping)) if body['usage'] is not None else None
    repeat = body['repeat']
    pending = tuple(PendingToolCall.from_dict(_typed(p, Mapping)) for p in _typed(body['pending'], list))
    state = RunState(
        run_id=_typed(body['run_id'], str),
        messages=messages,
        prompt_length=_typed(body['prompt_length'], int),
        rounds=_typed(body['rounds'], int),
        usage=usage,
        pending=pending,
        return_direct=body['return_direct'] if body['return_direct'] is None else _typed(body['return_direct'], bool),
        repeat=(_typed(repeat[0], str), _typed(repeat[1], str), _typed(repeat[2], int)) if repeat is not None else None,
        extras=dict(_typed(body['extras'], Mapping)),
    )
    if not state.run_id or len({p.id for p in pending}) != len(pending):
        raise ValueError('a paused run has a run id and distinct pending call ids')
    if not pending or not 0 <= state.prompt_length <= len(messages) or state.rounds < 1:
        raise ValueError('a paused run has pending calls, a prompt within its messages and at least one round')
    calls = {c.id for c in state.tool_call_message.tool_calls}
    answered = {r.id for r in state.answered.responses}
    if any(p.id not in calls or p.id in answered for p in pending):
        raise ValueError('pending calls must be calls of the paused round that have no response')
    return state


def _message(data: object) -> Message:
    """The stored message ``data``, its text fields checked to be text (``TypeError`` otherwise)."""
    message = message_from_dict(_typed(data, Mapping))
    if isinstance(message, SystemMessage | UserMessage):
        _typed(message.text, str)
    elif isinstance(message, AssistantMessage):
        _typed(message.content if message.content is not None else '', str)
        for call in message.tool_calls:
            for value in (call.id, call.type, call.name, call.arguments):
                _typed(value, str)
    elif isinstance(message, ToolResponseMessage):
        for response in message.responses:
            for value in (response.id, response.name, response.response_data):
                _typed(value, str)
    return message


def _typed(value: Any, kind: type) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f'expected {kind.__name__}, got {value!r:.40}')
    return value


@dataclass(frozen=True)
class Resumption:
    """A paused run and the checked decisions it continues with (see :meth:`RunState.check_decisions`)."""

    state: RunState
    decisions: Mapping[str, Decision]
