"""The deadline-aware httpcore network backend of :mod:`toolweave.providers._deadline` (loaded with the first client).

Each wrapped operation takes the smaller of its own timeout and the time left until the deadline of the
current request, and fails at once with httpcore's own timeout error once the deadline passed.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore
from httpcore._utils import is_socket_readable

from toolweave.providers._deadline import _DEADLINE

_UNSET = object()


def _cap(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` capped by the time left; raises ``error`` when none is left."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error('the total timeout passed')
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _cap(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _cap(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _cap(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        capped = _cap(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, capped, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        capped = _cap(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, capped, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _AsyncStream(httpcore.AsyncNetworkStream):
    """The async stream under the deadline; answers ``get_extra_info('is_readable')`` from its own socket.

    httpcore asks every pooled connection's stream ``is_readable`` whenever it hands out or takes back
    a connection (``has_expired``: an idle socket with data is one the server closed). anyio's answer
    builds its attribute table and calls ``getpeername`` each time; this one looks the raw socket up
    once and asks ``poll`` as httpcore's own ``is_socket_readable`` does (the same value: the same
    function on the same socket object). A stream that has no socket to give is asked as before.
    """

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: Any = _UNSET

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, _cap(timeout, httpcore.ReadTimeout))

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, _cap(timeout, httpcore.WriteTimeout))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        capped = _cap(timeout, httpcore.ConnectTimeout)
        return _AsyncStream(await self._inner.start_tls(ssl_context, server_hostname, capped))

    def get_extra_info(self, info: str) -> Any:
        if info == 'is_readable':
            if self._socket is _UNSET:
                self._socket = self._inner.get_extra_info('socket')
            if self._socket is not None:
                return is_socket_readable(self._socket)
        return self._inner.get_extra_info(info)


class _AsyncBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        capped = _cap(timeout, httpcore.ConnectTimeout)
        return _AsyncStream(await self._inner.connect_tcp(host, port, capped, local_address, socket_options))

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        capped = _cap(timeout, httpcore.ConnectTimeout)
        return _AsyncStream(await self._inner.connect_unix_socket(path, capped, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
