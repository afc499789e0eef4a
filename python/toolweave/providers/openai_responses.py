"""``OpenAIResponsesModel``: the OpenAI Responses API (``/responses``) over the shared HTTP layer.

Wire mapping (OpenAI "Function calling" and "Reasoning" guides for the Responses API): messages go
out as ``input`` items (``{'role', 'content'}``); a tool call is a ``function_call`` item
(``call_id``, ``name``, ``arguments``) and its result a ``function_call_output`` item (``call_id``,
``output``). Reasoning models return ``reasoning`` items that must be passed back with the calls
they led to, so the assistant message keeps every output item in ``metadata['openai_output']`` and
they are sent back verbatim (as the guide's ``input += response.output``). With
``previous_response_id=True`` the server keeps the conversation: only the messages after the last
answer are sent, with ``previous_response_id`` set to that answer's id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolweave.chat.content import Media, UnsupportedContentError
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResponseMessage, UserMessage
from toolweave.chat.options import ChatOptions, OutputSchema, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation
from toolweave.chat.stream import StreamAggregator, usage_from_native
from toolweave.providers._base import HttpChatModel, normalized, schema_for, text_chunk
from toolweave.providers._http import HttpSettings, HttpSettingsArgs
from toolweave.providers._openai_wire import merge_options, openai_response_format

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ['OUTPUT_KEY', 'RESPONSE_ID_KEY', 'OpenAIResponsesModel', 'messages_to_responses']

OUTPUT_KEY = 'openai_output'
"""Message metadata key of the output items sent back verbatim (reasoning, function calls, messages)."""

RESPONSE_ID_KEY = 'openai_response_id'
"""Message metadata key of the id of the response the message came from (for ``previous_response_id``)."""


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    kept = message.metadata.get(OUTPUT_KEY)
    if isinstance(kept, Sequence) and kept:
        return [dict(i) for i in kept if isinstance(i, Mapping)]
    items: list[dict[str, Any]] = []
    if message.content:
        items.append({'role': 'assistant', 'content': message.content})
    for call in message.tool_calls:
        items.append({'type': 'function_call', 'call_id': call.id, 'name': call.name, 'arguments': call.arguments})
    return items


def responses_part(part: Media, where: str = 'user message') -> dict[str, Any]:
    """An ``input_image`` (URL or data URL) or ``input_file`` (``file_url``, or ``file_data`` + ``filename``) item.

    Raises:
        UnsupportedContentError: audio or video (the Responses API takes neither as input content).
    """
    if part.kind == 'image':
        return {'type': 'input_image', 'image_url': part.data_url()}
    if part.kind in ('audio', 'video'):
        raise UnsupportedContentError('openai-responses', part.media_type, where)
    if isinstance(part.data, str):
        return {'type': 'input_file', 'file_url': part.data}
    filename = part.name or f'file.{part.media_type.rsplit("/", 1)[-1]}'
    return {'type': 'input_file', 'filename': filename, 'file_data': part.data_url()}


def _content(text: str, media: Sequence[Media], where: str) -> str | list[dict[str, Any]]:
    """``text`` alone, or ``input_text`` + one item per part (``function_call_output`` takes the same list)."""
    if not media:
        return text
    head = [{'type': 'input_text', 'text': text}] if text else []
    return [*head, *(responses_part(p, where) for p in media)]


def messages_to_responses(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages as Responses API ``input`` items; media as ``input_image``/``input_file`` content.

    Raises:
        TypeError: For an object that is not one of the four message classes.
        UnsupportedContentError: a part the Responses API cannot take (see :func:`responses_part`).
    """
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            items.append({'role': 'system', 'content': message.text})
        elif isinstance(message, UserMessage):
            items.append({'role': 'user', 'content': _content(message.text, message.media, 'user message')})
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message))
        elif isinstance(message, ToolResponseMessage):
            items.extend(
                {
                    'type': 'function_call_output',
                    'call_id': r.id,
                    'output': _content(r.response_data, r.media, 'tool result'),
                }
                for r in message.responses
            )
        else:
            raise TypeError(f'cannot send a {type(message).__name__} to the Responses API')
    return items


def responses_text_format(output: OutputSchema) -> dict[str, Any]:
    """``text.format`` of a native JSON-schema output (the ``openai-strict`` dialect when strict)."""
    json_schema = openai_response_format(output)['json_schema']
    return {'type': 'json_schema', **json_schema}


def _option_fields(options: ChatOptions) -> dict[str, Any]:
    """Sampling fields and ``text.format`` (structured output) of ``options``, unset ones left out."""
    fields: dict[str, Any] = {}
    for name, wire in (('temperature', 'temperature'), ('top_p', 'top_p'), ('max_tokens', 'max_output_tokens')):
        if getattr(options, name) is not None:
            fields[wire] = getattr(options, name)
    if options.output_schema is not None:
        fields['text'] = {'format': responses_text_format(options.output_schema)}
    return fields


