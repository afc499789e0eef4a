"""The MCP client against real servers (the SDK's own server API) over stdio, streamable HTTP and SSE."""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import sys
import threading
import time
from typing import Any

import orjson
import pytest
from conftest import SERVERS, free_port, import_server_module, server_env, stdio, wait_for_port
from mcp.types import Tool
from toolweave.exceptions import InvalidToolArgumentsError, ToolExecutionError
from toolweave.mcp import (
    DefaultMcpToolNamePrefixGenerator,
    McpConnectionError,
    McpConnectionInfo,
    McpTimeoutError,
    McpTimeouts,
    McpToolCallbackProvider,
    McpToolCallError,
    NoPrefixGenerator,
    ServerPrefixGenerator,
    SseServer,
    StdioServer,
    StreamableHttpServer,
    allow_tools,
    format_tool_name,
)
from toolweave.tools.converter import ContentResult


def by_name(provider: McpToolCallbackProvider) -> dict[str, Any]:
    return {cb.tool_definition.name: cb for cb in provider.tool_callbacks}


def cause_of(error: pytest.ExceptionInfo[ToolExecutionError]) -> BaseException:
    return error.value.cause


@pytest.fixture(scope='module')
def weather() -> Any:
    with McpToolCallbackProvider(stdio('weather', 'weather.py')) as provider:
        yield provider


def test_stdio_lists_the_servers_tools_with_their_schemas(weather: McpToolCallbackProvider) -> None:
    tools = by_name(weather)
    assert list(tools) == ['get_weather', 'fail', 'snapshot', 'stats', 'weather_calls', 'touch']
    definition = tools['get_weather'].tool_definition
    assert definition.description == 'Weather forecast for a city.'
    assert definition.input_schema['required'] == ['city']
    assert definition.input_schema['properties']['city']['description'] == 'City name'
    assert definition.input_schema['properties']['days'] == {'default': 1, 'title': 'Days', 'type': 'integer'}
    # a parameterless tool: ensureValidInputSchema keeps type object and an (empty) properties object
    assert tools['snapshot'].tool_definition.input_schema['type'] == 'object'
    assert tools['snapshot'].tool_definition.input_schema['properties'] == {}
    assert tools['get_weather'].server_name == 'weather' and tools['get_weather'].tool.name == 'get_weather'


def test_results_text_structured_image_and_error(weather: McpToolCallbackProvider) -> None:
    tools = by_name(weather)
    assert tools['get_weather'].call('{"city": "Paris", "days": 2}') == 'Paris: sunny, 21 C for 2 day(s) (from weather)'
    stats = tools['stats'].call_tool({'city': 'Oslo'})
    assert stats.structured == {'temperature': 21.5, 'humidity': 0.4} and not stats.is_error
    assert orjson.loads(tools['stats'].call('{"city": "Oslo"}')) == {'temperature': 21.5, 'humidity': 0.4}
    # an image is a content part (Media with the decoded bytes), not base64 text
    image = tools['snapshot'].call('{}')
    assert isinstance(image, ContentResult) and str(image) == ''
    assert [(m.media_type, m.data) for m in image.media] == [('image/png', import_server_module('weather').PIXEL)]
    assert tools['snapshot'].call_tool({}).parts[0].type == 'image'
    with pytest.raises(ToolExecutionError) as failed:
        tools['fail'].call('{"reason": "no rain"}')
    assert isinstance(cause_of(failed), McpToolCallError)
    assert (
        str(failed.value) == 'Error executing tool fail: cannot do it: no rain'
    )  # the server's text is what the model reads
    assert tools['fail'].call_tool({'reason': 'x'}).is_error


def test_arguments_are_validated_before_the_server_is_asked(weather: McpToolCallbackProvider) -> None:
    tools = by_name(weather)
    before = int(tools['weather_calls'].call('{}'))
    with pytest.raises(ToolExecutionError) as invalid:
        tools['get_weather'].call('{"days": "two"}')
    cause = cause_of(invalid)
    assert isinstance(cause, InvalidToolArgumentsError)
    problems = sorted(cause.problems)  # the wording is the core's (Rust, or the pure-Python twin)
    assert [p.split(': ', 1)[0] for p in problems] == ['/', '/days']
    assert 'city' in problems[0] and 'required' in problems[0] and 'integer' in problems[1]
    with pytest.raises(ToolExecutionError, match="Invalid arguments for tool 'get_weather'"):
        asyncio.run(tools['get_weather'].acall('{"city": '))
    assert int(tools['weather_calls'].call('{}')) == before  # neither call reached the server


def test_async_calls_from_several_event_loops(weather: McpToolCallbackProvider) -> None:
    tool = by_name(weather)['get_weather']

    async def three() -> list[str]:
        return list(await asyncio.gather(*(tool.acall(f'{{"city": "C{i}"}}') for i in range(3))))

    for _ in range(2):  # a new event loop each time: the session lives on the provider's own loop
        assert asyncio.run(three()) == [f'C{i}: sunny, 21 C for 1 day(s) (from weather)' for i in range(3)]


