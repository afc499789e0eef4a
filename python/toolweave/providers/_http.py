"""The HTTP layer every provider shares: pooled httpx clients, timeouts, retries and typed errors.

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
  deadline over all attempts and, for streams, over the whole body.
- Errors: :func:`error_for_status` maps an HTTP answer to the typed :class:`ProviderError` hierarchy
  with status, provider message and request id; every secret (API keys) is replaced by ``***`` in
  messages and body excerpts.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from toolweave.exceptions import (
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)

__all__ = [
    'HttpTransport',
    'RetryPolicy',
    'Timeouts',
    'error_for_status',
    'provider_error_message',
    'redact',
]

_log = logging.getLogger('toolweave.providers')

EXCERPT = 500
"""Characters of a response body kept on an error."""

_RETRY_STATUS = frozenset({408, 429})
_REQUEST_ID_HEADERS = ('x-request-id', 'request-id', 'x-goog-request-id', 'openai-request-id', 'cf-ray')
_CONTEXT_RE = re.compile(
    r'context[ _-]?length|context window|maximum context|prompt is too long|too many tokens|'
    r'input token count|exceeds? the (?:model|maximum)|request too large|reduce the length',
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Timeouts:
    """Timeouts in seconds (``None`` = no limit for that phase).

    Attributes:
        connect: Establishing the TCP/TLS connection.
        read: Waiting for each piece of the answer (so a stream that stops sending fails after this).
        write: Sending each piece of the request.
        pool: Waiting for a free connection of the pool.
        total: Whole request, all retries and (for streams) the whole body included.
    """

    connect: float | None = 10.0
    read: float | None = 60.0
    write: float | None = 60.0
    pool: float | None = 10.0
    total: float | None = None

    @classmethod
    def of(cls, value: float | Timeouts) -> Timeouts:
        """``value`` itself, or one number used for connect, read, write and pool (no total)."""
        if isinstance(value, Timeouts):
            return value
        seconds = float(value)
        return cls(seconds, seconds, seconds, seconds, None)

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


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every non-empty secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, '***')
    return text


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """``retry-after-ms`` (milliseconds) or ``Retry-After`` (seconds or an HTTP date) in seconds."""
    millis = headers.get('retry-after-ms')
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get('retry-after')
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def provider_error_message(body: bytes) -> str | None:
    """The human message inside an error body, if it has one.

    Understands ``{'error': {'message': ...}}`` (OpenAI, Anthropic, Gemini, llama.cpp, vLLM),
    ``{'error': '...'}`` (Ollama), ``{'message': ...}``, ``{'detail': ...}`` and a one-element list of
    those (Gemini sometimes); returns ``None`` for anything else.
    """
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, Mapping):
        return None
    error = data.get('error')
    if isinstance(error, Mapping) and isinstance(error.get('message'), str):
        return str(error['message'])
    for candidate in (error, data.get('message'), data.get('detail')):
        if isinstance(candidate, str) and candidate:
            return candidate
    return None


def request_id_of(headers: httpx.Headers | None) -> str | None:
    """The provider's request id from the response headers, if any."""
    if headers is None:
        return None
    for name in _REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return str(value)
    return None


def _error_class(status: int, provider_message: str | None, body: str) -> type[ProviderError]:
    if status in (401, 403):
        return AuthenticationError
    if status == 429:
        return RateLimitError
    if status in (400, 413, 422) and _CONTEXT_RE.search(provider_message or body):
        return ContextLengthError
    if 400 <= status < 500:
        return BadRequestError
    return ServerError


def error_for_status(
    response: httpx.Response, body: bytes, *, provider: str, secrets: Iterable[str] = ()
) -> ProviderError:
    """The typed error for a non-2xx answer (status, provider message, request id; secrets redacted).

    Args:
        response: The answer (its request gives method and URL).
        body: The body read so far.
        provider: Provider name stored on the error.
        secrets: Strings to redact (API keys).
    """
    secrets = tuple(secrets)
    text = redact(body[:EXCERPT].decode('utf-8', 'replace'), secrets)
    message = provider_error_message(body)
    provider_message = redact(message, secrets) if message is not None else None
    detail = provider_message or text or response.reason_phrase
    url = redact(str(response.request.url), secrets)
    request_id = request_id_of(response.headers)
    suffix = f' (request id {request_id})' if request_id else ''
    cls = _error_class(response.status_code, provider_message, text)
    error = cls(
        f'{response.request.method} {url} failed with HTTP {response.status_code}: {detail}{suffix}',
        status_code=response.status_code,
        body=text,
        provider_message=provider_message,
        request_id=request_id,
        provider=provider,
    )
    error.retry_after = retry_after_seconds(response.headers)
    return error


