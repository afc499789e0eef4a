"""The schema of a function comes from pydantic's arguments schema; the one-step validator is built on first use.

Issue #14 (cold schema of the first ``@tool``): the input schema is generated from the core schema
``TypeAdapter(fn)`` uses (``pydantic.experimental.arguments_schema``) instead of the TypedDict
adapter's, and the TypedDict adapter (``FunctionSchema.arguments``) is built by the first call
that needs it. What must stay true:

* the input schema is exactly the one the TypedDict adapter's core schema gives (differential,
  over the snapshot functions and generated signatures, every schema option);
* the definition is complete without the validator, which is built at most once per function;
* calls validate and answer exactly as before.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import functools
import json
import uuid
import warnings
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union
from unittest import mock

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.schema_functions import SNAPSHOT_FUNCTIONS, Node
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback, ToolContext, ToolParam, tool
from toolweave.tools import schema as schema_module
from toolweave.tools.schema import FunctionSchema, SchemaOption, function_schema
from typing_extensions import NotRequired, TypedDict

OPTIONS = [
    frozenset(),
    frozenset({SchemaOption.UPPER_CASE_TYPE_VALUES}),
    frozenset({SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT}),
]


def fresh(func: Any, options: frozenset[SchemaOption] = frozenset()) -> FunctionSchema:
    """The schema made now (not the cached one)."""
    return schema_module._function_schema.__wrapped__(func, options)


def through_typed_dict(func: Any, options: frozenset[SchemaOption] = frozenset()) -> FunctionSchema:
    """The schema as made before: from the core schema of the TypedDict adapter, built with the schema."""
    with mock.patch.object(schema_module, '_generated_from_signature', return_value=None):
        return fresh(func, options)


def from_signature_calls(func: Any) -> list[bool]:
    """For each time the arguments-schema path ran while making ``func``'s schema: whether it gave the schema."""
    results: list[bool] = []
    original = schema_module._generated_from_signature

    def spy(*args: Any) -> Any:
        out = original(*args)
        results.append(out is not None)
        return out

    with mock.patch.object(schema_module, '_generated_from_signature', spy):
        fresh(func)
    return results


# --- the 6-parameter function of the benchmark --------------------------------------------------------


class Tag(str, enum.Enum):
    A = 'alpha'
    B = 'beta'
    C = 'gamma'


class Address(pydantic.BaseModel):
    street: str
    city: str
    zip_code: Optional[str] = None


def six(
    city: Annotated[str, ToolParam(description='City name')],
    tags: list[Tag],
    address: Address,
    days: Annotated[int, ToolParam(description='Number of days')] = 3,
    unit: Optional[str] = None,
    note: Annotated[str, pydantic.Field(description='Free text')] = '',
) -> str:
    return f'{city} {[t.value for t in tags]} {address.city} {days} {unit} {note}'


SIX_SCHEMA = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema',
    'type': 'object',
    '$defs': {'Tag': {'enum': ['alpha', 'beta', 'gamma'], 'type': 'string'}},
    'properties': {
        'city': {'type': 'string', 'description': 'City name'},
        'tags': {'type': 'array', 'items': {'$ref': '#/$defs/Tag'}},
        'address': {
            'properties': {
                'street': {'type': 'string'},
                'city': {'type': 'string'},
                'zip_code': {'anyOf': [{'type': 'string'}, {'type': 'null'}], 'default': None},
            },
            'required': ['street', 'city'],
            'type': 'object',
            'additionalProperties': False,
        },
        'days': {'type': 'integer', 'description': 'Number of days', 'default': 3},
        'unit': {'anyOf': [{'type': 'string'}, {'type': 'null'}]},
        'note': {'type': 'string', 'description': 'Free text', 'default': ''},
    },
    'required': ['city', 'tags', 'address'],
    'additionalProperties': False,
}


def test_six_parameter_schema_is_pinned_and_equal_to_the_typed_dict_path() -> None:
    made = fresh(six)
    assert json.dumps(made.input_schema) == json.dumps(SIX_SCHEMA)  # values and key order
    assert made.input_schema == through_typed_dict(six).input_schema
    assert from_signature_calls(six) == [True]


def test_definition_does_not_build_the_validator_and_the_first_call_builds_it_once() -> None:
    def lookup(city: str, days: int = 1, tags: Optional[list[Tag]] = None) -> str:
        return f'{city}:{days}:{tags}'

    with mock.patch.object(schema_module, '_arguments_adapter', wraps=schema_module._arguments_adapter) as build:
        tool(lookup)
        made = function_schema(lookup)
        assert made.input_schema['required'] == ['city']  # the definition is complete
        assert build.call_count == 0
        callback = MethodToolCallback(lookup)
        assert callback.call('{"city": "Oslo", "days": "2"}') == 'Oslo:2:None'
        assert callback.call('{"city": "Rome", "tags": ["beta"]}') == "Rome:1:[<Tag.B: 'beta'>]"
        with pytest.raises(ToolExecutionError, match='days'):
            callback.call('{"city": "Oslo", "days": "many"}')
        assert MethodToolCallback(lookup).call('{"city": "Paris"}') == 'Paris:1:None'
        assert build.call_count == 1
    assert made.arguments is function_schema(lookup).arguments
    assert made.arguments is not None
    assert made.arguments.validate_python({'city': 'x', 'days': '3'}) == {'city': 'x', 'days': 3}


