"""A tool over pydantic models checks the numbers of a valid call with a check generated from the schema.

pydantic cannot bound the numbers of a complete model in one step (it validates with the class's own
validator), so a valid call must make sure no number is non-finite or beyond 64 bits. Instead of
walking every value (``number_problems``), a check generated once from the core schema
(``numbers_checker``) visits only where the schema puts numbers; it says "fine" only when the walk
would find nothing, else the walk runs and names the problems. The specification is the same tool
with the walk always on: the same values or the same error for any text.
"""

from __future__ import annotations

import dataclasses
import decimal
import itertools
import json
import math
import types
import typing
from typing import Any, Literal

import pydantic
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback
from toolweave.tools._numbers import number_problems, numbers_checker
from typing_extensions import NotRequired, TypedDict


class Leaf(pydantic.BaseModel):
    count: int
    ratio: float | None = None
    amount: decimal.Decimal = decimal.Decimal(0)
    tags: set[float] = set()


class Branch(pydantic.BaseModel):
    leaves: list[Leaf]
    weights: dict[str, float] = {}
    limit: float = 1e300


@dataclasses.dataclass
class Box:
    size: int
    scale: float = 1.0


class Options(TypedDict):
    depth: int
    spread: NotRequired[float]


def grow(branch: Branch, box: Box | None = None, options: Options | None = None, depth: int = 1) -> str:
    return 'ok'


TOOL = MethodToolCallback(grow)
WALKING = MethodToolCallback(grow)
WALKING._numbers_check = None  # the walk after every valid one-step validation, as before the check


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return 'ok', run()
    except ToolExecutionError as exc:
        return 'error', str(exc)


NUMBER_TEXTS = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda t: 'inf' not in t),
    st.sampled_from(
        ['9223372036854775807', '9223372036854775808', '-9223372036854775809', '99999999999999999999', '1e19']
        + ['1e400', '-1e400', '9.3e18', '1E2', '3.0', '-0.0', '1' + '0' * 400, 'NaN', 'Infinity', '-Infinity']
        + ['"inf"', '"-Infinity"', '"NaN"', '"1e400"', '"9_223_372_036_854_775_808"', '"1_000"', '" 12 "']
        + ['"sNaN"', '"12"', 'null', '"x"', 'true']
    ),
)


@st.composite
def calls(draw: st.DrawFn) -> str:
    def number() -> str:
        return draw(NUMBER_TEXTS)

    leaves = [
        f'{{"count": {number()}, "ratio": {number()}, "amount": {number()}, "tags": [{number()}]}}'
        for _ in range(draw(st.integers(0, 2)))
    ]
    branch = f'{{"leaves": [{", ".join(leaves)}], "weights": {{"w": {number()}}}}}'
    members = {
        'branch': branch,
        'box': draw(st.sampled_from([f'{{"size": {number()}, "scale": {number()}}}', 'null'])),
        'options': f'{{"depth": {number()}, "spread": {number()}}}',
        'depth': number(),
    }
    chosen = draw(st.lists(st.sampled_from(list(members)), unique=True, min_size=1))
    return '{' + ', '.join(f'"{name}": {members[name]}' for name in chosen) + '}'


@settings(max_examples=1000, deadline=None)
@given(calls())
def test_any_call_equals_the_walking_tool(text: str) -> None:
    result = outcome(lambda: TOOL._values(text))
    assert result == outcome(lambda: WALKING._values(text))
    event(f'{result[0]}: {"number problem" if "finite" in str(result) or "64-bit" in str(result) else "other"}')


def test_the_tools_checks_are_generated() -> None:
    TOOL._values('{"branch": {"leaves": []}}')
    assert callable(TOOL._numbers_check)


CHECK = numbers_checker(pydantic.TypeAdapter(tuple[Branch, Box, Options]).core_schema)
FINE = (
    Branch(leaves=[Leaf(count=1, ratio=0.5, amount=decimal.Decimal('2.5'), tags={1.0})], weights={'w': 2.0}),
    Box(size=3),
    {'depth': 2, 'spread': 0.5},
)


def test_fine_values_pass() -> None:
    assert number_problems(FINE) == []
    assert CHECK is None  # a tuple of numbers is not covered: the walk decides
    assert numbers_checker(pydantic.TypeAdapter(list[Branch | Box]).core_schema) is None  # a union: not covered
    check = numbers_checker(pydantic.TypeAdapter(list[Branch | None]).core_schema)
    assert check is not None and check([None, FINE[0]])
    check = numbers_checker(pydantic.TypeAdapter(dict[str, list[Branch]]).core_schema)
    assert check is not None and check({'a': [FINE[0]]})


def _problem(path: str, bad: Any) -> Any:
    branch = Branch(leaves=[Leaf(count=1)])
    box, options = Box(size=1), Options(depth=1)
    target = {'branch': branch, 'box': box, 'options': options}
    holder, _, name = path.rpartition('.')
    obj = target[holder] if holder in target else branch.leaves[0]
    if isinstance(obj, dict):
        obj[name] = bad
    else:
        object.__setattr__(obj, name, bad)
    return {'branch': branch, 'box': box, 'options': options, 'depth': 1}


