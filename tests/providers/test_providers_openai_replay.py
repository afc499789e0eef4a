"""OpenAIChatModel through the replay server: OpenAI-format corpus streams of other vendors, two-round tool loops."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.core_fixtures import load_stream
from support.provider_fixtures import DATA, collect
from toolweave import ChatClient, tool
from toolweave.chat import Prompt
from toolweave.providers import OpenAIChatModel
from toolweave.providers.replay import ReplayChatModel, ReplayServer, Reply

JSONL_STREAMS = [
    '011-deepseek-reasoner-reasoning-content-toolcall',
    '012-mistral-toolcall-no-index',
    '015-xai-grok3mini-reasoning-whole-toolcall',
    '020-ollama-openai-compat-whole-toolcall',
]
COMPLETIONS = DATA / 'completions'
STREAMS = DATA / 'streams'


@pytest.mark.parametrize('name', JSONL_STREAMS)
@pytest.mark.parametrize('piece', [0, 9])
def test_jsonl_corpus_stream_as_sse(server: ReplayServer, name: str, piece: int) -> None:
    # the .jsonl files keep the chunk payloads only; on the wire they are SSE events closed by [DONE]
    body, want = load_stream(name)
    server.queue(Reply(body=body + b'data: [DONE]\n\n', content_type='text/event-stream', piece=piece))
    with OpenAIChatModel(base_url=server.url, api_key='sk-test', model='m') as m:
        chunks = collect(m, Prompt.of('hi'))
    *deltas, final = chunks
    assert all(not c.has_tool_calls() for c in deltas)
    assert ''.join(c.text for c in deltas) == want['text']
    reasoning = ''.join(c.generations[0].output.metadata.get('reasoning', '') for c in deltas)
    assert reasoning == (want['reasoning'] or '')
    assert [(c.id, c.name, json.loads(c.arguments)) for c in final.tool_calls] == [
        (t['id'], t['name'], t['arguments']) for t in want['tool_calls']
    ]
    assert final.generations[0].finish_reason == want['finish_reason'] == 'tool_calls'
    assert (final.id, final.model) == (want['response_id'], want['model'])
    if want['usage'] is None:
        assert final.usage is None
    else:
        assert final.usage is not None and final.usage.native == want['usage']
        assert final.usage.total_tokens == want['usage']['total_tokens']


@tool
def get_weather(city: str, unit: str) -> str:
    """Current weather for a city."""
    return f'24 C, clear in {city}'


def test_two_round_tool_loop_blocking_and_async(server: ReplayServer) -> None:
    for name in ('llamacpp-gemma270m-tool-call.json', 'llamacpp-gemma270m-answer-after-tool.json') * 2:
        server.queue(Reply(body=(COMPLETIONS / name).read_bytes()))
    with OpenAIChatModel(base_url=server.url, api_key='sk-test', model='gemma') as m:
        client = ChatClient.builder(m).default_system('Be brief.').build()
        response = client.prompt('What is the weather in Rome?').tools(get_weather).call()
        answer = asyncio.run(client.prompt('What is the weather in Rome?').tools(get_weather).acall())
    assert response.content() == answer.content() == 'It is 24 C and clear in Rome.'
    second = server.requests[1].json
    assert server.requests[1].path == '/chat/completions'
    assert second['messages'][1:] == [
        {'role': 'user', 'content': 'What is the weather in Rome?'},
        {
            'role': 'assistant',
            'content': '',  # as the server answered it
            'tool_calls': [
                {
                    'id': 'ePKxuVqxZdtY7woFlXcmqlHRHHwz3j7E',
                    'type': 'function',
                    'function': {'name': 'get_weather', 'arguments': '{"city": "Rome", "unit": "c"}'},
                }
            ],
        },
        {'role': 'tool', 'tool_call_id': 'ePKxuVqxZdtY7woFlXcmqlHRHHwz3j7E', 'content': '24 C, clear in Rome'},
    ]
    assert server.requests[3].json == second


def test_two_round_tool_loop_streaming() -> None:
    turns = [
        STREAMS / '021-llamacpp-gemma270m-tool-call-required.sse',
        STREAMS / '023-llamacpp-gemma270m-answer-after-tool.sse',
    ]
    with ReplayChatModel(lambda url: OpenAIChatModel(base_url=url, api_key='', model='gemma'), turns) as replay:
        client = ChatClient.create(replay)

        async def run() -> list[str]:
            return [p async for p in client.prompt('Weather in Paris?').tools(get_weather).stream().content()]

        text = ''.join(asyncio.run(run()))
        assert (
            text == json.loads((STREAMS / '023-llamacpp-gemma270m-answer-after-tool.expected.json').read_text())['text']
        )
        second = replay.requests[1].json
    assert second['stream'] is True
    assert second['messages'][1]['tool_calls'][0]['id'] == 'KjPY7MfYYxzVEGshKIx7WfAUPk1mS9Ux'
    assert second['messages'][2] == {
        'role': 'tool',
        'tool_call_id': 'KjPY7MfYYxzVEGshKIx7WfAUPk1mS9Ux',
        'content': '24 C, clear in Paris',
    }
