"""Reads and writes of the deadline stream on asyncio skip anyio's cancel scope, with httpcore's exact outcomes.

Over httpcore's anyio stream on asyncio (Python 3.11+), ``_deadline_backend._AsyncStream`` reads and writes
the anyio byte stream under ``asyncio.timeout`` instead of ``anyio.fail_after`` (about a third of the CPU per
read of a streamed body). Each scenario below runs through that path and through httpcore's own stream
(the wrapper told not to take it) on a fresh loopback connection, and the two must give the same bytes, or
the same httpcore exception type: data, a read timeout, the end of the stream, reads and writes after
the stream was closed, a write that times out on a peer that does not read, an empty write, and the total
deadline. A model's own client takes that path.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpcore
import pytest
from support.keepalive_server import Answer, KeepAliveServer
from toolweave.chat import Prompt
from toolweave.providers import OpenAIChatModel, _deadline, _deadline_backend

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason='asyncio.timeout: Python 3.11+')

Scenario = Callable[[_deadline_backend._AsyncStream, asyncio.StreamWriter], Awaitable[Any]]


async def _data(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    peer.write(b'hello')
    await peer.drain()
    first = await stream.read(3, 5.0)
    return first, await stream.read(100, 5.0)


async def _read_timeout(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    return await stream.read(100, 0.05)


async def _end(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    peer.write(b'last')
    peer.close()
    return await stream.read(100, 5.0), await stream.read(100, 5.0)


async def _read_closed(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    await stream.aclose()
    return await stream.read(100, 5.0)


async def _write_closed(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    await stream.aclose()
    await stream.write(b'x', 5.0)


async def _write_empty(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    await stream.aclose()
    await stream.write(b'', 5.0)  # nothing to send: not even a closed stream is an error
    return 'ok'


async def _write_timeout(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    block = b'x' * (16 * 2**20)
    for _ in range(8):  # the peer never reads: the transport's buffer passes its high-water mark
        await stream.write(block, 0.2)


async def _deadline_passed(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    peer.write(b'waiting')
    await peer.drain()
    with _deadline.scope(time.monotonic() - 1):
        return await stream.read(100, 5.0)


async def _deadline_caps(stream: _deadline_backend._AsyncStream, peer: asyncio.StreamWriter) -> Any:
    start = time.monotonic()
    with _deadline.scope(start + 0.1):
        try:
            await stream.read(100, 30.0)
        finally:
            assert time.monotonic() - start < 5  # the total deadline, not the 30 s read timeout


SCENARIOS: dict[str, Scenario] = {
    'data': _data,
    'read timeout': _read_timeout,
    'end of stream': _end,
    'read after close': _read_closed,
    'write after close': _write_closed,
    'empty write': _write_empty,
    'write timeout': _write_timeout,
    'deadline passed': _deadline_passed,
    'deadline caps the read': _deadline_caps,
}


async def _outcome(scenario: Scenario, native: bool) -> tuple[Any, bool]:
    """The scenario's result or exception type over a fresh connection, and whether the native path ran."""
    peers: list[asyncio.StreamWriter] = []
    accepted = asyncio.Event()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peers.append(writer)
        accepted.set()

    server = await asyncio.start_server(on_connect, '127.0.0.1', 0)
    port = server.sockets[0].getsockname()[1]
    stream = await _deadline_backend._AsyncBackend(httpcore.AnyIOBackend()).connect_tcp('127.0.0.1', port)
    assert isinstance(stream, _deadline_backend._AsyncStream)
    took = stream._bytes is not None
    if not native:
        stream._bytes = None  # httpcore's own stream
    await accepted.wait()
    try:
        result: Any = ('returned', await scenario(stream, peers[0]))
    except httpcore.NetworkError as exc:
        result = ('raised', type(exc))
    except httpcore.TimeoutException as exc:
        result = ('raised', type(exc))
    finally:
        await stream.aclose()
        peers[0].close()
        server.close()
    return result, took


@pytest.mark.parametrize('name', list(SCENARIOS))
def test_the_native_path_gives_httpcores_outcome(name: str) -> None:
    scenario = SCENARIOS[name]
    native, took = asyncio.run(_outcome(scenario, native=True))
    stock, _ = asyncio.run(_outcome(scenario, native=False))
    assert took  # the wrapper found the anyio byte stream on asyncio
    assert native == stock
    expected = {
        'data': ('returned', (b'hel', b'lo')),
        'read timeout': ('raised', httpcore.ReadTimeout),
        'end of stream': ('returned', (b'last', b'')),
        'read after close': ('raised', httpcore.ReadError),
        'write after close': ('raised', httpcore.WriteError),
        'empty write': ('returned', 'ok'),
        'write timeout': ('raised', httpcore.WriteTimeout),
        'deadline passed': ('raised', httpcore.ReadTimeout),
        'deadline caps the read': ('raised', httpcore.ReadTimeout),
    }[name]
    assert native == expected


@pytest.mark.parametrize('sniffio_installed', [True, False])
def test_a_models_client_reads_through_the_native_path(
    sniffio_installed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sniffio_installed:  # not a toolweave dependency (httpx and anyio 4 do without it): importing it fails
        monkeypatch.setitem(sys.modules, 'sniffio', None)
    head = b'{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}'
    done = b'{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'
    body = b'data: ' + head + b'\n\ndata: ' + done + b'\n\ndata: [DONE]\n\n'
    with KeepAliveServer(lambda path, _: Answer([body[:40], body[40:]])) as server:
        model = OpenAIChatModel(base_url=server.url + '/v1', api_key='', model='m')

        async def main() -> tuple[str, list[bool]]:
            text = ''.join([chunk.text async for chunk in model.stream(Prompt.of('q'))])
            pool = (await model._transport._aclient())._transport._pool  # type: ignore[attr-defined]
            native = [c._connection._network_stream._bytes is not None for c in pool.connections]
            await model.aclose()
            return text, native

        assert asyncio.run(main()) == ('hi', [True])
