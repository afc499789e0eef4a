"""The definition side as Spring AI 2.0.1's ``JsonSchemaGenerator``, ``JsonSchemaUtils`` and ``ToolUtils`` define it."""

import dataclasses
import enum
import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field
from toolweave import ChatClient, tool
from toolweave.providers import ScriptedChatModel
from toolweave.tools import (
    AugmentedToolCallbackProvider,
    FunctionToolCallback,
    MethodToolCallback,
    MethodToolCallbackProvider,
    ToolCallbacks,
    ToolDefinition,
    ToolParam,
    check_unique_tool_names,
    duplicate_tool_names,
    ensure_valid_input_schema,
)
from typing_extensions import TypedDict

# --- no generator artefacts in any schema ----------------------------------------------------------


class Color(enum.Enum):
    RED = 'red'
    BLUE = 'blue'


class Address(BaseModel):
    street: str
    title: str = Field(description='a property that happens to be called title')
    zip_code: Annotated[str | None, ToolParam(description='postal code', required=False)] = None


@dataclasses.dataclass
class Point:
    x: float
    y: Annotated[float, ToolParam(required=False)] = 0.0


class Limits(TypedDict):
    low: int
    high: int


class Order(BaseModel):
    """An order."""

    item: str
    address: Address
    color: Color = Color.RED
    points: list[Point] = []
    limits: Limits | None = None
    note: Annotated[str, ToolParam(required=False)] = ''
    urgent: Annotated[bool, ToolParam(required=True)] = False


class Thinking(BaseModel):
    inner_thought: Annotated[str, ToolParam(description='why')]
    plan: Address | None = None


@tool
def place(order: Order, count: Annotated[int, ToolParam(required=False)] = 1) -> str:
    """Place an order."""
    return 'placed'


def generated_schemas() -> dict[str, Any]:
    by_function = FunctionToolCallback.builder('place_fn', lambda o: 'placed').input_type(Order).build()
    (augmented,) = AugmentedToolCallbackProvider([place], argument_type=Thinking).tool_callbacks
    return {
        'method': MethodToolCallback(place).tool_definition.input_schema,
        'input_type': by_function.tool_definition.input_schema,
        'augmented': augmented.tool_definition.input_schema,
    }


