"""Schema functions of the core (Rust and pure-Python twin): fixed cases and differential fuzzing."""

import json

import hypothesis.strategies as st
import jsonschema
import pytest
import toolweave._core as rust_core
import toolweave._reference as reference_core
from hypothesis import given, settings
from toolweave.exceptions import SchemaValidationError, ToolArgumentsError

# Recent hypothesis versions misdetect that these `extend` functions use their argument (they do,
# through st.builds/st.lists): the strategies below recurse, as the generated examples show.
pytestmark = pytest.mark.filterwarnings("ignore:extend=.*doesn't use it's argument")


def test_hoist_rules(core):
    defs = {'Node': {'type': 'string'}, 'Node_2': {'type': 'integer'}}
    schema = {'$ref': '#/$defs/Node', '$defs': {'Node': {'properties': {'next': {'$ref': '#/$defs/Node'}}}}}
    out, new_defs = core.hoist_defs_to_root(schema, defs)
    assert out == {'$ref': '#/$defs/Node_3'}
    assert new_defs == {**defs, 'Node_3': {'properties': {'next': {'$ref': '#/$defs/Node_3'}}}}
    assert '$defs' in schema and defs == {'Node': {'type': 'string'}, 'Node_2': {'type': 'integer'}}  # inputs untouched
    same, again = core.hoist_defs_to_root({'$defs': {'Node': {'type': 'string'}}, '$ref': '#/$defs/Node'}, new_defs)
    assert same == {'$ref': '#/$defs/Node'} and again == new_defs


def test_hoist_rewrites_only_moved_parts(core):
    # an existing root definition referring to #/$defs/Item keeps pointing at the old Item
    defs = {'Item': {'type': 'string'}, 'Holder': {'items': {'$ref': '#/$defs/Item'}}}
    out, new_defs = core.hoist_defs_to_root(
        {'items': {'$ref': '#/$defs/Item'}, '$defs': {'Item': {'type': 'integer'}}}, defs
    )
    assert out == {'items': {'$ref': '#/$defs/Item_2'}}
    assert new_defs['Holder'] == {'items': {'$ref': '#/$defs/Item'}}
    assert new_defs['Item_2'] == {'type': 'integer'}


def test_forbid_and_upper(core):
    schema = {
        'type': 'object',
        'properties': {
            'm': {'type': 'object', 'additionalProperties': {'type': 'integer'}},
            'o': {'type': 'object', 'additionalProperties': True},
            'type': {'type': 'string', 'enum': ['object']},
        },
    }
    out = core.forbid_additional_properties(schema)
    assert out['additionalProperties'] is False
    assert out['properties']['m']['additionalProperties'] == {'type': 'integer'}
    assert out['properties']['o']['additionalProperties'] is True
    up = core.upper_case_type_values(out)
    assert up['type'] == 'OBJECT' and up['properties']['type'] == {'type': 'STRING', 'enum': ['object']}
    assert 'additionalProperties' not in schema  # input untouched


def test_errors_are_typed(core):
    with pytest.raises(TypeError, match='not a JSON value'):
        core.forbid_additional_properties({'a': object()})
    with pytest.raises(TypeError, match='keys must be str'):
        core.forbid_additional_properties({1: 2})
    with pytest.raises(ValueError, match='NaN'):
        core.forbid_additional_properties({'a': float('nan')})
    with pytest.raises(ValueError, match='64-bit'):
        core.forbid_additional_properties({'a': 2**70})
    deep: dict = {}
    for _ in range(400):
        deep = {'items': deep}
    with pytest.raises(ValueError, match='deeper than 256'):
        core.forbid_additional_properties(deep)
    with pytest.raises(ValueError, match='unknown schema dialect "x"; supported: openai-strict, gemini, anthropic'):
        core.to_dialect({}, 'x')
    with pytest.raises(TypeError, match='dialect must be a str'):
        core.to_dialect({}, 3)


