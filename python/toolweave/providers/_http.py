"""The HTTP layer every provider shares: pooled httpx clients, timeouts, size limits, retries and typed errors.

Why one layer: retry and error rules are the part of a provider that is easiest to get subtly wrong
(retrying after text reached the user, leaking an API key into a log line), so they live in one
place and are tested once. The rules follow the OpenAI and Anthropic Python SDKs (``_base_client``):

- Retries: HTTP 408, 429 and 5xx (Anthropic's 529 included) and connection failures (connect error,
  connect timeout, connection closed before the status line) are retried up to
  :attr:`RetryPolicy.max_retries` times with exponential backoff and full jitter; a ``Retry-After``
  (seconds or HTTP date) or ``retry-after-ms`` header sets the wait instead, capped at
  :attr:`RetryPolicy.max_retry_after`. A stream is retried only until its status line arrived: once the
  body is being read nothing is retried, so no byte ever reaches the application twice.
- Timeouts: connect, read (each read), write and pool per request (httpx), and an optional total
  deadline (:attr:`Timeouts.total`) over everything: every attempt and the waits between them,
  connecting, sending, the response headers and the whole body, streamed or not. For the clients a
  model creates it holds on every socket operation (:mod:`toolweave.providers._deadline`), so a
  server that trickles a byte at a time fails with :class:`ProviderTimeoutError` at the deadline; a
  borrowed client gets each phase's timeout capped by the time left and its body checked between reads.
- Size: a non-streamed answer is read up to ``max_response_bytes`` (default
  :data:`DEFAULT_MAX_RESPONSE_BYTES`, 32 MiB, after content decoding), beyond which the connection is
  closed and :class:`ResponseTooLargeError` raised; an error body is read up to :data:`ERROR_BODY_LIMIT`
  and the rest never. (Streams are bounded per event and in total by the ``StreamAggregator``.)
- Errors: :func:`~toolweave.providers._errors.error_for_status` maps an HTTP answer to the typed
  :class:`ProviderError` hierarchy with status, provider message and request id; a redirect is a
  :class:`ProviderRedirectError` (not followed). Every form of every secret (:class:`~toolweave.providers._secrets.Redactor`) is replaced
  by ``***`` before an excerpt is cut; httpx exceptions are described in the message, never chained
  (they hold the request and its headers).
- Bodies: :func:`encode_json` is the one place a request body becomes bytes; a lone surrogate in any
  string (a tool result holding an undecodable file name) is sent as U+FFFD instead of failing.
"""

from __future__ import annotations

import functools
import json
import logging
import random
import ssl
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import AsyncExitStack, ExitStack, aclosing, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, cast

import httpx
import orjson

from toolweave._text import scrub_json
from toolweave.exceptions import (
    IncompleteStreamError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ResponseTooLargeError,
)
from toolweave.providers import _deadline
from toolweave.providers._errors import describe, error_for_status, request_id_of
from toolweave.providers._secrets import Redactor, redact_library_logs

if TYPE_CHECKING:
    import asyncio

__all__ = [
    'DEFAULT_MAX_RESPONSE_BYTES',
    'ERROR_BODY_LIMIT',
    'HttpSettings',
    'HttpSettingsArgs',
    'HttpTransport',
    'RetryPolicy',
    'Timeouts',
    'body_chunks',
    'decode_json',
    'encode_json',
]

_log = logging.getLogger('toolweave.providers')

DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""Default limit of a non-streamed answer, in bytes after content decoding."""

ERROR_BODY_LIMIT = 64 * 1024
"""Bytes of an error body read (for its message and excerpt); the rest is never read."""

_RETRY_STATUS = frozenset({408, 429})

LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
"""Connection limits of the clients the models create, as the OpenAI and Anthropic SDKs' ``DEFAULT_CONNECTION_LIMITS``
(httpx's own default keeps 20 idle connections: a service streaming more at once reconnects for every request)."""


def _tune(client: httpx.Client | httpx.AsyncClient) -> None:
    """Tune a client the models create (a borrowed client is never passed here).

    Under every transport: the total deadline on every socket operation (:mod:`~toolweave.providers._deadline`)
    and the pool bookkeeping without httpcore's quadratic step (:mod:`~toolweave.providers._pool`).
    """
    from toolweave.providers import _pool

    _deadline.install(client)
    for transport in (client._transport, *client._mounts.values()):
        _pool.install(getattr(transport, '_pool', None))


async def _asleep(seconds: float) -> None:
    """``asyncio.sleep``, imported when a retry first waits (importing a provider does not load asyncio)."""
    import asyncio

    await asyncio.sleep(seconds)


@dataclass(frozen=True)
class Timeouts:
    """Timeouts in seconds (``None`` = no limit for that phase); each must be a positive number.

    Attributes:
        connect: Establishing the TCP/TLS connection.
        read: Waiting for each piece of the answer (so a stream that stops sending fails after this).
        write: Sending each piece of the request.
        pool: Waiting for a free connection of the pool.
        total: Whole request: every attempt and the waits between them, connecting, sending, the response
            headers and the whole body (streamed or not). Exceeding it raises :class:`ProviderTimeoutError`.
    """

    connect: float | None = 10.0
    read: float | None = 60.0
    write: float | None = 60.0
    pool: float | None = 10.0
    total: float | None = None

    def __post_init__(self) -> None:
        for name in ('connect', 'read', 'write', 'pool', 'total'):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f'Timeouts.{name} must be a number of seconds or None, got {value!r}')
            if not value > 0:  # also rejects NaN
                raise ValueError(f'Timeouts.{name} must be a positive number of seconds or None, got {value!r}')

    @classmethod
    def of(cls, value: float | Timeouts) -> Timeouts:
        """``value`` itself, or one number used for connect, read, write and pool (no total).

        Raises:
            TypeError: not a number or a :class:`Timeouts`. ValueError: not a positive number.
        """
        if isinstance(value, Timeouts):
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f'timeout must be a number of seconds or a Timeouts, got {value!r}')
        return cls(value, value, value, value, None)

    def httpx(self, remaining: float | None = None) -> httpx.Timeout:
        """The httpx timeout, each phase capped by ``remaining`` seconds of the total."""

        def cap(value: float | None) -> float | None:
            if remaining is None:
                return value
            return remaining if value is None else min(value, remaining)

        return httpx.Timeout(connect=cap(self.connect), read=cap(self.read), write=cap(self.write), pool=cap(self.pool))


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before retrying (as the OpenAI/Anthropic SDKs: 2 retries, 0.5 s doubling).

    Attributes:
        max_retries: Retries after the first attempt (0 = never retry).
        initial_delay: Seconds before the first retry, before jitter.
        multiplier: Growth of the delay per retry.
        max_delay: Cap of the computed delay.
        jitter: Fraction of the delay drawn at random (1.0 = full jitter: uniform in ``[0, delay]``).
        max_retry_after: A ``Retry-After`` above this many seconds is not waited for: the error is raised.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 8.0
    jitter: float = 0.25
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based); ``retry_after`` wins when given."""
        if retry_after is not None:
            return max(0.0, retry_after)
        base = min(self.max_delay, self.initial_delay * self.multiplier**attempt)
        return base * (1.0 - self.jitter * random.random())


@dataclass(frozen=True)
class HttpSettings:
    """How an HTTP model reaches its provider: one object that every provider takes (``settings=``).

    Every field can also be passed to a provider as a keyword of the same name (``base_url=``,
    ``api_key=``, ...), which wins over the object's field. The key is never shown in the repr.

    Attributes:
        base_url: API root (``None``: the provider's default).
        api_key: The key; ``None`` reads the provider's environment variables; ``''`` sends none (a
            local OpenAI-compatible server). Surrounding whitespace is stripped; a control or
            non-ASCII character raises :class:`~toolweave.exceptions.InvalidApiKeyError`. The key never
            appears in reprs, logs or errors, in any form.
        timeout: Seconds for each phase (connect, each read, write, pool) or a :class:`Timeouts`
            (``total`` bounds the whole request).
        retry: Retry policy (default: 2 retries, 0.5 s doubling, ``Retry-After`` honoured).
        extra_headers: Added to every request; values of secret-looking headers (``Authorization``,
            ``*-key``, ``*token*``, ...) are redacted like the key.
        http_client: Borrowed blocking client (never closed by the model).
        async_http_client: Borrowed async client (never closed by the model; one loop only).
        max_response_bytes: Largest non-streamed answer read, in bytes after content decoding.
    """

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float | Timeouts = 60.0
    retry: RetryPolicy | None = None
    extra_headers: Mapping[str, str] | None = None
    http_client: httpx.Client | None = None
    async_http_client: httpx.AsyncClient | None = None
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES


class HttpSettingsArgs(TypedDict, total=False):
    """The fields of :class:`HttpSettings` as keyword arguments of a provider (``**connection``)."""

    base_url: str | None
    api_key: str | None
    timeout: float | Timeouts
    retry: RetryPolicy | None
    extra_headers: Mapping[str, str] | None
    http_client: httpx.Client | None
    async_http_client: httpx.AsyncClient | None
    max_response_bytes: int


def decode_json(text: str) -> Any:
    r"""``text`` (tool-call arguments or a tool result held as JSON text) parsed back into a value.

    orjson first; a text it refuses only because of a lone surrogate (raw, or a ``\udcff`` escape) is
    parsed by the standard library instead, so the value is kept and :func:`encode_json` later sends
    U+FFFD in its place, rather than the value being dropped.

    Raises:
        ValueError: ``text`` is not JSON.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if 'surrogate' not in str(exc):
            raise
    return json.loads(text)


