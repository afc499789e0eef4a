"""Typed errors of the MCP client (``toolweave.mcp``).

A tool call that fails on the MCP side reaches the tool loop as a ``ToolExecutionError`` whose ``cause``
is one of these, so the manager's exception processor turns it into text for the model (or rethrows it,
with ``DefaultToolExecutionExceptionProcessor(rethrow=[McpConnectionError])`` for instance).
"""

from __future__ import annotations

__all__ = ['McpClientError', 'McpConnectionError', 'McpTimeoutError', 'McpToolCallError']


class McpClientError(RuntimeError):
    """Base class of the MCP client's errors.

    Attributes:
        server_name: The name the server was configured with.
    """

    def __init__(self, server_name: str, message: str) -> None:
        super().__init__(message)
        self.server_name = server_name


class McpConnectionError(McpClientError):
    """The server could not be reached, failed its handshake, or went away (crashed, closed) mid-call.

    The connection is dropped; the next call to that server connects again.
    """


class McpTimeoutError(McpClientError, TimeoutError):
    """Connecting, initialising or one call took longer than its ``McpTimeouts`` bound (seconds)."""


class McpToolCallError(McpClientError):
    """The server answered a ``tools/call`` with an error: an ``isError`` result or a protocol error.

    Its message is the server's text, which is what the model reads.
    """
