"""ToolSearchToolCallingAdvisor: only the search tool + discovered tools are sent, in every path."""

from __future__ import annotations

import threading

import orjson
import pytest
from support.tool_search_fixtures import MODES, CatalogTool, catalog, make_client, names, run
from toolweave.advisors import ToolCallingAdvisor, ToolSearchSessions, ToolSearchToolCallingAdvisor
from toolweave.advisors.tool_search import definition_bytes
from toolweave.chat import ToolResponseMessage
from toolweave.providers import ScriptedChatModel
from toolweave.search import LexicalToolIndex, RegexToolIndex
from toolweave.tools import ToolCallback, ToolDefinition

S = ScriptedChatModel


def search_then_call_script() -> list:
    return [
        S.tool_call_response('toolSearchTool', {'query': '北京天气预报'}, 's1', usage=S.usage(50, 5)),
        S.tool_call_response('get_weather', {'city': '北京'}, 'c1', usage=S.usage(80, 5)),
        S.text_response('北京晴。', usage=S.usage(90, 3)),
    ]


@pytest.mark.parametrize('mode', MODES)
def test_search_then_call_a_discovered_tool(mode: str) -> None:
    tools = catalog()
    model = ScriptedChatModel(search_then_call_script())
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), max_results=3)
    result = run(make_client(model, advisor), mode, '北京明天天气？', tools, chat_memory_conversation_id='u1')

    assert names(model.prompts[0]) == ['toolSearchTool']
    found = names(model.prompts[1])
    assert found[:2] == ['toolSearchTool', 'get_weather'] and len(found) <= 4
    assert names(model.prompts[2]) == found
    search_response = model.prompts[1].messages[-1]
    assert isinstance(search_response, ToolResponseMessage)
    payload = orjson.loads(search_response.responses[0].response_data)
    assert [t['name'] for t in payload['tools']] == found[1:]
    assert payload['tools'][0]['description'] == '查询指定城市的天气预报，包括温度和降水概率'
    weather = next(t for t in tools if t.tool_definition.name == 'get_weather')
    assert weather.calls == [{'city': '北京'}]
    assert model.prompts[2].messages[-1].responses[0].response_data == 'get_weather: city=北京'

    final = result if mode != 'stream' else result[-1]
    search_only = definition_bytes([advisor_search_tool(model)])
    discovered = [cb for cb in model.prompts[1].options.tool_callbacks]
    assert final.metadata['toolDefinitionsPerRound'] == [1, len(found), len(found)]
    assert final.metadata['toolDefinitionBytesPerRound'] == [search_only, *[definition_bytes(discovered)] * 2]
    assert definition_bytes(discovered) < definition_bytes(tools) / 5
    assert advisor.sessions.discovered('u1') == tuple(found[1:])
    if mode != 'stream':
        assert final.result.output.text == '北京晴。'
        assert final.metadata['toolCallingRounds'] == 3


def advisor_search_tool(model: ScriptedChatModel) -> ToolCallback:
    return model.prompts[0].options.tool_callbacks[0]


def test_sessions_are_per_conversation_and_survive_requests() -> None:
    tools = catalog()
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), max_results=1)
    model = ScriptedChatModel([*search_then_call_script(), S.text_response('again'), S.text_response('other')])
    client = make_client(model, advisor)
    client.prompt('天气').tools(*tools).advisors(chat_memory_conversation_id='alice').call()
    client.prompt('still?').tools(*tools).advisors(chat_memory_conversation_id='alice').call()
    client.prompt('hi').tools(*tools).advisors(chat_memory_conversation_id='bob').call()
    assert names(model.prompts[3]) == ['toolSearchTool', 'get_weather']  # alice, next request
    assert names(model.prompts[4]) == ['toolSearchTool']  # bob
    assert advisor.sessions.discovered('bob') == ()  # bob's session exists (its index), nothing discovered


