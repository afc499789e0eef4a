"""``Timeouts(total=...)`` holds in every phase, in call(), acall() and stream(), for every provider class.

Each attack is a loopback server that never lets a per-phase timeout fire: a connect that hangs (a
listener whose accept queue is full), a server that never answers, status line and headers sent one
byte every 0.25 s, a body (whole or streamed) sent one byte every 0.25 s. The read timeout is 60 s,
so only the total deadline can end the request: it must fail with ProviderTimeoutError within the
total plus a small margin.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from http_faults import (
    ANSWERS,
    PROVIDERS,
    STREAM_START,
    STREAM_TEXT_EVENT,
    Conn,
    FaultServer,
    Request,
    build_model,
    full_backlog,
    response_head,
    run,
    stream_head,
)
from toolweave.exceptions import ProviderTimeoutError, ServerError
from toolweave.providers import RetryPolicy, Timeouts, _deadline

TOTAL = 1.0
MARGIN = 2.0
MODES = ('call', 'acall', 'stream')


def timeouts(total: float = TOTAL) -> Timeouts:
    return Timeouts(connect=30, read=60, write=60, pool=30, total=total)


def silent(conn: Conn, request: Request | None) -> None:
    conn.hold(30)


def trickle_head(provider: str, mode: str) -> Callable[[Conn, Request | None], None]:
    def behaviour(conn: Conn, request: Request | None) -> None:
        head = stream_head(provider) if mode == 'stream' else response_head(length=len(ANSWERS[provider]))
        conn.trickle(head, 0.25)

    return behaviour


def trickle_body(provider: str, mode: str) -> Callable[[Conn, Request | None], None]:
    def behaviour(conn: Conn, request: Request | None) -> None:
        if mode == 'stream':
            conn.send(stream_head(provider) + STREAM_START.get(provider, b''))
            conn.trickle(STREAM_TEXT_EVENT[provider] * 50, 0.25)
        else:
            body = ANSWERS[provider]
            conn.send(response_head(length=len(body)))
            conn.trickle(body, 0.25)

    return behaviour


def assert_total_timeout(provider: str, url: str, mode: str, total: float = TOTAL, **kwargs: Any) -> None:
    model = build_model(provider, url, timeout=timeouts(total), **kwargs)
    started = time.monotonic()
    with pytest.raises(ProviderTimeoutError) as info:
        run(model, mode)
    elapsed = time.monotonic() - started
    model.close()
    assert elapsed < total + MARGIN, f'{provider} {mode} took {elapsed:.2f} s with total={total}'
    assert 'total timeout' in str(info.value)


@pytest.mark.parametrize('mode', MODES)
def test_connect_that_hangs(mode: str) -> None:
    with full_backlog() as url:
        assert_total_timeout('openai', url, mode)


@pytest.mark.parametrize('mode', MODES)
def test_server_that_never_answers(mode: str) -> None:
    with FaultServer(silent) as server:
        assert_total_timeout('openai', server.url, mode)


@pytest.mark.parametrize('mode', MODES)
def test_headers_one_byte_every_quarter_second(mode: str) -> None:
    with FaultServer(trickle_head('openai', mode)) as server:
        assert_total_timeout('openai', server.url, mode)


@pytest.mark.parametrize('mode', MODES)
def test_body_one_byte_every_quarter_second(mode: str) -> None:
    with FaultServer(trickle_body('openai', mode)) as server:
        assert_total_timeout('openai', server.url, mode)


@pytest.mark.parametrize('provider', [p for p in PROVIDERS if p != 'openai'])
@pytest.mark.parametrize(('mode', 'phase'), [('call', trickle_head), ('stream', trickle_body)])
def test_every_provider_class(provider: str, mode: str, phase: Callable[..., Any]) -> None:
    with FaultServer(phase(provider, mode)) as server:
        assert_total_timeout(provider, server.url, mode)


@pytest.mark.parametrize('mode', MODES)
def test_retries_stop_at_the_total(mode: str) -> None:
    """A server that answers 503 with Retry-After: 1 forever: the retries end before the deadline."""

    def unavailable(conn: Conn, request: Request | None) -> None:
        body = b'{"error": {"message": "busy"}}'
        conn.send(response_head(503, {'Retry-After': '1'}, length=len(body)) + body)

    with FaultServer(unavailable) as server:
        model = build_model('openai', server.url, timeout=timeouts(2.5), retry=RetryPolicy(max_retries=50))
        started = time.monotonic()
        with pytest.raises(ServerError, match='failed with HTTP 503: busy'):
            run(model, mode)
        assert time.monotonic() - started < 2.5 + MARGIN
        model.close()
        assert 2 <= len(server.requests) <= 3


def test_borrowed_clients_keep_their_backend_and_owned_ones_get_the_deadline() -> None:
    """The deadline is installed on the clients the transport creates (guards against an httpx change)."""
    for client in (httpx.Client(), httpx.AsyncClient()):
        assert _deadline.install(client)
        assert type(client._transport._pool._network_backend).__name__ in ('_Backend', '_AsyncBackend')
    model = build_model('openai', 'http://127.0.0.1:9')
    borrowed = httpx.Client()
    other = build_model('openai', 'http://127.0.0.1:9', http_client=borrowed)
    assert type(model.transport._sync_client()._transport._pool._network_backend).__name__ == '_Backend'
    assert type(borrowed._transport._pool._network_backend).__name__ == 'SyncBackend'
    other.close()
    model.close()
    borrowed.close()


def test_a_fast_answer_under_a_total_is_unaffected() -> None:
    def answer(conn: Conn, request: Request | None) -> None:
        conn.send(response_head(length=len(ANSWERS['openai'])) + ANSWERS['openai'])

    with FaultServer(answer) as server:
        model = build_model('openai', server.url, timeout=timeouts(5))
        for mode in ('call', 'acall'):
            assert run(model, mode).text == 'hi'
        model.close()
