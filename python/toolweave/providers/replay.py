"""Replay harness: a loopback HTTP server that serves recorded response bodies, and ``ReplayChatModel``.

Why a real server: a provider class is only tested when its real HTTP code path runs (headers,
status handling, chunked reads, retries, timeouts) against real recorded bytes. :class:`ReplayServer`
is the standard library's ``ThreadingHTTPServer`` on ``127.0.0.1`` with a queue of :class:`Reply`
objects (one per request, in order) and a log of the requests received, so tests can also check
the JSON each provider sends. :class:`ReplayChatModel` puts a provider class in front of a server
fed from recording files: any code that takes a ``ChatModel`` can run against recorded turns.

Faults are replies too: ``status`` + ``headers`` (429 with ``Retry-After``), ``piece`` (stream the
body in small flushed writes), ``close_after`` (drop the connection after that many bytes),
``hang_after`` (send that many bytes, then stop sending until the server closes).
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse

if TYPE_CHECKING:
    from typing_extensions import Self

    from toolweave.providers._base import HttpChatModel

__all__ = ['RecordedRequest', 'ReplayChatModel', 'ReplayServer', 'Reply']

_CONTENT_TYPES = {'.sse': 'text/event-stream', '.ndjson': 'application/x-ndjson', '.json': 'application/json'}


@dataclass(frozen=True)
class Reply:
    """One recorded answer.

    Attributes:
        status: HTTP status.
        body: The body bytes, sent as recorded.
        content_type: ``Content-Type`` header.
        headers: Extra headers (``Retry-After``, ``request-id``, ...).
        piece: When > 0, the body is written in pieces of this many bytes, each flushed.
        close_after: When set, the connection is dropped after this many body bytes.
        hang_after: When set, this many body bytes are sent and then nothing until the server stops.
    """

    status: int = 200
    body: bytes = b''
    content_type: str = 'application/json'
    headers: Mapping[str, str] = field(default_factory=dict)
    piece: int = 0
    close_after: int | None = None
    hang_after: int | None = None

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Reply:
        """A 200 reply with the file's bytes; content type from the suffix (``.sse``, ``.ndjson``, ``.json``)."""
        p = Path(path)
        return cls(body=p.read_bytes(), content_type=_CONTENT_TYPES.get(p.suffix, 'application/octet-stream'), **kwargs)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        method: ``'POST'`` or ``'GET'``.
        path: Path and query string.
        headers: Request headers (names as sent).
        body: The raw body.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class _QuietServer(http.server.ThreadingHTTPServer):
    """A loopback HTTP server that does not print a traceback when a client goes away mid-reply.

    A client that stops reading (a closed stream, a cancelled request, a deadline) resets the
    connection: expected in tests, so ``ConnectionError`` is dropped; any other error is reported.
    """

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ReplayServer:
    """A loopback HTTP server answering each request with the next queued :class:`Reply`.

    Use as a context manager (starts a daemon thread, stops it on exit). A request with nothing
    queued gets HTTP 500 ``{"error": {"message": "no reply queued"}}``.

    Example:
        >>> with ReplayServer() as server:
        ...     server.queue(Reply(body=b'{}'))
        ...     server.url.startswith('http://127.0.0.1:')
        True
    """

    def __init__(self, replies: Sequence[Reply] = ()) -> None:
        self.replies: list[Reply] = list(replies)
        self.requests: list[RecordedRequest] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._server = _QuietServer(('127.0.0.1', 0), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f'http://127.0.0.1:{self._server.server_address[1]}'

    def queue(self, *replies: Reply) -> None:
        """Append replies, served in order."""
        with self._lock:
            self.replies.extend(replies)

    @property
    def last_json(self) -> Any:
        """The JSON body of the last request."""
        return self.requests[-1].json

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.pop(0)
        return Reply(500, b'{"error": {"message": "no reply queued"}}')

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'
            timeout = 30

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get('Content-Length', '0') or 0)
                raw = self.rfile.read(length) if length else b''
                request = RecordedRequest(self.command, self.path, dict(self.headers.items()), raw)
                reply = server._next(request)
                self.send_response(reply.status)
                self.send_header('Content-Type', reply.content_type)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                body = reply.body
                cut = reply.close_after if reply.close_after is not None else reply.hang_after
                if cut is not None or reply.piece:
                    self.send_header('Connection', 'close')
                    self.close_connection = True
                    self.end_headers()
                    self._write(body[:cut] if cut is not None else body, reply.piece)
                    if reply.hang_after is not None:
                        server._stop.wait(30)
                    return
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _write(self, body: bytes, piece: int) -> None:
                step = piece or len(body) or 1
                for i in range(0, len(body), step):
                    self.wfile.write(body[i : i + step])
                    self.wfile.flush()

            def do_POST(self) -> None:
                self._serve()

            def do_GET(self) -> None:
                self._serve()

        return Handler

    def start(self) -> Self:
        """Start serving in a daemon thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={'poll_interval': 0.05})
            self._thread.daemon = True
            self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging replies, stop serving and close the socket (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class ReplayChatModel:
    """A :class:`~toolweave.chat.ChatModel` that answers with recorded bodies, through a real provider class.

    Each request (blocking, async or streamed) is answered with the next recording, served over HTTP
    by a :class:`ReplayServer` to a provider model built by ``model_factory(base_url)`` (for example
    ``lambda url: AnthropicChatModel(base_url=url, api_key='test')``). So the provider's own request
    mapping, HTTP handling, stream parsing and response mapping all run on recorded bytes.

    Args:
        model_factory: Builds the provider model for the server's base URL.
        recordings: Files (content type from the suffix) or :class:`Reply` objects, one per request.
        path_prefix: Appended to the server URL to form the base URL (``'/v1'`` for OpenAI-style roots).

    Example:
        >>> from toolweave.providers import OpenAIChatModel
        >>> replay = ReplayChatModel(lambda url: OpenAIChatModel(base_url=url, api_key=''), [], path_prefix='/v1')
        >>> replay.close()
    """

    def __init__(
        self,
        model_factory: Any,
        recordings: Sequence[str | Path | Reply],
        *,
        path_prefix: str = '',
    ) -> None:
        replies = [r if isinstance(r, Reply) else Reply.from_file(r) for r in recordings]
        self.server = ReplayServer(replies).start()
        self.model: HttpChatModel = model_factory(self.server.url + path_prefix)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests the provider sent so far."""
        return self.server.requests

    def call(self, prompt: Prompt) -> ChatResponse:
        """The provider's :meth:`call` against the next recording."""
        return self.model.call(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """The provider's :meth:`acall` against the next recording."""
        return await self.model.acall(prompt)

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """The provider's :meth:`stream` against the next recording."""
        async for chunk in self.model.stream(prompt):
            yield chunk

    def close(self) -> None:
        """Close the provider model and stop the server."""
        self.model.close()
        self.server.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
