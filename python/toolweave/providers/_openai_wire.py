"""OpenAI Chat Completions wire format: our messages and options -> request body, response JSON -> ``ChatResponse``.

Kept apart from the transport (:mod:`toolweave.providers.openai`) so the mapping can be read and
tested on its own. Every function here is pure: no I/O, no global state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, Literal

import orjson

from toolweave.chat.content import Media, UnsupportedContentError, tool_media_stand_in
from toolweave.chat.finish import normalize_finish_reason
from toolweave.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.chat.options import ChatOptions, OutputSchema, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation, Usage
from toolweave.tools.definition import ToolDefinition

__all__ = [
    'ToolMedia',
    'build_request_body',
    'merge_options',
    'message_to_openai',
    'openai_part',
    'openai_response_format',
    'openai_tool',
    'parse_completion',
    'parse_tool_calls',
    'tool_media_for_model',
]

_SAMPLING_FIELDS = ('temperature', 'max_tokens', 'top_p', 'seed')


def _unset(name: str, value: Any) -> bool:
    # ``stop=()`` is a real setting ("no stop sequences"); empty tool collections mean "not set".
    if value is None:
        return True
    return name != 'stop' and isinstance(value, (tuple, frozenset, Mapping)) and not value


def merge_options(default: ChatOptions | None, override: ChatOptions | None) -> ChatOptions | None:
    """Overlay ``override`` on ``default`` field by field; ``None`` (or an empty mapping/tuple) means "not set".

    The result has the class of ``override`` when both are given (so a prompt's
    :class:`ToolCallingChatOptions` keeps its tools), else the class of whichever is given.
    ``extra_body`` mappings are merged key by key, the override winning.

    Args:
        default: The model's default options.
        override: The prompt's options.

    Returns:
        The merged options, or ``None`` when neither is given.
    """
    if default is None:
        return override
    if override is None:
        return default
    target_cls = type(override) if isinstance(override, type(default)) else type(default)
    values: dict[str, Any] = {}
    for f in fields(target_cls):
        base = getattr(default, f.name, None)
        top = getattr(override, f.name, None)
        if f.name == 'extra_body':
            values[f.name] = {**dict(base or {}), **dict(top or {})}
        else:
            values[f.name] = base if _unset(f.name, top) and base is not None else top
    return target_cls(**values)


ToolMedia = Literal['user_message', 'text']
"""How Chat Completions gets a tool's media: a following user message with them, or a text stand-in."""

_AUDIO_FORMATS = {'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3'}
_TEXT_ONLY_PREFIXES = ('gpt-3.5', 'o1-mini', 'o3-mini', 'gpt-4-0', 'gpt-4-32k', 'babbage', 'davinci')


def tool_media_for_model(model: str | None) -> ToolMedia:
    """``'text'`` for a model known to see no images (``gpt-3.5*``, ``o1-mini``, ``o3-mini``...), else ``'user_message'``.

    Chat Completions takes only text in a ``tool`` message; OpenAI's documented work-around for an image a tool
    returned is a user message with it after the tool messages. A model that cannot see images gets the part's
    text stand-in (:func:`~toolweave.chat.content.tool_media_stand_in`) in the tool message instead.
    """
    name = (model or '').rsplit('/', 1)[-1]
    return 'text' if name.startswith(_TEXT_ONLY_PREFIXES) else 'user_message'


def openai_part(part: Media, where: str = 'user message') -> dict[str, Any]:
    """One Chat Completions content part: ``image_url`` (URL or data URL), ``file`` (base64 ``file_data``), ``input_audio``.

    Raises:
        UnsupportedContentError: a file or audio given as a URL (Chat Completions takes their bytes only), or
            a kind Chat Completions has no part for (video).
    """
    if part.kind == 'image':
        return {'type': 'image_url', 'image_url': {'url': part.data_url()}}
    if part.is_url:
        raise UnsupportedContentError('openai', part.media_type, where, 'Chat Completions takes files as bytes only')
    if part.kind == 'audio' and part.media_type in _AUDIO_FORMATS:
        return {
            'type': 'input_audio',
            'input_audio': {'data': part.base64(), 'format': _AUDIO_FORMATS[part.media_type]},
        }
    if part.kind in ('document', 'text', 'file'):
        filename = part.name or f'file.{part.media_type.rsplit("/", 1)[-1]}'
        return {'type': 'file', 'file': {'filename': filename, 'file_data': part.data_url()}}
    raise UnsupportedContentError('openai', part.media_type, where)


