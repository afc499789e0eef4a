"""The models' pools do httpcore's bookkeeping in linear time, with exactly httpcore's result.

``toolweave.providers._pool`` replaces httpcore 1.0's ``_assign_requests_to_connections`` on the pools
of the clients the models create (one expression, quadratic in the number of pooled connections,
becomes the number it computes). A hypothesis differential test runs httpcore's own method and the
replacement on identical random pool states (closed, expired, idle, busy connections of several
origins; queued and assigned requests; limits hit or not) and requires the same connections closed,
kept, created and assigned, in the same order. The other tests check where it is installed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from toolweave.providers import OpenAIChatModel, _pool

ORIGINS = ('a', 'b')


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
    queued: bool
    assigned: str | None = None

    @property
    def request(self) -> Any:
        return type('R', (), {'url': type('U', (), {'origin': self.origin})()})()

    def is_queued(self) -> bool:
        return self.queued

    def assign_to_connection(self, connection: FakeConnection) -> None:
        self.assigned = connection.name


connections = st.lists(
    st.tuples(st.sampled_from(ORIGINS), st.booleans(), st.booleans(), st.booleans(), st.booleans()), max_size=12
)
requests = st.lists(st.tuples(st.sampled_from(ORIGINS), st.booleans()), max_size=6)


def _state(pool: Any, conns: list[tuple[str, bool, bool, bool, bool]], reqs: list[tuple[str, bool]]) -> None:
    pool._connections = [FakeConnection(f'c{i}', *spec) for i, spec in enumerate(conns)]
    pool._requests = [FakeRequest(f'r{i}', *spec) for i, spec in enumerate(reqs)]
    counter = itertools.count()
    pool.create_connection = lambda origin: FakeConnection(f'new{next(counter)}', origin, available=True)


def _outcome(pool: Any, closing: list[FakeConnection]) -> Any:
    return (
        [c.name for c in closing],
        [(c.name, c.origin) for c in pool._connections],
        [(r.name, r.assigned) for r in pool._requests],
        {c.name: c.calls for c in pool._connections + closing},
    )


@pytest.mark.parametrize('pool_class', [httpcore.ConnectionPool, httpcore.AsyncConnectionPool])
@given(conns=connections, reqs=requests, max_connections=st.integers(1, 14), keepalive=st.integers(0, 12))
@example(conns=[('a', False, False, True, False)] * 3, reqs=[('a', True)], max_connections=3, keepalive=2)
@example(conns=[('a', False, False, True, False)] * 2, reqs=[('b', True)], max_connections=2, keepalive=2)
def test_linear_bookkeeping_equals_httpcores(
    pool_class: Any, conns: Any, reqs: Any, max_connections: int, keepalive: int
) -> None:
    stock = pool_class(max_connections=max_connections, max_keepalive_connections=keepalive)
    linear = pool_class(max_connections=max_connections, max_keepalive_connections=keepalive)
    assert _pool.install(linear)
    _state(stock, conns, reqs)
    _state(linear, conns, reqs)
    expected = _outcome(stock, pool_class._assign_requests_to_connections(stock))
    assert _outcome(linear, linear._assign_requests_to_connections()) == expected


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
