import asyncio
import datetime
import enum
from dataclasses import dataclass
from typing import Annotated, Optional

import pydantic
import pytest
from toolweave.chat import Media
from toolweave.tools import (
    DefaultToolCallResultConverter,
    MethodToolCallback,
    ToolContext,
    ToolExecutionError,
    ToolParam,
    tool,
)


class Unit(str, enum.Enum):
    C = 'c'
    F = 'f'


class Point(pydantic.BaseModel):
    x: int
    y: int


def describe(day: datetime.date, unit: Unit, count: int, point: Point, note: Optional[str] = None) -> str:
    return f'{day.isoformat()}|{unit.name}|{count + 1}|{point.x + point.y}|{note}'


def test_arguments_are_coerced_by_pydantic():
    cb = MethodToolCallback(describe)
    out = cb.call('{"day": "2026-11-29", "unit": "f", "count": "41", "point": {"x": 1, "y": "2"}}')
    assert out == '2026-11-29|F|42|3|None'


def test_keyword_only_and_defaults():
    def f(a: int, *, b: int = 5) -> int:
        return a * b

    assert MethodToolCallback(f).call('{"a": 3}') == '15'
    assert MethodToolCallback(f).call('{"a": 3, "b": 2}') == '6'


def test_empty_input_is_rejected():
    cb = MethodToolCallback(describe)
    with pytest.raises(ValueError, match='tool_input cannot be null or empty'):
        cb.call('  ')


def test_invalid_json_becomes_tool_execution_error_with_position():
    cb = MethodToolCallback(describe)
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"day": ')
    assert info.value.tool_definition.name == 'describe'
    assert 'at line 1 column 9 (char 8)' in str(info.value)


def test_validation_errors_list_every_problem():
    cb = MethodToolCallback(describe)
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"day": "not a date", "unit": "k", "point": {"x": 1}, "extra": 1}')
    message = str(info.value)
    assert message.startswith("Invalid arguments for tool 'describe': unexpected argument 'extra'")
    for fragment in ('day:', 'unit:', 'count: missing required argument', 'point.y: Field required'):
        assert fragment in message


def test_not_required_parameter_without_default_gets_none():
    def f(a: Annotated[Optional[int], ToolParam(required=False)]) -> str:
        return repr(a)

    assert MethodToolCallback(f).call('{}') == 'None'


def test_function_exception_is_wrapped_with_cause():
    def boom(x: int) -> int:
        raise KeyError(f'no {x}')

    with pytest.raises(ToolExecutionError) as info:
        MethodToolCallback(boom).call('{"x": 1}')
    assert isinstance(info.value.cause, KeyError)
    assert info.value.__cause__ is info.value.cause


def test_tool_context_passed_and_required():
    def f(city: str, ctx: ToolContext) -> str:
        return f'{city}:{ctx["tenant"]}'

    cb = MethodToolCallback(f)
    assert cb.call('{"city": "Oslo"}', ToolContext({'tenant': 't1'})) == 'Oslo:t1'
    with pytest.raises(ValueError, match='ToolContext'):
        cb.call('{"city": "Oslo"}')


def test_async_function_sync_and_async_paths():
    @tool
    async def slow_add(a: int, b: int) -> int:
        await asyncio.sleep(0)
        return a + b

    cb = MethodToolCallback(slow_add)
    assert cb.call('{"a": 1, "b": 2}') == '3'
    assert asyncio.run(cb.acall('{"a": 2, "b": 2}')) == '4'

    async def inside_loop() -> str:
        return cb.call('{"a": 5, "b": 5}')

    assert asyncio.run(inside_loop()) == '10'


def test_sync_function_acall_runs_in_thread():
    import threading

    main = threading.get_ident()

    def where() -> bool:
        return threading.get_ident() != main

    assert asyncio.run(MethodToolCallback(where).acall('{}')) == 'true'


def test_bound_method_and_return_direct():
    class Shop:
        def __init__(self) -> None:
            self.stock = {'apple': 3}

        @tool(return_direct=True)
        def count(self, item: str) -> int:
            """Items in stock."""
            return self.stock[item]

    cb = MethodToolCallback(Shop().count)
    assert cb.tool_metadata.return_direct is True
    assert cb.tool_definition.description == 'Items in stock.'
    assert cb.call('{"item": "apple"}') == '3'


@dataclass
class Reading:
    city: str
    celsius: float


def test_default_result_converter():
    conv = DefaultToolCallResultConverter()
    assert conv.convert(None) == 'Done'
    assert conv.convert('plain "text"') == 'plain "text"'
    assert conv.convert({'a': [1, 2]}) == '{"a":[1,2]}'
    assert conv.convert(Reading('Oslo', 1.5)) == '{"city":"Oslo","celsius":1.5}'
    assert conv.convert(Point(x=1, y=2)) == '{"x":1,"y":2}'
    assert conv.convert(b'\x89PNG').media == (Media('application/octet-stream', b'\x89PNG'),)  # issue 18: a part
    assert conv.convert(datetime.date(2026, 1, 2)) == '"2026-01-02"'


def test_unconvertible_result_is_a_tool_error():
    def f() -> object:
        return object()

    with pytest.raises(ToolExecutionError, match='not JSON serializable'):
        MethodToolCallback(f).call('{}')


def test_non_text_input_is_a_type_error():
    with pytest.raises(TypeError, match='tool_input must be the argument JSON text'):
        MethodToolCallback(describe).call(5)  # type: ignore[arg-type]


def test_converter_must_return_text():
    class Bad:
        def convert(self, result, return_type=None):
            return 5

    @tool(result_converter=Bad())
    def f() -> int:
        return 1

    with pytest.raises(ToolExecutionError, match='returned int, not str'):
        MethodToolCallback(f).call('{}')


def test_exception_whose_str_fails_still_gives_a_message():
    class Weird(Exception):
        def __str__(self) -> str:
            raise ZeroDivisionError

    def f() -> None:
        raise Weird

    with pytest.raises(ToolExecutionError, match=r'Weird \(its message could not be rendered\)'):
        MethodToolCallback(f).call('{}')
