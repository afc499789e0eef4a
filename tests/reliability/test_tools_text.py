"""Text UTF-8 cannot encode never breaks the tool loop, a ToolResponseMessage, a span or the next request.

Attack: a tool lists a directory holding a file whose name is not UTF-8 (``b'\\xff.txt'``: Python
gives ``'\\udcff.txt'``) and adds a lone surrogate of its own; a tool fails with such a message; the
model's arguments carry one. Against a real loopback provider (``ReplayServer`` + ``OpenAIChatModel``)
the loop must complete in ``call()``, ``acall()`` and ``stream()`` with U+FFFD in the next request
body; the responses, the return-direct answer and every span attribute hold U+FFFD instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tool_faults import MODES, run
from toolweave import ChatClient, tool
from toolweave.advisors import ToolCallingAdvisor
from toolweave.chat import ToolResponseMessage
from toolweave.providers import OpenAIChatModel, RetryPolicy, ScriptedChatModel
from toolweave.providers.replay import ReplayServer, Reply
from toolweave.tools import DefaultToolCallingManager, ToolContext

S = ScriptedChatModel
FFFD = '\ufffd'


@pytest.fixture
def odd_directory(tmp_path: Path) -> Path:
    """A directory holding ``b'\\xff.txt'`` (not UTF-8) and ``plain.txt``."""
    os.close(os.open(os.fsencode(tmp_path) + b'/\xff.txt', os.O_CREAT | os.O_WRONLY, 0o600))
    (tmp_path / 'plain.txt').write_text('x')
    return tmp_path


def listing_tool() -> Any:
    @tool
    def list_files(ctx: ToolContext) -> str:
        """The file names of the directory, plus a lone surrogate of the tool's own."""
        return ', '.join(sorted(os.listdir(ctx['directory']))) + ' \ud800'

    return list_files


def completion(message: dict[str, Any], finish_reason: str) -> bytes:
    body = {'id': 'c1', 'object': 'chat.completion', 'model': 'm', 'choices': [{'index': 0, 'message': message}]}
    body['choices'][0]['finish_reason'] = finish_reason
    return json.dumps(body).encode()


def sse(*deltas: dict[str, Any], finish_reason: str) -> bytes:
    chunks = [{'index': 0, 'delta': d, 'finish_reason': None} for d in deltas]
    chunks.append({'index': 0, 'delta': {}, 'finish_reason': finish_reason})
    events = [{'id': 's1', 'object': 'chat.completion.chunk', 'model': 'm', 'choices': [c]} for c in chunks]
    return b''.join(b'data: ' + json.dumps(e).encode() + b'\n\n' for e in events) + b'data: [DONE]\n\n'


def replies(streaming: bool) -> list[Reply]:
    call = {'id': 'call_1', 'type': 'function', 'function': {'name': 'list_files', 'arguments': '{}'}}
    if not streaming:
        return [
            Reply(body=completion({'role': 'assistant', 'content': None, 'tool_calls': [call]}, 'tool_calls')),
            Reply(body=completion({'role': 'assistant', 'content': 'Two files.'}, 'stop')),
        ]
    streamed_call = {'index': 0, **call}
    return [
        Reply(
            body=sse({'role': 'assistant', 'tool_calls': [streamed_call]}, finish_reason='tool_calls'),
            content_type='text/event-stream',
        ),
        Reply(
            body=sse({'role': 'assistant', 'content': 'Two files.'}, finish_reason='stop'),
            content_type='text/event-stream',
        ),
    ]


