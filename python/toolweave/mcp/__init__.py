"""MCP (Model Context Protocol): servers' tools as toolweave tool callbacks, and toolweave tools as an MCP server.

Needs the ``mcp`` extra (``pip install 'toolweave[mcp]'``: the official SDK, major version 2). As Spring AI's
MCP support: ``McpToolCallbackProvider`` (the tools of one or more servers), ``McpToolFilter``,
``McpToolNamePrefixGenerator``, ``McpToolCallbackResolver``; ``McpToolServer``/``serve`` for the other way.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401
except ImportError as _error:  # pragma: no cover - depends on the environment
    raise ImportError("toolweave.mcp needs the MCP SDK: pip install 'toolweave[mcp]'") from _error

from toolweave.mcp.callback import McpToolCallback
from toolweave.mcp.errors import McpClientError, McpConnectionError, McpTimeoutError, McpToolCallError
from toolweave.mcp.filters import McpToolFilter, allow_tools
from toolweave.mcp.naming import (
    MAX_TOOL_NAME_LENGTH,
    DefaultMcpToolNamePrefixGenerator,
    McpToolNamePrefixGenerator,
    NoPrefixGenerator,
    ServerPrefixGenerator,
    format_tool_name,
)
from toolweave.mcp.provider import McpToolCallbackProvider
from toolweave.mcp.resolver import McpToolCallbackResolver
from toolweave.mcp.results import McpToolResult, to_content
from toolweave.mcp.server import McpToolServer, serve
from toolweave.mcp.servers import (
    McpConnectionInfo,
    McpServer,
    McpTimeouts,
    SseServer,
    StdioServer,
    StreamableHttpServer,
)

__all__ = [
    'MAX_TOOL_NAME_LENGTH',
    'DefaultMcpToolNamePrefixGenerator',
    'McpClientError',
    'McpConnectionError',
    'McpConnectionInfo',
    'McpServer',
    'McpTimeoutError',
    'McpTimeouts',
    'McpToolCallError',
    'McpToolCallback',
    'McpToolCallbackProvider',
    'McpToolCallbackResolver',
    'McpToolFilter',
    'McpToolNamePrefixGenerator',
    'McpToolResult',
    'McpToolServer',
    'NoPrefixGenerator',
    'ServerPrefixGenerator',
    'SseServer',
    'StdioServer',
    'StreamableHttpServer',
    'allow_tools',
    'format_tool_name',
    'serve',
    'to_content',
]
