"""The deadline stream answers httpcore's ``is_readable`` exactly as the stream it wraps, from its own socket.

httpcore asks every pooled idle connection ``is_readable`` each time it hands out or takes back a
connection (a readable idle socket is one the server closed: the connection is dropped, not reused).
The wrapper looks the raw socket up once instead of asking anyio each time; these tests hold it to
anyio's answer in every state of the socket, and check that a connection the server closed while
idle is still replaced, not reused, through a real model.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore
from support.keepalive_server import Answer, KeepAliveServer
from toolweave.chat import Prompt
from toolweave.providers import OpenAIChatModel, _deadline_backend


class _CountingStream(httpcore.AsyncNetworkStream):
    """Passes everything to ``inner`` and records which extra infos were asked."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self.inner = inner
        self.asked: list[str] = []

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self.inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self.inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def get_extra_info(self, info: str) -> Any:
        self.asked.append(info)
        return self.inner.get_extra_info(info)


async def _states() -> list[tuple[str, bool, bool]]:
    """(state, wrapped answer, anyio's answer) for an idle socket, one with data, one the peer closed, a closed one."""
    peer: list[asyncio.StreamWriter] = []
    accepted = asyncio.Event()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer.append(writer)
        accepted.set()

    server = await asyncio.start_server(on_connect, '127.0.0.1', 0)
    port = server.sockets[0].getsockname()[1]
    inner = await httpcore.AnyIOBackend().connect_tcp('127.0.0.1', port)
    counting = _CountingStream(inner)
    wrapped = _deadline_backend._AsyncStream(counting)
    await accepted.wait()
    seen = []

    def look(state: str) -> None:
        seen.append((state, wrapped.get_extra_info('is_readable'), inner.get_extra_info('is_readable')))

    look('idle')
    peer[0].write(b'x')
    await peer[0].drain()
    await asyncio.sleep(0.05)
    look('data waiting')
    assert await wrapped.read(10) == b'x'
    look('data read')
    peer[0].close()
    await asyncio.sleep(0.05)
    look('peer closed')
    await wrapped.aclose()
    look('closed')
    server.close()
    assert counting.asked == ['socket'], counting.asked  # looked up once, never anyio's is_readable
    return seen


def test_is_readable_matches_anyio_in_every_socket_state() -> None:
    seen = asyncio.run(_states())
    assert [(state, wrapped) for state, wrapped, _ in seen] == [
        ('idle', False),
        ('data waiting', True),
        ('data read', False),
        ('peer closed', True),
        ('closed', True),
    ]
    assert all(wrapped == anyio_answer for _, wrapped, anyio_answer in seen), seen


def test_a_stream_without_a_socket_is_asked_as_before() -> None:
    class NoSocket(_CountingStream):
        def get_extra_info(self, info: str) -> Any:
            self.asked.append(info)
            return {'socket': None, 'is_readable': 'inner answer'}.get(info)

    stream = NoSocket(httpcore.AsyncNetworkStream())
    wrapped = _deadline_backend._AsyncStream(stream)
    assert wrapped.get_extra_info('is_readable') == 'inner answer'
    assert wrapped.get_extra_info('server_addr') is None
    assert stream.asked == ['socket', 'is_readable', 'server_addr']


def _sse(text: str) -> bytes:
    chunk = b'{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"%s"}}]}' % (
        text.encode()
    )
    done = b'{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'
    return b'data: ' + chunk + b'\n\ndata: ' + done + b'\n\ndata: [DONE]\n\n'


def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    with KeepAliveServer(lambda path, body: Answer([_sse('hi')])) as server:
        model = OpenAIChatModel(base_url=server.url + '/v1', api_key='k', model='m')

        async def text() -> str:
            return ''.join([chunk.text async for chunk in model.stream(Prompt.of('q'))])

        async def main() -> list[str]:
            answers = [await text()]
            assert server._loop is not None
            for writer in list(server._open):  # the server ends the idle keep-alive connection (on its loop)
                server._loop.call_soon_threadsafe(writer.close)
            await asyncio.sleep(0.1)
            answers.append(await text())
            await model.aclose()
            return answers

        assert asyncio.run(main()) == ['hi', 'hi']
        assert server.connections == 2
