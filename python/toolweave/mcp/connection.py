"""``McpConnection``: one server's session on the background loop: connect, list, call, reconnect, close.

The session is owned by one task (``_serve``) that enters ``mcp.Client`` and holds it open until told
to stop, so the SDK's task groups are entered and left in the same task; calls are made from other
tasks of the same loop. A call that finds the server gone (crashed, closed) drops the session and fails
with ``McpConnectionError``; the next call connects again. Tool list changes are followed on both
protocol eras: ``notifications/tools/list_changed`` (2025 servers) and a ``subscriptions/listen`` stream
(2026-07-28 servers); each refreshes the listing and tells the provider.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    CallToolResult,
    Implementation,
    Tool,
    ToolListChangedNotification,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from toolweave.mcp.errors import McpClientError, McpConnectionError, McpTimeoutError, McpToolCallError
from toolweave.mcp.servers import McpConnectionInfo, McpServer, McpTimeouts

__all__ = ['McpConnection']

logger = logging.getLogger('toolweave.mcp')

_MAX_PAGES = 100
"""``tools/list`` pages read per listing: a server whose cursor never ends cannot hang the client."""

MAX_ERROR_TEXT = 4000
"""Characters of a server's protocol error message kept in ``McpToolCallError`` (a hostile server may send megabytes)."""

_NO_BOUND = 365 * 24 * 3600.0
"""What ``McpTimeouts(call=None)`` gives the SDK, which would otherwise apply its session default."""


def _client_info() -> Implementation:
    from toolweave import __version__

    return Implementation(name='toolweave', version=__version__)