def test_streamable_http(weather_http: str) -> None:
    with McpToolCallbackProvider(StreamableHttpServer('remote', weather_http)) as provider:
        tools = by_name(provider)
        assert tools['get_weather'].call('{"city": "Rome"}') == 'Rome: sunny, 21 C for 1 day(s) (from weather-http)'
        assert asyncio.run(tools['get_weather'].acall('{"city": "Bern"}')).startswith('Bern: sunny')


def test_sse(weather_sse: str) -> None:
    async def run() -> str:
        async with McpToolCallbackProvider(SseServer('legacy', weather_sse)) as provider:
            result: str = await by_name(provider)['get_weather'].acall('{"city": "Lima"}')
            return result

    assert asyncio.run(run()) == 'Lima: sunny, 21 C for 1 day(s) (from weather)'


def test_server_crashing_mid_call_is_a_typed_error_and_the_next_call_reconnects() -> None:
    with McpToolCallbackProvider(stdio('faulty', 'faulty.py')) as provider:
        tools = by_name(provider)
        first_pid = int(tools['pid'].call('{}'))
        assert tools['add_tool'].call('{"name": "ephemeral"}') == 'added ephemeral'
        wait_for(lambda: 'ephemeral' in by_name(provider))
        with pytest.raises(ToolExecutionError) as crashed:
            tools['crash'].call('{}')
        assert isinstance(cause_of(crashed), McpConnectionError)
        assert "MCP server 'faulty' went away during a call to 'crash'" in str(crashed.value)
        second_pid = int(asyncio.run(tools['pid'].acall('{}')))  # reconnected: a new server process
        assert second_pid != first_pid
        assert int(tools['pid'].call('{}')) == second_pid  # and kept
        # the new process has only its own tools: the reconnect listed them again
        assert 'ephemeral' not in by_name(provider) and 'pid' in by_name(provider)


