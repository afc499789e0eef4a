"""The models' pools do httpcore's bookkeeping in linear time, never handing one HTTP/1.1 connection to two requests.

``toolweave.providers._pool`` replaces httpcore 1.0's ``_assign_requests_to_connections`` on the pools
of the clients the models create: one expression, quadratic in the number of pooled connections,
becomes the number it computes; and on an HTTP/1.1 pool a connection already handed to a request is not
offered to another (httpcore offers it until the first request starts on it; the others then fail with
``ConnectionNotAvailable`` and are assigned again). Hypothesis differential tests run httpcore's own
method and the replacement on identical random pool states (closed, expired, idle, busy connections of
several origins; queued requests and requests holding a connection; limits hit or not) and require the
same connections closed, kept, created and assigned, in the same order: on an HTTP/2 pool the very
same states, on an HTTP/1.1 pool states whose connections turn busy once a request holds them (what
httpcore's retries end with). A pool under a burst of concurrent requests sends each exactly once.
The other tests check where it is installed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support.keepalive_server import Answer, KeepAliveServer
from toolweave.chat import Prompt
from toolweave.providers import OpenAIChatModel, _pool

ORIGINS = ('a', 'b')
BURST = 32


@dataclass
class FakeConnection:
    name: str
    origin: str
    closed: bool = False
    expired: bool = False
    idle: bool = False
    available: bool = False
    calls: list[str] = field(default_factory=list)

    def is_closed(self) -> bool:
        self.calls.append('is_closed')
        return self.closed

    def has_expired(self) -> bool:
        self.calls.append('has_expired')
        return self.expired

    def is_idle(self) -> bool:
        return self.idle

    def is_available(self) -> bool:
        return self.available

    def can_handle_request(self, origin: str) -> bool:
        return origin == self.origin


@dataclass
class FakeRequest:
    name: str
    origin: str
    connection: FakeConnection | None = None
    busy_when_held: bool = False  # the reference's HTTP/1.1 connection: busy once a request holds it

    @property
    def request(self) -> Any:
        return type('R', (), {'url': type('U', (), {'origin': self.origin})()})()

    @property
    def assigned(self) -> str | None:
        return None if self.connection is None else self.connection.name

    def is_queued(self) -> bool:
        return self.connection is None

    def assign_to_connection(self, connection: FakeConnection) -> None:
        self.connection = connection
        if self.busy_when_held:
            connection.available = connection.idle = False


connections = st.lists(
    st.tuples(st.sampled_from(ORIGINS), st.booleans(), st.booleans(), st.booleans(), st.booleans()), max_size=12
)
requests = st.lists(st.tuples(st.sampled_from(ORIGINS), st.none() | st.integers(0, 11)), max_size=6)
"""Each request: its origin and the index of the connection it holds (``None``, or no such connection: queued)."""


def _state(
    pool: Any, conns: list[tuple[str, bool, bool, bool, bool]], reqs: list[tuple[str, int | None]], busy: bool = False
) -> None:
    """``pool`` in the given state; ``busy``: the reference HTTP/1.1 pool whose held connections are busy."""
    pool._connections = [FakeConnection(f'c{i}', *spec) for i, spec in enumerate(conns)]
    pool._requests = []
    for i, (origin, held) in enumerate(reqs):
        connection = pool._connections[held] if held is not None and held < len(conns) else None
        if connection is not None and busy:
            connection.available = connection.idle = False
        pool._requests.append(FakeRequest(f'r{i}', origin, connection, busy))
    counter = itertools.count()
    pool.create_connection = lambda origin: FakeConnection(f'new{next(counter)}', origin, available=True)


def _outcome(pool: Any, closing: list[FakeConnection]) -> Any:
    return (
        [c.name for c in closing],
        [(c.name, c.origin) for c in pool._connections],
        [(r.name, r.assigned) for r in pool._requests],
        {c.name: c.calls for c in pool._connections + closing},
    )


@pytest.mark.parametrize('http2', [False, True], ids=['http1', 'http2'])
@pytest.mark.parametrize('pool_class', [httpcore.ConnectionPool, httpcore.AsyncConnectionPool])
@given(conns=connections, reqs=requests, max_connections=st.integers(1, 14), keepalive=st.integers(0, 12))
@example(conns=[('a', False, False, True, False)] * 3, reqs=[('a', None)], max_connections=3, keepalive=2)
@example(conns=[('a', False, False, True, False)] * 2, reqs=[('b', None)], max_connections=2, keepalive=2)
@example(  # a burst: three queued requests, two idle connections (httpcore gives all three the first)
    conns=[('a', False, False, True, True)] * 2, reqs=[('a', None)] * 3, max_connections=4, keepalive=4
)
@example(  # a connection handed to a request that has not started on it yet
    conns=[('a', False, False, True, True)], reqs=[('a', 0), ('a', None)], max_connections=1, keepalive=1
)
def test_bookkeeping_equals_httpcores(
    pool_class: Any, http2: bool, conns: Any, reqs: Any, max_connections: int, keepalive: int
) -> None:
    stock = pool_class(max_connections=max_connections, max_keepalive_connections=keepalive, http2=http2)
    linear = pool_class(max_connections=max_connections, max_keepalive_connections=keepalive, http2=http2)
    assert _pool.install(linear)
    _state(stock, conns, reqs, busy=not http2)
    _state(linear, conns, reqs)
    queued = {r.name for r in linear._requests if r.connection is None}
    expected = _outcome(stock, pool_class._assign_requests_to_connections(stock))
    outcome = _outcome(linear, linear._assign_requests_to_connections())
    assert outcome == expected
    if not http2:  # a queued request gets a connection no other request holds
        assigned = [held for name, held in outcome[2] if name in queued and held is not None]
        others = {held for name, held in outcome[2] if name not in queued}
        assert len(assigned) == len(set(assigned))
        assert not others & set(assigned)


def _answer(path: str, body: bytes) -> Answer:
    head = {'id': 'c1', 'object': 'chat.completion.chunk', 'model': 'm'}
    event = {**head, 'choices': [{'index': 0, 'delta': {'content': 'hi'}, 'finish_reason': 'stop'}]}
    return Answer([b'data: ' + json.dumps(event).encode() + b'\n\ndata: [DONE]\n\n'], first=0.05)


def test_a_burst_of_streams_is_assigned_once_per_request() -> None:
    """Bursts of 32 streams over idle keep-alive connections: each request is assigned a connection once.

    httpcore's own method offers the first idle connection to every request of a burst; all but one then
    fail with ``ConnectionNotAvailable`` and run the assignment again (here ~6 extra runs per request).
    With the replacement the pool runs it twice per request: when the request starts and when its
    response closes.
    """
    with KeepAliveServer(_answer) as server:
        model = OpenAIChatModel(base_url=server.url + '/v1', api_key='', model='m')
        runs = [0]

        async def one() -> str:
            return ''.join([c.text async for c in model.stream(Prompt.of('hi'))])

        async def run() -> None:
            pool = (await model._transport._aclient())._transport._pool  # type: ignore[attr-defined]
            assign = pool._assign_requests_to_connections

            def counted() -> list[Any]:
                runs[0] += 1
                return assign()  # type: ignore[no-any-return]

            pool._assign_requests_to_connections = counted
            for _ in range(3):
                assert await asyncio.gather(*(one() for _ in range(BURST))) == ['hi'] * BURST
            await model.aclose()

        asyncio.run(run())
        assert server.requests == 3 * BURST
        assert server.connections == BURST
        assert runs[0] == 2 * 3 * BURST


def test_the_models_clients_get_it_and_borrowed_clients_do_not() -> None:
    model = OpenAIChatModel(base_url='http://127.0.0.1:9/v1', api_key='k', model='m')
    owned = model._transport._new_async_client()
    assert owned._transport._pool._assign_requests_to_connections.__func__ is _pool._assign_requests_to_connections  # type: ignore[attr-defined]
    borrowed = httpx.AsyncClient()
    OpenAIChatModel(base_url='http://127.0.0.1:9/v1', api_key='k', model='m', async_http_client=borrowed)
    assert borrowed._transport._pool._assign_requests_to_connections.__func__ is (  # type: ignore[attr-defined]
        httpcore.AsyncConnectionPool._assign_requests_to_connections
    )


def test_another_httpcore_method_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    class Changed(httpcore.ConnectionPool):
        def _assign_requests_to_connections(self) -> list[Any]:  # an httpcore release that changed it
            return []

    pool = Changed()
    assert not _pool.install(pool)
    assert pool._assign_requests_to_connections.__func__ is Changed._assign_requests_to_connections  # type: ignore[attr-defined]
    assert not _pool.install(None)
    monkeypatch.setattr('inspect.getsource', lambda _: (_ for _ in ()).throw(OSError('no source')))
    assert not _pool.install(httpcore.ConnectionPool())


def test_a_full_pool_keeps_its_connections_under_more_requests_than_it_holds() -> None:
    """32 concurrent requests over a pool of 4: the 4 keep-alive connections serve them all.

    A connection handed to a request that has not started on it yet is idle; closing it as "an idle one"
    to make room for another queued request (the former behaviour) reconnected on almost every request
    (619 TCP connections for 640 requests; httpcore's own method: 4).
    """
    with KeepAliveServer(lambda path, body: Answer([b'ok'], first=0.005)) as server:

        async def run() -> None:
            limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
            async with httpx.AsyncClient(limits=limits) as client:
                assert _pool.install(client._transport._pool)  # type: ignore[attr-defined]

                async def one() -> None:
                    for _ in range(5):
                        assert (await client.get(server.url + '/')).status_code == 200

                await asyncio.wait_for(asyncio.gather(*(one() for _ in range(BURST))), 60)

        asyncio.run(run())
        assert server.requests == 5 * BURST
        assert server.connections == 4
