"""DefaultToolCallResultConverter completeness and provider checks (static, class, async methods)."""

import asyncio
import dataclasses
import datetime
import enum
import logging
from collections.abc import Callable

import pydantic
import pytest
from toolweave.chat import Media
from toolweave.tools import (
    DefaultToolCallResultConverter,
    MethodToolCallback,
    MethodToolCallbackProvider,
    ToolCallbacks,
    ToolExecutionError,
    tool,
)


class Color(enum.Enum):
    RED = 'red'


@dataclasses.dataclass
class Point:
    x: int
    when: datetime.date


class M(pydantic.BaseModel):
    a: int
    tags: set[str] = set()


class FakeImage:
    """Exposes the Pillow interface the converter uses: a class named Image in a PIL. module with save()."""

    def save(self, fp, format=None):
        assert format == 'PNG'
        fp.write(b'\x89PNG fake')


FakeImage.__name__ = 'Image'
FakeImage.__module__ = 'PIL.Image'


def test_converter_values():
    c = DefaultToolCallResultConverter()
    assert c.convert(None) == 'Done'
    assert c.convert('plain "text"') == 'plain "text"'
    # issue 18: bytes and images are content parts (ContentResult), no longer base64 JSON text
    png = c.convert(b'\x89PNG\r\n\x1a\n')
    assert png == '' and png.media == (Media('image/png', b'\x89PNG\r\n\x1a\n'),)
    assert c.convert(FakeImage()).media == (Media('image/png', b'\x89PNG fake'),)
    assert c.convert(M(a=1, tags={'x'})) == '{"a":1,"tags":["x"]}'
    assert c.convert(Point(1, datetime.date(2024, 1, 2))) == '{"x":1,"when":"2024-01-02"}'
    assert c.convert([Color.RED, datetime.datetime(2024, 1, 2, 3, 4, 5)]) == '["red","2024-01-02T03:04:05"]'
    assert c.convert({1: {'a'}}) == '{"1":["a"]}'
    with pytest.raises(TypeError, match='not JSON serializable: object'):
        c.convert(object())


def test_unserialisable_result_is_a_tool_execution_error():
    def f() -> object:
        return object()

    with pytest.raises(ToolExecutionError) as info:
        MethodToolCallback(f).call('{}')
    assert 'object' in str(info.value) and isinstance(info.value.cause, TypeError)


class Tools:
    factor = 10

    @tool
    def plain(self, a: int) -> int:
        return a * self.factor

    @staticmethod
    @tool
    def static_add(a: int, b: int) -> int:
        return a + b

    @classmethod
    @tool
    def class_scale(cls, a: int) -> int:
        return a * cls.factor

    @tool
    async def slow_double(self, a: int) -> int:
        await asyncio.sleep(0)
        return 2 * a

    @tool
    def make_fn(self) -> Callable[[], int]:
        return lambda: 1

    def not_a_tool(self) -> None: ...


def test_provider_collects_every_method_kind(caplog):
    with caplog.at_level(logging.WARNING, logger='toolweave.tools'):
        callbacks = {cb.tool_definition.name: cb for cb in MethodToolCallbackProvider([Tools()]).tool_callbacks}
    assert sorted(callbacks) == ['class_scale', 'plain', 'slow_double', 'static_add']
    assert "Skipping @tool 'make_fn'" in caplog.text
    assert callbacks['plain'].call('{"a": 2}') == '20'
    assert callbacks['static_add'].call('{"a": 2, "b": 3}') == '5'
    assert callbacks['class_scale'].call('{"a": 3}') == '30'
    assert callbacks['slow_double'].call('{"a": 4}') == '8'
    assert asyncio.run(callbacks['slow_double'].acall('{"a": 5}')) == '10'
    assert list(callbacks['class_scale'].tool_definition.input_schema['properties']) == ['a']


def test_provider_on_the_class_itself_and_errors():
    class OnlyClassLevel:
        factor = 3

        @staticmethod
        @tool
        def static_add(a: int, b: int) -> int:
            return a + b

        @classmethod
        @tool
        def class_scale(cls, a: int) -> int:
            return a * cls.factor

    callbacks = {cb.tool_definition.name: cb for cb in ToolCallbacks.from_(OnlyClassLevel)}
    assert sorted(callbacks) == ['class_scale', 'static_add']
    assert callbacks['class_scale'].call('{"a": 2}') == '6'
    # a class whose instance methods are tools: those need an instance (their self would be dropped)
    with pytest.raises(TypeError, match=r'Tools\.\w+ is an unbound method'):
        ToolCallbacks.from_(Tools)

    class Empty:
        pass

    with pytest.raises(ValueError, match='No @tool methods found.*pass a ToolCallback'):
        MethodToolCallbackProvider([Empty()])

    class Other:
        @tool
        def plain(self) -> str:
            return ''

    with pytest.raises(ValueError, match="Multiple tools with the same name 'plain': Tools and .*Other"):
        MethodToolCallbackProvider([Tools(), Other()])


def test_staticmethod_object_accepted_classmethod_object_rejected():
    def f(a: int) -> int:
        return a

    assert MethodToolCallback(staticmethod(f)).call('{"a": 1}') == '1'  # type: ignore[arg-type]
    with pytest.raises(TypeError, match='bound class method'):
        MethodToolCallback(classmethod(f))  # type: ignore[arg-type]