def schema_keywords(node: Any, in_names: bool = False):
    """Every keyword used by a schema node (names under ``properties``/``$defs`` and literal values skipped)."""
    if isinstance(node, list):
        for item in node:
            yield from schema_keywords(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if not in_names:
                yield key
            if key in ('enum', 'const', 'default', 'examples') and not in_names:
                continue
            yield from schema_keywords(value, in_names=not in_names and key in ('properties', '$defs'))


@pytest.mark.parametrize('kind', ['method', 'input_type', 'augmented'])
def test_no_pydantic_title_and_no_internal_marker_in_any_generated_schema(kind):
    schema = generated_schemas()[kind]
    assert 'title' not in set(schema_keywords(schema))
    assert 'x-toolweave' not in json.dumps(schema)
    # a property named "title" is a name, not the keyword: it stays
    address = schema['$defs']['Address']
    assert list(address['properties']) == ['street', 'title', 'zip_code']
    assert address['properties']['title'] == {
        'description': 'a property that happens to be called title',
        'type': 'string',
    }
    assert address['required'] == ['street', 'title']


def test_tool_param_required_honoured_through_input_type():
    schema = generated_schemas()['input_type']
    assert schema['required'] == ['item', 'address', 'urgent']  # note: required=False; urgent: required=True
    assert schema['$defs']['Point']['required'] == ['x']
    callback = FunctionToolCallback.builder('place_fn', lambda o: o.model_dump_json()).input_type(Order).build()
    # a field the schema leaves out of "required" because it admits None may be left out by the model
    assert json.loads(callback.call('{"item": "tea", "address": {"street": "s", "title": "t"}, "urgent": true}')) == {
        'item': 'tea',
        'address': {'street': 's', 'title': 't', 'zip_code': None},
        'color': 'red',
        'points': [],
        'limits': None,
        'note': '',
        'urgent': True,
    }


def test_tool_param_required_honoured_for_method_parameters_and_nested_fields():
    schema = generated_schemas()['method']
    assert schema['required'] == ['order']
    assert schema['properties']['order']['required'] == ['item', 'address', 'urgent']


def test_client_sends_clean_schemas(run_loop):
    model = ScriptedChatModel([ScriptedChatModel.text_response('ok')])
    run_loop(ChatClient.create(model).prompt('go').tools(place))
    sent = model.prompts[0].options.tool_callbacks[0].tool_definition.input_schema
    assert 'title' not in set(schema_keywords(sent)) and 'x-toolweave' not in json.dumps(sent)


# --- $defs renames (Rust core and its twin) --------------------------------------------------------


def test_defs_rename_rewrites_references_with_a_path_tail(core):
    root = {'A': {'type': 'object', 'properties': {'y': {'type': 'string'}}}}
    schema = {
        'properties': {
            'whole': {'$ref': '#/$defs/A'},
            'inner': {'$ref': '#/$defs/A/properties/y'},
            'other': {'$ref': '#/$defs/AB/properties/z'},
        },
        '$defs': {
            'A': {
                'type': 'object',
                'properties': {'y': {'type': 'integer'}, 'self': {'$ref': '#/$defs/A/properties/y'}},
            },
            'AB': {'type': 'object', 'properties': {'z': {'type': 'null'}}},
        },
    }
    out, defs = core.hoist_defs_to_root(schema, root)
    assert out['properties'] == {
        'whole': {'$ref': '#/$defs/A_2'},
        'inner': {'$ref': '#/$defs/A_2/properties/y'},
        'other': {'$ref': '#/$defs/AB/properties/z'},  # a name that only starts like a renamed one stays
    }
    assert defs['A_2']['properties']['self'] == {'$ref': '#/$defs/A_2/properties/y'}
    assert defs['A'] == root['A']


# --- raw schemas from outside (Spring JsonSchemaUtils.ensureValidInputSchema) ----------------------


@pytest.mark.parametrize(
    ('raw', 'expected'),
    [
        (
            {'type': 'object', 'additionalProperties': False},
            {'type': 'object', 'additionalProperties': False, 'properties': {}},
        ),
        ({'additionalProperties': False}, {'additionalProperties': False, 'type': 'object', 'properties': {}}),
        ({}, {'type': 'object', 'properties': {}}),
        (
            {'type': 'object', 'properties': {'cityName': {'type': 'string'}}},
            {'type': 'object', 'properties': {'cityName': {'type': 'string'}}},
        ),
        ({'type': 'string'}, {'type': 'string'}),
    ],
)
def test_ensure_valid_input_schema_adds_type_and_properties(raw, expected):
    before = json.dumps(raw)
    assert ensure_valid_input_schema(raw) == expected
    assert json.dumps(raw) == before  # a copy: the caller's schema is untouched


def test_input_schema_of_a_function_tool_is_normalised():
    callback = (
        FunctionToolCallback.builder('ping', lambda args: 'pong').input_schema({'additionalProperties': False}).build()
    )
    assert callback.tool_definition.input_schema == {'additionalProperties': False, 'type': 'object', 'properties': {}}
    assert callback.call('{}') == 'pong'
    with pytest.raises(TypeError, match='input_schema must be a mapping'):
        ensure_valid_input_schema('{"type": "object"}')  # type: ignore[arg-type]


# --- ToolUtils: names, descriptions, duplicates ---------------------------------------------------


@tool
def get_weather(city: str) -> str:
    return city


def test_every_duplicated_tool_name_in_one_error():
    def make(name: str, text: str) -> FunctionToolCallback:
        return FunctionToolCallback.builder(name, lambda: text).build()

    tools = [make('a', '1'), make('b', '2'), make('a', '3'), make('c', '4'), make('b', '5'), make('a', '6')]
    assert duplicate_tool_names(tools) == ['a', 'b']
    with pytest.raises(ValueError) as info:
        check_unique_tool_names(tools)
    message = str(info.value)
    assert message.startswith("Multiple tools with the same name 'a': ")
    assert message.count("FunctionToolCallback(name='a')") == 3 and "; 'b': " in message and "'c'" not in message
    check_unique_tool_names(tools[:2])  # no duplicates: no error
    with pytest.raises(ValueError, match=r"same name 'a': .*; 'b': "):
        ChatClient.create(ScriptedChatModel([])).prompt('q').tools(*tools).call()


def test_provider_reports_every_duplicated_name_with_owners():
    class First:
        @tool
        def a(self) -> str:
            return '1'

        @tool
        def b(self) -> str:
            return '2'

    class Second:
        @tool(name='a')
        def other_a(self) -> str:
            return '3'

        @tool(name='b')
        def other_b(self) -> str:
            return '4'

    with pytest.raises(ValueError, match=r"same name 'a': .*First and .*Second; 'b': .*First and .*Second"):
        MethodToolCallbackProvider([First(), Second()])


@pytest.mark.parametrize(
    'make',
    [
        lambda: tool(name=''),
        lambda: tool(description='   '),
        lambda: MethodToolCallback(get_weather, name=''),
        lambda: MethodToolCallback(get_weather, description=''),
        lambda: FunctionToolCallback.builder('', lambda: 'x'),
        lambda: FunctionToolCallback.builder(' ', lambda: 'x'),
        lambda: FunctionToolCallback.builder('x', lambda: 'x').description(''),
        lambda: ToolDefinition('', 'does things'),
        lambda: ToolDefinition('name', ' \n'),
    ],
)
def test_empty_tool_names_and_descriptions_are_rejected(make):
    with pytest.raises(ValueError, match=r'(name|description) cannot be empty'):
        make()


def test_default_description_is_never_empty():
    def _(x: int) -> int:
        return x

    assert MethodToolCallback(_).tool_definition.description == '_'
    assert FunctionToolCallback.builder('__', lambda: 'x').build().tool_definition.description == '__'


class Weather:
    @tool
    def forecast(self, city: str) -> str:
        return f'sunny in {city}'


@pytest.mark.parametrize(
    'make',
    [
        lambda: MethodToolCallback(Weather.forecast),
        lambda: ToolCallbacks.from_(Weather.forecast),
        lambda: FunctionToolCallback.builder('forecast', Weather.forecast),
        # the chat client checks functions where they are given, before any request runs
        lambda: ChatClient.create(ScriptedChatModel([])).prompt('q').tools(Weather.forecast),
        lambda: ChatClient.create(ScriptedChatModel([])).prompt('q').tools([[Weather.forecast]]),
        lambda: ChatClient.builder(ScriptedChatModel([])).default_tools(Weather.forecast),
    ],
)
def test_unbound_method_is_rejected_with_a_clear_error(make):
    with pytest.raises(TypeError, match=r'Weather\.forecast is an unbound method .*obj\.forecast'):
        make()


def test_a_function_may_be_given_before_the_types_its_hints_name():
    def book(trip: 'LaterTrip') -> str:  # type: ignore[name-defined]  # noqa: F821  (defined later, as in a module)
        return f'booked {trip["city"]}'

    client = ChatClient.builder(
        ScriptedChatModel(
            [
                ScriptedChatModel.tool_call_response('book', {'trip': {'city': 'Rome'}}),
                ScriptedChatModel.text_response('done'),
            ]
        )
    ).default_tools(book)  # the schema is made when the request runs
    globals()['LaterTrip'] = TypedDict('LaterTrip', {'city': str})
    try:
        assert client.build().prompt('go').call().content() == 'done'
    finally:
        del globals()['LaterTrip']


def test_bound_method_and_instance_still_work():
    assert MethodToolCallback(Weather().forecast).call('{"city": "Oslo"}') == 'sunny in Oslo'
    (callback,) = ToolCallbacks.from_(Weather())
    assert list(callback.tool_definition.input_schema['properties']) == ['city']


def test_augmentation_shares_identical_defs_and_renames_different_ones():
    schema = generated_schemas()['augmented']
    assert schema['properties']['plan']['anyOf'][0] == {'$ref': '#/$defs/Address'}  # the tool's own Address, shared

    class Address(BaseModel):  # same name, other fields
        line: str

    class Plan(BaseModel):
        where: Address

    (augmented,) = AugmentedToolCallbackProvider([place], argument_type=Plan).tool_callbacks
    schema = augmented.tool_definition.input_schema
    assert schema['properties']['where'] == {'$ref': '#/$defs/Address_2'}
    assert list(schema['$defs']['Address_2']['properties']) == ['line']
    assert list(schema['$defs']['Address']['properties']) == ['street', 'title', 'zip_code']
    assert (
        augmented.call('{"order": {"item": "t", "address": {"street": "s", "title": "x"}}, "where": {"line": "l"}}')
        == 'placed'
    )
