"""``HttpChatModel``: what every HTTP provider shares (transport, call/acall/stream, lifecycle).

A provider subclass only maps: :meth:`HttpChatModel.request_body` (our prompt -> its JSON),
:meth:`HttpChatModel.endpoint` (URL), :meth:`HttpChatModel.parse_response` (its JSON -> ``ChatResponse``)
and :meth:`HttpChatModel.delta_chunk` (one stream payload -> a text/reasoning chunk). Streams are
aggregated by the Rust :class:`StreamAggregator` of the provider's format; tool calls reach the
application only once, whole, in the final chunk (the ``ChatModel`` streaming contract), so a stream
that breaks never hands half a tool call to the tool loop.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import httpx
import orjson

from toolweave.chat.finish import normalize_finish_reason
from toolweave.chat.messages import AssistantMessage
from toolweave.chat.options import ChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import StreamAggregator, ToolCallDeltas, aggregate_to_chat_response, tool_call_delta_chunk
from toolweave.exceptions import (
    IncompleteStreamError,
    MissingApiKeyError,
    ProviderError,
    ProviderStreamError,
    ResponseFormatError,
    StreamFormatError,
)
from toolweave.providers._errors import excerpt, provider_error_message, request_id_of
from toolweave.providers._http import HttpSettings, HttpSettingsArgs, HttpTransport, body_chunks, encode_json
from toolweave.providers._secrets import check_header_value, clean_api_key, sensitive_header_secrets

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

__all__ = ['HttpChatModel', 'normalized', 'text_chunk']


def normalized(format: str, native: Any, has_tool_calls: bool) -> str | None:
    """The common finish reason of a provider's own value (as the stream aggregators normalise it)."""
    return normalize_finish_reason(format, native if isinstance(native, str) else None, has_tool_calls)


