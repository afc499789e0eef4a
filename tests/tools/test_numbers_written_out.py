"""A tool over pydantic models skips the number walk when the text cannot hold a number beyond the bounds.

pydantic cannot bound the numbers of a complete model in one step (it validates with the class's own
validator), so a valid call walks the values for non-finite numbers and integers beyond 64 bits. When
no validator function, custom ``__init__``/``model_post_init`` or default factory can produce a number
(``text_bounds_numbers``), every number comes from the text; a text without 19-digit runs, exponents,
``\\u`` escapes or ``inf``/``nan`` (``numbers_written_out``) then holds none beyond the bounds. The
specification is the same tool with the walk always on: the same values or the same error for any text.
"""

from __future__ import annotations

import dataclasses
import decimal
import math
from typing import Any

import pydantic
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback
from toolweave.tools._numbers import numbers_written_out, text_bounds_numbers


class Leaf(pydantic.BaseModel):
    count: int
    ratio: float | None = None
    amount: decimal.Decimal = decimal.Decimal(0)
    anything: Any = None


class Branch(pydantic.BaseModel, extra='allow'):
    leaves: list[Leaf]
    weights: dict[str, float] = {}
    limit: float = 1e300  # the developer's default: not the model's number


@dataclasses.dataclass
class Box:
    size: int
    scale: float = 1.0


def grow(branch: Branch, box: Box | None = None, depth: int = 1) -> str:
    return 'ok'


TOOL = MethodToolCallback(grow)
WALKING = MethodToolCallback(grow)
WALKING._text_bounds = False  # the walk after every valid one-step validation, as before the skip


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return 'ok', run()
    except ToolExecutionError as exc:
        return 'error', str(exc)


NUMBER_TEXTS = st.one_of(
    st.integers(-(10**18), 10**18).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda t: 'inf' not in t),
    st.sampled_from(
        ['9223372036854775807', '9223372036854775808', '-9223372036854775809', '99999999999999999999', '1e19']
        + ['1e400', '-1e400', '9.3e18', '1E2', '3.0', '123456789012345678', '1' + '0' * 400]
        + ['NaN', 'Infinity']
        + ['"inf"', '"-Infinity"', '"NaN"', '"1e400"', '"9_223_372_036_854_775_808"', '"1_000"', '" 12 "']
        + [
            '"' + '\\u0039' * 20 + '"',
            '"\\u0069nf"',
            '"12"',
            '"infinite"',
            'null',
            '"x"',
        ]
    ),
)


@st.composite
def calls(draw: st.DrawFn) -> str:
    def number() -> str:
        return draw(NUMBER_TEXTS)

    leaves = [
        f'{{"count": {number()}, "ratio": {number()}, "amount": {number()}, "anything": [{number()}]}}'
        for _ in range(draw(st.integers(0, 2)))
    ]
    branch = f'{{"leaves": [{", ".join(leaves)}], "weights": {{"w": {number()}}}, "other": {number()}}}'
    members = {'branch': branch, 'box': f'{{"size": {number()}, "scale": {number()}}}', 'depth': number()}
    chosen = draw(st.lists(st.sampled_from(list(members)), unique=True, min_size=1))
    return '{' + ', '.join(f'"{name}": {members[name]}' for name in chosen) + '}'


@settings(max_examples=1000, deadline=None)
@given(calls())
def test_any_call_equals_the_slow_path(text: str) -> None:
    event('walk skipped' if numbers_written_out(text) else 'walked')
    assert outcome(lambda: TOOL._values(text)) == outcome(lambda: WALKING._values(text))


def test_the_walk_is_skipped_for_plain_numbers() -> None:
    text = '{"branch": {"leaves": [{"count": 3, "ratio": 0.5}]}, "depth": 123456789012345678}'
    assert numbers_written_out(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr('toolweave.tools.method._number_problems', lambda values: pytest.fail('walked'))
        values = TOOL._values(text)
    assert values['branch'].leaves[0].count == 3 and values['depth'] == 123456789012345678


@pytest.mark.parametrize(
    'text',
    ['{"a": 1e5}', '{"a": 1234567890123456789}', '{"a": "\\u0031"}', '{"a": "INF"}', '{"a": "Not a NaN"}'],
)
def test_what_may_break_the_bounds_is_walked(text: str) -> None:
    assert not numbers_written_out(text)


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


class Factory(pydantic.BaseModel):
    xs: list[float] = pydantic.Field(default_factory=lambda: [math.inf])


@dataclasses.dataclass
class MutableDefault:
    xs: list[float] = dataclasses.field(default_factory=lambda: [math.nan])


@pytest.mark.parametrize('annotation', [Validated, Posted, Factory, MutableDefault, complex, list[complex]])
def test_numbers_not_from_the_text_keep_the_walk(annotation: Any) -> None:
    assert not text_bounds_numbers(pydantic.TypeAdapter(annotation).core_schema)


def test_a_validator_that_overflows_is_still_refused() -> None:
    def scale(value: Validated) -> str:
        return 'ok'

    tool = MethodToolCallback(scale)
    with pytest.raises(ToolExecutionError, match='value.x: Input should be a finite number'):
        tool.call('{"value": {"x": 10}}')
