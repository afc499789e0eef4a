"""The clients a model creates keep as many idle connections as the OpenAI/Anthropic SDKs (100, not httpx's 20).

A service streaming more than 20 answers at once reconnected for some requests once they ended: httpx's
default pool keeps only 20 idle connections. Against a keep-alive loopback server, 40 concurrent streams
and then 40 more must open at most 40 connections in all, async and blocking (with httpx's default limits the
blocking client opened 46 here). Threads of a loaded machine may overlap less than 40 at once, so the
blocking test asks for more than httpx's 20 at once (else it would prove nothing) and at most 40 in all.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

from support.keepalive_server import Answer, KeepAliveServer
from toolweave.chat import Prompt
from toolweave.providers import OpenAIChatModel

CONCURRENT = 40
HTTPX_DEFAULT_IDLE = 20


def answer(path: str, body: bytes) -> Answer:
    head = {'id': 'c1', 'object': 'chat.completion.chunk', 'model': 'm'}
    events = [
        {**head, 'choices': [{'index': 0, 'delta': {'content': 'hi'}, 'finish_reason': None}]},
        {**head, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]},
    ]
    sse = b''.join(b'data: ' + json.dumps(e).encode() + b'\n\n' for e in events) + b'data: [DONE]\n\n'
    return Answer([sse], first=0.05)  # the streams overlap: each holds its connection a while


def test_concurrent_async_streams_reuse_their_connections() -> None:
    with KeepAliveServer(answer) as server:
        model = OpenAIChatModel(base_url=server.url + '/v1', api_key='', model='m')

        async def one() -> str:
            return ''.join([c.text async for c in model.stream(Prompt.of('hi'))])

        async def run() -> None:
            for _ in range(2):
                assert await asyncio.gather(*(one() for _ in range(CONCURRENT))) == ['hi'] * CONCURRENT
            await model.aclose()

        asyncio.run(run())
        assert server.requests == 2 * CONCURRENT
        assert server.connections == CONCURRENT


def test_concurrent_blocking_streams_reuse_their_connections() -> None:
    with KeepAliveServer(answer) as server:
        model = OpenAIChatModel(base_url=server.url + '/v1', api_key='', model='m')

        def one(_: int) -> str:
            return ''.join(c.text for c in model.stream_sync(Prompt.of('hi')))

        with ThreadPoolExecutor(CONCURRENT) as pool:
            for _ in range(2):
                assert list(pool.map(one, range(CONCURRENT))) == ['hi'] * CONCURRENT
        model.close()
        assert server.requests == 2 * CONCURRENT
        assert HTTPX_DEFAULT_IDLE < server.connections <= CONCURRENT
