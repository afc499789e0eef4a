"""A raw-schema tool words an integer too large for a float as MethodToolCallback does for its parameter's type.

Where the schema wants a number (``"type": "number"``), ``1`` and 400 zeros would be an infinite float: "Input
should be a finite number", as for a ``float`` parameter (it was worded as an int64 range problem); where it
wants an ``integer``, or says nothing (``Any``), the range wording stays.
"""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import FunctionToolCallback, MethodToolCallback

BIG = '1' + '0' * 400
SCHEMA = {
    'type': 'object',
    'properties': {
        'x': {'type': 'number'},
        'n': {'type': 'integer'},
        'a': {},
        'xs': {'type': 'array', 'items': {'type': 'number'}},
    },
}
RAW = FunctionToolCallback.builder('t', lambda arguments: 'ok').input_schema(SCHEMA).build()


def t(x: float = 0, n: int = 0, a: Any = None, xs: list[float] | None = None) -> str:
    return 'ok'


METHOD = MethodToolCallback(t)


def _located(tool: Any, text: str) -> list[tuple[str, str]]:
    """``(location as a.b.0, reason)`` per problem of the call."""
    try:
        tool.call(text)
    except ToolExecutionError as exc:
        pairs = [problem.split(': ', 1) for problem in exc.cause.problems]
        return [(where.lstrip('/').replace('/', '.'), reason) for where, reason in pairs]
    return []


def _problems(tool: Any, text: str) -> list[str]:
    return [reason for _, reason in _located(tool, text)]


def test_a_huge_integer_for_a_number_is_not_finite() -> None:
    assert _problems(RAW, f'{{"x": {BIG}}}') == ['Input should be a finite number']
    assert _problems(RAW, f'{{"xs": [1, {BIG}]}}') == ['Input should be a finite number']
    with pytest.raises(ToolExecutionError, match='/xs/1: Input should be a finite number'):
        RAW.call(f'{{"xs": [1, {BIG}]}}')


def test_a_huge_integer_for_an_integer_or_anything_keeps_the_range_wording() -> None:
    words = 'Input should be an integer between -2**63 and 2**63 - 1 (signed 64-bit)'
    assert _problems(RAW, f'{{"n": {BIG}}}') == [words]
    assert _problems(RAW, f'{{"a": {BIG}}}') == [words]
    assert _problems(RAW, '{"x": 99999999999999999999}') == [words]  # a finite float: the dict would hold the int


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(['x', 'n', 'a']), min_size=1, max_size=3, unique=True), st.sampled_from([BIG, '-' + BIG])
)
def test_the_raw_tool_words_huge_integers_as_the_method_tool(names: list[str], big: str) -> None:
    text = '{' + ', '.join(f'"{name}": {big}' for name in names) + '}'
    assert sorted(_located(RAW, text)) == sorted(_located(METHOD, text))  # each in its own order
