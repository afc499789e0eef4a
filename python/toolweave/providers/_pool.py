"""httpcore's connection-pool bookkeeping without its quadratic step, for the clients the models create.

Why: httpcore 1.0's pool runs ``_assign_requests_to_connections`` whenever a request starts or a
response closes, and for every idle connection it evaluates
``len([connection.is_idle() for connection in self._connections])``: one ``is_idle()`` call per pooled
connection per idle connection, twice per request. A streaming service keeping ~100 provider
connections open spends a fifth of its CPU there (benches/results/service.md; upstream: encode/httpcore
pull requests #929 and #1035, not merged). That expression is ``len(self._connections)`` (``is_idle()``
only reads state), so :func:`install` gives a pool the same method with that one expression replaced:
the same connections closed, kept and assigned, in the same order (tests/providers/test_providers_pool_linear.py
holds the two equal on random pool states).

It is installed only on a pool whose method is, line for line, the one it was copied from
(:data:`_STOCK`, httpcore 1.0.x); any other httpcore keeps its own method.
"""

from __future__ import annotations

import types
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
    list of one ``is_idle()`` per connection to take its length (the same number). Returns the
    connections to close, as httpcore's does.
    """
    closing_connections = []

    # First clean up connections that are closed, have expired their keep-alive, or are surplus idle ones.
    for connection in list(self._connections):
        if connection.is_closed():
            self._connections.remove(connection)
        elif (
            connection.has_expired()
            or connection.is_idle()
            and len(self._connections) > self._max_keepalive_connections
        ):
            self._connections.remove(connection)
            closing_connections.append(connection)

    # Assign queued requests to connections.
    queued_requests = [request for request in self._requests if request.is_queued()]
    for pool_request in queued_requests:
        origin = pool_request.request.url.origin
        available_connections = [
            connection
            for connection in self._connections
            if connection.can_handle_request(origin) and connection.is_available()
        ]
        idle_connections = [connection for connection in self._connections if connection.is_idle()]
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

    return closing_connections


def install(pool: Any) -> bool:
    """Give ``pool`` (an httpcore ``ConnectionPool``/``AsyncConnectionPool``) the linear bookkeeping.

    Returns whether it was installed: ``False`` (the pool untouched) when ``pool`` is not a pool or its
    class's method is not the httpcore 1.0 one this copies.
    """
    stock = getattr(type(pool), '_assign_requests_to_connections', None)
    if stock is None or _fingerprint(stock) != _STOCK:
        return False
    pool._assign_requests_to_connections = types.MethodType(_assign_requests_to_connections, pool)
    return True
