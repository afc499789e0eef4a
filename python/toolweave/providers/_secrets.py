"""API keys: checked when a model is built, and redacted in every form from whatever leaves toolweave.

Why a module of its own: a key reaches error text in more shapes than the one the application
passed. A key read from a file ends with a newline; a provider echoes it JSON-escaped in an error
body, URL-encoded in a URL, cut short in a message, or Python-escaped inside an exception about a
header. :class:`Redactor` knows each of those forms and replaces them all with ``***``, including a
form cut at either end (any run of at least :data:`PARTIAL_MIN` characters that starts or ends the
form) and any run of at least :data:`MIDDLE_MIN` of its inner characters, so redacting text and then
cutting an excerpt, or the reverse, never shows more than a few characters of it. :func:`clean_api_key` strips surrounding whitespace and rejects keys that cannot
be sent as a header (control characters, non-ASCII) without echoing them. :func:`redact_library_logs`
covers what toolweave does not write itself: httpcore's DEBUG records show response headers (a
``Location`` may carry the key), so the records of httpx's and httpcore's loggers are redacted too.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

import orjson

from toolweave.exceptions import InvalidApiKeyError

__all__ = [
    'PARTIAL_MIN',
    'Redactor',
    'check_header_value',
    'clean_api_key',
    'redact_library_logs',
    'sensitive_header_secrets',
]

PARTIAL_MIN = 8
"""Shortest run of a key's first or last characters that is redacted on its own (a key cut short)."""

MIDDLE_MIN = 12
"""Shortest run of a key's inner characters (neither its start nor its end) that is redacted on its own."""

_BLOCK = (MIDDLE_MIN + 1) // 2
"""Block stride of the inner search: any run of ``2 * _BLOCK - 1 <= MIDDLE_MIN`` characters holds a whole block."""

TAIL_MIN = 3
"""Shortest key prefix redacted at the very end of a text someone else already cut (:meth:`Redactor.cut`)."""

MASK = '***'

_SENSITIVE_NAME = re.compile(r'auth|key|token|secret|cookie|password|signature', re.IGNORECASE)
_HEADER_OK = re.compile(r'[\x20-\x7e]*')
_PERCENT = re.compile(r'%[0-9A-F]{2}')


def _first_bad(value: str) -> tuple[int, str] | None:
    """Position and kind of the first character that cannot go in a header value (``None`` if all can)."""
    match = _HEADER_OK.match(value)
    end = match.end() if match else 0
    if end == len(value):
        return None
    char = value[end]
    return end, ('a non-ASCII character' if ord(char) > 0x7F else 'a control character')


def clean_api_key(key: str | None, owner: str) -> str | None:
    """``key`` with surrounding whitespace removed (``None`` when nothing is left).

    Keys copied from files or environment variables often end with a newline; that whitespace is
    never part of a key, so it is dropped rather than sent (where it would break the header).

    Args:
        key: The key as given, or ``None``.
        owner: The model class name, for the error message.

    Raises:
        InvalidApiKeyError: The key holds a control character or a non-ASCII character (a header
            cannot carry it); the message gives the position, never the key.
        TypeError: ``key`` is not a string.
    """
    if key is None:
        return None
    if not isinstance(key, str):
        raise TypeError(f'{owner}: api_key must be a str, not {type(key).__name__}')
    stripped = key.strip()
    bad = _first_bad(stripped)
    if bad is not None:
        position, kind = bad
        raise InvalidApiKeyError(
            f'{owner}: the API key holds {kind} at position {position} of {len(stripped)} (after stripping '
            'surrounding whitespace); keys are printable ASCII. The key is not shown.'
        )
    return stripped or None


def check_header_value(name: str, value: str, owner: str) -> None:
    """Raise ``ValueError`` naming the header (never its value) if ``value`` cannot be sent.

    Raises:
        InvalidApiKeyError: For a header whose name looks secret (``Authorization``, ``*-key``, ...).
        ValueError: For any other header.
    """
    bad = _first_bad(value)
    if bad is None:
        return
    position, kind = bad
    message = f'{owner}: the value of header {name!r} holds {kind} at position {position}; it is not shown'
    if _SENSITIVE_NAME.search(name):
        raise InvalidApiKeyError(message)
    raise ValueError(message)


def sensitive_header_secrets(headers: Mapping[str, str]) -> list[str]:
    """Values of headers whose name looks secret, and their token after an auth scheme (``Bearer x`` -> ``x``)."""
    secrets: list[str] = []
    for name, value in headers.items():
        if _SENSITIVE_NAME.search(name) and value.strip():
            secrets.append(value.strip())
            scheme, _, token = value.strip().partition(' ')
            if token.strip() and scheme.isalpha():
                secrets.append(token.strip())
    return secrets


def _forms(secret: str) -> set[str]:
    """Every spelling of ``secret``: raw, JSON, URL and Python escapes.

    Built from the stripped secret: surrounding whitespace escapes character by character, so every
    spelling of a key read with its newline holds the same spelling of the bare key, which is replaced.
    """
    value = secret.strip()
    json_forms = {orjson.dumps(value).decode()[1:-1], json.dumps(value)[1:-1]}
    forms = {value, repr(value)[1:-1], repr(value.encode('utf-8', 'backslashreplace'))[2:-1]}
    forms |= json_forms | {f.replace('/', '\\/') for f in json_forms}
    for encoded in (quote(value, safe=''), quote_plus(value, safe=''), quote(value)):
        forms.add(encoded)
        forms.add(_PERCENT.sub(lambda m: m.group(0).lower(), encoded))
    return {f for f in forms if f}


