"""Tool errors as Spring AI 2.0.1's ``DefaultToolCallingManager`` / ``DefaultToolExecutionExceptionProcessor``
treat them, plus the unknown-tool option (beyond Spring).

Loop-level rules run through ``call()``, ``acall()`` and ``stream()`` (``run_loop``); the manager-level
ones through its blocking and async paths.
"""

import asyncio
import logging

import pytest
from pydantic import BaseModel
from support.weather import get_weather
from toolweave import ChatClient, ToolCallingAdvisor, UnknownToolBehavior, tool
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Prompt,
    ToolCall,
    ToolCallingChatOptions,
    UserMessage,
)
from toolweave.providers import ScriptedChatModel
from toolweave.tools import (
    AugmentedToolCallback,
    DefaultToolCallingManager,
    DefaultToolExecutionExceptionProcessor,
    FunctionToolCallback,
    MethodToolCallback,
    ToolCallLimitExceededError,
    ToolCallLimits,
    ToolDefinition,
    ToolExecutionError,
)

S = ScriptedChatModel
OTHER = ToolDefinition('policy', 'a definition the tool chose itself')


def raises_own_error() -> str:
    """Fails with a ToolExecutionError of its own."""
    raise ToolExecutionError(OTHER, PermissionError('not allowed here'))


async def raises_own_error_async() -> str:
    """Async form."""
    raise ToolExecutionError(OTHER, PermissionError('not allowed here'))


class Empty(BaseModel):
    pass


def callbacks_raising_their_own_error():
    """One tool of each kind whose code raises a ``ToolExecutionError`` itself."""

    def consumer(event) -> None:
        raise ToolExecutionError(OTHER, PermissionError('not allowed here'))

    @tool
    def plain() -> str:
        return 'ran'

    return {
        'method': MethodToolCallback(raises_own_error, name='t'),
        'method_async': MethodToolCallback(raises_own_error_async, name='t'),
        'function': FunctionToolCallback.builder('t', lambda _: raises_own_error()).input_type(Empty).build(),
        'function_async': FunctionToolCallback.builder('t', raises_own_error_async).build(),
        'augmented_consumer': AugmentedToolCallback(MethodToolCallback(plain, name='t'), consumer=consumer),
    }


@pytest.mark.parametrize('kind', list(callbacks_raising_their_own_error()))
@pytest.mark.parametrize('path', ['call', 'acall'])
def test_tool_execution_error_raised_inside_a_tool_is_not_wrapped_again(kind, path):
    callback = callbacks_raising_their_own_error()[kind]
    arguments = '{"inner_thought": "why"}' if kind == 'augmented_consumer' else '{}'
    with pytest.raises(ToolExecutionError) as info:
        if path == 'call':
            callback.call(arguments)
        else:
            asyncio.run(callback.acall(arguments))
    assert isinstance(info.value.cause, PermissionError)  # not a ToolExecutionError around a ToolExecutionError
    assert info.value.tool_definition is OTHER
    assert str(info.value) == 'not allowed here'


@pytest.mark.parametrize('path', ['blocking', 'async'])
def test_rethrow_list_sees_the_real_cause_of_a_tools_own_error(path):
    manager = DefaultToolCallingManager(
        exception_processor=DefaultToolExecutionExceptionProcessor(rethrow=[PermissionError])
    )
    options = ToolCallingChatOptions(tool_callbacks=(MethodToolCallback(raises_own_error, name='t'),))
    prompt = Prompt((UserMessage('go'),), options)
    chat = ChatResponse((Generation(AssistantMessage(None, (ToolCall('c1', 'function', 't', '{}'),))),))
    with pytest.raises(PermissionError, match='not allowed here'):
        if path == 'blocking':
            manager.execute_tool_calls(prompt, chat)
        else:
            asyncio.run(manager.aexecute_tool_calls(prompt, chat))


def test_tools_own_error_reaches_the_model_as_its_message(run_loop):
    model = ScriptedChatModel([S.tool_call_response('t', {}, 'c1'), S.text_response('sorry')])
    run_loop(ChatClient.create(model).prompt('go').tools(MethodToolCallback(raises_own_error, name='t')))
    (response,) = model.prompts[1].messages[-1].responses
    assert (response.response_data, response.is_error, response.error_type) == (
        'not allowed here',
        True,
        'PermissionError',
    )


@tool
def blank_failure() -> str:
    raise ValueError('  \n\t ')


