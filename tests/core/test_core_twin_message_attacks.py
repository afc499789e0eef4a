"""Attacks on the SchemaValidator twin's messages (``_reference/schema/messages.py``) against the Rust core.

Odd values (float edges, ``-0.0``, big integers, control characters, non-BMP text, long strings, nested arrays)
are put both in the instance and in the keyword values the messages render (``const``, ``enum``, bounds,
``multipleOf``), and a wider hypothesis differential than ``test_core_schema_twin_parity.py`` mixes them with
every keyword; every error's pointer, keyword and message, and the ``validate_json`` text, must be the same.
"""

from __future__ import annotations

import itertools
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from test_core_schema_twin_parity import NAMES, PATTERNS, _answer
from toolweave._core import SchemaValidator as RustValidator
from toolweave._reference.schema import SchemaValidator as TwinValidator


def _outcome(cls: Any, schema: Any, instance: Any) -> Any:
    """``_answer``, or the ``ValueError`` both raise for a value JSON Schema cannot hold (an int beyond 64 bits)."""
    try:
        return _answer(cls, schema, instance)
    except ValueError as exc:
        return 'ValueError', str(exc)


def assert_same(schema: Any, instance: Any) -> None:
    assert _outcome(TwinValidator, schema, instance) == _outcome(RustValidator, schema, instance)


ODD_NUMBERS: list[Any] = [
    1e308, -1e308, 5e-324, -5e-324, 2.2250738585072014e-308, -0.0, 0.0, 1e16, 1e17, 1e21, 1e22,
    123456789012345680000.0, 1.5e300, 0.1 + 0.2, 1 / 3, 2**53, 2**53 + 1, 2**63, 2**64, -(2**63) - 1,
    10**30, -(10**30), 10**100, 1e-7, 1e-6, 9.999999999999999e22,
]  # fmt: skip
ODD_TEXTS = ['é', '\u2028', '\x00', '\x1f', '\x7f', '😀', 'a' * 5000, '"\\', '\u0085', '\uffff', '\U0010ffff']
ODD_OTHERS: list[Any] = [[[[[1]]]], [[]], [{}], {'x': [1.0]}, {'😀': 1}, {'\x00': None}, True, None, [1, 1.0]]
ODD = [*ODD_NUMBERS, *ODD_TEXTS, *ODD_OTHERS, [0.0, -0.0], [1e308, 1e308]]


def _at(schema: Any) -> dict[str, Any]:
    return {'properties': {'a': schema}}


@pytest.mark.parametrize('value', ODD, ids=repr)
@pytest.mark.parametrize(
    'schema',
    [
        {'type': 'integer'}, {'type': 'string'}, {'type': ['null', 'boolean']}, {'const': 'zz'},
        {'enum': [1e308, -0.0]}, {'minimum': 1e308}, {'maximum': -1e308}, {'maximum': 5e-324},
        {'exclusiveMinimum': 10**30}, {'multipleOf': 1e-300}, {'multipleOf': 0.1}, {'multipleOf': 10**20},
        {'multipleOf': 7}, {'maxLength': 1}, {'minLength': 6000}, {'pattern': '^a+$'}, {'maxItems': 0},
        {'uniqueItems': True}, {'items': {'type': 'string'}}, {'maxProperties': 0},
        {'oneOf': [{}, {}]}, {'anyOf': [{'type': 'string'}, {'type': 'object'}]},
        {'type': 'array', 'contains': {'const': 5}}, {'required': ['q']}, {'additionalProperties': False},
        False, {'propertyNames': {'maxLength': 0}}, {'unevaluatedProperties': False},
    ],
    ids=repr,
)  # fmt: skip
def test_odd_instances_are_worded_alike(schema: Any, value: Any) -> None:
    assert_same(_at(schema), value)


@pytest.mark.parametrize(('keyword', 'instance'), list(itertools.product(ODD, ODD[::3])), ids=repr)
def test_odd_keyword_values_are_rendered_alike(keyword: Any, instance: Any) -> None:
    for schema in ({'const': keyword}, {'enum': [keyword, 'q', 3, None]}, {'not': {'enum': [keyword, instance]}}):
        assert_same(_at(schema), instance)


NUMBERS = [v for v in ODD_NUMBERS if v != 0]


@pytest.mark.parametrize(('bound', 'instance'), list(itertools.product(NUMBERS, ODD_NUMBERS[::2])), ids=repr)
def test_odd_bounds_are_rendered_alike(bound: Any, instance: Any) -> None:
    for schema in (
        {'minimum': bound},
        {'exclusiveMaximum': bound},
        {'multipleOf': abs(bound)},
        {'type': 'integer', 'maximum': bound},
    ):
        assert_same(_at(schema), instance)


