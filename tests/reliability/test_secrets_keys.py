"""API keys never leave, in any form, for every provider class.

The loopback servers echo the key back the ways real providers and proxies do: in a 401 JSON body
(JSON-escaped), URL-encoded in a text body or a Location header, cut at the excerpt boundary, in an
SSE error event, in a malformed event the stream core cuts to 60 characters, in a 200 body that is
not an answer. The key itself is spelled so its JSON and URL forms differ from the raw one. After each
request, every string reachable from the error (message, args, attributes, the ``__cause__`` and
``__context__`` chain), every log record of every logger at DEBUG (httpx and httpcore included),
every span attribute and event, and everything stored in chat memory is searched for any 8-character
run of any spelling of the key.
"""

from __future__ import annotations

import asyncio
import doctest
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest
from http_faults import (
    KEY,
    PROVIDERS,
    STREAM_START,
    Conn,
    FaultServer,
    Request,
    build_model,
    key_spellings,
    leaks,
    response_head,
    run,
    sse,
    stream_head,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolweave import ChatClient
from toolweave.advisors.memory import MessageChatMemoryAdvisor
from toolweave.exceptions import InvalidApiKeyError, ProviderError
from toolweave.memory import MessageWindowChatMemory
from toolweave.providers import RetryPolicy, Timeouts, _secrets

Behaviour = Callable[[Conn, Request | None], None]


def reply(status: int, body: bytes, content_type: str = 'application/json', **headers: str) -> Behaviour:
    def behaviour(conn: Conn, request: Request | None) -> None:
        conn.send(response_head(status, headers, content_type=content_type, length=len(body)) + body)

    return behaviour


def echo_headers(conn: Conn, request: Request | None) -> None:
    """401 with every request header echoed in a JSON body (JSON-escaped key) and in the message."""
    assert request is not None
    message = f'Incorrect API key provided: {request.headers}'
    body = json.dumps({'error': {'message': message, 'headers': request.headers, 'path': request.path}}).encode()
    conn.send(response_head(401, length=len(body)) + body)


def echo_cut(offset: int) -> Behaviour:
    """A text body where the key starts ``offset`` characters before the 500-character excerpt ends."""
    return reply(401, b'x' * (500 - offset) + KEY.encode() + b' trailing', 'text/plain')


def stream_error_event(provider: str) -> Behaviour:
    events = {
        'openai': sse([{'error': {'message': f'invalid key {KEY}', 'key': KEY}}]),
        'responses': sse([{'type': 'error', 'code': 'auth', 'message': f'invalid key {KEY}'}], event_names=['error']),
        'anthropic': sse(
            [{'type': 'error', 'error': {'type': 'authentication_error', 'message': f'invalid x-api-key {KEY}'}}],
            event_names=['error'],
        ),
        'gemini': sse([{'error': {'code': 400, 'message': f'API key not valid: {KEY}', 'details': [KEY]}}]),
        'ollama': json.dumps({'error': f'bad key {KEY}'}).encode() + b'\n',
    }

    def behaviour(conn: Conn, request: Request | None) -> None:
        conn.send(stream_head(provider) + STREAM_START.get(provider, b'') + events[provider])

    return behaviour


def malformed_event(provider: str, pad: int) -> Behaviour:
    """A stream event that is not JSON, with the key where the core's 60-character excerpt cuts it."""
    line = b'{"x": "' + b'p' * pad + KEY.encode() + b'" oops'
    data = line + b'\n' if provider == 'ollama' else b'data: ' + line + b'\n\n'

    def behaviour(conn: Conn, request: Request | None) -> None:
        conn.send(stream_head(provider) + data)

    return behaviour


ECHOES: dict[str, Behaviour] = {
    'headers-json-401': echo_headers,
    'json-escaped-400': reply(400, json.dumps({'error': {'message': f'bad key {KEY}'}, 'raw': KEY}).encode()),
    'slash-escaped-403': reply(403, json.dumps({'detail': KEY}).replace('/', '\\/').encode()),
    'url-encoded-401': reply(401, f'denied for key={quote(KEY, safe="")}'.encode(), 'text/plain'),
    'cut-at-8': echo_cut(8),
    'cut-at-3': echo_cut(3),
    'cut-at-30': echo_cut(30),
    'location-302': reply(302, b'', Location=f'https://elsewhere.example/v1?key={quote(KEY, safe="")}'),
    '200-not-json': reply(200, f'<html>proxy says: bad key {KEY}</html>'.encode(), 'text/html'),
    '200-error-object': reply(200, json.dumps({'error': {'message': f'key {KEY} revoked'}}).encode()),
    '200-key-as-field': reply(200, json.dumps({KEY: 1, 'id': 'x'}).encode()),
    '500-with-retries': reply(500, json.dumps({'error': {'message': f'upstream echoed {KEY}'}}).encode()),
}


@pytest.fixture
def logs() -> Iterator[list[logging.LogRecord]]:
    """Every record of every logger at DEBUG (httpx, httpcore, toolweave included)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.DEBUG)
    root = logging.getLogger()
    names = ['httpx', 'httpcore', 'toolweave', 'toolweave.providers', 'asyncio', 'h11']
    saved = [(root, root.level)] + [(logging.getLogger(n), logging.getLogger(n).level) for n in names]
    root.addHandler(handler)
    for logger, _ in saved:
        logger.setLevel(logging.DEBUG)
    try:
        yield records
    finally:
        root.removeHandler(handler)
        for logger, level in saved:
            logger.setLevel(level)


def log_leaks(records: list[logging.LogRecord]) -> list[str]:
    texts = []
    for record in records:
        texts.append(record.getMessage())
        if record.exc_info:
            texts.append(logging.Formatter().formatException(record.exc_info))
    return leaks(texts, KEY)


def failing_run(provider: str, behaviour: Behaviour, mode: str, **kwargs: Any) -> tuple[BaseException, FaultServer]:
    with FaultServer(behaviour) as server:
        kwargs.setdefault('retry', RetryPolicy(max_retries=1, initial_delay=0.01))
        model = build_model(provider, server.url, key=f'  {KEY}\n', **kwargs)  # a key read from a file
        with pytest.raises(ProviderError) as info:
            run(model, mode)
        assert leaks([repr(model), str(model), repr(model.transport), repr(model.transport.redact)], KEY) == []
        model.close()
    return info.value, server


@pytest.mark.parametrize('echo', ECHOES)
@pytest.mark.parametrize('provider', PROVIDERS)
def test_echoed_keys_never_leave_an_error(provider: str, echo: str, logs: list[logging.LogRecord]) -> None:
    error, server = failing_run(provider, ECHOES[echo], 'call')
    assert leaks(error, KEY) == []
    assert log_leaks(logs) == []
    sent = server.requests[0].headers
    assert KEY in (
        sent.get('authorization', '').removeprefix('Bearer '),
        sent.get('x-api-key'),
        sent.get('x-goog-api-key'),
    )
    assert all(KEY not in r.path and quote(KEY, safe='') not in r.path for r in server.requests)


@pytest.mark.parametrize('echo', ['headers-json-401', 'cut-at-8', 'location-302', '200-not-json'])
@pytest.mark.parametrize('mode', ['acall', 'stream'])
def test_echoed_keys_async_paths(mode: str, echo: str, logs: list[logging.LogRecord]) -> None:
    error, _ = failing_run('openai', ECHOES[echo], mode)
    assert leaks(error, KEY) == []
    assert log_leaks(logs) == []


@pytest.mark.parametrize('provider', PROVIDERS)
def test_a_key_in_a_stream_error_event(provider: str, logs: list[logging.LogRecord]) -> None:
    error, _ = failing_run(provider, stream_error_event(provider), 'stream')
    assert type(error).__name__ == 'ProviderStreamError'
    assert leaks(error, KEY) == []
    assert '***' in error.message
    assert log_leaks(logs) == []


@pytest.mark.parametrize('pad', [0, 20, 45, 50, 52, 55])
@pytest.mark.parametrize('provider', PROVIDERS)
def test_a_key_cut_by_the_stream_core(provider: str, pad: int) -> None:
    error, _ = failing_run(provider, malformed_event(provider, pad), 'stream')
    assert type(error).__name__ == 'ResponseFormatError'
    assert leaks(error, KEY) == []


def test_a_key_with_surrounding_whitespace_is_stripped_and_sent_clean() -> None:
    def ok(conn: Conn, request: Request | None) -> None:
        body = b'{"choices": [{"message": {"content": "hi"}}]}'
        conn.send(response_head(length=len(body)) + body)

    with FaultServer(ok) as server:
        model = build_model('openai', server.url, key=f'\t{KEY} \r\n')
        assert run(model, 'call').text == 'hi'
        model.close()
    assert server.requests[0].headers['authorization'] == f'Bearer {KEY}'


BAD_KEYS = {
    'non-ascii': KEY[:20] + 'é' + KEY[20:],
    'nul': KEY[:20] + '\x00' + KEY[20:],
    'inner-newline': KEY[:20] + '\n' + KEY[20:],
    'del': KEY + '\x7f',
    'emoji': KEY + '🔑',
}


@pytest.mark.parametrize('bad', BAD_KEYS)
@pytest.mark.parametrize('provider', PROVIDERS)
def test_keys_that_cannot_be_sent_are_rejected_without_echo(provider: str, bad: str, monkeypatch) -> None:
    with pytest.raises(InvalidApiKeyError) as info:
        build_model(provider, 'http://127.0.0.1:9', key=BAD_KEYS[bad])
    assert isinstance(info.value, ValueError)
    assert leaks(info.value, KEY) == []
    where = len(KEY) if bad in ('del', 'emoji') else 20  # the first character that cannot be sent
    assert f'at position {where} of {len(BAD_KEYS[bad])} ' in str(info.value)
    kind = 'a control character' if bad in ('nul', 'inner-newline', 'del') else 'a non-ASCII character'
    assert kind in str(info.value)
    env = {'openai': 'OPENAI_API_KEY', 'responses': 'OPENAI_API_KEY', 'anthropic': 'ANTHROPIC_API_KEY'}
    env |= {'gemini': 'GEMINI_API_KEY', 'ollama': 'OLLAMA_API_KEY'}
    if '\x00' in BAD_KEYS[bad]:
        return  # an environment variable cannot hold NUL
    monkeypatch.setenv(env[provider], BAD_KEYS[bad])
    with pytest.raises(InvalidApiKeyError) as from_env:
        build_model(provider, 'http://127.0.0.1:9', key=None)
    assert leaks(from_env.value, KEY) == []


def test_secret_extra_headers_are_checked_and_redacted(logs: list[logging.LogRecord]) -> None:
    with pytest.raises(InvalidApiKeyError) as info:
        build_model('openai', 'http://127.0.0.1:9', key=None, extra_headers={'api-key': KEY + 'é'})
    assert leaks(info.value, KEY) == []
    with pytest.raises(ValueError, match="'X-Trace'") as plain:
        build_model('openai', 'http://127.0.0.1:9', key=None, extra_headers={'X-Trace': 'é' + KEY})
    assert leaks(plain.value, KEY) == []
    error, _ = failing_run('openai', echo_headers, 'call', extra_headers={'Proxy-Authorization': f'Basic {KEY}'})
    assert leaks(error, KEY) == []
    assert log_leaks(logs) == []


def test_a_header_spoiled_after_construction_fails_before_sending_without_echo() -> None:
    model = build_model('anthropic', 'http://127.0.0.1:9')
    model._extra_headers['x-api-key'] = KEY + '\n'
    model._api_key = None
    with pytest.raises(InvalidApiKeyError) as info:
        run(model, 'call')
    assert leaks(info.value, KEY) == []
    model._extra_headers['x-api-key'] = KEY + 'é'
    with pytest.raises(InvalidApiKeyError) as again:
        asyncio.run(model.acall(__import__('toolweave').chat.Prompt.of('x')))
    assert leaks(again.value, KEY) == []


def test_gemini_never_puts_the_key_in_a_url() -> None:
    error, server = failing_run('gemini', echo_headers, 'call')
    assert leaks(error, KEY) == []
    assert server.requests  # the model did ask the server
    for request in server.requests:
        assert 'key=' not in request.path and request.headers['x-goog-api-key'] == KEY


@pytest.mark.parametrize('mode', ['call', 'stream'])
def test_spans_and_memory_hold_no_key(mode: str, monkeypatch, logs: list[logging.LogRecord]) -> None:
    import toolweave.advisors.tool_calling as loop_module
    import toolweave.tools.manager as manager_module

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = tracer_provider.get_tracer('toolweave')
    monkeypatch.setattr(loop_module, '_tracer', tracer)
    monkeypatch.setattr(manager_module, '_tracer', tracer)
    memory = MessageWindowChatMemory()

    def get_time() -> str:
        """The time."""
        return 'noon'

    with FaultServer(echo_headers) as server:
        model = build_model('openai', server.url, timeout=Timeouts(total=10))
        client = ChatClient.create(model)
        spec = client.prompt('hi').tools(get_time).advisors(MessageChatMemoryAdvisor(memory))
        with pytest.raises(ProviderError) as info:
            spec.call() if mode == 'call' else spec.stream().collect()
        model.close()
    assert leaks(info.value, KEY) == []
    spans = exporter.get_finished_spans()
    assert spans
    for span in spans:
        assert (
            leaks([dict(span.attributes or {}), [(e.name, dict(e.attributes or {})) for e in span.events]], KEY) == []
        )
    assert leaks(memory.get('default'), KEY) == []
    assert log_leaks(logs) == []


def test_the_redactor_catches_every_form() -> None:
    redact = _secrets.Redactor([f' {KEY}\n'])
    for form in key_spellings(KEY):
        assert leaks(redact(f'<{form}>'), KEY) == []
        assert leaks(redact(f'<{form[:9]}'), KEY) == []  # cut at the end
        assert leaks(redact(f'{form[-9:]}>'), KEY) == []  # cut at the start
        assert leaks(redact.cut(f'...{form[:4]}'), KEY) == []
    assert redact('nothing secret here') == 'nothing secret here'
    assert redact(f'a {KEY} b {KEY} c') == 'a *** b *** c'
    assert KEY not in repr(redact)
    assert doctest.testmod(_secrets).failed == 0


@settings(max_examples=300, deadline=None)
@given(
    start=st.integers(min_value=1, max_value=len(KEY) - 2),
    size=st.integers(min_value=_secrets.MIDDLE_MIN, max_value=len(KEY)),
    before=st.text(max_size=30),
    after=st.text(max_size=30),
)
def test_an_inner_slice_of_a_key_is_redacted(start: int, size: int, before: str, after: str) -> None:
    """A slice cut from the middle of the key (neither its start nor its end) is masked from MIDDLE_MIN on."""
    inner = KEY[start : min(start + size, len(KEY) - 1)]
    if len(inner) < _secrets.MIDDLE_MIN:
        return
    redacted = _secrets.Redactor([KEY])(before + inner + after)
    assert inner not in redacted
    assert '***' in redacted
    assert not any(KEY[i : i + _secrets.MIDDLE_MIN] in redacted for i in range(len(KEY) - _secrets.MIDDLE_MIN + 1))


def test_a_short_inner_slice_and_unrelated_text_stay() -> None:
    short = KEY[5 : 5 + _secrets.MIDDLE_MIN - 1]
    redact = _secrets.Redactor([KEY])
    assert redact(f'id={short}') == f'id={short}'
    assert redact('Incorrect API key provided.') == 'Incorrect API key provided.'
