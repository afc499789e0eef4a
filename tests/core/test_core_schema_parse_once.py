"""``SchemaValidator.validate_json`` parses once and validates the Python objects it returns (issue 14).

The reference is the converting path every other entry point takes: ``parse_arguments`` of the text, then the
Python value converted to a JSON Schema value (64-bit integers, finite floats) and validated, whose errors
``SchemaValidator.errors`` reports. Hypothesis compares both on raw JSON texts (big and boundary integers,
exponents, escapes, duplicate keys), and the Rust core with its pure-Python twin.
"""

import json
from typing import Any

import hypothesis.strategies as st
import pytest
import toolweave._core as rust_core
import toolweave._reference as reference_core
from hypothesis import given, settings
from toolweave.exceptions import SchemaValidationError, ToolArgumentsError

_ITEM = {
    'type': 'object',
    'properties': {
        'sku': {'type': 'string', 'minLength': 2, 'pattern': '^[a-z]'},
        'n': {'type': 'integer', 'minimum': -(2**63), 'maximum': 2**63 - 1},
        'price': {'type': 'number', 'exclusiveMinimum': 0, 'multipleOf': 0.5},
        'tags': {'type': 'array', 'items': {'$ref': '#/$defs/Tag'}, 'uniqueItems': True},
    },
    'required': ['sku'],
    'additionalProperties': False,
}
SCHEMAS: list[Any] = [
    {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        'type': 'object',
        '$defs': {'Tag': {'enum': ['a', 'é', 1, None]}, 'Item': _ITEM},
        'properties': {
            'item': {'$ref': '#/$defs/Item'},
            'items': {'type': 'array', 'items': {'$ref': '#/$defs/Item'}, 'maxItems': 3},
            'note': {'anyOf': [{'type': 'string', 'maxLength': 3}, {'type': 'null'}]},
            'pick': {'oneOf': [{'type': 'integer'}, {'type': 'number', 'minimum': 1}]},
            'flag': {'const': True},
            'any': {},
            'pair': {'prefixItems': [{'type': 'integer'}, {'type': 'string'}], 'items': False},
        },
        'patternProperties': {'^x': {'type': ['integer', 'string']}},
        'propertyNames': {'maxLength': 4},
        'dependentRequired': {'flag': ['note']},
        'minProperties': 1,
        'additionalProperties': {'not': {'type': 'object'}},
    },
    {'type': 'object', 'additionalProperties': {'type': 'array', 'contains': {'type': 'string'}}},
    {'type': 'object'},
    {'$schema': 'http://json-schema.org/draft-07/schema#', 'properties': {'item': {'type': 'integer'}}},
    True,
    False,
]
_NUMBERS = [
    '0', '-1', '42', '2', '1.5', '2.0', '-0.0', '0.1', '1E2', '1e19', '1e400', '-1e400', '12.5e-1',
    '9223372036854775807', '9223372036854775808', '-9223372036854775808', '-9223372036854775809',
    '18446744073709551615', '18446744073709551616', '123456789012345678901234567890',
]  # fmt: skip
_STRINGS = ['""', '"a"', '"ab"', '"abcd"', '"é"', '"\\u00e9"', '"\\ud83d\\ude00"', '"a\\"b"', '"x1"', '"Z"']
_KEYS = ['item', 'items', 'note', 'pick', 'flag', 'any', 'pair', 'sku', 'n', 'price', 'tags', 'x1', 'xlong', 'é']


def _text(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.sampled_from(['number', 'string', 'literal'] + (['object', 'array'] if depth < 4 else [])))
    if kind == 'number':
        return draw(st.sampled_from(_NUMBERS))
    if kind == 'string':
        return draw(st.sampled_from(_STRINGS))
    if kind == 'literal':
        return draw(st.sampled_from(['true', 'false', 'null']))
    if kind == 'array':
        return '[' + ', '.join(_text(draw, depth + 1) for _ in range(draw(st.integers(0, 3)))) + ']'
    return _object(draw, depth)


def _object(draw: st.DrawFn, depth: int) -> str:
    keys = draw(st.lists(st.sampled_from(_KEYS), max_size=5))  # repeated keys: the last value wins
    return '{' + ', '.join(f'{json.dumps(k)}: {_text(draw, depth + 1)}' for k in keys) + '}'


texts = st.composite(lambda draw: _object(draw, 0))()
any_texts = st.composite(lambda draw: _text(draw))() | st.sampled_from(['', '  ', '{"a": 1', '{"a": NaN}', '[]'])


def _shape(value: Any) -> Any:
    """The value with its key order and number types visible (``1 == 1.0`` and dict order hide them)."""
    if isinstance(value, dict):
        return ['dict', [(k, _shape(v)) for k, v in value.items()]]
    if isinstance(value, list):
        return ['list', [_shape(v) for v in value]]
    return [type(value).__name__, repr(value)]


