"""Messages to JSON-ready dicts and back, without loss (what Spring's JDBC store gets wrong).

Every field survives: the role, ``content`` (``None`` stays ``None``, distinct from ``''``), every
``ToolCall`` (id, type, name, raw argument text) and every ``ToolResponse`` (id, name, data, error flag), and
``metadata``. Metadata must hold JSON values; a tuple comes back as a list. Stored text is valid
UTF-8: a lone surrogate (from a tool's output, a non-UTF-8 file name, a lone surrogate escape in
JSON) is stored as U+FFFD (:mod:`toolweave._text`).

Content parts (:class:`~toolweave.chat.content.Media` on a ``UserMessage`` or a ``ToolResponse``) are stored
as ``{"media_type", "name", "data_b64"}`` (bytes, inline as base64: the stored row is 4/3 of the bytes) or
``{"media_type", "name", "url"}`` (a URL part: only the reference is stored). A large file is best passed as a
URL part (an uploaded file's URL) so that the memory row holds the reference, not the bytes. Keys
appear only when a message has parts, so rows stored before parts existed load unchanged.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import orjson

from toolweave._text import scrub_json
from toolweave.chat.content import Media
from toolweave.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)

__all__ = ['dumps', 'loads', 'media_from_dict', 'media_to_dict', 'message_from_dict', 'message_to_dict']


def message_to_dict(message: Message) -> dict[str, Any]:
    """A JSON-ready dict of ``message``.

    >>> message_to_dict(UserMessage('hi'))
    {'type': 'user', 'text': 'hi', 'metadata': {}}

    Raises:
        TypeError: ``message`` is not one of the four message classes.
    """
    metadata = dict(message.metadata)
    if isinstance(message, SystemMessage):
        return {'type': 'system', 'text': message.text, 'metadata': metadata}
    if isinstance(message, UserMessage):
        return {'type': 'user', 'text': message.text, 'metadata': metadata, **_media_field(message.media)}
    if isinstance(message, AssistantMessage):
        calls = [{'id': c.id, 'type': c.type, 'name': c.name, 'arguments': c.arguments} for c in message.tool_calls]
        return {'type': 'assistant', 'content': message.content, 'tool_calls': calls, 'metadata': metadata}
    if isinstance(message, ToolResponseMessage):
        responses = [_response_to_dict(r) for r in message.responses]
        return {'type': 'tool', 'responses': responses, 'metadata': metadata}
    raise TypeError(f'not a chat message: {type(message).__name__}')


def _response_to_dict(response: ToolResponse) -> dict[str, Any]:
    """A tool response's fields; ``is_error``/``error_type`` only on failures (rows stored before them load as successes)."""
    data: dict[str, Any] = {'id': response.id, 'name': response.name, 'response_data': response.response_data}
    if response.is_error:
        data['is_error'] = True
        data['error_type'] = response.error_type
    data.update(_media_field(response.media))
    return data


def _media_field(media: tuple[Media, ...]) -> dict[str, Any]:
    """``{'media': [...]}`` for parts, ``{}`` without (rows stay as they were before parts existed)."""
    return {'media': [media_to_dict(part) for part in media]} if media else {}


def media_to_dict(part: Media) -> dict[str, Any]:
    """A JSON-ready dict of one content part: bytes as base64 (``data_b64``), a URL as ``url``."""
    key, value = ('url', part.data) if isinstance(part.data, str) else ('data_b64', part.base64())
    return {'media_type': part.media_type, 'name': part.name, key: value}


def media_from_dict(data: Mapping[str, Any]) -> Media:
    """The part :func:`media_to_dict` made ``data`` from (``KeyError`` when it has neither bytes nor URL)."""
    if 'url' in data:
        return Media(data['media_type'], data['url'], data.get('name'))
    return Media(data['media_type'], base64.b64decode(data['data_b64'], validate=True), data.get('name'))


def _media(data: Mapping[str, Any]) -> tuple[Media, ...]:
    return tuple(media_from_dict(part) for part in data.get('media') or ())


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """The message :func:`message_to_dict` made ``data`` from.

    Raises:
        ValueError: ``data`` is not a stored message (unknown type, missing field).
    """
    try:
        kind = data['type']
        metadata = dict(data.get('metadata') or {})
        if kind == 'system':
            return SystemMessage(data['text'], metadata)
        if kind == 'user':
            return UserMessage(data['text'], metadata, _media(data))
        if kind == 'assistant':
            calls = tuple(ToolCall(c['id'], c['type'], c['name'], c['arguments']) for c in data['tool_calls'])
            return AssistantMessage(data['content'], calls, metadata)
        if kind == 'tool':
            responses = tuple(
                ToolResponse(
                    r['id'], r['name'], r['response_data'], bool(r.get('is_error')), r.get('error_type'), _media(r)
                )
                for r in data['responses']
            )
            return ToolResponseMessage(responses, metadata)
    except (KeyError, TypeError, binascii.Error) as exc:
        raise ValueError(f'malformed stored message: {exc!r} in {dict(data)!r}') from exc
    raise ValueError(f'unknown stored message type: {kind!r}')


def dumps(message: Message) -> str:
    """``message`` as JSON text; lone surrogates in any string become U+FFFD.

    Raises:
        TypeError: metadata holds a value JSON cannot represent.
    """
    data = message_to_dict(message)
    try:
        return orjson.dumps(data).decode()
    except TypeError:  # a lone surrogate (orjson: "str is not valid UTF-8"), or a value JSON cannot hold
        return orjson.dumps(scrub_json(data)).decode()


def loads(text: str | bytes) -> Message:
    """The message in JSON ``text``.

    Raises:
        ValueError: not JSON, or not a stored message.
    """
    data = orjson.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f'malformed stored message: {text!r}')  # noqa: TRY004 - bad data, not a bad argument
    return message_from_dict(data)
