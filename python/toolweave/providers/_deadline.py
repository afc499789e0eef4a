"""A total deadline over every socket operation of a request: connect, TLS, write, headers, body.

Why here: httpx bounds each phase separately (connect, each read, each write, pool wait) but has no
overall deadline, so a server that sends a byte every 0.25 s keeps a request alive forever, headers
included. The fix lives at the one place every byte passes through: httpcore's network backend.
:func:`install` wraps the backend of the clients the models create; each wrapped operation takes
the smaller of its own timeout and the time left until the deadline of the current request (a
``ContextVar`` set by :func:`scope`), and fails at once with httpcore's own timeout error once the
deadline passed. httpcore then closes the connection and httpx raises its usual ``ConnectTimeout``,
``ReadTimeout`` or ``WriteTimeout``. One mechanism serves blocking and async requests alike: the
variable is per thread and per task, and set only while that request's own I/O runs.

The wrapping backend (:mod:`toolweave.providers._deadline_backend`) subclasses httpcore's, so it loads
with the first client a model creates, not with this module (importing a provider does not load httpcore).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ['install', 'scope']

_DEADLINE: ContextVar[float | None] = ContextVar('toolweave_http_deadline', default=None)


class scope:
    """Run the block under ``deadline`` (a ``time.monotonic()`` value; ``None``: no deadline).

    Must not span a ``yield`` of an async generator (the variable belongs to the running task).
    A class rather than a ``@contextmanager`` generator: it wraps every read of a stream.
    """

    __slots__ = ('_deadline', '_token')

    def __init__(self, deadline: float | None) -> None:
        self._deadline = deadline

    def __enter__(self) -> None:
        self._token = _DEADLINE.set(self._deadline)

    def __exit__(self, *exc_info: object) -> None:
        _DEADLINE.reset(self._token)


def install(client: httpx.Client | httpx.AsyncClient) -> bool:
    """Put the deadline-aware backend under every transport of a client this package created.

    httpx does not take a network backend, so this reaches into the connection pool of each
    ``HTTPTransport``/``AsyncHTTPTransport`` (the default one and any proxy mounts) before the
    first request. Returns whether every transport got it (``tests/reliability`` checks it, so an
    httpx release that moves the attribute fails a test instead of silently losing the deadline).
    """
    import httpcore

    from toolweave.providers._deadline_backend import _AsyncBackend, _Backend

    transports = [client._transport, *client._mounts.values()]
    installed = True
    for transport in transports:
        pool = getattr(transport, '_pool', None)
        backend = getattr(pool, '_network_backend', None)
        if isinstance(backend, _Backend | _AsyncBackend):
            continue
        if isinstance(backend, httpcore.NetworkBackend):
            pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
        elif isinstance(backend, httpcore.AsyncNetworkBackend):
            pool._network_backend = _AsyncBackend(backend)  # type: ignore[union-attr]
        elif transport is not None:
            installed = False
    return installed