@pytest.mark.parametrize(
    ('path', 'bad'),
    [
        ('leaf.count', 2**63),
        ('leaf.count', -(2**63) - 1),
        ('leaf.ratio', math.inf),
        ('leaf.ratio', math.nan),
        ('leaf.amount', decimal.Decimal('NaN')),
        ('leaf.tags', {1.0, -math.inf}),
        ('branch.weights', {'w': math.nan}),
        ('branch.limit', math.inf),
        ('box.size', 2**64),
        ('box.scale', math.inf),
        ('options.depth', 2**70),
        ('options.spread', math.nan),
        ('leaf.count', 'not a number'),  # not shaped as the schema says: "walk"
    ],
)
def test_every_number_position_is_checked(path: str, bad: Any) -> None:
    check = numbers_checker(TOOL._schema.arguments.core_schema)  # type: ignore[union-attr]
    assert check is not None
    assert check(_problem('leaf.count', 1)) is True
    assert check(_problem(path, bad)) is False


class Validated(pydantic.BaseModel):
    x: float

    @pydantic.field_validator('x')
    @classmethod
    def grow(cls, x: float) -> float:
        return x * 1e308


class Posted(pydantic.BaseModel):
    x: float = 0.0

    def model_post_init(self, context: Any) -> None:
        self.x = math.inf


class Open(pydantic.BaseModel, extra='allow'):
    x: int = 0


@pytest.mark.parametrize(
    'annotation',
    [Validated, Posted, Open, Any, list[Any], dict[str, Any], list, int | str, Literal[2**70], tuple[int, float]],
)
def test_what_the_check_cannot_cover_keeps_the_walk(annotation: Any) -> None:
    assert numbers_checker(pydantic.TypeAdapter(annotation).core_schema) is None


def test_a_validator_that_overflows_is_still_refused() -> None:
    def scale(value: Validated) -> str:
        return 'ok'

    with pytest.raises(ToolExecutionError, match='value.x: Input should be a finite number'):
        MethodToolCallback(scale).call('{"value": {"x": 10}}')


def test_no_numbers_no_check() -> None:
    class Named(pydantic.BaseModel):
        name: str
        tags: list[str] = []
        level: Literal['a', 'b'] = 'a'

    check = numbers_checker(pydantic.TypeAdapter(Named).core_schema)
    assert check is not None and check(Named(name='x'))


_model_names = itertools.count()
LEAVES: list[Any] = [int, float, decimal.Decimal, str, bool, type(None), Literal['a', 'b'], Literal[1, 2**70]]


def _model(fields: dict[str, Any], kind: str) -> Any:
    name = f'Generated{next(_model_names)}'
    if kind == 'model':
        return pydantic.create_model(name, **{key: (t, ...) for key, t in fields.items()})  # type: ignore[call-overload]
    if kind == 'typed-dict':
        return TypedDict(name, fields)  # type: ignore[operator]
    return dataclasses.make_dataclass(name, list(fields.items()))


TYPES = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.one_of(
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: set[t]),  # type: ignore[valid-type]
        inner.map(lambda t: t | None),
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        inner.map(lambda t: dict[int, t]),  # type: ignore[valid-type]
        st.builds(
            _model,
            st.dictionaries(st.sampled_from(['a', 'b', 'c']), inner, min_size=1, max_size=3),
            st.sampled_from(['model', 'typed-dict', 'dataclass']),
        ),
    ),
    max_leaves=6,
)
JSON_NUMBERS = st.sampled_from(
    [
        '1',
        '-3',
        '2.5',
        '3.0',
        '1e19',
        '1e400',
        'NaN',
        '-Infinity',
        '9223372036854775808',
        '"inf"',
        '"12"',
        '1' + '0' * 30,
    ]
)


def _text(annotation: Any, draw: st.DrawFn) -> str:
    """A JSON text mostly shaped as ``annotation``, numbers drawn from :data:`JSON_NUMBERS`."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation in (int, float, decimal.Decimal):
        return draw(JSON_NUMBERS)
    if origin in (list, set):
        return '[' + ', '.join(_text(args[0], draw) for _ in range(draw(st.integers(0, 2)))) + ']'
    if origin is dict:
        keys = ['"1"', '"99999999999999999999"', '"x"'] if args[0] is int else ['"k"', '"l"']
        chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=2))
        return '{' + ', '.join(f'{key}: {_text(args[1], draw)}' for key in chosen) + '}'
    if origin in (types.UnionType, typing.Union):
        return 'null' if draw(st.booleans()) else _text(args[0], draw)
    if origin is Literal:
        return (
            json.dumps(draw(st.sampled_from(args)))
            if type(args[0]) is str
            else draw(st.sampled_from(['1', str(2**70)]))
        )
    hints = typing.get_type_hints(annotation) if isinstance(annotation, type) and annotation is not type(None) else {}
    if hints and annotation not in (str, bool):
        return '{' + ', '.join(f'"{key}": {_text(t, draw)}' for key, t in hints.items()) + '}'
    return draw(st.sampled_from(['"s"', 'true', 'null', '1']))


@settings(max_examples=600, deadline=None)
@given(TYPES, st.data())
def test_the_check_never_passes_what_the_walk_refuses(annotation: Any, data: st.DataObject) -> None:
    """Soundness over generated schemas: a value the check passes has no number problem."""
    try:
        adapter = pydantic.TypeAdapter(annotation)
    except pydantic.PydanticSchemaGenerationError:
        return
    check = numbers_checker(adapter.core_schema)
    text = _text(annotation, data.draw)
    try:
        value = adapter.validate_json(text)
    except pydantic.ValidationError:
        return
    event('checked' if check is not None else 'not covered')
    if check is not None:
        fine = check(value)
        event(f'fine: {fine}; problems: {bool(number_problems(value))}')
        assert not (fine and number_problems(value)), (text, value)
