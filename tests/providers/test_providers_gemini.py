"""GeminiChatModel through the replay server: corpus streams, request bodies, a two-round tool loop, faults."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.core_fixtures import corpus_streams, load_stream
from support.provider_fixtures import RECORDED, check_stream_against_expected, collect, collect_until_error, recorded
from support.weather import WeatherTool, get_weather
from toolweave import ChatClient, tool
from toolweave.chat import (
    AssistantMessage,
    ChatOptions,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.exceptions import AuthenticationError, IncompleteStreamError, ProviderStreamError
from toolweave.providers import GeminiChatModel, RetryPolicy
from toolweave.providers.replay import ReplayChatModel, ReplayServer, Reply

STREAMS = corpus_streams('gemini')
KEY = 'AIzaSy-secret-key'
NULLABLE_UNIT = {
    'type': 'object',
    'properties': {'city': {'type': 'string'}, 'unit': {'type': ['string', 'null']}},
    'required': ['city'],
}


def model(server: ReplayServer, **kwargs: Any) -> GeminiChatModel:
    return GeminiChatModel(base_url=server.url, api_key=KEY, model='gemini-2.5-flash', **kwargs)


def test_corpus_has_the_gemini_streams() -> None:
    assert [n[:3] for n in STREAMS] == ['007', '008', '018']


@pytest.mark.parametrize('name', STREAMS)
@pytest.mark.parametrize('piece', [0, 5])
def test_corpus_stream(server: ReplayServer, name: str, piece: int) -> None:
    body, want = load_stream(name)
    server.queue(Reply(body=body, content_type='text/event-stream', piece=piece))
    with model(server) as m:
        chunks = collect(m, Prompt.of('hi'))
    check_stream_against_expected(chunks, want, 'tool_calls')
    assert server.requests[-1].path == '/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
    assert server.requests[-1].headers['x-goog-api-key'] == KEY
    final = chunks[-1]
    parts = final.generations[0].output.metadata['gemini_parts']
    assert [p['functionCall']['name'] for p in parts] == [c['name'] for c in want['tool_calls']]
    assert [p.get('thoughtSignature') for p in parts] == [c['thought_signature'] for c in want['tool_calls']]
    assert [p['functionCall']['args'] for p in parts] == [c['arguments'] for c in want['tool_calls']]


def test_request_body_snapshot() -> None:
    prompt = Prompt(
        (
            SystemMessage('Be brief.'),
            UserMessage('Weather in Paris?'),
            AssistantMessage(
                None,
                (ToolCall('r1-call-0', 'function', 'get_weather', '{"city": "Paris"}'),),
                {'tool_call_extras': {'r1-call-0': {'thought_signature': 'sig=='}}},
            ),
            ToolResponseMessage((ToolResponse('r1-call-0', 'get_weather', '18 C'),)),
            UserMessage('And in Rome?'),
        ),
        ToolCallingChatOptions(
            tool_callbacks=(WeatherTool(NULLABLE_UNIT),),
            tool_choice='required',
            stop=('END',),
            temperature=0.2,
            max_tokens=100,
        ),
    )
    m = GeminiChatModel(api_key='k', model='gemini-2.5-flash')
    body = m.request_body(prompt, stream=True)
    assert body == {
        'systemInstruction': {'parts': [{'text': 'Be brief.'}]},
        'contents': [
            {'role': 'user', 'parts': [{'text': 'Weather in Paris?'}]},
            {
                'role': 'model',
                'parts': [
                    {'functionCall': {'name': 'get_weather', 'args': {'city': 'Paris'}}, 'thoughtSignature': 'sig=='}
                ],
            },
            {
                'role': 'user',
                'parts': [
                    {'functionResponse': {'name': 'get_weather', 'response': {'result': '18 C'}}},
                    {'text': 'And in Rome?'},
                ],
            },
        ],
        'tools': [
            {
                'functionDeclarations': [
                    {
                        'name': 'get_weather',
                        'description': 'Current weather for a city',
                        'parameters': {
                            'type': 'object',
                            'properties': {'city': {'type': 'string'}, 'unit': {'type': 'string', 'nullable': True}},
                            'required': ['city'],
                        },
                    }
                ]
            }
        ],
        'toolConfig': {'functionCallingConfig': {'mode': 'ANY'}},
        'generationConfig': {'temperature': 0.2, 'maxOutputTokens': 100, 'stopSequences': ['END']},
    }
    assert m.request_body(prompt, stream=False) == body


def test_function_response_id_only_when_the_api_gave_one() -> None:
    kept = [{'functionCall': {'id': 'fc_7', 'name': 'f', 'args': {}}}]
    prompt = Prompt(
        (
            UserMessage('go'),
            AssistantMessage(None, (ToolCall('fc_7', 'function', 'f', '{}'),), {'gemini_parts': kept}),
            ToolResponseMessage((ToolResponse('fc_7', 'f', '{"ok": true}'),)),
        ),
        ChatOptions(model='gemini-3-pro-preview'),
    )
    body = GeminiChatModel(api_key='k').request_body(prompt)
    assert body['contents'][1] == {'role': 'model', 'parts': kept}
    assert body['contents'][2] == {
        'role': 'user',
        'parts': [{'functionResponse': {'id': 'fc_7', 'name': 'f', 'response': {'ok': True}}}],
    }
    assert 'tools' not in body and 'generationConfig' not in body


def test_model_is_required() -> None:
    with pytest.raises(ValueError, match='needs a model name'):
        GeminiChatModel(api_key='k').call(Prompt.of('hi'))


def test_key_never_shown(server: ReplayServer) -> None:
    error = b'{"error": {"code": 400, "message": "API key not valid: AIzaSy-secret-key", "status": "INVALID_ARGUMENT"}}'
    server.queue(Reply(401, error))
    m = model(server)
    with pytest.raises(AuthenticationError) as info:
        m.call(Prompt.of('hi'))
    assert server.requests[-1].path == '/models/gemini-2.5-flash:generateContent'
    assert 'key=' not in server.requests[-1].path
    for text in (str(info.value), repr(info.value), info.value.body or '', repr(m)):
        assert KEY not in text
    assert info.value.status_code == 401
    m.close()


def test_call_maps_usage_reasoning_and_signatures(server: ReplayServer) -> None:
    server.queue(Reply(body=recorded('gemini-tool-call.json')))
    with model(server) as m:
        response = m.call(Prompt.of('Weather in Paris?'))
    generation = response.generations[0]
    assert generation.finish_reason == 'tool_calls'
    assert response.metadata['native_finish_reason'] == 'STOP'
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ('gem_resp_1-call-0', 'get_weather', '{"city":"Paris"}')
    ]
    message = generation.output
    assert message.metadata['reasoning'] == 'The user wants the weather; call the tool.'
    assert message.metadata['tool_call_extras'] == {'gem_resp_1-call-0': {'thought_signature': 'CiQBcsjafGsig=='}}
    assert response.usage is not None
    # 16 candidate + 42 thought tokens are completion tokens (issue 12): 52 + 58 == 110
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.total_tokens) == (
        52,
        58,
        110,
    )
    assert response.usage.native['thoughtsTokenCount'] == 42
    assert (response.id, response.model) == ('gem_resp_1', 'gemini-2.5-flash')


SIGNED_CALL = {
    'role': 'model',
    'parts': [
        {'functionCall': {'name': 'get_weather', 'args': {'city': 'Paris'}}, 'thoughtSignature': 'CiQBcsjafGsig=='}
    ],
}
TOOL_RESULT = {
    'role': 'user',
    'parts': [{'functionResponse': {'name': 'get_weather', 'response': {'result': '18 C and sunny in Paris'}}}],
}


def test_two_round_tool_loop_blocking_and_async(server: ReplayServer) -> None:
    for reply in ('gemini-tool-call.json', 'gemini-answer.json') * 2:
        server.queue(Reply(body=recorded(reply)))
    with model(server) as m:
        client = ChatClient.builder(m).default_system('Be brief.').build()
        response = client.prompt('Weather in Paris?').tools(get_weather).call()
        answer = asyncio.run(client.prompt('Weather in Paris?').tools(get_weather).acall())
    assert response.content() == answer.content() == 'It is 18 C and sunny in Paris.'
    second = server.requests[1].json
    assert second['systemInstruction'] == {'parts': [{'text': 'Be brief.'}]}
    assert second['contents'] == [{'role': 'user', 'parts': [{'text': 'Weather in Paris?'}]}, SIGNED_CALL, TOOL_RESULT]
    assert server.requests[3].json == second


def test_two_round_tool_loop_streaming() -> None:
    body, _ = load_stream('007-gemini3-functioncall-thought-signature')
    turns = [Reply(body=body, content_type='text/event-stream'), RECORDED / 'gemini-answer.sse']

    @tool
    def get_country() -> str:
        """The user's country."""
        return 'France'

    with ReplayChatModel(
        lambda url: GeminiChatModel(base_url=url, api_key='k', model='gemini-3-pro-preview'), turns
    ) as replay:
        client = ChatClient.create(replay)

        async def run() -> list[str]:
            return [p async for p in client.prompt('Where am I?').tools(get_country).stream().content()]

        assert ''.join(asyncio.run(run())) == 'It is 18 C and sunny in Paris.'
        second = replay.requests[1].json
        _, want = load_stream('007-gemini3-functioncall-thought-signature')
        assert second['contents'][1:] == [
            {
                'role': 'model',
                'parts': [
                    {
                        'functionCall': {'name': 'get_country', 'args': {}},
                        'thoughtSignature': want['tool_calls'][0]['thought_signature'],
                    }
                ],
            },
            {
                'role': 'user',
                'parts': [{'functionResponse': {'name': 'get_country', 'response': {'result': 'France'}}}],
            },
        ]


