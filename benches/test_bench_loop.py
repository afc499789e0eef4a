"""Framework overhead per tool round: toolweave vs a hand-written loop, pydantic-ai, the OpenAI Agents SDK, LangChain.

Same workload everywhere: a fake model that asks for three trivial tools per round for five
rounds, then answers; no network, no real model, so what is measured is each framework's own
loop (message building, tool lookup, argument validation, execution, result handling). Peers
missing from the environment (``pip install 'toolweave[bench]'``) are skipped. Never asserts timings.

``test_loop_vs_hand_written`` prints the per-round overhead of ``call()`` against a hand-written
blocking loop doing the same work over the same scripted model (issue 13 target: within 3x), and of
``acall()`` and ``stream()`` against the hand-written async loop (target: within 5x), from one run.
"The same work" in async code: toolweave runs a sync tool in a worker thread (a blocking tool must not
stall a service's other requests) and a round's calls concurrently, so the async hand loops do too
(``asyncio.to_thread`` + ``gather`` for sync tools; ``gather`` of coroutines for ``async def`` tools).
The inline hand loop (sync functions called on the event loop, calls one after another) is printed as
well, as the floor a loop that gives up those guarantees could reach.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from toolweave import ChatClient, tool
from toolweave.chat import Prompt, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.providers import ScriptedChatModel

ROUNDS = 5
TOOLS = ('add', 'mul', 'neg')


def _args(round_no: int, k: int) -> dict[str, int]:
    return {'a': round_no, 'b': k}


# -- toolweave ----------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply."""
    return a * b


@tool
def neg(a: int, b: int) -> int:
    """Negate the sum."""
    return -(a + b)


def _toolweave_script() -> list[Any]:
    steps = [
        ScriptedChatModel.tool_call_response(TOOLS[0], _args(r, 0), more=[(TOOLS[k], _args(r, k)) for k in (1, 2)])
        for r in range(ROUNDS)
    ]
    return [*steps, ScriptedChatModel.text_response('done')]


async def run_toolweave() -> str:
    model = ScriptedChatModel(_toolweave_script())
    response = await ChatClient.create(model).prompt('go').tools(add, mul, neg).acall()
    return response.content()


def run_toolweave_blocking() -> str:
    model = ScriptedChatModel(_toolweave_script())
    return ChatClient.create(model).prompt('go').tools(add, mul, neg).call().content()


def run_toolweave_stream() -> str:
    model = ScriptedChatModel(_toolweave_script())

    async def run() -> str:
        return ''.join([p async for p in ChatClient.create(model).prompt('go').tools(add, mul, neg).stream().content()])

    return asyncio.run(run())


# -- the hand-written loop: the same work with nothing but the model, json and the functions --------

_FUNCTIONS = {'add': add, 'mul': mul, 'neg': neg}


def _hand_round(messages: list[Any], response: Any) -> bool:
    """Run one response's calls by hand; ``False`` when it is the answer."""
    calls = response.tool_calls
    if not calls:
        return False
    messages.append(response.result.output)
    responses = []
    for call in calls:
        result = _FUNCTIONS[call.name](**json.loads(call.arguments))
        responses.append(ToolResponse(call.id, call.name, str(result)))
    messages.append(ToolResponseMessage(tuple(responses)))
    return True


def run_hand_loop() -> str:
    model = ScriptedChatModel(_toolweave_script())
    messages: list[Any] = [UserMessage('go')]
    while True:
        response = model.call(Prompt(tuple(messages)))
        if not _hand_round(messages, response):
            return response.text


async def run_hand_loop_async() -> str:
    model = ScriptedChatModel(_toolweave_script())
    messages: list[Any] = [UserMessage('go')]
    while True:
        response = await model.acall(Prompt(tuple(messages)))
        if not _hand_round(messages, response):
            return response.text


async def run_hand_loop_threads() -> str:
    """The async hand loop doing toolweave's work for sync tools: each call in a thread, a round's calls at once."""
    model = ScriptedChatModel(_toolweave_script())
    messages: list[Any] = [UserMessage('go')]

    async def one(call: Any) -> ToolResponse:
        result = await asyncio.to_thread(_FUNCTIONS[call.name], **json.loads(call.arguments))
        return ToolResponse(call.id, call.name, str(result))

    while True:
        response = await model.acall(Prompt(tuple(messages)))
        if not response.tool_calls:
            return response.text
        messages.append(response.result.output)
        messages.append(ToolResponseMessage(tuple(await asyncio.gather(*map(one, response.tool_calls)))))


