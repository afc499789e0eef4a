"""The shared HTTP layer through OpenAIChatModel: retries, Retry-After, timeouts, typed errors, stream faults."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest
from support.core_fixtures import load_stream
from support.provider_fixtures import collect, collect_until_error
from toolweave.chat import Prompt
from toolweave.exceptions import (
    AuthenticationError,
    BadRequestError,
    ChatModelError,
    ContextLengthError,
    IncompleteStreamError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from toolweave.providers import OpenAIChatModel, RetryPolicy, Timeouts
from toolweave.providers.replay import ReplayServer, Reply

ANSWER = '023-llamacpp-gemma270m-answer-after-tool'
COMPLETION = (
    b'{"id":"c1","model":"m","choices":[{"index":0,"finish_reason":"stop",'
    b'"message":{"role":"assistant","content":"It is 24 C."}}]}'
)


def model(server: ReplayServer, delays: list[float] | None = None, **kwargs: Any) -> OpenAIChatModel:
    m = OpenAIChatModel(base_url=server.url + '/v1', api_key='sk-secret-key', model='m', **kwargs)
    if delays is not None:
        m.transport.sleep = delays.append

        async def asleep(seconds: float) -> None:
            delays.append(seconds)

        m.transport.asleep = asleep
    return m


def stream_body() -> bytes:
    return load_stream(ANSWER)[0]


def test_hierarchy_keeps_old_names() -> None:
    assert ChatModelError is ProviderError
    for cls in (AuthenticationError, RateLimitError, ContextLengthError, ProviderStreamError, ServerError):
        assert issubclass(cls, ProviderError) and issubclass(cls, RuntimeError)
    core_style = ProviderStreamError('boom', {'event': 'error', 'message': 'boom', 'data': {}})
    assert (core_style.message, core_style.error, core_style.chunks, core_style.status_code) == (
        'boom',
        {'event': 'error', 'message': 'boom', 'data': {}},
        [],
        None,
    )
    error = RateLimitError('slow down', status_code=429, request_id='r1', provider='openai')
    error.retry_after = 3.0
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.status_code, copy.request_id, copy.retry_after) == (
        RateLimitError,
        'slow down',
        429,
        'r1',
        3.0,
    )


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream'])
def test_500_then_success_is_retried(server: ReplayServer, mode: str) -> None:
    delays: list[float] = []
    ok = Reply(body=stream_body(), content_type='text/event-stream') if mode == 'stream' else Reply(body=COMPLETION)
    server.queue(Reply(500, b'{"error": {"message": "overloaded"}}'), Reply(502, b'bad gateway'), ok)
    with model(server, delays, retry=RetryPolicy(max_retries=2, initial_delay=0.5, jitter=0.0)) as m:
        if mode == 'call':
            text = m.call(Prompt.of('hi')).text
        elif mode == 'acall':
            text = asyncio.run(m.acall(Prompt.of('hi'))).text
        else:
            text = ''.join(c.text for c in collect(m, Prompt.of('hi')))
    assert text in ('It is 24 C.', 'It is 18 C in Paris. čp')
    assert delays == [0.5, 1.0]  # exponential backoff, no jitter
    assert len(server.requests) == 3


def test_jitter_stays_within_the_band() -> None:
    policy = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=3.0, jitter=0.5)
    for attempt, base in [(0, 1.0), (1, 2.0), (2, 3.0), (5, 3.0)]:
        for _ in range(50):
            assert base * 0.5 <= policy.delay(attempt) <= base


@pytest.mark.parametrize(
    ('headers', 'wait'),
    [({'Retry-After': '2'}, 2.0), ({'retry-after-ms': '1500'}, 1.5), ({'Retry-After': 'soon'}, None)],
)
def test_429_retry_after_is_honoured(server: ReplayServer, headers: dict[str, str], wait: float | None) -> None:
    delays: list[float] = []
    server.queue(Reply(429, b'{"error": {"message": "rate limited"}}', headers=headers), Reply(body=COMPLETION))
    with model(server, delays, retry=RetryPolicy(initial_delay=0.25, jitter=0.0)) as m:
        assert m.call(Prompt.of('hi')).text == 'It is 24 C.'
    assert delays == [wait if wait is not None else 0.25]


def test_429_retries_run_out(server: ReplayServer) -> None:
    delays: list[float] = []
    limited = Reply(429, b'{"error": {"message": "rate limited"}}', headers={'Retry-After': '1', 'x-request-id': 'q7'})
    server.queue(limited, limited)
    with model(server, delays, retry=RetryPolicy(max_retries=1)) as m, pytest.raises(RateLimitError) as info:
        m.call(Prompt.of('hi'))
    assert delays == [1.0]
    assert (info.value.status_code, info.value.retry_after, info.value.request_id) == (429, 1.0, 'q7')
    assert info.value.provider_message == 'rate limited'


def test_retry_after_beyond_the_cap_is_raised_at_once(server: ReplayServer) -> None:
    delays: list[float] = []
    server.queue(Reply(429, b'{}', headers={'Retry-After': '3600'}))
    with model(server, delays) as m, pytest.raises(RateLimitError) as info:
        m.call(Prompt.of('hi'))
    assert delays == [] and len(server.requests) == 1
    assert (info.value.status_code, info.value.retry_after) == (429, 3600.0)  # the caller can wait it out


@pytest.mark.parametrize(
    ('status', 'body', 'cls'),
    [
        (401, b'{"error": {"message": "Incorrect API key provided: sk-secret-key"}}', AuthenticationError),
        (403, b'{"error": {"message": "not allowed"}}', AuthenticationError),
        (400, b'{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}', ContextLengthError),
        (400, b'{"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}}', ContextLengthError),
        (404, b'{"error": {"message": "model not found"}}', BadRequestError),
        (400, b'{"error": {"message": "bad tool schema"}}', BadRequestError),
    ],
)
def test_status_maps_to_a_typed_error_without_retry(server: ReplayServer, status: int, body: bytes, cls: type) -> None:
    delays: list[float] = []
    server.queue(Reply(status, body, headers={'x-request-id': 'req_42'}))
    with model(server, delays) as m, pytest.raises(cls) as info:
        m.call(Prompt.of('hi'))
    assert delays == []
    error = info.value
    assert (error.status_code, error.request_id, error.provider) == (status, 'req_42', 'openai')
    assert 'req_42' in str(error)
    for text in (str(error), repr(error), error.body, error.provider_message):
        assert 'sk-secret-key' not in text


def test_key_never_in_repr_or_logs(server: ReplayServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level('DEBUG')
    server.queue(Reply(500, b'{"error": {"message": "echo sk-secret-key"}}'), Reply(body=COMPLETION))
    with model(server, []) as m:
        m.call(Prompt.of('hi'))
        assert 'sk-secret-key' not in repr(m) and 'sk-secret-key' not in repr(m.transport)
    assert 'retry 1 of 2' in caplog.text
    assert 'sk-secret-key' not in caplog.text


def test_connection_refused_is_retried_then_typed() -> None:
    server = ReplayServer()
    url = server.url
    server.stop()  # nothing listens there any more
    delays: list[float] = []
    m = OpenAIChatModel(base_url=url, api_key='', retry=RetryPolicy(max_retries=2, jitter=0.0))
    m.transport.sleep = delays.append
    with pytest.raises(ProviderConnectionError, match='cannot reach'):
        m.call(Prompt.of('hi'))
    assert delays == [0.5, 1.0]
    m.close()


def test_server_closes_mid_stream(server: ReplayServer) -> None:
    body = stream_body()
    server.queue(Reply(body=body, content_type='text/event-stream', close_after=body.index(b'\n\n', 900) + 2))
    with model(server, []) as m:
        seen, error = collect_until_error(m, Prompt.of('hi'))
    assert isinstance(error, IncompleteStreamError)
    text = ''.join(c.text for c in seen)
    assert text and error.partial_text == text
    assert not any(c.has_tool_calls() for c in seen)
    assert len(server.requests) == 1  # never retried once bytes reached the application


def test_stream_that_never_ends_hits_the_read_timeout(server: ReplayServer) -> None:
    body = stream_body()
    server.queue(Reply(body=body, content_type='text/event-stream', hang_after=body.index(b'\n\n', 900) + 2))
    with model(server, [], timeout=Timeouts(connect=5, read=0.3)) as m:
        seen, error = collect_until_error(m, Prompt.of('hi'))
    assert isinstance(error, ProviderTimeoutError)
    assert 'within 0.3 s' in str(error)
    assert error.partial_text == ''.join(c.text for c in seen) != ''
    assert len(server.requests) == 1


def test_total_timeout_bounds_a_trickling_stream(server: ReplayServer) -> None:
    server.queue(Reply(body=stream_body(), content_type='text/event-stream', hang_after=10**6, piece=1))
    with model(server, [], timeout=Timeouts(connect=5, read=5, total=0.5)) as m:
        _, error = collect_until_error(m, Prompt.of('hi'))
    assert isinstance(error, ProviderTimeoutError)


def test_invalid_json_in_one_event(server: ReplayServer) -> None:
    good = b'data: {"id":"x","choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
    bad = b'data: {"choices": [\n\n'
    server.queue(Reply(body=good + bad + b'data: [DONE]\n\n', content_type='text/event-stream'))
    with model(server, []) as m:
        seen, error = collect_until_error(m, Prompt.of('hi'))
    assert isinstance(error, ResponseFormatError)
    assert 'malformed stream' in str(error)
    assert [c.text for c in seen] == ['Hello'] and error.partial_text == 'Hello'


def test_error_event_in_a_200_stream(server: ReplayServer) -> None:
    body, want = load_stream('004-groq-gptoss-midstream-error-event')
    server.queue(Reply(body=body, content_type='text/event-stream', headers={'x-request-id': 'req_g'}, piece=64))
    with model(server, []) as m:
        seen, error = collect_until_error(m, Prompt.of('hi'))
    assert isinstance(error, ProviderStreamError)
    assert error.status_code == 200 and error.request_id == 'req_g'
    assert error.provider_message is not None and error.provider_message.startswith('Tool call validation failed')
    assert ''.join(c.generations[0].output.metadata['reasoning'] for c in seen) == want['reasoning']
    assert len(server.requests) == 1


def test_stream_status_error_is_retried_before_any_byte(server: ReplayServer) -> None:
    delays: list[float] = []
    server.queue(
        Reply(503, b'busy', headers={'Retry-After': '0'}), Reply(body=stream_body(), content_type='text/event-stream')
    )
    with model(server, delays) as m:
        chunks = collect(m, Prompt.of('hi'))
    assert ''.join(c.text for c in chunks) == 'It is 18 C in Paris. čp'
    assert delays == [0.0]


def test_borrowed_async_client_pools_connections(server: ReplayServer) -> None:
    import httpx

    server.queue(Reply(body=COMPLETION), Reply(body=COMPLETION))

    async def run() -> list[str]:
        async with httpx.AsyncClient() as client:
            m = OpenAIChatModel(base_url=server.url + '/v1', api_key='', async_http_client=client)
            texts = [(await m.acall(Prompt.of('hi'))).text for _ in range(2)]
            await m.aclose()
            assert not client.is_closed
            return texts

    assert asyncio.run(run()) == ['It is 24 C.', 'It is 24 C.']
