"""Typed errors of HTTP answers: status -> :class:`ProviderError` subclass, provider message, request id, excerpt.

Every text kept on an error passes through the transport's :class:`~toolweave.providers._secrets.Redactor`
first, and an excerpt is redacted before it is cut (so a key across the cut is still caught whole).
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping

import httpx
import orjson

from toolweave.exceptions import (
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    ProviderError,
    ProviderRedirectError,
    RateLimitError,
    ServerError,
)
from toolweave.providers._secrets import Redactor

__all__ = [
    'EXCERPT',
    'describe',
    'error_for_status',
    'excerpt',
    'provider_error_message',
    'request_id_of',
    'retry_after_seconds',
]

EXCERPT = 500
"""Characters of a response body kept on an error."""

_REQUEST_ID_HEADERS = ('x-request-id', 'request-id', 'x-goog-request-id', 'openai-request-id', 'cf-ray')
_CONTEXT_RE = re.compile(
    r'context[ _-]?length|context window|maximum context|prompt is too long|too many tokens|'
    r'input token count|exceeds? the (?:model|maximum)|request too large|reduce the length',
    re.IGNORECASE,
)


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


def excerpt(body: bytes, redact: Redactor) -> str:
    """The first :data:`EXCERPT` characters of ``body``, secrets redacted before the cut."""
    window = EXCERPT + redact.longest
    text = body[: window * 4].decode('utf-8', 'replace')[:window]
    return redact(text)[:EXCERPT]


def _error_class(status: int, provider_message: str | None, body: str) -> type[ProviderError]:
    if 300 <= status < 400:
        return ProviderRedirectError
    if status in (401, 403):
        return AuthenticationError
    if status == 429:
        return RateLimitError
    if status in (400, 413, 422) and _CONTEXT_RE.search(provider_message or body):
        return ContextLengthError
    if 400 <= status < 500:
        return BadRequestError
    return ServerError


def error_for_status(response: httpx.Response, body: bytes, *, provider: str, redact: Redactor) -> ProviderError:
    """The typed error for a non-2xx answer (status, provider message, request id; secrets redacted).

    Args:
        response: The answer (its request gives method and URL).
        body: The body read (at most :data:`ERROR_BODY_LIMIT` bytes).
        provider: Provider name stored on the error.
        redact: Replaces the secrets (API keys) in every text kept.
    """
    text = excerpt(body, redact)
    message = provider_error_message(body)
    provider_message = redact(message) if message is not None else None
    url = redact(str(response.request.url))
    request_id = request_id_of(response.headers)
    suffix = f' (request id {request_id})' if request_id else ''
    cls = _error_class(response.status_code, provider_message, text)
    location = response.headers.get('location')
    if cls is ProviderRedirectError:
        where = f'to {redact(location)}' if location else 'without a Location'
        detail = f'redirected {where}; redirects are not followed (point base_url at the new address)'
    else:
        detail = f'failed with HTTP {response.status_code}: {provider_message or text or response.reason_phrase}'
    error = cls(
        f'{response.request.method} {url} {detail}{suffix}',
        status_code=response.status_code,
        body=text,
        provider_message=provider_message,
        request_id=request_id,
        provider=provider,
    )
    error.retry_after = retry_after_seconds(response.headers)
    if isinstance(error, ProviderRedirectError):
        error.location = redact(location) if location else None
    return error


def describe(exc: BaseException) -> str:
    """``'<TypeName>: <message>'`` (or the type name alone) of an exception."""
    text = str(exc)
    return f'{type(exc).__name__}: {text}' if text else type(exc).__name__