# -- the same loop with async def tools: no thread on either side -----------------------------


@tool
async def aadd(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
async def amul(a: int, b: int) -> int:
    """Multiply."""
    return a * b


@tool
async def aneg(a: int, b: int) -> int:
    """Negate the sum."""
    return -(a + b)


_ASYNC_FUNCTIONS = {'aadd': aadd, 'amul': amul, 'aneg': aneg}


def _async_tools_script() -> list[Any]:
    names = tuple(_ASYNC_FUNCTIONS)
    steps = [
        ScriptedChatModel.tool_call_response(names[0], _args(r, 0), more=[(names[k], _args(r, k)) for k in (1, 2)])
        for r in range(ROUNDS)
    ]
    return [*steps, ScriptedChatModel.text_response('done')]


async def run_toolweave_async_tools() -> str:
    model = ScriptedChatModel(_async_tools_script())
    return (await ChatClient.create(model).prompt('go').tools(aadd, amul, aneg).acall()).content()


def run_toolweave_stream_async_tools() -> str:
    model = ScriptedChatModel(_async_tools_script())

    async def run() -> str:
        chat = ChatClient.create(model).prompt('go').tools(aadd, amul, aneg)
        return ''.join([p async for p in chat.stream().content()])

    return asyncio.run(run())


async def run_hand_loop_async_tools() -> str:
    """The async hand loop for ``async def`` tools: a round's coroutines gathered, as toolweave runs them."""
    model = ScriptedChatModel(_async_tools_script())
    messages: list[Any] = [UserMessage('go')]

    async def one(call: Any) -> ToolResponse:
        result = await _ASYNC_FUNCTIONS[call.name](**json.loads(call.arguments))
        return ToolResponse(call.id, call.name, str(result))

    while True:
        response = await model.acall(Prompt(tuple(messages)))
        if not response.tool_calls:
            return response.text
        messages.append(response.result.output)
        messages.append(ToolResponseMessage(tuple(await asyncio.gather(*map(one, response.tool_calls)))))


# -- pydantic-ai --------------------------------------------------------------------------------


def _pydantic_ai() -> Callable[[], Awaitable[str]] | None:
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel
    except ImportError:
        return None

    def respond(messages: list[Any], info: Any) -> Any:
        round_no = sum(1 for m in messages if isinstance(m, ModelResponse))
        if round_no >= ROUNDS:
            return ModelResponse(parts=[TextPart('done')])
        return ModelResponse(parts=[ToolCallPart(TOOLS[k], _args(round_no, k), f'c{round_no}{k}') for k in range(3)])

    agent = Agent(FunctionModel(respond))
    for fn in (add, mul, neg):
        agent.tool_plain(fn)

    async def run() -> str:
        result = await agent.run('go')
        return str(result.output)

    return run


# -- OpenAI Agents SDK --------------------------------------------------------------------------


def _openai_agents() -> Callable[[], Awaitable[str]] | None:
    try:
        from agents import Agent, Runner, function_tool, set_tracing_disabled
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.usage import Usage
        from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
    except ImportError:
        return None
    set_tracing_disabled(True)

    class FakeModel(Model):
        def __init__(self) -> None:
            self.calls = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            round_no, self.calls = self.calls, self.calls + 1
            if round_no >= ROUNDS:
                text = ResponseOutputText(type='output_text', text='done', annotations=[])
                message = ResponseOutputMessage(
                    id='m', type='message', role='assistant', status='completed', content=[text]
                )
                return ModelResponse(output=[message], usage=Usage(), response_id=None)
            output = [
                ResponseFunctionToolCall(
                    type='function_call',
                    call_id=f'c{round_no}{k}',
                    name=TOOLS[k],
                    arguments=json.dumps(_args(round_no, k)),
                    id=f'f{round_no}{k}',
                )
                for k in range(3)
            ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not benchmarked
            raise NotImplementedError

    tools = [function_tool(fn.__wrapped__ if hasattr(fn, '__wrapped__') else fn) for fn in (add, mul, neg)]

    async def run() -> str:
        agent = Agent(name='bench', model=FakeModel(), tools=tools)
        result = await Runner.run(agent, 'go', max_turns=ROUNDS + 2)
        return str(result.final_output)

    return run


# -- LangChain ----------------------------------------------------------------------------------


def _langchain() -> Callable[[], Awaitable[str]] | None:
    try:
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage, HumanMessage
        from langchain_core.tools import tool as lc_tool
    except ImportError:
        return None

    class FakeToolModel(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    def script() -> list[Any]:
        turns: list[Any] = [
            AIMessage(
                '',
                tool_calls=[
                    {'name': TOOLS[k], 'args': _args(r, k), 'id': f'c{r}{k}', 'type': 'tool_call'} for k in range(3)
                ],
            )
            for r in range(ROUNDS)
        ]
        return [*turns, AIMessage('done')]

    tools = {fn.__name__: lc_tool(fn) for fn in (add, mul, neg)}

    async def run() -> str:
        model = FakeToolModel(messages=iter(script())).bind_tools(list(tools.values()))
        messages: list[Any] = [HumanMessage('go')]
        while True:
            reply = await model.ainvoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.content)
            for call in reply.tool_calls:
                messages.append(await tools[call['name']].ainvoke(call))

    return run


PEERS: dict[str, Callable[[], Awaitable[str]] | None] = {
    'toolweave': run_toolweave,
    'pydantic-ai': _pydantic_ai(),
    'openai-agents': _openai_agents(),
    'langchain': _langchain(),
}
AVAILABLE = {name: fn for name, fn in PEERS.items() if fn is not None}


def _time_async(fn: Callable[[], Awaitable[str]], repeat: int = 5, number: int = 40) -> float:
    async def measure() -> float:
        best = float('inf')
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                await fn()
            best = min(best, (time.perf_counter() - start) / number)
        return best

    return asyncio.run(measure())


def _time_blocking(fn: Callable[[], str], repeat: int = 5, number: int = 40) -> float:
    best = float('inf')
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def test_every_framework_runs_the_same_loop() -> None:
    for name, fn in AVAILABLE.items():
        assert asyncio.run(fn()) == 'done', name
    assert run_toolweave_blocking() == run_toolweave_stream() == run_hand_loop() == 'done'
    assert asyncio.run(run_hand_loop_async()) == 'done'
    assert asyncio.run(run_hand_loop_threads()) == asyncio.run(run_hand_loop_async_tools()) == 'done'
    assert asyncio.run(run_toolweave_async_tools()) == run_toolweave_stream_async_tools() == 'done'


def _interleaved(
    blocking: dict[str, Callable[[], object]],
    coroutines: dict[str, Callable[[], Awaitable[object]]],
    repeat: int = 30,
    window: float = 0.002,
) -> dict[str, float]:
    """Seconds per run of each entry: the best of ``repeat`` timed windows, the entries taking turns.

    Every window lasts about ``window`` seconds whatever the entry (as many runs as fit, found in a
    warm-up): on a loaded machine a long window is less likely to run undisturbed than a short one,
    so equal windows keep the slower entry from being measured worse than it is. Taking turns, every
    entry is timed across the same stretch of the run, so a load spike touches all of them; the best
    window is the least disturbed. A window holds several runs, so the garbage collections an entry's
    allocations cause are counted. Coroutine entries are awaited on one event loop kept for the whole
    measurement (as a service's loop is).
    """
    loop = asyncio.new_event_loop()

    async def awaited(fn: Callable[[], Awaitable[object]], number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            await fn()
        return time.perf_counter() - start

    def called(fn: Callable[[], object], number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return time.perf_counter() - start

    def on_loop(fn: Callable[[], Awaitable[object]], number: int) -> float:
        return loop.run_until_complete(awaited(fn, number))

    timers: dict[str, Callable[[int], float]] = {name: functools.partial(called, fn) for name, fn in blocking.items()}
    timers.update({name: functools.partial(on_loop, fn) for name, fn in coroutines.items()})
    try:
        runs = {}
        for name, timer in timers.items():  # warm-up (imports, caches, worker threads), then runs per window
            timer(3)
            runs[name] = max(2, round(window / (min(timer(1) for _ in range(5)) or window)))
        best = dict.fromkeys(timers, float('inf'))
        for _ in range(repeat):
            for name, timer in timers.items():
                best[name] = min(best[name], timer(runs[name]) / runs[name])
    finally:
        loop.close()
    return best


def test_loop_vs_hand_written(capsys: pytest.CaptureFixture[str]) -> None:
    def under_run(fn: Callable[[], Awaitable[str]]) -> Callable[[], str]:  # asyncio.run per run, as stream() pays
        return lambda: asyncio.run(fn())

    seconds = _interleaved(
        {
            'hand loop': run_hand_loop,
            'call()': run_toolweave_blocking,
            'hand async loop in threads under asyncio.run': under_run(run_hand_loop_threads),
            'stream(), sync tools': run_toolweave_stream,
            'hand async loop, async tools under asyncio.run': under_run(run_hand_loop_async_tools),
            'stream(), async tools': run_toolweave_stream_async_tools,
        },
        {
            'hand async loop, sync tools in threads': run_hand_loop_threads,
            'acall(), sync tools': run_toolweave,
            'hand async loop, async tools': run_hand_loop_async_tools,
            'acall(), async tools': run_toolweave_async_tools,
            'hand async loop inline (no threads, one call after another)': run_hand_loop_async,
        },
    )
    order = [
        'hand loop',
        'call()',
        'hand async loop, sync tools in threads',
        'acall(), sync tools',
        'hand async loop, async tools',
        'acall(), async tools',
        'hand async loop in threads under asyncio.run',
        'stream(), sync tools',
        'hand async loop, async tools under asyncio.run',
        'stream(), async tools',
        'hand async loop inline (no threads, one call after another)',
    ]
    us = {name: seconds[name] / ROUNDS for name in order}
    ratios = {
        'call() / hand loop (target 3x)': us['call()'] / us['hand loop'],
        'acall() / hand async loop, sync tools (target 5x)': us['acall(), sync tools']
        / us['hand async loop, sync tools in threads'],
        'acall() / hand async loop, async tools (target 5x)': us['acall(), async tools']
        / us['hand async loop, async tools'],
        'stream() / hand async loop, sync tools (target 5x)': us['stream(), sync tools']
        / us['hand async loop in threads under asyncio.run'],
        'stream() / hand async loop, async tools (target 5x)': us['stream(), async tools']
        / us['hand async loop, async tools under asyncio.run'],
        'acall(), sync tools / hand async loop inline': us['acall(), sync tools']
        / us['hand async loop inline (no threads, one call after another)'],
    }
    with capsys.disabled():
        print(f'\n[tool loop vs hand-written, {ROUNDS} rounds x 3 tools, per round]')
        for name, value in us.items():
            print(f'  {name}: {value * 1e6:.1f} us')
        for name, value in ratios.items():
            print(f'  {name}: {value:.1f}x')


@pytest.mark.benchmark(group='tool-loop-5-rounds-x-3-tools')
@pytest.mark.parametrize('name', list(AVAILABLE))
def test_bench_loop(benchmark: Any, name: str) -> None:
    fn = AVAILABLE[name]
    loop = asyncio.new_event_loop()
    try:
        benchmark(lambda: loop.run_until_complete(fn()))
    finally:
        loop.close()


def test_loop_overhead_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    times = {name: _time_async(fn) / ROUNDS for name, fn in AVAILABLE.items()}
    start = time.perf_counter()
    for _ in range(40):
        run_toolweave_blocking()
    blocking = (time.perf_counter() - start) / 40 / ROUNDS
    peers = {k: v for k, v in times.items() if k != 'toolweave'}
    with capsys.disabled():
        print(
            f'\n[tool loop: {ROUNDS} rounds x 3 tools, per round] '
            + ', '.join(f'{k}: {v * 1e6:.0f} us' for k, v in times.items())
            + f', toolweave blocking: {blocking * 1e6:.0f} us'
        )
        if peers:
            fastest = min(peers, key=peers.__getitem__)
            print(
                f'toolweave (async) vs fastest peer ({fastest}): {peers[fastest] / times["toolweave"]:.2f}x faster; '
                + ', '.join(f'vs {k}: {v / times["toolweave"]:.2f}x' for k, v in peers.items())
            )
        missing = sorted(set(PEERS) - set(AVAILABLE))
        if missing:
            print('skipped (not installed):', ', '.join(missing))
