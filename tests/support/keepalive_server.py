"""A loopback HTTP/1.1 server with keep-alive, for connection-reuse tests and the provider benchmarks.

The standard library's ``ThreadingHTTPServer`` (behind ``ReplayServer``) closes the connection after
every answer, so a client's connection pool is never exercised. This asyncio server keeps connections
open, counts them, and answers every POST with the bytes ``answer(path, body)`` returns: in one write
(``Content-Length``), or, with ``pieces``, as chunked transfer encoding of those pieces, ``gap``
seconds apart after ``first`` seconds (a paced stream). It runs in a daemon thread of its own loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from typing_extensions import Self

__all__ = ['Answer', 'KeepAliveServer']


@dataclass(frozen=True)
class Answer:
    """What one request gets.

    Attributes:
        pieces: The body, in the pieces it is written in (one piece: sent with ``Content-Length``).
        content_type: ``Content-Type`` header.
        first: Seconds before the first piece (time to first token).
        gap: Seconds between pieces (pacing).
    """

    pieces: Sequence[bytes]
    content_type: str = 'text/event-stream'
    first: float = 0.0
    gap: float = 0.0


@dataclass
class KeepAliveServer:
    """``with KeepAliveServer(answer) as server:`` serves on ``server.url`` (``http://127.0.0.1:<port>``)."""

    answer: Callable[[str, bytes], Answer]
    connections: int = 0
    requests: int = 0
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _stop: list[asyncio.Future[None]] = field(default_factory=list, repr=False)
    _open: set[asyncio.StreamWriter] = field(default_factory=set, repr=False)

    @property
    def url(self) -> str:
        return f'http://127.0.0.1:{self.port}'

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._open.add(writer)
        try:
            while True:
                head = await reader.readuntil(b'\r\n\r\n')
                lines = head.decode('latin-1').split('\r\n')
                path = lines[0].split(' ')[1]
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (line.partition(':') for line in lines[1:] if line)
                }
                body = await reader.readexactly(int(headers.get('content-length', '0')))
                self.requests += 1
                await self._write(writer, self.answer(path, body))
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the client left, or the server stops
        finally:
            self._open.discard(writer)
            writer.close()

    @staticmethod
    async def _write(writer: asyncio.StreamWriter, answer: Answer) -> None:
        start = f'HTTP/1.1 200 OK\r\nContent-Type: {answer.content_type}\r\n'
        if answer.first:
            await asyncio.sleep(answer.first)
        if len(answer.pieces) == 1:
            writer.write(f'{start}Content-Length: {len(answer.pieces[0])}\r\n\r\n'.encode() + answer.pieces[0])
            await writer.drain()
            return
        writer.write(f'{start}Transfer-Encoding: chunked\r\n\r\n'.encode())
        for i, piece in enumerate(answer.pieces):
            if i and answer.gap:
                await asyncio.sleep(answer.gap)
            writer.write(b'%x\r\n%s\r\n' % (len(piece), piece))
            await writer.drain()
        writer.write(b'0\r\n\r\n')
        await writer.drain()

    def __enter__(self) -> Self:
        ready = threading.Event()
        stop: list[asyncio.Future[None]] = []

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            stop.append(self._loop.create_future())
            server = await asyncio.start_server(self._serve, '127.0.0.1', 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            await stop[0]
            server.close()
            for writer in list(self._open):
                writer.close()

        self._stop = stop
        self._thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True, name='keepalive-server')
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop[0].set_result, None)
            self._thread.join(10)


def serve_directory(directory: str) -> None:
    """Serve ``<directory>/<name>`` to every POST under ``/<name>/...`` (one piece per SSE event) until stdin closes.

    Prints the port on the first line of stdout (the benchmarks run it as a subprocess, so its CPU time
    is not the client's).
    """
    import sys
    from pathlib import Path

    bodies = {p.name: p.read_bytes() for p in Path(directory).iterdir()}
    pieces = {name: [event + b'\n\n' for event in body.split(b'\n\n') if event] for name, body in bodies.items()}

    def answer(path: str, _: bytes) -> Answer:
        return Answer(pieces[path.split('/')[1]])

    with KeepAliveServer(answer) as server:
        print(server.port, flush=True)
        sys.stdin.read()


if __name__ == '__main__':
    import sys

    serve_directory(sys.argv[1])
