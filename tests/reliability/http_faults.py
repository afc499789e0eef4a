"""Loopback HTTP servers that misbehave on purpose: hang, trickle, flood, echo, redirect.

Used by ``test_http_*.py``, ``test_secrets_*.py`` and ``soak_http.py``. :class:`FaultServer` is a raw
socket server on 127.0.0.1 (one daemon thread per connection) whose behaviour is a function of one
:class:`Conn`: it can send the status line and headers a byte at a time, stream a body generated on
the fly, or wait. The server records every request and, per connection, when the client closed it
(so a test can assert that a consumer that stopped reading closed the upstream connection).
:func:`full_backlog` gives a port where TCP connects hang (its accept queue is full).
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from typing_extensions import Self

__all__ = ['Conn', 'FaultServer', 'Request', 'full_backlog', 'response_head']


@dataclass
class Request:
    """One request as the server read it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    raw_head: bytes = b''


class ClientGone(Exception):
    """The client closed the connection (or the server is stopping)."""


@dataclass
class Conn:
    """One accepted connection, handed to a behaviour function."""

    sock: socket.socket
    stop: threading.Event
    closed_at: list[float] = field(default_factory=list)
    sent: int = 0
    request: Request | None = None

    def read_request(self) -> Request:
        """Read one request (head + Content-Length body). Raises ClientGone at EOF or on stop."""
        data = b''
        while b'\r\n\r\n' not in data:
            data += self._recv()
        head, _, rest = data.partition(b'\r\n\r\n')
        lines = head.decode('latin-1').split('\r\n')
        method, path, _ = lines[0].split(' ', 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(':')
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get('content-length', '0') or 0)
        while len(rest) < length:
            rest += self._recv()
        return Request(method, path, headers, rest[:length], head)

    def _recv(self) -> bytes:
        while not self.stop.is_set():
            readable, _, _ = select.select([self.sock], [], [], 0.05)
            if readable:
                try:
                    chunk = self.sock.recv(65536)
                except OSError:
                    chunk = b''
                if not chunk:
                    self._mark_closed()
                    raise ClientGone
                return chunk
        raise ClientGone

    def _mark_closed(self) -> None:
        if not self.closed_at:
            self.closed_at.append(time.monotonic())

    def client_closed(self, wait: float = 0.0) -> bool:
        """Whether the client closed its side (EOF or reset), waiting up to ``wait`` seconds."""
        deadline = time.monotonic() + wait
        while True:
            if self.closed_at or self.sock.fileno() < 0:
                return bool(self.closed_at)
            try:
                readable, _, _ = select.select([self.sock], [], [], max(0.0, min(0.05, deadline - time.monotonic())))
            except (OSError, ValueError):  # closed by its handler thread meanwhile
                return bool(self.closed_at)
            if readable:
                try:
                    if self.sock.recv(65536, socket.MSG_PEEK) == b'':
                        self._mark_closed()
                        return True
                    self.sock.recv(65536)  # discard anything the client sends after its request
                except OSError:
                    self._mark_closed()
                    return True
            if time.monotonic() >= deadline or self.stop.is_set():
                return bool(self.closed_at)

    def send(self, data: bytes) -> None:
        """Send everything; ClientGone when the client closed or the server stops."""
        if self.stop.is_set():
            raise ClientGone
        try:
            self.sock.sendall(data)
            self.sent += len(data)
        except OSError as exc:
            self._mark_closed()
            raise ClientGone from exc

    def trickle(self, data: bytes, interval: float, step: int = 1) -> None:
        """Send ``data`` ``step`` bytes at a time, ``interval`` seconds apart (ClientGone when closed)."""
        for i in range(0, len(data), step):
            self.send(data[i : i + step])
            if self.client_closed(interval):
                raise ClientGone

    def flood(self, total: int | None, chunk: bytes = b'x' * 65536) -> None:
        """Send ``total`` bytes (``None``: until the client leaves) made of ``chunk`` repeated, never held whole."""
        sent = 0
        while total is None or sent < total:
            piece = chunk if total is None else chunk[: total - sent]
            self.send(piece)
            sent += len(piece)

    def hold(self, seconds: float = 60.0) -> None:
        """Send nothing until the client closes, the server stops or ``seconds`` pass."""
        self.client_closed(seconds)


def response_head(
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    *,
    content_type: str = 'application/json',
    length: int | None = None,
) -> bytes:
    """A status line and headers (``Connection: close``); without ``length`` the body ends when the connection does."""
    lines = [f'HTTP/1.1 {status} X', f'Content-Type: {content_type}']
    lines += [f'{k}: {v}' for k, v in (headers or {}).items()]
    if length is not None:
        lines.append(f'Content-Length: {length}')
    lines.append('Connection: close')  # one request per connection: the handler closes it when done
    return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1')