def _user_content(text: str, media: Sequence[Media]) -> str | list[dict[str, Any]]:
    if not media:
        return text
    head = [{'type': 'text', 'text': text}] if text else []
    return [*head, *(openai_part(p) for p in media)]


def _tool_entries(message: ToolResponseMessage, tool_media: ToolMedia) -> list[dict[str, Any]]:
    """The ``tool`` entries, then (``'user_message'``) one user message with every part the tools returned."""
    entries: list[dict[str, Any]] = []
    attached: list[dict[str, Any]] = []
    for r in message.responses:
        text = r.response_data
        if r.media and tool_media == 'text':
            text = '\n'.join(filter(None, (text, tool_media_stand_in(r.media))))
        elif r.media:
            text = text or f'The result of {r.name} is attached in the next message.'
            attached.append({'type': 'text', 'text': f'Content returned by tool {r.name} (call {r.id}):'})
            attached.extend(openai_part(p, 'tool result') for p in r.media)
        entries.append({'role': 'tool', 'tool_call_id': r.id, 'content': text})
    if attached:
        entries.append({'role': 'user', 'content': attached})
    return entries


def message_to_openai(message: Message, tool_media: ToolMedia = 'user_message') -> list[dict[str, Any]]:
    """One of our messages as OpenAI ``messages[]`` entries.

    A :class:`ToolResponseMessage` becomes one ``{'role': 'tool', 'tool_call_id', 'content'}`` entry
    per response; when tools returned media, ``tool_media`` says where they go (see
    :func:`tool_media_for_model`). A user message with media sends ``content`` as parts (text first).
    Every other message becomes exactly one entry. Empty tool-call arguments are sent
    as ``'{}'`` because several servers reject an empty string.

    Raises:
        TypeError: For an object that is not one of the four message classes.
        UnsupportedContentError: a part Chat Completions cannot take (see :func:`openai_part`).
    """
    if isinstance(message, SystemMessage):
        return [{'role': 'system', 'content': message.text}]
    if isinstance(message, UserMessage):
        return [{'role': 'user', 'content': _user_content(message.text, message.media)}]
    if isinstance(message, AssistantMessage):
        entry: dict[str, Any] = {'role': 'assistant', 'content': message.content}
        if message.tool_calls:
            entry['tool_calls'] = [
                {
                    'id': call.id,
                    'type': call.type or 'function',
                    'function': {'name': call.name, 'arguments': call.arguments or '{}'},
                }
                for call in message.tool_calls
            ]
        elif message.content is None:
            entry['content'] = ''
        return [entry]
    if isinstance(message, ToolResponseMessage):
        return _tool_entries(message, tool_media)
    raise TypeError(f'cannot send a {type(message).__name__} to an OpenAI-compatible model')


def openai_response_format(output: OutputSchema) -> dict[str, Any]:
    """``response_format`` of a native JSON-schema output: ``json_schema`` in the ``openai-strict`` dialect."""
    from toolweave.core import to_dialect

    schema = to_dialect(output.schema, 'openai-strict') if output.strict else dict(output.schema)
    return {'type': 'json_schema', 'json_schema': {'name': output.name, 'schema': schema, 'strict': output.strict}}


def openai_tool(definition: ToolDefinition, *, strict: bool) -> dict[str, Any]:
    """One ``tools[]`` entry; with ``strict`` the schema goes through the ``openai-strict`` dialect.

    Never strict by default: OpenAI rejects ``strict: true`` with a schema that is not in its subset
    (every property required, ``additionalProperties: false``), so the flag is only set together with
    the rewritten schema.
    """
    entry = definition.to_openai()
    if strict:
        from toolweave.providers._base import schema_for

        entry['function']['parameters'] = schema_for(definition.input_schema, 'openai-strict')
        entry['function']['strict'] = True
    return entry


