"""accumulate_from_history: tools named in earlier toolSearchTool results in the prompt's messages stay available."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from support.tool_search_fixtures import MODES, S, catalog, make_client, names, run
from toolweave.advisors import MessageChatMemoryAdvisor, ToolSearchToolCallingAdvisor
from toolweave.chat import AssistantMessage, Prompt, ToolCall, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolweave.providers import ScriptedChatModel


def earlier_turn(result: str, tool_name: str = 'toolSearchTool') -> list[Any]:
    """A finished earlier turn whose search answered ``result`` (as a chat memory would give it back)."""
    return [
        UserMessage('What is the weather in Oslo?'),
        AssistantMessage(None, (ToolCall('h1', 'function', tool_name, '{"query": "weather"}'),)),
        ToolResponseMessage((ToolResponse('h1', tool_name, result),)),
        AssistantMessage('Sunny.'),
        UserMessage('And the air?'),
    ]


def found(*tool_names: str) -> str:
    return orjson.dumps({'tools': [{'name': n, 'description': '...'} for n in tool_names]}).decode()


@pytest.mark.parametrize('mode', MODES)
def test_tools_found_in_history_are_sent_from_the_first_round_and_join_the_session(mode: str) -> None:
    advisor = ToolSearchToolCallingAdvisor()  # a new process: its sessions know nothing yet
    model = ScriptedChatModel([S.tool_call_response('get_air_quality', {'city': 'Oslo'}), S.text_response('Good.')])
    history = earlier_turn(found('get_weather', 'get_air_quality'))
    run(make_client(model, advisor), mode, history, catalog(), chat_memory_conversation_id='u')
    assert names(model.prompts[0]) == ['toolSearchTool', 'get_weather', 'get_air_quality']
    assert names(model.prompts[1]) == names(model.prompts[0])
    assert advisor.sessions.discovered('u') == ('get_weather', 'get_air_quality')


def test_accumulation_is_on_by_default_as_spring() -> None:
    assert ToolSearchToolCallingAdvisor().accumulate_from_history is True
    copy = ToolSearchToolCallingAdvisor(accumulate_from_history=False).copy()
    assert copy.accumulate_from_history is False


@pytest.mark.parametrize('mode', MODES)
def test_without_accumulation_the_history_is_not_read(mode: str) -> None:
    advisor = ToolSearchToolCallingAdvisor(accumulate_from_history=False)
    model = ScriptedChatModel([S.text_response('?')])
    run(make_client(model, advisor), mode, earlier_turn(found('get_weather')), catalog())
    assert names(model.prompts[0]) == ['toolSearchTool']
    assert advisor.sessions.discovered('default') == ()


@pytest.mark.parametrize(
    ('result', 'tool_name', 'offered'),
    [
        ('["send_sms", "get_weather"]', 'toolSearchTool', ['send_sms', 'get_weather']),  # Spring's result form
        (found('get_weather'), 'TOOLSEARCHTOOL', ['get_weather']),  # name compared case-insensitively, as Spring
        (found('no_such_tool', 'get_weather'), 'toolSearchTool', ['get_weather']),  # not a tool of this request
        (found('get_weather'), 'get_weather', []),  # another tool's result names nothing
        ('toolSearchTool needs {"query": "<keywords>"}', 'toolSearchTool', []),  # an error text
        ('{"tools": [3, {"name": 4}, {"name": "send_sms"}]}', 'toolSearchTool', ['send_sms']),
        ('{"tools": "get_weather"}', 'toolSearchTool', []),
    ],
)
def test_which_history_results_name_tools(result: str, tool_name: str, offered: list[str]) -> None:
    model = ScriptedChatModel([S.text_response('?')])
    run(make_client(model, ToolSearchToolCallingAdvisor()), 'call', earlier_turn(result, tool_name), catalog())
    assert names(model.prompts[0]) == ['toolSearchTool', *offered]


@pytest.mark.parametrize('accumulate', [True, False])
def test_finds_of_earlier_rounds_survive_the_eviction_of_their_session_only_with_accumulation(accumulate: bool) -> None:
    advisor = ToolSearchToolCallingAdvisor(max_sessions=1, accumulate_from_history=accumulate)
    other = make_client(ScriptedChatModel([S.text_response('bob')]), advisor)

    def evict_then_text(prompt: Prompt) -> Any:
        other.prompt('x').tools(*catalog()[:3]).advisors(chat_memory_conversation_id='bob').call()
        return S.tool_call_response('send_sms', {'phone': '1', 'text': 'hi'}, 'c2')

    model = ScriptedChatModel(
        [S.tool_call_response('toolSearchTool', {'query': 'weather'}, 's1'), evict_then_text, S.text_response('ok')]
    )
    make_client(model, advisor).prompt('x').tools(*catalog()).advisors(chat_memory_conversation_id='alice').call()
    assert names(model.prompts[1])[:2] == ['toolSearchTool', 'get_weather']
    expected = (
        ['toolSearchTool', 'send_sms', *names(model.prompts[1])[1:]] if accumulate else ['toolSearchTool', 'send_sms']
    )
    assert names(model.prompts[2]) == expected


@pytest.mark.parametrize('mode', MODES)
def test_search_results_kept_by_a_chat_memory_before_the_loop_are_read(mode: str) -> None:
    memory = MessageWindowChatMemory(InMemoryChatMemoryRepository())  # e.g. written by another worker
    memory.add('u', earlier_turn(found('get_air_quality'))[:-1])
    model = ScriptedChatModel([S.text_response('Good.')])
    client = make_client(model, ToolSearchToolCallingAdvisor())
    run(client, mode, 'And the air?', catalog(), MessageChatMemoryAdvisor(memory), chat_memory_conversation_id='u')
    assert any(isinstance(m, ToolResponseMessage) for m in model.prompts[0].messages)  # the history reached the model
    assert names(model.prompts[0]) == ['toolSearchTool', 'get_air_quality']
