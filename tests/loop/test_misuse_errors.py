"""Natural misuses found by a new-user trial get clear, typed errors at the call that is wrong."""

from __future__ import annotations

import math
from typing import Any

import pytest
from toolweave import ChatClient, UserMessage, tool
from toolweave.advisors import ToolCallingAdvisor
from toolweave.chat import ToolCallingChatOptions
from toolweave.memory import MessageWindowChatMemory
from toolweave.providers import ScriptedChatModel
from toolweave.providers._http import Timeouts
from toolweave.tools import ToolCallbacks


@tool
def ping() -> str:
    """Answers pong."""
    return 'pong'


def _spec() -> Any:
    return ChatClient.create(ScriptedChatModel([ScriptedChatModel.text_response('hi')])).prompt('x').tools(ping)


@pytest.mark.parametrize('handler', ['print', 42])
def test_on_event_that_is_not_callable_is_a_type_error(handler: object) -> None:
    with pytest.raises(TypeError, match='on_event must be a callable'):
        _spec().call(on_event=handler)


def test_async_on_event_is_a_type_error_not_a_never_awaited_coroutine() -> None:
    async def handler(event: object) -> None:
        return None

    with pytest.raises(TypeError, match='plain function'):
        _spec().call(on_event=handler)


@pytest.mark.parametrize('messages', [UserMessage('hi'), 'hello', [None], [UserMessage('a'), 'b']])
def test_memory_add_of_something_else_than_messages_is_a_type_error(messages: Any) -> None:
    memory = MessageWindowChatMemory()
    with pytest.raises(TypeError, match='messages'):
        memory.add('c1', messages)
    assert memory.get('c1') == []


@pytest.mark.parametrize(
    ('kwargs', 'error'),
    [
        ({'total': 0}, ValueError),
        ({'total': -1}, ValueError),
        ({'read': -1}, ValueError),
        ({'connect': math.nan}, ValueError),
        ({'write': 'x'}, TypeError),
        ({'pool': True}, TypeError),
    ],
)
def test_timeouts_are_checked_when_built(kwargs: dict[str, Any], error: type[Exception]) -> None:
    name = next(iter(kwargs))
    with pytest.raises(error, match=f'Timeouts.{name}'):
        Timeouts(**kwargs)


@pytest.mark.parametrize(('value', 'error'), [(-5, ValueError), ('x', TypeError), (0, ValueError)])
def test_a_single_timeout_number_is_checked(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match='Timeouts.connect must be a positive number' if error is ValueError else 'got .x.'):
        Timeouts.of(value)


def test_execute_truncated_tool_calls_takes_a_bool_only() -> None:
    with pytest.raises(TypeError, match='execute_truncated_tool_calls'):
        ToolCallingAdvisor(execute_truncated_tool_calls='no')  # type: ignore[arg-type]


@pytest.mark.parametrize('text', [123, b'hi', ['hi']])
def test_user_text_that_is_not_a_str_is_a_type_error(text: Any) -> None:
    client = ChatClient.create(ScriptedChatModel([ScriptedChatModel.text_response('hi')]))
    with pytest.raises(TypeError, match='user text must be a str'):
        client.prompt(text)
    with pytest.raises(TypeError, match='user text must be a str'):
        client.prompt().user(text)


# -- ToolCallingChatOptions checks its tools when built --------------------------------------------


def test_options_reject_a_plain_tool_function_naming_it() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    with pytest.raises(TypeError, match=r"tool_callbacks\[0\] \('get_weather'\) is a function.*ToolCallbacks\.from_"):
        ToolCallingChatOptions(tool_callbacks=[get_weather])  # type: ignore[list-item]


def test_options_keep_a_list_of_callbacks_as_a_tuple_and_names_as_a_frozenset() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    callbacks = list(ToolCallbacks.from_(get_weather))
    options = ToolCallingChatOptions(tool_callbacks=callbacks, tool_names={'other'})  # type: ignore[arg-type]
    assert options.tool_callbacks == tuple(callbacks)
    assert options.tool_names == frozenset({'other'})


@pytest.mark.parametrize('names', ['get_weather', [1]])
def test_options_reject_tool_names_that_are_not_a_set_of_strings(names: object) -> None:
    with pytest.raises(TypeError, match='tool_names must be a set of tool names'):
        ToolCallingChatOptions(tool_names=names)  # type: ignore[arg-type]
