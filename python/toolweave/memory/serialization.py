"""Messages to JSON-ready dicts and back, without loss (what Spring's JDBC store gets wrong).

Every field survives: the role, ``content`` (``None`` stays ``None``, distinct from ``''``), every
``ToolCall`` (id, type, name, raw argument text) and every ``ToolResponse`` (id, name, data, error flag), and
``metadata``. Metadata must hold JSON values; a tuple comes back as a list. Stored text is valid
UTF-8: a lone surrogate (from a tool's output, a non-UTF-8 file name, a lone surrogate escape in
JSON) is stored as U+FFFD (:mod:`toolweave._text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from toolweave._text import scrub_json
from toolweave.chat.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)

__all__ = ['dumps', 'loads', 'message_from_dict', 'message_to_dict']


def message_to_dict(message: Message) -> dict[str, Any]:
    """A JSON-ready dict of ``message``.

    >>> message_to_dict(UserMessage('hi'))
    {'type': 'user', 'text': 'hi', 'metadata': {}}

    Raises:
        TypeError: ``message`` is not one of the four message classes.
    """
    metadata = dict(message.metadata)
    if isinstance(message, (SystemMessage, UserMessage)):
        return {'type': message.message_type.value, 'text': message.text, 'metadata': metadata}
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
    return data


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
            return UserMessage(data['text'], metadata)
        if kind == 'assistant':
            calls = tuple(ToolCall(c['id'], c['type'], c['name'], c['arguments']) for c in data['tool_calls'])
            return AssistantMessage(data['content'], calls, metadata)
        if kind == 'tool':
            responses = tuple(
                ToolResponse(r['id'], r['name'], r['response_data'], bool(r.get('is_error')), r.get('error_type'))
                for r in data['responses']
            )
            return ToolResponseMessage(responses, metadata)
    except (KeyError, TypeError) as exc:
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
