"""The pure-Python SchemaValidator twin words its errors as the Rust core (the ``jsonschema`` crate 0.61).

Each case states the crate's text and runs through ``toolweave._core.SchemaValidator`` and
``toolweave._reference.schema.SchemaValidator``: both must give it, as ``errors()`` messages and inside the
``SchemaValidationError`` of ``validate`` (``<pointer or />: <message>``, joined by ``; ``). The generated
schemas of tests/core/test_core_schema_twin_parity.py compare the messages too.
"""

from __future__ import annotations

from typing import Any

import pytest
from toolweave._core import SchemaValidator as RustValidator
from toolweave._reference.schema import SchemaValidator as TwinValidator
from toolweave._reference.schema.messages import json_text
from toolweave.exceptions import SchemaValidationError

DRAFT7 = 'http://json-schema.org/draft-07/schema#'
DRAFT2019 = 'https://json-schema.org/draft/2019-09/schema'

CASES: list[tuple[str, Any, Any, list[str]]] = [
    ('type', {'type': 'integer'}, 'seven', ['"seven" is not of type "integer"']),
    ('type array instance', {'type': 'integer'}, [1, 'x'], ['[1,"x"] is not of type "integer"']),
    ('type one of a list', {'type': ['string']}, 1, ['1 is not of type "string"']),
    (
        'types in the crate order',
        {'type': ['string', 'integer', 'null']},
        2.5,
        ['2.5 is not of types "null", "integer", "string"'],
    ),
    ('types number', {'type': ['number', 'boolean']}, None, ['null is not of types "boolean", "number"']),
    ('enum one', {'enum': ['a']}, 'c', ['"c" is not one of "a"']),
    ('enum two', {'enum': ['a', 'b']}, 'c', ['"c" is not one of "a" or "b"']),
    ('enum three', {'enum': [1, 'a', None]}, 2, ['2 is not one of 1, "a" or null']),
    ('enum four', {'enum': [1, 'a', None, [1.0]]}, 2, ['2 is not one of 1, "a" or 2 other candidates']),
    ('enum five', {'enum': [{'k': 1}, 2, 3, 4, 5]}, 0, ['0 is not one of {"k":1}, 2 or 3 other candidates']),
    ('const', {'const': {'a': [1, 2.0]}}, 2, ['{"a":[1,2.0]} was expected']),
    ('const string', {'const': 'x'}, 'y', ['"x" was expected']),
    ('required', {'required': ['a', 'b/c']}, {}, ['"a" is a required property', '"b/c" is a required property']),
    (
        'additionalProperties false',
        {'additionalProperties': False, 'properties': {'a': {}}},
        {'x': 1, 'y"': 2},
        ["Additional properties are not allowed ('x', 'y\"' were unexpected)"],
    ),
    (
        'additionalProperties false, one',
        {'additionalProperties': False, 'properties': {'a': {}}},
        {'a': 1, 'é': 2},
        ["Additional properties are not allowed ('é' was unexpected)"],
    ),
    (
        'additionalProperties false alone',
        {'additionalProperties': False},
        {'x': [1], 'y': 2},
        ['False schema does not allow [1]'],
    ),
    (
        'additionalProperties schema',
        {'additionalProperties': {'type': 'string'}},
        {'x': 1},
        ['1 is not of type "string"'],
    ),
    ('minimum', {'minimum': 3.0}, 2, ['2 is less than the minimum of 3.0']),
    ('minimum int', {'minimum': 3}, 2.5, ['2.5 is less than the minimum of 3']),
    ('maximum', {'maximum': 1e20}, 2e20, ['2e+20 is greater than the maximum of 1e+20']),
    ('exclusiveMinimum', {'exclusiveMinimum': 0}, -1, ['-1 is less than or equal to the minimum of 0']),
    ('exclusiveMaximum', {'exclusiveMaximum': 1e-6}, 2e-6, ['2e-6 is greater than or equal to the maximum of 1e-6']),
    ('multipleOf int', {'multipleOf': 3}, 4, ['4 is not a multiple of 3']),
    ('multipleOf whole float', {'multipleOf': 2.0}, 3, ['3 is not a multiple of 2']),
    ('multipleOf small', {'multipleOf': 1e-7}, 3.00000001, ['3.00000001 is not a multiple of 0.0000001']),
    ('multipleOf large', {'multipleOf': 1e20}, 3.5e20, ['3.5e+20 is not a multiple of 100000000000000000000']),
    ('multipleOf decimal', {'multipleOf': 0.1}, 0.15, ['0.15 is not a multiple of 0.1']),
    ('minLength one', {'minLength': 1}, '', ['"" is shorter than 1 character']),
    ('minLength written 2.0', {'minLength': 2.0}, 'a', ['"a" is shorter than 2 characters']),
    ('maxLength', {'maxLength': 2}, 'abc', ['"abc" is longer than 2 characters']),
    ('maxLength one', {'maxLength': 1}, 'ab', ['"ab" is longer than 1 character']),
    ('pattern', {'pattern': '^a"\\d$'}, 'b', ['"b" does not match "^a"\\d$"']),
    ('minItems', {'minItems': 1}, [], ['[] has less than 1 item']),
    ('maxItems', {'maxItems': 2}, [1, 2, 3], ['[1,2,3] has more than 2 items']),
    ('minProperties', {'minProperties': 2}, {'a': 1}, ['{"a":1} has less than 2 properties']),
    ('maxProperties', {'maxProperties': 1}, {'a': 1, 'b': 2}, ['{"a":1,"b":2} has more than 1 property']),
    ('uniqueItems', {'uniqueItems': True}, [1, 1.0], ['[1,1.0] has non-unique elements']),
    ('contains', {'contains': {'type': 'string'}}, [1, 2], ['None of [1,2] are valid under the given schema']),
    (
        'minContains',
        {'contains': {'type': 'string'}, 'minContains': 2},
        [1, 'a'],
        ['None of [1,"a"] are valid under the given schema'],
    ),
    (
        'maxContains',
        {'contains': {'type': 'string'}, 'maxContains': 1},
        ['b', 'a'],
        ['None of ["b","a"] are valid under the given schema'],
    ),
    ('propertyNames', {'propertyNames': {'maxLength': 1}}, {'ab': 1}, ['"ab" is longer than 1 character']),
    (
        'propertyNames pattern',
        {'propertyNames': {'pattern': '^a'}},
        {'ba': 1, 'bb': 2},
        ['"ba" does not match "^a"', '"bb" does not match "^a"'],
    ),
    ('propertyNames false', {'propertyNames': False}, {'ba': 1}, ['False schema does not allow {"ba":1}']),
    ('dependentRequired', {'dependentRequired': {'a': ['b']}}, {'a': 1}, ['"b" is a required property']),
    ('dependencies array', {'$schema': DRAFT7, 'dependencies': {'a': ['b']}}, {'a': 1}, ['"b" is a required property']),
    (
        'not',
        {'not': {'type': 'string', 'minLength': 1}},
        'a',
        ['{"type":"string","minLength":1} is not allowed for "a"'],
    ),
    ('not true', {'not': True}, 1, ['true is not allowed for 1']),
    (
        'anyOf',
        {'anyOf': [{'type': 'string'}, {'type': 'null'}]},
        1,
        ["1 is not valid under any of the schemas listed in the 'anyOf' keyword"],
    ),
    (
        'oneOf none',
        {'oneOf': [{'type': 'string'}, {'type': 'null'}]},
        {'a': 1},
        ['{"a":1} is not valid under any of the schemas listed in the \'oneOf\' keyword'],
    ),
    (
        'oneOf several',
        {'oneOf': [{}, {'type': 'integer'}]},
        1,
        ["1 is valid under more than one of the schemas listed in the 'oneOf' keyword"],
    ),
    (
        'oneOf none, a value quoting the other wording',
        {'oneOf': [{'type': 'integer'}]},
        'x is valid under each of y',
        ['"x is valid under each of y" is not valid under any of the schemas listed in the \'oneOf\' keyword'],
    ),
    ('false subschema', {'properties': {'a': False}}, {'a': 'x'}, ['False schema does not allow "x"']),
    ('false schema', False, [1], ['False schema does not allow [1]']),
    ('items false', {'prefixItems': [{}], 'items': False}, [1, 2], ['False schema does not allow 2']),
    ('$ref', {'$defs': {'x': {'type': 'string'}}, '$ref': '#/$defs/x'}, 1, ['1 is not of type "string"']),
    (
        'unevaluatedProperties false',
        {'unevaluatedProperties': False, 'properties': {'a': {}}},
        {'z': 1, 'a': 1, 'c': 'x'},
        ["Unevaluated properties are not allowed ('z', 'c' were unexpected)"],
    ),
    (
        'unevaluatedProperties schema',
        {'unevaluatedProperties': {'type': 'string'}},
        {'b': 1, 'c': 'x', 'd': 2},
        ["Unevaluated properties are not allowed ('b', 'd' were unexpected)"],
    ),
    (
        'unevaluatedItems',
        {'unevaluatedItems': {'type': 'string'}, 'prefixItems': [{}]},
        [1, 2, 'x', [3]],
        ["Unevaluated items are not allowed ('2', '[3]' were unexpected)"],
    ),
    (
        'unevaluatedItems, 2019-09',
        {'$schema': DRAFT2019, 'items': [{}], 'unevaluatedItems': False},
        [1, 2, 'x'],
        ["Unevaluated items are not allowed ('2', '\"x\"' were unexpected)"],
    ),
    (
        'unevaluatedProperties, 2019-09',
        {'$schema': DRAFT2019, 'properties': {'a': {}}, 'unevaluatedProperties': False},
        {'b': 1, 'a': 2, 'c': 3},
        ["Unevaluated properties are not allowed ('b', 'c' were unexpected)"],
    ),
    (
        'additionalItems',
        {'$schema': DRAFT7, 'items': [{}], 'additionalItems': False},
        [1, 'x', [2]],
        ['Additional items are not allowed ("x", [2] were unexpected)'],
    ),
    (
        'additionalItems one',
        {'$schema': DRAFT7, 'items': [{}], 'additionalItems': False},
        [1, 2],
        ['Additional items are not allowed (2 was unexpected)'],
    ),
    ('if/then', {'if': {'type': 'string'}, 'then': {'minLength': 2}}, 'a', ['"a" is shorter than 2 characters']),
    # values: floats in serde_json's form, strings escaped as JSON, non-ASCII kept, nothing truncated
    ('float 1e-5', {'type': 'string'}, 1e-5, ['0.00001 is not of type "string"']),
    ('float -1.25e-5', {'type': 'string'}, -1.25e-5, ['-0.0000125 is not of type "string"']),
    ('float 1e-6', {'type': 'string'}, 1.5e-6, ['1.5e-6 is not of type "string"']),
    ('float 1e-300', {'type': 'string'}, 2.5e-300, ['2.5e-300 is not of type "string"']),
    ('float 1e15', {'type': 'string'}, 1e15, ['1000000000000000.0 is not of type "string"']),
    ('float 1e16', {'type': 'string'}, 1e16, ['1e+16 is not of type "string"']),
    ('float -0.0', {'type': 'string'}, -0.0, ['-0.0 is not of type "string"']),
    ('integer u64', {'type': 'string'}, 2**64 - 1, ['18446744073709551615 is not of type "string"']),
    (
        'string escapes',
        {'type': 'integer'},
        '\x01\x1f\x7f\u2028é"\\\n/\t\b\f',
        ['"\\u0001\\u001f\x7f\u2028é\\"\\\\\\n/\\t\\b\\f" is not of type "integer"'],
    ),
    ('object keys kept in order', {'type': 'string'}, {'b': 1, 'a': {}}, ['{"b":1,"a":{}} is not of type "string"']),
    ('long value', {'type': 'string'}, list(range(300)), [f'{json_text(list(range(300)))} is not of type "string"']),
]


