"""Typed run events: what the tool loop is doing, as it happens.

A streaming service shows its users which tool is being called, its arguments as they arrive, the
result and what each round cost. Every run of the tool loop produces these events, in this order
per round::

    RoundStarted
      (TextDelta | ReasoningDelta | ToolCallStarted | ToolCallArgumentsDelta)*   as the model streams
      ToolCallReady*                  one per complete tool call, arguments parsed
      RoundFinished                   finish reason and the round's usage
      (ToolExecutionStarted ToolResult)*   one pair per executed call (interleaved when calls run concurrently)
    ... next round ...
    RunFinished                       the final response and the usage summed over every round
      or ApprovalRequested            the run paused: the calls waiting for a decision and the run's state

Invariants: a call's ``ToolCallStarted`` comes before its ``ToolCallArgumentsDelta`` events, which
come before its ``ToolCallReady``, which comes before its ``ToolExecutionStarted`` and ``ToolResult``;
exactly one ``RoundFinished`` per round; ``RunFinished`` (or, for a run paused for decisions,
``ApprovalRequested``) is last; a resumed run's events continue its round numbers (its approved
calls' ``ToolExecutionStarted``/``ToolResult`` first, in the paused round). A call that asks for
approval while it runs (``ApprovalRequired``) has a ``ToolExecutionStarted`` and no ``ToolResult``:
it is one of the ``ApprovalRequested`` calls. A blocking round (``call()``,
``acall()``: the model answers whole) emits no delta events: ``ToolCallStarted`` and ``ToolCallReady``
still come for every call. A streamed call's arguments arrive fragment by fragment when the provider
streams them (OpenAI-compatible, Responses, Anthropic), else as one delta (Gemini, Ollama, scripted
models). A run that fails ends without ``RunFinished`` (the error is raised instead).

Get them with ``client.prompt(...).stream().events()`` (``async for``, or ``for`` in synchronous
code), or pass ``on_event=`` to ``call()``/``acall()``. The events come from the tool loop
(``ToolCallingAdvisor``): a request without one has none. Each event is a frozen dataclass;
``event.kind`` is a stable snake_case name and :func:`event_to_dict` gives a JSON-ready dict (e.g. to
forward as Server-Sent Events).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from toolweave.approvals import PendingToolCall
from toolweave.chat.messages import ToolCall, ToolResponse
from toolweave.chat.response import ChatResponse, Usage

if TYPE_CHECKING:
    from toolweave.runstate.state import RunState

__all__ = [
    'ON_EVENT_CONTEXT_KEY',
    'ApprovalRequested',
    'EventHandler',
    'ReasoningDelta',
    'RoundFinished',
    'RoundStarted',
    'RunEvent',
    'RunFinished',
    'TextDelta',
    'ToolCallArgumentsDelta',
    'ToolCallReady',
    'ToolCallStarted',
    'ToolExecutionListener',
    'ToolExecutionStarted',
    'ToolResult',
    'current_tool_listener',
    'event_to_dict',
    'listening_to_tools',
]


@dataclass(frozen=True)
class RunEvent:
    """Base class of every run event.

    Attributes:
        round: The model round the event belongs to, from 1.
    """

    kind: ClassVar[str] = 'run_event'
    round: int


@dataclass(frozen=True)
class RoundStarted(RunEvent):
    """A model round starts (the request is about to be sent).

    >>> RoundStarted(round=1).kind
    'round_started'
    """

    kind: ClassVar[str] = 'round_started'


@dataclass(frozen=True)
class TextDelta(RunEvent):
    """Answer text the model streamed (only the new piece).

    >>> TextDelta(round=2, text='It is sunny').text
    'It is sunny'
    """

    kind: ClassVar[str] = 'text_delta'
    text: str


@dataclass(frozen=True)
class ReasoningDelta(RunEvent):
    """Reasoning ("thinking") text the model streamed, when the provider sends it.

    >>> ReasoningDelta(round=1, text='The user wants').kind
    'reasoning_delta'
    """

    kind: ClassVar[str] = 'reasoning_delta'
    text: str


@dataclass(frozen=True)
class ToolCallStarted(RunEvent):
    """The model began a tool call: its position in the round, provider id and tool name.

    >>> ToolCallStarted(round=1, index=0, id='call_1', name='get_weather').name
    'get_weather'
    """

    kind: ClassVar[str] = 'tool_call_started'
    index: int
    id: str
    name: str


@dataclass(frozen=True)
class ToolCallArgumentsDelta(RunEvent):
    """A fragment of a tool call's argument JSON, and the arguments parsed so far.

    Attributes:
        index: The call's position in the round (as :class:`ToolCallStarted`).
        delta: The new fragment of argument text (raw JSON text, possibly cut anywhere).
        partial: The arguments parsed so far in partial mode (open strings, arrays and objects
            closed), e.g. ``{'city': 'Par'}``; ``None`` while the text so far is not the start of a
            JSON object. It is a live value: later fragments of the call may update the same object
            in place, so copy it (``copy.deepcopy``) if you keep it beyond the event.

    >>> ToolCallArgumentsDelta(round=1, index=0, delta='"Par', partial={'city': 'Par'}).partial
    {'city': 'Par'}
    """

    kind: ClassVar[str] = 'tool_call_arguments_delta'
    index: int
    delta: str
    partial: Any


@dataclass(frozen=True)
class ToolCallReady(RunEvent):
    """A tool call is complete: ``call.arguments`` is the whole argument text, ``arguments`` it parsed.

    Attributes:
        index: The call's position in the round.
        call: The complete call.
        arguments: ``call.arguments`` parsed (lenient mode), or ``None`` when it is not JSON.

    >>> ToolCallReady(round=1, index=0, call=ToolCall('c1', 'function', 'f', '{}'), arguments={}).call.name
    'f'
    """

    kind: ClassVar[str] = 'tool_call_ready'
    index: int
    call: ToolCall
    arguments: Any


@dataclass(frozen=True)
class RoundFinished(RunEvent):
    """The model's answer for this round is complete.

    Attributes:
        finish_reason: The normalised finish reason (``tool_calls``, ``stop``, ``length``, ...).
        usage: This round's usage (``None`` when the provider reported none).

    >>> RoundFinished(round=1, finish_reason='tool_calls', usage=None).finish_reason
    'tool_calls'
    """

    kind: ClassVar[str] = 'round_finished'
    finish_reason: str | None
    usage: Usage | None


@dataclass(frozen=True)
class ToolExecutionStarted(RunEvent):
    """A tool call is about to run.

    >>> ToolExecutionStarted(round=1, call=ToolCall('c1', 'function', 'f', '{}')).call.id
    'c1'
    """

    kind: ClassVar[str] = 'tool_execution_started'
    call: ToolCall


@dataclass(frozen=True)
class ToolResult(RunEvent):
    """A tool call finished (or failed).

    Attributes:
        call_id: The call's id.
        name: The tool's name.
        text: What the model is sent for this call (the result, or the error text).
        is_error: The tool raised, got invalid arguments, timed out, or was not executed.
        error_type: The exception's class name when ``is_error`` (e.g. ``'ValueError'``), else ``None``.
        duration: Seconds the call took (monotonic clock).

    >>> ToolResult(round=1, call_id='c1', name='f', text='18 C', is_error=False, error_type=None,
    ...            duration=0.01).is_error
    False
    """

    kind: ClassVar[str] = 'tool_result'
    call_id: str
    name: str
    text: str
    is_error: bool
    error_type: str | None
    duration: float


@dataclass(frozen=True)
class RunFinished(RunEvent):
    """The run ended: the final response (as ``call()`` returns it) and the usage summed over every round.

    ``round`` is the number of model rounds the run made.
    """

    kind: ClassVar[str] = 'run_finished'
    response: ChatResponse
    usage: Usage | None


@dataclass(frozen=True)
class ApprovalRequested(RunEvent):
    """The run paused: ``calls`` wait for a decision; resume with ``state`` (see :mod:`toolweave.approvals`).

    The last event of a paused run (instead of :class:`RunFinished`); a stream ends after it.

    Attributes:
        calls: The pending calls (id, name, parsed arguments, reason), in call order.
        state: The run's :class:`~toolweave.runstate.RunState` (JSON form: ``state.to_json()``).
    """

    kind: ClassVar[str] = 'approval_requested'
    calls: tuple[PendingToolCall, ...]
    state: RunState


EventHandler = Callable[[RunEvent], None]
"""An ``on_event`` callback: called synchronously, in order, for every event of a run."""

ON_EVENT_CONTEXT_KEY = 'toolweave.on_event'
"""The request-context key under which the tool loop finds the run's :data:`EventHandler`.

