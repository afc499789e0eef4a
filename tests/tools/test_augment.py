"""AugmentedToolCallbackProvider: extra fields in every schema, stripped, validated, consumed."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Annotated, Any

import orjson
import pydantic
import pytest
from toolweave import ChatClient, ToolParam, tool
from toolweave.exceptions import ToolExecutionError
from toolweave.providers import ScriptedChatModel
from toolweave.tools import (
    DefaultToolCallingManager,
    DefaultToolExecutionExceptionProcessor,
    FunctionToolCallback,
    MethodToolCallback,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
)
from toolweave.tools.augment import (
    AgentThinking,
    AugmentedArgumentEvent,
    AugmentedToolCallback,
    AugmentedToolCallbackProvider,
)
from toolweave.tools.context import current_tool_call

S = ScriptedChatModel
RAN: list[tuple[str, Any]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    RAN.append(('add', (a, b)))
    return a + b


@tool
async def slow_upper(text: Annotated[str, ToolParam(description='Text')]) -> str:
    """Upper-case a text."""
    await asyncio.sleep(0)
    RAN.append(('slow_upper', text))
    return text.upper()


@dataclasses.dataclass
class Thinking:
    inner_thought: Annotated[str, ToolParam(description='Why you call the tool')]
    confidence: float | None
    tag: str = 'none'
    forced: Annotated[str | None, ToolParam(required=True, description='Always give it')] = None


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()


def test_schema_gains_fields_with_the_usual_required_rules() -> None:
    (augmented,) = AugmentedToolCallbackProvider([add], argument_type=Thinking).tool_callbacks
    schema = augmented.tool_definition.input_schema
    assert list(schema['properties']) == ['a', 'b', 'inner_thought', 'confidence', 'tag', 'forced']
    assert schema['required'] == ['a', 'b', 'inner_thought', 'forced']
    assert schema['additionalProperties'] is False
    assert schema['properties']['inner_thought'] == {'type': 'string', 'description': 'Why you call the tool'}
    assert schema['properties']['forced']['description'] == 'Always give it'
    assert augmented.tool_definition.name == 'add'
    assert augmented.tool_definition.description == 'Add two numbers.'
    original = MethodToolCallback(add).tool_definition.input_schema
    assert list(original['properties']) == ['a', 'b']  # the tool's own definition is untouched


def test_default_argument_type_is_agent_thinking() -> None:
    (augmented,) = AugmentedToolCallbackProvider(add).tool_callbacks
    prop = augmented.tool_definition.input_schema['properties']['inner_thought']
    assert prop['type'] == 'string' and prop['description'].startswith('Your reasoning')
    assert augmented.tool_definition.input_schema['required'] == ['a', 'b', 'inner_thought']


def test_pydantic_model_fields_and_nested_defs() -> None:
    class Step(pydantic.BaseModel):
        number: int

    class Plan(pydantic.BaseModel):
        goal: str = pydantic.Field(description='What the call achieves')
        steps: list[Step] = []
        note: Annotated[str | None, ToolParam(description='Optional note')] = None

    (augmented,) = AugmentedToolCallbackProvider([add], argument_type=Plan).tool_callbacks
    schema = augmented.tool_definition.input_schema
    assert schema['required'] == ['a', 'b', 'goal']
    assert schema['properties']['goal'] == {'type': 'string', 'description': 'What the call achieves'}
    assert schema['properties']['steps']['items'] == {'$ref': '#/$defs/Step'}
    assert schema['$defs']['Step']['properties']['number']['type'] == 'integer'
    assert schema['properties']['note']['description'] == 'Optional note'


def test_call_strips_validates_and_consumes() -> None:
    events: list[AugmentedArgumentEvent[Thinking]] = []
    (augmented,) = AugmentedToolCallbackProvider([add], argument_type=Thinking, consumer=events.append).tool_callbacks
    raw = '{"a": 2, "inner_thought": "sum needed", "b": "3", "confidence": "0.5", "forced": "yes"}'
    assert augmented.call(raw) == '5'
    assert RAN == [('add', (2, 3))]
    (event,) = events
    assert event.arguments == Thinking('sum needed', 0.5, 'none', 'yes')
    assert event.tool_definition is augmented.tool_definition
    assert event.raw_input == raw
    assert event.tool_call_id is None  # called outside the manager


def test_missing_extra_field_is_an_invalid_arguments_error_and_the_tool_does_not_run() -> None:
    seen: list[object] = []
    (augmented,) = AugmentedToolCallbackProvider([add], consumer=seen.append).tool_callbacks
    with pytest.raises(ToolExecutionError) as info:
        augmented.call('{"a": 1, "b": 2}')
    assert str(info.value) == "Invalid arguments for tool 'add': inner_thought: Field required"
    assert RAN == [] and seen == []


def test_consumer_error_blocks_the_call() -> None:
    def refuse(event: AugmentedArgumentEvent[AgentThinking]) -> None:
        if 'delete' in event.arguments.inner_thought:
            raise PermissionError(f'blocked: {event.arguments.inner_thought}')

    (augmented,) = AugmentedToolCallbackProvider([add], consumer=refuse).tool_callbacks
    with pytest.raises(ToolExecutionError, match='blocked: delete everything') as info:
        augmented.call('{"a": 1, "b": 2, "inner_thought": "delete everything"}')
    assert isinstance(info.value.cause, PermissionError)
    assert RAN == []
    assert augmented.call('{"a": 1, "b": 2, "inner_thought": "fine"}') == '3'


def test_keep_extra_arguments_when_asked() -> None:
    received: list[str] = []

    class Raw:
        tool_definition = ToolDefinition('raw', 'raw input', {'type': 'object', 'properties': {}})
        tool_metadata = ToolMetadata()

        def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
            received.append(tool_input)
            return 'ok'

        async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
            return self.call(tool_input, tool_context)

    (kept,) = AugmentedToolCallbackProvider(Raw(), remove_extra_arguments=False).tool_callbacks
    (stripped,) = AugmentedToolCallbackProvider(Raw()).tool_callbacks
    kept.call('{"inner_thought": "t", "x": 1}')
    stripped.call('{"inner_thought": "t", "x": 1}')
    assert received == ['{"inner_thought": "t", "x": 1}', '{"x":1}']


def test_unparsable_input_goes_to_the_tool_for_its_own_error() -> None:
    (augmented,) = AugmentedToolCallbackProvider([add]).tool_callbacks
    with pytest.raises(ToolExecutionError, match='invalid tool arguments'):
        augmented.call('{"a": 1,')
    with pytest.raises(ValueError, match='cannot be null or empty'):
        augmented.call('  ')


def test_bad_construction() -> None:
    with pytest.raises(TypeError, match='pydantic model or a dataclass'):
        AugmentedToolCallbackProvider([add], argument_type=dict)
    with pytest.raises(TypeError, match='consumer must be callable'):
        AugmentedToolCallbackProvider([add], consumer='print')  # type: ignore[arg-type]

    @dataclasses.dataclass
    class Clash:
        a: str

    with pytest.raises(ValueError, match=r"tool 'add' already has argument\(s\) \['a'\]"):
        AugmentedToolCallbackProvider([add], argument_type=Clash)

    @dataclasses.dataclass
    class Empty:
        pass

    with pytest.raises(ValueError, match='has no fields'):
        AugmentedToolCallbackProvider([add], argument_type=Empty)


def test_async_tool_and_async_consumer() -> None:
    seen: list[str] = []

    async def consumer(event: AugmentedArgumentEvent[AgentThinking]) -> None:
        await asyncio.sleep(0)
        seen.append(event.arguments.inner_thought)

    (augmented,) = AugmentedToolCallbackProvider([slow_upper], consumer=consumer).tool_callbacks
    assert asyncio.run(augmented.acall('{"text": "hi", "inner_thought": "loud"}')) == 'HI'
    assert augmented.call('{"text": "yo", "inner_thought": "sync path"}') == 'YO'
    assert seen == ['loud', 'sync path']
    assert RAN == [('slow_upper', 'hi'), ('slow_upper', 'yo')]


def test_function_tool_callback() -> None:
    class Order(pydantic.BaseModel):
        item: str
        quantity: int

    place = (
        FunctionToolCallback.builder('place_order', lambda o: f'{o.quantity} x {o.item}')
        .description('Place an order')
        .input_type(Order)
        .build()
    )
    thoughts: list[str] = []
    (augmented,) = AugmentedToolCallbackProvider(
        place, consumer=lambda e: thoughts.append(e.arguments.inner_thought)
    ).tool_callbacks
    schema = augmented.tool_definition.input_schema
    assert set(schema['required']) == {'item', 'quantity', 'inner_thought'}
    assert augmented.call('{"item": "tea", "quantity": 2, "inner_thought": "the user is thirsty"}') == '2 x tea'
    assert thoughts == ['the user is thirsty']


# -- through the tool loop ----------------------------------------------------------------------


def loop_script(thought: str) -> list:
    return [
        S.tool_call_response('add', {'a': 1, 'b': 2, 'inner_thought': thought}, 'call-7'),
        S.text_response('done'),
    ]


def run(mode: str, client: ChatClient, spec_tools: list) -> str:
    spec = client.prompt('1+2?').tools(*spec_tools)
    if mode == 'call':
        return spec.call().content()
    if mode == 'acall':
        return asyncio.run(spec.acall()).content()

    async def collect() -> str:
        return ''.join([piece async for piece in spec.stream().content()])

    return asyncio.run(collect())


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream'])
@pytest.mark.parametrize('target', [add, slow_upper], ids=['sync', 'async'])
def test_loop_passes_the_call_id_and_blocks_on_consumer_error(mode: str, target: object) -> None:
    events: list[tuple[str | None, str, str | None]] = []

    def consumer(event: AugmentedArgumentEvent[AgentThinking]) -> None:
        call = current_tool_call()
        events.append((event.tool_call_id, event.arguments.inner_thought, call.name if call else None))
        if event.arguments.inner_thought == 'forbidden':
            raise RuntimeError('not allowed: forbidden intent')

    provider = AugmentedToolCallbackProvider([target], consumer=consumer)
    name = 'add' if target is add else 'slow_upper'
    arguments = {'a': 1, 'b': 2} if target is add else {'text': 'x'}
    for thought, expected in [('ok', '3' if target is add else 'X'), ('forbidden', 'not allowed: forbidden intent')]:
        RAN.clear()
        model = ScriptedChatModel(
            [S.tool_call_response(name, {**arguments, 'inner_thought': thought}, 'call-7'), S.text_response('done')]
        )
        assert run(mode, ChatClient.create(model), [provider]) == 'done'
        assert model.prompts[1].messages[-1].responses[0].response_data == expected
        assert len(RAN) == (1 if thought == 'ok' else 0)
    assert events == [('call-7', 'ok', name), ('call-7', 'forbidden', name)]
    sent = model.prompts[0].options.tool_callbacks[0].tool_definition.input_schema
    assert 'inner_thought' in sent['properties'] and 'inner_thought' in sent['required']


def test_consumer_error_with_always_throw_reaches_the_caller() -> None:
    def refuse(event: object) -> None:
        raise PermissionError('no')

    manager = DefaultToolCallingManager(exception_processor=DefaultToolExecutionExceptionProcessor(always_throw=True))
    from toolweave.advisors import ToolCallingAdvisor

    model = ScriptedChatModel(loop_script('x'))
    client = ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(manager)).build()
    with pytest.raises(ToolExecutionError, match='no'):
        client.prompt('1+2?').tools(AugmentedToolCallbackProvider([add], consumer=refuse)).call()
    assert RAN == []


def test_missing_thought_goes_back_to_the_model_then_it_retries() -> None:
    model = ScriptedChatModel(
        [
            S.tool_call_response('add', {'a': 1, 'b': 2}, 'c1'),
            S.tool_call_response('add', {'a': 1, 'b': 2, 'inner_thought': 'retry'}, 'c2'),
            S.text_response('3'),
        ]
    )
    assert ChatClient.create(model).prompt('1+2?').tools(AugmentedToolCallbackProvider(add)).call().content() == '3'
    first = model.prompts[1].messages[-1].responses[0].response_data
    assert first == "Invalid arguments for tool 'add': inner_thought: Field required"
    assert model.prompts[2].messages[-1].responses[0].response_data == '3'
    assert RAN == [('add', (1, 2))]


def test_wrapper_exposes_delegate_scheduling() -> None:
    (augmented,) = AugmentedToolCallbackProvider([add]).tool_callbacks
    assert isinstance(augmented, AugmentedToolCallback)
    assert augmented.function is MethodToolCallback(add).function
    assert augmented.tool_metadata == MethodToolCallback(add).tool_metadata
    assert orjson.loads(orjson.dumps(augmented.tool_definition.to_openai()))['function']['name'] == 'add'
