"""Per-session tool index: built at loop start, rebuilt on change, cleared on eviction, never shared."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from support.tool_search_fixtures import MODES, S, catalog, make_client, names, run, search_payload, tool
from toolweave.advisors import ToolSearchToolCallingAdvisor
from toolweave.chat import Prompt
from toolweave.providers import ScriptedChatModel
from toolweave.search import LexicalToolIndex, RegexToolIndex, ToolSearchResult, VectorToolIndex
from toolweave.search._tokenize import tokenize
from toolweave.tools import ToolDefinition

WEATHER = [tool('get_weather', 'Weather forecast for a city'), tool('get_air_quality', 'Air quality of a city')]
FINANCE = [tool('get_stock_price', 'Stock price of a ticker'), tool('weather_derivatives', 'Weather futures prices')]


def search(query: str, **arguments: Any) -> Any:
    return S.tool_call_response('toolSearchTool', {'query': query, **arguments}, 's1')


@pytest.mark.parametrize('mode', MODES)
def test_each_session_indexes_exactly_its_own_tools_at_loop_start(mode: str) -> None:
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex())
    model = ScriptedChatModel([S.text_response('a'), S.text_response('b')])
    client = make_client(model, advisor)
    run(client, mode, 'hi', WEATHER, chat_memory_conversation_id='alice')
    run(client, mode, 'hi', FINANCE, chat_memory_conversation_id='bob')
    alice, bob = advisor.sessions.index('alice'), advisor.sessions.index('bob')
    assert isinstance(alice, LexicalToolIndex) and isinstance(bob, LexicalToolIndex) and alice is not bob
    assert alice is not advisor.tool_index and len(advisor.tool_index) == 0  # the template stays empty
    assert [r.name for r in alice.search('', 10)] == ['get_weather', 'get_air_quality']  # no search was made
    assert [r.name for r in bob.search('', 10)] == ['get_stock_price', 'weather_derivatives']


@pytest.mark.parametrize('mode', MODES)
def test_a_search_sees_only_its_sessions_tools_ranked_as_if_alone(mode: str) -> None:
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), max_results=5)
    client = make_client(ScriptedChatModel([S.text_response('big')]), advisor)
    run(client, mode, 'hi', catalog(), chat_memory_conversation_id='alice')  # 54 tools in another session
    model = ScriptedChatModel([search('stock weather'), S.text_response('ok')])
    run(make_client(model, advisor), mode, 'x', FINANCE, chat_memory_conversation_id='bob')

    alone = LexicalToolIndex()
    alone.index_tools([t.tool_definition for t in FINANCE])
    found = [t['name'] for t in search_payload(model.prompts[1])['tools']]
    # BM25's IDF of bob's two tools alone; with one index shared with alice's 54 tools, 'stock' won
    assert found == [r.name for r in alone.search('stock weather', 5)] == ['weather_derivatives', 'get_stock_price']
    assert len(advisor.sessions.index('bob')) == 2 and len(advisor.sessions.index('alice')) == 54


@pytest.mark.parametrize('mode', MODES)
def test_lru_eviction_clears_the_index_and_the_session_is_rebuilt_on_return(mode: str) -> None:
    advisor = ToolSearchToolCallingAdvisor(max_sessions=1)
    model = ScriptedChatModel([search('weather'), S.text_response('a'), S.text_response('b'), S.text_response('c')])
    client = make_client(model, advisor)
    run(client, mode, 'x', WEATHER, chat_memory_conversation_id='alice')
    alice_index = advisor.sessions.index('alice')
    assert alice_index is not None and len(alice_index) == 2
    assert advisor.sessions.discovered('alice') == ('get_weather',)

    run(client, mode, 'x', FINANCE, chat_memory_conversation_id='bob')
    assert 'alice' not in advisor.sessions and len(advisor.sessions) == 1
    assert len(alice_index) == 0  # cleared on eviction

    run(client, mode, 'x', WEATHER, chat_memory_conversation_id='alice')
    rebuilt = advisor.sessions.index('alice')
    assert rebuilt is not None and rebuilt is not alice_index and len(rebuilt) == 2
    assert names(model.prompts[-1]) == ['toolSearchTool']  # the finds went with the evicted session


def test_evict_session_and_clear_clear_the_indexes() -> None:
    advisor = ToolSearchToolCallingAdvisor()
    client = make_client(ScriptedChatModel([S.text_response('a'), S.text_response('b')]), advisor)
    client.prompt('x').tools(*WEATHER).advisors(chat_memory_conversation_id='alice').call()
    client.prompt('x').tools(*FINANCE).advisors(chat_memory_conversation_id='bob').call()
    alice, bob = advisor.sessions.index('alice'), advisor.sessions.index('bob')
    advisor.evict_session('alice')
    assert 'alice' not in advisor.sessions and len(alice) == 0 and len(bob) == 2
    advisor.sessions.clear()
    assert len(advisor.sessions) == 0 and len(bob) == 0


@pytest.mark.parametrize('mode', MODES)
def test_index_is_rebuilt_when_the_sessions_tools_change_and_reused_when_not(mode: str) -> None:
    made: list[RegexToolIndex] = []

    def factory() -> RegexToolIndex:
        made.append(RegexToolIndex())
        return made[-1]

    advisor = ToolSearchToolCallingAdvisor(tool_index_factory=factory)
    model = ScriptedChatModel([S.text_response('a'), S.text_response('b'), search('stock'), S.text_response('c')])
    client = make_client(model, advisor)
    run(client, mode, 'x', WEATHER, chat_memory_conversation_id='u')
    run(client, mode, 'x', WEATHER, chat_memory_conversation_id='u')
    assert len(made) == 1
    run(client, mode, 'x', FINANCE, chat_memory_conversation_id='u')
    assert len(made) == 2 and len(made[0]) == 0 and len(made[1]) == 2
    assert [t['name'] for t in search_payload(model.prompts[3])['tools']] == ['get_stock_price']


class PlainIndex:
    """A user's index without ``empty_copy()``: the advisor needs a factory for it."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolDefinition] = {}

    def index_tool(self, definition: ToolDefinition) -> None:
        self.tools[definition.name] = definition

    def index_tools(self, definitions: Any) -> None:
        for definition in definitions:
            self.index_tool(definition)

    def search(self, query: str, max_results: int = 10) -> list[ToolSearchResult]:
        hits = [d for d in self.tools.values() if query.lower() in d.description.lower()]
        return [ToolSearchResult(d.name, d.description, 1.0) for d in hits[:max_results]]

    def clear(self) -> None:
        self.tools.clear()


