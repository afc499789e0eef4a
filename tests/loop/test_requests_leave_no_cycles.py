"""A request leaves no reference cycle behind: a service's garbage collector has nothing of ours to find.

A cycle per request is freed only by the cyclic garbage collector, which then runs in the middle of later requests
(see tests/tools/test_failed_calls_leave_no_cycles.py for failed tool calls). Each case runs a request once (what
it builds once, and the event loop's first-use objects), then N more with the collector off, and counts what
``gc.collect()`` finds unreachable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import types
import weakref
from typing import Any

import pytest
from support.core_fixtures import load_stream
from support.garbage import collector_off, garbage_kept
from support.keepalive_server import Answer, KeepAliveServer
from support.provider_fixtures import build_model, recorded
from toolweave import ChatClient, tool
from toolweave.advisors import MessageChatMemoryAdvisor
from toolweave.chat import Prompt
from toolweave.events import RunEvent, RunFinished
from toolweave.exceptions import ProviderError, ProviderStreamError
from toolweave.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory, SqliteChatMemoryRepository
from toolweave.providers import OpenAIChatModel, ScriptedChatModel
from toolweave.providers.replay import ReplayServer, Reply
from toolweave.providers.scripted import ScriptStep

ROUNDS = 10


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f'18 C and sunny in {city}'


@tool
def get_forecast(city: str) -> str:
    """Tomorrow's weather for a city."""
    raise LookupError(f'no forecast for {city}')


def _script(requests: int) -> list[ScriptStep]:
    """Two rounds per request: a call that runs, one that raises and one with invalid arguments; then the answer."""
    steps: list[ScriptStep] = []
    for _ in range(requests):
        steps.append(
            ScriptedChatModel.tool_call_response(
                'get_weather',
                {'city': 'Paris'},
                more=[('get_forecast', {'city': 'Paris'}), ('get_weather', {'city': 3, 'zz': 1})],
                usage=ScriptedChatModel.usage(10, 5),
            )
        )
        steps.append(ScriptedChatModel.text_response('Sunny.', usage=ScriptedChatModel.usage(20, 2)))
    return steps


def _memory(kind: str) -> MessageChatMemoryAdvisor:
    repository = InMemoryChatMemoryRepository() if kind == 'in-memory' else SqliteChatMemoryRepository(':memory:')
    return MessageChatMemoryAdvisor(MessageWindowChatMemory(repository, max_messages=20))


