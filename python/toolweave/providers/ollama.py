"""``OllamaChatModel``: Ollama's native ``/api/chat`` (NDJSON stream, tools, ``options``).

Wire mapping (Ollama API docs, "Generate a chat completion"): tools go out in the OpenAI function
shape; tool calls come back whole with parsed ``arguments`` objects (no id: ``call-<index>`` is
made up, as the stream aggregator does); tool results are ``{'role': 'tool', 'tool_name', 'content'}``;
sampling settings go under ``options`` (``max_tokens`` -> ``num_predict``); thinking text
(``message.thinking``) is reasoning. Ollama says ``done_reason: 'stop'`` after tool calls; the
normalised finish reason is ``tool_calls``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from toolweave.chat.content import Media, UnsupportedContentError
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResponseMessage, UserMessage
from toolweave.chat.options import ChatOptions, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import usage_from_native
from toolweave.providers._base import HttpChatModel, normalized, text_chunk
from toolweave.providers._http import HttpSettings, HttpSettingsArgs
from toolweave.providers._openai_wire import merge_options
from toolweave.providers._wire import arguments_value

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ['OllamaChatModel']

_USAGE_KEYS = (
    'prompt_eval_count',
    'eval_count',
    'total_duration',
    'load_duration',
    'prompt_eval_duration',
    'eval_duration',
)


def ollama_images(media: Sequence[Media], where: str = 'user message') -> dict[str, Any]:
    """``{'images': [<base64>, ...]}`` for the message's parts (``{}`` without any).

    Raises:
        UnsupportedContentError: a part that is not an image, or an image URL (``/api/chat`` takes base64 images only).
    """
    for part in media:
        if part.kind != 'image' or part.is_url:
            what = part.media_type + (' URL' if part.is_url else '')
            raise UnsupportedContentError('ollama', what, where, '/api/chat takes images as bytes only')
    return {'images': [part.base64() for part in media]} if media else {}


def message_to_ollama(message: Message) -> list[dict[str, Any]]:
    """One of our messages as ``/api/chat`` ``messages[]`` entries (one per tool response).

    Images (of a user message, or returned by a tool) go in the entry's ``images`` list.

    Raises:
        TypeError: For an object that is not one of the four message classes.
        UnsupportedContentError: a part Ollama cannot take (see :func:`ollama_images`).
    """
    if isinstance(message, SystemMessage):
        return [{'role': 'system', 'content': message.text}]
    if isinstance(message, UserMessage):
        return [{'role': 'user', 'content': message.text, **ollama_images(message.media)}]
    if isinstance(message, AssistantMessage):
        entry: dict[str, Any] = {'role': 'assistant', 'content': message.content or ''}
        if message.tool_calls:
            entry['tool_calls'] = [
                {'function': {'name': c.name, 'arguments': arguments_value(c.arguments)}} for c in message.tool_calls
            ]
        return [entry]
    if isinstance(message, ToolResponseMessage):
        return [
            {'role': 'tool', 'tool_name': r.name, 'content': r.response_data, **ollama_images(r.media, 'tool result')}
            for r in message.responses
        ]
    raise TypeError(f'cannot send a {type(message).__name__} to Ollama')


class OllamaChatModel(HttpChatModel):
    """A :class:`~toolweave.chat.ChatModel` for Ollama's native chat API (``/api/chat``).

    For Ollama's OpenAI-compatible ``/v1`` endpoint use :class:`OpenAIChatModel` instead.

    Example:
        >>> from toolweave.providers import OllamaChatModel
        >>> OllamaChatModel(model='llama3.2')
        OllamaChatModel(base_url='http://localhost:11434', model='llama3.2')

    Args:
        base_url: Server root; ``/api/chat`` is appended.
        api_key: Optional bearer token (for a proxy in front of Ollama); ``None`` reads ``OLLAMA_API_KEY``.
        model: Model name used when the options carry none.
        default_options: Options under the prompt's; ``extra_body={'options': {...}}`` adds Ollama options.
        settings: Connection settings (:class:`~toolweave.providers.HttpSettings`): timeouts, retries,
            extra headers, borrowed clients, size limit.
        **connection: Any :class:`~toolweave.providers.HttpSettings` field as a keyword (wins over ``settings``).
        keep_alive: Ollama's ``keep_alive`` (e.g. ``'5m'``), sent when set.

    Raises:
        ProviderError: See :mod:`toolweave.exceptions`.
    """

    provider = 'ollama'
    stream_format = 'ollama'
    default_base_url = 'http://localhost:11434'
    api_key_env = ('OLLAMA_API_KEY',)
    answer_field = ('message', dict)

    def __init__(
        self,
        model: str | None = None,
        default_options: ChatOptions | None = None,
        keep_alive: str | None = None,
        *,
        settings: HttpSettings | None = None,
        **connection: Unpack[HttpSettingsArgs],
    ) -> None:
        super().__init__(model, default_options, settings=settings, **connection)
        self.keep_alive = keep_alive

    def endpoint(self, body: Mapping[str, Any], *, stream: bool) -> str:
        """``<base_url>/api/chat``."""
        return f'{self.base_url}/api/chat'

    def auth_headers(self) -> dict[str, str]:
        """``Authorization: Bearer <key>`` when a key is set."""
        return {'Authorization': f'Bearer {self._api_key}'} if self._api_key else {}

    def headers(self, stream: bool) -> dict[str, str]:
        """JSON in, NDJSON out when streaming."""
        headers = super().headers(stream)
        if stream:
            headers['Accept'] = 'application/x-ndjson'
        return headers

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The ``/api/chat`` body: ``model``, ``messages``, ``tools``, ``stream``, ``options``."""
        options = merge_options(self.default_options, prompt.options)
        body: dict[str, Any] = {
            'model': (options.model if options else None) or self.model,
            'messages': [entry for m in prompt.messages for entry in message_to_ollama(m)],
        }
        if isinstance(options, ToolCallingChatOptions):
            tools = [cb.tool_definition.to_openai() for cb in options.tool_callbacks]
            if tools:
                body['tools'] = tools
        body['stream'] = stream
        if options is not None and options.output_schema is not None:
            body['format'] = dict(options.output_schema.schema)
        sampling: dict[str, Any] = {}
        if options is not None:
            for ours, theirs in (
                ('temperature', 'temperature'),
                ('top_p', 'top_p'),
                ('seed', 'seed'),
                ('max_tokens', 'num_predict'),
            ):
                if getattr(options, ours) is not None:
                    sampling[theirs] = getattr(options, ours)
            if options.stop is not None:
                sampling['stop'] = list(options.stop)
        extra = dict(options.extra_body) if options is not None and options.extra_body else {}
        extra_options = extra.pop('options', None)
        if isinstance(extra_options, Mapping):
            sampling.update(extra_options)
        if sampling:
            body['options'] = sampling
        if self.keep_alive is not None:
            body['keep_alive'] = self.keep_alive
        body.update(extra)
        return body

    def parse_response(self, data: Mapping[str, Any]) -> ChatResponse:
        """A ``done: true`` chat object: message text, thinking, whole tool calls, counts as usage."""
        message = data.get('message')
        message = message if isinstance(message, Mapping) else {}
        raw_calls = message.get('tool_calls')
        calls: list[ToolCall] = []
        for i, item in enumerate(raw_calls if isinstance(raw_calls, list) else []):
            fn = item.get('function') if isinstance(item, Mapping) else None
            if not isinstance(fn, Mapping):
                continue
            args = fn.get('arguments')
            text = args if isinstance(args, str) else orjson.dumps(args if args is not None else {}).decode()
            calls.append(ToolCall(str(item.get('id') or f'call-{i}'), 'function', str(fn.get('name') or ''), text))
        metadata: dict[str, Any] = {}
        if isinstance(message.get('thinking'), str) and message['thinking']:
            metadata['reasoning'] = message['thinking']
        native = data.get('done_reason') or ('stop' if data.get('done') is True else None)
        usage = {k: data[k] for k in _USAGE_KEYS if k in data}
        content = message.get('content')
        return ChatResponse(
            (
                Generation(
                    AssistantMessage(content if isinstance(content, str) and content else None, tuple(calls), metadata),
                    normalized('ollama', native, bool(calls)),
                ),
            ),
            model=data.get('model') if isinstance(data.get('model'), str) else None,
            usage=usage_from_native('ollama', usage) if usage else None,
            metadata={'native_finish_reason': native},
        )

    def delta_chunk(self, payload: Mapping[str, Any]) -> ChatResponse | None:
        """``message.content`` as text, ``message.thinking`` as reasoning."""
        message = payload.get('message')
        if not isinstance(message, Mapping):
            return None
        return text_chunk(message.get('content'), message.get('thinking'), model=payload.get('model'))