@pytest.mark.parametrize('mode', MODES)
def test_a_custom_index_works_through_a_factory(mode: str) -> None:
    with pytest.raises(TypeError, match='tool_index_factory='):
        ToolSearchToolCallingAdvisor(tool_index=PlainIndex())
    with pytest.raises(ValueError, match='not both'):
        ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), tool_index_factory=PlainIndex)
    with pytest.raises(TypeError, match='function returning a ToolIndex'):
        ToolSearchToolCallingAdvisor(tool_index_factory='PlainIndex')  # type: ignore[arg-type]

    advisor = ToolSearchToolCallingAdvisor(tool_index_factory=PlainIndex)
    model = ScriptedChatModel([search('air quality'), S.text_response('ok')])
    run(make_client(model, advisor), mode, 'x', WEATHER, chat_memory_conversation_id='u')
    assert search_payload(model.prompts[1])['tools'] == [
        {'name': 'get_air_quality', 'description': 'Air quality of a city'}
    ]
    assert isinstance(advisor.sessions.index('u'), PlainIndex)


def test_a_factory_that_returns_no_index_is_reported() -> None:
    advisor = ToolSearchToolCallingAdvisor(tool_index_factory=lambda: object())  # type: ignore[arg-type,return-value]
    client = make_client(ScriptedChatModel([S.text_response('x')]), advisor)
    with pytest.raises(TypeError, match='must return a ToolIndex, got object'):
        client.prompt('x').tools(*WEATHER).call()


def hashed(texts: list[str]) -> list[list[float]]:
    vectors = []
    for text in texts:
        vector = [1e-3] * 64
        for token in tokenize(text):
            vector[int(hashlib.sha1(token.encode()).hexdigest(), 16) % 64] += 1.0
        vectors.append(vector)
    return vectors


@pytest.mark.parametrize('mode', MODES)
def test_vector_sessions_embed_each_tool_text_once(mode: str) -> None:
    embedded: list[str] = []

    def embedding(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return hashed(texts)

    tools = catalog()
    advisor = ToolSearchToolCallingAdvisor(tool_index=VectorToolIndex(embedding), max_results=1)
    script = [step for _ in range(3) for step in (search('上海的空气质量'), S.text_response('ok'))]
    model = ScriptedChatModel(script)
    client = make_client(model, advisor)
    for user in ('u1', 'u2', 'u3'):
        run(client, mode, 'x', tools, chat_memory_conversation_id=user)
    assert len(embedded) == len(tools) + 3  # every tool text once, plus one query per search
    assert embedded.count('上海的空气质量') == 3
    assert [search_payload(model.prompts[i])['tools'][0]['name'] for i in (1, 3, 5)] == ['get_air_quality'] * 3


def test_a_session_evicted_mid_loop_is_rebuilt_for_its_next_search() -> None:
    advisor = ToolSearchToolCallingAdvisor(max_sessions=1)
    other = make_client(ScriptedChatModel([S.text_response('bob')]), advisor)

    def evict_then_search(prompt: Prompt) -> Any:
        other.prompt('x').tools(*FINANCE).advisors(chat_memory_conversation_id='bob').call()
        assert 'alice' not in advisor.sessions
        return search('air')

    model = ScriptedChatModel([evict_then_search, S.text_response('done')])
    make_client(model, advisor).prompt('x').tools(*WEATHER).advisors(chat_memory_conversation_id='alice').call()
    assert [t['name'] for t in search_payload(model.prompts[1])['tools']] == ['get_air_quality']
    assert names(model.prompts[1]) == ['toolSearchTool', 'get_air_quality']
    assert 'bob' not in advisor.sessions and len(advisor.sessions.index('alice')) == 2