def transport_error(url: str, exc: httpx.HTTPError, timeout: float | None, provider: str) -> ProviderError:
    """The typed error for an httpx exception raised before any answer (or while reading it)."""
    reason = f'{type(exc).__name__}: {exc}' if str(exc) else type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        limit = f'within {timeout:g} s ' if timeout is not None else ''
        return ProviderTimeoutError(f'no answer from {url} {limit}({reason})', provider=provider)
    if isinstance(exc, httpx.ConnectError):
        return ProviderConnectionError(f'cannot reach {url}: {reason}', provider=provider)
    return ProviderConnectionError(f'request to {url} failed: {reason}', provider=provider)


def _retryable_status(status: int) -> bool:
    return status in _RETRY_STATUS or status >= 500


def _retryable_exception(exc: httpx.HTTPError) -> bool:
    # A read timeout may mean the server is still working on a non-idempotent request: not retried.
    return isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.RemoteProtocolError))


class HttpTransport:
    """Pooled httpx clients plus the retry, timeout and error rules of the module docstring.

    One transport per model. Clients passed in are borrowed (never closed); the blocking client the
    transport creates is kept for connection reuse (one pool per model) and closed by :meth:`close`.
    Without a borrowed async client each async request uses its own short-lived ``AsyncClient``: an
    async client is bound to the event loop that made it, so this keeps the model usable from several
    loops (``asyncio.run`` twice) without leaking sockets. Pass ``async_http_client`` to pool
    connections across async requests.

    Args:
        provider: Provider name stored on errors.
        timeout: One number of seconds for every phase, or :class:`Timeouts`.
        retry: The retry policy (``RetryPolicy(max_retries=0)`` disables retries).
        secrets: Strings never to show in errors (the API key).
        http_client: Borrowed blocking client.
        async_http_client: Borrowed async client.
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
    ) -> None:
        self.provider = provider
        self.timeouts = Timeouts.of(timeout)
        self.retry = retry or RetryPolicy()
        self._secrets = tuple(s for s in secrets if s)
        self._client = http_client
        self._owns_client = http_client is None
        self._async_client = async_http_client
        self.sleep: Callable[[float], None] = time.sleep
        """Blocking sleep between retries (tests replace it to record the delays)."""
        self.asleep: Callable[[float], Any] = asyncio.sleep
        """Async sleep between retries (tests replace it to record the delays)."""

    def __repr__(self) -> str:
        return f'HttpTransport(provider={self.provider!r}, timeouts={self.timeouts!r}, retry={self.retry!r})'

    # --- clients ---------------------------------------------------------------------------------

    def _sync_client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeouts.httpx())
        return self._client

    @asynccontextmanager
    async def _aclient(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._async_client is not None:
            yield self._async_client
            return
        async with httpx.AsyncClient(timeout=self.timeouts.httpx()) as client:
            yield client

    def close(self) -> None:
        """Close the blocking client if the transport created it (idempotent)."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        """Close what the transport created (async clients are per request, so only the blocking one)."""
        self.close()

    # --- helpers ---------------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with the secrets replaced by ``***``."""
        return redact(text, self._secrets)

    def _deadline(self) -> float | None:
        total = self.timeouts.total
        return None if total is None else time.monotonic() + total

    def _remaining(self, deadline: float | None, url: str) -> float | None:
        if deadline is None:
            return None
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ProviderTimeoutError(
                f'no answer from {self.redact(url)} within the total timeout of {self.timeouts.total:g} s',
                provider=self.provider,
            )
        return remaining

    def status_error(self, response: httpx.Response, body: bytes) -> ProviderError:
        """The typed, redacted error of a non-2xx answer."""
        return error_for_status(response, body, provider=self.provider, secrets=self._secrets)

    def transport_error(self, url: str, exc: httpx.HTTPError) -> ProviderError:
        """The typed, redacted error of an httpx exception."""
        timeout = self.timeouts.read if isinstance(exc, httpx.ReadTimeout) else self.timeouts.connect
        if isinstance(exc, httpx.WriteTimeout):
            timeout = self.timeouts.write
        error = transport_error(self.redact(url), exc, timeout, self.provider)
        error.message = self.redact(error.message)
        error.args = (error.message,)
        return error

    def _wait(self, attempt: int, error: ProviderError, deadline: float | None) -> float | None:
        """Seconds to wait before retrying after ``error``, or ``None`` when it must be raised."""
        if attempt >= self.retry.max_retries:
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

    def post(self, url: str, content: bytes, headers: Mapping[str, str]) -> httpx.Response:
        """POST and return a 2xx answer (body read), retrying as the module docstring says.

        Raises:
            ProviderError: The typed error of the last attempt.
        """
        deadline = self._deadline()
        attempt = 0
        while True:
            timeout = self.timeouts.httpx(self._remaining(deadline, url))
            try:
                response = self._sync_client().post(url, content=content, headers=dict(headers), timeout=timeout)
            except httpx.HTTPError as exc:
                error = self.transport_error(url, exc)
                retryable = _retryable_exception(exc)
                cause: BaseException = exc
            else:
                if response.is_success:
                    return response
                error = self.status_error(response, response.content)
                retryable = _retryable_status(response.status_code)
                cause = error
            delay = self._wait(attempt, error, deadline) if retryable else None
            if delay is None:
                raise error from (cause if cause is not error else None)
            self.sleep(delay)
            attempt += 1

    async def apost(self, url: str, content: bytes, headers: Mapping[str, str]) -> httpx.Response:
        """Async form of :meth:`post`."""
        deadline = self._deadline()
        attempt = 0
        while True:
            timeout = self.timeouts.httpx(self._remaining(deadline, url))
            try:
                async with self._aclient() as client:
                    response = await client.post(url, content=content, headers=dict(headers), timeout=timeout)
            except httpx.HTTPError as exc:
                error = self.transport_error(url, exc)
                retryable = _retryable_exception(exc)
                cause: BaseException = exc
            else:
                if response.is_success:
                    return response
                error = self.status_error(response, response.content)
                retryable = _retryable_status(response.status_code)
                cause = error
            delay = self._wait(attempt, error, deadline) if retryable else None
            if delay is None:
                raise error from (cause if cause is not error else None)
            await self.asleep(delay)
            attempt += 1

    @asynccontextmanager
    async def open_stream(
        self, url: str, content: bytes, headers: Mapping[str, str]
    ) -> AsyncIterator[tuple[httpx.Response, float | None]]:
        """POST and yield ``(response, deadline)`` once a 2xx status line arrived (body not read yet).

        Retries (status, connection failure) happen only here, before any body byte was read; the
        caller reads the body and maps its errors with :meth:`transport_error`. ``deadline`` is the
        ``time.monotonic()`` value the whole body must arrive by (``None`` = no total timeout).

        Raises:
            ProviderError: The typed error of the last attempt.
        """
        deadline = self._deadline()
        attempt = 0
        while True:
            timeout = self.timeouts.httpx(self._remaining(deadline, url))
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(self._aclient())
                try:
                    request = client.build_request('POST', url, content=content, headers=dict(headers), timeout=timeout)
                    response = await client.send(request, stream=True)
                except httpx.HTTPError as exc:
                    error = self.transport_error(url, exc)
                    retryable = _retryable_exception(exc)
                    cause: BaseException = exc
                else:
                    stack.push_async_callback(response.aclose)
                    if response.is_success:
                        yield response, deadline
                        return
                    try:
                        body = await response.aread()
                    except httpx.HTTPError:
                        body = b''
                    error = self.status_error(response, body)
                    retryable = _retryable_status(response.status_code)
                    cause = error
            delay = self._wait(attempt, error, deadline) if retryable else None
            if delay is None:
                raise error from (cause if cause is not error else None)
            await self.asleep(delay)
            attempt += 1