def test_default_conversation_without_parameter() -> None:
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex())
    model = ScriptedChatModel(search_then_call_script())
    make_client(model, advisor).prompt('天气').tools(*catalog()).call()
    assert 'get_weather' in advisor.sessions.discovered('default')


def test_undiscovered_tool_is_callable_by_exact_name_and_joins_the_session() -> None:
    tools = catalog()
    advisor = ToolSearchToolCallingAdvisor()
    model = ScriptedChatModel(
        [S.tool_call_response('send_sms', {'phone': '+4712345678', 'text': 'hi'}, 'c1'), S.text_response('sent')]
    )
    response = make_client(model, advisor).prompt('text Ola').tools(*tools).call()
    assert response.content() == 'sent'
    assert names(model.prompts[1]) == ['toolSearchTool', 'send_sms']
    assert response.chat_response().metadata['toolDefinitionsPerRound'] == [1, 2]


def test_regex_index_finds_nothing_for_chinese_and_says_so() -> None:
    model = ScriptedChatModel(
        [S.tool_call_response('toolSearchTool', {'query': '北京天气预报'}, 's1'), S.text_response('sorry')]
    )
    make_client(model, ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())).prompt('x').tools(*catalog()).call()
    payload = orjson.loads(model.prompts[1].messages[-1].responses[0].response_data)
    assert payload == {'tools': [], 'message': "No tool matched '北京天气预报'. Try other or fewer words."}
    assert names(model.prompts[1]) == ['toolSearchTool']


@pytest.mark.parametrize(
    ('arguments', 'expected'),
    [
        ('{"q": "x"}', 'toolSearchTool needs {"query": "<keywords>"}, got \'{"q": "x"}\''),
        ('{"query": 3}', 'toolSearchTool needs {"query": "<keywords>"}, got \'{"query": 3}\''),
        ('{"query": "' + ' '.join(f'w{i:03d}' for i in range(60)) + '"}', 'at most 200 are allowed'),
        ('not json', 'invalid tool arguments at line 1 column 1'),
    ],
)
def test_bad_search_arguments_go_back_to_the_model(arguments: str, expected: str) -> None:
    model = ScriptedChatModel([S.tool_call_response('toolSearchTool', arguments, 's1'), S.text_response('ok')])
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    make_client(model, advisor).prompt('x').tools(*catalog()).call()
    text = model.prompts[1].messages[-1].responses[0].response_data
    assert expected in text


def test_requests_without_tools_pass_through() -> None:
    model = ScriptedChatModel([S.text_response('plain')])
    response = make_client(model, ToolSearchToolCallingAdvisor()).prompt('hi').call()
    assert response.content() == 'plain'
    assert names(model.prompts[0]) == []
    assert 'toolDefinitionsPerRound' not in response.chat_response().metadata


def test_a_tool_named_like_the_search_tool_is_rejected() -> None:
    clash = CatalogTool({'name': 'toolSearchTool', 'description': 'mine', 'params': {}})
    client = make_client(ScriptedChatModel([S.text_response('x')]), ToolSearchToolCallingAdvisor())
    with pytest.raises(ValueError, match="named 'toolSearchTool'"):
        client.prompt('hi').tools(clash).call()
    renamed = ToolSearchToolCallingAdvisor(search_tool_name='findTools')
    model = ScriptedChatModel([S.text_response('x')])
    make_client(model, renamed).prompt('hi').tools(clash).call()
    assert names(model.prompts[0]) == ['findTools']


def test_copies_share_index_and_sessions_and_keep_settings() -> None:
    index = LexicalToolIndex()
    advisor = ToolSearchToolCallingAdvisor(tool_index=index, max_results=2, max_rounds=4)
    copy = advisor.copy(conversation_history_enabled=False)
    assert isinstance(copy, ToolSearchToolCallingAdvisor) and isinstance(copy, ToolCallingAdvisor)
    assert copy.tool_index is index and copy.sessions is advisor.sessions
    assert (copy.max_results, copy.max_rounds, copy.conversation_history_enabled) == (2, 4, False)
    assert copy.tool_index_factory == advisor.tool_index_factory  # same sessions' indexes stay valid
    other = advisor.copy(tool_index=RegexToolIndex())
    assert other.tool_index_factory != advisor.tool_index_factory and other.sessions is advisor.sessions
    by_factory = advisor.copy(tool_index_factory=RegexToolIndex)
    assert by_factory.tool_index is None and by_factory.tool_index_factory is RegexToolIndex
    assert by_factory.copy().tool_index_factory is RegexToolIndex


