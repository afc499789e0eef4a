"""OllamaChatModel (native /api/chat) through the replay server: NDJSON streams, request bodies, tool loop."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.core_fixtures import load_case
from support.provider_fixtures import RECORDED, collect, collect_until_error, recorded
from support.weather import get_weather
from toolweave import ChatClient
from toolweave.chat import (
    AssistantMessage,
    ChatOptions,
    Prompt,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.exceptions import IncompleteStreamError, ProviderStreamError
from toolweave.providers import OllamaChatModel
from toolweave.providers.replay import ReplayChatModel, ReplayServer, Reply


def model(server: ReplayServer) -> OllamaChatModel:
    return OllamaChatModel(base_url=server.url, model='llama3.2')


def test_case_b05_stream(server: ReplayServer) -> None:
    case = load_case('B05')
    body = b''.join(json.dumps(p).encode() + b'\n' for p in case['input'])
    server.queue(Reply(body=body, content_type='application/x-ndjson', piece=3))
    with model(server) as m:
        *_, final = collect(m, Prompt.of('hi'))
    want = case['expected']
    assert final.generations[0].finish_reason == want['finish_reason'] == 'tool_calls'
    assert final.metadata['native_finish_reason'] == want['provider_finish_reason'] == 'stop'
    assert [(c.name, json.loads(c.arguments)) for c in final.tool_calls] == [
        (c['name'], c['arguments']) for c in want['tool_calls']
    ]
    assert server.requests[-1].path == '/api/chat'
    assert server.requests[-1].json['stream'] is True


def test_stream_tool_call_and_usage(server: ReplayServer) -> None:
    server.queue(Reply.from_file(RECORDED / 'ollama-tool-call.ndjson'))
    with model(server) as m:
        *deltas, final = collect(m, Prompt.of('hi'))
    assert [d.generations[0].output.metadata['reasoning'] for d in deltas] == ['Need the weather.']
    assert final.tool_calls == (ToolCall('call-0', 'function', 'get_weather', '{"city":"Paris"}'),)
    assert final.usage is not None and (final.usage.prompt_tokens, final.usage.completion_tokens) == (180, 21)
    assert final.model == 'llama3.2'


def test_request_body_snapshot() -> None:
    prompt = Prompt(
        (
            UserMessage('Weather in Paris?'),
            AssistantMessage(None, (ToolCall('call-0', 'function', 'get_weather', '{"city": "Paris"}'),)),
            ToolResponseMessage((ToolResponse('call-0', 'get_weather', '18 C'),)),
        ),
        ToolCallingChatOptions(
            temperature=0.2,
            max_tokens=64,
            stop=('\n',),
            extra_body={'options': {'num_ctx': 8192}, 'think': True},
        ),
    )
    body = OllamaChatModel(model='llama3.2', keep_alive='5m').request_body(prompt)
    assert body == {
        'model': 'llama3.2',
        'messages': [
            {'role': 'user', 'content': 'Weather in Paris?'},
            {
                'role': 'assistant',
                'content': '',
                'tool_calls': [{'function': {'name': 'get_weather', 'arguments': {'city': 'Paris'}}}],
            },
            {'role': 'tool', 'tool_name': 'get_weather', 'content': '18 C'},
        ],
        'stream': False,
        'options': {'temperature': 0.2, 'num_predict': 64, 'stop': ['\n'], 'num_ctx': 8192},
        'keep_alive': '5m',
        'think': True,
    }


def test_two_round_tool_loop_blocking_async_and_streaming(server: ReplayServer) -> None:
    server.queue(*(Reply.from_file(RECORDED / n) for n in ('ollama-tool-call.json', 'ollama-answer.json') * 2))
    server.queue(*(Reply.from_file(RECORDED / n) for n in ('ollama-tool-call.ndjson', 'ollama-answer.ndjson')))
    with model(server) as m:
        client = ChatClient.create(m)
        assert (
            client.prompt('Weather in Paris?').tools(get_weather).call().content() == 'It is 18 C and sunny in Paris.'
        )
        answer = asyncio.run(client.prompt('Weather in Paris?').tools(get_weather).acall())
        assert answer.content() == 'It is 18 C and sunny in Paris.'

        async def run() -> str:
            return ''.join([p async for p in client.prompt('Weather in Paris?').tools(get_weather).stream().content()])

        assert asyncio.run(run()) == 'It is 18 C and sunny in Paris.'
    for second in (server.requests[1].json, server.requests[3].json, server.requests[5].json):
        assert second['messages'][-1] == {
            'role': 'tool',
            'tool_name': 'get_weather',
            'content': '18 C and sunny in Paris',
        }
        assert second['tools'][0]['function']['name'] == 'get_weather'


def test_error_line_mid_stream_and_cut_stream(server: ReplayServer) -> None:
    first = recorded('ollama-answer.ndjson').splitlines(keepends=True)[0]
    server.queue(Reply(body=first + b'{"error": "model runner crashed"}\n', content_type='application/x-ndjson'))
    server.queue(Reply(body=first, content_type='application/x-ndjson'))
    with model(server) as m:
        seen, error = collect_until_error(m, Prompt.of('hi'))
        assert isinstance(error, ProviderStreamError) and error.provider_message == 'model runner crashed'
        assert error.partial_text == 'It is 18 C' == ''.join(c.text for c in seen)
        seen, error = collect_until_error(m, Prompt.of('hi'))
        assert isinstance(error, IncompleteStreamError) and error.partial_text == 'It is 18 C'


def test_replay_chat_model_from_files() -> None:
    with ReplayChatModel(lambda url: OllamaChatModel(base_url=url, model='m'), [RECORDED / 'ollama-answer.json']) as r:
        assert r.call(Prompt.of('hi', ChatOptions(seed=3))).text == 'It is 18 C and sunny in Paris.'
        assert r.requests[0].json['options'] == {'seed': 3}
    with pytest.raises(TypeError, match='cannot send a object to Ollama'):
        OllamaChatModel().request_body(Prompt((object(),)))  # type: ignore[arg-type]
