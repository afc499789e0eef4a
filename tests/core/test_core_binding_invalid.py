"""Invalid calls of a tool over pydantic models with numbers: answered from the one-step error when it says all.

Such a model has no bounded validator (pydantic-core validates it with the class's own), so a valid
call walks the numbers afterwards. An invalid call is answered from the one-step error when every
parameter the model sent failed (no parameter validated, so the slow path would list no number
problem either); otherwise the slow path decides. Either way the message is the slow path's.
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.binding import slow_path
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback
from toolweave.tools.schema import function_schema


class Item(pydantic.BaseModel):
    sku: str
    quantity: int
    price: float


class Order(pydantic.BaseModel):
    customer: str
    items: list[Item]
    note: str | None = None


def place(order: Order, priority: int = 0) -> str:
    return 'ok'


TOOL = MethodToolCallback(place)
GOOD_ORDER = {'customer': 'Ada', 'items': [{'sku': 'A', 'quantity': 1, 'price': 9.5}]}


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return 'ok', run()
    except ToolExecutionError as exc:
        return 'error', str(exc)


def test_the_model_has_no_bounded_validator() -> None:
    assert function_schema(place).checked_arguments is None


def test_an_invalid_order_is_answered_without_the_slow_path() -> None:
    bad = {'order': {**GOOD_ORDER, 'items': [{'sku': 'A', 'quantity': 'one', 'price': 9.5}]}}
    slow = mock.patch.object(MethodToolCallback, '_validate', side_effect=AssertionError('slow path'))
    with slow, pytest.raises(ToolExecutionError) as info:
        TOOL.call(json.dumps(bad))
    assert 'order.items.0.quantity: Input should be a valid integer' in str(info.value)
    assert outcome(lambda: TOOL._values(json.dumps(bad))) == outcome(lambda: slow_path(TOOL, json.dumps(bad)))


def test_a_parameter_that_validated_keeps_its_number_problems() -> None:
    bad = {'order': {**GOOD_ORDER, 'customer': 7}, 'priority': 2**64}
    message = outcome(lambda: TOOL._values(json.dumps(bad)))
    assert message == outcome(lambda: slow_path(TOOL, json.dumps(bad)))
    assert message[0] == 'error' and 'order.customer: Input should be a valid string' in message[1]
    assert 'priority: Input should be an integer between -2**63 and 2**63 - 1' in message[1]


LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([1.5, 1e300, '1e400', 'nan', 'inf', '12', 'x', '']),
)
QUANTITIES = st.sampled_from([1, 7, 'one', '12', 1.5, 2.0, 2**63, -(2**64), '', None, 'inf'])
PRICES = st.sampled_from([9.5, 1, 'x', '1.5', 'nan', 'inf', '1e400', '', True])
ITEMS = st.fixed_dictionaries(
    {'sku': st.sampled_from(['A', 'B', 3]), 'quantity': QUANTITIES, 'price': PRICES}, optional={'zzz': LEAVES}
)
ORDERS = st.fixed_dictionaries(
    {'customer': st.sampled_from(['Ada', '', None]), 'items': st.lists(ITEMS, max_size=3)},
    optional={'note': LEAVES},
)
CALLS = st.fixed_dictionaries({'order': ORDERS}, optional={'priority': QUANTITIES, 'extra': LEAVES})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CALLS)
def test_any_call_equals_the_slow_path(arguments: dict[str, Any]) -> None:
    text = json.dumps(arguments, allow_nan=False)  # strict JSON: the slow path would refuse `Infinity` as syntax
    assert outcome(lambda: TOOL._values(text)) == outcome(lambda: slow_path(TOOL, text))