class McpConnection:
    """One MCP server's session; every coroutine runs on the provider's background loop.

    Args:
        server: How to reach the server.
        timeouts: Connect, initialise, call and close bounds.
        on_tools_changed: Called (on the background loop) after the tool list was refreshed.
    """

    def __init__(self, server: McpServer, timeouts: McpTimeouts, on_tools_changed: Callable[[], None]) -> None:
        self.server = server
        self.timeouts = timeouts
        self._on_tools_changed = on_tools_changed
        self.tools: tuple[Tool, ...] = ()
        self.info: McpConnectionInfo | None = None
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._refreshes: set[asyncio.Task[None]] = set()
        self._sessions = 0

    @property
    def name(self) -> str:
        """The server's configured name."""
        return self.server.name

    @property
    def connected(self) -> bool:
        """Whether a session is open."""
        return self._client is not None

    async def connect(self) -> Client:
        """The open session, connecting first when there is none (never connected, or dropped).

        Raises:
            McpTimeoutError: not connected and listed within ``timeouts.connect``.
            McpConnectionError: the transport or the handshake failed.
        """
        async with self._mutex():
            if self._client is not None:
                return self._client
            await self._drop()
            return await self._open()

    async def close(self) -> None:
        """Shut the session (and a subprocess) down; idempotent. A later call connects again."""
        async with self._mutex():
            await self._drop()
        self._lock = None  # the provider may reopen on a new background loop

    def _mutex(self) -> asyncio.Lock:
        """The lock serialising connect, drop and close (made on the loop that first needs it)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """``tools/call`` ``name`` with ``arguments`` (the server's own tool name).

        Raises:
            McpTimeoutError: no answer within ``timeouts.call`` (the session is kept).
            McpConnectionError: the server went away; the session is dropped, the next call reconnects.
            McpToolCallError: the server answered with a protocol error (e.g. an unknown tool), its text cut
                to :data:`MAX_ERROR_TEXT` characters (the model reads it).
        """
        client = await self.connect()
        timeout = self.timeouts.call
        try:
            return await client.call_tool(name, arguments, read_timeout_seconds=timeout or _NO_BOUND)
        except TimeoutError:
            raise self._timeout(name) from None
        except MCPError as error:
            if _sdk_timeout(error):
                raise self._timeout(name) from None
            if not _sdk_closed(error):  # the server's own error, whatever its code (-32000 is a common one)
                raise McpToolCallError(self.name, _bounded(error.message)) from error
            cause: Exception = error
        except ValidationError as error:  # the session works; this answer did not fit the protocol
            raise McpToolCallError(self.name, f"MCP server '{self.name}' sent an invalid result: {error}") from error
        except Exception as error:  # noqa: BLE001 - any transport failure: the session is unusable
            cause = error
        await self._lost(client)
        message = f"MCP server '{self.name}' went away during a call to '{name}': {_describe(cause)}"
        raise McpConnectionError(self.name, message) from cause

    async def refresh(self) -> None:
        """List the tools again (after a change notification) and tell the provider.

        Raises:
            McpTimeoutError, McpConnectionError: as :meth:`connect`, or a page took past ``timeouts.initialize``.
        """
        client = await self.connect()
        self.tools = await self._list(client)
        self._tools_changed()

    def _tools_changed(self) -> None:
        try:
            self._on_tools_changed()
        except ValueError as error:  # the provider could not name the new tools: it keeps the last list
            logger.warning("MCP server '%s': new tool list not taken: %s", self.name, error)

    def _timeout(self, name: str) -> McpTimeoutError:
        return McpTimeoutError(
            self.name,
            f"MCP server '{self.name}' did not answer a call to '{name}' within {_seconds(self.timeouts.call)}",
        )

    async def _open(self) -> Client:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Client] = loop.create_future()
        self._stop = asyncio.Event()
        self._task = loop.create_task(self._serve(ready, self._stop), name=f'mcp-{self.name}')
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.timeouts.connect)
        except McpClientError:  # the session's own failure (an McpTimeoutError is a TimeoutError too)
            await self._drop()
            raise
        except asyncio.TimeoutError:
            self._task.cancel()  # still in the handshake: nothing to shut down gracefully
            await self._drop()
            message = f"MCP server '{self.name}' did not connect within {_seconds(self.timeouts.connect)}"
            raise McpTimeoutError(self.name, message) from None
        except BaseException:
            await self._drop()
            raise

    async def _serve(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        """Hold one session open until ``stop`` is set; its outcome goes to ``ready``."""
        client: Client | None = None
        try:
            async with Client(
                self.server.target(),
                read_timeout_seconds=self.timeouts.initialize,
                message_handler=self._on_message,
                client_info=_client_info(),
            ) as client:
                self.tools = await self._list(client)
                self.info = McpConnectionInfo(self.name, client.server_info, client.protocol_version)
                self._client = client
                ready.set_result(client)
                self._sessions += 1
                if self._sessions > 1:  # reconnected: the tools may have changed meanwhile
                    self._tools_changed()
                async with anyio.create_task_group() as group:
                    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                        group.start_soon(self._listen, client)
                    await stop.wait()
                    group.cancel_scope.cancel()
        except Exception as error:  # noqa: BLE001 - reported to the caller that waits, or logged
            if not ready.done():
                ready.set_exception(self._connect_error(error))
            else:
                logger.info("MCP server '%s' session ended: %s", self.name, _describe(error))
        finally:
            if client is not None and self._client is client:
                self._client = None

    def _connect_error(self, error: Exception) -> McpClientError:
        """The typed error of a failed connection: a handshake request past ``timeouts.initialize`` is a timeout."""
        leaf = _leaf(error)
        if isinstance(leaf, McpClientError):
            return leaf
        if isinstance(leaf, TimeoutError) or (isinstance(leaf, MCPError) and _sdk_timeout(leaf)):
            message = (
                f"MCP server '{self.name}' did not answer its handshake within {_seconds(self.timeouts.initialize)}"
            )
            return McpTimeoutError(self.name, message)
        return McpConnectionError(self.name, f"cannot connect to MCP server '{self.name}': {_describe(error)}")

    async def _list(self, client: Client) -> tuple[Tool, ...]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            try:
                with anyio.fail_after(self.timeouts.initialize):
                    page = await client.list_tools(cursor=cursor, cache_mode='refresh')
            except TimeoutError:
                message = f"MCP server '{self.name}' did not list its tools within {_seconds(self.timeouts.initialize)}"
                raise McpTimeoutError(self.name, message) from None
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tuple(tools)

    async def _lost(self, client: Client) -> None:
        """Drop the session ``client`` belongs to, unless a newer one replaced it already."""
        async with self._mutex():
            if self._client is client:
                await self._drop()

    async def _drop(self) -> None:
        """Stop the serving task (bounded by ``timeouts.close``, then cancelled)."""
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._client = None
        if task is None:
            return
        if stop is not None:
            stop.set()
        done, _ = await asyncio.wait({task}, timeout=self.timeouts.close)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=self.timeouts.close)

    async def _on_message(self, message: IncomingMessage) -> None:
        """The SDK's message handler: a 2025-era tool list change schedules a refresh."""
        if isinstance(message, ToolListChangedNotification):
            task = asyncio.get_running_loop().create_task(self._refresh_logged())
            self._refreshes.add(task)
            task.add_done_callback(self._refreshes.discard)

    async def _listen(self, client: Client) -> None:
        """Follow a 2026-era ``subscriptions/listen`` stream of tool list changes (until cancelled)."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    await self._refresh_logged()
        except Exception as error:  # noqa: BLE001 - a server without subscriptions keeps its first listing
            logger.info("MCP server '%s': tool list changes not followed: %s", self.name, _describe(error))

    async def _refresh_logged(self) -> None:
        try:
            await self.refresh()
        except McpClientError as error:
            logger.warning("MCP server '%s': tool list refresh failed: %s", self.name, error)


def _sdk_closed(error: MCPError) -> bool:
    """Whether the SDK itself raised ``error`` because the transport closed (not a server answering ``-32000``).

    The SDK's dispatcher reports a closed connection as ``MCPError(CONNECTION_CLOSED, 'Connection closed')``;
    ``-32000`` is also the first code JSON-RPC leaves to servers, so the code alone does not tell.
    """
    return error.code == CONNECTION_CLOSED and error.message == 'Connection closed'


def _sdk_timeout(error: MCPError) -> bool:
    """Whether the SDK raised ``error`` for a request past its read timeout (``"Request 'x' timed out"``)."""
    return (
        error.code == REQUEST_TIMEOUT and error.message.startswith('Request ') and error.message.endswith('timed out')
    )


def _bounded(text: str) -> str:
    """``text`` cut to :data:`MAX_ERROR_TEXT` characters, saying how many were left out."""
    if len(text) <= MAX_ERROR_TEXT:
        return text
    return f'{text[:MAX_ERROR_TEXT]}... ({len(text) - MAX_ERROR_TEXT} more characters)'


def _leaf(error: BaseException) -> BaseException:
    """The first leaf of an exception group (Python 3.10: anyio's backport), else ``error``."""
    while getattr(error, 'exceptions', None):
        error = error.exceptions[0]  # type: ignore[attr-defined]
    return error


def _describe(error: BaseException) -> str:
    """``error`` as ``Type: message`` (the first leaf of an exception group; the message cut as :func:`_bounded`)."""
    error = _leaf(error)
    text = _bounded(str(error).strip())
    return f'{type(error).__name__}: {text}' if text else type(error).__name__


def _seconds(bound: float | None) -> str:
    """A bound for an error message: ``'0.5 seconds'``; ``None`` (no bound of ours) names the SDK's."""
    return "the SDK's time limit" if bound is None else f'{bound:g} seconds'
