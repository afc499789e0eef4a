"""``AnthropicChatModel``: the Anthropic Messages API (``/v1/messages``) over the shared HTTP layer.

Wire mapping (Anthropic "Tool use" and "Extended thinking" docs): system messages go to the top-level
``system`` field; an assistant turn is a list of content blocks (``text``, ``thinking`` with its
``signature``, ``tool_use`` with a parsed ``input``); tool results are ``tool_result`` blocks in the
next ``user`` turn; consecutive turns of one role are merged. Thinking blocks must go back unchanged
with their signatures while a tool loop runs, so the assistant message keeps the blocks the API
returned in ``metadata['anthropic_content']`` and they are sent back verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolweave.chat.content import Media, UnsupportedContentError
from toolweave.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.chat.options import ChatOptions, NativeOutputUnsupportedError, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import usage_from_native
from toolweave.providers._base import HttpChatModel, normalized, schema_for, text_chunk
from toolweave.providers._http import HttpSettings, HttpSettingsArgs
from toolweave.providers._openai_wire import merge_options
from toolweave.providers._wire import arguments_json, arguments_value

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ['AnthropicChatModel']

CONTENT_KEY = 'anthropic_content'
"""Message metadata key of the content blocks sent back verbatim."""

_TOOL_BLOCKS = ('tool_use', 'server_tool_use', 'mcp_tool_use')


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    kept = message.metadata.get(CONTENT_KEY)
    if isinstance(kept, Sequence) and kept:
        return [dict(b) for b in kept if isinstance(b, Mapping)]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({'type': 'text', 'text': message.content})
    for call in message.tool_calls:
        blocks.append({'type': 'tool_use', 'id': call.id, 'name': call.name, 'input': arguments_value(call.arguments)})
    return blocks


_IMAGE_TYPES = ('image/jpeg', 'image/png', 'image/gif', 'image/webp')


def anthropic_block(part: Media, where: str = 'user message') -> dict[str, Any]:
    """An ``image`` or ``document`` content block (base64 or URL source; plain text as a ``text`` source).

    Raises:
        UnsupportedContentError: audio, video, or an image/file type the Messages API does not take.
    """
    if part.media_type in _IMAGE_TYPES:
        kind = 'image'
    elif part.media_type == 'application/pdf' or (part.media_type == 'text/plain' and not part.is_url):
        kind = 'document'
    else:
        raise UnsupportedContentError('anthropic', part.media_type, where, 'it takes JPEG/PNG/GIF/WebP, PDF, text')
    if isinstance(part.data, str):
        source: dict[str, Any] = {'type': 'url', 'url': part.data}
    elif part.media_type == 'text/plain':
        source = {'type': 'text', 'media_type': 'text/plain', 'data': part.data.decode('utf-8', 'replace')}
    else:
        source = {'type': 'base64', 'media_type': part.media_type, 'data': part.base64()}
    return {'type': kind, 'source': source}


def _tool_result(response: ToolResponse) -> dict[str, Any]:
    """A ``tool_result`` block: text content, or text + image/document blocks when the tool returned media."""
    if not response.media:
        return {'type': 'tool_result', 'tool_use_id': response.id, 'content': response.response_data}
    text = [{'type': 'text', 'text': response.response_data}] if response.response_data else []
    blocks = [anthropic_block(p, 'tool result') for p in response.media]
    return {'type': 'tool_result', 'tool_use_id': response.id, 'content': [*text, *blocks]}


def _turn(message: Message) -> tuple[str, list[dict[str, Any]]] | None:
    if isinstance(message, SystemMessage):
        return None
    if isinstance(message, UserMessage):
        text = [{'type': 'text', 'text': message.text}] if message.text or not message.media else []
        return 'user', [*text, *(anthropic_block(p) for p in message.media)]
    if isinstance(message, AssistantMessage):
        return 'assistant', _assistant_blocks(message)
    if isinstance(message, ToolResponseMessage):
        return 'user', [_tool_result(r) for r in message.responses]
    raise TypeError(f'cannot send a {type(message).__name__} to Anthropic')


def messages_to_anthropic(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages[])`` for the Messages API: system texts joined, same-role turns merged.

    Raises:
        TypeError: For an object that is not one of the four message classes.
        UnsupportedContentError: a part the Messages API cannot take (see :func:`anthropic_block`).
    """
    system = [m.text for m in messages if isinstance(m, SystemMessage)]
    out: list[dict[str, Any]] = []
    for message in messages:
        turn = _turn(message)
        if turn is None or not turn[1]:
            continue
        role, blocks = turn
        if out and out[-1]['role'] == role:
            out[-1]['content'].extend(blocks)
        else:
            out.append({'role': role, 'content': blocks})
    return ('\n\n'.join(system) if system else None), out