class HttpChatModel:
    """Base of the HTTP chat models: blocking, async and streaming over :class:`HttpTransport`.

    Args:
        model: Model name used when the options carry none.
        default_options: Options under the prompt's; the prompt's win field by field.
        settings: How to reach the provider (:class:`~toolweave.providers.HttpSettings`): URL, key,
            timeouts, retries, headers, borrowed clients, size limit.
        **connection: Any :class:`~toolweave.providers.HttpSettings` field as a keyword (``base_url=``,
            ``api_key=``, ``timeout=``, ``retry=``, ...); it wins over ``settings``.

    Raises:
        MissingApiKeyError: No key (``api_key`` not given, its environment variables unset) for a provider
            that needs one, talking to that provider's own API (its default host). ``api_key=''`` sends
            none, for a server that needs none.
        InvalidApiKeyError: The key, or a secret-looking extra header, holds a control or non-ASCII character.
        ValueError: Another extra header does, or ``max_response_bytes`` is not a positive int.
        TypeError: An argument that is not a setting.
    """

    provider: ClassVar[str] = 'http'
    stream_format: ClassVar[str] = 'openai-chat'
    default_base_url: ClassVar[str] = ''
    api_key_env: ClassVar[tuple[str, ...]] = ()
    api_key_required: ClassVar[bool] = False
    """Whether the provider's own API (:attr:`default_base_url`'s host) needs a key."""
    answer_field: ClassVar[tuple[str, type]] = ('choices', list)
    """The field a 2xx JSON answer must have, and its type (else :class:`ResponseFormatError`)."""

    def __init__(
        self,
        model: str | None = None,
        default_options: ChatOptions | None = None,
        *,
        settings: HttpSettings | None = None,
        **connection: Unpack[HttpSettingsArgs],
    ) -> None:
        settings = dataclasses.replace(settings or HttpSettings(), **connection)
        self.settings = settings
        """The connection settings the model was built with (the key hidden from its repr)."""
        self.base_url = (settings.base_url or self.default_base_url).rstrip('/')
        self.model = model
        self.default_options = default_options
        self.timeout = settings.timeout
        owner = type(self).__name__
        api_key = settings.api_key
        if api_key is None:
            api_key = next((os.environ[n] for n in self.api_key_env if os.environ.get(n)), None)
            if api_key is None and self._needs_api_key():
                names = ' or '.join(self.api_key_env)
                raise MissingApiKeyError(
                    f'{owner} needs an API key for {self.base_url}: pass api_key=... or set {names} '
                    "(api_key='' sends none, for a server that needs none)"
                )
        self._api_key = clean_api_key(api_key, owner)
        self._extra_headers = dict(settings.extra_headers or {})
        for name, value in self._extra_headers.items():
            check_header_value(name, value, owner)
        self._transport = HttpTransport(
            self.provider,
            timeout=settings.timeout,
            retry=settings.retry,
            secrets=[s for s in (api_key, self._api_key) if s] + sensitive_header_secrets(self._extra_headers),
            http_client=settings.http_client,
            async_http_client=settings.async_http_client,
            max_response_bytes=settings.max_response_bytes,
        )

    def _needs_api_key(self) -> bool:
        """Whether a missing key is an error: the provider needs one and this is its own API's host."""
        own_host = urlsplit(self.default_base_url).hostname
        return self.api_key_required and own_host is not None and urlsplit(self.base_url).hostname == own_host

    def __repr__(self) -> str:
        return f'{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})'

    @property
    def transport(self) -> HttpTransport:
        """The HTTP layer (timeouts, retry policy)."""
        return self._transport

    # --- provider hooks ----------------------------------------------------------------------------

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The JSON body that would be sent for ``prompt`` (options merged over the defaults)."""
        raise NotImplementedError

    def endpoint(self, body: Mapping[str, Any], *, stream: bool) -> str:
        """The URL the body goes to."""
        raise NotImplementedError

    def auth_headers(self) -> dict[str, str]:
        """Authentication headers (empty without a key)."""
        return {}

    def parse_response(self, data: Mapping[str, Any]) -> ChatResponse:
        """A whole (non-streamed) response JSON object as a :class:`ChatResponse`."""
        raise NotImplementedError

    def delta_chunk(self, payload: Mapping[str, Any]) -> ChatResponse | None:
        """The text/reasoning chunk of one stream payload, or ``None`` when it carries neither."""
        raise NotImplementedError

    def final_chunk(self, result: Mapping[str, Any]) -> ChatResponse:
        """The closing chunk: whole tool calls, normalised finish reason, usage, id, model, provider extras.

        Text and reasoning were delivered by the delta chunks and are left out; message metadata
        that must go back to the provider next round (signatures, reasoning items) stays.
        """
        response = aggregate_to_chat_response(result)
        generation = response.generations[0]
        metadata = {k: v for k, v in generation.output.metadata.items() if k != 'reasoning'}
        metadata.update(self.message_extras(result))
        message = dataclasses.replace(generation.output, content=None, metadata=metadata)
        return dataclasses.replace(response, generations=(dataclasses.replace(generation, output=message),))

    def message_extras(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """Provider extras of an aggregated stream to keep on the assistant message (none by default)."""
        return {}

    def new_aggregator(self) -> Any:
        """The aggregator of one stream: a :class:`StreamAggregator` of :attr:`stream_format`.

        A provider may return a wrapper with the same ``feed``/``finish``/``result`` methods that also
        keeps what the core does not (e.g. the Responses API's reasoning items).
        """
        return StreamAggregator(self.stream_format)

    # --- shared ------------------------------------------------------------------------------------

    def headers(self, stream: bool) -> dict[str, str]:
        """Every request header: content type, accept, authentication, extras."""
        headers = {'Content-Type': 'application/json', 'Accept': 'text/event-stream' if stream else 'application/json'}
        headers.update(self.auth_headers())
        headers.update(self._extra_headers)
        return headers

    def _decode(self, response: httpx.Response, body: bytes) -> Mapping[str, Any]:
        """The JSON object of a 2xx answer.

        Raises:
            ResponseFormatError: The body is not JSON, not an object, or not an answer (:meth:`answer_problem`).
            ProviderError: The object is an ``error`` object (some servers answer errors with 200).
        """
        redact = self._transport.redact
        text = excerpt(body, redact)
        fields: dict[str, Any] = {'status_code': response.status_code, 'body': text, 'provider': self.provider}
        fields['request_id'] = request_id_of(response.headers)
        problem: str | None = None
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            data, problem = None, f'a body that is not JSON: {text!r}'
        if isinstance(data, Mapping):
            if data.get('error') and not self.is_success_payload(data):
                message = redact(provider_error_message(body) or str(data['error']))
                raise ProviderError(f'provider error: {message}', provider_message=message, **fields)
            problem = self.answer_problem(data)
            if problem is None:
                return data
        problem = problem or 'JSON that is not an object'
        url = redact(str(response.request.url))
        raise ResponseFormatError(f'{url} answered HTTP {response.status_code} with {problem}', **fields)

    def answer_problem(self, data: Mapping[str, Any]) -> str | None:
        """Why a 2xx JSON object is not an answer (``None`` when it is): :attr:`answer_field` is missing."""
        name, kind = self.answer_field
        if isinstance(data.get(name), kind):
            return None
        what = 'an array' if kind is list else 'an object'
        keys = ', '.join(sorted(map(str, data))[:10]) or 'none'
        return f'no {name!r} {what} (keys: {self._transport.redact(keys)})'

    def is_success_payload(self, data: Mapping[str, Any]) -> bool:
        """Whether a 200 body that has an ``error`` key is nevertheless an answer."""
        return False

    def request_url(self, prompt: Prompt, body: Mapping[str, Any], *, stream: bool) -> str:
        """The URL a request for ``prompt`` goes to (by default :meth:`endpoint`)."""
        return self.endpoint(body, stream=stream)

    def _prepare(self, prompt: Prompt, stream: bool) -> tuple[str, bytes, dict[str, str]]:
        """URL, encoded body (:func:`~toolweave.providers._http.encode_json`) and checked headers of a request.

        Raises:
            ValueError: A header value cannot be sent (the value is not shown).
        """
        body = self.request_body(prompt, stream=stream)
        headers = self.headers(stream)
        for name, value in headers.items():
            check_header_value(name, value, type(self).__name__)
        return self.request_url(prompt, body, stream=stream), encode_json(body), headers

    def call(self, prompt: Prompt) -> ChatResponse:
        """Send ``prompt`` and block until the whole answer is there.

        Raises:
            ProviderError: A subclass per failure (see :mod:`toolweave.exceptions`), after retries.
        """
        url, content, headers = self._prepare(prompt, False)
        return self.parse_response(self._decode(*self._transport.post(url, content, headers)))

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """Async form of :meth:`call`."""
        url, content, headers = self._prepare(prompt, False)
        return self.parse_response(self._decode(*await self._transport.apost(url, content, headers)))

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Send ``prompt`` as a stream and yield chunks as they arrive.

        Yields:
            One chunk per payload that carries text (``output.content``), reasoning
            (``output.metadata['reasoning']``) or tool-call fragments (response metadata
            ``tool_call_deltas``, see :mod:`toolweave.chat.stream`), then one final chunk (see :meth:`final_chunk`).

        Raises:
            ProviderError: Before the first chunk, as :meth:`call` (retried the same way). After it,
                never retried: :class:`ProviderStreamError` (error event), :class:`ResponseFormatError`
                (an event that is not JSON), :class:`IncompleteStreamError` (connection closed or no end
                marker), :class:`ProviderTimeoutError` (read or total timeout). Each is raised after
                every chunk before the failure was yielded and carries their text in ``partial_text``;
                tool calls of a failed stream are never returned, so they are never executed.
        """
        url, content, headers = self._prepare(prompt, True)
        transport = self._transport
        async with (
            transport.open_stream(url, content, headers) as (response, deadline),
            body_chunks(response) as body,
        ):
            reader = _StreamReader(self, response, url)
            while True:
                try:
                    raw = await transport.next_chunk(body, deadline, url)
                except ProviderError as failure:
                    raise reader.failed(failure)  # noqa: B904 - typed and redacted already
                chunks, failed = reader.read(raw)
                for chunk in chunks:
                    yield chunk
                if failed:
                    raise reader.error()  # not kept in a local: see _StreamReader.error
                if raw is None:
                    break
        yield reader.final()

    def stream_sync(self, prompt: Prompt) -> Iterator[ChatResponse]:
        """Blocking form of :meth:`stream`: the same chunks and errors, over the pooled blocking client.

        No event loop and no thread: for blocking code that streams one model directly (a
        ``ChatClient``'s sync streams run the advisor chain, so they iterate :meth:`stream` instead).
        Close the iterator (or exhaust it) to release the connection.
        """
        url, content, headers = self._prepare(prompt, True)
        transport = self._transport
        with transport.open_stream_sync(url, content, headers) as (response, deadline):
            body = response.iter_bytes()
            reader = _StreamReader(self, response, url)
            while True:
                try:
                    raw = transport.next_chunk_sync(body, deadline, url)
                except ProviderError as failure:
                    raise reader.failed(failure)  # noqa: B904 - typed and redacted already
                chunks, failed = reader.read(raw)
                yield from chunks
                if failed:
                    raise reader.error()  # not kept in a local: see _StreamReader.error
                if raw is None:
                    break
        yield reader.final()

    def _feed(
        self, aggregator: Any, raw: bytes | None, response: httpx.Response
    ) -> tuple[list[Any], ProviderError | None]:
        """Feed bytes (``None`` = end); the completed payloads (parsed JSON) and the core's error.

        The error is returned (not raised) so the caller yields the good payloads of the same read
        first: no text before an error event is lost. The core's exception is not chained: its
        excerpt, event data and chunks are raw provider text, so only redacted copies are kept.
        """
        error: ProviderError | None = None
        redact = self._transport.redact
        try:
            payloads: list[Any] = aggregator.feed(raw) if raw is not None else aggregator.finish()
        except StreamFormatError as exc:
            url = redact(str(response.request.url))
            payloads = exc.chunks
            message = exc.message.replace(exc.excerpt, redact.cut(exc.excerpt)) if exc.excerpt else exc.message
            error = ResponseFormatError(
                f'malformed stream from {url}: {redact(message)}',
                status_code=response.status_code,
                provider=self.provider,
            )
        except ProviderStreamError as exc:
            url = redact(str(response.request.url))
            payloads = exc.chunks
            message = redact(exc.message)
            error = ProviderStreamError(
                f'{url} reported an error mid-stream: {message}',
                redact.json(exc.error) if exc.error is not None else None,
                status_code=response.status_code,
                provider_message=message,
                provider=self.provider,
                request_id=request_id_of(response.headers),
            )
        return payloads, error

    def close(self) -> None:
        """Close the blocking client if the model created it (idempotent)."""
        self._transport.close()

    async def aclose(self) -> None:
        """Close what the model created."""
        await self._transport.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _StreamReader:
    """The reading of one stream, without I/O: bytes in, chunks or a typed error out.

    Shared by :meth:`HttpChatModel.stream` and :meth:`HttpChatModel.stream_sync`, which only read bytes.
    Keeps what was delivered so every error carries it in ``partial_text``.
    """

    def __init__(self, model: HttpChatModel, response: httpx.Response, url: str) -> None:
        self._model = model
        self._response = response
        self._url = url
        self._aggregator = model.new_aggregator()
        self._fragments = ToolCallDeltas(model.stream_format)  # tool-call fragments ride along for the run events
        self._delivered: list[str] = []
        self._result: dict[str, Any] | None = None
        self._error: ProviderError | None = None

    def failed(self, error: ProviderError) -> ProviderError:
        """``error`` with the text delivered so far as its ``partial_text``."""
        error.partial_text = ''.join(self._delivered)
        return error

    def error(self) -> ProviderError:
        """The error :meth:`read` met, handed over once, for the stream to raise after the chunks before it.

        Kept here, not returned to the stream: a local of the stream's frame, which the raised error's traceback
        holds, made a reference cycle (error -> traceback -> frame -> error) per failed stream.
        """
        error, self._error = self._error, None
        assert error is not None, 'error() without a failed read()'
        return error

    def read(self, raw: bytes | None) -> tuple[list[ChatResponse], bool]:
        """The chunks of ``raw`` (``None``: the body ended) and whether an error is to be raised after yielding them.

        One chunk per payload that has text or reasoning (:meth:`HttpChatModel.delta_chunk`) or tool-call
        fragments (:class:`ToolCallDeltas`), in the payloads' order. The error is :meth:`error`.
        """
        payloads, error = self._model._feed(self._aggregator, raw, self._response)
        chunks: list[ChatResponse] = []
        delta_chunk, fragments, delivered = self._model.delta_chunk, self._fragments.feed, self._delivered
        for payload in payloads:
            if not isinstance(payload, dict):
                continue
            chunk = delta_chunk(payload)
            if chunk is not None and (text := chunk.text):
                delivered.append(text)
            deltas = fragments(payload)
            if deltas:
                chunk = tool_call_delta_chunk(chunk, deltas)
            if chunk is not None:
                chunks.append(chunk)
        if error is None and raw is None:
            self._result = self._aggregator.result()
            if self._result.get('truncated'):
                error = self._truncated(self._result.get('chunks', 0))
        if error is not None:
            self._error = self.failed(error)
        return chunks, error is not None

    def _truncated(self, chunks: int) -> IncompleteStreamError:
        content_type = self._response.headers.get('content-type', 'none')
        return IncompleteStreamError(
            f'stream from {self._model.transport.redact(self._url)} ended without its end marker after '
            f'{chunks} event(s) (content-type {content_type}); the partial answer was yielded, its tool calls '
            'are not returned',
            status_code=self._response.status_code,
            provider=self._model.provider,
        )

    def final(self) -> ChatResponse:
        """The closing chunk (:meth:`HttpChatModel.final_chunk`) of a stream that ended well."""
        return self._model.final_chunk(self._result if self._result is not None else self._aggregator.result())


def text_chunk(text: Any, reasoning: Any, *, id: Any = None, model: Any = None) -> ChatResponse | None:
    """A delta chunk with ``text`` as content and ``reasoning`` in the message metadata (``None`` if both empty).

    Built with every field passed in order (no keyword or default-factory work): one runs per streamed token.
    """
    has_text = isinstance(text, str) and text != ''
    has_reasoning = isinstance(reasoning, str) and reasoning != ''
    if not (has_text or has_reasoning):
        return None
    message = AssistantMessage(text if has_text else None, (), {'reasoning': reasoning} if has_reasoning else {})
    return ChatResponse(
        (Generation(message, None, {}),),
        id if isinstance(id, str) else None,
        model if isinstance(model, str) else None,
        None,
        {},
    )


def schema_for(schema: Mapping[str, Any], dialect: str, *, plain_ok: bool = False) -> Any:
    """``schema`` in a provider's dialect via the core's ``to_dialect`` (issue #3).

    Args:
        schema: The tool's input schema.
        dialect: ``'openai-strict'``, ``'gemini'`` or ``'anthropic'``.
        plain_ok: Send the plain schema when this build has no ``to_dialect`` (Anthropic accepts it).

    Raises:
        ProviderError: ``to_dialect`` is not available and ``plain_ok`` is false (never a wrong schema silently).
    """
    try:
        from toolweave._native import to_dialect  # type: ignore[attr-defined,unused-ignore]
    except ImportError as exc:  # pragma: no cover - only before the schema dialects are built in
        if plain_ok:
            return dict(schema)
        raise ProviderError(f'the {dialect!r} schema dialect is not available in this build') from exc
    return to_dialect(schema, dialect)