def test_openai_strict(core):
    schema = {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        'type': 'object',
        'properties': {
            'q': {'type': 'string', 'minLength': 2, 'description': 'Query'},
            'n': {'type': 'integer', 'default': 3},
            'u': {'enum': ['a', 'b'], 'type': 'string'},
            'r': {'$ref': '#/$defs/R', 'description': 'An R'},
            'm': {'anyOf': [{'type': 'integer'}, {'type': 'null'}], 'default': None},
            'v': {
                'oneOf': [
                    {'$ref': '#/$defs/R'},
                    {'type': 'object', 'properties': {'k': {'const': 'x'}}, 'required': ['k']},
                ]
            },
        },
        'required': ['q', 'v'],
        '$defs': {'R': {'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']}},
    }
    out = core.to_dialect(schema, 'openai-strict')
    assert out == {
        'type': 'object',
        'properties': {
            'q': {'type': 'string', 'description': 'Query (minLength: 2)'},
            'n': {'type': ['integer', 'null'], 'description': 'default: 3'},
            'u': {'enum': ['a', 'b', None], 'type': ['string', 'null']},
            'r': {'anyOf': [{'$ref': '#/$defs/R'}, {'type': 'null'}], 'description': 'An R'},
            'm': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]},
            'v': {
                'anyOf': [
                    {'$ref': '#/$defs/R'},
                    {
                        'type': 'object',
                        'properties': {'k': {'const': 'x'}},
                        'required': ['k'],
                        'additionalProperties': False,
                    },
                ]
            },
        },
        'required': ['q', 'n', 'u', 'r', 'm', 'v'],
        '$defs': {
            'R': {
                'type': 'object',
                'properties': {'a': {'type': 'integer'}},
                'required': ['a'],
                'additionalProperties': False,
            }
        },
        'additionalProperties': False,
    }
    jsonschema.Draft202012Validator.check_schema(out)


def test_openai_strict_nested_optional_const_becomes_nullable(core):
    out = core.to_dialect({'type': 'object', 'properties': {'k': {'const': 'x'}}}, 'openai-strict')
    assert out['properties']['k'] == {'anyOf': [{'const': 'x'}, {'type': 'null'}]}


def test_gemini(core):
    schema = {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        'type': 'object',
        'properties': {
            'a': {'anyOf': [{'$ref': '#/$defs/A'}, {'type': 'null'}], 'description': 'an A'},
            'n': {'$ref': '#/$defs/Node'},
            't': {'type': ['string', 'integer', 'null']},
            'c': {'const': 'fixed'},
            'i': {'enum': [1, 2], 'type': 'integer'},
            'd': {'type': 'string', 'format': 'date'},
            'p': {'type': 'array', 'prefixItems': [{'type': 'integer'}], 'uniqueItems': True},
            'm': {'type': 'object', 'additionalProperties': {'type': 'integer'}},
        },
        'required': ['n'],
        'additionalProperties': False,
        '$defs': {
            'A': {
                'type': 'object',
                'properties': {'x': {'type': 'integer', 'exclusiveMinimum': 0}},
                'additionalProperties': False,
            },
            'Node': {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}}},
        },
    }
    out = core.to_dialect(schema, 'gemini')
    assert out == {
        'type': 'object',
        'properties': {
            'a': {
                'description': 'an A',
                'type': 'object',
                'properties': {'x': {'type': 'integer', 'description': 'exclusiveMinimum: 0'}},
                'nullable': True,
            },
            'n': {'type': 'object', 'properties': {'next': {'type': 'object', 'description': 'recursive: "Node"'}}},
            't': {'anyOf': [{'type': 'string'}, {'type': 'integer'}], 'nullable': True},
            'c': {'enum': ['fixed'], 'type': 'string'},
            'i': {'type': 'integer', 'description': 'enum: [1,2]'},
            'd': {'type': 'string', 'description': 'format: "date"'},
            'p': {'type': 'array', 'description': 'prefixItems: [{"type":"integer"}]; uniqueItems: true'},
            'm': {'type': 'object', 'description': 'additionalProperties: {"type":"integer"}'},
        },
        'required': ['n'],
    }
    jsonschema.Draft202012Validator.check_schema(out)


def test_anthropic_is_a_copy(core):
    schema = {'type': 'object', 'properties': {'a': {'oneOf': [{'type': 'string'}]}}}
    out = core.to_dialect(schema, 'anthropic')
    assert out == schema and out is not schema