def test_connection_closed_mid_stream_keeps_the_partial_text(server: ReplayServer) -> None:
    body = recorded('gemini-answer.sse')
    server.queue(Reply(body=body, content_type='text/event-stream', close_after=body.index(b'\n\n') + 2))
    seen, error = collect_until_error(model(server, retry=RetryPolicy(0)), Prompt.of('hi'))
    assert isinstance(error, IncompleteStreamError)
    assert ''.join(c.text for c in seen) == error.partial_text == 'It is 18 C'


def test_429_with_retry_after_then_success(server: ReplayServer) -> None:
    server.queue(Reply(429, b'{"error": {"code": 429, "message": "Resource exhausted"}}', headers={'Retry-After': '0'}))
    server.queue(Reply(body=recorded('gemini-answer.json')))
    with model(server) as m:
        assert m.call(Prompt.of('hi')).text == 'It is 18 C and sunny in Paris.'
    assert len(server.requests) == 2


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('GEMINI_API_KEY', raising=False)
    monkeypatch.setenv('GOOGLE_API_KEY', 'g-env')
    assert GeminiChatModel().headers(False)['x-goog-api-key'] == 'g-env'
    monkeypatch.setenv('GEMINI_API_KEY', 'gem-env')
    assert GeminiChatModel().headers(False)['x-goog-api-key'] == 'gem-env'


