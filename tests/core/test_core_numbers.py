"""``numbers_fine``: the core's quick pass over the numbers a tool bound; Rust equals the twin.

``True`` only when every number inside is surely fine (exact ``int`` in the signed 64-bit range,
exact ``float`` finite) and every container is one the pass knows; ``False`` sends the binding to
its full walk (:func:`toolweave.tools._numbers.number_problems`), which must then agree.
"""

from __future__ import annotations

import decimal
import enum
from typing import Any

import pydantic
import pytest
import toolweave._core as rust
import toolweave._reference as reference
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave.tools._numbers import number_problems


class Color(enum.Enum):
    RED = 1


class Flag(int, enum.Enum):
    ON = 2**70  # an enum member is the developer's value: never looked into


class Point(pydantic.BaseModel):
    x: Any = None
    y: Any = None


class Open(pydantic.BaseModel, extra='allow'):
    a: Any = None


class MyInt(int):
    pass


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=2),
    st.integers(-(2**64), 2**64),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([Color.RED, Flag.ON, MyInt(3), decimal.Decimal(1), 1j, b'x', {1, 2}, object()]),
)


def _model(children: Any) -> Any:
    return st.builds(Point, x=children, y=children) | st.builds(lambda a, b: Open(a=a, b=b), children, children)


VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=2) | st.integers(0, 2), inner, max_size=3)
        | _model(inner)
    ),
    max_leaves=10,
)


def both(value: Any) -> tuple[bool, bool]:
    return (
        rust.numbers_fine(value, pydantic.BaseModel, enum.Enum),
        reference.numbers_fine(value, pydantic.BaseModel, enum.Enum),
    )


@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_rust_equals_the_twin_and_never_hides_a_problem(value: Any) -> None:
    fine, twin = both(value)
    assert fine == twin
    if fine:
        assert number_problems(value) == []


@pytest.mark.parametrize(
    ('value', 'fine'),
    [
        ({'a': [1, 2.5, 'x', None, True, (2**63 - 1,)]}, True),
        ({'a': [2**63]}, False),
        ({'a': {'b': float('nan')}}, False),
        ({'a': float('-inf')}, False),
        ({1: 'int key'}, False),
        (Point(x=[1, {'y': 1e308}], y=Color.RED), True),
        (Point(x=Point(y=2**64)), False),
        (Open(a=1, b=float('inf')), False),
        (Open(a=1, b=2), True),
        ({1.5}, False),
        (MyInt(3), False),
        (decimal.Decimal(1), False),
        (Flag.ON, True),
    ],
)
def test_known_shapes(value: Any, fine: bool) -> None:
    assert both(value) == (fine, fine)


def test_nesting_deeper_than_32_levels_looks_closer() -> None:
    def nested(depth: int) -> Any:
        value: Any = 1
        for _ in range(depth):
            value = [value]
        return value

    assert both(nested(33)) == (True, True)
    assert both(nested(34)) == (False, False)
    assert number_problems(nested(34)) == []
