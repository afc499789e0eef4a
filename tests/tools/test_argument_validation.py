"""Argument validation of MethodToolCallback (one-step validate_json, precise errors) and the retry budget."""

import dataclasses
import datetime
import enum
import json
from typing import Any, Optional

import pydantic
import pytest
from support.schema_functions import Node, Passenger, book_flight, walk_tree
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.exceptions import InvalidToolArgumentsError, ToolArgumentsError, ToolRetryBudgetExceededError
from toolweave.tools import (
    DefaultToolCallingManager,
    FunctionToolCallback,
    MethodToolCallback,
    ToolExecutionError,
    tool,
)


class Color(enum.Enum):
    RED = 'red'
    BLUE = 'blue'


def test_one_step_coercion_builds_typed_values():
    seen = {}

    def f(n: int, day: datetime.date, color: Color, p: Passenger, tags: set[str], note: Optional[str] = None) -> str:
        seen.update(n=n, day=day, color=color, p=p, tags=tags, note=note)
        return 'ok'

    cb = MethodToolCallback(f)
    text = (
        '{"n": "3", "day": "2024-05-01", "color": "blue", "tags": ["a", "a"], '
        '"p": {"name": "Ann", "age": 30, "address": {"street": "Main", "city": "X", "zip_code": null}}}'
    )
    assert cb.call(text) == 'ok'
    assert seen['n'] == 3 and seen['day'] == datetime.date(2024, 5, 1) and seen['color'] is Color.BLUE
    assert seen['tags'] == {'a'} and seen['note'] is None
    assert isinstance(seen['p'], Passenger) and seen['p'].address.city == 'X'


def test_missing_nullable_nested_field_is_filled_with_none():
    # Address.zip_code is Optional without default: not required in the schema (Spring's rule) ...
    got = {}

    def f(p: Passenger) -> str:
        got['p'] = p
        return 'ok'

    cb = MethodToolCallback(f)
    assert 'zip_code' not in cb.tool_definition.input_schema['$defs']['Address']['required']
    # ... so leaving it out is valid, and it arrives as None
    assert cb.call('{"p": {"name": "A", "age": 1, "address": {"street": "s", "city": "c"}}}') == 'ok'
    assert got['p'].address.zip_code is None
    # a missing non-nullable field still fails, with its path
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"p": {"name": "A", "age": 1, "address": {"city": "c"}}}')
    assert 'p.address.street: Field required' in str(info.value)


def test_dataclass_nullable_field_filled():
    @dataclasses.dataclass
    class Pt:
        x: int
        label: Optional[str]

    got = {}

    def f(p: Pt) -> str:
        got['p'] = p
        return 'ok'

    cb = MethodToolCallback(f)
    assert cb.tool_definition.input_schema['properties']['p']['required'] == ['x']
    assert cb.call('{"p": {"x": "2"}}') == 'ok'
    assert got['p'] == Pt(2, None)


def test_every_failing_field_is_listed():
    cb = MethodToolCallback(book_flight)
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"passenger": {"name": 1, "age": -1, "address": {}}, "departure": "soon", "extra": 1}')
    cause = info.value.cause
    assert isinstance(cause, InvalidToolArgumentsError) and cause.tool_name == 'book_flight'
    problems = cause.problems
    assert problems[0] == "unexpected argument 'extra'"
    assert 'passenger.name: Input should be a valid string' in problems
    assert 'passenger.age: Input should be greater than or equal to 0' in problems
    assert 'passenger.address.street: Field required' in problems
    assert any(p.startswith('departure: Input should be a valid datetime') for p in problems)
    assert 'companions: missing required argument' in problems
    assert str(info.value) == cause.message == "Invalid arguments for tool 'book_flight': " + '; '.join(problems)


def test_invalid_json_keeps_position_and_prefix():
    cb = MethodToolCallback(walk_tree)
    with pytest.raises(ToolExecutionError) as info:
        cb.call('{"root": {"value": 1,}')
    assert isinstance(info.value.cause, ToolArgumentsError)
    assert str(info.value).startswith("Invalid arguments for tool 'walk_tree': invalid tool arguments at line 1")


def test_recursive_model_arguments():
    got = {}

    def f(root: Node) -> int:
        got['root'] = root
        return 0

    MethodToolCallback(f).call('{"root": {"value": 1, "children": [{"value": 2, "children": [{"value": "3"}]}]}}')
    assert got['root'].children[0].children[0].value == 3


def test_extra_arguments_allowed_with_option():
    from toolweave.tools.schema import SchemaOption

    def f(a: int) -> int:
        return a

    cb = MethodToolCallback(f, schema_options=[SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT])
    assert 'additionalProperties' not in cb.tool_definition.input_schema
    assert cb.call('{"a": 1, "zzz": 2}') == '1'


class Lax(pydantic.BaseModel):
    x: int


class Strict(pydantic.BaseModel, extra='forbid'):
    x: int


def take_lax(a: Lax) -> str:
    return repr(a)


def take_strict(a: Strict) -> str:
    return repr(a)


