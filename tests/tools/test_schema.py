import enum
import logging
from typing import Annotated, Literal, Optional

import pydantic
import pytest
from toolweave.tools import MethodToolCallback, ToolContext, ToolParam, tool
from toolweave.tools.schema import SCHEMA_DIALECT, function_schema, name_to_description


class Unit(str, enum.Enum):
    C = 'c'
    F = 'f'


class Address(pydantic.BaseModel):
    street: str
    zip_code: str = pydantic.Field(description='Postal code')


def test_primitives_order_required_and_root_shape():
    def f(b: int, a: str, c: float, d: bool) -> None: ...

    schema = function_schema(f).input_schema
    assert schema == {
        '$schema': SCHEMA_DIALECT,
        'type': 'object',
        'properties': {
            'b': {'type': 'integer'},
            'a': {'type': 'string'},
            'c': {'type': 'number'},
            'd': {'type': 'boolean'},
        },
        'required': ['b', 'a', 'c', 'd'],
        'additionalProperties': False,
    }
    assert list(schema['properties']) == ['b', 'a', 'c', 'd']


def test_required_rule_chain():
    def f(
        plain: str,
        optional: Optional[str],
        union_none: int | None,
        defaulted: int = 3,
        forced: Annotated[Optional[str], ToolParam(required=True)] = None,
        relaxed: Annotated[str, ToolParam(required=False)] = 'x',
        relaxed_no_default: Annotated[str, ToolParam(required=False)] = ...,  # type: ignore[assignment]
    ) -> None: ...

    schema = function_schema(f).input_schema
    assert schema['required'] == ['plain', 'forced']
    assert schema['properties']['defaulted'] == {'type': 'integer', 'default': 3}
    assert schema['properties']['optional'] == {'anyOf': [{'type': 'string'}, {'type': 'null'}]}


def test_required_is_always_present_and_empty_defs_dropped():
    def f() -> None: ...

    schema = function_schema(f).input_schema
    assert schema['required'] == []
    assert '$defs' not in schema


def test_enum_literal_list_dict():
    def f(unit: Unit, mode: Literal['fast', 'slow'], tags: list[str], scores: dict[str, int]) -> None: ...

    props = function_schema(f).input_schema['properties']
    assert props['mode'] == {'enum': ['fast', 'slow'], 'type': 'string'}
    assert props['tags'] == {'type': 'array', 'items': {'type': 'string'}}
    assert props['scores'] == {'type': 'object', 'additionalProperties': {'type': 'integer'}}
    assert props['unit'] == {'enum': ['c', 'f'], 'type': 'string'}


def test_pydantic_model_inlined_at_top_nested_hoisted_and_closed():
    def f(address: Address, others: list[Address]) -> None: ...

    schema = function_schema(f).input_schema
    top = schema['properties']['address']
    assert top['type'] == 'object' and top['additionalProperties'] is False and 'title' not in top
    assert schema['properties']['others'] == {'type': 'array', 'items': {'$ref': '#/$defs/Address'}}
    address = schema['$defs']['Address']
    assert address['additionalProperties'] is False
    assert address['required'] == ['street', 'zip_code']
    assert address['properties']['zip_code']['description'] == 'Postal code'


def test_defs_collision_renamed_and_refs_rewritten():
    class Item(pydantic.BaseModel):
        a: int

    first = Item

    class Item(pydantic.BaseModel):  # type: ignore[no-redef]
        b: str

    def f(x: list[first], y: list[Item]) -> None: ...  # type: ignore[valid-type]

    schema = function_schema(f).input_schema
    assert schema['properties']['x']['items'] == {'$ref': '#/$defs/Item'}
    assert schema['properties']['y']['items'] == {'$ref': '#/$defs/Item_2'}
    assert set(schema['$defs']['Item']['properties']) == {'a'}
    assert set(schema['$defs']['Item_2']['properties']) == {'b'}


def test_identical_defs_reused():
    def f(home: list[Address], work: dict[str, Address]) -> None: ...

    schema = function_schema(f).input_schema
    assert list(schema['$defs']) == ['Address']
    assert schema['properties']['work']['additionalProperties'] == {'$ref': '#/$defs/Address'}