def test_error_payload_in_a_200_stream_keeps_the_partial_text(server: ReplayServer) -> None:
    body = recorded('gemini-answer.sse')
    first = body[: body.index(b'\n\n') + 2]
    error = b'data: {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}\n\n'
    server.queue(Reply(body=first + error, content_type='text/event-stream', headers={'x-request-id': 'g-req-1'}))
    seen, exc = collect_until_error(model(server), Prompt.of('hi'))
    assert isinstance(exc, ProviderStreamError)
    assert exc.provider_message == 'The model is overloaded.'
    assert exc.request_id == 'g-req-1'
    assert ''.join(c.text for c in seen) == exc.partial_text == 'It is 18 C'
    assert len(server.requests) == 1  # never retried once a byte of the stream was delivered


def test_stream_500_then_success_is_retried(server: ReplayServer) -> None:
    server.queue(Reply(500, b'{"error": {"code": 500, "message": "Internal error"}}'))
    server.queue(Reply.from_file(RECORDED / 'gemini-answer.sse'))
    with model(server, retry=RetryPolicy(max_retries=1, initial_delay=0.0)) as m:
        chunks = collect(m, Prompt.of('hi'))
    assert ''.join(c.text for c in chunks) == 'It is 18 C and sunny in Paris.'
    assert chunks[-1].generations[0].finish_reason == 'stop'
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 91
    assert len(server.requests) == 2


def test_streamed_text_signature_is_sent_back(server: ReplayServer) -> None:
    # Gemini 3 signs a text answer on a (possibly empty) text part; it goes back on the text part
    body = (
        b'data: {"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}, "index": 0}]}\n\n'
        b'data: {"candidates": [{"content": {"parts": [{"text": "", "thoughtSignature": "txtsig=="}], "role": "model"},'
        b' "finishReason": "STOP", "index": 0}], "responseId": "r9", "modelVersion": "gemini-3-pro-preview"}\n\n'
    )
    server.queue(Reply(body=body, content_type='text/event-stream'))
    with model(server) as m:
        chunks = collect(m, Prompt.of('hi'))
        assert [c.text for c in chunks] == ['Hello', '']
        message = chunks[-1].generations[0].output
        assert message.metadata['gemini_parts'] == [{'text': 'Hello', 'thoughtSignature': 'txtsig=='}]
        next_round = Prompt((UserMessage('hi'), AssistantMessage('Hello', (), message.metadata), UserMessage('more')))
        assert m.request_body(next_round)['contents'][1] == {
            'role': 'model',
            'parts': [{'text': 'Hello', 'thoughtSignature': 'txtsig=='}],
        }
