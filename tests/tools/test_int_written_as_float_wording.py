"""An integer beyond 64 bits written as a float (``1e20`` for an ``int``) is worded as one written out in digits.

pydantic calls it ``int_parsing_size`` ("Unable to parse input string as an integer, exceeded maximum size",
though no string was sent); every path of a ``@tool`` function and of a ``FunctionToolCallback`` over an
``input_type`` says the numbers rule's words (``OUT_OF_RANGE``), with the Rust decoder, without it, and on the
slow path that lists every problem. A raw-schema tool (``input_schema``, MCP tools) says them too, where the
64-bit bound it validates with would otherwise be named ("greater than the maximum of 9223372036854775807"),
and only there: a ``maximum``/``minimum`` the schema has of its own at that very value is named as written.
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from toolweave.exceptions import ToolExecutionError
from toolweave.mcp.callback import _decoder as mcp_decoder
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from toolweave.tools._numbers import INT64_MAX, INT64_MIN, OUT_OF_RANGE, number_message, schema_problems
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
    own = [
        {'pointer': '/m', 'keyword': 'maximum', 'message': '6 is greater than the maximum of 5'},
        {'pointer': '/m', 'keyword': 'maximum', 'message': '1e+20 is greater than the maximum of 19223372036854775807'},
    ]
    assert schema_problems(own, _unasked) == [f'/m: {failure["message"]}' for failure in own]


def _unasked() -> list[dict[str, str]]:
    raise AssertionError('the failures as written are asked for only when a message ends in the 64-bit bound')


def test_only_a_failure_the_schema_as_written_lacks_is_worded_as_the_added_bound() -> None:
    at_bound = {'pointer': '/n', 'keyword': 'maximum', 'message': f'1e+20 is greater than the maximum of {INT64_MAX}'}
    below = {'pointer': '/n', 'keyword': 'minimum', 'message': f'-1e+20 is less than the minimum of {INT64_MIN}'}
    assert schema_problems([at_bound, below], list) == [f'/n: {OUT_OF_RANGE}', f'/n: {OUT_OF_RANGE}']
    assert schema_problems([at_bound, below], lambda: [below]) == [f'/n: {OUT_OF_RANGE}', f'/n: {below["message"]}']
    elsewhere = {**at_bound, 'pointer': '/k'}
    assert schema_problems([at_bound, at_bound], lambda: [at_bound, elsewhere]) == [
        f'/n: {at_bound["message"]}',
        f'/n: {OUT_OF_RANGE}',
    ]
    whole = {**at_bound, 'pointer': ''}
    assert schema_problems([whole], list) == [f'/: {OUT_OF_RANGE}']


def _prop(schema: dict[str, Any], **defs: Any) -> dict[str, Any]:
    return {'type': 'object', 'properties': {'n': schema}, **({'$defs': defs} if defs else {})}


ABOVE = f'1e+20 is greater than the maximum of {INT64_MAX}'
BELOW = f'-1e+20 is less than the minimum of {INT64_MIN}'


@pytest.mark.parametrize(
    ('schema', 'text', 'problems'),
    [
        # the schema's own bound at the 64-bit one: as written, for a "number" and an "integer" alike
        (_prop({'type': 'number', 'maximum': INT64_MAX}), '{"n": 1e20}', [f'/n: {ABOVE}']),
        (_prop({'type': 'number', 'minimum': INT64_MIN}), '{"n": -1e20}', [f'/n: {BELOW}']),
        (_prop({'type': 'integer', 'maximum': INT64_MAX}), '{"n": 1e20}', [f'/n: {ABOVE}']),
        (_prop({'type': 'integer', 'minimum': INT64_MIN}), '{"n": -1e20}', [f'/n: {BELOW}']),
        (_prop({'type': 'integer', 'maximum': INT64_MAX}), '{"n": 9223372036854775808}',
         [f'/n: 9223372036854775808 is greater than the maximum of {INT64_MAX}']),
        (_prop({'type': ['integer', 'null'], 'maximum': INT64_MAX}), '{"n": 1e20}', [f'/n: {ABOVE}']),
        # a bound only bounded_integers added: the range's words, on either side
        (_prop({'type': 'integer'}), '{"n": 1e20}', [f'/n: {OUT_OF_RANGE}']),
        (_prop({'type': 'integer'}), '{"n": 9223372036854775808}', [f'/n: {OUT_OF_RANGE}']),
        (_prop({'type': 'integer', 'minimum': INT64_MIN}), '{"n": 1e20}', [f'/n: {OUT_OF_RANGE}']),
        (_prop({'type': 'integer', 'maximum': INT64_MAX}), '{"n": -1e20}', [f'/n: {OUT_OF_RANGE}']),
        (_prop({'type': ['integer', 'null']}), '{"n": -1e20}', [f'/n: {OUT_OF_RANGE}']),
        # nested, behind a $ref, side by side
        (_prop({'type': 'array', 'items': {'type': 'number', 'maximum': INT64_MAX}}), '{"n": [1, 1e20]}',
         [f'/n/1: {ABOVE}']),
        (_prop({'type': 'array', 'items': {'type': 'object', 'properties': {'m': {'type': 'integer'}}}}),
         '{"n": [{"m": 1}, {"m": -1e20}]}', [f'/n/1/m: {OUT_OF_RANGE}']),
        (_prop({'type': 'object', 'properties': {'m': {'type': 'number', 'minimum': INT64_MIN}}}),
         '{"n": {"m": -1e20}}', [f'/n/m: {BELOW}']),
        (_prop({'$ref': '#/$defs/N'}, N={'type': 'number', 'maximum': INT64_MAX}), '{"n": 1e20}', [f'/n: {ABOVE}']),
        ({'type': 'object', 'properties': {'n': {'type': 'number', 'maximum': INT64_MAX}, 'k': {'type': 'integer'}}},
         '{"n": 1e20, "k": 1e20}', [f'/n: {ABOVE}', f'/k: {OUT_OF_RANGE}']),
        # the same failure from the schema's own bound and from an added one: each worded its way
        (_prop({'allOf': [{'type': 'number', 'maximum': INT64_MAX}, {'type': 'integer'}]}), '{"n": 1e20}',
         [f'/n: {ABOVE}', f'/n: {OUT_OF_RANGE}']),
    ],
)  # fmt: skip
def test_a_raw_schema_names_its_own_64_bit_bound_and_words_only_the_added_one(
    schema: dict[str, Any], text: str, problems: list[str]
) -> None:
    tools = {
        'raw': FunctionToolCallback.builder('raw', lambda d: 'ok').input_schema(schema).build().call,
        'mcp': mcp_decoder(ToolDefinition('raw', 'd', schema), schema, 'server'),
    }
    for call in tools.values():
        assert _message(call, text) == "Invalid arguments for tool 'raw': " + '; '.join(problems)
