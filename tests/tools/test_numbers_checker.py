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
import math
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