class FaultServer:
    """A raw-socket HTTP server on 127.0.0.1 running ``behaviour(conn, request)`` for each connection.

    ``behaviour`` gets the connection after its first request was read (``read_first=True``) and
    the parsed request; it may raise :class:`ClientGone`. ``requests`` and ``connections`` record
    what happened; :meth:`stop` (or leaving the ``with`` block) releases every handler.
    """

    def __init__(self, behaviour: Callable[[Conn, Request | None], None], *, read_first: bool = True) -> None:
        self.behaviour = behaviour
        self.read_first = read_first
        self.requests: list[Request] = []
        self.connections: list[Conn] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(('127.0.0.1', 0))
        self._listener.listen(128)
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f'http://127.0.0.1:{self._listener.getsockname()[1]}'

    def start(self) -> FaultServer:
        """Accept connections in a daemon thread."""
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def _accept(self) -> None:
        self._listener.settimeout(0.05)
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            conn = Conn(sock, self._stop)
            with self._lock:
                self.connections.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: Conn) -> None:
        try:
            request = conn.read_request() if self.read_first else None
            conn.request = request
            if request is not None:
                with self._lock:
                    self.requests.append(request)
            self.behaviour(conn, request)
        except ClientGone:
            pass
        except BaseException as exc:  # noqa: BLE001 - kept for the test to look at
            self.errors.append(exc)
        finally:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
            conn.sock.close()

    def stop(self) -> None:
        """Release every handler and close the listener."""
        self._stop.set()
        for thread in self._threads:
            thread.join(5)
        self._listener.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@contextlib.contextmanager