``ChatClient`` puts ``on_event`` there; set it yourself when you drive an advisor chain by hand. A
handler that also has an async ``drained()`` method paces a stream: the loop awaits it after each
chunk's events, so a consumer reading events from a queue sees every live ``partial`` before the next
fragment updates it (what ``stream().events()`` does).
"""


def event_to_dict(event: RunEvent) -> dict[str, Any]:
    """A JSON-ready dict of ``event``: ``{'kind': ..., 'round': ..., <fields>}``.

    Tool calls become ``{'id', 'name', 'arguments'}``, usage ``{'prompt_tokens', 'completion_tokens',
    'total_tokens'}``, a final response ``{'text', 'finish_reason'}``, pending calls
    ``{'id', 'name', 'arguments', 'reason', 'deferred'}`` and a run state its run id (the state itself
    stays on the server).

    >>> event_to_dict(TextDelta(round=1, text='Hi'))
    {'kind': 'text_delta', 'round': 1, 'text': 'Hi'}
    """
    cls = type(event)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(field.name for field in fields(event))
    data: dict[str, Any] = {'kind': event.kind}
    for name in names:
        value = getattr(event, name)
        data[name] = value if type(value) in _AS_IS else _plain(value)
    return data


_FIELD_NAMES: dict[type[RunEvent], tuple[str, ...]] = {}
"""Each event class's field names, looked up once (a stream has hundreds of events per request)."""

