"""What crosses the workflow boundary: toolweave values as tagged JSON, and the Temporal data converter.

Every payload of a durable run (the run's input and result, each model call and tool call) is JSON
written by orjson. Toolweave's frozen dataclasses (messages, tool calls and responses, ``ChatResponse``,
``Usage``, media, run events, approvals) travel as ``{'@': '<class name>', <fields>}`` and come back
as the same classes; a tuple elsewhere (in metadata: ``pendingToolCalls``) as ``{'@tuple': [...]}``,
bytes as ``{'@bytes': base64}``, so every value comes back of its own type; pydantic models (the boundary records of
:mod:`toolweave.durable._records`) are validated by pydantic. Nothing is pickled: a worker only
rebuilds classes listed here, never an arbitrary type named by a payload.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

import orjson
import pydantic
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    BinaryNullPayloadConverter,
    CompositePayloadConverter,
    DataConverter,
    EncodingPayloadConverter,
)

from toolweave import events
from toolweave._text import scrub_json
from toolweave.approvals import Approve, DeferredResult, Deny, PendingToolCall
from toolweave.chat.content import Media
from toolweave.chat.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.chat.options import OutputSchema
from toolweave.chat.response import ChatResponse, Generation, Usage
from toolweave.runstate.state import RunState

__all__ = ['DATA_CONVERTER', 'from_json_value', 'to_json_value']

_TAG = '@'
_BYTES = '@bytes'
_TUPLE = '@tuple'
_CLASSES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        SystemMessage,
        UserMessage,
        AssistantMessage,
        ToolCall,
        ToolResponse,
        ToolResponseMessage,
        Media,
        Generation,
        ChatResponse,
        Usage,
        events.RoundStarted,
        events.TextDelta,
        events.ReasoningDelta,
        events.ToolCallStarted,
        events.ToolCallArgumentsDelta,
        events.ToolCallReady,
        events.RoundFinished,
        events.ToolExecutionStarted,
        events.ToolResult,
        events.RunFinished,
        events.ApprovalRequested,
        PendingToolCall,
        RunState,
        OutputSchema,
        Approve,
        Deny,
        DeferredResult,
    )
}


def to_json_value(value: Any, *, tuple_field: bool = False) -> Any:
    """``value`` as JSON-ready data: known dataclasses tagged, tuples as ``{'@tuple': [...]}``, bytes as ``{'@bytes': b64}``.

    ``tuple_field``: ``value`` is a dataclass field declared as a tuple (a plain list is enough then).

    Raises:
        TypeError: a value that is neither JSON nor one of the known classes (named in the message).
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, enum.Enum):
        return to_json_value(value.value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {_BYTES: base64.b64encode(bytes(value)).decode()}
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, tuple) and not tuple_field:
        return {_TUPLE: [to_json_value(v) for v in value]}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [to_json_value(v) for v in sorted(value, key=repr)]
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode='json')
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and _CLASSES.get(name) is type(value):
        data = {
            f.name: to_json_value(getattr(value, f.name), tuple_field=_is_tuple(f))
            for f in dataclasses.fields(value)
            if f.init
        }
        data[_TAG] = name
        return data
    raise TypeError(f'a durable run cannot carry a {name} (not JSON, not a toolweave message or response)')


def from_json_value(data: Any) -> Any:
    """The value :func:`to_json_value` made ``data`` from.

    Raises:
        ValueError: ``data`` names a class that is not a toolweave boundary class.
    """
    if isinstance(data, list):
        return [from_json_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    if _BYTES in data and len(data) == 1:
        return base64.b64decode(data[_BYTES])
    if _TUPLE in data and len(data) == 1:
        return tuple(from_json_value(v) for v in data[_TUPLE])
    name = data.get(_TAG)
    if name is None:
        return {k: from_json_value(v) for k, v in data.items()}
    cls = _CLASSES.get(name)
    if cls is None:
        raise ValueError(f'unknown class in a durable payload: {name!r}')
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            value = from_json_value(data[f.name])
            values[f.name] = tuple(value) if isinstance(value, list) and _is_tuple(f) else value
    return cls(**values)


def _is_tuple(field: dataclasses.Field[Any]) -> bool:
    """The field is declared a tuple (``tuple[...]`` or ``tuple[...] | None``)."""
    return str(field.type).startswith('tuple')


class _OrjsonPydanticConverter(EncodingPayloadConverter):
    """``json/plain`` payloads written by orjson; pydantic models validated, toolweave classes rebuilt."""

    @property
    def encoding(self) -> str:
        return 'json/plain'

    def to_payload(self, value: Any) -> Payload | None:
        data = to_json_value(value)
        try:
            encoded = orjson.dumps(data)
        except TypeError:  # a lone surrogate: U+FFFD instead (toolweave._text)
            encoded = orjson.dumps(scrub_json(data))
        return Payload(metadata={'encoding': self.encoding.encode()}, data=encoded)

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        data = orjson.loads(payload.data)
        if isinstance(type_hint, type) and issubclass(type_hint, pydantic.BaseModel):
            return type_hint.model_validate(data)
        return from_json_value(data)


class _PayloadConverter(CompositePayloadConverter):
    def __init__(self) -> None:
        super().__init__(BinaryNullPayloadConverter(), _OrjsonPydanticConverter())


DATA_CONVERTER = DataConverter(payload_converter_class=_PayloadConverter)
"""The data converter of toolweave's client and workers (give it to your own ``Client.connect`` too)."""