@pytest.mark.parametrize('memory', [None, 'in-memory', 'sqlite'], ids=['no memory', 'in-memory', 'sqlite'])
@pytest.mark.parametrize('events', [False, True], ids=['plain', 'events'])
@pytest.mark.parametrize('mode', ['call', 'acall', 'stream', 'astream'])
def test_a_tool_loop_leaves_no_cycle(
    mode: str, events: bool, memory: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    """A two-round run (tools that succeed, raise, get invalid arguments; then the answer) in every path, alone and
    with chat memory around the loop.

    The streaming engine held each round's ``_StreamRound``, which held the engine back: a cycle per streamed
    request that took the request, its advisors' chain, the manager's batch and the event queue with it.
    """
    caplog.set_level(logging.CRITICAL, logger='toolweave')  # the failed calls' warnings, kept by the handler
    builder = ChatClient.builder(ScriptedChatModel(_script(ROUNDS + 1)))
    if memory is not None:
        builder = builder.default_advisors(_memory(memory))
    client = builder.build()
    seen: list[RunEvent] = []
    loop = asyncio.new_event_loop()

    def request() -> str:
        spec = client.prompt('Weather in Paris?').tools(get_weather, get_forecast)
        if memory is not None:
            spec = spec.advisors(chat_memory_conversation_id='user-42')
        if mode == 'call':
            return (spec.call(on_event=seen.append) if events else spec.call()).content() or ''
        if mode == 'acall':
            return loop.run_until_complete(spec.acall(on_event=seen.append) if events else spec.acall()).content() or ''
        if mode == 'stream':
            stream = spec.stream()
            if events:
                seen.extend(stream.events())
                return ''
            return ''.join(stream.content())

        async def astream() -> str:
            stream = spec.stream()
            if events:
                seen.extend([event async for event in stream.events()])
                return ''
            return ''.join([piece async for piece in stream.content()])

        return loop.run_until_complete(astream())

    try:
        answers = [request()]
        with collector_off() as found:
            answers += [request() for _ in range(ROUNDS)]
    finally:
        loop.close()
    assert set(answers) == {'' if events and mode in ('stream', 'astream') else 'Sunny.'}
    if events:
        assert sum(type(e).__name__ == 'RunFinished' for e in seen) == ROUNDS + 1
    assert found == [0]


def test_a_models_client_for_an_event_loop_is_freed_without_the_collector() -> None:
    """A model makes one ``httpx.AsyncClient`` per event loop it runs on; a sync ``stream()`` runs on a private loop,
    so a service streaming from blocking code makes one per request.

    Its pool got the linear bookkeeping (``providers/_pool.py``) as a method bound to the pool, kept in the pool: a
    cycle per client (70 objects for 10 clients). Only the client is tested here: a real stream on a fresh loop also
    opens a fresh connection, and asyncio's ``_SelectorSocketTransport`` keeps a bound method of itself
    (``_read_ready_cb``, CPython 3.11), a cycle per connection that is not ours.
    """
    model = OpenAIChatModel(base_url='http://127.0.0.1:9/v1', api_key='sk-test', model='m')

    async def one_loop() -> None:
        await model._transport._new_async_client().aclose()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(one_loop())
        with collector_off() as found:
            for _ in range(ROUNDS):
                loop.run_until_complete(one_loop())
    finally:
        loop.close()
    assert found == [0]


@tool(name='updateIssueList')
def update_issue_list() -> str:
    """Update the issue list."""
    return 'updated'


def _recorded_rounds(provider: str) -> dict[tuple[bool, bool], bytes]:
    """(streamed, tools answered already) -> the recorded body the server answers."""
    if provider == 'openai':
        return {
            (True, False): load_stream('002-openai-chat-single-call-usage-chunk')[0],  # get_weather('Mexico City')
            (True, True): load_stream('023-llamacpp-gemma270m-answer-after-tool')[0],
        }
    return {
        (True, False): load_stream('016-anthropic-tool-no-args-empty-partial-json')[0],  # updateIssueList()
        (True, True): recorded('anthropic-answer.sse'),
        (False, False): recorded('anthropic-tool-use.json'),  # get_weather('Paris')
        (False, True): recorded('anthropic-answer.json'),
    }


def _ours(garbage: list[Any]) -> list[str]:
    """What of toolweave's is among ``garbage``: its objects, functions, bound methods and frames.

    ``type()``, not ``isinstance()``: a dead weak proxy among them raises on ``__class__``.
    """
    found = []
    for thing in garbage:
        kind = type(thing)
        if kind is types.FrameType:
            name = thing.f_code.co_filename
        elif kind is types.MethodType:
            name = getattr(thing.__func__, '__module__', None) or ''
        elif kind is types.FunctionType:
            name = thing.__module__ or ''
        else:
            name = kind.__module__
        if 'toolweave' in name:
            found.append(f'{kind.__name__} {name}')
    return found


@pytest.mark.parametrize(
    ('provider', 'mode'),
    [
        ('openai', 'astream'),
        ('openai', 'astream-events'),
        ('anthropic', 'call'),
        ('anthropic', 'acall'),
        ('anthropic', 'astream'),
        ('anthropic', 'astream-events'),
    ],
)
def test_a_tool_loop_over_http_leaves_nothing_of_ours_to_the_collector(provider: str, mode: str) -> None:
    """A two-round run against a loopback server replaying recorded bodies, the event loop reused as a service does.

    Not ``gc.collect() == 0``: httpx 0.29 binds every response's stream to the response (``Response.stream`` ->
    ``BoundSyncStream``/``BoundAsyncStream._response`` -> the response), a cycle per HTTP request that only httpx can
    remove (encode/httpx pull request 3733). What is ours is tested: no object, function, bound method or frame of
    toolweave among what the collector frees. A sync ``stream()`` is left out: its private loop opens a new
    connection per request, and asyncio's socket transport keeps a bound method of itself (CPython 3.11).
    """
    bodies = _recorded_rounds(provider)

    def answer(path: str, body: bytes) -> Answer:
        request = json.loads(body)
        streamed = bool(request.get('stream'))
        answered = any(
            message.get('role') == 'tool'
            or isinstance(message.get('content'), list)
            and any(part.get('type') == 'tool_result' for part in message['content'])
            for message in request['messages']
        )
        reply = bodies[streamed, answered]
        if not streamed:
            return Answer([reply], content_type='application/json')
        return Answer([event + b'\n\n' for event in reply.split(b'\n\n') if event.strip()])

    with KeepAliveServer(answer) as server:
        model = build_model(provider, server.url, key='sk-test-123')
        client = ChatClient.builder(model).build()
        loop = asyncio.new_event_loop()
        seen: list[RunEvent] = []

        def request() -> str:
            spec = client.prompt('Weather in Paris?').tools(get_weather, update_issue_list)
            if mode == 'call':
                return spec.call().content() or ''
            if mode == 'acall':
                return loop.run_until_complete(spec.acall()).content() or ''

            async def astream() -> str:
                stream = spec.stream()
                if mode == 'astream-events':
                    seen.extend([event async for event in stream.events()])
                    finished = seen[-1]
                    assert isinstance(finished, RunFinished)
                    return finished.response.text
                return ''.join([piece async for piece in stream.content()])

            return loop.run_until_complete(astream())

        try:
            answers = [request()]
            with garbage_kept() as garbage:
                answers += [request() for _ in range(ROUNDS)]
        finally:
            model.close()
            loop.run_until_complete(model.aclose())
            loop.close()
    assert len(set(answers)) == 1 and 'It is 18 C' in answers[0]
    assert server.requests == 2 * (ROUNDS + 1)
    assert _ours(garbage) == []


@pytest.mark.parametrize(
    'mode',
    ['model stream', 'model stream_sync', 'client stream', 'client events', 'client sync stream', 'client sync events'],
)
def test_a_stream_that_fails_midway_frees_its_error_without_the_collector(mode: str) -> None:
    """A provider's stream that reports an error midway (an error event): the error raised to the caller, with its
    traceback, is freed as soon as the caller lets it go.

    The stream kept the error in a local of its frame, which the error's traceback holds: a cycle per failed stream,
    with the reader, the aggregator and the response in it. Weak references to the errors, not ``gc.collect()``: a
    failed stream also leaves httpx's cycle (see above) and, its connection closed, asyncio's socket transport's.
    The async cases catch the errors inside the running loop, as a service does (an error leaving
    ``run_until_complete`` stays in its task, which that asyncio frame holds). ``client stream`` is the tool loop's
    ``stream().content()`` and ``events()``, async and sync (``events()`` kept the run's task, which holds the error,
    in a local of the frame that raises it; a sync stream kept its step's task so, on its private loop).
    """
    body = load_stream('004-groq-gptoss-midstream-error-event')[0]
    events = [event + b'\n\n' for event in body.split(b'\n\n') if event.strip()]
    with KeepAliveServer(lambda path, request: Answer(events)) as server:
        model = build_model('openai', server.url, key='sk-test-123')
        client = ChatClient.builder(model).build()
        loop = asyncio.new_event_loop()

        async def stream_once() -> None:
            if mode == 'model stream':
                [chunk async for chunk in model.stream(Prompt.of('hi'))]
            elif mode == 'client events':
                [event async for event in client.prompt('Weather?').tools(get_weather).stream().events()]
            else:
                [piece async for piece in client.prompt('Weather?').tools(get_weather).stream().content()]

        def stream_sync_once() -> None:
            if mode == 'model stream_sync':
                list(model.stream_sync(Prompt.of('hi')))
            elif mode == 'client sync events':
                list(client.prompt('Weather?').tools(get_weather).stream().events())
            else:
                list(client.prompt('Weather?').tools(get_weather).stream().content())

        async def afailures() -> list[weakref.ref[ProviderStreamError]]:
            refs = []
            for _ in range(ROUNDS):
                try:
                    await stream_once()
                except ProviderStreamError as error:
                    refs.append(weakref.ref(error))
            return refs

        def failures() -> list[weakref.ref[ProviderStreamError]]:
            if 'sync' not in mode:
                return loop.run_until_complete(afailures())
            refs = []
            for _ in range(ROUNDS):
                try:
                    stream_sync_once()
                except ProviderStreamError as error:
                    refs.append(weakref.ref(error))
            return refs

        try:
            failures()
            with collector_off():
                alive = [ref() is not None for ref in failures()]
        finally:
            model.close()
            loop.run_until_complete(model.aclose())
            loop.close()
    assert alive == [False] * ROUNDS


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream', 'stream_sync'])
def test_a_failed_http_request_frees_its_error_without_the_collector(mode: str) -> None:
    """A request the provider refuses (HTTP 400, not retried; an error retried until the retries run out ends the
    same way): the error raised to the caller is freed as soon as the caller lets it go.

    The retry loop raised the failed attempt's error while that attempt stayed in locals of the frames the error's
    traceback holds (``_Retrying.after`` and the shell that called it): a cycle per failed request. Weak references,
    as above (httpx's cycle stays, and the loopback server closes each connection).
    """
    with ReplayServer() as server:
        model = build_model('openai', server.url, key='sk-test-123')
        loop = asyncio.new_event_loop()
        refused = Reply(status=400, body=b'{"error": {"message": "bad request"}}')

        async def request_once() -> None:
            if mode == 'acall':
                await model.acall(Prompt.of('hi'))
            else:
                [chunk async for chunk in model.stream(Prompt.of('hi'))]

        async def afailures() -> list[weakref.ref[ProviderError]]:
            refs = []
            for _ in range(ROUNDS):
                server.queue(refused)
                try:
                    await request_once()
                except ProviderError as error:
                    refs.append(weakref.ref(error))
            return refs

        def failures() -> list[weakref.ref[ProviderError]]:
            if mode in ('acall', 'stream'):
                return loop.run_until_complete(afailures())
            refs = []
            for _ in range(ROUNDS):
                server.queue(refused)
                try:
                    model.call(Prompt.of('hi')) if mode == 'call' else list(model.stream_sync(Prompt.of('hi')))
                except ProviderError as error:
                    refs.append(weakref.ref(error))
            return refs

        try:
            assert len(failures()) == ROUNDS
            with collector_off():
                alive = [ref() is not None for ref in failures()]
        finally:
            model.close()
            loop.run_until_complete(model.aclose())
            loop.close()
    assert alive == [False] * ROUNDS
