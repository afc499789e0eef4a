"""Natural misuses found by a new-user trial get clear, typed errors at the call that is wrong."""

from __future__ import annotations

import math
from typing import Any

import pytest
from toolweave import ChatClient, UserMessage, tool
from toolweave.advisors import ToolCallingAdvisor
from toolweave.memory import MessageWindowChatMemory
from toolweave.providers import ScriptedChatModel
from toolweave.providers._http import Timeouts


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
    with pytest.raises(error):
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
