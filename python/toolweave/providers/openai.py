"""``OpenAIChatModel``: any OpenAI-compatible Chat Completions server (OpenAI, vLLM, llama.cpp, Ollama's /v1, Groq).

Blocking calls go through an :class:`httpx.Client`, async calls and streams through an
:class:`httpx.AsyncClient`. Streams are aggregated by the Rust :class:`StreamAggregator`: text deltas
are forwarded chunk by chunk, tool calls only once, whole, after the stream ended (the
``ChatModel`` streaming contract), so the tool loop never sees half an argument string.

Every network wait is bounded by ``timeout`` (connect, each read, write, pool). Clients passed in
by the caller are never closed by the model; clients the model creates are closed by
:meth:`OpenAIChatModel.close` / :meth:`OpenAIChatModel.aclose` and the context managers. Without an
``async_http_client`` each async request uses its own short-lived ``AsyncClient``, so the model can
be used from several event loops (``asyncio.run`` twice) without leaking sockets; pass one in for
connection reuse.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx
import orjson

from toolweave.chat.messages import AssistantMessage
from toolweave.chat.options import ChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation, Usage
from toolweave.chat.stream import StreamAggregator
from toolweave.exceptions import ChatModelError, ProviderStreamError, StreamFormatError
from toolweave.providers._openai_wire import (
    build_request_body,
    merge_options,
    parse_completion,
    parse_tool_calls,
    provider_error_message,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ['OpenAIChatModel']

_EXCERPT = 500


def _http_error(response: httpx.Response, body: bytes) -> ChatModelError:
    text = body[:_EXCERPT].decode('utf-8', 'replace')
    provider = provider_error_message(body)
    detail = provider or text or response.reason_phrase
    return ChatModelError(
        f'{response.request.method} {response.request.url} failed with HTTP {response.status_code}: {detail}',
        status_code=response.status_code,
        body=text,
        provider_message=provider,
    )


def _transport_error(url: str, exc: httpx.HTTPError, timeout: float) -> ChatModelError:
    reason = f'{type(exc).__name__}: {exc}' if str(exc) else type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return ChatModelError(f'no answer from {url} within {timeout:g} s ({reason})')
    if isinstance(exc, httpx.ConnectError):
        return ChatModelError(f'cannot reach {url}: {reason}')
    return ChatModelError(f'request to {url} failed: {reason}')


def _decode_json(response: httpx.Response, body: bytes) -> Mapping[str, Any]:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ChatModelError(
            f'{response.request.url} answered HTTP {response.status_code} with a body that is not JSON: '
            f'{body[:_EXCERPT].decode("utf-8", "replace")!r}',
            status_code=response.status_code,
            body=body[:_EXCERPT].decode('utf-8', 'replace'),
        ) from exc
    if not isinstance(data, Mapping):
        raise ChatModelError(
            f'{response.request.url} answered with JSON that is not an object',
            body=body[:_EXCERPT].decode('utf-8', 'replace'),
        )
    if 'error' in data and 'choices' not in data:
        message = provider_error_message(body) or str(data['error'])
        raise ChatModelError(f'provider error: {message}', status_code=response.status_code, provider_message=message)
    return data


def _delta_chunk(payload: Mapping[str, Any]) -> ChatResponse | None:
    """A text/reasoning delta of one stream payload as a chunk, or ``None`` when it carries neither."""
    choices = payload.get('choices')
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    delta = choices[0].get('delta')
    if not isinstance(delta, Mapping):
        return None
    content = delta.get('content')
    reasoning = delta.get('reasoning_content') or delta.get('reasoning')
    metadata = {'reasoning': reasoning} if isinstance(reasoning, str) and reasoning else {}
    if not (isinstance(content, str) and content) and not metadata:
        return None
    return ChatResponse(
        (Generation(AssistantMessage(content if isinstance(content, str) and content else None, (), metadata)),),
        id=payload.get('id') if isinstance(payload.get('id'), str) else None,
        model=payload.get('model') if isinstance(payload.get('model'), str) else None,
    )


def _truncated_error(url: str, response: httpx.Response, result: Mapping[str, Any]) -> ChatModelError:
    content_type = response.headers.get('content-type', 'none')
    return ChatModelError(
        f'stream from {url} ended without a finish reason or [DONE] after {result.get("chunks", 0)} event(s) '
        f'(content-type {content_type}); the partial answer was yielded, its tool calls are not returned',
        status_code=response.status_code,
    )


def _delta_chunks(payloads: list[Mapping[str, Any]]) -> list[ChatResponse]:
    return [chunk for chunk in map(_delta_chunk, payloads) if chunk is not None]


def _final_chunk(result: Mapping[str, Any]) -> ChatResponse:
    """The closing chunk of a stream: whole tool calls, finish reason, usage, id and model."""
    usage = result.get('usage')
    message = AssistantMessage(None, parse_tool_calls(result.get('tool_calls')))
    return ChatResponse(
        (Generation(message, result.get('finish_reason')),),
        id=result.get('id'),
        model=result.get('model'),
        usage=Usage.from_openai(usage) if isinstance(usage, Mapping) else None,
    )


class OpenAIChatModel:
    """A :class:`~toolweave.chat.ChatModel` for the OpenAI Chat Completions API over httpx.

    Args:
        base_url: API root; ``/chat/completions`` is appended.
        api_key: Bearer token; ``None`` reads ``OPENAI_API_KEY``; no header when neither is set (local servers).
        model: Model name used when the options carry none.
        default_options: Options under the prompt's; the prompt's win field by field (``None`` = not set).
        timeout: Seconds for connect, each read, write and pool wait.
        http_client: Client for :meth:`call`; not closed by the model.
        async_http_client: Client for :meth:`acall`/:meth:`stream`; not closed by the model.
        extra_headers: Added to every request.

    Raises:
        ChatModelError: From :meth:`call`, :meth:`acall` and :meth:`stream` on non-2xx answers, connection
            failures, timeouts, bodies that are not JSON, malformed streams and error events in a stream.
    """

    def __init__(
        self,
        base_url: str = 'https://api.openai.com/v1',
        api_key: str | None = None,
        model: str | None = None,
        default_options: ChatOptions | None = None,
        timeout: float = 60.0,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip('/')
        self.model = model
        self.default_options = default_options
        self.timeout = timeout
        self._api_key = api_key if api_key is not None else os.environ.get('OPENAI_API_KEY')
        self._extra_headers = dict(extra_headers or {})
        self._http_client = http_client
        self._owns_http_client = http_client is None
        self._async_http_client = async_http_client

    def __repr__(self) -> str:
        return f'OpenAIChatModel(base_url={self.base_url!r}, model={self.model!r})'

    @property
    def url(self) -> str:
        """The Chat Completions endpoint."""
        return f'{self.base_url}/chat/completions'

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The JSON body that would be sent for ``prompt`` (options merged over the defaults)."""
        options = merge_options(self.default_options, prompt.options)
        return build_request_body(prompt, options, model=self.model, stream=stream)

    def _headers(self, stream: bool) -> dict[str, str]:
        headers = {'Content-Type': 'application/json', 'Accept': 'text/event-stream' if stream else 'application/json'}
        if self._api_key:
            headers['Authorization'] = f'Bearer {self._api_key}'
        headers.update(self._extra_headers)
        return headers

    def _sync_client(self) -> httpx.Client:
        if self._http_client is None:
            self._http_client = httpx.Client(timeout=self.timeout)
        return self._http_client

    def call(self, prompt: Prompt) -> ChatResponse:
        """Send ``prompt`` and block until the whole completion is there.

        Returns:
            One generation per choice, usage (native object kept), id and model.

        Raises:
            ChatModelError: See the class docstring.
        """
        content = orjson.dumps(self.request_body(prompt))
        try:
            response = self._sync_client().post(
                self.url, content=content, headers=self._headers(False), timeout=self.timeout
            )
        except httpx.HTTPError as exc:
            raise _transport_error(self.url, exc, self.timeout) from exc
        if not response.is_success:
            raise _http_error(response, response.content)
        return parse_completion(_decode_json(response, response.content))

    async def _async_client(self, stack: AsyncExitStack) -> httpx.AsyncClient:
        if self._async_http_client is not None:
            return self._async_http_client
        return await stack.enter_async_context(httpx.AsyncClient(timeout=self.timeout))

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """Async form of :meth:`call`."""
        content = orjson.dumps(self.request_body(prompt))
        async with AsyncExitStack() as stack:
            client = await self._async_client(stack)
            try:
                response = await client.post(
                    self.url, content=content, headers=self._headers(False), timeout=self.timeout
                )
            except httpx.HTTPError as exc:
                raise _transport_error(self.url, exc, self.timeout) from exc
        if not response.is_success:
            raise _http_error(response, response.content)
        return parse_completion(_decode_json(response, response.content))

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Send ``prompt`` with ``stream: true`` and yield chunks as they arrive.

        Yields:
            One chunk per payload that carries text (``output.content``) or reasoning
            (``output.metadata['reasoning']``), then one final chunk with the whole tool calls, the
            finish reason, the usage (when the server reported it), id and model.

        Raises:
            ChatModelError: See the class docstring; an error event arriving mid-stream is raised when it
                arrives, after the chunks before it were yielded. A stream that ends without a finish
                reason or ``[DONE]`` (cut short, or a body that is not SSE at all) raises after its text
                was yielded; its partial tool calls are never returned, so they are never executed.
        """
        content = orjson.dumps(self.request_body(prompt, stream=True))
        aggregator = StreamAggregator('openai-chat')
        async with AsyncExitStack() as stack:
            client = await self._async_client(stack)
            try:
                request = client.build_request('POST', self.url, content=content, headers=self._headers(True))
                response = await client.send(request, stream=True)
                stack.push_async_callback(response.aclose)
                if not response.is_success:
                    raise _http_error(response, await response.aread())
                async for raw in response.aiter_bytes():
                    payloads, error = self._feed(aggregator, raw)
                    for chunk in _delta_chunks(payloads):
                        yield chunk
                    if error is not None:
                        raise error
            except httpx.HTTPError as exc:
                raise _transport_error(self.url, exc, self.timeout) from exc
        payloads, error = self._feed(aggregator, None)
        for chunk in _delta_chunks(payloads):
            yield chunk
        if error is not None:
            raise error
        result = aggregator.result()
        if result.get('truncated'):
            raise _truncated_error(self.url, response, result)
        yield _final_chunk(result)

    def _feed(
        self, aggregator: StreamAggregator, raw: bytes | None
    ) -> tuple[list[Mapping[str, Any]], ChatModelError | None]:
        """Feed bytes (``None`` = end of stream); return the completed payloads and the core's error, if any.

        The error comes back as a :class:`ChatModelError` that the caller raises after yielding the
        good payloads of the same read, so no text before an error event is lost.
        """
        error: ChatModelError | None = None
        try:
            payloads: list[Any] = aggregator.feed(raw) if raw is not None else aggregator.finish()
        except StreamFormatError as exc:
            payloads, error = exc.chunks, ChatModelError(f'malformed stream from {self.url}: {exc}')
            error.__cause__ = exc
        except ProviderStreamError as exc:
            payloads = exc.chunks
            error = ChatModelError(
                f'{self.url} reported an error mid-stream: {exc.message}', provider_message=exc.message
            )
            error.__cause__ = exc
        return [p for p in payloads if isinstance(p, Mapping)], error

    def close(self) -> None:
        """Close the blocking client if the model created it (idempotent)."""
        if self._owns_http_client and self._http_client is not None:
            self._http_client.close()
            self._http_client = None

    async def aclose(self) -> None:
        """Close what the model created (async clients are per request, so only the blocking one)."""
        self.close()

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
