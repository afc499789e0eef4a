"""LocalChatModel end to end on the real model: memory across turns, two calls for two cities, tool search.

Few and short (the model runs on two shared CPU cores); structure is asserted, not wording.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Literal

import pytest
from support.local_model import needs_local
from toolweave import ChatClient, ToolParam, tool
from toolweave.advisors import MessageChatMemoryAdvisor, ToolSearchToolCallingAdvisor
from toolweave.events import RunEvent, ToolCallReady
from toolweave.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolweave.providers import LocalChatModel
from toolweave.search import RegexToolIndex

pytestmark = [
    pytest.mark.local_model,
    needs_local,
]


@tool
def get_weather(city: Annotated[str, ToolParam(description='City name')], unit: Literal['c', 'f'] = 'c') -> str:
    """Current weather of a city."""
    return f'18 degrees {unit.upper()} and sunny in {city}'


@tool
def place_order(item: str, quantity: int = 1) -> str:
    """Place an order."""
    return f'{quantity} x {item}'


@pytest.fixture(scope='module')
def model() -> Iterator[LocalChatModel]:
    with LocalChatModel() as local:
        yield local


def calls_of(events: list[RunEvent]) -> list[tuple[str, dict[str, object]]]:
    return [(e.call.name, json.loads(e.call.arguments)) for e in events if isinstance(e, ToolCallReady)]


def assert_clean(text: str) -> None:
    assert text.strip() and '<' not in text and '\n' not in text, text


def test_every_turn_of_a_conversation_with_memory_calls_the_tool(model: LocalChatModel) -> None:
    memory = MessageWindowChatMemory(InMemoryChatMemoryRepository(), max_messages=20)
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()
    for question, city in (('What is the weather in Paris?', 'Paris'), ('And in Tokyo?', 'Tokyo')):
        events: list[RunEvent] = []
        response = (
            client.prompt(question)
            .tools(get_weather, place_order)
            .advisors(chat_memory_conversation_id='e2e')
            .call(on_event=events.append)
        )
        assert [(name, arguments['city']) for name, arguments in calls_of(events)] == [('get_weather', city)]
        assert_clean(response.content())
        assert city.lower() in response.content().lower()
    stored = [m.text for m in memory.get('e2e')]
    assert stored[0::2] == ['What is the weather in Paris?', 'And in Tokyo?']
    for answer in stored[1::2]:
        assert_clean(answer)


def test_two_cities_two_calls_then_an_answer(model: LocalChatModel) -> None:
    events: list[RunEvent] = []
    response = (
        ChatClient.create(model)
        .prompt('Compare the weather in Rome and in Madrid.')
        .tools(get_weather)
        .call(on_event=events.append)
    )
    assert sorted(str(a['city']) for _, a in calls_of(events)) == ['Madrid', 'Rome']
    assert_clean(response.content())


def test_tool_search_then_the_found_tool(model: LocalChatModel) -> None:
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=2)
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    events: list[RunEvent] = []
    response = (
        client.prompt('What is the weather in Lima?').tools(get_weather, place_order).call(on_event=events.append)
    )
    calls = calls_of(events)
    assert [name for name, _ in calls] == ['toolSearchTool', 'get_weather']
    assert calls[1][1]['city'] == 'Lima'
    assert_clean(response.content())
    assert response.chat_response().metadata['toolDefinitionsPerRound'][0] == 1  # only the search tool at first
