"""The numbers rule on defaults and on the words of its answer (``toolweave.tools._numbers``).

* A value left to its default is the developer's and is not judged, whether the default is plain or
  made by a ``default_factory`` inside a nested dataclass, pydantic dataclass, model or TypedDict, on
  the one-step path (arguments valid) and on the slow path (another argument invalid); the same
  field sent by the model is still judged.
* A non-finite default (``limit: float = math.inf``) builds a schema every provider accepts (the
  default is not advertised: it has no JSON form) and is what a call that leaves it out gets.
* Odd defaults, enum values and bounds (NaN, infinities, integers beyond 64 bits, ``Decimal('NaN')``)
  build a JSON schema (values with no JSON form left out) or, when no number could meet a constraint
  or the developer's own schema data is not JSON, a ``TypeError`` naming the tool.
* A float field sent ``NaN``/``Infinity``/``-Infinity``, ``1e400``, ``"inf"`` or an integer of 400
  digits gets the same words (``Input should be a finite number``) on both paths.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import math
import re
from typing import Annotated, Any, Literal

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave import tool
from toolweave.exceptions import InvalidToolArgumentsError, ToolExecutionError
from toolweave.tools import MethodToolCallback, SchemaOption
from toolweave.tools._numbers import NOT_FINITE, OUT_OF_RANGE, number_message, number_problems
from typing_extensions import NotRequired, TypedDict


@dataclasses.dataclass
class Window:
    name: str
    limit: float = dataclasses.field(default_factory=lambda: math.inf)
    fresh: float = dataclasses.field(default_factory=lambda: float('-inf'))


@pydantic.dataclasses.dataclass
class PWindow:
    name: str
    limit: float = pydantic.Field(default_factory=lambda: float('inf'))


@pydantic.dataclasses.dataclass
class AliasedWindow:
    name: str
    limit: float = pydantic.Field(default_factory=lambda: float('inf'), alias='Limit')


class Choosing(pydantic.BaseModel):
    window: PWindow = pydantic.Field(validation_alias=pydantic.AliasChoices('w1', 'window'))


class WindowDict(TypedDict):
    name: str
    limit: NotRequired[Annotated[float, pydantic.Field(default_factory=lambda: float('inf'))]]


class Holder(pydantic.BaseModel):
    window: Window
    windows: list[PWindow] = []
    ceiling: float = pydantic.Field(default_factory=lambda: float('inf'))


def plan(window: Window, count: int = 0) -> str:
    return repr(window)


def plan_p(window: PWindow, count: int = 0) -> str:
    return repr(window)


def plan_aliased(window: AliasedWindow, count: int = 0) -> str:
    return repr(window)


def plan_dict(window: WindowDict, count: int = 0) -> str:
    return repr(window)


def plan_holder(holder: Holder, count: int = 0) -> str:
    return repr(holder)


def problems_of(callback: MethodToolCallback, text: str) -> list[str]:
    """The problems of an invalid call (``[]`` when it ran)."""
    try:
        callback.call(text)
    except ToolExecutionError as exc:
        assert isinstance(exc.cause, InvalidToolArgumentsError), exc
        return list(exc.cause.problems)
    return []


COUNT_PROBLEM = 'count: Input should be a valid integer, unable to parse string as an integer'
FACTORY_CASES = [
    (plan, '{"name": "a"}', '{"name": "a", "limit": 1e400}', 'window.limit'),
    (plan, '{"name": "a"}', '{"name": "a", "fresh": "-inf"}', 'window.fresh'),
    (plan_p, '{"name": "a"}', '{"name": "a", "limit": "inf"}', 'window.limit'),
    (plan_aliased, '{"name": "a"}', '{"name": "a", "Limit": 1e400}', 'window.limit'),
    (plan_dict, '{"name": "a"}', '{"name": "a", "limit": 1e400}', 'window.limit'),
    (plan_holder, '{"window": {"name": "a"}}', '{"window": {"name": "a"}, "ceiling": 1e400}', 'holder.ceiling'),
    (
        plan_holder,
        '{"window": {"name": "a"}, "windows": [{"name": "b"}]}',
        '{"window": {"name": "a", "limit": "inf"}, "windows": [{"name": "b"}]}',
        'holder.window.limit',
    ),
    (
        plan_holder,
        '{"window": {"name": "a"}, "windows": [{"name": "b"}]}',
        '{"window": {"name": "a"}, "windows": [{"name": "b", "limit": 1e400}]}',
        'holder.windows.0.limit',
    ),
]


@pytest.mark.parametrize(('func', 'left_out', 'sent', 'where'), FACTORY_CASES)
def test_a_default_factory_value_is_not_judged_on_either_path(func: Any, left_out: str, sent: str, where: str) -> None:
    callback = MethodToolCallback(func)
    name = next(iter(callback.tool_definition.input_schema['properties']))
    # one-step path: everything valid, the call runs with the developer's infinity
    assert 'inf' in callback.call(f'{{"{name}": {left_out}}}')
    # slow path: another argument invalid, only that one is listed
    assert problems_of(callback, f'{{"{name}": {left_out}, "count": "x"}}') == [COUNT_PROBLEM]
    # the same field sent by the model is judged, on both paths
    assert problems_of(callback, f'{{"{name}": {sent}}}') == [f'{where}: {NOT_FINITE}']
    assert problems_of(callback, f'{{"{name}": {sent}, "count": "x"}}') == [COUNT_PROBLEM, f'{where}: {NOT_FINITE}']


def test_the_walk_skips_a_defaulted_field_only_when_it_knows_what_was_sent() -> None:
    value = {'window': Window('a')}
    expected = [(('window', 'limit'), NOT_FINITE), (('window', 'fresh'), NOT_FINITE)]
    assert number_problems(value) == expected  # not known: judged (the conservative answer)
    assert number_problems(value, {'window': {'name': 'a'}}) == []
    # a key the dataclass does not know (an alias from a parent's config, an ignored extra): not decided
    assert number_problems(value, {'window': {'name': 'a', 'other': 1}}) == expected
    assert number_problems(value, {'window': {'name': 'a', 'limit': 'inf'}}) == expected[:1]
    # an alias is followed; alias choices are not (which key pydantic took is not told): judged
    aliased = AliasedWindow(name='a')
    assert number_problems({'w': aliased}, {'w': {'name': 'a'}}) == []
    assert number_problems({'w': aliased}, {'w': {'name': 'a', 'Limit': 'inf'}}) == [(('w', 'limit'), NOT_FINITE)]
    chosen = Choosing.model_validate({'w1': {'name': 'a'}})
    assert number_problems({'c': chosen}, {'c': {'w1': {'name': 'a'}}}) == [(('c', 'window', 'limit'), NOT_FINITE)]
    # a dict whose keys were renamed by validation is not decided either
    assert number_problems({'b': math.inf}, {'B': 'inf'}) == [(('b',), NOT_FINITE)]
    assert number_problems({'b': math.inf, 'a': 1}, {'a': 1}) == []  # added: a TypedDict field's default


class Limits(pydantic.BaseModel):
    name: str
    limit: float = math.inf
    spread: list[float] = [0.0, math.inf]
    floor: float = -math.inf


def with_limits(limits: Limits, count: int = 0) -> str:
    return repr((limits.limit, limits.spread, limits.floor))


def top_level(limit: float = math.inf, spread: tuple[float, ...] = (1.0, math.nan), count: int = 0) -> str:
    return repr((limit, spread))


def test_a_non_finite_model_default_builds_and_is_what_a_call_leaving_it_out_gets() -> None:
    callback = MethodToolCallback(with_limits)
    schema = callback.tool_definition.input_schema
    json.dumps(schema, allow_nan=False)  # JSON every provider reads
    properties = schema['properties']['limits']['properties']
    assert properties['limit'] == {'type': 'number'}
    assert properties['floor'] == {'type': 'number'}
    assert 'default' not in properties['spread']
    assert callback.call('{"limits": {"name": "a"}}') == repr((math.inf, [0.0, math.inf], -math.inf))
    assert callback.call('{"limits": {"name": "a", "limit": 5}}') == repr((5.0, [0.0, math.inf], -math.inf))
    assert problems_of(callback, '{"limits": {"name": "a", "limit": 1e400}}') == [f'limits.limit: {NOT_FINITE}']
    assert problems_of(callback, '{"limits": {"name": "a"}, "count": "x"}') == [COUNT_PROBLEM]


def test_a_non_finite_parameter_default_is_not_advertised_as_null() -> None:
    decorated = tool(top_level)
    callback = MethodToolCallback(decorated)
    properties = callback.tool_definition.input_schema['properties']
    assert properties['limit'] == {'type': 'number'}  # orjson would have written the infinity as null
    assert 'default' not in properties['spread']
    assert properties['count'] == {'type': 'integer', 'default': 0}
    assert callback.call('{}') == repr((math.inf, (1.0, math.nan)))


class Reading(pydantic.BaseModel):
    value: float
    unit: str = 'm'


def measure(reading: Reading, count: int = 0) -> str:
    return repr(reading.value)


def measure_plain(value: float, count: int = 0) -> str:
    return repr(value)


HOSTILE_FLOATS = ['NaN', 'Infinity', '-Infinity', '1e400', '-1e400', '"inf"', '"NaN"', '1' + '0' * 400]


@pytest.mark.parametrize('number', HOSTILE_FLOATS)
@pytest.mark.parametrize(
    ('func', 'member', 'where'), [(measure, 'reading', 'reading.value'), (measure_plain, '', 'value')]
)
def test_a_hostile_float_gets_the_same_words_on_both_paths(func: Any, member: str, where: str, number: str) -> None:
    callback = MethodToolCallback(func)
    value = f'{{"reading": {{"value": {number}}}}}' if member else f'{{"value": {number}}}'
    one_step = problems_of(callback, value)  # every other argument valid: the one-step path is tried first
    slow = problems_of(callback, value[:-1] + ', "count": "x"}')  # another argument invalid: the slow path
    assert one_step == [f'{where}: {NOT_FINITE}']
    assert slow == [COUNT_PROBLEM, f'{where}: {NOT_FINITE}'] or slow == [f'{where}: {NOT_FINITE}', COUNT_PROBLEM]


def test_number_message_words_an_overflowing_integer_as_not_finite() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        pydantic.TypeAdapter(float).validate_python(10**400)
    (error,) = caught.value.errors()
    assert error['msg'] == 'Input should be a valid number'  # pydantic's words from Python input
    assert number_message(error) == NOT_FINITE
    with pytest.raises(pydantic.ValidationError) as caught:
        pydantic.TypeAdapter(float).validate_python('abc')
    (error,) = caught.value.errors()
    assert number_message(error) == error['msg']


class Rate(float, enum.Enum):
    LOW = 1.5
    UNBOUNDED = math.inf


class Size(enum.IntEnum):
    ONE = 1
    HUGE = 2**70


class Odd(pydantic.BaseModel):
    rate: Rate = Rate.UNBOUNDED
    size: Size = Size.HUGE
    amount: decimal.Decimal = decimal.Decimal('NaN')
    count: int = 2**70
    when: datetime.datetime = datetime.datetime(2024, 1, 2, 3, 4, 5)
    choice: Literal['a', 'b'] | None = None
    ceiling: Annotated[float, pydantic.Field(le=math.inf, ge=-math.inf)] = 1.0
    big_floor: Annotated[float, pydantic.Field(ge=2**70)] = 2.0**71
    int_cap: Annotated[int, pydantic.Field(le=2**70)] = 3


def odd(
    odd: Odd, rate: Rate = Rate.LOW, size: Size = Size.ONE, amount: decimal.Decimal = decimal.Decimal('NaN')
) -> str:
    return repr((odd, rate, size, amount))


def test_odd_defaults_enums_and_bounds_build_a_json_schema_the_tool_agrees_with() -> None:
    callback = MethodToolCallback(odd)
    schema = callback.tool_definition.input_schema
    json.dumps(schema, allow_nan=False)
    defs, properties = schema['$defs'], schema['properties']
    assert defs['Rate']['enum'] == [1.5]  # the infinite member has no JSON form: the model cannot send it
    assert defs['Size']['enum'] == [1]
    fields = properties['odd']['properties']
    assert 'default' not in fields['rate'] and 'default' not in fields['size']
    assert 'default' not in fields['amount'] and 'default' not in fields['count']
    assert fields['when']['default'] == '2024-01-02T03:04:05'
    assert fields['ceiling'] == {'type': 'number', 'default': 1.0}
    assert fields['big_floor']['minimum'] == float(2**70)
    assert fields['int_cap'] == {'type': 'integer', 'default': 3}
    assert properties['rate']['default'] == 1.5 and properties['size']['default'] == 1
    assert 'default' not in properties['amount']
    # every advertised value is accepted, and a call leaving them out gets the developer's values
    assert callback.call('{"odd": {"rate": 1.5, "size": 1, "big_floor": 1.2e21}, "rate": 1.5, "size": 1}')
    left_out = callback.call('{"odd": {}}')
    assert 'Rate.UNBOUNDED' in left_out and 'Size.HUGE' in left_out and "Decimal('NaN')" in left_out


@pytest.mark.parametrize(
    ('annotation', 'words'),
    [
        (Annotated[float, pydantic.Field(ge=math.inf)], 'ge=inf leaves no finite number'),
        (Annotated[float, pydantic.Field(lt=-math.inf)], 'lt=-inf leaves no finite number'),
        (Annotated[float, pydantic.Field(ge=math.nan)], 'ge=nan leaves no finite number'),
        (list[Annotated[float, pydantic.Field(ge=math.inf, le=5)]], 'ge=inf leaves no finite number'),
        (Annotated[int, pydantic.Field(ge=2**70)], 'leaves no 64-bit integer'),
        (Annotated[decimal.Decimal, pydantic.Field(ge=decimal.Decimal('NaN'))], 'ge=nan leaves no finite number'),
        (Literal[2**70], 'has no JSON form'),
        (Annotated[int, pydantic.Field(gt=math.inf)], 'must be coercible to an integer'),  # pydantic's own refusal
        (Annotated[float, pydantic.Field(multiple_of=math.nan)], 'multiple_of'),
    ],
)
def test_a_constraint_no_number_can_meet_is_a_typed_error(annotation: Any, words: str) -> None:
    def bounded(x: float) -> str:
        return repr(x)

    bounded.__annotations__['x'] = annotation
    with pytest.raises(TypeError, match=f"(?s)tool '.*bounded'.*parameter 'x'.*{re.escape(words)}"):
        MethodToolCallback(bounded)


class Described(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(json_schema_extra={'examples': [{'v': math.nan}]})
    v: Annotated[float, pydantic.Field(examples=[math.inf])] = 0.0


def described(d: Described) -> str:
    return repr(d)


def test_non_json_schema_data_of_the_developer_is_a_typed_error() -> None:
    with pytest.raises(TypeError, match=r"tool 'described': its input schema holds a value with no JSON form"):
        MethodToolCallback(described)
    with pytest.raises(TypeError, match='no JSON form'):
        MethodToolCallback(described, schema_options=[SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT])


@dataclasses.dataclass
class Leaf:
    a: float = dataclasses.field(default_factory=lambda: math.inf)
    b: int = 0


class LeafDict(TypedDict):
    a: NotRequired[Annotated[float, pydantic.Field(default_factory=lambda: math.inf)]]
    b: NotRequired[int]


class Node(pydantic.BaseModel):
    leaf: Leaf = pydantic.Field(default_factory=Leaf)
    leaves: list[Leaf] = []
    named: LeafDict = pydantic.Field(default_factory=lambda: LeafDict(a=math.nan))
    c: float = pydantic.Field(default_factory=lambda: -math.inf)


def grow(node: Node, count: int = 0) -> str:
    return 'grown'


GROW = MethodToolCallback(grow)
HOSTILE_FLOAT = st.sampled_from(['inf', '-inf', 'nan', 'Infinity'])  # JSON strings pydantic reads as floats
HOSTILE_INT = st.sampled_from([2**63, -(2**63) - 1, 2**64])


@st.composite
def leaf_and_problems(draw: st.DrawFn, where: str) -> tuple[dict[str, Any], set[str]]:
    """A leaf's JSON with some members left out, and the problems its hostile numbers must give."""
    value: dict[str, Any] = {}
    problems: set[str] = set()
    if draw(st.booleans()):
        hostile = draw(st.booleans())
        value['a'] = draw(HOSTILE_FLOAT) if hostile else draw(st.floats(allow_nan=False, allow_infinity=False))
        problems |= {f'{where}.a: {NOT_FINITE}'} if hostile else set()
    if draw(st.booleans()):
        hostile = draw(st.booleans())
        value['b'] = draw(HOSTILE_INT) if hostile else draw(st.integers(-5, 5))
        problems |= {f'{where}.b: {OUT_OF_RANGE}'} if hostile else set()
    return value, problems