def wait_for(condition: Any, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, 'condition not met in time'
        time.sleep(0.05)


def test_slow_call_times_out_and_the_session_is_kept() -> None:
    timeouts = McpTimeouts(call=0.5)
    with McpToolCallbackProvider(stdio('faulty', 'faulty.py'), timeouts=timeouts) as provider:
        tools = by_name(provider)
        pid = tools['pid'].call('{}')
        started = time.monotonic()
        with pytest.raises(ToolExecutionError) as slow:
            tools['slow'].call('{"seconds": 30}')
        assert time.monotonic() - started < 20
        assert isinstance(cause_of(slow), McpTimeoutError)
        assert str(slow.value) == "MCP server 'faulty' did not answer a call to 'slow' within 0.5 seconds"
        assert tools['pid'].call('{}') == pid
        assert tools['slow'].call('{"seconds": 0.01}') == 'slept 0.01'


def test_connect_failures_are_typed() -> None:
    dead = StdioServer('dead', sys.executable, ['-c', 'pass'])
    threads = threading.active_count()
    with pytest.raises(McpConnectionError, match="cannot connect to MCP server 'dead'"):
        McpToolCallbackProvider(dead).connect()
    assert threading.active_count() == threads  # the failed provider left no background loop thread
    mute = StdioServer('mute', sys.executable, ['-c', 'import time; time.sleep(60)'])
    started = time.monotonic()
    with pytest.raises(McpTimeoutError, match="MCP server 'mute' did not connect within 1 seconds"):
        McpToolCallbackProvider(mute, timeouts=McpTimeouts(connect=1)).connect()
    assert time.monotonic() - started < 30
    # no bound on the whole connect, but each handshake request is bounded by timeouts.initialize
    with pytest.raises(McpTimeoutError, match="MCP server 'mute' did not answer its handshake within 1 seconds"):
        McpToolCallbackProvider(mute, timeouts=McpTimeouts(connect=None, initialize=1)).connect()
    with pytest.raises(McpConnectionError, match="^cannot connect to MCP server 'nobody': ConnectError"):
        McpToolCallbackProvider(StreamableHttpServer('nobody', 'http://127.0.0.1:9/mcp')).connect()


@pytest.mark.parametrize('era', ['2026-07-28', 'legacy'])
def test_tool_list_changes_refresh_the_callbacks(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # 2026-07-28 sessions follow a subscriptions/listen stream; a legacy (initialize handshake) session gets the
    # notifications/tools/list_changed notification: the era is forced on the SDK client, the server is real
    import toolweave.mcp.connection as connection_module

    if era == 'legacy':
        monkeypatch.setattr(connection_module, 'Client', functools.partial(connection_module.Client, mode='legacy'))
    with McpToolCallbackProvider(stdio('faulty', 'faulty.py')) as provider:
        assert 'triple' not in by_name(provider)
        assert by_name(provider)['add_tool'].call('{"name": "triple"}') == 'added triple'
        wait_for(lambda: 'triple' in by_name(provider))
        added = by_name(provider)['triple']
        (connected,) = provider.connection_infos
        assert connected.server_name == 'faulty' and connected.server_info is not None
        assert (connected.protocol_version == '2026-07-28') is (era != 'legacy')
        assert added.tool_definition.description == 'The added tool triple: doubles x.'
        assert added.call('{"x": 4}') == '8'


def test_close_ends_the_server_process() -> None:
    provider = McpToolCallbackProvider(stdio('faulty', 'faulty.py')).connect()
    pid = int(by_name(provider)['pid'].call('{}'))
    provider.close()
    wait_for(lambda: not _alive(pid))
    provider.close()  # idempotent
    # a closed provider connects again on use, on a new background loop
    new_pid = int(by_name(provider)['pid'].call('{}'))
    assert new_pid != pid and _alive(new_pid)
    provider.close()
    wait_for(lambda: not _alive(new_pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) counts as gone
        with open(f'/proc/{pid}/stat', encoding='ascii') as stat:
            return stat.read().split(') ')[1][0] != 'Z'
    except FileNotFoundError:
        return False


def test_prefixes_filter_and_unique_names() -> None:
    servers = [stdio('north', 'weather.py', 'north'), stdio('south', 'weather.py', 'south')]
    with McpToolCallbackProvider(servers, tool_filter=allow_tools(north=['get_weather'])) as provider:
        names = [cb.tool_definition.name for cb in provider.tool_callbacks]
        # north keeps get_weather only; the default generator prefixes south's clashing name, not the free ones
        assert names == ['get_weather', 'south_get_weather', 'fail', 'snapshot', 'stats', 'weather_calls', 'touch']
        tools = by_name(provider)
        assert tools['get_weather'].call('{"city": "A"}').endswith('(from north)')
        assert tools['south_get_weather'].call('{"city": "A"}').endswith('(from south)')


def info(server: str) -> McpConnectionInfo:
    return McpConnectionInfo(server, None, '2026-07-28')


def tool(name: str) -> Tool:
    return Tool(name=name, input_schema={'type': 'object'})


def test_name_generators_are_deterministic_and_bounded() -> None:
    default, prefixed, plain = DefaultMcpToolNamePrefixGenerator(), ServerPrefixGenerator(), NoPrefixGenerator()
    assert default(info('a'), tool('get'), set()) == 'get'
    assert default(info('b'), tool('get'), {'get'}) == 'b_get'
    assert default(info('b'), tool('get'), {'get', 'b_get'}) == 'b_get_2'
    assert prefixed(info('files'), tool('read.file'), set()) == 'files_read_file'
    assert plain(info('x'), tool('a.b'), set()) == 'a.b'
    long = 'very_long_tool_name_' * 5
    first, second = format_tool_name(long + 'one'), format_tool_name(long + 'two')
    assert len(first) == len(second) == 64 and first != second and first[:55] == second[:55]
    assert format_tool_name(long + 'one') == first
    assert format_tool_name('über tool/x') == '_ber_tool_x'


def test_no_prefix_clash_is_a_value_error() -> None:
    servers = [stdio('north', 'weather.py', 'north'), stdio('south', 'weather.py', 'south')]
    provider = McpToolCallbackProvider(servers, prefix_generator=NoPrefixGenerator())
    try:
        with pytest.raises(ValueError, match="MCP tool name 'get_weather' .*server 'south'.* is taken"):
            provider.connect()
    finally:
        provider.close()


def test_misuse_errors() -> None:
    with pytest.raises(ValueError, match='at least one MCP server'):
        McpToolCallbackProvider([])
    with pytest.raises(ValueError, match='names must differ; repeated: a'):
        McpToolCallbackProvider([StdioServer('a', 'x'), StdioServer('a', 'y')])
    with pytest.raises(TypeError, match='StdioServer, StreamableHttpServer or SseServer'):
        McpToolCallbackProvider(['python server.py'])  # type: ignore[list-item]
    with pytest.raises(ValueError, match='server name'):
        StdioServer('has space', 'python')
    with pytest.raises(ValueError, match='http'):
        StreamableHttpServer('x', 'localhost:8000')
    with pytest.raises(ValueError, match='McpTimeouts.call must be a positive number'):
        McpTimeouts(call=0)
    with pytest.raises(TypeError, match='list of tool names'):
        allow_tools(a='get')


def test_http_server_going_away_is_a_typed_error_and_a_restarted_one_is_reconnected() -> None:
    port = free_port()
    command = [sys.executable, str(SERVERS / 'weather.py'), 'http', str(port)]

    def start() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(command, env=server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(port, process)
        return process

    server = start()
    try:
        with McpToolCallbackProvider(StreamableHttpServer('remote', f'http://127.0.0.1:{port}/mcp')) as provider:
            tool = by_name(provider)['get_weather']
            assert tool.call('{"city": "Rome"}').startswith('Rome: sunny')
            server.kill()
            server.wait(10)
            with pytest.raises(ToolExecutionError) as gone:
                tool.call('{"city": "Rome"}')
            assert isinstance(cause_of(gone), McpConnectionError)
            server = start()
            assert tool.call('{"city": "Pisa"}').startswith('Pisa: sunny')  # a new session on the new server
    finally:
        server.kill()
        server.wait(10)
