"""Issue 12, real providers, through the replay server: Ollama /v1 and Mistral tool-call streams, Gemini usage and
tools without parameters, in call(), acall() and stream()."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from support.provider_fixtures import collect, recorded
from support.weather import get_weather
from toolweave import ChatClient, tool
from toolweave.chat import ChatResponse, Prompt, ToolCallingChatOptions
from toolweave.chat.stream import ToolCallDeltas
from toolweave.providers import GeminiChatModel, OpenAIChatModel
from toolweave.providers.replay import ReplayServer, Reply
from toolweave.tools.provider import to_tool_callbacks


@tool
def get_time() -> str:
    """The current time."""
    return '12:00'


def sse(*payloads: dict[str, Any]) -> Reply:
    body = b''.join(b'data: ' + json.dumps(p).encode() + b'\n\n' for p in payloads) + b'data: [DONE]\n\n'
    return Reply(body=body, content_type='text/event-stream')


def chat_chunk(stream_id: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        'id': stream_id,
        'object': 'chat.completion.chunk',
        'model': 'm',
        'choices': [{'index': 0, 'delta': delta, 'finish_reason': finish}],
    }


def answer(text: str) -> Reply:
    return sse(chat_chunk('chatcmpl-2', {'role': 'assistant', 'content': text}), chat_chunk('chatcmpl-2', {}, 'stop'))


# Ollama's OpenAI-compatible /v1: every parallel call at index 0, each whole, with its own id.
OLLAMA_V1 = sse(
    chat_chunk(
        'chatcmpl-7',
        {
            'role': 'assistant',
            'content': '',
            'tool_calls': [
                {
                    'id': 'call_x1',
                    'index': 0,
                    'type': 'function',
                    'function': {'name': 'get_weather', 'arguments': '{"city":"Paris"}'},
                }
            ],
        },
    ),
    chat_chunk(
        'chatcmpl-7',
        {
            'role': 'assistant',
            'content': '',
            'tool_calls': [
                {'id': 'call_x2', 'index': 0, 'type': 'function', 'function': {'name': 'get_time', 'arguments': '{}'}}
            ],
        },
    ),
    chat_chunk('chatcmpl-7', {'role': 'assistant', 'content': ''}, 'tool_calls'),
)

# Mistral-style: index-0 calls streamed without ids.
MISTRAL = sse(
    chat_chunk('cmpl-e5c', {'role': 'assistant', 'content': ''}),
    chat_chunk(
        'cmpl-e5c', {'tool_calls': [{'index': 0, 'function': {'name': 'get_weather', 'arguments': '{"city": '}}]}
    ),
    chat_chunk('cmpl-e5c', {'tool_calls': [{'index': 0, 'function': {'arguments': '"Paris"}'}}]}),
    chat_chunk('cmpl-e5c', {}, 'tool_calls'),
)

# Calls whose fragments arrive out of index order.
OUT_OF_ORDER = sse(
    chat_chunk('c-9', {'tool_calls': [{'index': 1, 'id': 'b', 'function': {'name': 'get_time', 'arguments': '{}'}}]}),
    chat_chunk(
        'c-9',
        {'tool_calls': [{'index': 0, 'id': 'a', 'function': {'name': 'get_weather', 'arguments': '{"city": "Oslo"}'}}]},
    ),
    chat_chunk('c-9', {}, 'tool_calls'),
)


def openai(server: ReplayServer) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.url, api_key='k', model='m')


def final(server: ReplayServer, reply: Reply) -> ChatResponse:
    server.queue(reply)
    options = ToolCallingChatOptions(tool_callbacks=to_tool_callbacks(get_weather, get_time))
    with openai(server) as model:
        chunks = collect(model, Prompt.of('hi', options))
    return chunks[-1]


def streamed_loop(server: ReplayServer, first: Reply) -> tuple[str, list[dict[str, Any]]]:
    """A two-round stream() loop: the text, and the messages of the second request."""
    server.queue(first, answer('done'))
    with openai(server) as model:
        client = ChatClient.create(model)

        async def run() -> str:
            return ''.join([p async for p in client.prompt('hi').tools(get_weather, get_time).stream().content()])

        text = asyncio.run(run())
    return text, server.requests[-1].json['messages']


def test_ollama_v1_parallel_calls_at_index_0_are_separate_calls_and_all_run(server: ReplayServer) -> None:
    response = final(server, OLLAMA_V1)
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ('call_x1', 'get_weather', '{"city":"Paris"}'),
        ('call_x2', 'get_time', '{}'),
    ]
    text, messages = streamed_loop(server, OLLAMA_V1)
    assert text == 'done'
    assistant, *results = messages[1:]
    assert [c['id'] for c in assistant['tool_calls']] == ['call_x1', 'call_x2']
    assert [(m['tool_call_id'], m['content']) for m in results] == [
        ('call_x1', '18 C and sunny in Paris'),
        ('call_x2', '12:00'),
    ]


def test_mistral_calls_without_ids_get_one_synthesised_id_sent_back_consistently(server: ReplayServer) -> None:
    response = final(server, MISTRAL)
    (call,) = response.tool_calls
    assert re.fullmatch(r'[0-9A-Za-z]{9}', call.id)  # Mistral accepts only such ids on the next request
    assert (call.name, call.arguments) == ('get_weather', '{"city": "Paris"}')
    text, messages = streamed_loop(server, MISTRAL)
    assert text == 'done'
    assistant, result = messages[1:]
    assert assistant['tool_calls'][0]['id'] == result['tool_call_id'] == call.id  # the same id every time


def test_streamed_tool_calls_are_returned_in_order_of_index(server: ReplayServer) -> None:
    response = final(server, OUT_OF_ORDER)
    assert [(c.id, c.name) for c in response.tool_calls] == [('a', 'get_weather'), ('b', 'get_time')]


# --- Gemini -------------------------------------------------------------------------------------------------------

GEMINI_USAGE = {
    'promptTokenCount': 40,
    'toolUsePromptTokenCount': 12,
    'candidatesTokenCount': 16,
    'thoughtsTokenCount': 42,
    'totalTokenCount': 110,
}


def gemini(server: ReplayServer) -> GeminiChatModel:
    return GeminiChatModel(base_url=server.url, api_key='k', model='gemini-2.5-flash')


def gemini_answer(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        'candidates': [{'content': {'parts': [{'text': 'Hi.'}], 'role': 'model'}, 'finishReason': 'STOP'}],
        'usageMetadata': usage,
        'modelVersion': 'gemini-2.5-flash',
        'responseId': 'r1',
    }


@pytest.mark.parametrize('path', ['call', 'acall', 'stream'])
def test_gemini_thought_tokens_are_completion_tokens(server: ReplayServer, path: str) -> None:
    """prompt = promptTokenCount + toolUsePromptTokenCount, completion = candidates + thoughts: their sum is the total."""
    payload = json.dumps(gemini_answer(GEMINI_USAGE)).encode()
    if path == 'stream':
        server.queue(Reply(body=b'data: ' + payload + b'\n\n', content_type='text/event-stream'))
    else:
        server.queue(Reply(body=payload))
    with gemini(server) as model:
        if path == 'call':
            response = model.call(Prompt.of('hi'))
        elif path == 'acall':
            response = asyncio.run(model.acall(Prompt.of('hi')))
        else:
            response = collect(model, Prompt.of('hi'))[-1]
    usage = response.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (52, 58, 110)
    assert usage.prompt_tokens + usage.completion_tokens == usage.total_tokens
    assert usage.completion_tokens_details == {'reasoning_tokens': 42}
    assert usage.native == GEMINI_USAGE


def test_gemini_usage_without_thoughts_is_unchanged(server: ReplayServer) -> None:
    server.queue(Reply(body=recorded('gemini-answer.json')))
    with gemini(server) as model:
        usage = model.call(Prompt.of('hi')).usage
    assert usage is not None and usage.native is not None
    native = usage.native
    assert (usage.prompt_tokens, usage.completion_tokens) == (
        native['promptTokenCount'],
        native['candidatesTokenCount'],
    )
    assert usage.completion_tokens_details is None


def test_gemini_tool_without_parameters_is_declared_without_parameters(server: ReplayServer) -> None:
    server.queue(Reply(body=recorded('gemini-answer.json')))
    options = ToolCallingChatOptions(tool_callbacks=to_tool_callbacks(get_weather, get_time))
    with gemini(server) as model:
        model.call(Prompt.of('hi', options))
    declarations = {d['name']: d for d in server.requests[-1].json['tools'][0]['functionDeclarations']}
    assert 'parameters' not in declarations['get_time']  # Gemini rejects an OBJECT with empty properties
    assert declarations['get_time']['description'] == 'The current time.'
    assert declarations['get_weather']['parameters']['properties'] == {'city': {'type': 'string'}}


def test_tool_call_deltas_of_ollama_v1_calls_at_index_0_are_separate_calls() -> None:
    """The run events' fragment reader follows the aggregator: another id at index 0 is another call."""
    deltas = ToolCallDeltas('openai-chat')
    payloads = [json.loads(line[6:]) for line in OLLAMA_V1.body.split(b'\n\n') if line.startswith(b'data: {')]
    got = [d for p in payloads for d in deltas.feed(p)]
    assert [(d.index, d.id, d.name) for d in got] == [(0, 'call_x1', 'get_weather'), (1, 'call_x2', 'get_time')]