ODD_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(ODD_NUMBERS),
    st.text(max_size=6),
    st.sampled_from(ODD_TEXTS),
)
ODD_INSTANCES = st.recursive(
    ODD_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES | st.text(max_size=3), inner, max_size=4),
    max_leaves=12,
)


def _odd_leaf() -> st.SearchStrategy[dict[str, Any]]:
    numbers = st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    return st.fixed_dictionaries(
        {},
        optional={
            'type': st.sampled_from(['integer', 'number', 'string', 'object', 'array', 'boolean', 'null'])
            | st.lists(st.sampled_from(['integer', 'number', 'string', 'array', 'null', 'boolean']), min_size=1),
            'minimum': numbers,
            'maximum': numbers,
            'exclusiveMinimum': numbers,
            'exclusiveMaximum': numbers,
            'multipleOf': st.floats(min_value=1e-300, max_value=1e300) | st.integers(1, 2**70),
            'maxLength': st.integers(0, 3),
            'minLength': st.integers(0, 3),
            'pattern': PATTERNS,
            'enum': st.lists(ODD_INSTANCES, min_size=1, max_size=4),
            'const': ODD_INSTANCES,
        },
    )


def _odd_node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    names = NAMES | st.text(max_size=2)
    return st.fixed_dictionaries(
        {},
        optional={
            'type': st.sampled_from(['object', 'array', 'string', 'integer']),
            'properties': st.dictionaries(names, inner, max_size=3),
            'patternProperties': st.dictionaries(PATTERNS, inner, max_size=2),
            'additionalProperties': st.booleans() | inner,
            'required': st.lists(names, max_size=3, unique=True),
            'minProperties': st.integers(0, 3),
            'maxProperties': st.integers(0, 3),
            'propertyNames': st.booleans() | inner,
            'dependentRequired': st.dictionaries(names, st.lists(names, max_size=2, unique=True), max_size=2),
            'items': inner,
            'prefixItems': st.lists(inner, min_size=1, max_size=2),
            'contains': inner,
            'minContains': st.integers(0, 2),
            'maxContains': st.integers(0, 2),
            'minItems': st.integers(0, 3),
            'maxItems': st.integers(0, 3),
            'uniqueItems': st.booleans(),
            'anyOf': st.lists(inner, min_size=1, max_size=2),
            'allOf': st.lists(inner, min_size=1, max_size=2),
            'oneOf': st.lists(inner, min_size=1, max_size=3),
            'not': inner,
            'if': inner,
            'then': inner,
            'else': inner,
            'dependentSchemas': st.dictionaries(names, inner, max_size=2),
            'unevaluatedProperties': st.booleans() | inner,
            'unevaluatedItems': st.booleans() | inner,
        },
    )


@settings(max_examples=1200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.recursive(_odd_leaf() | st.booleans(), _odd_node, max_leaves=8), ODD_INSTANCES)
def test_differential_with_odd_values(schema: Any, instance: Any) -> None:
    """Accept/reject, pointers, keywords, messages, order and validate_json agree with odd values everywhere."""
    assert_same(schema, instance)


@pytest.mark.parametrize(
    ('schema', 'instance'),
    [
        ({'unevaluatedProperties': False, 'additionalProperties': False}, {'a': None}),
        ({'unevaluatedProperties': False, 'additionalProperties': {'type': 'string'}}, {'a': None}),
        ({'unevaluatedProperties': {'type': 'string'}, 'additionalProperties': False}, {'a': None, 'b': 1}),
    ],
)
def test_a_property_failing_additional_properties_is_evaluated(schema: Any, instance: Any) -> None:
    """The crate counts every name ``additionalProperties`` applied to, failing or not: no unevaluated error."""
    assert_same(schema, instance)
    keywords = [e['keyword'] for e in TwinValidator(schema).errors(instance)]
    assert keywords and 'unevaluatedProperties' not in keywords


@pytest.mark.parametrize('instance', [{'a': None}, {'1': None}, {'é': 1, 'x': 2}])
def test_unevaluated_properties_beside_a_unicode_class_pattern(instance: Any) -> None:
    """A ``patternProperties`` pattern in the crate's dialect (``\\p{L}``) is matched by the twin's own engine."""
    schema = {'unevaluatedProperties': False, 'patternProperties': {'^\\p{L}+$': {}}}
    assert_same(schema, instance)


