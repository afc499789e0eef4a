"""``McpToolCallbackProvider``: the tools of one or more MCP servers as tool callbacks (Spring AI's name).

One object for blocking and async code: sessions live on a private background loop (see ``_loop``), so
its callbacks work in ``call()``, ``acall()`` and ``stream()``. Connect with ``with``/``async with`` (or
``connect()``/``aconnect()``; ``tool_callbacks`` connects on first use), and close with ``close()`` /
``aclose()`` or by leaving the block: sessions end and subprocesses exit.

>>> from toolweave.mcp import McpToolCallbackProvider, StdioServer
>>> tools = McpToolCallbackProvider(StdioServer('files', 'python', ['-m', 'my_mcp_server']))
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from types import TracebackType

from typing_extensions import Self

from toolweave.mcp._loop import BackgroundLoop
from toolweave.mcp.callback import McpToolCallback
from toolweave.mcp.connection import McpConnection
from toolweave.mcp.filters import McpToolFilter
from toolweave.mcp.naming import DefaultMcpToolNamePrefixGenerator, McpToolNamePrefixGenerator
from toolweave.mcp.servers import (
    McpConnectionInfo,
    McpServer,
    McpTimeouts,
    SseServer,
    StdioServer,
    StreamableHttpServer,
)

__all__ = ['McpToolCallbackProvider']

_SERVER_TYPES = (StdioServer, StreamableHttpServer, SseServer)


class McpToolCallbackProvider:
    """The tools of MCP servers, named by ``prefix_generator`` and kept by ``tool_filter``.

    Args:
        servers: One server spec or several (their names must differ).
        tool_filter: Which tools of which server are offered (default: all).
        prefix_generator: Names for the tools (default: ``DefaultMcpToolNamePrefixGenerator``).
        timeouts: Connect, initialise, call and close bounds (seconds).
        requires_approval: Which tools pause the run for a person's decision before each call (see
            :mod:`toolweave.approvals`): ``True`` for all, or an ``McpToolFilter``-shaped predicate of
            (server, tool), e.g. ``lambda server, tool: bool(tool.annotations and tool.annotations.destructiveHint)``.

    Raises:
        TypeError: a server is not a ``StdioServer``, ``StreamableHttpServer`` or ``SseServer``; ``tool_filter``,
            ``prefix_generator`` or ``requires_approval`` is neither callable (nor a bool, for the last);
            ``timeouts`` is not ``McpTimeouts``.
        ValueError: no server, or two servers share a name.
    """

    def __init__(
        self,
        servers: McpServer | Iterable[McpServer],
        *,
        tool_filter: McpToolFilter | None = None,
        prefix_generator: McpToolNamePrefixGenerator | None = None,
        timeouts: McpTimeouts | None = None,
        requires_approval: bool | McpToolFilter = False,
    ) -> None:
        specs = _server_list(servers)
        if not isinstance(requires_approval, bool) and not callable(requires_approval):
            raise TypeError(
                f'requires_approval must be a bool or a callable of (server, tool), got {requires_approval!r}'
            )
        for name, value in (('tool_filter', tool_filter), ('prefix_generator', prefix_generator)):
            if value is not None and not callable(value):
                raise TypeError(f'{name} must be callable, got {value!r}')
        if timeouts is not None and not isinstance(timeouts, McpTimeouts):
            raise TypeError(f'timeouts must be McpTimeouts, not {type(timeouts).__name__}')
        self._filter = tool_filter
        self._approval = requires_approval
        self._namer: McpToolNamePrefixGenerator = prefix_generator or DefaultMcpToolNamePrefixGenerator()
        self._loop = BackgroundLoop()
        bounds = timeouts or McpTimeouts()
        self._connections = tuple(McpConnection(spec, bounds, self._rebuild) for spec in specs)
        self._callbacks: tuple[McpToolCallback, ...] = ()
        self._lock = threading.Lock()
        self._connected = False

    @property
    def servers(self) -> tuple[McpServer, ...]:
        """The server specs, in order."""
        return tuple(connection.server for connection in self._connections)

    @property
    def connection_infos(self) -> tuple[McpConnectionInfo, ...]:
        """What each connected server reported (name, version, negotiated protocol), in server order."""
        return tuple(c.info for c in self._connections if c.info is not None and c.connected)

    @property
    def tool_callbacks(self) -> tuple[McpToolCallback, ...]:
        """The servers' tools (connecting first, blocking, when not connected), following tool list changes.

        Raises:
            McpConnectionError, McpTimeoutError: a server could not be connected.
            ValueError: the prefix generator gave two tools the same name.
        """
        if not self._connected:
            self.connect()
        return self._callbacks

    def connect(self) -> Self:
        """Connect every server (concurrently) and list their tools; returns ``self``.

        Raises:
            McpConnectionError, McpTimeoutError: a server could not be connected (the others are closed).
            ValueError: the prefix generator gave two tools the same name.
        """
        try:
            self._loop.run(self._connect_all())
        except BaseException:
            self._loop.stop()  # nothing is open: no thread is left behind
            raise
        return self

    async def aconnect(self) -> Self:
        """Async :meth:`connect`."""
        try:
            await self._loop.arun(self._connect_all())
        except BaseException:
            await asyncio.to_thread(self._loop.stop)
            raise
        return self

    def refresh(self) -> tuple[McpToolCallback, ...]:
        """List every server's tools again now; returns the new callbacks."""
        self._loop.run(self._refresh_all())
        return self._callbacks

    async def arefresh(self) -> tuple[McpToolCallback, ...]:
        """Async :meth:`refresh`."""
        await self._loop.arun(self._refresh_all())
        return self._callbacks

    def close(self) -> None:
        """End every session (subprocesses exit) and stop the background loop; idempotent."""
        self._loop.run(self._close_all())
        self._loop.stop()

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        await self._loop.arun(self._close_all())
        await asyncio.to_thread(self._loop.stop)

    def __enter__(self) -> Self:
        return self.connect()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return await self.aconnect()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f'McpToolCallbackProvider(servers={[c.name for c in self._connections]!r})'

    async def _connect_all(self) -> None:
        results = await asyncio.gather(*(c.connect() for c in self._connections), return_exceptions=True)
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        if failure is None:
            try:
                self._rebuild()
            except ValueError as error:  # two tools named alike
                failure = error
        if failure is not None:
            await self._close_all()
            raise failure
        self._connected = True

    async def _refresh_all(self) -> None:
        if not self._connected:
            await self._connect_all()
        await asyncio.gather(*(c.refresh() for c in self._connections))

    async def _close_all(self) -> None:
        self._connected = False
        await asyncio.gather(*(c.close() for c in self._connections))

    def _rebuild(self) -> None:
        """Build the callbacks from the connections' current listings, names in server then listing order.

        Raises:
            ValueError: the prefix generator gave a name twice.
        """
        with self._lock:
            callbacks: list[McpToolCallback] = []
            taken: set[str] = set()
            for connection in self._connections:
                info = connection.info
                if info is None:
                    continue
                for tool in connection.tools:
                    if self._filter is not None and not self._filter(info, tool):
                        continue
                    name = self._namer(info, tool, frozenset(taken))
                    if name in taken:
                        raise ValueError(
                            f"MCP tool name '{name}' (tool '{tool.name}' of server '{connection.name}') is taken; "
                            'use a prefix generator that keeps names unique (DefaultMcpToolNamePrefixGenerator)'
                        )
                    taken.add(name)
                    approval = self._approval if isinstance(self._approval, bool) else self._approval(info, tool)
                    callbacks.append(McpToolCallback(name, tool, connection, self._loop, requires_approval=approval))
            self._callbacks = tuple(callbacks)


def _server_list(servers: object) -> list[McpServer]:
    items = [servers] if isinstance(servers, _SERVER_TYPES) else servers
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise TypeError(f'servers must be a server spec or an iterable of them, not {type(servers).__name__}')
    specs = list(items)
    if not specs:
        raise ValueError('give at least one MCP server')
    for spec in specs:
        if not isinstance(spec, _SERVER_TYPES):
            raise TypeError(f'an MCP server must be StdioServer, StreamableHttpServer or SseServer, not {spec!r}')
    names = [spec.name for spec in specs]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise ValueError(f'MCP server names must differ; repeated: {", ".join(clashes)}')
    return specs