def _converting_path(v: Any, text: str, int64: bool) -> tuple[str, Any]:
    """What the converting path answers: ``('ok', value)`` or ``(error type name, error details)``."""
    try:
        parsed = rust_core.parse_arguments(text)
    except ToolArgumentsError as exc:
        return 'ToolArgumentsError', str(exc)
    try:
        errors = v.errors(parsed)  # converts as validate() does: ValueError for numbers JSON Schema cannot hold
    except ValueError as exc:
        return 'ValueError', str(exc)
    if int64 and _beyond_int64(parsed):
        return 'ValueError', 'integer out of the signed 64-bit range (int64=True)'
    if errors:
        message = '; '.join(f'{e["pointer"] or "/"}: {e["message"]}' for e in errors)
        return 'SchemaValidationError', (message, errors)
    return 'ok', _shape(parsed)


def _beyond_int64(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_beyond_int64(v) for v in value.values())
    if isinstance(value, list):
        return any(_beyond_int64(v) for v in value)
    return type(value) is int and value > 2**63 - 1


def _answer(v: Any, data: str | bytes, int64: bool) -> tuple[str, Any]:
    try:
        return 'ok', _shape(v.validate_json(data, int64=int64))
    except SchemaValidationError as exc:
        return 'SchemaValidationError', (str(exc), exc.errors)
    except (ToolArgumentsError, ValueError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(range(len(SCHEMAS))), any_texts, st.booleans(), st.booleans())
def test_validate_json_answers_as_the_converting_path(which, text, int64, as_bytes):
    v = rust_core.SchemaValidator(SCHEMAS[which])
    data = text.encode() if as_bytes else text
    assert _answer(v, data, int64) == _converting_path(v, text, int64)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(range(len(SCHEMAS))), texts, st.booleans())
def test_validate_json_rust_and_twin_agree(which, text, int64):
    rust = _answer(rust_core.SchemaValidator(SCHEMAS[which]), text, int64)
    twin = _answer(reference_core.SchemaValidator(SCHEMAS[which]), text, int64)
    assert rust[0] == twin[0]
    if rust[0] == 'ok' or rust[0] == 'ValueError':
        assert rust == twin
    elif rust[0] == 'SchemaValidationError':
        # the twin's messages are the jsonschema package's, and it names a failing property name by the keyword
        # inside `propertyNames`: the pointers agree
        assert sorted(e['pointer'] for e in rust[1][1]) == sorted(e['pointer'] for e in twin[1][1])


def _checked(v: Any, data: str | bytes, int64: bool) -> tuple[str, Any]:
    """``check_json``'s answer in :func:`_answer`'s form (its failures as the error ``validate_json`` raises)."""
    try:
        got = v.check_json(data, int64=int64)
    except (ToolArgumentsError, ValueError) as exc:
        return type(exc).__name__, str(exc)
    if type(got) is list:
        assert got  # never an empty list: that would read as no failure
        return 'SchemaValidationError', ('; '.join(f'{e["pointer"] or "/"}: {e["message"]}' for e in got), got)
    return 'ok', _shape(got)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(range(len(SCHEMAS))), any_texts, st.booleans(), st.booleans())
def test_check_json_returns_what_validate_json_raises(which, text, int64, as_bytes):
    data = text.encode() if as_bytes else text
    for core in (rust_core, reference_core):
        v = core.SchemaValidator(SCHEMAS[which])
        assert _checked(v, data, int64) == _answer(v, data, int64)


def test_validate_json_examples():
    v = rust_core.SchemaValidator(SCHEMAS[0])
    assert _shape(v.validate_json('{"note": null, "item": {"sku": "ab", "n": 1}, "item": {"sku": "cd"}}')) == [
        'dict',
        [('note', ['NoneType', 'None']), ('item', ['dict', [('sku', ['str', "'cd'"])]])],
    ]
    with pytest.raises(SchemaValidationError) as info:
        v.validate_json('{"items": [{"sku": "ab", "tags": ["a", "b"]}], "xlong": {}}')
    assert [(e['pointer'], e['keyword']) for e in info.value.errors] == [
        ('/items/0/tags/1', 'enum'),
        ('/xlong', 'type'),
        ('', 'propertyNames'),
        ('', 'propertyNames'),
    ]
    assert str(info.value).endswith('; /: "items" is longer than 4 characters; /: "xlong" is longer than 4 characters')
    with pytest.raises(ValueError, match='integer out of the 64-bit range'):
        v.validate_json('{"any": [18446744073709551616]}')
    assert v.validate_json('{"any": 18446744073709551615}') == {'any': 2**64 - 1}
    with pytest.raises(ValueError, match=r'int64=True'):
        v.validate_json('{"any": 18446744073709551615}', int64=True)
    with pytest.raises(ValueError, match='NaN and infinity'):
        v.validate_json('{"any": 1e400}', int64=True)
    with pytest.raises(TypeError, match='expects str or bytes, got dict'):
        v.validate_json({'a': 1})  # type: ignore[arg-type]


def test_extra_items_past_prefix_items_are_reported_per_item_by_rust_and_twin():
    schema = {'type': 'object', 'properties': {'pair': {'prefixItems': [{'type': 'integer'}], 'items': False}}}
    instance = {'pair': [0, 'a', ['é', 2]]}
    expected = [
        {'pointer': '/pair/1', 'keyword': 'falseSchema', 'message': 'False schema does not allow "a"'},
        {'pointer': '/pair/2', 'keyword': 'falseSchema', 'message': 'False schema does not allow ["é",2]'},
    ]
    assert rust_core.SchemaValidator(schema).errors(instance) == expected
    assert reference_core.SchemaValidator(schema).errors(instance) == expected
