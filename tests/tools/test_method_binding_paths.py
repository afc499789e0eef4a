"""``MethodToolCallback``'s per-call shortcuts keep what the slow path says (issue 14's overhead work).

* An invalid call answered from the one-step validation's error does not parse the text a second time
  to know it is strict JSON (nor, when every parameter failed, to know which were sent): pydantic parsed it whole before validating, and its parser differs from
  the slow path's only in taking ``NaN``/``Infinity``/``-Infinity``; a text holding one of those
  words is parsed again. Over texts with those words in values and in strings, numbers beyond the
  bounds and wrong types, the answer equals the slow path's (``parse_arguments`` + one validation
  per parameter; a text the strict parse refuses for its ``NaN``/``Infinity`` is read with them).
* The error's ``__cause__`` is its ``cause`` (the ``InvalidToolArgumentsError``) on every path.
* Arguments reach the function by position and keyword, a ``ToolContext`` at its declared place.
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.binding import slow_path
from toolweave.exceptions import InvalidToolArgumentsError, ToolExecutionError
from toolweave.tools import MethodToolCallback, ToolContext
from typing_extensions import TypedDict


class Line(pydantic.BaseModel):
    sku: str
    quantity: int
    price: float


class Basket(pydantic.BaseModel):
    customer: str
    lines: list[Line]


class LineDict(TypedDict):
    sku: str
    quantity: int
    price: float


def checkout(basket: Basket, lines: list[LineDict], count: int = 1) -> str:
    return 'ok'


def checkout_one(basket: Basket) -> str:
    return 'ok'


def checkout_dicts(lines: list[LineDict]) -> str:
    return 'ok'


def outcome(run: Any) -> tuple[str, Any, Any]:
    """``('ok', values, None)`` or ``('error', the cause's class, message)``; ``__cause__`` is the cause."""
    try:
        return 'ok', run(), None
    except ToolExecutionError as exc:
        assert exc.__cause__ is exc.cause
        return 'error', type(exc.cause).__name__, str(exc)


ODD_NUMBERS = st.sampled_from(
    ['NaN', 'Infinity', '-Infinity', '1e400', '"NaN"', '"Infinity"', '"x"', '3', '2.5', '1e19']
)
ODD_STRINGS = st.sampled_from(['"NaN"', '"Infinity in a word"', '"ok"', '5', 'null', 'NaN'])


@st.composite
def odd_calls(draw: st.DrawFn) -> str:
    line = '{{"sku": {}, "quantity": {}, "price": {}}}'
    lines = [
        line.format(draw(ODD_STRINGS), draw(ODD_NUMBERS), draw(ODD_NUMBERS)) for _ in range(draw(st.integers(0, 2)))
    ]
    basket = '{{"customer": {}, "lines": [{}]}}'.format(draw(ODD_STRINGS), ', '.join(lines))
    members = {'basket': basket, 'lines': f'[{", ".join(lines)}]', 'count': draw(ODD_NUMBERS), 'stranger': '1'}
    chosen = draw(st.lists(st.sampled_from(list(members)), unique=True))
    return '{' + ', '.join(f'"{name}": {members[name]}' for name in chosen) + '}'


TOOLS = [MethodToolCallback(f) for f in (checkout, checkout_one, checkout_dicts)]


@settings(max_examples=500, deadline=None)
@given(odd_calls(), st.sampled_from(TOOLS))
def test_invalid_calls_with_nan_or_infinity_equal_the_slow_path(text: str, tool: MethodToolCallback) -> None:
    assert outcome(lambda: tool._values(text)) == outcome(lambda: slow_path(tool, text))


BAD_BASKET = '{"customer": "Ada", "lines": [{"sku": "A", "quantity": "one", "price": 1}]}'
BAD_LINES = '[{"sku": "A", "quantity": 1, "price": "cheap"}]'


@pytest.mark.parametrize(
    ('tool', 'text'),
    [
        (TOOLS[0], f'{{"basket": {BAD_BASKET}, "lines": {BAD_LINES}, "count": "many"}}'),
        (TOOLS[1], f'{{"basket": {BAD_BASKET}}}'),
        (TOOLS[2], f'{{"lines": {BAD_LINES}}}'),
    ],
)
def test_an_invalid_call_is_not_parsed_again(tool: MethodToolCallback, text: str) -> None:
    """Every parameter failed and the text has no NaN/Infinity: answered without the core's parse."""
    expected = outcome(lambda: slow_path(tool, text))
    assert expected[1] == InvalidToolArgumentsError.__name__
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr('toolweave.tools.method.parse_arguments', lambda text: pytest.fail('parsed again'))
        assert outcome(lambda: tool._values(text)) == expected


def test_a_text_with_infinity_names_it_as_a_number_problem() -> None:
    """Both paths read ``Infinity`` (pydantic's parser takes it) and answer it as a non-finite number."""
    tool = MethodToolCallback(checkout_dicts)
    text = '{"lines": [{"sku": "A", "quantity": "one", "price": Infinity}]}'
    kind, cause, message = outcome(lambda: tool._values(text))
    assert (kind, cause) == ('error', 'InvalidToolArgumentsError')
    assert message == (
        "Invalid arguments for tool 'checkout_dicts': lines.0.quantity: Input should be a valid integer, "
        'unable to parse string as an integer'
    )  # a parameter that failed its validation has no number walk (as without the Infinity)
    fine = '{"lines": [{"sku": "A", "quantity": 1, "price": Infinity}]}'
    assert outcome(lambda: tool._values(fine)) == (
        'error',
        'InvalidToolArgumentsError',
        "Invalid arguments for tool 'checkout_dicts': lines.0.price: Input should be a finite number",
    )
    broken = '{"lines": [{"sku": "A", "quantity": 1, "price": Infinity]}'  # not JSON even with the extensions
    assert outcome(lambda: tool._values(broken))[1] == 'ToolArgumentsError'


def place(a: int, ctx: ToolContext, b: str, *, c: float = 1.0, d: str | None = None) -> str:
    return repr((a, ctx.context['who'], b, c, d))


def only_context(ctx: ToolContext) -> str:
    return ctx.context['who']


def one(a: int) -> str:
    return repr(a)


@pytest.mark.parametrize(
    ('function', 'text', 'expected'),
    [
        (place, '{"a": 1, "b": "x", "c": 2}', "(1, 'me', 'x', 2.0, None)"),
        (place, '{"b": "x", "a": "3", "d": "y"}', "(3, 'me', 'x', 1.0, 'y')"),
        (only_context, '{}', 'me'),
        (one, '{"a": 7}', '7'),
    ],
)
def test_arguments_reach_their_parameters(function: Any, text: str, expected: str) -> None:
    assert MethodToolCallback(function).call(text, ToolContext({'who': 'me'})) == expected
