"""A request leaves no reference cycle behind: a service's garbage collector has nothing of ours to find.

A cycle per request is freed only by the cyclic garbage collector, which then runs in the middle of later requests
(see tests/tools/test_failed_calls_leave_no_cycles.py for failed tool calls). Each case runs a request once (what
it builds once, and the event loop's first-use objects), then N more with the collector off, and counts what
``gc.collect()`` finds unreachable.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from toolweave import ChatClient, tool
from toolweave.events import RunEvent
from toolweave.providers import OpenAIChatModel, ScriptedChatModel
from toolweave.providers.scripted import ScriptStep

ROUNDS = 10


@contextmanager
def _collector_off() -> Iterator[list[int]]:
    """Yields a list that holds, afterwards, how many objects ``gc.collect()`` found unreachable."""
    found: list[int] = []
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield found
    finally:
        found.append(gc.collect())
        if was_enabled:
            gc.enable()


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


@pytest.mark.parametrize('events', [False, True], ids=['plain', 'events'])
@pytest.mark.parametrize('mode', ['call', 'acall', 'stream', 'astream'])
def test_a_tool_loop_leaves_no_cycle(mode: str, events: bool, caplog: pytest.LogCaptureFixture) -> None:
    """A two-round run (tools that succeed, raise, get invalid arguments; then the answer) in every path.

    The streaming engine held each round's ``_StreamRound``, which held the engine back: a cycle per streamed
    request that took the request, its advisors' chain, the manager's batch and the event queue with it.
    """
    caplog.set_level(logging.CRITICAL, logger='toolweave')  # the failed calls' warnings, kept by the handler
    client = ChatClient.builder(ScriptedChatModel(_script(ROUNDS + 1))).build()
    seen: list[RunEvent] = []
    loop = asyncio.new_event_loop()

    def request() -> str:
        spec = client.prompt('Weather in Paris?').tools(get_weather, get_forecast)
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
        with _collector_off() as found:
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
        with _collector_off() as found:
            for _ in range(ROUNDS):
                loop.run_until_complete(one_loop())
    finally:
        loop.close()
    assert found == [0]