def test_validator_pointers_and_messages(core):
    v = core.SchemaValidator(
        {
            'type': 'object',
            'properties': {'a': {'type': 'array', 'items': {'type': 'integer'}}, 'b/c': {'type': 'string'}},
            'required': ['b/c'],
            'additionalProperties': False,
        }
    )
    instance = {'a': [1, 'x'], 'extra': 1}
    assert not v.is_valid(instance)
    errors = sorted((e['pointer'], e['keyword']) for e in v.errors(instance))
    assert errors == [('', 'additionalProperties'), ('', 'required'), ('/a/1', 'type')]
    with pytest.raises(SchemaValidationError) as info:
        v.validate(instance)
    assert sorted(e['pointer'] for e in info.value.errors) == ['', '', '/a/1']
    assert '/a/1: ' in str(info.value) and 'x' in str(info.value)
    assert v.validate({'b/c': 's'}) is None
    assert sorted(e['pointer'] for e in v.errors({'b/c': 1})) == ['/b~1c']


@pytest.mark.parametrize('text', ['{"n": 9223372036854775808}', '{"n": 1, "x": [{"y": 18446744073709551615}]}'])
def test_validate_json_int64_refuses_integers_beyond_the_signed_range(core, text):
    """``int64=True``: an integer above 2**63 - 1 is a ValueError (not a schema error), checked before the schema."""
    v = core.SchemaValidator({'type': 'object', 'properties': {'n': {'type': 'string'}}})
    with pytest.raises(ValueError, match=r'^integer out of the signed 64-bit range \(int64=True\)$') as info:
        v.validate_json(text, int64=True)
    assert not isinstance(info.value, SchemaValidationError | ToolArgumentsError)
    with pytest.raises(SchemaValidationError) as plain:  # without it the value is only validated
        v.validate_json(text)
    assert [(e['pointer'], e['keyword']) for e in plain.value.errors] == [('/n', 'type')]


def test_validate_json_int64_accepts_the_signed_range_and_reports_the_rest_as_before(core):
    v = core.SchemaValidator({'type': 'object', 'properties': {'n': {'type': 'integer'}}})
    text = '{"n": 9223372036854775807, "m": [-9223372036854775808, 1.5e300]}'
    assert v.validate_json(text, int64=True) == v.validate_json(text) == json.loads(text)
    with pytest.raises(SchemaValidationError) as invalid:
        v.validate_json('{"n": 1.5}', int64=True)
    assert [(e['pointer'], e['keyword']) for e in invalid.value.errors] == [('/n', 'type')]
    with pytest.raises(ToolArgumentsError) as broken:
        v.validate_json('{"n": 1', int64=True)
    assert (broken.value.position, broken.value.line, broken.value.column) == (7, 1, 8)
    with pytest.raises(ValueError, match='infinity'):
        v.validate_json('{"n": 1e400}', int64=True)


def test_validator_validate_json(core):
    v = core.SchemaValidator({'type': 'object', 'properties': {'n': {'type': 'integer'}}, 'required': ['n']})
    assert v.validate_json('{"n": 3}') == {'n': 3}
    assert v.validate_json(b'{"n": 3, "s": "\\u00e9"}') == {'n': 3, 's': 'é'}
    with pytest.raises(SchemaValidationError) as info:
        v.validate_json('{"n": "3"}')
    assert [e['pointer'] for e in info.value.errors] == ['/n']
    with pytest.raises(ToolArgumentsError) as bad:
        v.validate_json('{"n": 3')
    assert bad.value.position == 7
    with pytest.raises(ToolArgumentsError, match='array'):
        v.validate_json('[1]')
    with pytest.raises(SchemaValidationError, match='n.? is a required property'):
        v.validate_json('  ')  # blank is {} and n is required
    with pytest.raises(TypeError, match='str or bytes'):
        v.validate_json(3)
    # an integer serde_json would round is never silently turned into a float
    with pytest.raises(ValueError, match='64-bit range'):
        v.validate_json('{"n": 123456789012345678901234567890}')
    assert v.validate_json('{"n": 1, "f": 1e19}') == {'n': 1, 'f': 1e19}


