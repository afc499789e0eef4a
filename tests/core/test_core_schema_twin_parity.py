"""The pure-Python SchemaValidator twin answers as the Rust core (the ``jsonschema`` crate 0.61).

Each case runs through ``toolweave._core.SchemaValidator`` and ``toolweave._reference.schema.SchemaValidator``:
accept/reject, error pointers, keywords, messages (the crate's wording) and their order, and ``validate_json``
(its whole ``SchemaValidationError`` text too) must agree.
"""

from __future__ import annotations

import json
import re
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from toolweave._core import SchemaValidator as RustValidator
from toolweave._reference.schema import SchemaValidator as TwinValidator
from toolweave.exceptions import SchemaValidationError


def _answer(cls: Any, schema: Any, instance: Any) -> Any:
    """What one implementation says: build outcome, is_valid, (pointer, keyword, message) list, validate_json outcome.

    ``validate_json`` takes JSON objects only (arguments): other instances are checked by the rest.
    """
    try:
        validator = cls(schema)
    except ValueError:
        return 'invalid schema'
    issues = [(e['pointer'], e['keyword'], e['message']) for e in validator.errors(instance)]
    checked: Any = None
    if isinstance(instance, dict):
        try:
            checked = validator.validate_json(json.dumps(instance))
        except SchemaValidationError as exc:
            checked = [str(exc), *[(e['pointer'], e['keyword'], e['message']) for e in exc.errors]]
    return validator.is_valid(instance), issues, checked


def assert_same(schema: Any, instance: Any) -> Any:
    rust = _answer(RustValidator, schema, instance)
    assert _answer(TwinValidator, schema, instance) == rust
    return rust


TREE = {
    'type': 'object',
    'properties': {'v': {'type': 'integer'}, 'kids': {'type': 'array', 'items': {'$ref': '#'}}},
    'required': ['v'],
}
CYCLE = {'$defs': {'a': {'$ref': '#/$defs/b'}, 'b': {'$ref': '#/$defs/a'}}, '$ref': '#/$defs/a'}


@pytest.mark.parametrize(
    ('schema', 'instance', 'valid'),
    [
        (TREE, {'v': 1, 'kids': [{'v': 2, 'kids': [{'v': 'x'}, {}]}]}, False),
        (TREE, {'v': 1, 'kids': [{'v': 2, 'kids': [{'v': 3}]}]}, True),
        ({'$ref': '#'}, 1, True),
        ({'$ref': '#', 'type': 'string'}, 1, False),
        (CYCLE, {'nested': [1, 2]}, True),
        ({'not': {'$ref': '#'}}, 1, False),
        ({'anyOf': [{'$ref': '#'}, {'type': 'string'}]}, 1, True),
        ({'$defs': {'a': {'anyOf': [{'$ref': '#/$defs/a'}, {'type': 'integer'}]}}, '$ref': '#/$defs/a'}, 's', True),
        ({'$defs': {'a': {'$ref': '#/$defs/a'}}, 'properties': {'x': {'$ref': '#/$defs/a'}}}, {'x': 1}, True),
        (
            {
                '$schema': 'http://json-schema.org/draft-07/schema#',
                'definitions': {'a': {'$ref': '#/definitions/a'}},
                'properties': {'x': {'$ref': '#/definitions/a'}},
            },
            {'x': 1},
            True,
        ),
    ],
)
def test_ref_recursion_and_cycles(schema: Any, instance: Any, valid: bool) -> None:
    """A recursive schema validates; a ``$ref`` cycle that reaches no keyword is ``true`` (was a RecursionError)."""
    assert assert_same(schema, instance)[0] is valid


_DRAFTS = [
    'http://json-schema.org/draft-04/schema#',
    'http://json-schema.org/draft-06/schema#',
    'http://json-schema.org/draft-07/schema#',
    'https://json-schema.org/draft/2019-09/schema',
    'https://json-schema.org/draft/2020-12/schema',
]


@pytest.mark.parametrize('draft', _DRAFTS)
@pytest.mark.parametrize(
    'instance', [{'v': 1, 'kids': [{'v': 2, 'kids': [{}, {'v': 'x', 'extra': 1}]}]}, {'v': 1, 'kids': [{'v': 2}]}]
)
def test_a_root_that_names_its_draft_keeps_the_crates_keywords_when_reached_again(draft: str, instance: Any) -> None:
    """A ``$ref: "#"`` back to a root that declares ``$schema`` stays on the twin's keywords (the package's
    ``evolve`` picked its stock class for it: ``'v' is a required property`` instead of the crate's ``"v"``)."""
    schema = {**TREE, '$schema': draft, 'additionalProperties': False}
    assert assert_same(schema, instance)[0] is (instance == {'v': 1, 'kids': [{'v': 2}]})


