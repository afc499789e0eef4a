"""Integers a tool refuses are never advertised in its @tool schema (issue 14 attack; ``tools/schema.py``).

JSON Schema in the core holds integers up to ``2**64 - 1``, but the numbers rule accepts signed 64 bits
only: a default or an enum/Literal value in ``2**63 .. 2**64 - 1`` is left out of the schema (the model
would send it back and be refused), and an integer lower bound no signed 64-bit integer meets is a
``TypeError``, as one beyond 64 bits already was.
"""

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pydantic
import pytest
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback

INT64_MAX = 2**63 - 1


def _property(func: Callable[..., Any]) -> dict[str, Any]:
    schema = MethodToolCallback(func).tool_definition.input_schema
    return dict(schema['properties']['x'])


def test_an_int_default_the_tool_refuses_is_not_advertised() -> None:
    def big(x: int = 2**63) -> str:
        return repr(x)

    def biggest(x: int = 2**64 - 1) -> str:
        return repr(x)

    def largest_accepted(x: int = INT64_MAX) -> str:
        return repr(x)

    assert 'default' not in _property(big)
    assert 'default' not in _property(biggest)
    assert _property(largest_accepted)['default'] == INT64_MAX
    callback = MethodToolCallback(largest_accepted)
    assert callback.call(json.dumps({'x': INT64_MAX})) == repr(INT64_MAX)


def test_a_literal_value_the_tool_refuses_is_not_advertised() -> None:
    def pick(x: Literal[1, 2**63] = 1) -> str:
        return repr(x)

    prop = _property(pick)
    assert prop['enum'] == [1]
    callback = MethodToolCallback(pick)
    for value in prop['enum']:
        assert callback.call(json.dumps({'x': value})) == repr(value)
    with pytest.raises(ToolExecutionError):
        callback.call(json.dumps({'x': 2**63}))


@pytest.mark.parametrize(
    ('annotation', 'words'),
    [
        (Annotated[int, pydantic.Field(ge=2**63)], 'ge=9223372036854775808 leaves no 64-bit integer'),
        (Annotated[int, pydantic.Field(gt=INT64_MAX)], 'gt=9223372036854775807 leaves no 64-bit integer'),
        (Annotated[int, pydantic.Field(lt=-(2**63))], 'lt=-9223372036854775808 leaves no 64-bit integer'),
    ],
)
def test_an_int_bound_no_64_bit_integer_meets_is_a_typed_error(annotation: Any, words: str) -> None:
    def bounded(x: int) -> str:
        return repr(x)

    bounded.__annotations__['x'] = annotation
    with pytest.raises(TypeError, match=words):
        MethodToolCallback(bounded)


def test_an_int_upper_bound_beyond_64_bits_is_not_advertised() -> None:
    def capped(x: Annotated[int, pydantic.Field(le=2**63)] = 0) -> str:
        return repr(x)

    assert _property(capped) == {'type': 'integer', 'default': 0}
    assert MethodToolCallback(capped).call(json.dumps({'x': INT64_MAX})) == repr(INT64_MAX)
