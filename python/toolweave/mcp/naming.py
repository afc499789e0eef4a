"""Tool names for MCP tools: ``McpToolNamePrefixGenerator`` and its implementations (Spring AI names).

Names of tools from several servers can clash, and providers accept at most 64 characters of
``[a-zA-Z0-9_-]``. A generator maps each (server, tool) to the name the model sees; the provider asks
it server by server, tool by tool in the servers' listing order, passing the names taken so far, so the
result is deterministic for the same servers and tools.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Set as AbstractSet
from typing import Protocol, runtime_checkable

from mcp.types import Tool

from toolweave.mcp.servers import McpConnectionInfo

__all__ = [
    'MAX_TOOL_NAME_LENGTH',
    'DefaultMcpToolNamePrefixGenerator',
    'McpToolNamePrefixGenerator',
    'NoPrefixGenerator',
    'ServerPrefixGenerator',
    'format_tool_name',
]

MAX_TOOL_NAME_LENGTH = 64
"""The longest tool name OpenAI, Anthropic and Gemini accept."""

_INVALID = re.compile(r'[^a-zA-Z0-9_-]')
_DIGEST = 8


@runtime_checkable
class McpToolNamePrefixGenerator(Protocol):
    """Gives each MCP tool the name the model sees (Spring AI ``McpToolNamePrefixGenerator``)."""

    def __call__(self, connection: McpConnectionInfo, tool: Tool, taken: AbstractSet[str]) -> str:
        """The name for ``tool`` of ``connection``; ``taken`` holds the names given so far in this listing."""
        ...


def format_tool_name(name: str) -> str:
    """``name`` with every character outside ``[a-zA-Z0-9_-]`` as ``_``, at most 64 characters, never empty.

    An empty name (a server may list one) is ``'tool'``. A longer name keeps its first 55 characters and ends
    with ``_`` and 8 hex digits of its SHA-256, so two long names that share a beginning stay distinct (Spring's
    ``McpToolUtils.format`` bounds names too; the digest is toolweave's).

    >>> format_tool_name('weather.get forecast')
    'weather_get_forecast'
    >>> len(format_tool_name('x' * 100))
    64
    >>> format_tool_name('')
    'tool'
    """
    formatted = _INVALID.sub('_', name) or 'tool'
    if len(formatted) <= MAX_TOOL_NAME_LENGTH:
        return formatted
    digest = hashlib.sha256(name.encode('utf-8')).hexdigest()[:_DIGEST]
    return f'{formatted[: MAX_TOOL_NAME_LENGTH - _DIGEST - 1]}_{digest}'


class DefaultMcpToolNamePrefixGenerator:
    """The tool's own name while it is free; ``<server>_<tool>`` when another server took it first.

    As Spring's ``DefaultMcpToolNamePrefixGenerator`` keeps names unique across connections, but the
    prefix is the server's name instead of a counter, so it reads well and does not depend on history.
    A name still taken gets ``_2``, ``_3``... Every name goes through :func:`format_tool_name`.
    """

    def __call__(self, connection: McpConnectionInfo, tool: Tool, taken: AbstractSet[str]) -> str:
        """The first free name of: the tool's, the server-prefixed one, then numbered."""
        name = format_tool_name(tool.name)
        if name not in taken:
            return name
        return _first_free(format_tool_name(f'{connection.server_name}_{tool.name}'), taken)


class ServerPrefixGenerator:
    """Always ``<server>_<tool>`` (formatted), e.g. ``weather_get_forecast`` for ``get_forecast`` of ``weather``."""

    def __call__(self, connection: McpConnectionInfo, tool: Tool, taken: AbstractSet[str]) -> str:
        """The server-prefixed name (numbered when two tools of a server format alike)."""
        return _first_free(format_tool_name(f'{connection.server_name}_{tool.name}'), taken)


class NoPrefixGenerator:
    """The server's tool names unchanged (Spring ``McpToolNamePrefixGenerator.noPrefix()``).

    Clashing names make the provider raise ``ValueError``.
    """

    def __call__(self, connection: McpConnectionInfo, tool: Tool, taken: AbstractSet[str]) -> str:
        """``tool.name``."""
        return tool.name


def _first_free(name: str, taken: AbstractSet[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... (formatted), the first not in ``taken``."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = format_tool_name(f'{name}_{number}')
    return candidate
