"""How to reach an MCP server: ``StdioServer``, ``StreamableHttpServer``, ``SseServer``; ``McpTimeouts``.

Each spec has a ``name`` (used in error messages, span attributes and the name prefix generator) and
builds a fresh transport for every connection attempt, so a dropped connection can be made again.
``McpConnectionInfo`` is what the client learnt about a connected server (Spring AI's ``McpConnectionInfo``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from mcp import StdioServerParameters
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

__all__ = ['McpConnectionInfo', 'McpServer', 'McpTimeouts', 'SseServer', 'StdioServer', 'StreamableHttpServer']

_NAME = re.compile(r'^[A-Za-z0-9_.-]{1,64}$')


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f'an MCP server name must be 1-64 characters of [A-Za-z0-9_.-], got {name!r}')


@dataclass(frozen=True)
class StdioServer:
    """A server started as a subprocess, spoken to over its stdin/stdout.

    Attributes:
        name: The server's name in toolweave (prefixes, errors, spans).
        command: The executable.
        args: Its arguments.
        env: The subprocess environment (``None``: the SDK's safe default subset of this one).
        cwd: Its working directory.

    Raises:
        ValueError: ``name`` is not 1-64 characters of ``[A-Za-z0-9_.-]``, or ``command`` is empty.
    """

    name: str
    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not isinstance(self.command, str) or not self.command.strip():
            raise ValueError('command must be a non-empty str')

    def target(self) -> StdioServerParameters:
        """What ``mcp.Client`` connects to (a new subprocess per connection)."""
        env = dict(self.env) if self.env is not None else None
        return StdioServerParameters(command=self.command, args=list(self.args), env=env, cwd=self.cwd)


@dataclass(frozen=True)
class StreamableHttpServer:
    """A server reached over streamable HTTP at ``url`` (e.g. ``http://127.0.0.1:8000/mcp``).

    Raises:
        ValueError: bad ``name``, or ``url`` is not an ``http(s)://`` URL.
    """

    name: str
    url: str

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_url(self.url)

    def target(self) -> Transport:
        """A new streamable HTTP transport."""
        return streamable_http_client(self.url)


@dataclass(frozen=True)
class SseServer:
    """A server reached over the older HTTP+SSE transport at ``url`` (e.g. ``http://127.0.0.1:8000/sse``).

    Raises:
        ValueError: bad ``name``, or ``url`` is not an ``http(s)://`` URL.
    """

    name: str
    url: str

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_url(self.url)

    def target(self) -> Transport:
        """A new SSE transport."""
        transport: Transport = sse_client(self.url)
        return transport


McpServer = Union[StdioServer, StreamableHttpServer, SseServer]
"""Any server spec."""


def _check_url(url: object) -> None:
    if not isinstance(url, str) or not url.startswith(('http://', 'https://')):
        raise ValueError(f'url must be an http:// or https:// URL, got {url!r}')


@dataclass(frozen=True)
class McpTimeouts:
    """Bounds, in seconds, on talking to a server (``None``: no bound).

    Attributes:
        connect: Starting the transport and the whole handshake (subprocess start, initialise or discover,
            first tool listing).
        initialize: Each request of the handshake and each ``tools/list`` page.
        call: One ``tools/call``; past it the call fails with ``McpTimeoutError`` (the connection is kept).
        close: Shutting a connection down (the SDK then kills a subprocess that did not exit).

    Raises:
        ValueError: a bound is not a positive finite number or ``None``.
    """

    connect: float | None = 30.0
    initialize: float | None = 30.0
    call: float | None = 60.0
    close: float = 10.0

    def __post_init__(self) -> None:
        for name in ('connect', 'initialize', 'call', 'close'):
            value = getattr(self, name)
            if value is None and name != 'close':
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value < math.inf):
                raise ValueError(f'McpTimeouts.{name} must be a positive number of seconds, got {value!r}')


@dataclass(frozen=True)
class McpConnectionInfo:
    """A connected server, as the tool filter and the name prefix generator see it (Spring ``McpConnectionInfo``).

    Attributes:
        server_name: The name the server was configured with in toolweave.
        server_info: Name and version the server reported (``None`` if it did not identify itself).
        protocol_version: The negotiated MCP protocol version.
    """

    server_name: str
    server_info: Implementation | None
    protocol_version: str