def _tool_choice(choice: str | Mapping[str, Any] | None) -> Any:
    if choice is None or isinstance(choice, Mapping) or choice in ('auto', 'required', 'none'):
        return dict(choice) if isinstance(choice, Mapping) else choice
    return {'type': 'function', 'name': choice}


class _ItemsAggregator:
    """The core's ``openai-responses`` aggregator plus the finished output items (reasoning items included)."""

    def __init__(self) -> None:
        self._inner = StreamAggregator('openai-responses')
        self._items: dict[int, dict[str, Any]] = {}
        self._final: list[dict[str, Any]] | None = None

    def _take(self, payloads: list[Any]) -> list[Any]:
        for p in payloads:
            if not isinstance(p, Mapping):
                continue
            if p.get('type') == 'response.output_item.done' and isinstance(p.get('item'), Mapping):
                index = p.get('output_index')
                self._items[index if isinstance(index, int) else len(self._items)] = dict(p['item'])
            elif p.get('type') in ('response.completed', 'response.incomplete'):
                response = p.get('response')
                output = response.get('output') if isinstance(response, Mapping) else None
                if isinstance(output, list) and output:
                    self._final = [dict(i) for i in output if isinstance(i, Mapping)]
        return payloads

    def feed(self, raw: bytes) -> list[Any]:
        return self._take(self._inner.feed(raw))

    def finish(self) -> list[Any]:
        return self._take(self._inner.finish())

    def result(self) -> dict[str, Any]:
        result = dict(self._inner.result())
        result['output_items'] = (
            self._final if self._final is not None else [self._items[k] for k in sorted(self._items)]
        )
        return result


