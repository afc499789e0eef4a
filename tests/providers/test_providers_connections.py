"""Connection reuse by default: one pooled async client per event loop, never shared across loops.

Against a keep-alive loopback server (``keepalive_server``), a model built with default settings must
reuse its connection for every request on one loop, give each loop (``asyncio.run`` twice, threads,
the sync streams' private loops) its own client, and close each client with its loop or the model.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from support.keepalive_server import Answer, KeepAliveServer
from support.provider_fixtures import collect_until_error
from toolweave import ChatClient
from toolweave.chat import Prompt
from toolweave.exceptions import IncompleteStreamError, ProviderError
from toolweave.providers import AnthropicChatModel, OpenAIChatModel, RetryPolicy
from toolweave.providers.replay import ReplayServer, Reply

WORDS = ['It', ' is', ' 24', ' C', ' in', ' Paris', '.']


def openai_sse() -> bytes:
    head = {'id': 'c1', 'object': 'chat.completion.chunk', 'model': 'm'}
    events = [{**head, 'choices': [{'index': 0, 'delta': {'content': w}, 'finish_reason': None}]} for w in WORDS]
    events.append({**head, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})
    body = b''.join(b'data: ' + json.dumps(e).encode() + b'\n\n' for e in events)
    return body + b'data: [DONE]\n\n'


COMPLETION = json.dumps(
    {
        'id': 'c1',
        'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'done'}, 'finish_reason': 'stop'}],
    }
).encode()


def answer(path: str, body: bytes) -> Answer:
    if json.loads(body).get('stream'):
        return Answer([openai_sse()])
    return Answer([COMPLETION], 'application/json')


@pytest.fixture
def server() -> KeepAliveServer:
    with KeepAliveServer(answer) as s:
        yield s  # type: ignore[misc]


def model_for(server: KeepAliveServer) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.url + '/v1', api_key='', model='m')


async def stream_text(model: OpenAIChatModel) -> str:
    return ''.join([c.text async for c in model.stream(Prompt.of('hi'))])


def test_requests_on_one_loop_share_one_connection(server: KeepAliveServer) -> None:
    model = model_for(server)

    async def run() -> list[str]:
        texts = [await stream_text(model) for _ in range(3)]
        texts.append((await model.acall(Prompt.of('hi'))).text)
        return texts

    assert asyncio.run(run()) == ['It is 24 C in Paris.'] * 3 + ['done']
    assert (server.requests, server.connections) == (4, 1)


def test_concurrent_streams_on_one_loop_each_get_a_connection_then_reuse_them(server: KeepAliveServer) -> None:
    model = model_for(server)

    async def run() -> list[str]:
        first = await asyncio.gather(*(stream_text(model) for _ in range(3)))
        second = await asyncio.gather(*(stream_text(model) for _ in range(3)))
        return [*first, *second]

    assert asyncio.run(run()) == ['It is 24 C in Paris.'] * 6
    assert server.requests == 6
    assert server.connections == 3


def test_each_loop_gets_its_own_client_closed_when_the_loop_shuts_down(server: KeepAliveServer) -> None:
    model = model_for(server)
    clients: list[httpx.AsyncClient] = []

    async def run() -> str:
        text = await stream_text(model)
        clients.append(await model.transport._aclient())
        return text

    assert [asyncio.run(run()) for _ in range(2)] == ['It is 24 C in Paris.'] * 2
    assert clients[0] is not clients[1]
    assert all(c.is_closed for c in clients)  # asyncio.run's shutdown_asyncgens closed each
    assert len(model.transport._loop_clients) == 0
    assert server.connections == 2


def test_model_aclose_closes_the_running_loops_client(server: KeepAliveServer) -> None:
    async def run() -> tuple[bool, bool]:
        async with model_for(server) as model:
            await stream_text(model)
            client = await model.transport._aclient()
            open_before = not client.is_closed
        return open_before, client.is_closed

    assert asyncio.run(run()) == (True, True)


def test_loops_in_two_threads_each_stream_on_their_own_connection(server: KeepAliveServer) -> None:
    model = model_for(server)
    results: list[list[str]] = []
    barrier = threading.Barrier(2)

    async def three() -> list[str]:
        barrier.wait(5)
        return [await stream_text(model) for _ in range(3)]

    threads = [threading.Thread(target=lambda: results.append(asyncio.run(three()))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == [['It is 24 C in Paris.'] * 3] * 2
    assert server.connections == 2
    assert len(model.transport._loop_clients) == 0


def test_sync_streams_over_private_loops_work_one_after_another(server: KeepAliveServer) -> None:
    model = model_for(server)
    client = ChatClient.builder(model).build()
    texts = [''.join(client.prompt('hi').stream().content()) for _ in range(3)]
    assert texts == ['It is 24 C in Paris.'] * 3
    assert len(model.transport._loop_clients) == 0  # each private loop closed its client at shutdown
    assert model.call(Prompt.of('hi')).text == 'done'
    model.close()


def test_close_from_another_thread_closes_a_running_loops_client(server: KeepAliveServer) -> None:
    model = model_for(server)
    used = threading.Event()
    release = threading.Event()
    seen: list[httpx.AsyncClient] = []

    async def serve() -> None:
        await stream_text(model)
        seen.append(await model.transport._aclient())
        used.set()
        while not release.is_set():
            await asyncio.sleep(0.01)

    thread = threading.Thread(target=asyncio.run, args=(serve(),))
    thread.start()
    assert used.wait(5)
    model.close()  # from this thread: scheduled on the serving loop
    deadline = time.monotonic() + 5
    while not seen[0].is_closed and time.monotonic() < deadline:
        time.sleep(0.01)
    release.set()
    thread.join(5)
    assert seen[0].is_closed


def anthropic_sse() -> bytes:
    events = [
        {'type': 'message_start', 'message': {'id': 'm1', 'model': 'c', 'usage': {'input_tokens': 3}}},
        {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}},
        *({'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': w}} for w in WORDS),
        {'type': 'content_block_stop', 'index': 0},
        {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn'}, 'usage': {'output_tokens': 7}},
        {'type': 'message_stop'},
    ]
    return b''.join(f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events)


def test_anthropic_streams_reuse_the_connection_too(server: KeepAliveServer) -> None:
    server.answer = lambda path, _: Answer([anthropic_sse()])
    model = AnthropicChatModel(base_url=server.url, api_key='k', model='c')

    async def text() -> str:
        return ''.join([c.text async for c in model.stream(Prompt.of('hi'))])

    async def run() -> list[str]:
        return [await text() for _ in range(3)]

    assert asyncio.run(run()) == ['It is 24 C in Paris.'] * 3
    assert server.connections == 1


# --- stream_sync: the blocking form of stream(), same chunks and errors ----------------------------

SYNC_CASES = [
    pytest.param(
        lambda url: OpenAIChatModel(base_url=url + '/v1', api_key='', model='m', retry=RetryPolicy(0)), id='openai'
    ),
    pytest.param(
        lambda url: AnthropicChatModel(base_url=url, api_key='k', model='c', retry=RetryPolicy(0)), id='anthropic'
    ),
]


def openai_tool_sse() -> bytes:
    head = {'id': 'c2', 'object': 'chat.completion.chunk', 'model': 'm'}
    call = {'index': 0, 'id': 'call_1', 'type': 'function', 'function': {'name': 'weather', 'arguments': ''}}
    events = [
        {**head, 'choices': [{'index': 0, 'delta': {'content': 'Let me check.'}, 'finish_reason': None}]},
        {**head, 'choices': [{'index': 0, 'delta': {'tool_calls': [call]}, 'finish_reason': None}]},
        *(
            {**head, 'choices': [{'index': 0, 'delta': {'tool_calls': [{'index': 0, 'function': {'arguments': a}}]}}]}
            for a in ['{"ci', 'ty": "Pa', 'ris"}']
        ),
        {**head, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'tool_calls'}]},
    ]
    return b''.join(b'data: ' + json.dumps(e).encode() + b'\n\n' for e in events) + b'data: [DONE]\n\n'


def first_events(body: bytes, n: int = 3) -> bytes:
    return b''.join(event + b'\n\n' for event in body.split(b'\n\n')[:n])


def shape(chunks: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            c.text,
            [(t.id, t.name, t.arguments) for t in c.tool_calls],
            c.result and c.result.finish_reason,
            dict(c.metadata),
        )
        for c in chunks
    ]


def test_stream_sync_gives_the_chunks_of_stream_over_one_pooled_connection(server: KeepAliveServer) -> None:
    server.answer = lambda path, body: Answer([openai_tool_sse()])
    model = model_for(server)

    async def run() -> list[Any]:
        return [c async for c in model.stream(Prompt.of('hi'))]

    async_chunks = asyncio.run(run())
    sync_chunks = [list(model.stream_sync(Prompt.of('hi'))) for _ in range(3)]
    assert all(shape(chunks) == shape(async_chunks) for chunks in sync_chunks)
    assert shape(async_chunks)[-1][1] == [('call_1', 'weather', '{"city": "Paris"}')]
    assert server.connections == 2  # one for the loop, one for the three blocking streams
    model.close()


@pytest.mark.parametrize('factory', SYNC_CASES)
@pytest.mark.parametrize(
    ('reply', 'error'),
    [
        (lambda body: Reply(body=first_events(body), content_type='text/event-stream'), IncompleteStreamError),
        (lambda body: Reply(body=body, content_type='text/event-stream', close_after=len(body) // 2), None),
        (lambda body: Reply(503, b'{"error": {"message": "busy"}}'), ProviderError),
    ],
    ids=['no-end-marker', 'broken-off', 'status'],
)
def test_stream_sync_fails_as_stream_does(
    factory: Callable[[str], Any], reply: Callable[[bytes], Reply], error: type[Exception] | None
) -> None:
    with ReplayServer() as replay:
        model = factory(replay.url)
        body = openai_sse() if isinstance(model, OpenAIChatModel) else anthropic_sse()
        replay.queue(reply(body), reply(body))
        seen_async, async_error = collect_until_error(model, Prompt.of('hi'))
        seen_sync: list[Any] = []
        sync_error: BaseException | None = None
        try:
            seen_sync.extend(model.stream_sync(Prompt.of('hi')))
        except ProviderError as exc:
            sync_error = exc
        model.close()
    assert async_error is not None and sync_error is not None
    assert type(sync_error) is type(async_error)
    assert isinstance(sync_error, error or ProviderError)
    assert str(sync_error) == str(async_error)
    assert shape(seen_sync) == shape(seen_async)
    assert sync_error.partial_text == async_error.partial_text == ''.join(c.text for c in seen_sync)  # type: ignore[attr-defined]