def test_top_level_format_removed_nested_kept():
    import datetime

    class Event(pydantic.BaseModel):
        at: datetime.date

    def f(day: datetime.date, event: Event) -> None: ...

    schema = function_schema(f).input_schema
    assert schema['properties']['day'] == {'type': 'string'}
    assert schema['properties']['event']['properties']['at']['format'] == 'date'


def test_descriptions_precedence():
    def f(
        a: Annotated[str, ToolParam(description='from ToolParam')],
        b: Annotated[str, pydantic.Field(description='from Field')],
        c: str,
    ) -> None:
        """Summary line.

        Longer body.

        Args:
            a: from docstring a
            b: from docstring b
            c: from docstring c
        """

    fs = function_schema(f)
    props = fs.input_schema['properties']
    assert [props[k]['description'] for k in 'abc'] == ['from ToolParam', 'from Field', 'from docstring c']
    assert fs.summary == 'Summary line.\n\nLonger body.'


def test_tool_description_defaults():
    @tool
    def get_weather_now(city: str) -> str:
        return city

    def getWeatherNow(city: str) -> str:
        return city

    assert MethodToolCallback(get_weather_now).tool_definition.description == 'get weather now'
    assert MethodToolCallback(getWeatherNow).tool_definition.description == 'get weather now'
    assert name_to_description('fetch-URL_list') == 'fetch url list'

    @tool(name='w', description='Explicit.')
    def documented(city: str) -> str:
        """Docstring."""
        return city

    assert MethodToolCallback(documented).tool_definition.name == 'w'
    assert MethodToolCallback(documented).tool_definition.description == 'Explicit.'


def test_skipped_parameters_and_kwargs_rejected():
    class Service:
        def lookup(self, city: str, ctx: ToolContext, *args: int) -> str:
            return city

    fs = function_schema(Service().lookup)
    assert list(fs.input_schema['properties']) == ['city']
    assert fs.context_parameter == 'ctx'

    def bad(city: str, **kwargs: int) -> str:
        return city

    with pytest.raises(TypeError, match=r'\*\*kwargs'):
        function_schema(bad)


def test_unsupported_type_names_parameter():
    class Opaque:
        pass

    def f(thing: Opaque) -> None: ...

    with pytest.raises(TypeError, match=r"parameter 'thing'.*Opaque"):
        function_schema(f)


def test_schema_is_cached_per_function():
    def f(a: int) -> None: ...

    assert function_schema(f) is function_schema(f)

    class S:
        def m(self, a: int) -> None: ...

    assert function_schema(S().m) is function_schema(S().m)


def test_bad_tool_name_warns(caplog):
    def f() -> None: ...

    with caplog.at_level(logging.WARNING, logger='toolweave.tools'):
        MethodToolCallback(f, name='has space')
        MethodToolCallback(f, name='x' * 65)
        MethodToolCallback(f, name='ok.name-1')
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert messages[0].startswith("Tool name 'has space' may not be compatible with some LLMs")


def test_tool_param_on_nested_fields():
    from dataclasses import dataclass

    class Inner(pydantic.BaseModel):
        code: Annotated[str, ToolParam(description='Postal code', required=False)] = ''
        note: Annotated[Optional[str], ToolParam(required=True)] = None
        plain: int

    @dataclass
    class Box:
        size: Annotated[int, ToolParam(description='Edge in cm')]

    def f(inner: Inner, box: Box, top: Annotated[str, ToolParam(description='Top', required=False)] = 'x') -> None: ...

    schema = function_schema(f).input_schema
    inner = schema['properties']['inner']
    assert inner['required'] == ['note', 'plain']
    assert inner['properties']['code']['description'] == 'Postal code'
    assert schema['properties']['box']['properties']['size']['description'] == 'Edge in cm'
    assert schema['properties']['box']['required'] == ['size']
    assert schema['properties']['top'] == {'type': 'string', 'description': 'Top', 'default': 'x'}
    assert schema['required'] == ['inner', 'box']
    assert 'x-toolweave-required' not in str(schema)
