"""A tool parameter whose default comes from a pydantic ``Field`` is optional, and its value is pydantic's.

``x: Annotated[T, Field(default_factory=f)]`` and ``x: T = Field(default_factory=f)`` (or ``default=``): the
schema does not require ``x``; when the model leaves it out, ``f`` runs once per call (on every path: the
decoder, pydantic's one step, the slow path that lists problems) and the function gets its value, never the
``FieldInfo``; a factory's value is the developer's, not judged by the numbers rule.
"""

import math
import uuid
from collections.abc import Callable
from typing import Annotated, Any

import pydantic
import pytest
from pydantic import Field
from support.concurrency import counting
from toolweave.exceptions import ToolExecutionError
from toolweave.tools import MethodToolCallback


def _tools(factory: Callable[[], Any]) -> list[Callable[..., Any]]:
    def annotated(y: int, x: Annotated[Any, Field(default_factory=factory)]) -> str:
        return repr(x)

    def assigned(y: int, x: Any = Field(default_factory=factory)) -> str:  # noqa: B008 - the form under test
        return repr(x)

    return [annotated, assigned]


@pytest.mark.parametrize('decoder', [True, False], ids=['decoder', 'pydantic'])
@pytest.mark.parametrize('form', [0, 1], ids=['annotated', 'assigned'])
def test_a_factory_parameter_is_optional_and_its_factory_runs_once_per_call(form: int, decoder: bool) -> None:
    factory, made = counting(lambda: uuid.uuid4())
    tool = MethodToolCallback(_tools(factory)[form])
    if not decoder:
        tool._decoder = None
    schema = tool.tool_definition.input_schema
    assert schema['required'] == ['y'] and 'default' not in schema['properties']['x']
    first = tool.call('{"y": 1}')
    second = tool.call('{"y": "2"}')  # a lax value: pydantic's step
    assert [first, second] == [repr(made[0]), repr(made[1])] and len(made) == 2
    assert tool.call('{"y": 1, "x": [1]}') == '[1]' and len(made) == 2  # sent: the factory is not asked


@pytest.mark.parametrize('form', [0, 1], ids=['annotated', 'assigned'])
def test_a_factory_value_is_the_developers_not_judged_by_the_numbers_rule(form: int) -> None:
    factory, made = counting(lambda: math.nan)
    tool = MethodToolCallback(_tools(factory)[form])
    assert tool.call('{"y": 1}') == 'nan' and len(made) == 1
    with pytest.raises(ToolExecutionError) as info:  # another parameter fails: the slow path
        tool.call('{"y": "one"}')
    assert str(info.value) == (
        f"Invalid arguments for tool '{tool.tool_definition.name}': "
        'y: Input should be a valid integer, unable to parse string as an integer'
    )
    assert len(made) in (1, 2)  # at most once for this call (not run at all when the call fails early)


def test_field_defaults_are_values_and_advertised() -> None:
    def plain(y: int, x: int = Field(default=4), z: Annotated[int, Field(default=3, description='z')] = 9) -> str:
        return repr((x, z))

    tool = MethodToolCallback(plain)
    properties = tool.tool_definition.input_schema['properties']
    assert tool.tool_definition.input_schema['required'] == ['y']
    assert properties['x'] == {'type': 'integer', 'default': 4}
    assert properties['z']['default'] == 3 and properties['z']['description'] == 'z'
    assert tool.call('{"y": 1}') == repr((4, 3))
    tool._decoder = None
    assert tool.call('{"y": 1}') == repr((4, 3))


def test_a_field_without_a_default_stays_required() -> None:
    def described(y: int = Field(description='why')) -> str:
        return repr(y)

    tool = MethodToolCallback(described)
    assert tool.tool_definition.input_schema['required'] == ['y']
    with pytest.raises(ToolExecutionError, match='y: missing required argument|y: Field required'):
        tool.call('{}')


def test_a_factory_taking_the_validated_data_gets_the_arguments() -> None:
    def doubled(y: int, x: Annotated[int, Field(default_factory=lambda data: data['y'] * 2)]) -> str:
        return repr(x)

    tool = MethodToolCallback(doubled)
    assert tool.call('{"y": 21}') == '42'
    assert tool.call('{"y": "4"}') == '8'


def test_the_per_parameter_validation_of_a_factory_parameter_is_unchanged() -> None:
    class Box(pydantic.BaseModel):
        n: int

    def boxed(box: Annotated[Box, Field(default_factory=lambda: Box(n=1))]) -> str:
        return repr(box)

    tool = MethodToolCallback(boxed)
    assert tool.call('{}') == repr(Box(n=1))
    assert tool.call('{"box": {"n": "5"}}') == repr(Box(n=5))
    with pytest.raises(ToolExecutionError, match='box.n: Input should be a valid integer'):
        tool.call('{"box": {"n": "x"}}')
