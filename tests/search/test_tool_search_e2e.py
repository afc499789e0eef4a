"""End to end: the model searches, then calls a discovered augmented tool; its inner thought reaches the consumer.

Also the measurement of the issue: tool-definition bytes sent per round for a 50-tool set, with and
without tool search.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import orjson
import pytest
from toolweave import ChatClient, ToolParam, tool
from toolweave.advisors import ToolSearchToolCallingAdvisor
from toolweave.advisors.tool_search import definition_bytes
from toolweave.chat import Prompt
from toolweave.providers import ScriptedChatModel
from toolweave.search import LexicalToolIndex
from toolweave.tools import FunctionToolCallback, ToolCallback
from toolweave.tools.augment import AgentThinking, AugmentedArgumentEvent, AugmentedToolCallbackProvider

S = ScriptedChatModel
DATA = json.loads((Path(__file__).parents[1] / 'data' / 'tool_search_set.json').read_text(encoding='utf-8'))
CITIES: list[str] = []


@tool
def get_weather(city: Annotated[str, ToolParam(description='城市名称')]) -> str:
    """查询指定城市的天气预报，包括温度和降水概率"""
    CITIES.append(city)
    return f'{city}：晴，25°C，降水概率 10%'


def fifty_tools() -> list[ToolCallback]:
    """``get_weather`` as a real function plus 49 FunctionToolCallbacks of the bilingual set."""
    tools: list[ToolCallback] = []
    for spec in DATA['tools'][:50]:
        if spec['name'] == 'get_weather':
            continue
        properties = {k: {'type': 'string', 'description': v} for k, v in spec['params'].items()}
        schema = {
            'type': 'object',
            'properties': properties,
            'required': list(properties),
            'additionalProperties': False,
        }
        name = spec['name']
        tools.append(
            FunctionToolCallback.builder(name, lambda args, name=name: f'{name} ran')
            .description(spec['description'])
            .input_schema(schema)
            .build()
        )
    return tools


def answer_from_tool(prompt: Prompt) -> Any:
    return S.text_response(f'北京明天：{prompt.messages[-1].responses[0].response_data}')


def script() -> list:
    return [
        S.tool_call_response('toolSearchTool', {'query': '城市天气预报'}, 'search-1'),
        S.tool_call_response('get_weather', {'city': '北京', 'inner_thought': '用户想知道北京的天气'}, 'w-1'),
        answer_from_tool,
    ]


def run(client: ChatClient, mode: str, tools: Any) -> tuple[str, dict[str, Any]]:
    spec = client.prompt('北京明天天气怎么样？').tools(tools).advisors(chat_memory_conversation_id='e2e')
    if mode == 'call':
        response = spec.call()
        return response.content(), dict(response.chat_response().metadata)
    if mode == 'acall':
        response = asyncio.run(spec.acall())
        return response.content(), dict(response.chat_response().metadata)

    async def collect() -> tuple[str, dict[str, Any]]:
        chunks = [c async for c in spec.stream().chat_responses()]
        text = ''.join(c.result.output.text for c in chunks if c.generations and c.result.output.text)
        return text, dict(chunks[-1].metadata)

    return asyncio.run(collect())


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream'])
def test_search_then_call_a_discovered_augmented_tool(mode: str) -> None:
    CITIES.clear()
    thoughts: list[tuple[str, str | None, str]] = []

    def consumer(event: AugmentedArgumentEvent[AgentThinking]) -> None:
        thoughts.append((event.tool_definition.name, event.tool_call_id, event.arguments.inner_thought))

    others = fifty_tools()
    tools = AugmentedToolCallbackProvider([*others[:5], get_weather, *others[5:]], consumer=consumer)
    assert len(tools.tool_callbacks) == 50
    model = ScriptedChatModel(script())
    advisor = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), max_results=3)
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()

    text, metadata = run(client, mode, tools)

    assert text == '北京明天：北京：晴，25°C，降水概率 10%'
    assert CITIES == ['北京']  # the tool got only its own argument
    assert thoughts == [('get_weather', 'w-1', '用户想知道北京的天气')]
    sent = [[cb.tool_definition.name for cb in p.options.tool_callbacks] for p in model.prompts]
    assert sent[0] == ['toolSearchTool']
    assert sent[1][:2] == ['toolSearchTool', 'get_weather'] and len(sent[1]) <= 4
    assert sent[2] == sent[1]
    weather_schema = model.prompts[1].options.tool_callbacks[1].tool_definition.input_schema
    assert weather_schema['required'] == ['city', 'inner_thought']
    found = orjson.loads(model.prompts[1].messages[-1].responses[0].response_data)['tools']
    assert found[0] == {'name': 'get_weather', 'description': '查询指定城市的天气预报，包括温度和降水概率'}

    per_round = metadata['toolDefinitionBytesPerRound']
    assert metadata['toolDefinitionsPerRound'] == [1, len(sent[1]), len(sent[1])]
    everything = definition_bytes(tools.tool_callbacks)
    assert per_round[0] == definition_bytes(model.prompts[0].options.tool_callbacks)
    assert per_round[1] == per_round[2] == definition_bytes(model.prompts[1].options.tool_callbacks)
    assert sum(per_round) * 5 < everything * 3  # three rounds with search cost less than one fifth of three without


def test_bytes_per_round_without_tool_search_for_the_same_loop() -> None:
    tools = AugmentedToolCallbackProvider([*fifty_tools(), get_weather])
    model = ScriptedChatModel(script()[1:])
    response = ChatClient.create(model).prompt('北京明天天气怎么样？').tools(tools).call()
    assert response.content().startswith('北京明天：北京：晴')
    sizes = [definition_bytes(p.options.tool_callbacks) for p in model.prompts]
    assert [len(p.options.tool_callbacks) for p in model.prompts] == [50, 50]
    assert sizes[0] == sizes[1] == definition_bytes(tools.tool_callbacks)
    assert 'toolDefinitionBytesPerRound' not in response.chat_response().metadata