class OpenAIResponsesModel(HttpChatModel):
    """A :class:`~toolweave.chat.ChatModel` for the OpenAI Responses API.

    Finish reasons are normalised from the response ``status`` (``completed`` -> ``stop``, or
    ``tool_calls`` when the model called a function; ``incomplete`` -> ``length``; ``failed`` ->
    ``error``) with the native value in ``response.metadata['native_finish_reason']``; usage is
    mapped from ``input_tokens``/``output_tokens``/``total_tokens`` and their details (native object
    kept). Reasoning summaries are in ``output.metadata['reasoning']``; reasoning items go back with
    the next round. For reasoning items when ``store`` is off, add
    ``extra_body={'store': False, 'include': ['reasoning.encrypted_content']}``.

    Example:
        >>> from toolweave.providers import OpenAIResponsesModel
        >>> OpenAIResponsesModel(api_key='sk-...', model='gpt-5-mini')
        OpenAIResponsesModel(base_url='https://api.openai.com/v1', model='gpt-5-mini')

    Args:
        base_url: API root; ``/responses`` is appended.
        api_key: Bearer token; ``None`` reads ``OPENAI_API_KEY``.
        model: Model name used when the options carry none.
        default_options: Options under the prompt's.
        settings: Connection settings (:class:`~toolweave.providers.HttpSettings`): timeouts, retries,
            extra headers, borrowed clients, size limit.
        **connection: Any :class:`~toolweave.providers.HttpSettings` field as a keyword (wins over ``settings``).
        strict: Send strict tool schemas (``openai-strict`` dialect, ``strict: true``).
        previous_response_id: Chain on the server: send only what follows the last answer, with its id.

    Raises:
        ProviderError: See :mod:`toolweave.exceptions`.
    """

    provider = 'openai'
    stream_format = 'openai-responses'
    default_base_url = 'https://api.openai.com/v1'
    api_key_env = ('OPENAI_API_KEY',)
    api_key_required = True
    answer_field = ('output', list)

    def __init__(
        self,
        model: str | None = None,
        default_options: ChatOptions | None = None,
        strict: bool = False,
        previous_response_id: bool = False,
        *,
        settings: HttpSettings | None = None,
        **connection: Unpack[HttpSettingsArgs],
    ) -> None:
        super().__init__(model, default_options, settings=settings, **connection)
        self.strict = strict
        self.previous_response_id = previous_response_id

    def endpoint(self, body: Mapping[str, Any], *, stream: bool) -> str:
        """``<base_url>/responses``."""
        return f'{self.base_url}/responses'

    def auth_headers(self) -> dict[str, str]:
        """``Authorization: Bearer <key>`` when a key is set."""
        return {'Authorization': f'Bearer {self._api_key}'} if self._api_key else {}

    def _tool(self, callback: Any) -> dict[str, Any]:
        definition = callback.tool_definition
        tool: dict[str, Any] = {'type': 'function', 'name': definition.name, 'description': definition.description}
        if self.strict:
            tool['parameters'] = schema_for(definition.input_schema, 'openai-strict')
            tool['strict'] = True
        else:
            tool['parameters'] = dict(definition.input_schema)
            tool['strict'] = False
        return tool

    def request_body(self, prompt: Prompt, *, stream: bool = False) -> dict[str, Any]:
        """The Responses body: ``model``, ``input``, ``tools``, ``tool_choice``, ``parallel_tool_calls``, sampling."""
        options = merge_options(self.default_options, prompt.options)
        messages = list(prompt.messages)
        previous: str | None = None
        if self.previous_response_id:
            for i in range(len(messages) - 1, -1, -1):
                message = messages[i]
                if isinstance(message, AssistantMessage) and isinstance(message.metadata.get(RESPONSE_ID_KEY), str):
                    previous = message.metadata[RESPONSE_ID_KEY]
                    messages = messages[i + 1 :]
                    break
        body: dict[str, Any] = {'model': (options.model if options else None) or self.model}
        if previous is not None:
            body['previous_response_id'] = previous
        body['input'] = messages_to_responses(messages)
        if options is not None:
            body.update(_option_fields(options))
        if isinstance(options, ToolCallingChatOptions):
            tools = [self._tool(cb) for cb in options.tool_callbacks]
            if tools:
                body['tools'] = tools
                if options.tool_choice is not None:
                    body['tool_choice'] = _tool_choice(options.tool_choice)
                if options.parallel_tool_calls is not None:
                    body['parallel_tool_calls'] = options.parallel_tool_calls
        if stream:
            body['stream'] = True
        if options is not None and options.extra_body:
            body.update(options.extra_body)
        return body

    def parse_response(self, data: Mapping[str, Any]) -> ChatResponse:
        """A ``response`` object: ``output_text`` parts joined, ``function_call`` items as calls, summaries as reasoning."""
        output = data.get('output')
        items = [dict(i) for i in output if isinstance(i, Mapping)] if isinstance(output, list) else []
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        extras: dict[str, dict[str, Any]] = {}
        for item in items:
            kind = item.get('type')
            if kind == 'message' and isinstance(item.get('content'), list):
                texts.extend(
                    c['text'] for c in item['content'] if isinstance(c, Mapping) and isinstance(c.get('text'), str)
                )
            elif kind == 'reasoning':
                for key in ('summary', 'content'):
                    parts = item.get(key)
                    if isinstance(parts, list):
                        reasoning.extend(
                            p['text'] for p in parts if isinstance(p, Mapping) and isinstance(p.get('text'), str)
                        )
            elif kind == 'function_call':
                call_id = str(item.get('call_id') or item.get('id') or f'call_{len(calls)}')
                arguments = item.get('arguments')
                calls.append(
                    ToolCall(
                        call_id,
                        'function',
                        str(item.get('name') or ''),
                        arguments if isinstance(arguments, str) else '',
                    )
                )
                if isinstance(item.get('id'), str):
                    extras[call_id] = {'item_id': item['id']}
        response_id = data.get('id') if isinstance(data.get('id'), str) else None
        metadata: dict[str, Any] = {OUTPUT_KEY: items}
        if response_id:
            metadata[RESPONSE_ID_KEY] = response_id
        if reasoning:
            metadata['reasoning'] = ''.join(reasoning)
        if extras:
            metadata['tool_call_extras'] = extras
        native = data.get('status')
        usage = data.get('usage')
        return ChatResponse(
            (
                Generation(
                    AssistantMessage(''.join(texts) or None, tuple(calls), metadata),
                    normalized('openai-responses', native, bool(calls)),
                ),
            ),
            id=response_id,
            model=data.get('model') if isinstance(data.get('model'), str) else None,
            usage=usage_from_native('openai-responses', usage) if isinstance(usage, Mapping) else None,
            metadata={'native_finish_reason': native},
        )

    def delta_chunk(self, payload: Mapping[str, Any]) -> ChatResponse | None:
        """``response.output_text.delta`` as text; ``reasoning_summary_text``/``reasoning_text`` deltas as reasoning."""
        kind = payload.get('type')
        if kind == 'response.output_text.delta':
            return text_chunk(payload.get('delta'), None)
        if kind in ('response.reasoning_summary_text.delta', 'response.reasoning_text.delta'):
            return text_chunk(None, payload.get('delta'))
        return None

    def new_aggregator(self) -> Any:
        """The core's aggregator, also keeping the finished output items (reasoning items are sent back)."""
        return _ItemsAggregator()

    def message_extras(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """The streamed output items (reasoning, function calls, messages) and the response id."""
        extras: dict[str, Any] = {}
        items = result.get('output_items')
        if isinstance(items, list) and items:
            extras[OUTPUT_KEY] = items
        if isinstance(result.get('id'), str):
            extras[RESPONSE_ID_KEY] = result['id']
        return extras