@pytest.mark.parametrize(
    ('callback', 'text', 'expected'),
    [
        # the type decides, whole argument object (input_type) or inside a parameter
        (FunctionToolCallback.builder('take_lax', take_lax).build(), '{"x": 1, "zz": 2}', 'Lax(x=1)'),
        (MethodToolCallback(take_lax), '{"a": {"x": 1, "zz": 2}}', 'Lax(x=1)'),
        (
            FunctionToolCallback.builder('take_strict', take_strict).build(),
            '{"x": 1, "zz": 2}',
            "Invalid arguments for tool 'take_strict': zz: Extra inputs are not permitted",
        ),
        (
            MethodToolCallback(take_strict),
            '{"a": {"x": 1, "zz": 2}}',
            "Invalid arguments for tool 'take_strict': a.zz: Extra inputs are not permitted",
        ),
        # an argument the function does not declare is always named
        (
            MethodToolCallback(take_lax),
            '{"a": {"x": 1}, "zz": 2}',
            "Invalid arguments for tool 'take_lax': unexpected argument 'zz'",
        ),
    ],
)
def test_an_undeclared_key_is_handled_as_its_type_says(callback: Any, text: str, expected: str) -> None:
    """The README's rule: the advertised schema forbids extra keys everywhere; binding follows the types."""
    assert '"additionalProperties": false' in json.dumps(callback.tool_definition.input_schema)
    try:
        got = callback.call(text)
    except ToolExecutionError as exc:
        got = str(exc)
    assert got == expected


# --- retry budget ---------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    return a + b


@tool(max_retries=2)
def patient_add(a: int, b: int) -> int:
    return a + b


def _prompt(*tools: object, history: tuple = ()) -> Prompt:
    callbacks = tuple(MethodToolCallback(t) for t in tools)  # type: ignore[arg-type]
    return Prompt((SystemMessage('sys'), UserMessage('hi'), *history), ToolCallingChatOptions(tool_callbacks=callbacks))


def _response(*calls: ToolCall) -> ChatResponse:
    return ChatResponse((Generation(AssistantMessage(None, calls), 'tool_calls'),))


def _invalid(name: str, n: int) -> tuple:
    return (
        AssistantMessage(None, (ToolCall(f'c{n}', 'function', name, '{"a": "x"}'),)),
        ToolResponseMessage((ToolResponse(f'c{n}', name, f"Invalid arguments for tool '{name}': a: bad"),)),
    )


def test_first_invalid_call_goes_back_to_the_model():
    result = DefaultToolCallingManager().execute_tool_calls(
        _prompt(add), _response(ToolCall('c1', 'function', 'add', '{"a": "x", "b": 1}'))
    )
    text = result.conversation_history[-1].responses[0].response_data
    assert text.startswith("Invalid arguments for tool 'add': a: Input should be a valid integer")


def test_budget_exhausted_ends_the_run():
    manager = DefaultToolCallingManager()
    with pytest.raises(ToolRetryBudgetExceededError) as info:
        manager.execute_tool_calls(
            _prompt(add, history=_invalid('add', 1)), _response(ToolCall('c2', 'function', 'add', '{"a": "y"}'))
        )
    assert info.value.tool_name == 'add' and info.value.max_retries == 1
    assert str(info.value).startswith(
        "The model sent invalid arguments to tool 'add' 2 times in this turn (max_retries=1); giving up. "
        "Last error: Invalid arguments for tool 'add': a: Input should be a valid integer"
    )
    # a valid call after an invalid one is fine, and a new turn starts a new budget
    ok = manager.execute_tool_calls(
        _prompt(add, history=_invalid('add', 1)), _response(ToolCall('c2', 'function', 'add', '{"a": 1, "b": 2}'))
    )
    assert ok.conversation_history[-1].responses[0].response_data == '3'
    new_turn = (*_invalid('add', 1), UserMessage('again'))
    again = manager.execute_tool_calls(
        _prompt(add, history=new_turn), _response(ToolCall('c2', 'function', 'add', '{"a": "z"}'))
    )
    assert again.conversation_history[-1].responses[0].response_data.startswith('Invalid arguments')


def test_budget_is_per_tool_and_configurable():
    history = (*_invalid('patient_add', 1), *_invalid('add', 2))
    manager = DefaultToolCallingManager()
    result = manager.execute_tool_calls(
        _prompt(add, patient_add, history=history),
        _response(ToolCall('c3', 'function', 'patient_add', '{"a": "x"}')),
    )
    assert result.conversation_history[-1].responses[0].response_data.startswith('Invalid arguments')
    with pytest.raises(ToolRetryBudgetExceededError, match=r"'patient_add' 3 times in this turn \(max_retries=2\)"):
        manager.execute_tool_calls(
            _prompt(add, patient_add, history=(*history, *_invalid('patient_add', 3))),
            _response(ToolCall('c4', 'function', 'patient_add', '{"a": "x"}')),
        )


def test_budget_counts_calls_in_the_same_batch():
    with pytest.raises(ToolRetryBudgetExceededError, match=r"'add' 2 times in this turn \(max_retries=1\)"):
        DefaultToolCallingManager().execute_tool_calls(
            _prompt(add),
            _response(ToolCall('c1', 'function', 'add', '{"a": "x"}'), ToolCall('c2', 'function', 'add', '[')),
        )


def test_tool_failures_do_not_count():
    @tool
    def boom() -> str:
        raise ValueError('Invalid arguments? no, a tool failure')

    history = (*_invalid('boom', 1),)
    result = DefaultToolCallingManager().execute_tool_calls(
        _prompt(boom, history=history), _response(ToolCall('c2', 'function', 'boom', '{}'))
    )
    assert result.conversation_history[-1].responses[0].response_data == 'Invalid arguments? no, a tool failure'


def test_max_retries_validation():
    with pytest.raises(ValueError, match='max_retries must be >= 0'):
        tool(max_retries=-1)
    assert MethodToolCallback(add, max_retries=0).tool_metadata.max_retries == 0


def test_unsupported_type_fails_at_decoration_time():
    class Opaque:
        pass

    with pytest.raises(TypeError, match=r"parameter 'thing'.*Opaque"):

        @tool
        def f(thing: Opaque) -> None: ...


def test_pydantic_validation_error_is_not_leaked():
    with pytest.raises(ToolExecutionError) as info:
        MethodToolCallback(add).call('{"a": 1, "b": [1]}')
    assert not isinstance(info.value.cause, pydantic.ValidationError)