def encode_json(body: Any) -> bytes:
    """``body`` as JSON bytes; strings holding lone surrogates are sent with U+FFFD in their place.

    The one place request bodies are encoded: orjson first (fast path), and only when it refuses a
    string (``str is not valid UTF-8``) the body is copied through :func:`toolweave._text.scrub_json`.

    Raises:
        TypeError: A value orjson cannot serialise (not a lone-surrogate problem).
    """
    try:
        return orjson.dumps(body)
    except TypeError:
        return orjson.dumps(scrub_json(body))


def body_chunks(response: httpx.Response) -> aclosing[AsyncGenerator[bytes, None]]:
    """``response.aiter_bytes()`` closed on leaving the ``async with`` (even when the reader stops early)."""
    return aclosing(cast('AsyncGenerator[bytes, None]', response.aiter_bytes()))


def _retryable_status(status: int) -> bool:
    return status in _RETRY_STATUS or status >= 500


def _retryable_exception(exc: httpx.HTTPError) -> bool:
    # A read timeout may mean the server is still working on a non-idempotent request: not retried.
    return isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.RemoteProtocolError))


@dataclass
class _Attempt:
    """The outcome of one attempt: an answer (``error`` is ``None``), or an error and whether to retry it."""

    response: httpx.Response | None = None
    body: bytes = b''
    error: ProviderError | None = None
    retryable: bool = False

    @property
    def ok(self) -> bool:
        """Whether this is an answer to hand on (no error)."""
        return self.error is None and self.response is not None


