"""A real MCP server (SDK low-level Server API) with 100 tools, for tool search.

Run: ``python many.py stdio``.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent, Tool

TOPICS = [
    'invoice',
    'shipment',
    'customer',
    'ticket',
    'calendar',
    'payroll',
    'inventory',
    'warehouse',
    'flight',
    'hotel',
]
ACTIONS = ['create', 'cancel', 'lookup', 'update', 'archive', 'export', 'approve', 'assign', 'merge', 'audit']


def tools() -> list[Tool]:
    out = []
    for topic in TOPICS:
        for action in ACTIONS:
            out.append(
                Tool(
                    name=f'{action}_{topic}',
                    description=f'{action.capitalize()} a {topic} record by its identifier.',
                    input_schema={
                        'type': 'object',
                        'properties': {'id': {'type': 'string', 'description': f'The {topic} identifier'}},
                        'required': ['id'],
                    },
                )
            )
    return out


async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
    return ListToolsResult(tools=tools())


async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
    arguments = params.arguments or {}
    return CallToolResult(content=[TextContent(type='text', text=f'{params.name} done for {arguments.get("id")}')])


server: Server[Any] = Server('many', on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == '__main__':
    anyio.run(main)
