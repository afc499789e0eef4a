"""FunctionToolCallback: input_type / input_schema / supplier / consumer forms."""

import asyncio
import dataclasses
from typing import Optional

import pydantic
import pytest
from toolweave.exceptions import InvalidToolArgumentsError, ToolArgumentsError
from toolweave.tools import FunctionToolCallback, ToolContext, ToolExecutionError
from toolweave.tools.schema import SCHEMA_DIALECT
from typing_extensions import NotRequired, TypedDict


class Order(pydantic.BaseModel):
    item: str
    quantity: int = 1
    note: Optional[str] = None


@dataclasses.dataclass
class Move:
    x: int
    y: int


class Query(TypedDict):
    city: str
    days: NotRequired[int]


def test_pydantic_input_type_schema_and_call():
    got = []

    def place(order: Order) -> dict:
        """Place an order."""
        got.append(order)
        return {'ok': True, 'item': order.item}

    cb = FunctionToolCallback.builder('place_order', place).build()  # input type inferred from the annotation
    assert cb.tool_definition.description == 'Place an order.'
    assert cb.tool_definition.input_schema == {
        '$schema': SCHEMA_DIALECT,
        'properties': {
            'item': {'type': 'string'},
            'quantity': {'default': 1, 'type': 'integer'},
            'note': {'anyOf': [{'type': 'string'}, {'type': 'null'}], 'default': None},
        },
        'required': ['item'],
        'type': 'object',
        'additionalProperties': False,
    }
    assert cb.call('{"item": "tea", "quantity": "2"}') == '{"ok":true,"item":"tea"}'
    assert got == [Order(item='tea', quantity=2)]


def test_dataclass_and_typed_dict_input_types():
    moves = FunctionToolCallback.builder('move', lambda m: m.x + m.y).input_type(Move).build()
    assert moves.call('{"x": 1, "y": "2"}') == '3'
    assert moves.tool_definition.description == 'move'
    q = FunctionToolCallback.builder('weather', lambda q: q).input_type(Query).description('Weather.').build()
    assert q.tool_definition.input_schema['required'] == ['city']
    assert q.call('{"city": "Oslo"}') == '{"city":"Oslo"}'


def test_invalid_arguments_list_each_field():
    cb = FunctionToolCallback.builder('move', lambda m: m).input_type(Move).build()
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"x": "a"}')
    assert isinstance(info.value.cause, InvalidToolArgumentsError)
    assert (
        str(info.value)
        == "Invalid arguments for tool 'move': x: Input should be a valid integer, unable to parse string as an integer; y: Field required"
    )
    with pytest.raises(ToolExecutionError) as bad:
        cb.call('{"x": 1,')
    assert isinstance(bad.value.cause, ToolArgumentsError)
    assert str(bad.value).startswith("Invalid arguments for tool 'move': invalid tool arguments at line 1")


def test_raw_input_schema_uses_the_rust_validator():
    schema = {
        'type': 'object',
        'properties': {'ids': {'type': 'array', 'items': {'type': 'integer'}}, 'mode': {'enum': ['a', 'b']}},
        'required': ['ids'],
        'additionalProperties': False,
    }
    cb = FunctionToolCallback.builder('lookup', lambda args: sum(args['ids'])).input_schema(schema).build()
    assert cb.tool_definition.input_schema == schema
    assert cb.call('{"ids": [1, 2]}') == '3'
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"ids": [1, "x"], "mode": "c", "z": 0}')
    problems = sorted(info.value.cause.problems)
    assert [p.split(':')[0] for p in problems] == ['/', '/ids/1', '/mode']


def test_supplier_and_consumer_forms():
    sink = []
    supplier = FunctionToolCallback.builder('now', lambda: '12:00').build()
    assert supplier.tool_definition.input_schema['properties'] == {}
    assert supplier.call('{}') == '12:00'
    consumer = FunctionToolCallback.builder('log', lambda entry: sink.append(entry)).input_type(Query).build()
    assert consumer.call('{"city": "Rome"}') == 'Done'
    assert sink == [{'city': 'Rome'}]


def test_context_async_and_metadata():
    async def fetch(q: Query, ctx: ToolContext) -> str:
        return f'{q["city"]}:{ctx.context["user"]}'

    cb = (
        FunctionToolCallback.builder('fetch', fetch)
        .tool_metadata(return_direct=True, max_retries=3)
        .result_converter(type('Upper', (), {'convert': lambda self, r, t=None: r.upper()})())
        .build()
    )
    assert cb.tool_metadata.return_direct is True and cb.tool_metadata.max_retries == 3
    assert cb.call('{"city": "x"}', ToolContext({'user': 'u'})) == 'X:U'
    assert asyncio.run(cb.acall('{"city": "y"}', ToolContext({'user': 'v'}))) == 'Y:V'


def test_builder_errors():
    with pytest.raises(ValueError, match='either input_type or input_schema'):
        FunctionToolCallback.builder('x', lambda a: a).input_type(Move).input_schema({}).build()
    with pytest.raises(ValueError, match='takes 2 arguments'):
        FunctionToolCallback.builder('x', lambda a, b: a).build()
    with pytest.raises(TypeError, match='has no JSON Schema'):
        FunctionToolCallback.builder('x', lambda a: a).input_type(type('Opaque', (), {})).build()
    with pytest.raises(ValueError, match='invalid JSON Schema'):
        FunctionToolCallback.builder('x', lambda a: a).input_schema({'type': 5}).build()
    with pytest.raises(TypeError, match='must be callable'):
        FunctionToolCallback.builder('x', 3)  # type: ignore[arg-type]
    with pytest.raises(ToolExecutionError) as info:
        FunctionToolCallback.builder('x', lambda: 1 / 0).build().call('{}')
    assert isinstance(info.value.cause, ZeroDivisionError)