@pytest.mark.parametrize(('schema', 'instance', 'messages'), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize('cls', [RustValidator, TwinValidator], ids=['rust', 'twin'])
def test_messages_are_the_crates(cls: Any, schema: Any, instance: Any, messages: list[str]) -> None:
    validator = cls(schema)
    errors = validator.errors(instance)
    assert [e['message'] for e in errors] == messages
    with pytest.raises(SchemaValidationError) as caught:
        validator.validate(instance)
    assert str(caught.value) == '; '.join(f'{e["pointer"] or "/"}: {e["message"]}' for e in errors)


def test_the_long_value_is_written_whole() -> None:
    """Nothing is shortened: the 300-item list is in the message in full (1,091 characters of JSON)."""
    for cls in (RustValidator, TwinValidator):
        text = cls({'type': 'string'}).errors(list(range(300)))[0]['message']
        assert text.startswith('[0,1,2,') and text.endswith(',298,299] is not of type "string"')
        assert len(text) == len(json_text(list(range(300)))) + len(' is not of type "string"') == 1115


@pytest.mark.parametrize(
    ('value', 'text'),
    [
        (1.0, '1.0'),
        (0.0001, '0.0001'),
        (1e-5, '0.00001'),
        (9.999e-5, '0.00009999'),
        (1e-6, '1e-6'),
        (1e-10, '1e-10'),
        (123.0, '123.0'),
        (9999999999999998.0, '9999999999999998.0'),
        (1e16, '1e+16'),
        (1.2345678901234568e17, '1.2345678901234568e+17'),
        (1.7976931348623157e308, '1.7976931348623157e+308'),
        (5e-324, '5e-324'),
        (True, 'true'),
        (None, 'null'),
        ({'a': [1, 'é', None]}, '{"a":[1,"é",null]}'),
    ],
)
def test_values_are_written_as_serde_json(value: Any, text: str) -> None:
    assert json_text(value) == text
    assert RustValidator({'type': 'string'}).errors(value)[0]['message'] == f'{text} is not of type "string"'