def test_tools_are_indexed_once_per_session_and_reindexed_when_changed() -> None:
    made: list[CountingIndex] = []

    class CountingIndex(RegexToolIndex):
        def __init__(self) -> None:
            super().__init__()
            self.indexed: list[str] = []
            made.append(self)

        def index_tool(self, definition: ToolDefinition) -> None:
            self.indexed.append(definition.name)
            super().index_tool(definition)

    advisor = ToolSearchToolCallingAdvisor(tool_index=CountingIndex())
    made.clear()
    tools = catalog()
    model = ScriptedChatModel([S.text_response('a'), S.text_response('b'), S.text_response('c')])
    client = make_client(model, advisor)
    client.prompt('x').tools(*tools).call()
    client.prompt('x').tools(*tools).call()
    assert len(made) == 1 and len(made[0].indexed) == len(tools)  # the session's index, built once
    changed = CatalogTool({'name': 'get_weather', 'description': 'weather, new text', 'params': {}})
    client.prompt('x').tools(changed).call()
    assert len(made) == 2 and made[1].indexed == ['get_weather'] and len(made[0]) == 0  # old one cleared


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match='max_results'):
        ToolSearchToolCallingAdvisor(max_results=0)
    with pytest.raises(ValueError, match='max_sessions'):
        ToolSearchToolCallingAdvisor(max_sessions=0)
    with pytest.raises(ValueError, match='order'):
        ToolSearchToolCallingAdvisor(order=2**31 - 1)


def test_session_lru_eviction() -> None:
    sessions = ToolSearchSessions(max_sessions=2)
    sessions.add('a', ['t1'])
    sessions.add('b', ['t2'])
    assert sessions.discovered('a') == ('t1',)  # a is now the most recent
    sessions.add('c', ['t3', 't1', 't3'])
    assert 'b' not in sessions and len(sessions) == 2
    assert sessions.discovered('c') == ('t3', 't1')
    sessions.clear('a')
    assert sessions.discovered('a') == ()
    sessions.clear()
    assert len(sessions) == 0


def test_default_lru_bound_is_1000() -> None:
    sessions = ToolSearchToolCallingAdvisor().sessions
    for i in range(1005):
        sessions.add(f's{i}', ['x'])
    assert len(sessions) == 1000 and 's4' not in sessions and 's5' in sessions


def test_sessions_are_thread_safe() -> None:
    sessions = ToolSearchSessions(max_sessions=50)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(500):
                sessions.add(f's{(worker * 7 + i) % 80}', [f't{i % 5}'])
                sessions.discovered(f's{i % 80}')
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(sessions) == 50


def test_concurrent_conversations_keep_their_own_tools() -> None:
    tools = catalog()
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), max_results=1)
    queries = {'u-weather': '天气预报', 'u-sms': 'text message phone', 'u-hotel': '预订酒店'}
    expected = {'u-weather': 'get_weather', 'u-sms': 'send_sms', 'u-hotel': 'book_hotel'}
    errors: list[BaseException] = []

    def converse(user: str) -> None:
        try:
            model = ScriptedChatModel(
                [S.tool_call_response('toolSearchTool', {'query': queries[user]}), S.text_response('k')]
            )
            make_client(model, advisor).prompt('x').tools(*tools).advisors(chat_memory_conversation_id=user).call()
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=converse, args=(u,)) for u in queries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert {u: advisor.sessions.discovered(u) for u in queries} == {u: (n,) for u, n in expected.items()}