_RECURSIVE = 'https://json-schema.org/draft/2019-09/schema'


@pytest.mark.parametrize(
    ('schema', 'instance', 'valid'),
    [
        ({'$recursiveAnchor': True, 'anyOf': [{'$recursiveRef': '#'}]}, {'a': 1}, True),
        (
            {'$recursiveAnchor': True, 'anyOf': [{'$recursiveRef': '#'}], 'unevaluatedProperties': False},
            {'a': 1},
            False,
        ),
        ({'$recursiveAnchor': True, 'allOf': [{'$recursiveRef': '#'}], 'minProperties': 2}, {'a': 1}, False),
        ({'$recursiveAnchor': True, 'not': {'$recursiveRef': '#'}}, 1, False),
        (
            {'$recursiveAnchor': True, 'properties': {'c': {'$recursiveRef': '#'}}, 'required': ['x']},
            {'x': 1, 'c': {'c': {}}},
            False,
        ),
        ({'$recursiveAnchor': True, 'items': {'$recursiveRef': '#'}, 'type': 'array'}, [[[]], []], True),
    ],
)
def test_recursive_ref_cycles_end_as_the_crates(schema: Any, instance: Any, valid: bool) -> None:
    """2019-09's ``$recursiveRef`` back to its ``$recursiveAnchor`` has the ``$ref`` cycle guard (the twin raised
    RecursionError where one reached the same schema again on the same instance)."""
    assert assert_same({'$schema': _RECURSIVE, **schema}, instance)[0] is valid


def test_a_recursive_schema_validates_as_deep_as_the_core_allows() -> None:
    """A 254-level instance through a recursive schema (the core takes 256 levels): the twin hit Python's
    recursion limit (RecursionError) past about 120."""
    tree: Any = {'v': 1}
    for _ in range(126):
        tree = {'v': 1, 'kids': [tree]}
    nested: Any = []
    for _ in range(255):
        nested = [nested]
    assert RustValidator(TREE).is_valid(tree) is TwinValidator(TREE).is_valid(tree) is True
    schema = {'items': {'$ref': '#'}, 'type': 'array'}
    assert RustValidator(schema).is_valid(nested) is TwinValidator(schema).is_valid(nested) is True


@pytest.mark.parametrize(
    ('schema', 'count'),
    [
        ({'allOf': [{'$ref': '#'}], 'type': 'boolean'}, 3),
        (
            {
                '$defs': {'a': {'$ref': '#/$defs/b', 'minimum': 3}, 'b': {'$ref': '#/$defs/a', 'maximum': 1}},
                '$ref': '#/$defs/a',
            },
            4,
        ),
        ({'$defs': {'d': {'allOf': [{'$ref': '#/$defs/d'}], 'type': 'boolean'}}, '$ref': '#/$defs/d'}, 2),
    ],
)
def test_a_cycle_with_constraints_repeats_its_errors_as_the_crate_unrolls_it(schema: Any, count: int) -> None:
    """The crate guards only back-references: the first pass through a cycle is not cut, so errors repeat."""
    assert len(assert_same(schema, 2)[1]) == count


