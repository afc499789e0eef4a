"""AnthropicChatModel through the replay server: corpus streams, request bodies, a two-round tool loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support.core_fixtures import corpus_streams, load_stream
from support.provider_fixtures import RECORDED, check_stream_against_expected, collect, recorded
from support.weather import WeatherTool, get_weather
from toolweave import ChatClient, tool
from toolweave.chat import (
    AssistantMessage,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.exceptions import AuthenticationError, ProviderStreamError
from toolweave.providers import AnthropicChatModel, RetryPolicy
from toolweave.providers.replay import ReplayChatModel, ReplayServer, Reply

STREAMS = corpus_streams('anthropic')
NORMALIZED = {'tool_use': 'tool_calls', 'end_turn': 'stop'}


def model(server: ReplayServer, **kwargs: Any) -> AnthropicChatModel:
    return AnthropicChatModel(base_url=server.url, api_key='sk-ant-secret', model='claude-sonnet-4-5', **kwargs)


def test_corpus_has_the_anthropic_streams() -> None:
    assert [n[:3] for n in STREAMS] == ['005', '006', '016']


@pytest.mark.parametrize('name', STREAMS)
@pytest.mark.parametrize('piece', [0, 5])
def test_corpus_stream(server: ReplayServer, name: str, piece: int) -> None:
    body, want = load_stream(name)
    server.queue(Reply(body=body, content_type='text/event-stream', piece=piece))
    with model(server) as m:
        chunks = collect(m, Prompt.of('hi'))
    check_stream_against_expected(chunks, want, NORMALIZED[want['finish_reason']])
    blocks = chunks[-1].generations[0].output.metadata['anthropic_content']
    assert [b['type'] for b in blocks] == [b['type'] for b in want['content_blocks']]
    for block, wanted in zip(blocks, want['content_blocks'], strict=True):
        assert 'input_raw' not in block
        if 'input' in wanted:
            assert block['input'] == wanted['input']
        if wanted['type'] == 'thinking':
            assert block['signature'] == wanted['signature'] and block['signature']


def test_request_body_snapshot() -> None:
    prompt = Prompt(
        (
            SystemMessage('Be brief.'),
            UserMessage('Weather in Paris?'),
            AssistantMessage(
                'Let me check.',
                (ToolCall('toolu_1', 'function', 'get_weather', '{"city": "Paris"}'),),
                {
                    'anthropic_content': [
                        {'type': 'thinking', 'thinking': 'Call the tool.', 'signature': 'sig=='},
                        {'type': 'text', 'text': 'Let me check.'},
                        {'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {'city': 'Paris'}},
                    ]
                },
            ),
            ToolResponseMessage((ToolResponse('toolu_1', 'get_weather', '18 C'),)),
            UserMessage('And in Rome?'),
        ),
        ToolCallingChatOptions(
            tool_callbacks=(WeatherTool(),), tool_choice='required', parallel_tool_calls=False, stop=('END',)
        ),
    )
    body = AnthropicChatModel(api_key='k', model='claude-sonnet-4-5').request_body(prompt, stream=True)
    assert body == {
        'model': 'claude-sonnet-4-5',
        'max_tokens': 4096,
        'system': 'Be brief.',
        'messages': [
            {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather in Paris?'}]},
            {
                'role': 'assistant',
                'content': [
                    {'type': 'thinking', 'thinking': 'Call the tool.', 'signature': 'sig=='},
                    {'type': 'text', 'text': 'Let me check.'},
                    {'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {'city': 'Paris'}},
                ],
            },
            {
                'role': 'user',
                'content': [
                    {'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': '18 C'},
                    {'type': 'text', 'text': 'And in Rome?'},
                ],
            },
        ],
        'stop_sequences': ['END'],
        'tools': [
            {
                'name': 'get_weather',
                'description': 'Current weather for a city',
                'input_schema': {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']},
            }
        ],
        'tool_choice': {'type': 'any', 'disable_parallel_tool_use': True},
        'stream': True,
    }


def test_tool_calls_without_kept_blocks_become_tool_use_blocks() -> None:
    prompt = Prompt(
        (UserMessage('hi'), AssistantMessage(None, (ToolCall('t1', 'function', 'f', ''),))),
    )
    body = AnthropicChatModel(api_key='k', model='m').request_body(prompt)
    assert body['messages'][1] == {
        'role': 'assistant',
        'content': [{'type': 'tool_use', 'id': 't1', 'name': 'f', 'input': {}}],
    }
    assert 'tools' not in body and 'stream' not in body


def test_headers_and_key_never_shown(server: ReplayServer) -> None:
    server.queue(
        Reply(
            401,
            b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-secret"}}',
            headers={'request-id': 'req_123'},
        )
    )
    m = model(server)
    with pytest.raises(AuthenticationError) as info:
        m.call(Prompt.of('hi'))
    headers = server.requests[-1].headers
    assert headers['x-api-key'] == 'sk-ant-secret'
    assert headers['anthropic-version'] == '2023-06-01'
    assert server.requests[-1].path == '/v1/messages'
    error = info.value
    assert (error.status_code, error.request_id, error.provider) == (401, 'req_123', 'anthropic')
    assert error.provider_message == 'invalid x-api-key ***'
    for text in (str(error), repr(error), error.body or '', repr(m)):
        assert 'sk-ant-secret' not in text
    m.close()


def test_error_event_in_a_200_stream(server: ReplayServer) -> None:
    body = recorded('anthropic-answer.sse')
    cut = body.index(b'event: content_block_stop')
    error = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    server.queue(Reply(body=body[:cut] + error, content_type='text/event-stream', headers={'request-id': 'req_9'}))
    seen = []

    async def run() -> None:
        async for chunk in model(server).stream(Prompt.of('hi')):
            seen.append(chunk)

    with pytest.raises(ProviderStreamError) as info:
        asyncio.run(run())
    assert info.value.provider_message == 'Overloaded'
    assert info.value.request_id == 'req_9'
    assert ''.join(c.text for c in seen) == info.value.partial_text == 'It is 18 C and sunny in Paris.'
    assert isinstance(info.value, RuntimeError)


def test_two_round_tool_loop_blocking_and_async(server: ReplayServer) -> None:
    for reply in ('anthropic-tool-use.json', 'anthropic-answer.json') * 2:
        server.queue(Reply(body=recorded(reply)))
    with model(server) as m:
        client = ChatClient.builder(m).default_system('Be brief.').build()
        response = client.prompt('Weather in Paris?').tools(get_weather).call()
        answer = asyncio.run(client.prompt('Weather in Paris?').tools(get_weather).acall())
    assert response.content() == 'It is 18 C and sunny in Paris.'
    assert answer.content() == 'It is 18 C and sunny in Paris.'
    second = server.requests[1].json
    assert second['system'] == 'Be brief.'
    assert second['messages'][1]['content'][0] == {
        'type': 'thinking',
        'thinking': 'The user wants the weather; call the tool.',
        'signature': 'EqQBCkYIBxgCKkBsig==',
    }
    assert second['messages'][2] == {
        'role': 'user',
        'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_01W', 'content': '18 C and sunny in Paris'}],
    }
    assert server.requests[3].json == second


@tool
def updateIssueList() -> str:
    """Update the issue list."""
    return 'updated'


def test_two_round_tool_loop_streaming() -> None:
    (name,) = [n for n in STREAMS if n.startswith('016')]
    body, _ = load_stream(name)
    turns = [
        Reply(body=body, content_type='text/event-stream'),
        RECORDED / 'anthropic-answer.sse',
    ]
    with ReplayChatModel(lambda url: AnthropicChatModel(base_url=url, api_key='k', model='m'), turns) as replay:
        client = ChatClient.create(replay)

        async def run() -> list[str]:
            return [p async for p in client.prompt('Update the issues').tools(updateIssueList).stream().content()]

        pieces = asyncio.run(run())
        assert ''.join(pieces) == "I'll update the issue list for you.It is 18 C and sunny in Paris."
        second = replay.requests[1].json
        assert second['messages'][1]['content'] == [
            {'type': 'text', 'text': "I'll update the issue list for you."},
            {'type': 'tool_use', 'id': 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', 'name': 'updateIssueList', 'input': {}},
        ]
        assert second['messages'][2]['content'] == [
            {'type': 'tool_result', 'tool_use_id': 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', 'content': 'updated'}
        ]


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('ANTHROPIC_API_KEY', 'sk-env')
    assert AnthropicChatModel().headers(False)['x-api-key'] == 'sk-env'
    assert json.dumps(AnthropicChatModel(retry=RetryPolicy(0)).request_body(Prompt.of('x')))