class Redactor:
    """Replaces every form of some secrets by ``***`` (see the module docstring).

    A form is matched whole, or cut: any run of at least :data:`PARTIAL_MIN` characters that is a
    start or an end of the form, or of at least :data:`MIDDLE_MIN` characters from inside it. Matching is linear in the text (a ``str.find`` per anchor, then a
    character-by-character extension), so redacting error text costs little even for long keys.

    Args:
        secrets: The secrets (empty ones are ignored).

    Example:
        >>> redact = Redactor(['sk-abcdefghijklmnop'])
        >>> redact('key sk-abcdefghijklmnop, cut sk-abcdefghij..., escaped sk-abcdefghijklmnop%0A')
        'key ***, cut ***..., escaped ***%0A'
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret and secret.strip():
                forms |= _forms(secret)
        self._forms = sorted(forms, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._forms)

    @property
    def longest(self) -> int:
        """Length of the longest form (0 without secrets): how far past a cut a form may reach."""
        return len(self._forms[0]) if self._forms else 0

    def __repr__(self) -> str:
        return f'Redactor({len(self._forms)} forms)'

    def __call__(self, text: str) -> str:
        """``text`` with every whole or cut form of a secret replaced by ``***``."""
        if not self._forms or not text:
            return text
        spans: list[tuple[int, int]] = []
        for form in self._forms:
            spans.extend(_spans(text, form))
            spans.extend(_inner_spans(text, form))
        return _mask(text, spans)

    def cut(self, text: str) -> str:
        """As calling, plus a key prefix of :data:`TAIL_MIN` or more characters ending ``text``.

        For text somebody else already cut short (the Rust core's 60-character event excerpt): a
        key cut there leaves a prefix at the very end, too short for the :data:`PARTIAL_MIN` rule.
        """
        text = self(text)
        for form in self._forms:
            for size in range(min(len(form), PARTIAL_MIN) - 1, TAIL_MIN - 1, -1):
                if text.endswith(form[:size]):
                    return text[:-size] + MASK
        return text

    def json(self, value: Any) -> Any:
        """A copy of a JSON-like value with :meth:`__call__` applied to every string (keys included)."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {self.json(k): self.json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.json(v) for v in value]
        return value


def _spans(text: str, form: str) -> list[tuple[int, int]]:
    """Spans of ``text`` holding ``form`` whole or cut (a start or an end of at least PARTIAL_MIN characters)."""
    anchor = min(len(form), PARTIAL_MIN)
    spans = []
    head, tail = form[:anchor], form[-anchor:]
    start = text.find(head)
    while start >= 0:
        end = start + anchor
        while end < len(text) and end - start < len(form) and text[end] == form[end - start]:
            end += 1
        spans.append((start, end))
        start = text.find(head, start + 1)
    if len(form) > anchor:
        start = text.find(tail)
        while start >= 0:
            begin, offset = start, len(form) - anchor
            while begin > 0 and offset > 0 and text[begin - 1] == form[offset - 1]:
                begin -= 1
                offset -= 1
            spans.append((begin, start + anchor))
            start = text.find(tail, start + 1)
    return spans


def _inner_spans(text: str, form: str) -> list[tuple[int, int]]:
    """Spans of ``text`` holding a run of at least MIDDLE_MIN consecutive characters of ``form``.

    Such a run holds a whole block ``form[k * _BLOCK:(k + 1) * _BLOCK]``: each block is found with
    ``str.find`` and the match is extended both ways while text and form agree.
    """
    spans = []
    for block_start in range(0, len(form) - _BLOCK + 1, _BLOCK):
        block = form[block_start : block_start + _BLOCK]
        start = text.find(block)
        while start >= 0:
            begin, offset = start, block_start
            while begin > 0 and offset > 0 and text[begin - 1] == form[offset - 1]:
                begin, offset = begin - 1, offset - 1
            end, far = start + _BLOCK, block_start + _BLOCK
            while end < len(text) and far < len(form) and text[end] == form[far]:
                end, far = end + 1, far + 1
            if end - begin >= MIDDLE_MIN:
                spans.append((begin, end))
            start = text.find(block, start + 1)
    return spans


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each union of overlapping spans replaced by one ``***``."""
    if not spans:
        return text
    out: list[str] = []
    position = 0
    for start, end in sorted(spans):
        if end <= position:
            continue
        if start > position:
            out.append(text[position:start])
            out.append(MASK)
        elif not out or out[-1] != MASK:
            out.append(MASK)
        position = max(position, end)
    out.append(text[position:])
    return ''.join(out)


_LIBRARY_LOGGERS = (
    'httpx',
    'httpcore.connection',
    'httpcore.http11',
    'httpcore.http2',
    'httpcore.proxy',
    'httpcore.socks',
)
_LIVE: weakref.WeakSet[Redactor] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


class _LibraryLogFilter(logging.Filter):
    """Applies every live :class:`Redactor` to a record of httpx or httpcore (message formatted first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        with _LIVE_LOCK:
            redactors = list(_LIVE)
        if redactors:
            text = record.getMessage()
            for redact in redactors:
                text = redact(text)
            record.msg, record.args = text, None
        return True


_FILTER = _LibraryLogFilter()


def redact_library_logs(redact: Redactor) -> None:
    """Redact ``redact``'s secrets from the records of httpx's and httpcore's loggers while it lives.

    The filter sits on those loggers (records only reach it once their level is enabled, so it costs
    nothing at the default WARNING level).
    """
    if not redact:
        return
    with _LIVE_LOCK:
        _LIVE.add(redact)
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
