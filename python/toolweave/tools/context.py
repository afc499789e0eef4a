"""``ToolContext``: values the application hands to tools without showing them to the model."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ['ToolContext']


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