def build_request_body(
    prompt: Prompt, options: ChatOptions | None, *, model: str | None, stream: bool, strict: bool = False
) -> dict[str, Any]:
    """The Chat Completions request body for ``prompt`` under the already merged ``options``.

    Fields that are ``None`` are left out so the server applies its own defaults. ``tools`` comes from
    ``options.tool_callbacks`` (``tool_choice``/``parallel_tool_calls`` only when set, the latter only
    with tools); ``extra_body`` is merged last and may override anything.

    Args:
        prompt: Messages to send.
        options: Merged options (see :func:`merge_options`).
        model: Fallback model name when the options carry none.
        stream: Add ``stream: true`` and ``stream_options: {'include_usage': true}``.
        strict: Send tool schemas in the ``openai-strict`` dialect with ``strict: true``.
    """
    body: dict[str, Any] = {}
    model_name = (options.model if options else None) or model
    if model_name:
        body['model'] = model_name
    tool_media = tool_media_for_model(model_name)
    body['messages'] = [entry for message in prompt.messages for entry in message_to_openai(message, tool_media)]
    if options is not None:
        for name in _SAMPLING_FIELDS:
            value = getattr(options, name)
            if value is not None:
                body[name] = value
        if options.stop is not None:
            body['stop'] = list(options.stop)
        if options.output_schema is not None:
            body['response_format'] = openai_response_format(options.output_schema)
    if isinstance(options, ToolCallingChatOptions):
        tools = [openai_tool(cb.tool_definition, strict=strict) for cb in options.tool_callbacks]
        if tools:
            body['tools'] = tools
            if options.parallel_tool_calls is not None:
                body['parallel_tool_calls'] = options.parallel_tool_calls
        if options.tool_choice is not None:
            choice = options.tool_choice
            body['tool_choice'] = choice if isinstance(choice, str) else dict(choice)
    if stream:
        body['stream'] = True
        body['stream_options'] = {'include_usage': True}
    if options is not None and options.extra_body:
        body.update(options.extra_body)
    return body


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ''
    if isinstance(arguments, str):
        return arguments
    return orjson.dumps(arguments).decode()


def parse_tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """``message.tool_calls`` of a completion (or the aggregator's list) as :class:`ToolCall` s.

    Accepts both the wire shape (``{'id', 'type', 'function': {'name', 'arguments'}}``) and the flat
    shape of the stream aggregator (``{'index', 'id', 'type', 'name', 'arguments'}``). Object arguments
    (some servers send them parsed) are serialised back to JSON text; a missing id becomes
    ``'call_<position>'``.
    """
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        return ()
    calls: list[ToolCall] = []
    for position, item in enumerate(raw):
        if not isinstance(item, Mapping):
            continue
        function = item.get('function')
        source: Mapping[str, Any] = function if isinstance(function, Mapping) else item
        calls.append(
            ToolCall(
                id=str(item.get('id') or f'call_{position}'),
                type=str(item.get('type') or 'function'),
                name=str(source.get('name') or ''),
                arguments=_arguments_text(source.get('arguments')),
            )
        )
    return tuple(calls)


def _reasoning(message: Mapping[str, Any]) -> str | None:
    for key in ('reasoning_content', 'reasoning'):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def parse_completion(payload: Mapping[str, Any]) -> ChatResponse:
    """A non-streamed ``chat.completion`` JSON object as a :class:`ChatResponse`.

    One :class:`Generation` per choice (reasoning text under ``output.metadata['reasoning']``), finish
    reasons normalised (the first choice's own value in ``metadata['native_finish_reason']``), usage via :meth:`Usage.from_openai` (native object kept). ``created`` and
    ``system_fingerprint`` go to the response metadata when present.
    """
    generations: list[Generation] = []
    native_finish: list[str | None] = []
    choices = payload.get('choices')
    for choice in choices if isinstance(choices, list) else []:
        if not isinstance(choice, Mapping):
            continue
        message = choice.get('message')
        message = message if isinstance(message, Mapping) else {}
        content = message.get('content')
        metadata: dict[str, Any] = {}
        reasoning = _reasoning(message)
        if reasoning is not None:
            metadata['reasoning'] = reasoning
        finish = choice.get('finish_reason')
        calls = parse_tool_calls(message.get('tool_calls'))
        native_finish.append(finish if isinstance(finish, str) else None)
        generations.append(
            Generation(
                AssistantMessage(
                    content if isinstance(content, str) else None,
                    calls,
                    metadata,
                ),
                normalize_finish_reason('openai-chat', native_finish[-1], bool(calls)),
            )
        )
    usage = payload.get('usage')
    extra: dict[str, Any] = {'native_finish_reason': native_finish[0] if native_finish else None}
    extra.update({k: payload[k] for k in ('created', 'system_fingerprint') if payload.get(k) is not None})
    return ChatResponse(
        tuple(generations),
        id=payload.get('id') if isinstance(payload.get('id'), str) else None,
        model=payload.get('model') if isinstance(payload.get('model'), str) else None,
        usage=Usage.from_openai(usage) if isinstance(usage, Mapping) else None,
        metadata=extra,
    )
