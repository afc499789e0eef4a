"""``McpToolServer``: toolweave tools served over MCP (stdio, or streamable HTTP on 127.0.0.1).

``@tool`` functions, objects with ``@tool`` methods, ``ToolCallback``s and providers are listed with the
same schemas the model sees in the loop, and called as the manager calls them (``call_async``: sync
tools in worker threads, the same argument validation); a ``ToolExecutionError`` goes through the
exception processor and its text comes back as an ``isError`` result, as the model would read it. Built
on the SDK's low-level ``Server``, so it speaks both protocol eras (handshake and 2026-07-28).

>>> from toolweave import tool
>>> @tool
... def add(a: int, b: int) -> int:
...     '''Add two numbers.'''
...     return a + b
>>> server = McpToolServer(add)
>>> [cb.tool_definition.name for cb in server.tool_callbacks]
['add']
"""

from __future__ import annotations

import importlib
import logging
from typing import Any, Literal

import anyio
import orjson
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, Tool

from toolweave.exceptions import ToolExecutionError
from toolweave.mcp.results import to_content
from toolweave.tools._concurrent import call_async
from toolweave.tools.callback import ToolCallback
from toolweave.tools.context import ToolContext
from toolweave.tools.exception_processor import DefaultToolExecutionExceptionProcessor, ToolExecutionExceptionProcessor
from toolweave.tools.provider import check_unique_tool_names, to_tool_callbacks

__all__ = ['McpToolServer', 'Transport', 'load_target', 'serve']

logger = logging.getLogger('toolweave.mcp')

Transport = Literal['stdio', 'streamable-http']
"""How :func:`serve` speaks MCP."""


class McpToolServer:
    """An MCP server offering toolweave tools.

    Args:
        tools: What ``ChatClient.prompt().tools(...)`` accepts: ``@tool`` functions, objects with ``@tool``
            methods, ``ToolCallback``s, providers, lists of these.
        name: The server name reported to clients.
        exception_processor: Turns a failed call into the text of an ``isError`` result (default:
            ``DefaultToolExecutionExceptionProcessor``, as the manager).
        timeout: Seconds one call may take (``None``: a tool's own ``ToolMetadata.timeout``, else no bound).

    Raises:
        ValueError: no tool, two tools share a name, or an object has no ``@tool`` method.
        TypeError: an item cannot be a tool.
    """

    def __init__(
        self,
        *tools: object,
        name: str = 'toolweave',
        exception_processor: ToolExecutionExceptionProcessor | None = None,
        timeout: float | None = None,
    ) -> None:
        callbacks = to_tool_callbacks(*tools)
        if not callbacks:
            raise ValueError('McpToolServer needs at least one tool')
        check_unique_tool_names(callbacks)
        self._callbacks = callbacks
        self._by_name = {cb.tool_definition.name: cb for cb in callbacks}
        self._processor = exception_processor or DefaultToolExecutionExceptionProcessor()
        self._timeout = timeout
        from toolweave import __version__

        self.server: Server[Any] = Server(
            name, version=__version__, on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )

    @property
    def tool_callbacks(self) -> tuple[ToolCallback, ...]:
        """The served tools."""
        return self._callbacks

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin/stdout until it closes them."""
        async with stdio_server() as (read_stream, write_stream):
            await self.server.run(read_stream, write_stream, self.server.create_initialization_options())

    async def run_http(self, *, host: str = '127.0.0.1', port: int = 8000, path: str = '/mcp') -> None:
        """Serve streamable HTTP at ``http://{host}:{port}{path}`` until cancelled (uvicorn).

        The SDK's DNS-rebinding protection is on for loopback hosts.
        """
        import uvicorn

        app = self.server.streamable_http_app(streamable_http_path=path, host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level='warning', lifespan='on')
        await uvicorn.Server(config).serve()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = [
            Tool(
                name=cb.tool_definition.name,
                description=cb.tool_definition.description,
                input_schema=dict(cb.tool_definition.input_schema),
            )
            for cb in self._callbacks
        ]
        return ListToolsResult(tools=tools)

    async def _call_tool(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        callback = self._by_name.get(params.name)
        if callback is None:
            known = ', '.join(self._by_name)
            return _result(f"No tool named '{params.name}' on this server; its tools: {known}", error=True)
        arguments = orjson.dumps(params.arguments or {}).decode()
        timeout = self._timeout if self._timeout is not None else callback.tool_metadata.timeout
        try:
            text = await call_async(callback, arguments, ToolContext({}), timeout)
        except ToolExecutionError as error:
            logger.info("MCP tool '%s' failed: %s", params.name, type(error.cause).__name__)
            return _result(self._processor.process(error), error=True)
        return _result(text, error=False)


def _result(text: str, *, error: bool) -> CallToolResult:
    return CallToolResult(content=to_content(text), is_error=error)


def serve(
    *tools: object,
    transport: Transport = 'stdio',
    host: str = '127.0.0.1',
    port: int = 8000,
    name: str = 'toolweave',
) -> None:
    """Serve ``tools`` over MCP until the client leaves (stdio) or the process is stopped (HTTP); blocks.

    Raises:
        ValueError: ``transport`` is unknown, or as :class:`McpToolServer`.
    """
    server = McpToolServer(*tools, name=name)
    if transport == 'stdio':
        anyio.run(server.run_stdio)
    elif transport == 'streamable-http':
        anyio.run(lambda: server.run_http(host=host, port=port))
    else:
        raise ValueError(f"transport must be 'stdio' or 'streamable-http', got {transport!r}")


def load_target(target: str) -> object:
    """The object ``module:attribute`` names (``attribute`` may be dotted), as ``toolweave mcp serve`` loads it.

    Raises:
        ValueError: ``target`` is not ``module:attribute``.
        ImportError: the module cannot be imported.
        AttributeError: the module has no such attribute.
    """
    module_name, sep, attribute = target.partition(':')
    if not sep or not module_name or not attribute:
        raise ValueError(f'expected module:attribute (e.g. my_tools:weather), got {target!r}')
    value: object = importlib.import_module(module_name)
    for part in attribute.split('.'):
        value = getattr(value, part)
    return value
