"""What the model sees of tool search: the maxResults argument, and the system-message suffix."""

from __future__ import annotations

from typing import Any

import pytest
from support.tool_search_fixtures import MODES, S, catalog, make_client, names, run, search_payload, tool
from toolweave.advisors import ToolSearchToolCallingAdvisor
from toolweave.advisors.tool_search import DEFAULT_SYSTEM_MESSAGE_SUFFIX
from toolweave.chat import SystemMessage, UserMessage
from toolweave.providers import ScriptedChatModel

SIMILAR = [tool(f'report_{i}', f'report number {i}') for i in range(8)]


def searched(mode: str, arguments: Any, max_results: int = 5) -> list[str]:
    model = ScriptedChatModel([S.tool_call_response('toolSearchTool', arguments, 's1'), S.text_response('ok')])
    run(make_client(model, ToolSearchToolCallingAdvisor(max_results=max_results)), mode, 'x', SIMILAR)
    data = model.prompts[1].messages[-1].responses[0].response_data
    return [t['name'] for t in search_payload(model.prompts[1])['tools']] if data.startswith('{') else [data]


# -- maxResults -----------------------------------------------------------------------------------


def test_the_search_tool_offers_an_optional_integer_max_results_capped_by_the_advisor() -> None:
    model = ScriptedChatModel([S.text_response('ok')])
    run(make_client(model, ToolSearchToolCallingAdvisor(max_results=7)), 'call', 'x', SIMILAR)
    schema = model.prompts[0].options.tool_callbacks[0].tool_definition.input_schema
    assert schema['required'] == ['query']
    assert schema['properties']['maxResults'] == {
        'type': 'integer',
        'minimum': 1,
        'maximum': 7,
        'description': 'Most tools to return (default 7)',
    }


@pytest.mark.parametrize('mode', MODES)
def test_the_models_max_results_is_honoured(mode: str) -> None:
    assert searched(mode, {'query': 'report', 'maxResults': 2}) == ['report_0', 'report_1']
    assert searched(mode, {'query': 'report'}) == [f'report_{i}' for i in range(5)]  # the advisor's max_results


@pytest.mark.parametrize(
    ('max_results', 'count'),
    [('0', 1), ('-3', 1), ('1' + '0' * 30, 5), ('6', 5), ('3.0', 3), ('2e0', 2), ('null', 5)],
)
def test_out_of_range_max_results_are_clamped(max_results: str, count: int) -> None:
    assert len(searched('call', f'{{"query": "report", "maxResults": {max_results}}}')) == count


@pytest.mark.parametrize('max_results', ['3', 2.5, True, [2], {'n': 2}])
def test_a_max_results_that_is_no_whole_number_goes_back_to_the_model(max_results: Any) -> None:
    (text,) = searched('call', {'query': 'report', 'maxResults': max_results})
    assert text == f'maxResults must be a whole number from 1 to 5, got {max_results!r}'


def test_a_huge_max_results_string_is_cut_in_the_error_text() -> None:
    (text,) = searched('call', {'query': 'report', 'maxResults': 'x' * 10_000})
    assert text.startswith('maxResults must be a whole number from 1 to 5') and len(text) == 300


# -- system-message suffix ------------------------------------------------------------------------


def script(search_tool: str = 'toolSearchTool') -> list[Any]:
    return [
        S.tool_call_response(search_tool, {'query': 'report'}, 's1'),
        S.tool_call_response('report_0', {}, 'c1'),
        S.text_response('done'),
    ]


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('history', [True, False])
def test_the_suffix_is_appended_to_the_system_message_once_in_every_round(mode: str, history: bool) -> None:
    model = ScriptedChatModel(script())
    advisor = ToolSearchToolCallingAdvisor(conversation_history_enabled=history)
    client = make_client(model, advisor)
    spec_messages = [SystemMessage('You are terse.'), UserMessage('find a report')]
    run(client, mode, spec_messages, SIMILAR)
    expected = 'You are terse.' + DEFAULT_SYSTEM_MESSAGE_SUFFIX.replace('{search_tool_name}', 'toolSearchTool')
    assert len(model.prompts) == 3
    for prompt in model.prompts:
        systems = [m for m in prompt.messages if isinstance(m, SystemMessage)]
        assert [s.text for s in systems] == [expected]
        assert prompt.messages[0] == systems[0]
    assert 'call `toolSearchTool` with a few keywords' in expected


