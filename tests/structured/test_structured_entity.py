"""entity(): every kind of output type, every strategy, tools first, the retry loop, call().entity, streaming partials.

Runs against ``ScriptedChatModel`` through ``entity`` (blocking), ``aentity`` (async) and the last value of
``stream_entity`` (streaming), so the three paths are held to the same results.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from typing import Any

import pytest
from pydantic import BaseModel
from toolweave import ChatClient, tool
from toolweave.chat import AssistantMessage, ChatResponse, Generation, ToolCall, ToolResponseMessage, Usage, UserMessage
from toolweave.providers import (
    AnthropicChatModel,
    GeminiChatModel,
    OllamaChatModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedChatModel,
)
from toolweave.structured import (
    OutputType,
    OutputValidationError,
    StructuredOutputValidationError,
    default_strategy,
)
from typing_extensions import TypedDict

MODES = ['call', 'acall', 'stream']


class Invoice(BaseModel):
    number: str
    total: float
    lines: list[str]


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


class Color(enum.Enum):
    RED = 'red'
    BLUE = 'blue'


def answer(text: str, tokens: int = 10) -> ChatResponse:
    return ChatResponse((Generation(AssistantMessage(text), 'stop'),), usage=Usage(tokens, 1, tokens + 1))


def calls(*items: tuple[str, str], tokens: int = 10) -> ChatResponse:
    tool_calls = tuple(ToolCall(f'call_{i}', 'function', name, args) for i, (name, args) in enumerate(items))
    return ChatResponse(
        (Generation(AssistantMessage(None, tool_calls), 'tool_calls'),), usage=Usage(tokens, 1, tokens + 1)
    )


def run(model: Any, output_type: Any, mode: str, **kwargs: Any) -> Any:
    spec = ChatClient.create(model).prompt('Extract it.')
    if mode == 'call':
        return spec.entity(output_type, **kwargs)
    if mode == 'acall':
        return asyncio.run(spec.aentity(output_type, **kwargs))
    return list(spec.stream_entity(output_type, **kwargs))[-1]


TYPES = [
    (Invoice, '{"number": "A-7", "total": 12.5, "lines": ["pen"]}', Invoice(number='A-7', total=12.5, lines=['pen'])),
    (Point, '{"x": 1, "y": 2}', Point(1, 2)),
    (Movie, '{"title": "Heat", "year": 1995}', {'title': 'Heat', 'year': 1995}),
    (list[Point], '{"result": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}', [Point(1, 2), Point(3, 4)]),
    (list[int], '[1, 2, 3]', [1, 2, 3]),  # a bare array for a wrapped type is accepted
    (Color, '{"result": "blue"}', Color.BLUE),
    (int, '{"result": 42}', 42),
    (str, '{"result": "hi"}', 'hi'),
    (bool, "```json\n{'result': True}\n```", True),  # lenient: fences, single quotes, Python literals
    (dict[str, int], '{"result": {"a": 1}}', {'a': 1}),
]


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize(('output_type', 'text', 'expected'), TYPES, ids=[str(t[0]) for t in TYPES])
def test_every_output_type(output_type: Any, text: str, expected: Any, mode: str) -> None:
    model = ScriptedChatModel([answer(text)])
    assert run(model, output_type, mode) == expected
    assert len(model.prompts) == 1


def test_schemas_are_objects_at_the_root_and_wrapped_when_needed() -> None:
    assert OutputType.of(Invoice).wrapped is False
    assert OutputType.of(Invoice).schema['required'] == ['number', 'total', 'lines']
    wrapped = OutputType.of(list[Point])
    assert wrapped.wrapped is True
    assert wrapped.schema['required'] == ['result'] and '$defs' in wrapped.schema
    assert wrapped.schema['properties']['result']['items'] == {'$ref': '#/$defs/Point'}

    class Opaque:
        pass

    with pytest.raises(TypeError, match='structured output type'):
        OutputType.of(Opaque)


@pytest.mark.parametrize('mode', MODES)
def test_prompted_strategy_appends_spring_format_instructions(mode: str) -> None:
    model = ScriptedChatModel([answer('{"x": 1, "y": 2}')])
    run(model, Point, mode, strategy='prompted')
    text = model.prompts[0].messages[-1].text
    assert text.startswith('Extract it.\n\nYour response should be in JSON format.')
    assert '"required":["x","y"]' in text


@pytest.mark.parametrize('mode', MODES)
def test_native_strategy_sets_output_schema(mode: str) -> None:
    model = ScriptedChatModel([answer('{"x": 1, "y": 2}')])
    assert run(model, Point, mode, strategy='native') == Point(1, 2)
    (prompt,) = model.prompts
    assert prompt.options.output_schema.name == 'Point'
    assert prompt.options.output_schema.schema == OutputType.of(Point).schema
    assert prompt.messages[-1].text == 'Extract it.'  # no instructions in native mode


@tool
def lookup(number: str) -> str:
    """Look an invoice up."""
    return f'invoice {number}: pen 12.5'


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('strategy', ['native', 'prompted', 'tool'])
def test_tools_first_structured_answer_last(strategy: str, mode: str) -> None:
    final = '{"number": "A-7", "total": 12.5, "lines": ["pen"]}'
    last = calls(('final_result', final)) if strategy == 'tool' else answer(final)
    model = ScriptedChatModel([calls(('lookup', '{"number": "A-7"}')), last])
    client = ChatClient.builder(model).default_tools(lookup).build()
    spec = client.prompt('Invoice A-7?')
    if mode == 'call':
        value = spec.entity(Invoice, strategy=strategy)
    elif mode == 'acall':
        value = asyncio.run(spec.aentity(Invoice, strategy=strategy))
    else:
        value = list(spec.stream_entity(Invoice, strategy=strategy))[-1]
    assert value == Invoice(number='A-7', total=12.5, lines=['pen'])
    second = model.prompts[1]
    assert isinstance(second.messages[-1], ToolResponseMessage)
    assert second.messages[-1].responses[0].response_data == 'invoice A-7: pen 12.5'
    names = [c.tool_definition.name for c in second.options.tool_callbacks]
    assert names == (['lookup', 'final_result'] if strategy == 'tool' else ['lookup'])
    if strategy == 'tool':
        assert second.options.tool_choice == 'required'


@pytest.mark.parametrize('mode', MODES)
def test_retry_loop_sends_errors_back_once_and_sums_usage(mode: str) -> None:
    model = ScriptedChatModel(
        [answer('{"number": "A-7"}', 10), answer('{"number": "A-7", "total": 1, "lines": []}', 20)]
    )
    spec = ChatClient.create(model).prompt('Extract it.')
    if mode == 'call':
        result = spec.response_entity(Invoice)
    elif mode == 'acall':
        result = asyncio.run(spec.aresponse_entity(Invoice))
    else:
        assert list(spec.stream_entity(Invoice))[-1] == Invoice(number='A-7', total=1, lines=[])
        return _check_retry_prompt(model)
    assert result.entity == Invoice(number='A-7', total=1, lines=[])
    assert result.chat_response.usage.prompt_tokens == 30  # both attempts
    assert result.chat_response.usage.total_tokens == 32
    _check_retry_prompt(model)


def _check_retry_prompt(model: ScriptedChatModel) -> None:
    assert len(model.prompts) == 2
    *_, wrong, feedback = model.prompts[1].messages
    assert wrong == AssistantMessage('{"number": "A-7"}')
    assert isinstance(feedback, UserMessage)
    assert '- total: Field required' in feedback.text and '- lines: Field required' in feedback.text


@pytest.mark.parametrize('mode', MODES)
def test_exhausted_budget_is_a_typed_error_with_last_answer_errors_and_usage(mode: str) -> None:
    model = ScriptedChatModel([answer('nope', 10), answer('{"x": 1}', 10), answer('{"x": "a", "y": 2}', 10)])
    with pytest.raises(StructuredOutputValidationError) as info:
        run(model, Point, mode)
    error = info.value
    assert error.attempts == 3 and len(model.prompts) == 3  # default budget: 2 re-asks
    assert error.raw == '{"x": "a", "y": 2}'
    assert error.errors == ['x: Input should be a valid integer, unable to parse string as an integer']
    assert error.usage is not None and error.usage.prompt_tokens == 30


@pytest.mark.parametrize('mode', MODES)
def test_budget_zero_validates_once(mode: str) -> None:
    model = ScriptedChatModel([answer('{"x": 1}')])
    with pytest.raises(StructuredOutputValidationError) as info:
        run(model, Point, mode, max_retries=0)
    assert info.value.attempts == 1 and info.value.errors == ['y: Field required']
    with pytest.raises(ValueError, match='max_retries'):
        run(ScriptedChatModel([]), Point, mode, max_retries=-1)


@pytest.mark.parametrize('mode', MODES)
def test_output_tool_retry_answers_the_call_with_its_errors(mode: str) -> None:
    model = ScriptedChatModel([calls(('final_result', '{"x": 1}')), calls(('final_result', '{"x": 1, "y": 2}'))])
    assert run(model, Point, mode, strategy='tool') == Point(1, 2)
    *_, asked, result = model.prompts[1].messages
    assert asked.tool_calls[0].name == 'final_result'
    (response,) = result.responses
    assert response.is_error and response.id == 'call_0' and '- y: Field required' in response.response_data


def test_call_entity_uses_a_valid_answer_as_is_and_restates_another() -> None:
    model = ScriptedChatModel([answer('{"x": 1, "y": 2}')])
    assert ChatClient.create(model).prompt('p').call().entity(Point) == Point(1, 2)
    assert len(model.prompts) == 1
    model = ScriptedChatModel([answer('It is at one, two.'), answer('{"x": 1, "y": 2}')])
    response = ChatClient.builder(model).default_tools(lookup).build().prompt('Where?').call()
    assert response.entity(Point, strategy='native') == Point(1, 2)
    restate = model.prompts[1]
    assert [type(m).__name__ for m in restate.messages] == ['UserMessage', 'AssistantMessage', 'UserMessage']
    assert restate.messages[1].text == 'It is at one, two.'
    assert restate.options.tool_callbacks == ()  # the tools ran already
    model = ScriptedChatModel([answer('It is at one, two.'), answer('{"x": 1, "y": 2}')])
    response = asyncio.run(ChatClient.create(model).prompt('Where?').acall())
    assert asyncio.run(response.aentity(Point)) == Point(1, 2)


def test_validate_reports_errors() -> None:
    output = OutputType.of(Point)
    with pytest.raises(OutputValidationError) as info:
        output.validate('no json here')
    assert info.value.errors[0] == "not JSON at line 1 column 1: expected a value near 'no json here'"


def test_default_strategy_per_provider() -> None:
    assert default_strategy(OpenAIChatModel(api_key='k')) == 'native'
    assert default_strategy(OpenAIResponsesModel(api_key='k')) == 'native'
    assert default_strategy(GeminiChatModel(api_key='k')) == 'native'
    assert default_strategy(OllamaChatModel()) == 'native'
    assert default_strategy(AnthropicChatModel(api_key='k')) == 'tool'
    assert default_strategy(ScriptedChatModel([])) == 'prompted'

    class Declared(ScriptedChatModel):
        structured_output_strategy = 'tool'

    assert default_strategy(Declared([])) == 'tool'


def test_unknown_strategy_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='strategy must be'):
        ChatClient.create(ScriptedChatModel([])).prompt('p').entity(Point, strategy='json')  # type: ignore[arg-type]
