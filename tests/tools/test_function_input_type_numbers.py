"""FunctionToolCallback over a pydantic ``input_type`` names number problems as MethodToolCallback does.

Its top-level fields are what MethodToolCallback's parameters are: a ``NaN``/``Infinity`` with another field
invalid is a number problem (not a syntax error), and the number problem of a field that validated is
listed after the other field's error, not dropped. Differential: the same arguments to a model tool and to a
function tool with the same fields give the same answer.
"""

import ast
import math
from typing import Optional

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave.exceptions import InvalidToolArgumentsError, ToolExecutionError
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from typing_extensions import NotRequired, TypedDict


class Limits(pydantic.BaseModel):
    limit: float
    n: int
    note: Optional[str] = None


def limits(limit: float, n: int, note: Optional[str] = None) -> str:
    return repr((limit, n, note))


class LimitsDict(TypedDict):
    limit: float
    n: int
    note: NotRequired[Optional[str]]


FUNCTION = FunctionToolCallback.builder('limits', lambda q: repr((q.limit, q.n, q.note))).input_type(Limits).build()
DICT_FUNCTION = (
    FunctionToolCallback.builder('limits', lambda q: repr((q['limit'], q['n'], q.get('note'))))
    .input_type(LimitsDict)
    .build()
)
METHOD = MethodToolCallback(limits)


def _answer(tool: object, text: str) -> tuple[str, str, str]:
    try:
        return 'ok', '', tool.call(text)  # type: ignore[attr-defined]
    except ToolExecutionError as exc:
        return 'error', type(exc.cause).__name__, str(exc)


def test_a_non_finite_number_beside_an_invalid_field_is_a_number_problem() -> None:
    with pytest.raises(ToolExecutionError) as info:
        FUNCTION.call('{"limit": NaN, "n": "x"}')
    assert isinstance(info.value.cause, InvalidToolArgumentsError)
    assert info.value.cause.problems == (
        'n: Input should be a valid integer, unable to parse string as an integer',
        'limit: Input should be a finite number',
    )
    assert _answer(FUNCTION, '{"limit": NaN, "n": "x"}') == _answer(METHOD, '{"limit": NaN, "n": "x"}')


def test_the_number_problem_of_a_valid_field_is_kept_when_another_fails() -> None:
    text = '{"limit": 1.5, "n": 99999999999999999999, "note": 3}'
    assert _answer(FUNCTION, text) == _answer(METHOD, text)
    assert _answer(FUNCTION, text)[2] == (
        "Invalid arguments for tool 'limits': note: Input should be a valid string; "
        'n: Input should be an integer between -2**63 and 2**63 - 1 (signed 64-bit)'
    )


def test_a_text_that_is_not_json_even_with_nan_is_still_a_syntax_error() -> None:
    kind, cause, message = _answer(FUNCTION, '{"limit": NaN, "n": 1')
    assert (kind, cause) == ('error', 'ToolArgumentsError') and 'line 1 column' in message
    assert _answer(FUNCTION, '{"limit": NaN, "n": 1') == _answer(METHOD, '{"limit": NaN, "n": 1')


numbers = st.sampled_from(['NaN', 'Infinity', '-Infinity', '1e400', '-1e400', '99999999999999999999', '1' + '0' * 400])
plain = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda t: 'e' not in t or '.' in t),
    st.sampled_from(['"x"', '"7"', 'null', 'true', '[]', '{}', '"nan"', '"inf"']),
)
values = st.one_of(numbers, plain)


@settings(max_examples=300, deadline=None)
@given(limit=values, n=values, note=st.one_of(st.none(), values), as_dict=st.booleans())
def test_function_and_method_tools_answer_alike(limit: str, n: str, note: Optional[str], as_dict: bool) -> None:
    members = [f'"limit": {limit}', f'"n": {n}'] + ([] if note is None else [f'"note": {note}'])
    text = '{' + ', '.join(members) + '}'
    function, method = _answer(DICT_FUNCTION if as_dict else FUNCTION, text), _answer(METHOD, text)
    if function[0] == 'ok':  # the callables format their values alike
        assert method[0] == 'ok' and function[2] == method[2]
        assert not any(isinstance(v, float) and not math.isfinite(v) for v in ast.literal_eval(function[2]))
    elif len(limit) > 300:
        # An integer too large for a float is refused by MethodToolCallback's per-parameter step (listed among the
        # errors) and read as infinite by the type's one step, then named with the members that validated (listed
        # after the errors): the same problems, maybe in another order.
        head = "Invalid arguments for tool 'limits': "
        problems = [sorted(answer[2].removeprefix(head).split('; ')) for answer in (function, method)]
        assert function[:2] == method[:2] and problems[0] == problems[1]
    else:
        assert function == method