class _Retrying:
    """The one retry loop's state and decision, shared by the blocking, async and streaming shells.

    Each shell only runs an attempt and sleeps: ``while not (result := attempt()).ok: sleep(retrying.after(result))``.
    """

    def __init__(self, transport: HttpTransport, url: str) -> None:
        self._transport = transport
        self._url = url
        self.deadline = transport._deadline()
        """The ``time.monotonic()`` value the whole request must finish by (``None``: no total timeout)."""
        self._attempt = 0

    def after(self, result: _Attempt) -> float:
        """Seconds to wait before the next attempt after the failed ``result``.

        Raises:
            ProviderError: ``result``'s error when it must not be retried (not retryable, retries used up,
                a ``Retry-After`` beyond the cap, or the wait would pass the total deadline).
        """
        delay = self._transport._wait(self._attempt, result, self.deadline)
        if delay is None:
            raise self._error_of(result)
        self._attempt += 1
        return delay

    def _error_of(self, result: _Attempt) -> ProviderError:
        """The error to raise for ``result``, taken out of it.

        Taken out: ``result`` stays in a local of this frame and the shell's, both of which the raised error's
        traceback holds (a reference cycle per failed request, left to the garbage collector).
        """
        error, result.error = result.error, None
        return error or self._transport._total_timeout(self._url)


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The default verifying TLS context of httpx (certifi roots, ``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured), built once.

    Building one costs about 40 ms of CPU (loading the CA bundle); every client this package creates
    shares it, so a new client (one per event loop, see :class:`_LoopClients`) costs about 1 ms.
    """
    return httpx.create_ssl_context()


async def _closed_at_shutdown(client: httpx.AsyncClient, forget: Callable[[], None]) -> AsyncGenerator[None, None]:
    """Held at its one ``yield`` while the loop runs; the loop's ``shutdown_asyncgens()`` closes ``client``.

    Started inside the loop, the generator is registered by asyncio's async-generator hooks, and the loop
    closes every live one when it shuts down (``asyncio.run`` does, as does the sync stream's private loop).
    """
    try:
        yield
    finally:
        forget()
        await client.aclose()


class _LoopClients:
    """One pooled ``httpx.AsyncClient`` per event loop, closed with the loop or by :meth:`aclose`/:meth:`close`.

    An ``AsyncClient`` holds sockets and locks bound to the loop that used it, so it must never serve
    another loop (``asyncio.run`` twice, a sync stream's private loop, threads with their own loops).
    Keying by the running loop keeps the connection reuse of a shared client inside one loop and that
    safety across loops; the TLS context is shared (:func:`shared_ssl_context`), so a new loop's client is cheap.
    """

    def __init__(self, make: Callable[[], httpx.AsyncClient]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._entries: dict[asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self) -> httpx.AsyncClient:
        """The running loop's client, made (and registered for closing at the loop's shutdown) on first use."""
        import asyncio  # not at import: importing a provider does not load asyncio (issue #14)

        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._entries.get(loop)
            if entry is not None and not entry[0].is_closed:
                return entry[0]
            for other in [other for other in self._entries if other.is_closed()]:
                del self._entries[other]  # a loop closed without shutdown_asyncgens(): nothing left to run on
            client = self._make()
            closer = _closed_at_shutdown(client, functools.partial(self._forget, loop, client))
            self._entries[loop] = (client, closer)
        await anext(closer)  # no await inside before the yield: never suspends
        return client

    def _forget(self, loop: asyncio.AbstractEventLoop, client: httpx.AsyncClient) -> None:
        with self._lock:
            entry = self._entries.get(loop)
            if entry is not None and entry[0] is client:
                del self._entries[loop]

    def _take(self) -> list[tuple[asyncio.AbstractEventLoop, AsyncGenerator[None, None]]]:
        with self._lock:
            taken = [(loop, closer) for loop, (_, closer) in self._entries.items()]
            self._entries.clear()
        return taken

    async def aclose(self) -> None:
        """Close the running loop's client now and schedule the others' closing on their own loops."""
        import asyncio

        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        for loop, closer in self._take():
            if loop is current:
                await closer.aclose()
            else:
                _close_on(loop, closer)

    def close(self) -> None:
        """Schedule every client's closing on its own loop (a stopped loop closes it at its shutdown)."""
        for loop, closer in self._take():
            _close_on(loop, closer)


def _close_on(loop: asyncio.AbstractEventLoop, closer: AsyncGenerator[None, None]) -> None:
    """Run ``closer.aclose()`` on ``loop`` if it is running; a stopped loop closes it at its own shutdown."""
    import asyncio

    if loop.is_running() and not loop.is_closed():
        asyncio.run_coroutine_threadsafe(closer.aclose(), loop)


class _Body:
    """A body read up to its limit, the total deadline checked between reads.

    A 2xx body longer than ``max_response_bytes`` raises :class:`ResponseTooLargeError` (a declared
    ``Content-Length`` above it before anything is read); an error body keeps its first
    :data:`ERROR_BODY_LIMIT` bytes and :meth:`add` returns ``False`` to stop reading there.
    """

    def __init__(self, transport: HttpTransport, response: httpx.Response, deadline: float | None) -> None:
        self._transport = transport
        self._response = response
        self._deadline = deadline
        self._strict = response.is_success
        self._limit = transport.max_response_bytes if self._strict else ERROR_BODY_LIMIT
        self._data = bytearray()
        declared = response.headers.get('content-length', '')
        if self._strict and declared.isdigit() and int(declared) > self._limit:
            raise self._too_large(f'declares {int(declared)} bytes')

    @property
    def data(self) -> bytes:
        """What was read."""
        return bytes(self._data)

    def _too_large(self, what: str) -> ResponseTooLargeError:
        url = self._transport.redact(str(self._response.request.url))
        error = ResponseTooLargeError(
            f'the answer of {url} {what}, more than max_response_bytes={self._limit}; reading stopped there',
            status_code=self._response.status_code,
            provider=self._transport.provider,
            request_id=request_id_of(self._response.headers),
        )
        error.limit = self._limit
        return error

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Wraps the reads: a 2xx body cut short raises the httpx error; an error body keeps what arrived.

        (For an error body the status already says what failed.)
        """
        try:
            yield
        except httpx.HTTPError:
            if self._strict:
                raise

    def add(self, chunk: bytes) -> bool:
        """Keep ``chunk``; ``False`` when an error body reached its limit (stop reading).

        Raises:
            ResponseTooLargeError: A 2xx body passed ``max_response_bytes``.
            ProviderTimeoutError: The total deadline passed.
        """
        room = self._limit - len(self._data)
        if len(chunk) > room:
            if self._strict:
                raise self._too_large('is longer')
            self._data += chunk[:room]
            return False
        self._data += chunk
        self._transport.check_deadline(self._deadline, str(self._response.request.url))
        return True


class HttpTransport:
    """Pooled httpx clients plus the retry, timeout, size and error rules of the module docstring.

    One transport per model. Clients passed in are borrowed (never closed). The clients the transport
    creates pool their connections: one blocking client per model, and one ``AsyncClient`` per event
    loop (an async client is bound to the loop that used it, so a model used from several loops,
    ``asyncio.run`` twice or the sync streams' private loops, gets one per loop and never shares one
    across loops). The blocking client is closed by :meth:`close`; an async client by :meth:`aclose`
    (the running loop's at once, other loops' on their own loop) or when its loop shuts down
    (``asyncio.run`` and the sync streams do that; a hand-run loop by ``loop.shutdown_asyncgens()``).
    They share one TLS context (:func:`shared_ssl_context`). The total deadline holds on every socket
    operation of the clients the transport creates; a borrowed client gets the per-phase caps and the
    between-read checks.

    Args:
        provider: Provider name stored on errors.
        timeout: One number of seconds for every phase, or :class:`Timeouts`.
        retry: The retry policy (``RetryPolicy(max_retries=0)`` disables retries).
        secrets: Strings never to show in errors, in any form (the API key, secret header values).
        http_client: Borrowed blocking client.
        async_http_client: Borrowed async client.
        max_response_bytes: Largest non-streamed answer read, in bytes after content decoding.

    Raises:
        ValueError: ``max_response_bytes`` is not a positive integer.
    """

    def __init__(
        self,
        provider: str,
        *,
        timeout: float | Timeouts = 60.0,
        retry: RetryPolicy | None = None,
        secrets: Iterable[str] = (),
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if isinstance(max_response_bytes, bool) or not isinstance(max_response_bytes, int) or max_response_bytes < 1:
            raise ValueError(f'max_response_bytes must be a positive int, got {max_response_bytes!r}')
        self.provider = provider
        self.timeouts = Timeouts.of(timeout)
        self.retry = retry or RetryPolicy()
        self.max_response_bytes = max_response_bytes
        self.redact = Redactor(secrets)
        """Replaces every form of the secrets by ``***`` (a callable ``str -> str``)."""
        redact_library_logs(self.redact)
        self._client = http_client
        self._owns_client = http_client is None
        self._client_lock = threading.Lock()
        self._async_client = async_http_client
        self._loop_clients = _LoopClients(self._new_async_client)
        self.sleep: Callable[[float], None] = time.sleep
        """Blocking sleep between retries (tests replace it to record the delays)."""
        self.asleep: Callable[[float], Any] = _asleep
        """Async sleep between retries (tests replace it to record the delays)."""

    def __repr__(self) -> str:
        return f'HttpTransport(provider={self.provider!r}, timeouts={self.timeouts!r}, retry={self.retry!r})'

    # --- clients ---------------------------------------------------------------------------------

    def _sync_client(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeouts.httpx(), verify=shared_ssl_context(), limits=LIMITS)
                _tune(self._client)
            return self._client

    def _new_async_client(self) -> httpx.AsyncClient:
        client = httpx.AsyncClient(timeout=self.timeouts.httpx(), verify=shared_ssl_context(), limits=LIMITS)
        _tune(client)
        return client

    async def _aclient(self) -> httpx.AsyncClient:
        """The borrowed async client, or the running loop's pooled one (:class:`_LoopClients`)."""
        if self._async_client is not None:
            return self._async_client
        return await self._loop_clients.get()

    def close(self) -> None:
        """Close the blocking client if the transport created it; async ones on their loops (idempotent)."""
        with self._client_lock:
            if self._owns_client and self._client is not None:
                self._client.close()
                self._client = None
        self._loop_clients.close()

    async def aclose(self) -> None:
        """Close every client the transport created: the running loop's now, others' on their own loop."""
        with self._client_lock:
            if self._owns_client and self._client is not None:
                self._client.close()
                self._client = None
        await self._loop_clients.aclose()

    # --- deadlines and errors --------------------------------------------------------------------

    def _deadline(self) -> float | None:
        total = self.timeouts.total
        return None if total is None else time.monotonic() + total

    def _total_timeout(self, url: str, what: str = 'no answer from') -> ProviderTimeoutError:
        return ProviderTimeoutError(
            f'{what} {self.redact(url)} within the total timeout of {self.timeouts.total:g} s',
            provider=self.provider,
        )

    def check_deadline(self, deadline: float | None, url: str, what: str = 'no answer from') -> None:
        """Raise :class:`ProviderTimeoutError` when ``deadline`` (``time.monotonic()``) has passed."""
        if deadline is not None and time.monotonic() >= deadline:
            raise self._total_timeout(url, what)

    def _timeout(self, deadline: float | None, url: str) -> httpx.Timeout:
        if deadline is None:
            return self.timeouts.httpx()
        self.check_deadline(deadline, url)
        return self.timeouts.httpx(deadline - time.monotonic())

    def status_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        """The typed, redacted error of a non-2xx answer."""
        return error_for_status(response, body, provider=self.provider, redact=self.redact)

    def transport_error(self, url: str, exc: httpx.HTTPError, deadline: float | None = None) -> ProviderError:
        """The typed, redacted error of an httpx exception (a timeout past ``deadline`` names the total)."""
        url = self.redact(url)
        reason = self.redact(describe(exc))
        if isinstance(exc, httpx.TimeoutException):
            if deadline is not None and time.monotonic() >= deadline - 0.01:
                limit = f'within the total timeout of {self.timeouts.total:g} s '
            else:
                seconds = {httpx.ReadTimeout: self.timeouts.read, httpx.WriteTimeout: self.timeouts.write}.get(
                    type(exc), self.timeouts.connect
                )
                limit = f'within {seconds:g} s ' if seconds is not None else ''
            return ProviderTimeoutError(f'no answer from {url} {limit}({reason})', provider=self.provider)
        if isinstance(exc, httpx.ConnectError):
            return ProviderConnectionError(f'cannot reach {url}: {reason}', provider=self.provider)
        return ProviderConnectionError(f'request to {url} failed: {reason}', provider=self.provider)

    def _failure(self, url: str, exc: httpx.HTTPError, deadline: float | None) -> _Attempt:
        return _Attempt(error=self.transport_error(url, exc, deadline), retryable=_retryable_exception(exc))

    def _answer(self, response: httpx.Response, body: bytes) -> _Attempt:
        if response.is_success:
            return _Attempt(response, body)
        return _Attempt(response, body, self.status_error(response, body), _retryable_status(response.status_code))

    def _wait(self, attempt: int, result: _Attempt, deadline: float | None) -> float | None:
        """Seconds to wait before retrying after ``result``, or ``None`` when its error must be raised."""
        error = result.error
        if error is None or not result.retryable or attempt >= self.retry.max_retries:
            return None
        retry_after = error.retry_after
        if retry_after is not None and retry_after > self.retry.max_retry_after:
            return None
        delay = self.retry.delay(attempt, retry_after)
        if deadline is not None and time.monotonic() + delay >= deadline:
            return None
        _log.warning(
            '%s request failed (%s); retry %d of %d in %.2f s',
            self.provider,
            error.status_code or type(error).__name__,
            attempt + 1,
            self.retry.max_retries,
            delay,
        )
        return delay

    # --- requests --------------------------------------------------------------------------------

    def _attempt(self, url: str, content: bytes, headers: Mapping[str, str], deadline: float | None) -> _Attempt:
        """One blocking attempt: the answer with its body read (bounded), or the error."""
        with ExitStack() as stack:
            result = self._open_sync(stack, url, content, headers, deadline)
            if not result.ok:
                return result
            return self._read_sync(cast('httpx.Response', result.response), url, deadline)

    def _read_sync(self, response: httpx.Response, url: str, deadline: float | None) -> _Attempt:
        """Blocking form of :meth:`_aread`."""
        body = _Body(self, response, deadline)
        try:
            with body.reading():
                for chunk in response.iter_bytes():
                    if not body.add(chunk):
                        break
        except httpx.HTTPError as exc:
            return self._failure(url, exc, deadline)
        return self._answer(response, body.data)

    async def _aread(self, response: httpx.Response, url: str, deadline: float | None) -> _Attempt:
        """The async form of :meth:`_attempt`'s reading: the (bounded) body of ``response``, or the error."""
        body = _Body(self, response, deadline)
        try:
            with body.reading():
                async with body_chunks(response) as chunks:
                    async for chunk in chunks:
                        if not body.add(chunk):
                            break
        except httpx.HTTPError as exc:
            return self._failure(url, exc, deadline)
        return self._answer(response, body.data)

    async def _aattempt(self, url: str, content: bytes, headers: Mapping[str, str], deadline: float | None) -> _Attempt:
        """One async attempt: the answer with its body read (bounded), or the error."""
        async with AsyncExitStack() as stack:
            result = await self._open(stack, url, content, headers, deadline)
            if result.error is not None or result.response is None:
                return result
            return await self._aread(result.response, url, deadline)

    def post(self, url: str, content: bytes, headers: Mapping[str, str]) -> tuple[httpx.Response, bytes]:
        """POST and return a 2xx answer and its body (at most ``max_response_bytes``), retrying as documented.

        Raises:
            ProviderError: The typed error of the last attempt (:class:`ProviderTimeoutError` when the
                total deadline passed, :class:`ResponseTooLargeError` past the size limit).
        """
        retrying = _Retrying(self, url)
        with _deadline.scope(retrying.deadline):
            while not (result := self._attempt(url, content, headers, retrying.deadline)).ok:
                self.sleep(retrying.after(result))
        return cast('httpx.Response', result.response), result.body

    async def apost(self, url: str, content: bytes, headers: Mapping[str, str]) -> tuple[httpx.Response, bytes]:
        """Async form of :meth:`post`."""
        retrying = _Retrying(self, url)
        with _deadline.scope(retrying.deadline):
            while not (result := await self._aattempt(url, content, headers, retrying.deadline)).ok:
                await self.asleep(retrying.after(result))
        return cast('httpx.Response', result.response), result.body

    async def _open(
        self, stack: AsyncExitStack, url: str, content: bytes, headers: Mapping[str, str], deadline: float | None
    ) -> _Attempt:
        """Send; the 2xx response with its body unread (closed with ``stack``), or the error (body read)."""
        with _deadline.scope(deadline):
            timeout = self._timeout(deadline, url)
            try:
                client = await self._aclient()
                request = client.build_request('POST', url, content=content, headers=dict(headers), timeout=timeout)
                response = await client.send(request, stream=True)
            except httpx.HTTPError as exc:
                return self._failure(url, exc, deadline)
            stack.push_async_callback(response.aclose)
            return _Attempt(response) if response.is_success else await self._aread(response, url, deadline)

    def open_stream(self, url: str, content: bytes, headers: Mapping[str, str]) -> OpenStream:
        """POST; ``async with`` gives ``(response, deadline)`` once a 2xx status line arrived (body not read).

        Retries (status, connection failure) happen only on entering, before any body byte was read;
        the caller reads the body with :meth:`next_chunk`. ``deadline`` is the ``time.monotonic()``
        value the whole body must arrive by (``None`` = no total timeout). Leaving the block closes
        the response and the connection (also when the caller stops early).

        Raises:
            ProviderError: On entering: the typed error of the last attempt.
        """
        return OpenStream(self, url, content, headers)

    async def next_chunk(self, chunks: AsyncIterator[bytes], deadline: float | None, url: str) -> bytes | None:
        """The next piece of a streamed body (``None`` at its end), read under the total deadline.

        Raises:
            ProviderTimeoutError: The read or the total timeout passed.
            IncompleteStreamError: The connection broke off.
        """
        self.check_deadline(deadline, url, 'stream not finished from')
        try:
            with _deadline.scope(deadline):
                return await anext(chunks)
        except StopAsyncIteration:
            return None
        except httpx.HTTPError as exc:
            raise self._read_error(url, exc, deadline)  # noqa: B904 - typed and redacted, the httpx one holds headers

    def next_chunk_sync(self, chunks: Iterator[bytes], deadline: float | None, url: str) -> bytes | None:
        """Blocking form of :meth:`next_chunk`."""
        self.check_deadline(deadline, url, 'stream not finished from')
        try:
            with _deadline.scope(deadline):
                return next(chunks)
        except StopIteration:
            return None
        except httpx.HTTPError as exc:
            raise self._read_error(url, exc, deadline)  # noqa: B904 - typed and redacted, the httpx one holds headers

    def _read_error(self, url: str, exc: httpx.HTTPError, deadline: float | None) -> ProviderError:
        """The typed error of a failed read of a streamed body."""
        if isinstance(exc, httpx.TimeoutException):
            return self.transport_error(url, exc, deadline)
        return IncompleteStreamError(
            f'stream from {self.redact(url)} broke off: {self.redact(describe(exc))}; the partial answer '
            'was yielded, its tool calls are not returned',
            provider=self.provider,
        )

    @contextmanager
    def open_stream_sync(
        self, url: str, content: bytes, headers: Mapping[str, str]
    ) -> Iterator[tuple[httpx.Response, float | None]]:
        """Blocking form of :meth:`open_stream` (a ``with`` block), over the pooled blocking client."""
        retrying = _Retrying(self, url)
        while True:
            stack = ExitStack()
            with stack:
                result = self._open_sync(stack, url, content, headers, retrying.deadline)
                if result.ok:
                    yield cast('httpx.Response', result.response), retrying.deadline
                    return
            self.sleep(retrying.after(result))

    def _open_sync(
        self, stack: ExitStack, url: str, content: bytes, headers: Mapping[str, str], deadline: float | None
    ) -> _Attempt:
        """Blocking form of :meth:`_open`."""
        with _deadline.scope(deadline):
            timeout = self._timeout(deadline, url)
            client = self._sync_client()
            try:
                request = client.build_request('POST', url, content=content, headers=dict(headers), timeout=timeout)
                response = client.send(request, stream=True)
            except httpx.HTTPError as exc:
                return self._failure(url, exc, deadline)
            stack.callback(response.close)
            return _Attempt(response) if response.is_success else self._read_sync(response, url, deadline)


class OpenStream:
    """The ``async with`` of :meth:`HttpTransport.open_stream`.

    A class with an ``AsyncExitStack`` rather than an ``asynccontextmanager``: a stream abandoned without
    ``aclose()`` is closed by the event loop's finaliser, and an async generator inside it would race the
    loop's own ``shutdown_asyncgens()`` ("asynchronous generator is already running") at exit.
    """

    def __init__(self, transport: HttpTransport, url: str, content: bytes, headers: Mapping[str, str]) -> None:
        self._transport = transport
        self._request = (url, content, headers)
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> tuple[httpx.Response, float | None]:
        retrying = _Retrying(self._transport, self._request[0])
        while not (result := await self._open(retrying.deadline)).ok:
            await self._transport.asleep(retrying.after(result))
        return cast('httpx.Response', result.response), retrying.deadline

    async def _open(self, deadline: float | None) -> _Attempt:
        """One attempt; on an error (or when interrupted) what it opened is closed before returning."""
        try:
            result = await self._transport._open(self._stack, *self._request, deadline)
        except BaseException:
            await self._stack.aclose()
            raise
        if not result.ok:
            await self._stack.aclose()
        return result

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()
