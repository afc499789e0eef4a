"""Soak of the HTTP layer: randomised faults over many concurrent requests of every provider class.

``soak(seconds, seed)`` starts one loopback :class:`~http_faults.FaultServer` whose behaviour is
picked per request from the URL (``/<fault>/<provider>/...``), then runs worker threads until the time
is up. Each worker either makes one blocking ``call()`` or runs a batch of 1-4 concurrent ``acall()``
and ``stream()`` requests on one event loop; each request gets a random provider, a random total
timeout (0.5-2 s), a key with or without surrounding whitespace, and a random fault: trickled headers
or body, a server that never answers, a 200 or 500 body flooding past the limits, a connection reset
mid-body, the key echoed (whole, cut, URL-encoded, in an error event), a redirect, an answer missing
its field, a body that is not JSON, or a stream the consumer abandons after its first chunk.

Figures: ``requests``, ``faults_injected``, ``hung_calls`` (a request still running 15 s after its
deadline), ``over_deadline`` (finished later than total + 2 s), ``key_leaks`` (any 8-character run
of any spelling of the key in an error, its chain or a log record of any logger at DEBUG),
``untyped_errors`` (an exception that is not a ``ProviderError``), ``mismatches`` (a typed error
other than the fault calls for, or an abandoned stream whose connection stayed open over 1 s),
``unclosed_streams``, ``timeouts_under_load`` (a ProviderTimeoutError where the fault called for
another outcome: a short total on a loaded machine; typed and within the deadline, so not counted as a
mismatch) and ``peak_rss_mb``. Not collected by pytest (no ``test_`` prefix).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import random
import resource
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from http_faults import (
    ANSWERS,
    KEY,
    PROVIDERS,
    STREAM_END,
    STREAM_START,
    STREAM_TEXT_EVENT,
    Conn,
    FaultServer,
    Request,
    build_model,
    leak_windows,
    leaks,
    response_head,
    sse,
    stream_head,
)
from toolweave.chat import Prompt
from toolweave.exceptions import (
    AuthenticationError,
    IncompleteStreamError,
    ProviderConnectionError,
    ProviderError,
    ProviderRedirectError,
    ProviderStreamError,
    ProviderTimeoutError,
    ResponseFormatError,
    ResponseTooLargeError,
    ServerError,
)
from toolweave.providers import RetryPolicy, Timeouts

__all__ = ['soak']

LIMIT = 2 * 1024 * 1024
"""max_response_bytes of the soak's models (small, so a flood is cheap to detect)."""

PROMPT = Prompt.of('soak')

# fault -> modes it applies to, and the errors it may end in (None: it must succeed)
FAULTS: dict[str, tuple[tuple[str, ...], tuple[type[BaseException], ...] | None]] = {
    'ok': (('call', 'acall', 'stream'), None),
    'trickle_head': (('call', 'acall', 'stream'), (ProviderTimeoutError,)),
    'trickle_body': (('call', 'acall', 'stream'), (ProviderTimeoutError,)),
    'hang': (('call', 'acall', 'stream'), (ProviderTimeoutError,)),
    'flood': (('call', 'acall', 'stream'), (ResponseTooLargeError, ResponseFormatError, ProviderTimeoutError)),
    'flood_error': (('call', 'acall', 'stream'), (ServerError, ProviderTimeoutError)),
    'reset': (('call', 'acall', 'stream'), (ProviderConnectionError, IncompleteStreamError)),
    'echo_key': (('call', 'acall', 'stream'), (AuthenticationError,)),
    'echo_cut': (('call', 'acall', 'stream'), (AuthenticationError,)),
    'echo_url': (('call', 'acall', 'stream'), (AuthenticationError,)),
    'redirect': (('call', 'acall', 'stream'), (ProviderRedirectError,)),
    'missing_field': (('call', 'acall'), (ResponseFormatError,)),
    'not_json': (('call', 'acall'), (ResponseFormatError,)),
    'stream_error_event': (('stream',), (ProviderStreamError,)),
    'abandoned_stream': (('stream',), None),
}


def _stream_error(provider: str) -> bytes:
    if provider == 'ollama':
        return json.dumps({'error': f'bad key {KEY}'}).encode() + b'\n'
    if provider == 'responses':
        return sse([{'type': 'error', 'code': 'auth', 'message': f'key {KEY}'}], event_names=['error'])
    if provider == 'anthropic':
        return sse([{'type': 'error', 'error': {'type': 'auth', 'message': f'key {KEY}'}}], event_names=['error'])
    return sse([{'error': {'message': f'invalid key {KEY}', 'key': KEY}}])


def _reset(conn: Conn) -> None:
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    conn.sock.close()