def test_validator_bad_schema(core):
    with pytest.raises(ValueError, match='invalid JSON Schema'):
        core.SchemaValidator({'type': 3})
    with pytest.raises(TypeError, match='mapping or a bool'):
        core.SchemaValidator([1])


# --- differential fuzzing -------------------------------------------------------------------------

_names = st.sampled_from(['a', 'b', 'Item', 'Node', 'Item_2', 'x/y'])
_scalar_schema = st.sampled_from(
    [
        {'type': 'string'},
        {'type': 'integer'},
        {'type': 'number', 'minimum': 0},
        {'type': 'boolean'},
        {'type': 'null'},
        {'enum': ['a', 'b']},
        {'enum': [1, 2]},
        {'const': 'k'},
        {'const': 1},
        {'type': 'string', 'format': 'date'},
        {'type': 'string', 'default': 'd'},
        {'type': 'integer', 'default': None},
        {'$ref': '#/$defs/Item'},
        {'$ref': '#/$defs/Node'},
        {},
        {'type': ['string', 'null']},
        {'type': 'object', 'additionalProperties': {'type': 'integer'}},
        {'type': 'object'},
    ]
)


def _extend(children):
    props = st.dictionaries(_names, children, max_size=3)
    return st.one_of(
        st.builds(
            lambda p, r: {'type': 'object', 'properties': p, 'required': [k for k in p if k in r]},
            props,
            st.sets(_names),
        ),
        st.builds(lambda i: {'type': 'array', 'items': i}, children),
        st.builds(lambda bs: {'anyOf': bs}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda bs: {'oneOf': bs}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda c: {'allOf': [c]}, children),
        st.builds(lambda c, d: {**c, 'description': d} if isinstance(c, dict) else c, children, st.text(max_size=5)),
    )


_schemas = st.recursive(_scalar_schema, _extend, max_leaves=12)
_roots = st.builds(
    lambda s, defs: {**s, '$defs': defs} if defs else s,
    _schemas,
    st.dictionaries(st.sampled_from(['Item', 'Node', 'Item_2']), _schemas, max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(_roots, st.dictionaries(st.sampled_from(['Item', 'Node', 'Item_2', 'Item_3']), _schemas, max_size=3))
def test_differential_hoist(schema, defs):
    assert rust_core.hoist_defs_to_root(schema, defs) == reference_core.hoist_defs_to_root(schema, defs)


@settings(max_examples=300, deadline=None)
@given(_roots)
def test_differential_walks(schema):
    assert rust_core.forbid_additional_properties(schema) == reference_core.forbid_additional_properties(schema)
    assert rust_core.upper_case_type_values(schema) == reference_core.upper_case_type_values(schema)


@settings(max_examples=400, deadline=None)
@given(_roots, st.sampled_from(['openai-strict', 'gemini', 'anthropic']))
def test_differential_dialects_and_valid_output(schema, dialect):
    out = rust_core.to_dialect(schema, dialect)
    assert out == reference_core.to_dialect(schema, dialect)
    assert json.dumps(out) == json.dumps(reference_core.to_dialect(schema, dialect))  # same key order
    if out is None:  # a Gemini schema without parameters (issue 12)
        assert dialect == 'gemini'
    else:
        jsonschema.Draft202012Validator.check_schema(out)


_FIXED = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'minLength': 1},
        'tags': {'type': 'array', 'items': {'enum': ['a', 'b']}, 'maxItems': 2},
        'pos': {
            'type': 'object',
            'properties': {'x': {'type': 'number'}},
            'required': ['x'],
            'additionalProperties': False,
        },
        'n': {'anyOf': [{'type': 'integer', 'minimum': 0}, {'type': 'null'}]},
    },
    'required': ['name'],
    'additionalProperties': False,
}
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(['', 'a', 'b', 'x']),
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(st.sampled_from(['name', 'tags', 'pos', 'x', 'n', 'z']), c, max_size=4)
    ),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_differential_validator(instance):
    rust = rust_core.SchemaValidator(_FIXED)
    ref = reference_core.SchemaValidator(_FIXED)
    assert rust.is_valid(instance) == ref.is_valid(instance)
    assert sorted((e['pointer'], e['keyword']) for e in rust.errors(instance)) == sorted(
        (e['pointer'], e['keyword']) for e in ref.errors(instance)
    )