_NESTED_DEFS = {
    'typed': {'properties': {'a': {'type': 'integer'}}, 'additionalProperties': {'type': 'string'}},
    'letters': {'patternProperties': {'^\\p{L}+$': {'type': 'integer'}}, 'unevaluatedProperties': {'const': 0}},
}


@pytest.mark.parametrize(
    'schema',
    [
        {'allOf': [{'properties': {'a': {'type': 'string'}}}, {'patternProperties': {'^x': {}}}]},
        {'allOf': [{'additionalProperties': {'type': 'integer'}}]},
        {'anyOf': [{'properties': {'a': {'type': 'integer'}}}, {'properties': {'b': {}}}]},
        {'oneOf': [{'properties': {'a': {'type': 'integer'}}}, {'properties': {'b': {}}}]},
        {'oneOf': [True, {'properties': {'a': {}}}]},
        {'oneOf': [{'properties': {'a': {}}}, {'properties': {'b': {}}, 'required': ['b']}]},
        {
            'if': {'properties': {'a': {'const': 1}}},
            'then': {'properties': {'b': {}}},
            'else': {'properties': {'xa': {}}},
        },
        {'if': True, 'then': {'additionalProperties': False}},
        {'dependentSchemas': {'a': {'properties': {'b': {'type': 'string'}}}}},
        {'$ref': '#/$defs/typed'},
        {'$ref': '#/$defs/letters', 'properties': {'b': {}}},
        {'allOf': [{'$ref': '#/$defs/typed'}, {'not': {'properties': {'b': {}}}}]},
        {'anyOf': [{'unevaluatedProperties': {'type': 'integer'}}, {'patternProperties': {'\\d': {}}}]},
        {'allOf': [{'allOf': [{'properties': {'a': {}}, 'additionalProperties': False}]}], 'properties': {'b': {}}},
        {'properties': {'a': {}}, 'additionalProperties': False, 'required': ['b']},
    ],
    ids=repr,
)
@pytest.mark.parametrize(
    'instance', [{}, {'a': 1}, {'a': 'x', 'b': 2}, {'a': 1, 'b': 'x', 'xa': None, 'é': 0, 'ab1': 3}]
)
@pytest.mark.parametrize('unevaluated', [False, {'type': 'string'}])
def test_unevaluated_properties_through_in_place_applicators(schema: Any, instance: Any, unevaluated: Any) -> None:
    """Which names ``allOf``/``anyOf``/``oneOf``/``if``/``dependentSchemas``/``$ref`` branches evaluate, as the crate."""
    assert_same({**schema, 'unevaluatedProperties': unevaluated, '$defs': _NESTED_DEFS}, instance)


def _evaluating_node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            'properties': st.dictionaries(NAMES, inner, max_size=2),
            'patternProperties': st.dictionaries(PATTERNS, inner, max_size=2),
            'additionalProperties': st.booleans() | inner,
            'unevaluatedProperties': st.booleans() | inner,
            'required': st.lists(NAMES, max_size=2, unique=True),
            'allOf': st.lists(inner, min_size=1, max_size=2),
            'anyOf': st.lists(inner, min_size=1, max_size=2),
            'oneOf': st.lists(inner, min_size=1, max_size=3),
            'not': inner,
            'if': inner,
            'then': inner,
            'else': inner,
            'dependentSchemas': st.dictionaries(NAMES, inner, max_size=2),
            '$ref': st.sampled_from(['#/$defs/typed', '#/$defs/letters', '#']),
        },
    )


_EVALUATING_LEAVES = st.booleans() | st.fixed_dictionaries(
    {},
    optional={
        'type': st.sampled_from(['integer', 'string', 'object', 'null']),
        'const': st.sampled_from([0, 1, 'x']),
        'minProperties': st.integers(1, 2),
    },
)
_EVALUATING_INSTANCES = st.dictionaries(
    NAMES, st.sampled_from([0, 1, 'x', None, {}, {'a': 1}]) | st.integers(), max_size=5
)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.recursive(_EVALUATING_LEAVES, _evaluating_node, max_leaves=8),
    st.booleans() | _EVALUATING_LEAVES,
    _EVALUATING_INSTANCES,
)
def test_differential_nested_unevaluated_properties(schema: Any, unevaluated: Any, instance: Any) -> None:
    """``unevaluatedProperties`` beside nested evaluating keywords and references: twin and crate agree."""
    root = schema if isinstance(schema, dict) else {'allOf': [schema]}
    assert_same({**root, 'unevaluatedProperties': unevaluated, '$defs': _NESTED_DEFS}, instance)