@pytest.mark.parametrize(
    ('schema', 'built'),
    [
        ({'properties': {'a': {'$ref': '#/$defs/nope'}}}, False),
        ({'not': {'$ref': '#/nope'}}, False),
        ({'$ref': '#/$defs/a', '$defs': {'a': {'$ref': '#/$defs/zz'}}}, False),
        ({'$id': 'http://a.example/root', 'properties': {'a': {'$ref': 'other'}}}, False),
        ({'$ref': 'http://example.com/remote'}, False),
        ({'$defs': {'unused': {'$ref': '#/nope'}}}, True),  # the crate compiles only what is reachable
        ({'x-unknown': {'$ref': '#/nope'}}, True),
        ({'$ref': 'https://json-schema.org/draft/2020-12/schema'}, True),  # bundled meta-schema
        (
            {
                '$id': 'http://a.example/root',
                '$defs': {'o': {'$id': 'other', 'type': 'string'}},
                'properties': {'a': {'$ref': 'other'}},
            },
            True,
        ),
    ],
)
def test_references_resolve_at_build_and_are_never_fetched(
    schema: Any, built: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unresolvable ``$ref`` is refused when building (the twin raised ``Unresolvable`` while validating,
    or passed when the member was absent); a remote one is never fetched (the package would open the URL)."""
    import urllib.request

    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError('the twin tried to fetch a $ref')

    monkeypatch.setattr(urllib.request, 'urlopen', no_network)
    assert (assert_same(schema, {'a': 'x'}) != 'invalid schema') is built


@pytest.mark.parametrize(
    ('pattern', 'text', 'matches'),
    [
        (r'^\p{L}+$', 'héllo', True),
        (r'^\p{L}+$', 'h1', False),
        (r'^\P{L}+$', '12', True),
        (r'^\pL\pN$', 'a٣', True),
        (r'(?i)^abc$', 'ABC', True),
        (r'^\x{263A}$', '☺', True),
        (r'^\d+$', '٣', False),  # ECMA `\d` is ASCII in the crate
        (r'^\w+$', 'é', False),
        (r'^\s$', '\u2028', True),
        (r'^\s$', '\x1c', False),
        (r'^.$', '\u2028', False),
        (r'^a$', 'a\n', False),  # `$` is the end of the text, not before a final newline
        (r'(?m)^a$', 'b\na', True),
        (r'^[\d\s]+$', '1 2', True),
        (r'^[^\d]$', '5', False),
        (r'^[a&&b]$', '&', True),
        (r'^[\w--z]$', '-', True),
        (r'^\cJ$', '\n', True),
        (r'(?=a)\w', 'a', True),
        (r'^(?<year>\d{4})-\d{2}$', '2024-05', True),
        (r'^[a-z]{2,3}$', 'abcd', False),
    ],
)
def test_patterns_match_as_the_crate(pattern: str, text: str, matches: bool) -> None:
    schema = {'type': 'string', 'pattern': pattern}
    assert assert_same(schema, text)[0] is matches
    assert assert_same({'patternProperties': {pattern: {'type': 'null'}}}, {text: 1})[0] is not matches


@pytest.mark.parametrize('pattern', [r'\a', '(', '[a', r'a{2,1}'])
def test_patterns_the_crate_refuses_are_refused(pattern: str) -> None:
    assert assert_same({'pattern': pattern}, 'a') == 'invalid schema'


@pytest.mark.parametrize(
    ('multiple', 'value', 'valid'),
    [
        (1e-300, 1e300, True),
        (0.1, 0.3, True),
        (0.01, 1.13, True),
        (0.01, 1.131, False),
        (1e-5, 3e-5, True),
        (0.3, 0.1, False),
        (1.5, 4.5, True),
        (1.5, 4, False),
        (2, 4.0, True),
        (2, 5, False),
        (2, 2**63 - 1, False),
        (3, 2**64 - 1, True),
        (1e20, 3e20, True),
        (0.5, 0, True),
        (1e-308, 1.0, True),
        (0.07, 1070468.14, True),
        (1e-10, 1e-3, True),
        (123.456, 1e300, False),
    ],
)
def test_multiple_of_as_the_crate(multiple: float, value: float, valid: bool) -> None:
    assert assert_same({'multipleOf': multiple}, value)[0] is valid


@pytest.mark.parametrize(
    ('schema', 'instance', 'keywords'),
    [
        ({'propertyNames': {'maxLength': 2}}, {'abc': 1}, ['propertyNames']),
        ({'propertyNames': {'maxLength': 2, 'pattern': '^x'}}, {'abc': 1, 'yy': 2}, ['propertyNames'] * 3),
        ({'propertyNames': False}, {'abc': 1, 'yy': 2}, ['falseSchema']),
        ({'propertyNames': False}, {}, []),
        ({'contains': {'type': 'integer'}, 'maxContains': 1}, [1, 2], ['contains']),
        ({'contains': {'type': 'integer'}, 'minContains': 2}, [1, 'a'], ['contains']),
        ({'contains': {'type': 'integer'}}, ['a'], ['contains']),
        ({'dependentRequired': {'a': ['b', 'c']}}, {'a': 1}, ['required', 'required']),
        ({'$schema': 'http://json-schema.org/draft-07/schema#', 'dependencies': {'a': ['b']}}, {'a': 1}, ['required']),
        (
            {'$schema': 'http://json-schema.org/draft-07/schema#', 'dependencies': {'a': {'required': ['q']}}},
            {'a': 1},
            ['required'],
        ),
    ],
)
def test_keywords_named_as_the_crate(schema: Any, instance: Any, keywords: list[str]) -> None:
    assert [k for _, k, _ in assert_same(schema, instance)[1]] == keywords


@pytest.mark.parametrize(
    ('schema', 'instance'),
    [
        ({'required': ['a'], 'minProperties': 2}, {'b': 1}),
        ({'patternProperties': {'^x': {'type': 'integer'}}, 'additionalProperties': False}, {'xa': 's', 'b': 1}),
        ({'additionalProperties': False, 'patternProperties': {'^x': {'type': 'integer'}}}, {'b': 1, 'xa': 's'}),
        (
            {
                'additionalProperties': {'type': 'string'},
                'properties': {'a': {'type': 'string'}},
                'patternProperties': {'a': {'minLength': 2}, '^b': {'type': 'integer'}},
            },
            {'b': 's', 'a': 1, 'c': 2},
        ),
        ({'properties': {'a': {'type': 'integer'}}, 'required': ['a'], 'additionalProperties': False}, {'b': 1}),
        ({'properties': {'a': {}, 'c': {}}, 'required': ['a', 'c'], 'additionalProperties': False}, {'b': 1}),
        ({'properties': {'a': {'type': 'integer'}, 'c': {}}, 'required': ['c', 'z']}, {'b': 1, 'a': 'x'}),
        ({'items': {'type': 'integer'}, 'minItems': 3, 'type': 'array'}, ['a']),
        ({'anyOf': [{'type': 'string'}], 'type': 'integer', 'enum': [2], 'minimum': 5}, 1.5),
        ({'if': {'type': 'integer'}, 'then': {'minimum': 3}, 'else': {'type': 'string'}}, 1),
        ({'$ref': '#/$defs/s', '$defs': {'s': {'maxLength': 1}}, 'type': 'string', 'pattern': '^a'}, 'bcd'),
    ],
)
def test_error_order_as_the_crate(schema: Any, instance: Any) -> None:
    assert assert_same(schema, instance)[1]


@pytest.mark.parametrize(
    ('schema', 'instance'),
    [({'enum': ['\ud800']}, 'a'), ({'properties': {'\udc00': {}}}, {}), ({'type': 'string'}, ['\ud800'])],
)
def test_a_lone_surrogate_is_refused_alike(schema: Any, instance: Any) -> None:
    """A lone surrogate (in a schema or an instance) cannot be UTF-8: a ``ValueError`` naming its JSON pointer
    (tests/core/test_core_schema_surrogates.py), from building or validating; the twin built such schemas and
    validated such instances."""
    for cls in (RustValidator, TwinValidator):
        with pytest.raises(ValueError, match='lone surrogate U[+]D[8C]00 in .* at JSON pointer') as caught:
            cls(schema).errors(instance)
        assert not isinstance(caught.value, UnicodeEncodeError)


# --- hypothesis: generated schemas mixing the keywords above -----------------------------------------------

NAMES = st.sampled_from(['a', 'b', 'xa', 'xb', 'é', 'ab1'])
PATTERNS = st.sampled_from(['^x', 'a', r'^\p{L}+$', r'\d', r'^\w{2}$', '(?i)^A', r'[^\s]$', 'b$'])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-20, 20),
    st.sampled_from([0.5, 1.5, 0.1, 0.3, 1e-3, 2.0, -4.5, 1e300, 1e-300, 1e-5, -1.25e-5, 1e-7, 1e16, 3.5e20, -0.0]),
    st.text(alphabet='abxé1 "\\\n\x01\x7f', max_size=4),
)
INSTANCES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES, inner, max_size=4),
    max_leaves=12,
)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            'type': st.sampled_from(['integer', 'number', 'string', 'object', 'array', 'boolean', 'null'])
            | st.lists(st.sampled_from(['integer', 'number', 'string', 'array', 'null']), min_size=1, unique=True),
            'minimum': st.integers(-5, 5) | st.sampled_from([1.0, -2.5, 1e-5]),
            'maximum': st.sampled_from([0, 1.5, 1e16]),
            'multipleOf': st.sampled_from([2, 3, 0.5, 0.1, 1e-3, 1.5, 1e-300, 1e-7, 1e20, 2.0]),
            'maxLength': st.integers(0, 3),
            'pattern': PATTERNS,
            'enum': st.lists(SCALARS, min_size=1, max_size=3),
            'const': SCALARS,
            'exclusiveMaximum': st.sampled_from([0, 2.5, 10]),
            'minLength': st.integers(0, 2),
        },
    )


def _node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            'type': st.sampled_from(['object', 'array', 'string', 'integer']),
            'properties': st.dictionaries(NAMES, inner, max_size=3),
            'patternProperties': st.dictionaries(PATTERNS, inner, max_size=2),
            'additionalProperties': st.booleans() | inner,
            'required': st.lists(NAMES, max_size=3, unique=True),
            'minProperties': st.integers(0, 3),
            'propertyNames': st.booleans() | inner,
            'dependentRequired': st.dictionaries(NAMES, st.lists(NAMES, max_size=2, unique=True), max_size=2),
            'items': inner,
            'contains': inner,
            'minContains': st.integers(0, 2),
            'maxContains': st.integers(0, 2),
            'minItems': st.integers(0, 3),
            'anyOf': st.lists(inner, min_size=1, max_size=2),
            'allOf': st.lists(inner, min_size=1, max_size=2),
            'oneOf': st.lists(inner, min_size=1, max_size=2),
            'not': inner,
            'if': inner,
            'then': inner,
            'else': inner,
            'prefixItems': st.lists(inner, min_size=1, max_size=2),
            'uniqueItems': st.booleans(),
            'maxItems': st.integers(0, 3),
            'maxProperties': st.integers(0, 3),
            'dependentSchemas': st.dictionaries(NAMES, inner, max_size=2),
            '$ref': st.sampled_from(['#', '#/$defs/d']),
        },
    )


def _rooted(schema: Any, named: bool) -> Any:
    """``schema`` with the ``$defs`` its ``$ref`` may name; ``named``: with the root's ``$schema`` too (a root that
    names its draft is reached again by ``$ref: "#"``: the twin once left its own keywords there)."""
    if not isinstance(schema, dict):
        return schema
    rooted = {**schema, '$defs': {'d': {'anyOf': [{'$ref': '#/$defs/d'}, {'type': 'object'}]}}}
    return {'$schema': _DRAFTS[-1], **rooted} if named else rooted


SCHEMAS = st.builds(_rooted, st.recursive(_leaf() | st.booleans(), _node, max_leaves=6), st.booleans())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, INSTANCES)
def test_differential_generated_schemas(schema: Any, instance: Any) -> None:
    """Accept/reject, pointers, keywords, messages, order and validate_json agree on schemas mixing these keywords."""
    assert_same(schema, instance)


PATTERN_ATOMS = st.sampled_from(
    [
        'a',
        'é',
        'A',
        r'\d',
        r'\D',
        r'\w',
        r'\W',
        r'\s',
        r'\S',
        '.',
        r'\p{L}',
        r'\P{L}',
        r'\pN',
        '[a-c]',
        '[^a]',
        r'[\d\s]',
        r'[^\w]',
        '(?i)',
        '^',
        '$',
        '*',
        '+',
        '?',
        '{1,2}',
        '|',
        '(',
        ')',
        '[a&&b]',
        r'\b',
        r'\x41',
        r'\u00e9',
        r'\cJ',
        r'\n',
        '(?=a)',
        '(?!b)',
        '(?m)',
        '(?s)',
        r'[\w--z]',
        r'\.',
        '-',
        '[-a]',
    ]
)
# a quantifier on a quantifier (`a*+`, `a{2}+`, `a*{2}`, `a**`): see the docstring below
STACKED = re.compile(r'[*+?}][*+{]|[*+?}]\?[*+?{]')
TEXTS = st.text(alphabet='aAé٣1_ \t\n\r\x1c\u2028\xa0-.', max_size=5)


@settings(max_examples=400, deadline=None)
@given(st.lists(PATTERN_ATOMS, min_size=1, max_size=5).map(''.join).filter(lambda p: not STACKED.search(p)), TEXTS)
def test_differential_generated_patterns(pattern: str, text: str) -> None:
    """Generated patterns: refused alike, and matching alike (``pattern`` and ``patternProperties``).

    Known differences, left out: a quantifier on a quantifier. The crate's engines read them unevenly (``a*+``
    possessive, ``a{1}+`` not, ``a*{1,2}`` not matching ``''``, ``a**`` refused except after leading
    look-aheads); the twin reads ``(?:a*){1,2}`` for a counted one and the ``regex`` package's meaning otherwise.
    """
    assert_same({'pattern': pattern}, text)
    assert_same({'patternProperties': {pattern: False}}, {text: 1})


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(st.floats(1e-9, 1e9), st.integers(1, 10**6), st.sampled_from([1e-300, 1e-308, 0.07, 1e20, 2.0**53])),
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(-(2**63), 2**64 - 1),
        st.decimals('-1e6', '1e6', places=3).map(float),
    ),
)
def test_differential_multiple_of(multiple: float, value: float) -> None:
    assert_same({'multipleOf': multiple}, value)
