"""What the HTTP client costs a streaming service: httpx vs httpcore directly vs raw asyncio, per request.

Starts the service benchmark's mock provider (``mock_provider.py``, same pacing options) and, in this one
process on uvloop, runs ``--clients`` concurrent keep-alive clients that send the benchmark's second-round
request (the ~300-token answer) again and again and read the whole streamed body, nothing parsed, with:

- ``httpx``: ``AsyncClient.stream(...)`` and ``aiter_bytes()``, stock;
- ``httpx + pool fix``: the same with toolweave's pool bookkeeping (:mod:`toolweave.providers._pool`), as the
  clients toolweave's models create;
- ``toolweave's client``: the httpx client a toolweave model creates (pool fix and the deadline backend,
  :mod:`toolweave.providers._deadline_backend`);
- ``httpcore + pool fix``: ``AsyncConnectionPool.stream(...)`` and its byte iterator (no httpx layer above it);
- ``aiohttp``: ``ClientSession.post(...)`` and ``content.iter_any()`` (its C HTTP parser);
- ``raw``: an asyncio stream per connection, the request pre-encoded, chunked framing read by hand (the floor).

Reported: CPU ms per request (this process: client work only; the mock provider runs in its own process)
and requests, per client. Read the differences as what replacing a layer could save toolweave per
provider request (a service request of the benchmark makes two). Run: ``python benches/service/transport.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpcore
import httpx
import uvloop
from toolweave.providers import _pool
from toolweave.providers._http import HttpTransport

HERE = Path(__file__).resolve().parent
CLOSE: list[Callable[[], Awaitable[None]]] = []
"""What the client being measured must close (its session, pool or connections)."""
BODY = json.dumps(
    {
        'model': 'gpt-4o',
        'stream': True,
        'messages': [{'role': 'user', 'content': 'q'}, {'role': 'tool', 'tool_call_id': 'c', 'content': 'r'}],
    }
).encode()


async def with_httpx(url: str, fixed: bool = False, toolweave: bool = False) -> Callable[[], Awaitable[None]]:
    if toolweave:
        client = HttpTransport('openai', timeout=60)._new_async_client()
    else:
        client = httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100))
    CLOSE.append(client.aclose)
    if fixed:
        _pool.install(client._transport._pool)  # type: ignore[attr-defined]
    headers = {'Content-Type': 'application/json', 'Accept': 'text/event-stream'}

    async def one() -> None:
        async with client.stream('POST', url, content=BODY, headers=headers) as response:
            async for _ in response.aiter_bytes():
                pass

    return one


async def with_httpcore(url: str) -> Callable[[], Awaitable[None]]:
    pool = httpcore.AsyncConnectionPool(max_connections=1000, max_keepalive_connections=100)
    CLOSE.append(pool.aclose)
    _pool.install(pool)
    headers = [(b'Content-Type', b'application/json'), (b'Accept', b'text/event-stream')]

    async def one() -> None:
        async with pool.stream('POST', url, content=BODY, headers=headers) as response:
            async for _ in response.aiter_stream():
                pass

    return one


async def with_aiohttp(url: str) -> Callable[[], Awaitable[None]]:
    import aiohttp

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000))
    CLOSE.append(session.close)
    headers = {'Content-Type': 'application/json', 'Accept': 'text/event-stream'}

    async def one() -> None:
        async with session.post(url, data=BODY, headers=headers) as response:
            async for _ in response.content.iter_any():
                pass

    return one


async def with_raw(url: str) -> Callable[[], Awaitable[None]]:
    host, port = url.split('//', 1)[1].split('/', 1)[0].split(':')
    request = (
        b'POST /v1/chat/completions HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\n'
        b'Content-Length: %d\r\n\r\n' % (host.encode(), port.encode(), len(BODY))
    ) + BODY
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def close() -> None:
        for _, writer in idle:
            writer.close()

    CLOSE.append(close)

    async def one() -> None:
        reader, writer = idle.pop() if idle else await asyncio.open_connection(host, int(port))
        writer.write(request)
        await reader.readuntil(b'\r\n\r\n')
        while size := int((await reader.readuntil(b'\r\n')).split(b';', 1)[0], 16):
            await reader.readexactly(size + 2)
        await reader.readexactly(2)
        idle.append((reader, writer))

    return one


async def measure(
    make: Callable[[str], Awaitable[Callable[[], Awaitable[None]]]], url: str, args: argparse.Namespace
) -> float:
    one = await make(url)
    count = 0

    async def client(until: float) -> None:
        nonlocal count
        while time.perf_counter() < until:
            await one()
            count += 1

    await asyncio.gather(*(client(time.perf_counter() + 1.5) for _ in range(args.clients)))  # warm-up
    count = 0
    start = time.process_time()
    await asyncio.gather(*(client(time.perf_counter() + args.duration) for _ in range(args.clients)))
    cpu = time.process_time() - start
    while CLOSE:
        await CLOSE.pop()()
    return cpu / max(count, 1) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--duration', type=float, default=8.0, help='seconds per client library')
    parser.add_argument('--clients', type=int, default=64, help='concurrent streams')
    parser.add_argument('--tps', type=float, default=400.0, help='mock provider events (tokens) per second')
    parser.add_argument('--ttft', type=float, default=0.2, help='mock provider time to first token, seconds')
    args = parser.parse_args()
    mock = subprocess.Popen(
        [sys.executable, str(HERE / 'mock_provider.py'), '--tps', str(args.tps), '--ttft', str(args.ttft)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert mock.stdout is not None and mock.stdin is not None
    url = f'http://127.0.0.1:{int(mock.stdout.readline())}/v1/chat/completions'
    try:
        for name, make in (
            ('httpx', with_httpx),
            ('httpx + pool fix', functools.partial(with_httpx, fixed=True)),
            ("toolweave's client", functools.partial(with_httpx, toolweave=True)),
            ('httpcore + pool fix', with_httpcore),
            ('aiohttp', with_aiohttp),
            ('raw asyncio', with_raw),
        ):
            print(f'{name:20s} CPU ms per streamed answer: {uvloop.run(measure(make, url, args)):.2f}', flush=True)
    finally:
        mock.stdin.close()
        mock.wait(10)
        mock.stdout.close()


if __name__ == '__main__':
    main()
