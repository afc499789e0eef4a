"""The Python layers of a tool call, cut for speed (issue 14), answer exactly as the layers they replace.

``MethodToolCallback.call`` runs the function and converts a ``str`` result without the ``_invoke`` and
``convert_result`` frames, binds a single positional parameter without a getter call, and formats error
locations with :func:`toolweave.tools._numbers.dotted`: each is checked against the slower form here.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from toolweave.exceptions import InvalidToolArgumentsError, ToolExecutionError
from toolweave.tools import MethodToolCallback, ToolContext
from toolweave.tools._numbers import dotted, may_hold_inf_nan
from toolweave.tools.converter import DefaultToolCallResultConverter
from toolweave.tools.method import convert_result

parts = st.one_of(st.text(max_size=6), st.integers(min_value=-(10**30), max_value=10**30))


@given(st.lists(parts, max_size=6).map(tuple))
def test_dotted_is_the_join_of_the_parts_as_text(location: tuple[Any, ...]) -> None:
    assert dotted(location) == '.'.join(map(str, location))


@given(st.text(alphabet='NaIfinty" {}:,0', max_size=30))
def test_may_hold_inf_nan_is_the_two_word_search(text: str) -> None:
    assert may_hold_inf_nan(text) == ('NaN' in text or 'Infinity' in text)


def one(x: int) -> str:
    return f'one:{x!r}'


def several(a: int, b: str, /, c: float = 1.5, *, d: bool = False) -> dict[str, Any]:
    return {'a': a, 'b': b, 'c': c, 'd': d}


def with_context(a: int, context: ToolContext, b: Annotated[int, 'x'] = 2) -> list[Any]:
    return [a, sorted(context.context), b]


def nothing() -> None:
    return None


def numbers(x: int) -> int:
    return x * 2


class Upper:
    def convert(self, result: Any, return_type: Any) -> str:
        return str(result).upper()


CASES = [
    (one, '{"x": "7"}', None),
    (several, '{"a": 1, "b": "b", "d": true}', None),
    (several, '{"a": 1, "b": "b", "c": 2}', Upper()),
    (with_context, '{"a": 3}', None),
    (nothing, '{}', None),
    (numbers, '{"x": 21}', None),
    (one, '{"x": 5}', Upper()),
]


@pytest.mark.parametrize(('func', 'text', 'converter'), CASES)
def test_call_answers_as_bind_invoke_and_convert_result(func: Any, text: str, converter: Any) -> None:
    tool = MethodToolCallback(func, result_converter=converter)
    context = ToolContext({'k': 1})
    args, kwargs = tool._bind(text, context)
    expected = convert_result(
        tool.tool_definition, converter or DefaultToolCallResultConverter(), func(*args, **kwargs)
    )
    assert tool.call(text, context) == expected


def test_a_failing_function_is_wrapped_once_with_its_cause() -> None:
    problem = KeyError('k')

    def fails(x: int) -> str:
        raise problem

    own = ToolExecutionError(MethodToolCallback(one).tool_definition, RuntimeError('own'))

    def raises_own(x: int) -> str:
        raise own

    with pytest.raises(ToolExecutionError) as info:
        MethodToolCallback(fails).call('{"x": 1}')
    assert info.value.cause is problem and info.value.__cause__ is problem
    assert info.value.__suppress_context__ and str(info.value) == "KeyError: 'k'"
    with pytest.raises(ToolExecutionError) as info:
        MethodToolCallback(raises_own).call('{"x": 1}')
    assert info.value is own  # the function's own: not wrapped a second time


def test_an_invalid_call_keeps_its_message_and_cause() -> None:
    with pytest.raises(ToolExecutionError) as info:
        MethodToolCallback(several).call('{"a": "x", "b": "b", "e": 1}')
    cause = info.value.cause
    assert isinstance(cause, InvalidToolArgumentsError) and info.value.__cause__ is cause
    assert cause.problems == (
        "unexpected argument 'e'",
        'a: Input should be a valid integer, unable to parse string as an integer',
    )
    assert str(info.value) == "Invalid arguments for tool 'several': " + '; '.join(cause.problems)