def test_the_lazy_validator_is_the_typed_dict_adapter_of_before() -> None:
    lazy, eager = fresh(six).arguments, through_typed_dict(six).arguments
    assert lazy is not None and eager is not None
    assert lazy.json_schema() == eager.json_schema()
    sent = '{"city": "Oslo", "tags": ["alpha", "delta"], "address": {"street": 1}, "days": "x", "extra": 1}'
    with pytest.raises(pydantic.ValidationError) as lazy_error:
        lazy.validate_json(sent)
    with pytest.raises(pydantic.ValidationError) as eager_error:
        eager.validate_json(sent)
    assert lazy_error.value.errors(include_url=False) == eager_error.value.errors(include_url=False)


def test_calls_answer_as_before() -> None:
    callback = MethodToolCallback(six)
    sent = '{"city": "Oslo", "tags": ["alpha"], "address": {"street": "Main", "city": "Oslo"}, "days": "4"}'
    assert callback.call(sent) == "Oslo ['alpha'] Oslo 4 None "
    with pytest.raises(ToolExecutionError) as error:
        callback.call('{"city": "Oslo", "tags": ["delta"], "address": {"street": "Main"}, "colour": 1}')
    assert str(error.value) == (
        "Invalid arguments for tool 'six': unexpected argument 'colour'; tags.0: Input should be 'alpha', 'beta' "
        "or 'gamma'; address.city: Field required"
    )


# --- differential: the snapshot functions and generated signatures ------------------------------------


@pytest.mark.parametrize('options', OPTIONS, ids=lambda o: ','.join(sorted(x.name for x in o)) or 'default')
@pytest.mark.parametrize('func', SNAPSHOT_FUNCTIONS, ids=lambda f: f.__name__)
def test_snapshot_functions_equal_the_typed_dict_path(func: Any, options: frozenset[SchemaOption]) -> None:
    new, old = fresh(func, options), through_typed_dict(func, options)
    assert json.dumps(new.input_schema) == json.dumps(old.input_schema)
    assert [_shown(p) for p in new.parameters] == [_shown(p) for p in old.parameters]


def _shown(parameter: Any) -> tuple[Any, ...]:
    """A parameter's attributes (the annotation by its text: a re-evaluated ``Field(...)`` is a new object)."""
    return (parameter.name, parameter.required, parameter.default, parameter.keyword_only, repr(parameter.annotation))


def test_snapshot_functions_take_the_arguments_schema_path() -> None:
    """Not a silent fallback: every snapshot function's schema comes from the arguments schema."""
    assert {f.__name__: from_signature_calls(f) for f in SNAPSHOT_FUNCTIONS} == {
        f.__name__: [True] for f in SNAPSHOT_FUNCTIONS
    }


class Colour(enum.Enum):
    RED = 1
    GREEN = 'green'


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


@dataclass
class Point:
    x: float
    y: Optional[float] = None


class Box(pydantic.BaseModel):
    label: Annotated[str, ToolParam(description='The label', required=False)] = ''
    size: Annotated[int, pydantic.Field(ge=1, description='Size')]
    inner: Optional[Address] = None


LEAVES: list[Any] = [
    str,
    int,
    float,
    bool,
    bytes,
    Any,
    datetime.date,
    datetime.datetime,
    uuid.UUID,
    decimal.Decimal,
    Tag,
    Colour,
    Literal['a', 'b'],
    Literal[1, 'x'],
    Address,
    Box,
    Point,
    Movie,
]
"""Not the recursive ``Node``: pydantic writes annotation-level JSON updates on a recursive model (a nested
``Field(...)``, a ``ToolParam``) into the model's own core schema, on either path, so one example would change
the next one's schema (the snapshot functions and the test below cover recursive models)."""


def _wrapped(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        inner.map(lambda t: Optional[t]),
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        inner.map(lambda t: tuple[t, ...]),  # type: ignore[valid-type]
        inner.map(lambda t: Union[t, int]),
        inner.map(lambda t: Annotated[t, ToolParam(description='described')]),
        inner.map(lambda t: Annotated[t, ToolParam(required=False)]),
        inner.map(lambda t: Annotated[t, pydantic.Field(description='field', title='Title', examples=['e'])]),
        inner.map(lambda t: Annotated[t, pydantic.Field(json_schema_extra={'x-extra': 1})]),
        inner.map(lambda t: Annotated[t, pydantic.Field(alias='other')]),
        inner.map(lambda t: Annotated[t, pydantic.Field(default=None)]),
    )


