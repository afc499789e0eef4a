"""A consumer that stops reading a stream closes the upstream connection promptly, without stray errors.

The loopback server streams text events forever (one every 20 ms) and records when the client
closed the connection. Each way of stopping (``break`` inside ``aclosing``, a plain ``break``, task
cancellation, ``asyncio.wait_for`` timeouts, garbage collection of an unfinished generator) must
close it within a second, and leave nothing behind: no loop exception-handler reports ("Task was
destroyed but it is pending", "asynchronous generator is already running"), no warnings (unclosed
transports are ResourceWarnings), no unraisable exceptions.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from http_faults import PROVIDERS, STREAM_START, STREAM_TEXT_EVENT, Conn, FaultServer, Request, build_model, stream_head
from toolweave import ChatClient
from toolweave.chat import Prompt

PROMPT = Prompt.of('tell me everything')


def endless(provider: str) -> Callable[[Conn, Request | None], None]:
    def behaviour(conn: Conn, request: Request | None) -> None:
        conn.send(stream_head(provider) + STREAM_START.get(provider, b''))
        while not conn.client_closed(0.02):
            conn.send(STREAM_TEXT_EVENT[provider])

    return behaviour


class Leftovers:
    """What a scenario left behind: loop exception-handler reports, warnings, unraisable exceptions."""

    def __init__(self) -> None:
        self.loop_reports: list[dict[str, Any]] = []
        self.unraisable: list[Any] = []
        self.warnings: list[warnings.WarningMessage] = []

    def run(self, scenario: Callable[[], Awaitable[float]]) -> float:
        """Run ``scenario`` in a fresh loop; returns the time (monotonic) the consumer stopped."""

        async def main() -> float:
            asyncio.get_running_loop().set_exception_handler(lambda loop, context: self.loop_reports.append(context))
            return await scenario()

        previous = sys.unraisablehook
        sys.unraisablehook = self.unraisable.append
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                stopped = asyncio.run(main())
                gc.collect()
            self.warnings = list(caught)
        finally:
            sys.unraisablehook = previous
        return stopped

    def assert_clean(self) -> None:
        assert self.loop_reports == []
        assert [str(w.message) for w in self.warnings] == []
        assert [str(u.exc_value) for u in self.unraisable] == []


CLOSE_BOUND = 2.5
"""Seconds after the consumer stopped by which the endless upstream must be closed: a bound against a leak
(the server never ends the stream), generous for a loaded machine (1.13 s was seen under load), not a speed target."""


def closed_within(server: FaultServer, stopped: float) -> float:
    conn = server.connections[-1]
    assert conn.client_closed(3.0), 'the upstream connection was never closed'
    return conn.closed_at[0] - stopped


async def first_chunk_then(model: Any, stop: Callable[[Any], Awaitable[None]]) -> float:
    stream = model.stream(PROMPT)
    await anext(stream)
    await stop(stream)
    return time.monotonic()


async def break_in_aclosing(model: Any) -> float:
    async with contextlib.aclosing(model.stream(PROMPT)) as stream:
        async for _ in stream:
            break
    return time.monotonic()


async def plain_break(model: Any) -> float:
    async for _ in model.stream(PROMPT):
        break
    return time.monotonic()  # the loop's finaliser closes the generator, racing asyncio.run's shutdown


async def cancel_the_task(model: Any) -> float:
    async def consume() -> None:
        async for _ in model.stream(PROMPT):
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.2)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return time.monotonic()


async def wait_for_the_whole_stream(model: Any) -> float:
    async def consume() -> None:
        async for _ in model.stream(PROMPT):
            pass

    with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
        await asyncio.wait_for(consume(), 0.2)
    return time.monotonic()


async def wait_for_one_chunk_then_aclose(model: Any) -> float:
    stream = model.stream(PROMPT)
    await anext(stream)
    with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
        while True:
            await asyncio.wait_for(anext(stream), 0.0001)
    await stream.aclose()
    return time.monotonic()


async def garbage_collected(model: Any) -> float:
    async def drop(stream: Any) -> None:
        del stream

    stopped = await first_chunk_then(model, drop)
    gc.collect()
    return stopped  # as plain_break: closed by the finaliser while asyncio.run shuts down


SCENARIOS = {
    'break_in_aclosing': break_in_aclosing,
    'plain_break': plain_break,
    'cancel_the_task': cancel_the_task,
    'wait_for_the_whole_stream': wait_for_the_whole_stream,
    'wait_for_one_chunk_then_aclose': wait_for_one_chunk_then_aclose,
    'garbage_collected': garbage_collected,
}


@pytest.mark.parametrize('scenario', SCENARIOS)
def test_stopping_closes_the_connection(scenario: str) -> None:
    with FaultServer(endless('openai')) as server:
        model = build_model('openai', server.url)
        leftovers = Leftovers()
        stopped = leftovers.run(functools.partial(SCENARIOS[scenario], model))
        assert closed_within(server, stopped) < CLOSE_BOUND
        leftovers.assert_clean()
        model.close()


@pytest.mark.parametrize('provider', PROVIDERS)
def test_every_provider_class_closes_on_break(provider: str) -> None:
    with FaultServer(endless(provider)) as server:
        model = build_model(provider, server.url)
        leftovers = Leftovers()
        stopped = leftovers.run(functools.partial(break_in_aclosing, model))
        assert closed_within(server, stopped) < CLOSE_BOUND
        leftovers.assert_clean()
        model.close()


def chat_client_scenarios(client: ChatClient, settle: float) -> dict[str, Callable[[], Awaitable[float]]]:
    async def aclosing_break() -> float:
        async with contextlib.aclosing(client.prompt('hi').stream().content()) as pieces:
            async for _ in pieces:
                break
        stopped = time.monotonic()
        await asyncio.sleep(settle)
        return stopped

    async def cancel() -> float:
        async def consume() -> None:
            async for _ in client.prompt('hi').stream().content():
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.2)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        stopped = time.monotonic()
        await asyncio.sleep(settle)
        return stopped

    return {'aclosing': aclosing_break, 'cancel': cancel}


@pytest.mark.parametrize('how', ['aclosing', 'cancel'])
def test_through_the_chat_client(how: str) -> None:
    """The loop keeps running after the consumer stops (a service): the chain closes the connection."""
    with FaultServer(endless('openai')) as server:
        model = build_model('openai', server.url)
        leftovers = Leftovers()
        stopped = leftovers.run(chat_client_scenarios(ChatClient.create(model), 0.2)[how])
        assert closed_within(server, stopped) < CLOSE_BOUND
        leftovers.assert_clean()
        model.close()


def test_through_the_chat_client_then_immediate_shutdown() -> None:
    """asyncio.run() returns right after the break: the loop's shutdown races the finalisers of the chain."""
    with FaultServer(endless('openai')) as server:
        model = build_model('openai', server.url)
        leftovers = Leftovers()
        stopped = leftovers.run(chat_client_scenarios(ChatClient.create(model), 0.0)['aclosing'])
        assert closed_within(server, stopped) < CLOSE_BOUND
        leftovers.assert_clean()
        model.close()
