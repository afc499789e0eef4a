"""``McpToolCallback``: one MCP server tool as a toolweave ``ToolCallback`` (Spring AI ``SyncMcpToolCallback``).

The definition is the server's: its name as the prefix generator gave it, its description, its input
schema normalised as Spring's ``ensureValidInputSchema``. Arguments are validated against that schema
by the Rust ``SchemaValidator`` before the call, so the model gets the same ``Invalid arguments ...``
text as for local tools and the server is not asked. ``call`` blocks, ``acall`` awaits; both run the call
on the provider's background loop inside one ``tools/call <tool>`` span (OpenTelemetry, child of the
manager's ``execute_tool`` span) carrying ``mcp.server.name``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from mcp.types import Tool
from opentelemetry import context as otel_context
from opentelemetry import trace

from toolweave._native import SchemaValidator
from toolweave.exceptions import ToolArgumentsError, ToolExecutionError
from toolweave.mcp._loop import BackgroundLoop
from toolweave.mcp.connection import McpConnection
from toolweave.mcp.errors import McpClientError, McpToolCallError
from toolweave.mcp.results import McpToolResult
from toolweave.tools._numbers import bounded_integers
from toolweave.tools.context import ToolContext
from toolweave.tools.definition import ToolDefinition, ToolMetadata
from toolweave.tools.function import _schema_decoder
from toolweave.tools.method import syntax_error
from toolweave.tools.schema import ensure_valid_input_schema

__all__ = ['McpToolCallback']

logger = logging.getLogger('toolweave.mcp')
_tracer = trace.get_tracer('toolweave.mcp')


class McpToolCallback:
    """A tool of an MCP server (build them with ``McpToolCallbackProvider``).

    Args:
        name: The name the model sees (the prefix generator's).
        tool: The server's tool, as listed.
        connection: The server's connection.
        loop: The background loop the connection lives on.
        requires_approval: Every call waits for a person's decision (``ToolMetadata.requires_approval``).
    """

    def __init__(
        self, name: str, tool: Tool, connection: McpConnection, loop: BackgroundLoop, *, requires_approval: bool = False
    ) -> None:
        schema = ensure_valid_input_schema(tool.input_schema)
        # the first non-blank of the server's texts (a server may list blank ones), else the name the model sees
        description = next((t for t in (tool.description, tool.title, tool.name) if t and t.strip()), name)
        self._definition = ToolDefinition(name, description, schema)
        self._metadata = ToolMetadata(requires_approval=bool(requires_approval))
        self._tool = tool
        self._connection = connection
        self._loop = loop
        self._decode = _decoder(self._definition, schema, connection.name)

    @property
    def tool_definition(self) -> ToolDefinition:
        """Name (prefixed), description and input schema sent to the model."""
        return self._definition

    @property
    def tool_metadata(self) -> ToolMetadata:
        """Default metadata but ``requires_approval`` (the call's bound is ``McpTimeouts.call``)."""
        return self._metadata

    @property
    def tool(self) -> Tool:
        """The server's tool as listed (its own name, annotations, output schema)."""
        return self._tool

    @property
    def server_name(self) -> str:
        """The configured name of the server the tool belongs to."""
        return self._connection.name

    def __repr__(self) -> str:
        return f'McpToolCallback(name={self._definition.name!r}, server={self.server_name!r}, tool={self._tool.name!r})'

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Validate ``tool_input`` (a JSON object text), call the tool, return the result text.

        Images, audio and binary resources come back as content parts: the text is then a ``ContentResult``.

        Raises:
            ToolExecutionError: invalid arguments (cause ``InvalidToolArgumentsError`` or ``ToolArgumentsError``),
                an ``isError`` result (cause ``McpToolCallError``, the server's text), or a connection,
                timeout or protocol failure (cause an ``McpClientError``).
        """
        arguments = self._arguments(tool_input)
        return self._text(self._loop.run(self._result(arguments, otel_context.get_current())))

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Async :meth:`call` (other tools of the round run meanwhile; the call runs on the background loop)."""
        arguments = self._arguments(tool_input)
        return self._text(await self._loop.arun(self._result(arguments, otel_context.get_current())))

    def call_tool(self, arguments: Mapping[str, Any]) -> McpToolResult:
        """Call the tool with ``arguments`` (validated) and return the whole mapped result, ``isError`` included.

        Raises:
            ToolExecutionError: invalid arguments, or a connection, timeout or protocol failure.
        """
        return self._loop.run(self._result(self._checked(arguments), otel_context.get_current()))

    async def acall_tool(self, arguments: Mapping[str, Any]) -> McpToolResult:
        """Async :meth:`call_tool`."""
        return await self._loop.arun(self._result(self._checked(arguments), otel_context.get_current()))

    def _arguments(self, tool_input: str) -> dict[str, Any]:
        if not isinstance(tool_input, str):
            raise TypeError(f'tool_input must be the argument JSON text (str), not {type(tool_input).__name__}')
        try:
            value: dict[str, Any] = self._decode(tool_input)  # raises ToolExecutionError for invalid arguments
        except ToolArgumentsError as exc:
            raise syntax_error(self._definition, exc) from exc
        return value

    def _checked(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return self._arguments(orjson.dumps(dict(arguments)).decode())

    async def _result(self, arguments: dict[str, Any], parent: otel_context.Context) -> McpToolResult:
        """The call on the background loop, in its ``tools/call`` span."""
        attributes = {
            'mcp.method.name': 'tools/call',
            'mcp.server.name': self.server_name,
            'gen_ai.tool.name': self._tool.name,
            'gen_ai.operation.name': 'execute_tool',
        }
        with _tracer.start_as_current_span(
            f'tools/call {self._tool.name}', context=parent, kind=trace.SpanKind.CLIENT, attributes=attributes
        ) as span:
            try:
                result = McpToolResult.of(await self._connection.call_tool(self._tool.name, arguments))
            except McpClientError as error:
                span.set_attribute('error.type', type(error).__qualname__)
                raise ToolExecutionError(self._definition, error, str(error)) from error
            if result.is_error:
                span.set_attribute('error.type', 'tool_error')
                span.set_status(trace.StatusCode.ERROR)
            return result

    def _text(self, result: McpToolResult) -> str:
        if result.is_error:
            text = result.text.strip() or f"MCP tool '{self._tool.name}' failed without a message"
            error = McpToolCallError(self.server_name, text)
            raise ToolExecutionError(self._definition, error, text)
        return result.content()


def _decoder(definition: ToolDefinition, schema: Mapping[str, Any], server: str) -> Callable[[str], Any]:
    """The argument decoder: parse and validate against ``schema`` (only parse when the Rust core refuses it).

    It raises ``ToolExecutionError`` for invalid arguments and ``ToolArgumentsError`` for text that is not JSON.
    """
    name = definition.name
    try:
        validator = SchemaValidator(bounded_integers(dict(schema)))
    except (TypeError, ValueError) as exc:
        logger.warning(
            "MCP server '%s': the input schema of '%s' cannot be compiled (%s); not validated", server, name, exc
        )
        validator = SchemaValidator({'type': 'object'})
    return _schema_decoder(definition, validator)
