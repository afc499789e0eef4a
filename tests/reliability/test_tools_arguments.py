"""Hostile numbers in tool arguments are invalid arguments for every kind of tool.

Attack: ``NaN``/``Infinity``/``-Infinity`` (the JSON extensions), ``"nan"``/``"inf"`` strings for
floats, overflowing literals (``1e400``) and integers beyond the signed 64-bit range, sent to
``@tool`` functions and to ``FunctionToolCallback``s over a pydantic model, a dataclass, a
TypedDict and a raw JSON Schema, through ``call()``, ``acall()`` and ``stream()``. The model must get
the invalid-arguments response, the tool must not run, and the retry budget must end the run when
the model insists. Hypothesis then fuzzes the binding with random argument texts and values: only
the documented errors may come out.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_validator
from tool_faults import MODES, run
from toolweave import ChatClient, tool
from toolweave.exceptions import (
    InvalidToolArgumentsError,
    ToolArgumentsError,
    ToolExecutionError,
    ToolRetryBudgetExceededError,
)
from toolweave.providers import ScriptedChatModel
from toolweave.tools import FunctionToolCallback, MethodToolCallback
from toolweave.tools._numbers import INT64_MAX, INT64_MIN
from typing_extensions import TypedDict

S = ScriptedChatModel
HOSTILE = [
    '{"amount": NaN}',
    '{"amount": Infinity}',
    '{"amount": -Infinity}',
    '{"amount": 1e400}',
    '{"amount": -1e400}',
    '{"amount": "nan"}',
    '{"amount": "NaN"}',
    '{"amount": "inf"}',
    '{"amount": "-inf"}',
    '{"amount": "infinity"}',
    '{"amount": 1, "count": 18446744073709551616}',
    '{"amount": 1, "count": 9223372036854775808}',
    '{"amount": 1, "count": -9223372036854775809}',
    '{"amount": 1, "count": 1e400}',
    '{"amount": 1, "count": 1e20}',
    '{"amount": 1, "count": "99999999999999999999"}',
]


class Payment(BaseModel):
    amount: float
    count: int = 1


@dataclasses.dataclass
class PaymentData:
    amount: float
    count: int = 1


class PaymentDict(TypedDict, total=False):
    amount: float
    count: int


PAYMENT_SCHEMA = {
    'type': 'object',
    'properties': {'amount': {'type': 'number'}, 'count': {'type': 'integer'}},
    'required': ['amount'],
}


def payment_tools(ran: list[Any]) -> dict[str, Any]:
    """One ``pay`` tool of each kind; each records what it received in ``ran``."""

    @tool(name='pay')
    def pay(amount: float, count: int = 1) -> str:
        if amount > 100:  # a NaN would pass this check
            return 'refused'
        ran.append((amount, count))
        return 'paid'

    def record(args: Any) -> str:
        ran.append(args)
        return 'paid'

    def function_tool(**kind: Any) -> FunctionToolCallback:
        builder = FunctionToolCallback.builder('pay', record)
        builder = builder.input_schema(kind['schema']) if 'schema' in kind else builder.input_type(kind['type'])
        return builder.build()

    return {
        'tool-function': MethodToolCallback(pay),
        'pydantic-model': function_tool(type=Payment),
        'dataclass': function_tool(type=PaymentData),
        'typed-dict': function_tool(type=PaymentDict),
        'input-schema': function_tool(schema=PAYMENT_SCHEMA),
    }


KINDS = list(payment_tools([]))


@pytest.mark.parametrize('arguments', HOSTILE)
@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('mode', MODES)
def test_hostile_numbers_get_the_invalid_arguments_response(mode, kind, arguments):
    ran: list[Any] = []
    callback = payment_tools(ran)[kind]
    model = ScriptedChatModel([S.tool_call_response('pay', arguments, 'c1'), S.text_response('sorry')])
    text, _ = run(ChatClient.create(model).prompt('pay').tools(callback), mode)
    assert text == 'sorry'
    (response,) = model.prompts[1].messages[-1].responses
    assert response.response_data.startswith("Invalid arguments for tool 'pay': "), response.response_data
    assert ran == []


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('mode', MODES)
def test_the_retry_budget_ends_a_model_that_insists(mode, kind):
    ran: list[Any] = []
    callback = payment_tools(ran)[kind]
    model = ScriptedChatModel(
        [S.tool_call_response('pay', '{"amount": NaN}'), S.tool_call_response('pay', '{"amount": 1e400}')]
    )
    with pytest.raises(ToolRetryBudgetExceededError, match="invalid arguments to tool 'pay' 2 times"):
        run(ChatClient.create(model).prompt('pay').tools(callback), mode)
    assert ran == []


@pytest.mark.parametrize('kind', KINDS)
def test_numbers_at_the_limits_are_accepted(kind):
    ran: list[Any] = []
    callback = payment_tools(ran)[kind]
    for count in (INT64_MAX, INT64_MIN):
        assert callback.call(json.dumps({'amount': 1.5e308, 'count': count})) in {'paid', 'refused'}
    assert callback.call('{"amount": -2.5, "count": 3}') == 'paid'


def test_a_default_is_the_developers_value_not_the_models():
    @tool
    def search(query: str, limit: float = math.inf) -> str:
        return f'{query} {limit}'

    assert MethodToolCallback(search).call('{"query": "q"}') == 'q inf'


class Strict(BaseModel):
    amount: float

    @field_validator('amount')
    @classmethod
    def check(cls, value: float) -> float:
        raise LookupError('no rate for this amount')  # not a ValueError: pydantic lets it through


def test_an_exception_from_a_validator_of_the_tools_own_type_is_a_tool_error():
    @tool
    def pay(payment: Strict) -> str:
        return 'paid'

    function_tool = FunctionToolCallback.builder('pay2', lambda p: 'paid').input_type(Strict).build()
    for callback in (MethodToolCallback(pay), function_tool):
        with pytest.raises(ToolExecutionError) as info:
            callback.call('{"payment": {"amount": 1}}' if callback is not function_tool else '{"amount": 1}')
        assert isinstance(info.value.cause, LookupError)
    model = ScriptedChatModel([S.tool_call_response('pay', {'payment': {'amount': 1}}), S.text_response('ok')])
    assert ChatClient.create(model).prompt('pay').tools(pay).call().content() == 'ok'
    assert model.prompts[1].messages[-1].responses[0].response_data == 'no rate for this amount'


# -- fuzzing the binding ---------------------------------------------------------------------------


class Line(BaseModel):
    sku: str
    price: float
    qty: int = 1


@dataclasses.dataclass
class Box:
    width: float
    tags: list[str] = dataclasses.field(default_factory=list)


def fuzz_tools(received: list[Any]) -> list[Any]:
    @tool(name='order')
    def order(lines: list[Line], box: Box, note: str = '', extra: dict[str, Any] | None = None, n: int = 0) -> str:
        received.append((lines, box, extra, n))
        return 'ok'

    class OrderInput(BaseModel):
        lines: list[Line]
        box: Box
        note: str = ''
        extra: dict[str, Any] | None = None
        n: int = 0

    schema = {
        'type': 'object',
        'properties': {
            'lines': {'type': 'array', 'items': {'type': 'object', 'properties': {'price': {'type': 'number'}}}},
            'n': {'type': 'integer'},
            'extra': {},
        },
    }

    def record(args: Any) -> str:
        received.append(args)
        return 'ok'

    return [
        MethodToolCallback(order),
        FunctionToolCallback.builder('order', record).input_type(OrderInput).build(),
        FunctionToolCallback.builder('order', record).input_schema(schema).build(),
    ]


def only_documented_errors(callbacks: list[Any], text: str) -> None:
    for callback in callbacks:
        try:
            callback.call(text)
        except ToolExecutionError as error:
            assert isinstance(error.cause, (InvalidToolArgumentsError, ToolArgumentsError)), repr(error.cause)
            assert str(error).startswith("Invalid arguments for tool 'order': ")


def numbers_in(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [value]
    if isinstance(value, BaseModel):
        value = dict(value)
    elif dataclasses.is_dataclass(value):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers_in(v)]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in numbers_in(v)]
    return []


hostile_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(['nan', 'inf', '-inf', 'Infinity', '+inf', 'NaN', '1e400', '-0', '1_000']),
)
json_values = st.recursive(
    st.none() | st.booleans() | hostile_numbers | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
line = st.fixed_dictionaries({'sku': st.text(max_size=4), 'price': hostile_numbers}, optional={'qty': hostile_numbers})
arguments = st.fixed_dictionaries(
    {'lines': st.lists(line, max_size=3), 'box': st.fixed_dictionaries({'width': hostile_numbers})},
    optional={'extra': st.dictionaries(st.text(max_size=4), json_values, max_size=3), 'n': hostile_numbers},
)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(arguments)
def test_fuzzed_values_bind_to_finite_numbers_or_fail_as_invalid_arguments(value):
    received: list[Any] = []
    only_documented_errors(fuzz_tools(received), json.dumps(value, allow_nan=True))
    for bound in received:
        for number in numbers_in(bound):
            assert math.isfinite(number) and (not isinstance(number, int) or INT64_MIN <= number <= INT64_MAX)


@FUZZ
@given(st.one_of(st.text(max_size=40), st.builds(lambda v: json.dumps(v, allow_nan=True)[:-1], arguments)))
def test_fuzzed_argument_texts_fail_only_as_invalid_arguments(text):
    if text.strip():
        only_documented_errors(fuzz_tools([]), text)
