"""OpenAIResponsesModel through the replay server: corpus streams, request bodies, a two-round tool loop, faults."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.core_fixtures import corpus_streams, load_stream
from support.provider_fixtures import RECORDED, check_stream_against_expected, collect, collect_until_error, recorded
from support.weather import WEATHER_SCHEMA, WeatherTool, get_weather
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
from toolweave.exceptions import ProviderStreamError
from toolweave.providers import OpenAIResponsesModel
from toolweave.providers.replay import ReplayChatModel, ReplayServer, Reply

STREAMS = corpus_streams('openai-responses')


def model(server: ReplayServer, **kwargs: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(base_url=server.url, api_key='sk-secret', model='gpt-5-mini', **kwargs)


def test_corpus_has_the_responses_streams() -> None:
    assert [n[:3] for n in STREAMS] == ['009', '010']


@pytest.mark.parametrize('name', STREAMS)
@pytest.mark.parametrize('piece', [0, 7])
def test_corpus_stream(server: ReplayServer, name: str, piece: int) -> None:
    body, want = load_stream(name)
    server.queue(Reply(body=body, content_type='text/event-stream', piece=piece))
    with model(server) as m:
        chunks = collect(m, Prompt.of('hi'))
    check_stream_against_expected(chunks, want, 'tool_calls')
    assert server.requests[-1].path == '/responses'
    assert server.requests[-1].headers['Authorization'] == 'Bearer sk-secret'
    message = chunks[-1].generations[0].output
    items = message.metadata['openai_output']
    assert [i['type'] for i in items] == want['output_item_types']
    assert message.metadata['openai_response_id'] == want['response_id']
    (call,) = [i for i in items if i['type'] == 'function_call']
    assert (call['call_id'], call['id']) == (want['tool_calls'][0]['id'], want['tool_calls'][0]['item_id'])
    if 'reasoning' in want['output_item_types']:
        (reasoning,) = [i for i in items if i['type'] == 'reasoning']
        assert reasoning['encrypted_content']


def tool_prompt() -> Prompt:
    return Prompt(
        (
            SystemMessage('Be brief.'),
            UserMessage('Weather in Paris?'),
            AssistantMessage(
                None,
                (ToolCall('call_1', 'function', 'get_weather', '{"city": "Paris"}'),),
                {
                    'openai_response_id': 'resp_1',
                    'openai_output': [
                        {'id': 'rs_1', 'type': 'reasoning', 'encrypted_content': 'enc==', 'summary': []},
                        {
                            'id': 'fc_1',
                            'type': 'function_call',
                            'call_id': 'call_1',
                            'name': 'get_weather',
                            'arguments': '{"city": "Paris"}',
                        },
                    ],
                },
            ),
            ToolResponseMessage((ToolResponse('call_1', 'get_weather', '18 C'),)),
        ),
        ToolCallingChatOptions(
            tool_callbacks=(WeatherTool(),), tool_choice='required', parallel_tool_calls=False, max_tokens=200
        ),
    )


def test_request_body_snapshot() -> None:
    body = OpenAIResponsesModel(api_key='k', model='gpt-5-mini').request_body(tool_prompt(), stream=True)
    assert body == {
        'model': 'gpt-5-mini',
        'input': [
            {'role': 'system', 'content': 'Be brief.'},
            {'role': 'user', 'content': 'Weather in Paris?'},
            {'id': 'rs_1', 'type': 'reasoning', 'encrypted_content': 'enc==', 'summary': []},
            {
                'id': 'fc_1',
                'type': 'function_call',
                'call_id': 'call_1',
                'name': 'get_weather',
                'arguments': '{"city": "Paris"}',
            },
            {'type': 'function_call_output', 'call_id': 'call_1', 'output': '18 C'},
        ],
        'max_output_tokens': 200,
        'tools': [
            {
                'type': 'function',
                'name': 'get_weather',
                'description': 'Current weather for a city',
                'parameters': WEATHER_SCHEMA,
                'strict': False,
            }
        ],
        'tool_choice': 'required',
        'parallel_tool_calls': False,
        'stream': True,
    }


def test_strict_and_previous_response_id() -> None:
    m = OpenAIResponsesModel(api_key='k', model='gpt-5-mini', strict=True, previous_response_id=True)
    body = m.request_body(tool_prompt())
    assert body['previous_response_id'] == 'resp_1'
    assert body['input'] == [{'type': 'function_call_output', 'call_id': 'call_1', 'output': '18 C'}]
    (tool_entry,) = body['tools']
    assert tool_entry['strict'] is True
    assert tool_entry['parameters']['additionalProperties'] is False
    assert 'stream' not in body


def test_calls_without_kept_items_become_function_call_items() -> None:
    prompt = Prompt((UserMessage('hi'), AssistantMessage('ok', (ToolCall('c1', 'function', 'f', '{}'),))))
    assert OpenAIResponsesModel(api_key='k', model='m').request_body(prompt)['input'][1:] == [
        {'role': 'assistant', 'content': 'ok'},
        {'type': 'function_call', 'call_id': 'c1', 'name': 'f', 'arguments': '{}'},
    ]


REASONING_ITEM = {
    'id': 'rs_01',
    'type': 'reasoning',
    'encrypted_content': 'gAAAAABenc==',
    'summary': [{'type': 'summary_text', 'text': 'Call the weather tool.'}],
}
CALL_ITEM = {
    'id': 'fc_01',
    'type': 'function_call',
    'status': 'completed',
    'arguments': '{"city":"Paris"}',
    'call_id': 'call_W1',
    'name': 'get_weather',
}


def test_call_maps_usage_reasoning_and_finish_reason(server: ReplayServer) -> None:
    server.queue(Reply(body=recorded('responses-tool-call.json')))
    with model(server) as m:
        response = m.call(Prompt.of('Weather in Paris?'))
    assert response.generations[0].finish_reason == 'tool_calls'
    assert response.metadata['native_finish_reason'] == 'completed'
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ('call_W1', 'get_weather', '{"city":"Paris"}')
    ]
    assert response.generations[0].output.metadata['reasoning'] == 'Call the weather tool.'
    assert response.usage is not None
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.total_tokens) == (60, 30, 90)


def test_two_round_tool_loop_blocking_and_async(server: ReplayServer) -> None:
    for reply in ('responses-tool-call.json', 'responses-answer.json') * 2:
        server.queue(Reply(body=recorded(reply)))
    with model(server) as m:
        client = ChatClient.builder(m).default_system('Be brief.').build()
        response = client.prompt('Weather in Paris?').tools(get_weather).call()
        answer = asyncio.run(client.prompt('Weather in Paris?').tools(get_weather).acall())
    assert response.content() == answer.content() == 'It is 18 C and sunny in Paris.'
    second = server.requests[1].json
    assert second['input'] == [
        {'role': 'system', 'content': 'Be brief.'},
        {'role': 'user', 'content': 'Weather in Paris?'},
        REASONING_ITEM,
        CALL_ITEM,
        {'type': 'function_call_output', 'call_id': 'call_W1', 'output': '18 C and sunny in Paris'},
    ]
    assert server.requests[3].json == second


def test_two_round_tool_loop_streaming() -> None:
    body, want = load_stream('010-openai-responses-reasoning-function-call')

    @tool
    def final_result(result: int) -> str:
        """The final response."""
        return f'got {result}'

    turns = [Reply(body=body, content_type='text/event-stream'), RECORDED / 'responses-answer.sse']
    with ReplayChatModel(lambda url: OpenAIResponsesModel(base_url=url, api_key='k', model='gpt-5'), turns) as replay:
        client = ChatClient.create(replay)

        async def run() -> list[str]:
            return [p async for p in client.prompt('Compute').tools(final_result).stream().content()]

        assert ''.join(asyncio.run(run())) == 'It is 18 C and sunny in Paris.'
        second = replay.requests[1].json
    sent = second['input'][1:]
    assert [i.get('type') for i in sent] == ['reasoning', 'function_call', 'function_call_output']
    assert sent[0]['encrypted_content']
    assert sent[1]['call_id'] == want['tool_calls'][0]['id']
    assert sent[2] == {'type': 'function_call_output', 'call_id': want['tool_calls'][0]['id'], 'output': 'got 6666'}


def test_error_event_mid_stream_keeps_the_partial_text(server: ReplayServer) -> None:
    body = recorded('responses-answer.sse')
    cut = body.index(b'event: response.output_item.done')
    error = b'event: error\ndata: {"type":"error","code":"server_error","message":"The server had an error"}\n\n'
    server.queue(Reply(body=body[:cut] + error, content_type='text/event-stream'))
    seen, exc = collect_until_error(model(server), Prompt.of('hi'))
    assert isinstance(exc, ProviderStreamError)
    assert exc.provider_message == 'The server had an error'
    assert ''.join(c.text for c in seen) == exc.partial_text == 'It is 18 C and sunny in Paris.'
    assert 'sk-secret' not in str(exc)


def test_two_round_tool_loop_with_previous_response_id(server: ReplayServer) -> None:
    for reply in ('responses-tool-call.json', 'responses-answer.json'):
        server.queue(Reply(body=recorded(reply)))
    with model(server, previous_response_id=True) as m:
        response = ChatClient.create(m).prompt('Weather in Paris?').tools(get_weather).call()
    assert response.content() == 'It is 18 C and sunny in Paris.'
    first, second = (r.json for r in server.requests)
    assert 'previous_response_id' not in first
    assert second['previous_response_id'] == 'resp_01'
    assert second['input'] == [
        {'type': 'function_call_output', 'call_id': 'call_W1', 'output': '18 C and sunny in Paris'}
    ]


def test_stream_429_with_retry_after_then_success(server: ReplayServer) -> None:
    server.queue(
        Reply(429, b'{"error": {"message": "Rate limit reached", "type": "requests"}}', headers={'Retry-After': '0'})
    )
    server.queue(Reply.from_file(RECORDED / 'responses-answer.sse'))
    with model(server) as m:
        chunks = collect(m, Prompt.of('hi'))
    assert [c.text for c in chunks[:-1]] == ['It is 18 C', ' and sunny in Paris.']
    final = chunks[-1]
    assert (final.generations[0].finish_reason, final.id) == ('stop', 'resp_03')
    assert final.usage is not None and final.usage.total_tokens == 111
    assert len(server.requests) == 2
