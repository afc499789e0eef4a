"""``SchemaValidator.validate_json``'s accept plan answers exactly as the ``jsonschema`` crate alone (issue 14).

The plan (rust/py/schema/plan.rs) accepts the common subset of JSON Schema 2020-12 that tool schemas use
without asking the crate; everything else, and every rejection, is the crate's. Hypothesis compares
``validate_json`` with ``_validate_json_crate`` (the same parse, the crate only) on generated schemas in and
around the planned subset, on pydantic-generated schemas of random models and on hostile texts: same value
(types and key order included), same exception, same error list in the same order. It also checks the plan's
own verdict: ``accept`` implies the crate accepts, ``reject`` that it rejects.
"""

from __future__ import annotations

import enum
import json
from typing import Annotated, Any, Literal, Optional

import hypothesis.strategies as st
import pydantic
import pytest
import toolweave._core as rust_core
from hypothesis import given, settings
from toolweave.exceptions import SchemaValidationError, ToolArgumentsError
from toolweave.tools._numbers import bounded_integers

_NAMES = ['a', 'b', 'c', 'é']
_DRAFT = 'https://json-schema.org/draft/2020-12/schema'
_TYPES = ['string', 'integer', 'number', 'boolean', 'null', 'object', 'array']

_numbers = st.one_of(
    st.integers(-5, 5),
    st.sampled_from([2**53, 2**53 + 1, -(2**63), 2**63 - 1, 2**63, 2**64 - 1, 0.5, 1.0, -0.0, 2.5, 1e300]),
    st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 1)),
)
_scalars = st.one_of(st.sampled_from(['', 'x', 'é', 'ab', True, False, None]), _numbers)
_data = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(_NAMES), inner, max_size=2),
    max_leaves=4,
)


