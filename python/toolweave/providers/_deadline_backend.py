"""The deadline-aware httpcore network backend of :mod:`toolweave.providers._deadline` (loaded with the first client).

Each wrapped operation takes the smaller of its own timeout and the time left until the deadline of the
current request, and fails at once with httpcore's own timeout error once the deadline passed.

Reads and writes on asyncio (Python 3.11+): httpcore's anyio stream bounds each one with an anyio cancel
scope (``anyio.fail_after``), about three times the CPU of ``asyncio.timeout``, once per read of every
streamed body. Over an httpcore anyio stream on asyncio the wrapper calls the anyio byte stream itself
under ``asyncio.timeout`` and maps its errors as httpcore's stream does (:func:`_read`, :func:`_write`:
the same results and exception types, tests/providers/test_providers_deadline_stream.py).
"""

from __future__ import annotations

import asyncio
import ssl
import sys
import time
from collections.abc import Iterable
from typing import Any

import anyio
import httpcore
from httpcore._backends.anyio import AnyIOStream
from httpcore._utils import is_socket_readable

from toolweave.providers._deadline import _DEADLINE

_UNSET = object()
_NATIVE_TIMEOUT = sys.version_info >= (3, 11)
"""``asyncio.timeout`` exists (else every read and write goes through httpcore's stream)."""


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
        self._bytes: anyio.abc.ByteStream | None = _native_bytes(inner)
        """The anyio byte stream under ``inner`` when reads and writes may skip its cancel scopes, else ``None``."""

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        timeout = _cap(timeout, httpcore.ReadTimeout)
        if self._bytes is None:
            return await self._inner.read(max_bytes, timeout)
        return await _read(self._bytes, max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        timeout = _cap(timeout, httpcore.WriteTimeout)
        if self._bytes is None:
            await self._inner.write(buffer, timeout)
        elif buffer:
            await _write(self._bytes, buffer, timeout)

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


def _native_bytes(inner: httpcore.AsyncNetworkStream) -> anyio.abc.ByteStream | None:
    """The anyio byte stream of httpcore's anyio stream ``inner`` when this task runs on asyncio (3.11+), else ``None``."""
    if not _NATIVE_TIMEOUT or type(inner) is not AnyIOStream:
        return None
    try:  # as anyio itself tells asyncio without sniffio: trio, or no loop, has no running asyncio loop
        asyncio.get_running_loop()
    except RuntimeError:
        return None
    stream = getattr(inner, '_stream', None)
    return stream if isinstance(stream, anyio.abc.ByteStream) else None


async def _read(stream: anyio.abc.ByteStream, max_bytes: int, timeout: float | None) -> bytes:
    """As httpcore's ``AnyIOStream.read``, under ``asyncio.timeout``: ``b''`` at the end, else ``ReadTimeout``/``ReadError``."""
    try:
        async with asyncio.timeout(timeout):  # type: ignore[attr-defined,unused-ignore]
            try:
                return await stream.receive(max_bytes)
            except anyio.EndOfStream:
                return b''
    except TimeoutError as exc:
        raise httpcore.ReadTimeout(exc) from exc
    except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
        raise httpcore.ReadError(exc) from exc


async def _write(stream: anyio.abc.ByteStream, buffer: bytes, timeout: float | None) -> None:
    """As httpcore's ``AnyIOStream.write`` of a non-empty ``buffer``, under ``asyncio.timeout`` (``WriteTimeout``/``WriteError``)."""
    try:
        async with asyncio.timeout(timeout):  # type: ignore[attr-defined,unused-ignore]
            await stream.send(buffer)
    except TimeoutError as exc:
        raise httpcore.WriteTimeout(exc) from exc
    except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
        raise httpcore.WriteError(exc) from exc


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