_AS_IS = frozenset({str, int, float, bool, type(None), dict, list})
"""Exact types :func:`_plain` returns unchanged (checked before it, so text deltas skip its lookups)."""


def _plain(value: Any) -> Any:
    from toolweave.runstate.state import RunState

    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, PendingToolCall):
        return value.to_dict()
    if isinstance(value, RunState):
        return value.run_id
    if isinstance(value, ToolCall):
        return {'id': value.id, 'name': value.name, 'arguments': value.arguments}
    if isinstance(value, Usage):
        return {
            'prompt_tokens': value.prompt_tokens,
            'completion_tokens': value.completion_tokens,
            'total_tokens': value.total_tokens,
        }
    if isinstance(value, ChatResponse):
        generation = value.generations[0] if value.generations else None
        return {
            'text': generation.output.text if generation else '',
            'finish_reason': generation.finish_reason if generation else None,
        }
    return value


class ToolExecutionListener(Protocol):
    """Told by the tool-calling manager when each tool call starts and ends (how the loop times them).

    A manager calls these from the thread that runs the call (a worker thread for sync tools in the
    async paths), so an implementation must be thread-safe. A manager that does not call them still
    works: the loop then reports its calls after the batch.
    """

    def started(self, call: ToolCall) -> None:
        """``call`` is about to run."""
        ...

    def finished(self, call: ToolCall, response: ToolResponse) -> None:
        """``call`` ended with ``response`` (``response.is_error`` when it failed)."""
        ...


_TOOL_LISTENER: contextvars.ContextVar[ToolExecutionListener | None] = contextvars.ContextVar(
    'toolweave_tool_listener', default=None
)


def current_tool_listener() -> ToolExecutionListener | None:
    """The listener the tool loop installed for the batch being executed in this context, else ``None``."""
    return _TOOL_LISTENER.get()


@contextmanager
def listening_to_tools(listener: ToolExecutionListener | None) -> Iterator[None]:
    """Make ``listener`` the :func:`current_tool_listener` inside the block (restored after).

    Must not span a ``yield`` of an async generator (the variable belongs to the running task).
    """
    token = _TOOL_LISTENER.set(listener)
    try:
        yield
    finally:
        _TOOL_LISTENER.reset(token)