ANNOTATIONS = st.recursive(st.sampled_from(LEAVES), _wrapped, max_leaves=3)
DEFAULTS = st.sampled_from(['none', 'None', '3', "'x'", '[1, 2]', 'Tag.A'])


def _function(annotations: list[Any], defaults: list[str]) -> Any:
    """``def generated(p0: T0, p1: T1 = default, ...)``: parameters with defaults after those without."""
    ordered = sorted(zip(annotations, defaults, strict=True), key=lambda pair: pair[1] != 'none')
    namespace: dict[str, Any] = {'Tag': Tag}
    params = []
    for index, (annotation, default) in enumerate(ordered):
        namespace[f'T{index}'] = annotation
        params.append(f'p{index}: T{index}' + ('' if default == 'none' else f' = {default}'))
    exec(f'def generated({", ".join(params)}) -> str:\n    return ""\n', namespace)  # noqa: S102 - test input
    return namespace['generated']


def _made(func: Any, options: frozenset[SchemaOption], maker: Any) -> Any:
    """The input schema (or the TypeError) and the texts of the warnings pydantic gave making it and its validator.

    A warning of the validator's types (``Field(default=...)`` nested where it has no effect) now
    comes when the validator is built, at the first call, instead of with the schema.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            function = maker(func, options)
            made: Any = function.input_schema
            assert function.arguments is not None
        except TypeError as exc:  # a type with no JSON Schema: both paths must say the same
            made = ('TypeError', str(exc))
    return made, sorted({str(w.message) for w in caught})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(ANNOTATIONS, DEFAULTS), min_size=1, max_size=4),
    st.sampled_from(OPTIONS),
)
def test_generated_signatures_equal_the_typed_dict_path(
    parameters: list[tuple[Any, str]], options: frozenset[SchemaOption]
) -> None:
    func = _function([a for a, _ in parameters], [d for _, d in parameters])
    new, old = _made(func, options, fresh), _made(func, options, through_typed_dict)
    assert json.dumps(new, default=str) == json.dumps(old, default=str)


def test_a_field_default_keeps_the_typed_dict_path() -> None:
    def with_field_default(a: Annotated[int, pydantic.Field(default=5)], b: str = 'x') -> str:
        return ''

    assert from_signature_calls(with_field_default) == []  # not asked: the TypedDict adapter gives the schema
    assert fresh(with_field_default).input_schema == through_typed_dict(with_field_default).input_schema
    assert fresh(with_field_default).input_schema['properties']['a'] == {'type': 'integer', 'default': 5}


def test_a_field_on_a_recursive_model_leaves_the_model_schema_alone() -> None:
    """pydantic writes a ``Field(...)``'s JSON updates into a recursive model's own core schema when it makes an
    arguments schema: such a parameter takes the TypedDict path, and the model's schema stays what it was."""
    before = json.dumps(Node.model_json_schema())
    plain_before = fresh(takes_node).input_schema
    assert from_signature_calls(takes_described_node) == []
    assert fresh(takes_described_node).input_schema == through_typed_dict(takes_described_node).input_schema
    assert json.dumps(Node.model_json_schema()) == before
    assert fresh(takes_node).input_schema == plain_before
    assert 'x-extra' not in json.dumps(plain_before)


def takes_node(root: Node) -> str:
    return ''


def takes_described_node(
    root: Annotated[Node, pydantic.Field(description='The tree', json_schema_extra={'x-extra': 1})],
) -> str:
    return ''


class Opaque:
    pass


def takes_opaque(a: int, thing: Opaque) -> str:
    return ''


def test_a_type_with_no_schema_is_named_as_before() -> None:
    with pytest.raises(TypeError, match=r"parameter 'thing' has type .*Opaque.* with no JSON Schema"):
        fresh(takes_opaque)


class Service:
    @functools.cached_property
    def prefix(self) -> str:
        return '>'

    def find(self, context: ToolContext, query: str, limit: int = 5) -> str:
        return f'{self.prefix}{query}{limit}{context.context}'


def test_self_and_tool_context_are_skipped_by_the_arguments_schema() -> None:
    made = fresh(Service.find)
    assert list(made.input_schema['properties']) == ['query', 'limit']
    assert made.input_schema == through_typed_dict(Service.find).input_schema
    assert from_signature_calls(Service.find) == [True]
    callback = MethodToolCallback(Service().find)
    assert callback.call('{"query": "q"}', ToolContext({'k': 1})) == ">q5{'k': 1}"