def _tool_choice(options: ToolCallingChatOptions) -> dict[str, Any] | None:
    choice = options.tool_choice
    if isinstance(choice, Mapping):
        mapped: dict[str, Any] = dict(choice)
    elif choice is None:
        mapped = {'type': 'auto'} if options.parallel_tool_calls is False else {}
    else:
        mapped = {'type': {'required': 'any', 'auto': 'auto', 'none': 'none'}.get(choice, choice)}
    if options.parallel_tool_calls is False and mapped.get('type') in ('auto', 'any', 'tool'):
        mapped['disable_parallel_tool_use'] = True
    return mapped or None


def blocks_from_stream(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The aggregator's blocks as wire content blocks (``input_raw`` parsed into ``input``)."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        wire = {k: v for k, v in block.items() if k != 'input_raw'}
        if block.get('type') in _TOOL_BLOCKS or 'input_raw' in block:
            raw = block.get('input_raw')
            wire['input'] = arguments_value(raw) if isinstance(raw, str) and raw else block.get('input') or {}
        out.append(wire)
    return out


class AnthropicChatModel(HttpChatModel):
    """A :class:`~toolweave.chat.ChatModel` for the Anthropic Messages API.

    Finish reasons are normalised (``end_turn`` -> ``stop``, ``tool_use`` -> ``tool_calls``,
    ``max_tokens`` -> ``length``) with the native value in ``response.metadata['native_finish_reason']``;
    usage is mapped from ``input_tokens``/``output_tokens`` (native object kept). Thinking is enabled
    through ``extra_body={'thinking': {'type': 'enabled', 'budget_tokens': 1024}}``; thinking text is
    in ``output.metadata['reasoning']`` and the signed blocks go back on the next round.

    Example:
        >>> from toolweave.providers import AnthropicChatModel
        >>> AnthropicChatModel(api_key='sk-ant-...', model='claude-sonnet-4-5')
        AnthropicChatModel(base_url='https://api.anthropic.com', model='claude-sonnet-4-5')

    Args:
        base_url: API root; ``/v1/messages`` is appended.
        api_key: ``x-api-key``; ``None`` reads ``ANTHROPIC_API_KEY``.
        model: Model name used when the options carry none.
        default_options: Options under the prompt's.
        settings: Connection settings (:class:`~toolweave.providers.HttpSettings`): timeouts, retries,
            extra headers, borrowed clients, size limit.
        **connection: Any :class:`~toolweave.providers.HttpSettings` field as a keyword (wins over ``settings``).
        max_tokens: ``max_tokens`` when the options set none (the API requires it).
        anthropic_version: The ``anthropic-version`` header.

    Raises:
        ProviderError: See :mod:`toolweave.exceptions`.
    """

    provider = 'anthropic'
    stream_format = 'anthropic'
    default_base_url = 'https://api.anthropic.com'
    api_key_env = ('ANTHROPIC_API_KEY',)
    api_key_required = True
    answer_field = ('content', list)

    def __init__(
        self,
        model: str | None = None,
        default_options: ChatOptions | None = None,
        max_tokens: int = 4096,
        anthropic_version: str = '2023-06-01',
        *,
        settings: HttpSettings | None = None,
        **connection: Unpack[HttpSettingsArgs],
    ) -> None:
        super().__init__(model, default_options, settings=settings, **connection)
        self.max_tokens = max_tokens
        self.anthropic_version = anthropic_version

    def endpoint(self, body: Mapping[str, Any], *, stream: bool) -> str:
        """``<base_url>/v1/messages``."""
        return f'{self.base_url}/v1/messages'

    def auth_headers(self) -> dict[str, str]:
        """``x-api-key`` (when set) and ``anthropic-version``."""
        headers = {'anthropic-version': self.anthropic_version}
        if self._api_key:
            headers['x-api-key'] = self._api_key
        return headers

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The Messages API body: ``model``, ``max_tokens``, ``system``, ``messages``, ``tools``, ``tool_choice``."""
        options = merge_options(self.default_options, prompt.options)
        system, messages = messages_to_anthropic(prompt.messages)
        body: dict[str, Any] = {
            'model': (options.model if options else None) or self.model,
            'max_tokens': (options.max_tokens if options else None) or self.max_tokens,
        }
        if system is not None:
            body['system'] = system
        body['messages'] = messages
        if options is not None:
            for name in ('temperature', 'top_p'):
                if getattr(options, name) is not None:
                    body[name] = getattr(options, name)
            if options.stop is not None:
                body['stop_sequences'] = list(options.stop)
            if options.output_schema is not None:
                raise NativeOutputUnsupportedError('anthropic')
        if isinstance(options, ToolCallingChatOptions):
            tools = [
                {
                    'name': cb.tool_definition.name,
                    'description': cb.tool_definition.description,
                    'input_schema': schema_for(cb.tool_definition.input_schema, 'anthropic', plain_ok=True),
                }
                for cb in options.tool_callbacks
            ]
            if tools:
                body['tools'] = tools
                choice = _tool_choice(options)
                if choice is not None:
                    body['tool_choice'] = choice
        if stream:
            body['stream'] = True
        if options is not None and options.extra_body:
            body.update(options.extra_body)
        return body

    def parse_response(self, data: Mapping[str, Any]) -> ChatResponse:
        """A ``message`` object: text blocks joined, ``tool_use`` blocks as calls, thinking as reasoning."""
        content = data.get('content')
        blocks = [dict(b) for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
        text = ''.join(b['text'] for b in blocks if b.get('type') == 'text' and isinstance(b.get('text'), str))
        thinking = ''.join(
            b['thinking'] for b in blocks if b.get('type') == 'thinking' and isinstance(b.get('thinking'), str)
        )
        calls = tuple(
            ToolCall(
                str(b.get('id') or f'call_{i}'), 'function', str(b.get('name') or ''), arguments_json(b.get('input'))
            )
            for i, b in enumerate(blocks)
            if b.get('type') == 'tool_use'
        )
        metadata: dict[str, Any] = {CONTENT_KEY: blocks}
        if thinking:
            metadata['reasoning'] = thinking
        native = data.get('stop_reason')
        usage = data.get('usage')
        return ChatResponse(
            (
                Generation(
                    AssistantMessage(text or None, calls, metadata), normalized('anthropic', native, bool(calls))
                ),
            ),
            id=data.get('id') if isinstance(data.get('id'), str) else None,
            model=data.get('model') if isinstance(data.get('model'), str) else None,
            usage=usage_from_native('anthropic', usage) if isinstance(usage, Mapping) else None,
            metadata={'native_finish_reason': native},
        )

    def delta_chunk(self, payload: Mapping[str, Any]) -> ChatResponse | None:
        """``content_block_delta``: ``text_delta`` as text, ``thinking_delta`` as reasoning."""
        if payload.get('type') != 'content_block_delta':
            return None
        delta = payload.get('delta')
        if type(delta) is not dict:  # parsed JSON: a plain dict (exact type checks are cheapest)
            return None
        if delta.get('type') == 'text_delta':
            return text_chunk(delta.get('text'), None)
        if delta.get('type') == 'thinking_delta':
            return text_chunk(None, delta.get('thinking'))
        return None

    def message_extras(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """The streamed content blocks in wire shape, to send back next round."""
        blocks = result.get('blocks')
        return {CONTENT_KEY: blocks_from_stream(blocks)} if isinstance(blocks, list) and blocks else {}
