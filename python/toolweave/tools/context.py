"""``ToolContext``: values the application hands to tools without showing them to the model."""

from __future__ import annotations

import contextvars
import copy
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolweave.chat.messages import ToolCall

__all__ = ['ToolContext', 'current_tool_call', 'per_call_contexts', 'tool_call_scope']

_CURRENT_TOOL_CALL: contextvars.ContextVar[ToolCall | None] = contextvars.ContextVar(
    'toolweave_current_tool_call', default=None
)


def current_tool_call() -> ToolCall | None:
    """The tool call being executed by the manager in this context (id, name, arguments), else ``None``.

    Set by :class:`~toolweave.tools.DefaultToolCallingManager` around each call, in the caller's
    thread, worker threads and tasks alike (a context variable), so wrappers such as
    :class:`~toolweave.tools.augment.AugmentedToolCallback` can report the call id.
    """
    return _CURRENT_TOOL_CALL.get()


def tool_call_scope(call: ToolCall) -> AbstractContextManager[None]:
    """Make ``call`` the :func:`current_tool_call` inside the block (restored after)."""
    return _ToolCallScope(call)


class _ToolCallScope:
    """:func:`tool_call_scope`'s context manager (a class: entered once per tool call, a generator costs 3x)."""

    __slots__ = ('_call', '_token')

    def __init__(self, call: ToolCall) -> None:
        self._call = call

    def __enter__(self) -> None:
        self._token = _CURRENT_TOOL_CALL.set(self._call)

    def __exit__(self, *exc: object) -> None:
        _CURRENT_TOOL_CALL.reset(self._token)


class ToolContext(Mapping[str, Any]):
    """A read-only mapping passed to tools that declare a ``ToolContext`` parameter.

    As Spring AI's ``ToolContext``: built by the manager from ``options.tool_context``, one per tool
    call (of a tool that reads one: a callback's ``takes_tool_context``, true when it does not say).
    The key ``TOOL_CALL_HISTORY`` holds the conversation history so far.

    Each ``ToolContext`` holds its own copy of the containers it is given: dicts, lists, tuples, sets
    and deques (subclasses included) are copied all the way down, so a tool that changes a nested
    value changes neither the caller's dict nor what concurrent or later calls see. Every other value
    (a database client, a connection pool, a lock, an HTTP session, your own objects, the history's
    messages) is shared as it is: the same object in every call, as a client must be. Calls of one
    turn may run concurrently, so such shared objects must be thread-safe.
    """

    TOOL_CALL_HISTORY = 'TOOL_CALL_HISTORY'

    def __init__(self, context: Mapping[str, Any] | None = None) -> None:
        memo: dict[int, Any] = {}
        self._context = {key: _own_copy(value, memo) for key, value in (context or {}).items()}

    def __getitem__(self, key: str) -> Any:
        return self._context[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._context)

    def __len__(self) -> int:
        return len(self._context)

    def __repr__(self) -> str:
        return f'ToolContext({self._context!r})'

    @property
    def context(self) -> dict[str, Any]:
        """A copy of the values as a plain dict."""
        return dict(self._context)


def per_call_contexts(values: Mapping[str, Any]) -> Callable[[], ToolContext]:
    """A factory of one :class:`ToolContext` per tool call over ``values``.

    When ``values`` holds no container a tool could change in place (nothing had to be copied), every
    call gets the same read-only ``ToolContext``; otherwise each call gets its own copy.
    """
    first = ToolContext(values)
    if all(first[key] is value for key, value in values.items()):
        return lambda: first
    return lambda: ToolContext(values)


_CONTAINERS = (dict, list, deque, set, bytearray, tuple)


def _own_copy(value: Any, memo: dict[int, Any]) -> Any:
    """``value`` with its builtin containers copied recursively; any other object is returned as it is.

    ``memo`` maps the id of each container already copied to its copy (shared and cyclic containers
    stay shared and cyclic in the copy, as with :func:`copy.deepcopy`). A tuple holding no container
    (the history of messages, for one) is returned as it is.
    """
    if not isinstance(value, _CONTAINERS):
        return value
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, dict):
        mapping = copy.copy(value)  # the same class (OrderedDict, defaultdict, ...) with the same items
        memo[id(value)] = mapping
        for key, item in value.items():
            mapping[key] = _own_copy(item, memo)
        return mapping
    if isinstance(value, list | deque):
        sequence = copy.copy(value)
        memo[id(value)] = sequence
        sequence.clear()
        sequence.extend(_own_copy(item, memo) for item in value)
        return sequence
    if isinstance(value, set | bytearray):
        return copy.copy(value)  # a set's items are hashable, hence not mutable builtin containers
    for item in value:  # a tuple
        if isinstance(item, _CONTAINERS):
            break
    else:
        return value
    items = [_own_copy(item, memo) for item in value]
    if all(new is old for new, old in zip(items, value, strict=True)):
        return value
    make = getattr(type(value), '_make', type(value))  # a namedtuple takes its items one by one
    return make(items)