def _serve(conn: Conn, request: Request | None) -> None:  # noqa: C901 - one branch per fault, read as a table
    assert request is not None
    _, fault, provider, *_ = request.path.split('/')
    stream = request.headers.get('accept', '') in ('text/event-stream', 'application/x-ndjson')
    head = stream_head(provider) if stream else response_head()
    good = STREAM_START.get(provider, b'') + STREAM_TEXT_EVENT[provider] + STREAM_END[provider]
    body = good if stream else ANSWERS[provider]
    if fault == 'ok':
        conn.send(head + body)
    elif fault == 'trickle_head':
        conn.trickle(head + body, 0.25)
    elif fault == 'trickle_body':
        conn.send(head)
        conn.trickle(body * 20, 0.25)
    elif fault == 'hang':
        conn.hold(30)
    elif fault in ('flood', 'flood_error'):
        conn.send(response_head(500 if fault == 'flood_error' else 200) + b'{"choices": [], "pad": "')
        conn.flood(64 * 1024 * 1024)
    elif fault == 'reset':
        conn.send(head + body[: len(body) // 2])
        _reset(conn)
    elif fault == 'echo_key':
        echoed = json.dumps({'error': {'message': f'bad key: {request.headers}'}}).encode()
        conn.send(response_head(401, length=len(echoed)) + echoed)
    elif fault == 'echo_cut':
        cut = b'x' * random.randrange(480, 500) + KEY.encode()
        conn.send(response_head(401, length=len(cut)) + cut)
    elif fault == 'echo_url':
        text = f'denied: key={quote(KEY, safe="")}'.encode()
        conn.send(response_head(401, length=len(text)) + text)
    elif fault == 'redirect':
        conn.send(response_head(307, {'Location': f'https://x.example/?key={quote(KEY, safe="")}'}, length=0))
    elif fault == 'missing_field':
        conn.send(response_head() + json.dumps({'id': 'x', KEY: 'echo'}).encode())
    elif fault == 'not_json':
        conn.send(response_head() + f'<html>{KEY}</html>'.encode())
    elif fault == 'stream_error_event':
        conn.send(head + STREAM_START.get(provider, b'') + _stream_error(provider))
    elif fault == 'abandoned_stream':
        conn.send(head + STREAM_START.get(provider, b''))
        while not conn.client_closed(0.02):
            conn.send(STREAM_TEXT_EVENT[provider])


@dataclass
class _Figures:
    lock: threading.Lock = field(default_factory=threading.Lock)
    counts: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)

    def add(self, name: str, amount: int = 1) -> None:
        with self.lock:
            self.counts[name] += amount


class _LogLeaks(logging.Handler):
    """Counts log records (any logger, DEBUG up) holding part of the key."""

    def __init__(self, figures: _Figures) -> None:
        super().__init__(logging.DEBUG)
        self.figures = figures
        self.windows = leak_windows(KEY)

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if any(w in text for w in self.windows):
            self.figures.add('key_leaks')


@dataclass
class _Job:
    fault: str
    provider: str
    mode: str
    total: float
    number: int = field(default_factory=lambda: next(_NUMBERS))


_NUMBERS = itertools.count()


def _pick(rng: random.Random) -> _Job:
    fault = rng.choice(list(FAULTS))
    mode = rng.choice(FAULTS[fault][0])
    return _Job(fault, rng.choice(PROVIDERS), mode, round(rng.uniform(0.5, 2.0), 2))


def _model(server: FaultServer, job: _Job, rng: random.Random) -> Any:
    key = rng.choice([KEY, f' {KEY}\n', f'\t{KEY}'])
    timeout = Timeouts(connect=30, read=60, write=60, pool=30, total=job.total)
    retry = RetryPolicy(max_retries=1, initial_delay=0.05)
    url = f'{server.url}/{job.fault}/{job.provider}/{job.number}'
    return build_model(job.provider, url, key=key, timeout=timeout, retry=retry, max_response_bytes=LIMIT)


async def _arun(model: Any, job: _Job) -> None:
    if job.mode == 'acall':
        await model.acall(PROMPT)
        return
    async with contextlib.aclosing(model.stream(PROMPT)) as chunks:
        async for _ in chunks:
            if job.fault == 'abandoned_stream':
                break


def _judge(job: _Job, error: BaseException | None, elapsed: float, figures: _Figures) -> None:
    figures.add('requests')
    figures.add('faults_injected', job.fault not in ('ok',))
    if elapsed > job.total + 2.0:
        figures.add('over_deadline')
    if error is None:
        if FAULTS[job.fault][1] is not None:
            figures.add('mismatches')
        return
    if not isinstance(error, ProviderError):
        figures.add('untyped_errors')
    expected = FAULTS[job.fault][1]
    if isinstance(error, ProviderTimeoutError) and (expected is None or ProviderTimeoutError not in expected):
        figures.add('timeouts_under_load')  # a short total on a loaded machine: typed and in time, not a fault
    elif expected is None or not isinstance(error, expected):
        figures.add('mismatches')
        with figures.lock:
            figures.kinds[f'{job.fault}/{job.mode}:{type(error).__name__}'] += 1
    if leaks(error, KEY):
        figures.add('key_leaks')


def _check_closed(server: FaultServer, job: _Job, stopped: float, figures: _Figures) -> None:
    """An abandoned stream's connection must be closed within 1 s of the consumer stopping."""
    prefix = f'/{job.fault}/{job.provider}/{job.number}/'
    conns = [c for c in list(server.connections) if c.request is not None and c.request.path.startswith(prefix)]
    if not conns or not conns[0].client_closed(1.0) or conns[0].closed_at[0] - stopped > 1.0:
        figures.add('unclosed_streams')
        figures.add('mismatches')


def _one_sync(server: FaultServer, job: _Job, rng: random.Random, figures: _Figures) -> None:
    model = _model(server, job, rng)
    started = time.monotonic()
    error: BaseException | None = None
    try:
        model.call(PROMPT)
    except Exception as exc:  # noqa: BLE001 - judged below
        error = exc
    _judge(job, error, time.monotonic() - started, figures)
    model.close()


def _async_batch(server: FaultServer, jobs: list[_Job], rng: random.Random, figures: _Figures) -> None:
    models = [_model(server, job, rng) for job in jobs]

    async def one(model: Any, job: _Job) -> None:
        started = time.monotonic()
        error: BaseException | None = None
        try:
            await _arun(model, job)
        except Exception as exc:  # noqa: BLE001 - judged below
            error = exc
        stopped = time.monotonic()
        _judge(job, error, stopped - started, figures)
        if job.fault == 'abandoned_stream' and error is None:
            await asyncio.to_thread(_check_closed, server, job, stopped, figures)

    async def batch() -> None:
        await asyncio.gather(*(one(m, j) for m, j in zip(models, jobs, strict=True)))

    asyncio.run(batch())
    for model in models:
        model.close()


def _worker(server: FaultServer, seed: int, until: float, figures: _Figures, busy: dict[int, float]) -> None:
    rng = random.Random(seed)
    me = threading.get_ident()
    while time.monotonic() < until:
        if rng.random() < 0.4:
            job = _pick(rng)
            while job.mode != 'call':
                job = _pick(rng)
            busy[me] = time.monotonic() + job.total
            _one_sync(server, job, rng, figures)
        else:
            jobs = [_pick(rng) for _ in range(rng.randint(1, 4))]
            jobs = [j if j.mode != 'call' else _Job(j.fault, j.provider, 'acall', j.total) for j in jobs]
            busy[me] = time.monotonic() + max(j.total for j in jobs)
            _async_batch(server, jobs, rng, figures)
    busy.pop(me, None)


def soak(seconds: float, seed: int) -> dict[str, float | int]:
    """Run the randomised HTTP faults for about ``seconds``; returns the figures (module docstring)."""
    figures = _Figures()
    handler = _LogLeaks(figures)
    root = logging.getLogger()
    loggers = [root, *(logging.getLogger(n) for n in ('httpx', 'httpcore', 'toolweave'))]
    levels = [logger.level for logger in loggers]
    root.addHandler(handler)
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    busy: dict[int, float] = {}
    try:
        with FaultServer(_serve) as server:
            until = time.monotonic() + seconds
            threads = [
                threading.Thread(target=_worker, args=(server, seed + i, until, figures, busy), daemon=True)
                for i in range(6)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(max(0.0, until - time.monotonic()) + 2.0 + 15.0)
            figures.add('hung_calls', sum(thread.is_alive() for thread in threads))
    finally:
        root.removeHandler(handler)
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
    result: dict[str, float | int] = {
        name: figures.counts.get(name, 0)
        for name in (
            'requests',
            'faults_injected',
            'hung_calls',
            'over_deadline',
            'key_leaks',
            'untyped_errors',
            'mismatches',
            'unclosed_streams',
            'timeouts_under_load',
        )
    }
    result['peak_rss_mb'] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if figures.kinds:
        print('soak_http mismatches:', dict(figures.kinds))
    return result


if __name__ == '__main__':
    import sys

    print(soak(float(sys.argv[1]) if len(sys.argv) > 1 else 20.0, int(sys.argv[2]) if len(sys.argv) > 2 else 1))
