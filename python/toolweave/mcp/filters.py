"""``McpToolFilter``: which tools of which server become tool callbacks (Spring AI ``McpToolFilter``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from mcp.types import Tool

from toolweave.mcp.servers import McpConnectionInfo

__all__ = ['McpToolFilter', 'allow_tools']


@runtime_checkable
class McpToolFilter(Protocol):
    """A predicate over (server, tool): ``True`` keeps the tool (Spring's ``BiPredicate<McpConnectionInfo, Tool>``)."""

    def __call__(self, connection: McpConnectionInfo, tool: Tool) -> bool:
        """Whether ``tool`` of ``connection`` is offered to the model."""
        ...


def allow_tools(**tools_by_server: Iterable[str]) -> McpToolFilter:
    """A filter keeping only the named tools of each named server; other servers' tools are all kept.

    >>> keep = allow_tools(weather=['get_forecast'])

    Raises:
        TypeError: a value is a ``str`` (give a list of names).
    """
    allowed: dict[str, frozenset[str]] = {}
    for server, names in tools_by_server.items():
        if isinstance(names, str):
            raise TypeError(f'allow_tools({server}=...) takes a list of tool names, not a str')
        allowed[server] = frozenset(names)

    def keep(connection: McpConnectionInfo, tool: Tool) -> bool:
        names = allowed.get(connection.server_name)
        return names is None or tool.name in names

    return keep