def full_backlog() -> Iterator[str]:
    """A URL whose TCP connect hangs: a listener that never accepts, its accept queue already full."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(('127.0.0.1', 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):
            filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(('127.0.0.1', port))
            fillers.append(filler)
        time.sleep(0.1)
        yield f'http://127.0.0.1:{port}'
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def sse(events: Iterable[Any], *, event_names: Iterable[str | None] | None = None) -> bytes:
    """``data: <json>`` frames (with an ``event:`` line when a name is given)."""
    names = list(event_names) if event_names is not None else []
    out = []
    for i, event in enumerate(events):
        name = names[i] if i < len(names) else None
        data = event if isinstance(event, str) else json.dumps(event)
        out.append((f'event: {name}\n' if name else '') + f'data: {data}\n\n')
    return ''.join(out).encode()


# --- the provider classes under attack ---------------------------------------------------------

KEY = 'sk-test/Ab+Cd=Ef"gh\\ij_KLMNOPQRSTUVWXYZ-0123456789abcdefgh'
"""A key whose JSON-escaped and URL-encoded forms differ from the raw one ('/', '+', '=', '"', '\\')."""

ANSWERS: dict[str, bytes] = {
    'openai': json.dumps(
        {'id': 'c1', 'model': 'm', 'choices': [{'index': 0, 'finish_reason': 'stop', 'message': {'content': 'hi'}}]}
    ).encode(),
    'responses': json.dumps(
        {
            'id': 'r1',
            'status': 'completed',
            'output': [{'type': 'message', 'content': [{'type': 'output_text', 'text': 'hi'}]}],
        }
    ).encode(),
    'anthropic': json.dumps(
        {'id': 'm1', 'type': 'message', 'content': [{'type': 'text', 'text': 'hi'}], 'stop_reason': 'end_turn'}
    ).encode(),
    'gemini': json.dumps(
        {'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'hi'}]}, 'finishReason': 'STOP'}]}
    ).encode(),
    'ollama': json.dumps({'model': 'm', 'message': {'role': 'assistant', 'content': 'hi'}, 'done': True}).encode(),
}
"""A minimal whole answer per provider."""

STREAM_TEXT_EVENT: dict[str, bytes] = {
    'openai': sse([{'id': 'c1', 'model': 'm', 'choices': [{'index': 0, 'delta': {'content': 'tok '}}]}]),
    'responses': sse([{'type': 'response.output_text.delta', 'delta': 'tok '}]),
    'anthropic': sse(
        [{'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': 'tok '}}],
        event_names=['content_block_delta'],
    ),
    'gemini': sse([{'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'tok '}]}}]}]),
    'ollama': b'{"model":"m","message":{"role":"assistant","content":"tok "},"done":false}\n',
}
"""One stream event carrying text, per provider (a stream of these never ends)."""

STREAM_START: dict[str, bytes] = {
    'anthropic': sse(
        [
            {'type': 'message_start', 'message': {'id': 'm1', 'model': 'm', 'content': [], 'usage': {}}},
            {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}},
        ],
        event_names=['message_start', 'content_block_start'],
    ),
}
"""Events a provider sends before its text (Anthropic opens the message and the block first)."""

STREAM_END: dict[str, bytes] = {
    'openai': sse([{'id': 'c1', 'model': 'm', 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]}])
    + b'data: [DONE]\n\n',
    'responses': sse(
        [{'type': 'response.completed', 'response': {'id': 'r1', 'status': 'completed', 'output': []}}],
        event_names=['response.completed'],
    ),
    'anthropic': sse(
        [
            {'type': 'content_block_stop', 'index': 0},
            {'type': 'message_delta', 'delta': {'stop_reason': 'end_turn'}, 'usage': {'output_tokens': 1}},
            {'type': 'message_stop'},
        ],
        event_names=['content_block_stop', 'message_delta', 'message_stop'],
    ),
    'gemini': sse([{'candidates': [{'content': {'role': 'model', 'parts': [{'text': ''}]}, 'finishReason': 'STOP'}]}]),
    'ollama': b'{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}\n',
}
"""The events that end a stream normally, per provider."""

CONTENT_TYPES = {'ollama': 'application/x-ndjson'}


def build_model(provider: str, url: str, key: str | None = KEY, **kwargs: Any) -> Any:
    """A model of ``provider`` pointed at ``url``."""
    from toolweave.providers import (
        AnthropicChatModel,
        GeminiChatModel,
        OllamaChatModel,
        OpenAIChatModel,
        OpenAIResponsesModel,
    )

    classes = {
        'openai': OpenAIChatModel,
        'responses': OpenAIResponsesModel,
        'anthropic': AnthropicChatModel,
        'gemini': GeminiChatModel,
        'ollama': OllamaChatModel,
    }
    return classes[provider](base_url=url, api_key=key, model='m', **kwargs)


PROVIDERS = tuple(ANSWERS)


def run(model: Any, mode: str, prompt: Any = None) -> Any:
    """``call``, ``acall`` or ``stream`` (every chunk collected); the response or the chunks."""
    import asyncio

    from toolweave.chat import Prompt

    prompt = prompt if prompt is not None else Prompt.of('hello')
    if mode == 'call':
        return model.call(prompt)
    if mode == 'acall':
        return asyncio.run(model.acall(prompt))

    async def collect() -> list[Any]:
        return [chunk async for chunk in model.stream(prompt)]

    return asyncio.run(collect())


def stream_head(provider: str) -> bytes:
    """Status line and headers of a 200 stream (close-delimited)."""
    return response_head(content_type=CONTENT_TYPES.get(provider, 'text/event-stream'))


# --- finding a key anywhere --------------------------------------------------------------------

WINDOW = 8
"""A leak is any run of this many consecutive characters of any spelling of the key."""


def key_spellings(key: str) -> set[str]:
    """The key raw, JSON-escaped, URL-encoded (both cases of hex) and Python-escaped."""
    from urllib.parse import quote, quote_plus

    forms = {key, json.dumps(key)[1:-1], json.dumps(key)[1:-1].replace('/', '\\/'), repr(key)[1:-1]}
    for encoded in (quote(key, safe=''), quote_plus(key, safe='')):
        forms |= {encoded, re.sub('%[0-9A-F]{2}', lambda m: m.group(0).lower(), encoded)}
    return forms


def leak_windows(key: str) -> set[str]:
    """Every run of WINDOW characters of every spelling of ``key`` (the whole spelling when shorter)."""
    windows = set()
    for form in key_spellings(key):
        windows |= {form[i : i + WINDOW] for i in range(max(1, len(form) - WINDOW + 1))}
    return windows


def texts_of(value: Any, depth: int = 0, seen: set[int] | None = None) -> list[str]:
    """Every string reachable from ``value``: str/repr, args, attributes, containers, headers, exception chain."""
    seen = set() if seen is None else seen
    if depth > 12 or id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, str):
        return [value]
    if isinstance(value, bytes | bytearray):
        return [bytes(value).decode('latin-1')]
    if value is None or isinstance(value, int | float | bool):
        return []
    out = [repr(value)]
    with contextlib.suppress(Exception):
        out.append(str(value))
    if isinstance(value, Mapping):
        items: Iterable[Any] = [x for kv in value.items() for x in kv]
    elif isinstance(value, list | tuple | set | frozenset):
        items = list(value)
    else:
        items = list(getattr(value, '__dict__', {}).values())
        if isinstance(value, BaseException):
            items += [value.args, value.__cause__, value.__context__, getattr(value, '__notes__', None)]
        headers = getattr(value, 'headers', None)
        if headers is not None and hasattr(headers, 'items'):
            items.append(dict(headers.items()))
    for item in items:
        out += texts_of(item, depth + 1, seen)
    return out


def leaks(value: Any, key: str) -> list[str]:
    """The texts reachable from ``value`` that hold part of ``key`` (empty: no leak)."""
    windows = leak_windows(key)
    return [text[:200] for text in texts_of(value) if any(w in text for w in windows)]