@pytest.mark.parametrize('mode', MODES)
def test_without_a_system_message_the_suffix_is_sent_as_one(mode: str) -> None:
    model = ScriptedChatModel(script('findTools'))
    advisor = ToolSearchToolCallingAdvisor(
        search_tool_name='findTools', system_message_suffix='\n\nUse {search_tool_name}.'
    )
    run(make_client(model, advisor), mode, 'find a report', SIMILAR)
    assert names(model.prompts[2])[:2] == ['findTools', 'report_0']
    for prompt in model.prompts:
        assert prompt.messages[0] == SystemMessage('Use findTools.')
        assert sum(isinstance(m, SystemMessage) for m in prompt.messages) == 1


@pytest.mark.parametrize('mode', MODES)
def test_no_suffix_with_none_or_without_tools(mode: str) -> None:
    model = ScriptedChatModel(script())
    run(make_client(model, ToolSearchToolCallingAdvisor(system_message_suffix=None)), mode, 'find a report', SIMILAR)
    assert len(model.prompts) == 3
    assert all(not isinstance(m, SystemMessage) for p in model.prompts for m in p.messages)
    plain = ScriptedChatModel([S.text_response('hi')])
    run(make_client(plain, ToolSearchToolCallingAdvisor()), mode, 'hello', [])
    assert plain.prompts[0].messages == (UserMessage('hello'),)


def test_a_system_message_that_already_ends_with_the_suffix_is_left_alone() -> None:
    advisor = ToolSearchToolCallingAdvisor(system_message_suffix='\n\nSearch tools first.')
    model = ScriptedChatModel([S.text_response('ok')])
    run(
        make_client(model, advisor),
        'call',
        [SystemMessage('Be kind.\n\nSearch tools first.\n'), UserMessage('x')],
        SIMILAR,
    )
    assert model.prompts[0].messages[0] == SystemMessage('Be kind.\n\nSearch tools first.\n')


def test_a_custom_suffix_without_leading_whitespace_gets_a_blank_line() -> None:
    advisor = ToolSearchToolCallingAdvisor(system_message_suffix='Search tools first.')
    model = ScriptedChatModel([S.text_response('ok')])
    run(make_client(model, advisor), 'call', [SystemMessage('Be kind.'), UserMessage('x')], SIMILAR)
    assert model.prompts[0].messages[0] == SystemMessage('Be kind.\n\nSearch tools first.')


def test_bad_suffixes() -> None:
    with pytest.raises(ValueError, match='blank; pass None'):
        ToolSearchToolCallingAdvisor(system_message_suffix='  \n')
    with pytest.raises(TypeError, match='str or None, not int'):
        ToolSearchToolCallingAdvisor(system_message_suffix=3)  # type: ignore[arg-type]
    copy = ToolSearchToolCallingAdvisor(system_message_suffix=None).copy()
    assert copy.system_message_suffix is None


def test_the_suffix_does_not_reach_the_conversation_history() -> None:
    model = ScriptedChatModel(script())
    response = (
        make_client(model, ToolSearchToolCallingAdvisor())
        .prompt('find a report')
        .tools(*catalog()[:3], *SIMILAR)
        .call()
    )
    assert response.content() == 'done'
    assert names(model.prompts[2])[:2] == ['toolSearchTool', 'report_0']
    history = model.prompts[2].messages
    assert sum(isinstance(m, SystemMessage) for m in history) == 1  # added to this round's request only