def test_whitespace_only_message_gets_the_fallback_text(run_loop):
    model = ScriptedChatModel([S.tool_call_response('blank_failure', {}, 'c1'), S.text_response('ok')])
    run_loop(ChatClient.create(model).prompt('go').tools(blank_failure))
    (response,) = model.prompts[1].messages[-1].responses
    assert response.response_data == 'Exception occurred in tool: blank_failure (ValueError)'


def test_processor_fallback_for_empty_and_blank_messages():
    processor = DefaultToolExecutionExceptionProcessor()
    definition = ToolDefinition('toolName', 'd')
    assert processor.process(ToolExecutionError(definition, RuntimeError(' '))) == (
        'Exception occurred in tool: toolName (RuntimeError)'
    )
    assert processor.process(ToolExecutionError(definition, RuntimeError())) == (
        'Exception occurred in tool: toolName (RuntimeError)'
    )
    assert processor.process(ToolExecutionError(definition, RuntimeError(' kept as is '))) == ' kept as is '


# --- unknown tool names --------------------------------------------------------------------------


@tool
def get_time(city: str) -> str:
    """Time in a city."""
    return f'noon in {city}'


def unknown_tool_client(model: ScriptedChatModel, **manager_options) -> ChatClient:
    manager = DefaultToolCallingManager(
        unknown_tool_behavior=UnknownToolBehavior.RETURN_ERROR_RESPONSE, **manager_options
    )
    return ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(manager)).build()


def test_unknown_tool_raises_lookup_error_by_default(run_loop, caplog):
    model = ScriptedChatModel([S.tool_call_response('getWeather', {'city': 'Oslo'}), S.text_response('x')])
    with (
        caplog.at_level(logging.WARNING, logger='toolweave.tools'),
        pytest.raises(LookupError, match='No ToolCallback found for tool name: getWeather'),
    ):
        run_loop(ChatClient.create(model).prompt('go').tools(get_weather, get_time))
    assert "LLM may have adapted the tool name 'getWeather'" in caplog.text


def test_unknown_tool_option_answers_with_the_available_tools_and_goes_on(run_loop, caplog):
    model = ScriptedChatModel(
        [
            S.tool_call_response('getWeather', {'city': 'Oslo'}, 'bad', more=[('get_time', {'city': 'Oslo'})]),
            S.tool_call_response('get_weather', {'city': 'Oslo'}, 'good'),
            S.text_response('Sunny at noon.'),
        ]
    )
    with caplog.at_level(logging.WARNING, logger='toolweave.tools'):
        result = run_loop(unknown_tool_client(model).prompt('go').tools(get_weather, get_time))
    assert result.text == 'Sunny at noon.'
    unknown, other = model.prompts[1].messages[-1].responses
    assert unknown.id == 'bad' and unknown.name == 'getWeather'
    assert unknown.response_data == (
        "Unknown tool 'getWeather': no tool with this name exists. Available tools: 'get_weather', 'get_time'."
    )
    assert (unknown.is_error, unknown.error_type) == (True, 'LookupError')
    assert (other.response_data, other.is_error) == ('noon in Oslo', False)  # the rest of the batch ran
    assert model.prompts[2].messages[-1].responses[0].response_data == '18 C and sunny in Oslo'
    assert "LLM may have adapted the tool name 'getWeather'" in caplog.text


def test_unknown_tool_calls_are_bounded_by_the_limits(run_loop):
    model = ScriptedChatModel([S.tool_call_response('nope', {}, f'c{i}') for i in range(5)])
    client = unknown_tool_client(model, limits=ToolCallLimits().max_calls_per_tool(2))
    generation = run_loop(client.prompt('go').tools(get_weather)).response.result
    assert generation.finish_reason == ToolCallLimitExceededError.FINISH_REASON
    assert generation.output.content.startswith("Tool call limit (2) exceeded for tool 'nope'.")
    assert len(model.prompts) == 3


@pytest.mark.parametrize('path', ['blocking', 'async'])
def test_unknown_tool_answer_without_request_tools_says_none(path):
    manager = DefaultToolCallingManager(unknown_tool_behavior=UnknownToolBehavior.RETURN_ERROR_RESPONSE)
    prompt = Prompt((UserMessage('go'),), ToolCallingChatOptions())
    chat = ChatResponse((Generation(AssistantMessage(None, (ToolCall('c1', 'function', 'x\ud800', '{}'),))),))
    if path == 'blocking':
        result = manager.execute_tool_calls(prompt, chat)
    else:
        result = asyncio.run(manager.aexecute_tool_calls(prompt, chat))
    (response,) = result.conversation_history[-1].responses
    assert response.response_data == "Unknown tool 'x\ufffd': no tool with this name exists. Available tools: none."
    assert result.return_direct is False
