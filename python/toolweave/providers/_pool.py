"""httpcore's connection-pool bookkeeping without its quadratic step, for the clients the models create.

Why: httpcore 1.0's pool runs ``_assign_requests_to_connections`` whenever a request starts or a
response closes, and for every idle connection it evaluates
``len([connection.is_idle() for connection in self._connections])``: one ``is_idle()`` call per pooled
connection per idle connection, twice per request. A streaming service keeping ~100 provider
connections open spends a fifth of its CPU there (benches/results/service.md; upstream: encode/httpcore
pull requests #929 and #1035, not merged). That expression is ``len(self._connections)`` (``is_idle()``
only reads state), so :func:`install` gives a pool the same method with that one expression replaced.

A second change, for HTTP/1.1 pools (``http2=False``, the models' clients): httpcore offers an idle
connection to every queued request until one of them has *started* on it, so a burst of requests
(a service whose streams start their next round together) is assigned to one idle connection; all
but one fail inside httpcore with ``ConnectionNotAvailable`` and go round the assignment again (6 extra
rounds per request, a fifth of the service's CPU at 64 concurrent streams). Here a connection already
handed to a request is not offered to a second one, as if it turned busy on assignment, which is what
httpcore's retry ends with. The same connections are closed and kept, and each request gets a
connection no other request holds (tests/providers/test_providers_pool_linear.py: equal to httpcore's
method on random pool states whose connections turn busy when assigned).

It is installed only on a pool whose method is, line for line, the one it was copied from
(:data:`_STOCK`, httpcore 1.0.x); any other httpcore keeps its own method.
"""

from __future__ import annotations

import types
import weakref
from typing import Any

__all__ = ['install']

_STOCK = 'cd93738a7571125e61f9b790db3259cb5ffe87254f8c0d3e8cb23984978b2af5'
"""sha256 of the stock method's source after its ``def`` line (the same text in the sync and async pools)."""


def _fingerprint(method: Any) -> str | None:
    """sha256 of ``method``'s source after its first line, or ``None`` when the source cannot be read."""
    import hashlib
    import inspect

    try:
        source = inspect.getsource(method)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.split('\n', 1)[1].encode()).hexdigest()


def _assign_requests_to_connections(self: Any) -> list[Any]:
    """Httpcore 1.0's ``ConnectionPool._assign_requests_to_connections`` (BSD-3-Clause, Encode OSS Ltd.).

    Unchanged except that the surplus-idle test reads ``len(self._connections)`` where httpcore builds a
    list of one ``is_idle()`` per connection to take its length (the same number), and that on an
    HTTP/1.1 pool a connection held by a request (assigned, maybe not started yet) counts as busy: it is
    not offered to another queued request, nor closed as an idle one. Returns the connections to close,
    as httpcore's does.
    """
    closing_connections = []
    queued_requests = [request for request in self._requests if request.is_queued()]
    # HTTP/1.1 serves one request per connection: one handed to a request (maybe not started on it yet, so
    # still idle) counts as busy: never offered to another request, never closed as a surplus idle one
    # (closing it made the holder reconnect: a full pool under more requests than connections reconnected
    # on almost every request). Only looked for when a request is queued or an idle one may be surplus.
    held: set[int] = set()
    if not self._http2 and (queued_requests or len(self._connections) > self._max_keepalive_connections):
        held.update(id(request.connection) for request in self._requests if request.connection is not None)

    # First clean up connections that are closed, have expired their keep-alive, or are surplus idle ones.
    # (``self`` is a weak proxy, see install: the pool's attributes are read once, not once per connection.)
    connections, max_keepalive_connections = self._connections, self._max_keepalive_connections
    for connection in list(connections):
        if connection.is_closed():
            connections.remove(connection)
        elif (
            connection.has_expired()
            or id(connection) not in held
            and connection.is_idle()
            and len(connections) > max_keepalive_connections
        ):
            connections.remove(connection)
            closing_connections.append(connection)

    # Assign queued requests to connections.
    for pool_request in queued_requests:
        origin = pool_request.request.url.origin
        available_connections = [
            connection
            for connection in self._connections
            if connection.can_handle_request(origin) and connection.is_available() and id(connection) not in held
        ]
        idle_connections = [c for c in self._connections if c.is_idle() and id(c) not in held]
        # Reuse an available connection, else create one, else close an idle one and create one.
        if available_connections:
            connection = available_connections[0]
            pool_request.assign_to_connection(connection)
        elif len(self._connections) < self._max_connections:
            connection = self.create_connection(origin)
            self._connections.append(connection)
            pool_request.assign_to_connection(connection)
        elif idle_connections:
            connection = idle_connections[0]
            self._connections.remove(connection)
            closing_connections.append(connection)
            connection = self.create_connection(origin)
            self._connections.append(connection)
            pool_request.assign_to_connection(connection)
        if not self._http2 and pool_request.connection is not None:
            held.add(id(pool_request.connection))

    return closing_connections


def install(pool: Any) -> bool:
    """Give ``pool`` (an httpcore ``ConnectionPool``/``AsyncConnectionPool``) the linear bookkeeping.

    Returns whether it was installed: ``False`` (the pool untouched) when ``pool`` is not a pool or its
    class's method is not the httpcore 1.0 one this copies.
    """
    stock = getattr(type(pool), '_assign_requests_to_connections', None)
    if stock is None or _fingerprint(stock) != _STOCK:
        return False
    # bound to a weak proxy: a method bound to the pool itself, kept in the pool, is a reference cycle per pool
    # (one per event loop a model streams on: a sync stream's private loop makes one per request)
    pool._assign_requests_to_connections = types.MethodType(_assign_requests_to_connections, weakref.proxy(pool))
    return True