@pytest.mark.parametrize('mode', MODES)
def test_a_non_utf8_file_name_from_a_tool_reaches_the_provider_as_u_fffd(mode, odd_directory):
    with ReplayServer(replies(mode == 'stream')) as server:
        model = OpenAIChatModel(base_url=server.url, api_key='sk-test', model='m', retry=RetryPolicy(max_retries=0))
        with model:
            spec = ChatClient.create(model).prompt('What is in there?').tools(listing_tool())
            text, _ = run(spec.tool_context({'directory': str(odd_directory)}), mode)
        assert text == 'Two files.'
        second = server.requests[1]
    body = second.body.decode('utf-8')  # strict: the body is valid UTF-8
    tool_message = json.loads(body)['messages'][-1]
    assert tool_message == {'role': 'tool', 'tool_call_id': 'call_1', 'content': f'plain.txt, {FFFD}.txt {FFFD}'}


@pytest.mark.parametrize('mode', MODES)
def test_responses_and_return_direct_answers_hold_u_fffd(mode, odd_directory):
    @tool(return_direct=True)
    def show(ctx: ToolContext) -> str:
        return ' '.join(sorted(os.listdir(ctx['directory'])))

    model = ScriptedChatModel([S.tool_call_response('list_files'), S.tool_call_response('show'), S.text_response('-')])
    spec = ChatClient.create(model).prompt('ls').tools(listing_tool(), show)
    _, chat = run(spec.tool_context({'directory': str(odd_directory)}), mode)
    assert chat.result.output.content == f'plain.txt {FFFD}.txt'
    responses = model.prompts[1].messages[-1]
    assert isinstance(responses, ToolResponseMessage)
    assert responses.responses[0].response_data == f'plain.txt, {FFFD}.txt {FFFD}'


@pytest.mark.parametrize('mode', MODES)
def test_lone_surrogates_in_the_models_arguments_reach_the_tool_as_u_fffd(mode):
    seen: list[str] = []

    @tool
    def echo(text: str) -> str:
        seen.append(text)
        return text

    arguments = '{"text": "a\udcffb"}'  # as a provider decodes a "\udcff" escape
    model = ScriptedChatModel([S.tool_call_response('echo', arguments), S.text_response('ok')])
    assert run(ChatClient.create(model).prompt('echo').tools(echo), mode)[0] == 'ok'
    assert seen == [f'a{FFFD}b']
    assert model.prompts[1].messages[-1].responses[0].response_data == f'a{FFFD}b'


@pytest.mark.parametrize('mode', MODES)
def test_span_attributes_never_hold_lone_surrogates(mode, monkeypatch, odd_directory):
    import toolweave.advisors.tool_calling as loop_module
    import toolweave.tools.manager as manager_module

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(loop_module, '_tracer', provider.get_tracer('toolweave'))
    monkeypatch.setattr(manager_module, '_tracer', provider.get_tracer('toolweave'))

    @tool
    def fail(path: str) -> str:
        raise FileNotFoundError(f'no such file: {path} \udcfe')

    script = [
        S.tool_call_response('list_files', '{}', more=[('fail', '{"path": "\udcff.txt"}')]),
        S.text_response('done'),
    ]
    manager = DefaultToolCallingManager(record_content=True)
    client = ChatClient.builder(ScriptedChatModel(script)).tool_calling_advisor(ToolCallingAdvisor(manager)).build()
    spec = client.prompt('ls').tools(listing_tool(), fail).tool_context({'directory': str(odd_directory)})
    assert run(spec, mode)[0] == 'done'
    tool_spans = {s.name: s for s in exporter.get_finished_spans() if s.name.startswith('execute_tool')}
    assert set(tool_spans) == {'execute_tool list_files', 'execute_tool fail'}
    for span in exporter.get_finished_spans():
        for value in [*span.attributes.values(), span.status.description or '']:
            if isinstance(value, str):
                value.encode('utf-8')  # strict: an exporter can send it
    assert tool_spans['execute_tool fail'].attributes['gen_ai.tool.call.arguments'] == f'{{"path": "{FFFD}.txt"}}'
    assert tool_spans['execute_tool fail'].status.description == f'no such file: {FFFD}.txt {FFFD}'
    result = tool_spans['execute_tool list_files'].attributes['gen_ai.tool.call.result']
    assert result == f'plain.txt, {FFFD}.txt {FFFD}'
