"""An integer beyond 64 bits written as a float (``1e20`` for an ``int``) is worded as one written out in digits.

pydantic calls it ``int_parsing_size`` ("Unable to parse input string as an integer, exceeded maximum size",
though no string was sent); every path of a ``@tool`` function and of a ``FunctionToolCallback`` over an
``input_type`` says the numbers rule's words (``OUT_OF_RANGE``), with the Rust decoder, without it, and on the
slow path that lists every problem. A raw-schema tool (``input_schema``, MCP tools) says them too, where the
64-bit bound it validates with would otherwise be named ("greater than the maximum of 9223372036854775807").
"""

from __future__ import annotations

import pydantic
import pytest
from toolweave.exceptions import ToolExecutionError
from toolweave.mcp.callback import _decoder as mcp_decoder
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from toolweave.tools._numbers import OUT_OF_RANGE, number_message, schema_message
from toolweave.tools.definition import ToolDefinition

BAD_B = 'b.0: Input should be a valid integer, unable to parse string as an integer'


def one(a: int) -> str:
    return str(a)


def two(a: int, b: list[int]) -> str:
    return str(a)


class Pair(pydantic.BaseModel):
    a: int
    b: list[int] = []


def _message(call: object, text: str) -> str:
    with pytest.raises(ToolExecutionError) as info:
        call(text)  # type: ignore[operator]
    return str(info.value)


@pytest.mark.parametrize('number', ['1e20', '-1e19', '1.5e300', '9223372036854775808', '"' + '9' * 5000 + '"'])
@pytest.mark.parametrize('decoder', [True, False])
def test_a_tool_function_words_every_integer_beyond_64_bits_alike(number: str, decoder: bool) -> None:
    tools = {name: MethodToolCallback(f) for name, f in (('one', one), ('two', two))}
    if not decoder:
        for tool in tools.values():
            tool._decoder = None
    a = f'a: {OUT_OF_RANGE}'
    assert _message(tools['one'].call, f'{{"a": {number}}}') == f"Invalid arguments for tool 'one': {a}"
    assert _message(tools['two'].call, f'{{"a": {number}, "b": [1]}}') == f"Invalid arguments for tool 'two': {a}"
    # both named (a literal beyond 64 bits validates as an int: the slow path names it after b's problem)
    message = _message(tools['two'].call, f'{{"a": {number}, "b": ["x"]}}')
    head, _, problems = message.partition(': ')
    assert head == "Invalid arguments for tool 'two'" and sorted(problems.split('; ')) == [a, BAD_B]


@pytest.mark.parametrize(
    ('text', 'problems'),
    [
        ('{"a": 1e20}', [f'a: {OUT_OF_RANGE}']),
        ('{"a": 1e20, "b": ["x"]}', [f'a: {OUT_OF_RANGE}', BAD_B]),
        ('{"a": 1, "b": [1e20]}', [f'b.0: {OUT_OF_RANGE}']),
    ],
)
def test_an_input_type_words_it_alike(text: str, problems: list[str]) -> None:
    callback = FunctionToolCallback.builder('pair', lambda pair: 'ok').input_type(Pair).build()
    assert _message(callback.call, text) == "Invalid arguments for tool 'pair': " + '; '.join(problems)


def test_number_message_maps_only_the_size_error() -> None:
    assert number_message({'type': 'int_parsing_size', 'msg': 'Unable to parse ...'}) == OUT_OF_RANGE
    assert number_message({'type': 'int_parsing', 'msg': 'words'}) == 'words'


RAW_SCHEMA = {
    'type': 'object',
    'properties': {
        'n': {'type': 'integer'},
        'm': {'type': 'integer', 'maximum': 5},
        'k': {'type': ['integer', 'null']},
        'x': {'type': 'number'},
    },
}


@pytest.mark.parametrize(
    ('text', 'problems'),
    [
        ('{"n": 1e20}', [f'/n: {OUT_OF_RANGE}']),
        ('{"n": -1e20}', [f'/n: {OUT_OF_RANGE}']),
        ('{"n": 99999999999999999999}', [f'/n: {OUT_OF_RANGE}']),
        ('{"k": 9.3e18, "n": "x"}', [f'/k: {OUT_OF_RANGE}', '/n: "x" is not of type "integer"']),
        ('{"m": 1e20}', ['/m: 1e+20 is greater than the maximum of 5']),  # the schema's own bound
        ('{"m": 6}', ['/m: 6 is greater than the maximum of 5']),
    ],
)
def test_a_raw_schema_tool_words_it_alike(text: str, problems: list[str]) -> None:
    tools = {
        'raw': FunctionToolCallback.builder('raw', lambda d: 'ok').input_schema(RAW_SCHEMA).build().call,
        'mcp': mcp_decoder(ToolDefinition('raw', 'd', RAW_SCHEMA), RAW_SCHEMA, 'server'),
    }
    for call in tools.values():
        assert _message(call, text) == "Invalid arguments for tool 'raw': " + '; '.join(problems)


def test_a_raw_number_is_not_worded_as_an_integer() -> None:
    call = FunctionToolCallback.builder('raw', lambda d: repr(d)).input_schema(RAW_SCHEMA).build().call
    assert call('{"x": 1e20}') == "{'x': 1e+20}"
    assert schema_message({'keyword': 'maximum', 'message': '6 is greater than the maximum of 5'}) == (
        '6 is greater than the maximum of 5'
    )
    assert schema_message(
        {'keyword': 'maximum', 'message': '1e+20 is greater than the maximum of 19223372036854775807'}
    ) == ('1e+20 is greater than the maximum of 19223372036854775807')
