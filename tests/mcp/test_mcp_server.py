"""toolweave tools served over MCP, checked by the official SDK client and by toolweave's own client."""

from __future__ import annotations

import asyncio
import base64
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import import_server_module, server_env, start_http
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult
from toolweave import ChatClient
from toolweave.exceptions import ToolExecutionError
from toolweave.mcp import McpToolCallbackProvider, McpToolServer, StdioServer, StreamableHttpServer
from toolweave.providers import ScriptedChatModel
from toolweave.tools import DefaultToolExecutionExceptionProcessor, ToolCallbacks

S = ScriptedChatModel
SHOP = import_server_module('toolweave_tools')
TOOLS = SHOP.TOOLS
LOCAL = {cb.tool_definition.name: cb for cb in ToolCallbacks.from_(TOOLS)}
SERVE = [sys.executable, '-m', 'toolweave', 'mcp', 'serve', 'toolweave_tools:TOOLS']


def loop_text(name: str, arguments: str) -> str:
    """What the model reads in the loop for this call (the tool's text, or the processed error)."""
    try:
        return LOCAL[name].call(arguments)
    except ToolExecutionError as error:
        return DefaultToolExecutionExceptionProcessor().process(error)


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and result.content[0].type == 'text'
    return result.content[0].text


async def check_with_official_client(client: Client) -> None:
    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert list(listed) == ['add', 'greet', 'divide', 'chart', 'place_order']
    for name, local in LOCAL.items():  # the same schemas and descriptions as in the loop
        assert listed[name].input_schema == dict(local.tool_definition.input_schema)
        assert listed[name].description == local.tool_definition.description
    cases = [
        ('add', {'a': 2, 'b': 3}, False),
        ('greet', {'name': 'Ada', 'excited': True}, False),
        ('divide', {'a': 1, 'b': 4}, False),
        ('place_order', {'order': {'item': 'tea', 'quantity': 2}}, False),
        ('add', {'a': 'two'}, True),  # invalid arguments: the loop's validation text
        ('divide', {'a': 1, 'b': 0}, True),  # the tool raised: the exception processor's text
    ]
    import orjson

    for name, arguments, is_error in cases:
        result = await client.call_tool(name, arguments)
        assert bool(result.is_error) is is_error, (name, result)
        assert text(result) == loop_text(name, orjson.dumps(arguments).decode())
    chart = await client.call_tool('chart', {'metric': 'sales'})  # a tool's media: an image part
    assert [part.type for part in chart.content] == ['text', 'image']
    assert chart.content[0].text == 'Chart of sales:' and chart.content[1].mime_type == 'image/png'
    assert base64.b64decode(chart.content[1].data) == SHOP.PNG
    unknown = await client.call_tool('nope', {})
    assert (
        unknown.is_error
        and text(unknown) == "No tool named 'nope' on this server; its tools: add, greet, divide, chart, place_order"
    )


@pytest.mark.parametrize('mode', ['auto', 'legacy'])
def test_official_client_over_stdio_via_the_cli(mode: str) -> None:
    async def run() -> None:
        params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=server_env())
        async with Client(params, mode=mode) as client:
            assert client.server_info is not None and client.server_info.name == 'toolweave'
            await check_with_official_client(client)

    asyncio.run(run())


@pytest.fixture(scope='module')
def served_http() -> Iterator[str]:
    for port in start_http(*SERVE, '--transport', 'streamable-http', '--port', '{port}', '--name', 'shop'):
        yield f'http://127.0.0.1:{port}/mcp'


def test_official_client_over_streamable_http(served_http: str) -> None:
    async def run() -> None:
        async with Client(served_http) as client:
            assert client.server_info is not None and client.server_info.name == 'shop'
            await check_with_official_client(client)

    asyncio.run(run())


def test_official_client_in_process_against_the_python_api() -> None:
    async def run(mode: str) -> None:
        async with Client(McpToolServer(TOOLS).server, mode=mode) as client:
            await check_with_official_client(client)

    for mode in ('auto', 'legacy'):
        asyncio.run(run(mode))


def answer(prompt: Any) -> Any:
    return S.text_response(' | '.join(r.response_data for r in prompt.messages[-1].responses))


@pytest.mark.parametrize('transport', ['stdio', 'streamable-http'])
def test_toolweave_client_against_toolweave_server(transport: str, served_http: str) -> None:
    server = (
        StdioServer('shop', SERVE[0], SERVE[1:], env=server_env())
        if transport == 'stdio'
        else StreamableHttpServer('shop', served_http)
    )
    model = S(
        [
            S.tool_call_response(
                'place_order',
                {'order': {'item': 'tea', 'quantity': 2}},
                more=[('add', {'a': 1, 'b': 'x'}), ('chart', {'metric': 'tea'})],
            ),
            answer,
        ]
    )
    with McpToolCallbackProvider(server) as provider:
        assert {cb.tool_definition.name: cb.tool_definition for cb in provider.tool_callbacks} == {
            name: cb.tool_definition for name, cb in LOCAL.items()
        }
        result = ChatClient.create(model).prompt('order tea').tools(provider).call().content()
    # the client validated add's arguments against the listed schema (Rust SchemaValidator) before sending
    ordered, invalid, charted = result.split(' | ')
    assert (ordered, charted) == ('2 x tea ordered', 'Chart of tea:')
    assert invalid.startswith("Invalid arguments for tool 'add': /b: ") and 'integer' in invalid
    # the served tool's image came back as a content part on the tool response
    chart = model.prompts[1].messages[-1].responses[2]
    assert [(m.media_type, m.data) for m in chart.media] == [('image/png', SHOP.PNG)]


def test_cli_misuse_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    from toolweave.cli import main

    for target, message in [('no_colon', 'expected module:attribute'), ('not_a_module_xyz:x', 'No module named')]:
        assert main(['mcp', 'serve', target]) == 2
        assert message in capsys.readouterr().err
    assert main(['mcp', 'serve', 'toolweave_tools:MISSING']) == 2
    assert "has no attribute 'MISSING'" in capsys.readouterr().err


def test_server_misuse() -> None:
    with pytest.raises(ValueError, match='at least one tool'):
        McpToolServer()
    with pytest.raises(ValueError, match="transport must be 'stdio' or 'streamable-http'"):
        from toolweave.mcp import serve

        serve(TOOLS, transport='carrier-pigeon')  # type: ignore[arg-type]