@st.composite
def node_calls(draw: st.DrawFn) -> tuple[dict[str, Any], set[str]]:
    node: dict[str, Any] = {}
    problems: set[str] = set()
    if draw(st.booleans()):
        node['leaf'], found = draw(leaf_and_problems('node.leaf'))
        problems |= found
    if draw(st.booleans()):
        leaves = [draw(leaf_and_problems(f'node.leaves.{index}')) for index in range(draw(st.integers(0, 2)))]
        node['leaves'] = [leaf for leaf, _ in leaves]
        problems |= {problem for _, found in leaves for problem in found}
    if draw(st.booleans()):
        node['named'], found = draw(leaf_and_problems('node.named'))
        problems |= found
    if draw(st.booleans()):
        node['c'] = draw(HOSTILE_FLOAT)
        problems.add(f'node.c: {NOT_FINITE}')
    return node, problems


@settings(max_examples=300, deadline=None)
@given(node_calls(), st.booleans())
def test_exactly_the_hostile_numbers_sent_are_reported_never_a_default(
    call: tuple[dict[str, Any], set[str]], other_invalid: bool
) -> None:
    """Whatever the model leaves out (factory defaults of infinities and NaN at every level) is not judged."""
    node, expected = call
    arguments: dict[str, Any] = {'node': node, 'count': 'x'} if other_invalid else {'node': node}
    found = set(problems_of(GROW, json.dumps(arguments)))
    assert found - {COUNT_PROBLEM} == expected
    assert (COUNT_PROBLEM in found) == other_invalid
