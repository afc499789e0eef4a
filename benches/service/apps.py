"""The same streaming endpoint three ways: toolweave, pydantic-ai, the OpenAI Agents SDK (Starlette apps).

``POST /run`` with ``{"question": ...}`` runs a tool loop against the mock provider at ``MOCK_URL``
(two rounds: three tool calls, then the answer) and streams the run's events as Server-Sent Events,
one JSON object per event; the events of each ``FLUSH`` seconds go out in one write (as a provider batches
tokens; each write is a socket send, the largest cost of a streaming service), the same for every
framework (:func:`coalesced`). ``GET /health`` answers ``ok``. Run with uvicorn, e.g.
``MOCK_URL=http://127.0.0.1:PORT SERVICE_APP=toolweave uvicorn apps:app --app-dir benches/service``
(``SERVICE_APP``: ``toolweave``, ``pydantic-ai`` or ``openai-agents``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route

MOCK_URL = os.environ.get('MOCK_URL', 'http://127.0.0.1:8000') + '/v1'
SYSTEM = 'You answer questions about cities with the tools.'
FLUSH = 0.02


def get_weather(city: str) -> str:
    """Current weather of a city."""
    return f'{city}: 18 C, light rain'


def get_time(city: str) -> str:
    """Local time in a city."""
    return f'{city}: 14:05'


def get_population(city: str) -> str:
    """Population of a city."""
    return f'{city}: 10.2 million'


TOOLS = (get_weather, get_time, get_population)


async def coalesced(source: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``source``'s pieces joined per ``FLUSH`` seconds (one ASGI write instead of one per event).

    A task reads ``source`` into a list; a write waits until ``FLUSH`` seconds after the previous one,
    then takes everything the list holds (the first piece is never delayed). Ends when ``source``
    does; an error of ``source`` is raised here after what came before it. (A list and an
    ``asyncio.Event`` rather than an ``asyncio.Queue``: the same for every framework, and light, so
    the frameworks' own work is what the CPU per request compares.)
    """
    pieces: list[bytes] = []
    ready = asyncio.Event()
    ended: list[BaseException | None] = []  # one entry once ``source`` ended: its error or None

    async def pump() -> None:
        try:
            async for piece in source:
                pieces.append(piece)
                ready.set()
        except Exception as exc:  # noqa: BLE001 - handed to the writer, raised there
            ended.append(exc)
        else:
            ended.append(None)
        ready.set()

    task = asyncio.create_task(pump())
    loop = asyncio.get_running_loop()
    last = 0.0
    try:
        while True:
            await ready.wait()
            wait = FLUSH - (loop.time() - last)
            if wait > 0:
                await asyncio.sleep(wait)
            ready.clear()
            if pieces:
                data = b''.join(pieces)
                pieces.clear()
                yield data
                last = loop.time()
            if ended and not pieces:  # every piece before the end went out
                if ended[0] is not None:
                    raise ended[0]
                return
    finally:
        task.cancel()


def _app(events: Callable[[str], AsyncIterator[bytes]]) -> Starlette:
    async def run(request: Request) -> StreamingResponse:
        question = (await request.json())['question']
        return StreamingResponse(coalesced(events(question)), media_type='text/event-stream')

    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse('ok')

    return Starlette(routes=[Route('/run', run, methods=['POST']), Route('/health', health)])


def _toolweave() -> Starlette:
    from toolweave import ChatClient
    from toolweave.events import event_to_dict
    from toolweave.providers import OpenAIChatModel
    from toolweave.tools import tool

    model = OpenAIChatModel(base_url=MOCK_URL, api_key='', model='gpt-4o')
    client = ChatClient.builder(model).default_system(SYSTEM).default_tools(*(tool(f) for f in TOOLS)).build()

    async def events(question: str) -> AsyncIterator[bytes]:
        async for event in client.prompt(question).stream().events():
            yield b'data: ' + orjson.dumps(event_to_dict(event)) + b'\n\n'

    return _app(events)


def _pydantic_ai() -> Starlette:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_core import to_json

    model = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(base_url=MOCK_URL, api_key='x'))
    agent = Agent(model, instructions=SYSTEM, tools=list(TOOLS))

    async def events(question: str) -> AsyncIterator[bytes]:
        async with agent.run_stream_events(question) as stream:
            async for event in stream:
                yield b'data: ' + to_json(event, fallback=str) + b'\n\n'

    return _app(events)


def _openai_agents() -> Starlette:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    model = OpenAIChatCompletionsModel(model='gpt-4o', openai_client=AsyncOpenAI(base_url=MOCK_URL, api_key='x'))
    agent = Agent(name='cities', instructions=SYSTEM, tools=[function_tool(f) for f in TOOLS], model=model)

    async def events(question: str) -> AsyncIterator[bytes]:
        result = Runner.run_streamed(agent, question)
        async for event in result.stream_events():
            if event.type == 'raw_response_event':
                payload = event.data.model_dump_json().encode()
            elif event.type == 'run_item_stream_event':
                payload = orjson.dumps({'name': event.name, 'item': event.item.raw_item}, default=str)
            else:
                payload = orjson.dumps({'agent': event.new_agent.name})
            yield b'data: ' + payload + b'\n\n'

    return _app(events)


APPS = {'toolweave': _toolweave, 'pydantic-ai': _pydantic_ai, 'openai-agents': _openai_agents}
app = APPS[os.environ.get('SERVICE_APP', 'toolweave')]()
