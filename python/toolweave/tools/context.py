"""``ToolContext``: values the application hands to tools without showing them to the model."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolweave.chat.messages import ToolCall

__all__ = ['ToolContext', 'current_tool_call', 'tool_call_scope']

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


@contextmanager
def tool_call_scope(call: ToolCall) -> Iterator[None]:
    """Make ``call`` the :func:`current_tool_call` inside the block (restored after)."""
    token = _CURRENT_TOOL_CALL.set(call)
    try:
        yield
    finally:
        _CURRENT_TOOL_CALL.reset(token)


class ToolContext(Mapping[str, Any]):
    """A read-only mapping passed to tools that declare a ``ToolContext`` parameter.

    As Spring AI's ``ToolContext``: built by the manager from ``options.tool_context`` (a copy, so
    a tool cannot change what the next tool sees). The key ``TOOL_CALL_HISTORY`` holds the
    conversation history so far.
    """

    TOOL_CALL_HISTORY = 'TOOL_CALL_HISTORY'

    def __init__(self, context: Mapping[str, Any] | None = None) -> None:
        self._context = dict(context or {})

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