def _keyword(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """One keyword (or a few that go together) of the planned subset, or just outside it."""
    lengths = st.integers(0, 3)
    return st.one_of(
        st.sampled_from(_TYPES).map(lambda t: {'type': t}),
        st.lists(st.sampled_from(_TYPES), min_size=1, max_size=3, unique=True).map(lambda ts: {'type': ts}),
        st.lists(_data, min_size=1, max_size=4).map(lambda vs: {'enum': vs}),
        _data.map(lambda v: {'const': v}),
        st.tuples(st.sampled_from(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']), _numbers).map(
            lambda kv: {kv[0]: kv[1]} if not isinstance(kv[1], bool) else {}
        ),
        st.tuples(
            st.sampled_from(['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties']),
            lengths,
        ).map(lambda kv: {kv[0]: kv[1]}),
        st.lists(st.sampled_from(_NAMES), max_size=3, unique=True).map(lambda r: {'required': r}),
        st.dictionaries(st.sampled_from(_NAMES), children, max_size=3).map(lambda p: {'properties': p}),
        (st.booleans() | children).map(lambda a: {'additionalProperties': a}),
        (st.booleans() | children).map(lambda i: {'items': i}),
        st.lists(children, max_size=3).map(lambda p: {'prefixItems': p}),
        st.tuples(st.sampled_from(['allOf', 'anyOf', 'oneOf']), st.lists(children, min_size=1, max_size=3)).map(
            lambda kv: {kv[0]: kv[1]}
        ),
        st.sampled_from(['#', '#/$defs/A', '#/$defs/B', '#/$defs/A/properties/a', '#/definitions/C']).map(
            lambda r: {'$ref': r}
        ),
        st.sampled_from(
            [
                {'title': 'T', 'description': 'd', 'default': 3, 'examples': [1], '$comment': 'c'},
                {'deprecated': True, 'readOnly': False, 'writeOnly': True, 'x-extension': {'type': 'integer'}},
                {'format': 'email'},
                {'format': 'date-time'},
                {'discriminator': {'propertyName': 'a'}},
                # outside the plan: the crate answers
                {'pattern': '^a'},
                {'not': {'type': 'string'}},
                {'uniqueItems': True},
                {'multipleOf': 2},
                {'patternProperties': {'^b': {'type': 'integer'}}},
                {'propertyNames': {'maxLength': 1}},
                {'if': {'type': 'integer'}, 'then': {'minimum': 1}},
                {'dependentRequired': {'a': ['b']}},
                {'contains': {'type': 'null'}},
                {'unevaluatedProperties': False},
                {'additionalItems': False},
                {'minLength': 1.0},
                {'nullable': True},
            ]
        ),
        children.map(lambda c: {'allOf': [c], 'anyOf': [c, {'type': 'null'}]}),
    )


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


_schemas = st.recursive(
    st.booleans() | st.just({}),
    lambda children: st.lists(_keyword(children), min_size=1, max_size=4).map(_merge),
    max_leaves=8,
)


@st.composite
def _documents(draw: st.DrawFn) -> Any:
    """A root schema with ``$defs`` ``A`` and ``B`` (and ``definitions`` ``C``) that ``$ref`` may name."""
    root = draw(_schemas)
    if isinstance(root, bool):
        return root
    root = dict(root)
    root['$defs'] = {'A': draw(_schemas), 'B': draw(_schemas)}
    if draw(st.booleans()):
        root['definitions'] = {'C': draw(_schemas)}
    dialect = draw(st.sampled_from([None, _DRAFT, _DRAFT + '#', 'http://json-schema.org/draft-07/schema#']))
    if dialect is not None:
        root['$schema'] = dialect
    return root


_texts = st.one_of(
    _data.map(lambda v: json.dumps({'a': v})),
    st.dictionaries(st.sampled_from(_NAMES + ['z']), _data, max_size=4).map(json.dumps),
    st.sampled_from(
        [
            '{"a": NaN}',
            '{"a": 1e400}',
            '{"a": -1e400}',
            '{"a": "\\ud800"}',
            '{"a": ["\\udfff", "x"]}',
            '{"a": 123456789012345678901234567890}',
            '{"b": [18446744073709551615, 9223372036854775808]}',
            '{"a": 1, "a": "x"}',
            '{"a": 1.0, "b": 2.0e0, "c": -0.0}',
            '',
            '{',
            '[1]',
            '{"a": ' + '[' * 300 + ']' * 300 + '}',
        ]
    ),
)


def _shape(value: Any) -> Any:
    """The value with its key order and number types visible (``1 == 1.0`` and dict order hide them)."""
    if isinstance(value, dict):
        return ['dict', [(k, _shape(v)) for k, v in value.items()]]
    if isinstance(value, list):
        return ['list', [_shape(v) for v in value]]
    return [type(value).__name__, repr(value)]


def _answer(call: Any, text: str, int64: bool) -> tuple[str, Any]:
    try:
        return 'ok', _shape(call(text, int64=int64))
    except SchemaValidationError as exc:
        return 'SchemaValidationError', (str(exc), exc.errors)
    except (ToolArgumentsError, ValueError) as exc:
        return type(exc).__name__, str(exc)


def _validator(schema: Any) -> Any:
    try:
        return rust_core.SchemaValidator(schema)
    except ValueError:
        return None  # not a valid JSON Schema: nothing to compare


def _agree(v: Any, text: str, int64: bool) -> None:
    planned = _answer(v.validate_json, text, int64)
    assert planned == _answer(v._validate_json_crate, text, int64)
    try:
        parsed = rust_core.parse_arguments(text)
    except ToolArgumentsError:
        return
    verdict = v._plan_verdict(parsed)
    if verdict == 'accept':
        assert planned[0] == 'ok'
        assert v.is_valid(parsed)
    elif verdict == 'reject':
        assert planned[0] in ('SchemaValidationError', 'ValueError')


@settings(max_examples=2000, deadline=None)
@given(_documents(), _texts, st.booleans())
def test_plan_answers_as_the_crate_on_generated_schemas(schema, text, int64):
    v = _validator(schema)
    if v is not None:
        _agree(v, text, int64)


class Colour(enum.Enum):
    RED = 'red'
    BLUE = 'blue'


class Leaf(pydantic.BaseModel):
    name: Annotated[str, pydantic.Field(min_length=1, max_length=4)]
    size: Annotated[int, pydantic.Field(ge=0, le=10)] = 1


class Node(pydantic.BaseModel):
    value: float
    children: list[Node] = []


class Cat(pydantic.BaseModel):
    kind: Literal['cat']
    lives: int


class Dog(pydantic.BaseModel):
    kind: Literal['dog']
    good: bool


_FIELD_TYPES: list[Any] = [
    int,
    float,
    str,
    bool,
    Optional[int],
    list[str],
    dict[str, int],
    Colour,
    Literal['x', 'y', 3],
    Leaf,
    Optional[Leaf],
    list[Leaf],
    Node,
    Annotated[float, pydantic.Field(gt=0, lt=2.5)],
    Annotated[Cat | Dog, pydantic.Field(discriminator='kind')],
    Cat | Dog,
    tuple[int, str],
    int | str | None,
    Annotated[list[int], pydantic.Field(min_length=1, max_length=3)],
]


def _field_value(t: Any) -> st.SearchStrategy[Any]:
    """JSON values for a field of type ``t``: mostly valid ones, some not."""
    near = {
        int: st.integers(-3, 12) | st.sampled_from([2**63 - 1, 2**63, 1.0]),
        float: st.floats(-3, 3, allow_nan=False) | st.integers(-2, 2),
        str: st.text(max_size=5),
        bool: st.booleans(),
    }
    valid = {
        Colour: st.sampled_from(['red', 'blue', 'green']),
        Leaf: st.fixed_dictionaries({'name': st.text(max_size=6)}, optional={'size': near[int]}),
        Node: st.recursive(
            st.fixed_dictionaries({'value': near[float]}),
            lambda inner: st.fixed_dictionaries({'value': near[float], 'children': st.lists(inner, max_size=2)}),
            max_leaves=4,
        ),
    }
    if t in near:
        return near[t]
    if t in valid:
        return valid[t]
    pets = st.fixed_dictionaries({'kind': st.sampled_from(['cat', 'dog']), 'lives': near[int], 'good': near[bool]})
    return st.one_of(
        near[int],
        near[str],
        st.none(),
        st.lists(near[str] | valid[Leaf], max_size=3),
        valid[Leaf],
        pets,
        st.dictionaries(near[str], near[int], max_size=2),
        st.tuples(near[int], near[str]).map(list),
    )


@st.composite
def _models(draw: st.DrawFn) -> tuple[Any, str]:
    """A random pydantic model's tool schema (as the raw-schema tool path validates it) and an argument text."""
    picks = draw(st.lists(st.sampled_from(range(len(_FIELD_TYPES))), min_size=1, max_size=5))
    fields = {f'f{i}': (_FIELD_TYPES[p], ...) if i % 2 == 0 else (_FIELD_TYPES[p], None) for i, p in enumerate(picks)}
    model = pydantic.create_model('Model', **fields)  # type: ignore[call-overload]
    schema = {'$schema': _DRAFT, **model.model_json_schema()}
    if draw(st.booleans()):
        schema['additionalProperties'] = False
    values = {name: draw(_field_value(_FIELD_TYPES[p])) for name, p in zip(fields, picks, strict=True)}
    drop = draw(st.lists(st.sampled_from(list(fields)), max_size=1))
    return bounded_integers(schema), json.dumps({k: v for k, v in values.items() if k not in drop})


@settings(max_examples=800, deadline=None)
@given(_models(), st.booleans())
def test_plan_answers_as_the_crate_on_pydantic_schemas(model, int64):
    schema, text = model
    _agree(rust_core.SchemaValidator(schema), text, int64)


class Tag(str, enum.Enum):
    A = 'alpha'
    B = 'gamma'


class Address(pydantic.BaseModel):
    street: str
    city: str
    zip_code: Optional[str] = None


class Item(pydantic.BaseModel):
    sku: str
    quantity: int
    price: float
    tags: list[Tag] = []


class Order(pydantic.BaseModel):
    customer: str
    shipping: Address
    items: list[Item]
    note: Optional[str] = None


def test_the_plan_decides_tool_schemas_without_the_crate():
    """Pydantic and hand-written tool schemas are planned: valid arguments accepted, invalid ones rejected."""
    v = rust_core.SchemaValidator(bounded_integers({'$schema': _DRAFT, **Order.model_json_schema()}))
    item = {'sku': 'SKU-1', 'quantity': 2, 'price': 9.99, 'tags': ['alpha', 'gamma']}
    order = {'customer': 'Ada', 'shipping': {'street': '12 Road', 'city': 'London', 'zip_code': None}, 'items': [item]}
    bad = {**order, 'items': [item, {**item, 'quantity': 'one'}]}
    for value, verdict in [(order, 'accept'), (bad, 'reject')]:
        text = json.dumps(value)
        assert v._plan_verdict(rust_core.parse_arguments(text)) == verdict
        assert _answer(v.validate_json, text, True) == _answer(v._validate_json_crate, text, True)
    hand = rust_core.SchemaValidator(
        {
            'type': 'object',
            'properties': {
                'city': {'type': 'string', 'minLength': 1, 'description': 'City'},
                'unit': {'enum': ['C', 'F'], 'default': 'C'},
                'days': {'type': ['integer', 'null'], 'minimum': 1, 'maximum': 16},
                'at': {'type': 'string', 'format': 'date-time'},
            },
            'required': ['city'],
            'additionalProperties': False,
        }
    )
    assert hand._plan_verdict({'city': 'Oslo', 'unit': 'F', 'days': None, 'at': 'not a date'}) == 'accept'
    assert hand._plan_verdict({'city': 'Oslo', 'days': 17}) == 'reject'
    assert hand._plan_verdict({'city': 'Oslo', 'days': 2.0}) == 'unsure'  # 2.0 is an integer to JSON Schema
    assert hand._plan_verdict({'city': 'Oslo', 'days': 2**63}) == 'unsure'  # beyond the plain tree
    assert hand._plan_verdict({'city': 'Oslo', 'other': 1}) == 'reject'
    assert rust_core.SchemaValidator({'type': 'object', 'pattern': 'a'})._plan_verdict({}) == 'unsure'
    assert rust_core.SchemaValidator({'$schema': 'http://json-schema.org/draft-07/schema#'})._plan_verdict({}) is None
    assert rust_core.SchemaValidator({'$id': 'urn:x', 'type': 'object'})._plan_verdict({}) is None


def test_an_unchecked_member_beyond_64_bits_is_the_crate_path_answer():
    """Accept also needs every number plain, where no keyword looks: the converting path's errors stay."""
    v = rust_core.SchemaValidator({'type': 'object', 'properties': {'a': {}}})
    assert v._plan_verdict({'a': 1, 'b': [2**64]}) == 'unsure'
    with pytest.raises(ValueError, match='integer out of the 64-bit range'):
        v.validate_json('{"a": 1, "b": [18446744073709551616]}')
    with pytest.raises(ValueError, match='int64=True'):
        v.validate_json('{"a": [18446744073709551615]}', int64=True)


@pytest.mark.parametrize(
    'schema',
    [
        {'$ref': '#'},
        {'$defs': {'A': {'$ref': '#/$defs/B'}, 'B': {'$ref': '#/$defs/A'}}, '$ref': '#/$defs/A'},
        {'properties': {'a': {'$ref': '#'}}, 'type': 'object'},
        {'anyOf': [{'$ref': '#'}, {'type': 'object'}]},
        {'items': {'$ref': '#'}, 'properties': {'a': {'$ref': '#'}}},
        {'anyOf': [{'$ref': '#'}, {'$ref': '#'}]},  # branches at every level: the plan's step budget ends it
        {'oneOf': [{'$ref': '#'}, {'$ref': '#'}, {'type': 'object'}]},
        {'properties': {'a': {'anyOf': [{'$ref': '#'}, {'$ref': '#'}, {'type': 'integer'}]}}},
    ],
)
def test_recursive_schemas_never_hang_or_panic(schema):
    v = _validator(schema)
    if v is None:
        return
    deep = '{"a": ' * 200 + '1' + '}' * 200
    for text in ['{}', '{"a": {"a": {"a": 1}}}', deep, '{"a": [[[[1]]]]}']:
        _agree(v, text, False)
