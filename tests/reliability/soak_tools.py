"""Soak for tool execution: randomised hostile tools over many concurrent conversations.

``soak(seconds, seed)`` runs conversations from 8 worker threads for about ``seconds``: each worker
runs either one conversation (``call()``, ``acall()`` or ``stream()``, its own event loop) or four at
once on one event loop (``acall()``/``stream()``). Every model turn asks for a random mix of tools:
well-behaved ones, sync tools that hang past their timeout (some until the end of the soak),
tools raising ``KeyboardInterrupt``/``SystemExit``/``GeneratorExit``/``CancelledError`` (one-loop
groups skip the first two: asyncio stops a loop on them by design), hostile numbers in the
arguments, output with lone surrogates, and tools mutating nested ToolContext values. Each outcome
is checked against what the tool was made to do.

Figures: ``runs``, ``tools_called``, ``faults_injected``, ``hung_calls`` (conversations past their
bound: must be 0), ``escaped_errors`` (an outcome other than the documented one: must be 0),
``mismatches`` (a response, a context or a text that is not what it must be: must be 0),
``leaks`` (abandoned threads still running after the hung tools were released: must be 0),
``abandoned_threads`` (peak count of calls abandoned past their timeout), ``peak_rss_mb``,
``warnings_logged`` (warnings of logger ``toolweave.tools``, counted rather than printed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import random
import resource
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from tool_faults import bounded, wait_until
from toolweave import ChatClient, tool
from toolweave.chat import ToolResponseMessage
from toolweave.exceptions import ToolRetryBudgetExceededError
from toolweave.providers import ScriptedChatModel
from toolweave.tools import ToolContext
from toolweave.tools._concurrent import abandoned_threads

S = ScriptedChatModel
WORKERS = 8
BOUND = 15.0  # seconds a conversation may take (the slowest tools hang 0.6 s past a 0.05 s timeout)
TIMEOUT = 0.05
FFFD = '\ufffd'
RAISED: dict[str, type[BaseException]] = {
    'KeyboardInterrupt': KeyboardInterrupt,
    'SystemExit': SystemExit,
    'GeneratorExit': GeneratorExit,
    'CancelledError': asyncio.CancelledError,
}
HOSTILE_ARGUMENTS = [
    '{"amount": NaN}',
    '{"amount": 1e400}',
    '{"amount": "inf"}',
    '{"amount": "-Infinity"}',
    '{"amount": 1, "count": 18446744073709551616}',
]
RELEASE = threading.Event()  # set at the end: tools hanging "forever" return


def _context() -> dict[str, Any]:
    return {'cfg': {'limits': [1, 2], 'owner': {'name': 'ada'}}}


@tool
def ok(x: int) -> str:
    return f'ok {x}'


@tool(timeout=TIMEOUT)
def hang(seconds: float) -> str:
    RELEASE.wait(seconds)
    return 'late'


@tool(max_retries=1000)
def pay(amount: float, count: int = 1) -> str:
    return f'paid {amount}'


@tool(max_retries=0)
def pay_strict(amount: float, count: int = 1) -> str:
    return f'paid {amount}'


@tool
def odd_text(x: int) -> str:
    return f'name \udcff{x} \ud800'


@tool
def mutate(ctx: ToolContext, x: int) -> str:
    before = repr(ctx['cfg'])
    ctx['cfg']['limits'].append(x)
    ctx['cfg']['owner']['name'] = f'tool {x}'
    return before


@tool
async def amutate(ctx: ToolContext, x: int) -> str:
    before = repr(ctx['cfg'])
    ctx['cfg']['limits'].append(x)
    await asyncio.sleep(0)
    ctx['cfg']['owner']['name'] = f'async {x}'
    return before


def _raiser(name: str, asynchronous: bool) -> Any:
    error = RAISED[name]

    if asynchronous:

        @tool(name=f'raise_{name}')
        async def raise_async(x: int) -> str:
            await asyncio.sleep(0)
            raise error('from the tool')

        return raise_async

    @tool(name=f'raise_{name}')
    def raise_sync(x: int) -> str:
        raise error('from the tool')

    return raise_sync


@dataclass
class Plan:
    """One conversation: its tool turns, what each call must answer, how the run must end."""

    mode: str
    turns: list[list[tuple[str, str, str]]] = field(default_factory=list)  # (tool, arguments, expectation)
    tools: dict[str, Any] = field(default_factory=dict)
    ending: type[BaseException] | None = None
    faults: int = 0


def _plan(rng: random.Random, mode: str, one_loop: bool) -> Plan:
    plan = Plan(mode)
    base = {'ok': ok, 'hang': hang, 'pay': pay, 'odd_text': odd_text, 'mutate': mutate, 'amutate': amutate}
    plan.tools.update(base)
    for _ in range(rng.randint(1, 3)):
        turn = []
        for _ in range(rng.randint(1, 5)):
            x = rng.randint(0, 99)
            kind = rng.choice(['ok', 'ok', 'hang', 'pay', 'odd_text', 'mutate', 'amutate'])
            if kind == 'ok':
                turn.append(('ok', f'{{"x": {x}}}', f'ok {x}'))
                continue
            plan.faults += 1
            if kind == 'hang':
                # 20 s (or until released): far past the timeout; a short hang may win the race against a busy waiter
                forever = rng.random() < 0.1
                seconds = 20.0 if forever else rng.uniform(0.1, 0.6)
                turn.append(('hang', f'{{"seconds": {seconds}}}', 'timeout' if forever else 'timeout or late'))
            elif kind == 'pay':
                turn.append(('pay', rng.choice(HOSTILE_ARGUMENTS), 'invalid'))
            elif kind == 'odd_text':
                turn.append(('odd_text', f'{{"x": {x}}}', f'name {FFFD}{x} {FFFD}'))
            else:
                turn.append((kind, f'{{"x": {x}}}', repr(_context()['cfg'])))
        plan.turns.append(turn)
    ending = rng.random()
    if ending < 0.15:
        names = [n for n in RAISED if not one_loop or n in ('GeneratorExit', 'CancelledError')]
        name = rng.choice(names)
        raiser = _raiser(name, asynchronous=rng.random() < 0.5)
        plan.tools[f'raise_{name}'] = raiser
        plan.turns[-1].insert(rng.randint(0, len(plan.turns[-1])), (f'raise_{name}', '{"x": 1}', 'raises'))
        plan.ending, plan.faults = RAISED[name], plan.faults + 1
    elif ending < 0.25:
        plan.tools['pay_strict'] = pay_strict
        plan.turns[-1].append(('pay_strict', rng.choice(HOSTILE_ARGUMENTS), 'budget'))
        plan.ending, plan.faults = ToolRetryBudgetExceededError, plan.faults + 1
    return plan


def _script(plan: Plan) -> list[Any]:
    turns = [S.tool_call_response(t[0][0], t[0][1], more=[(n, a) for n, a, _ in t[1:]]) for t in plan.turns]
    return [*turns, S.text_response('final answer')]


def _check_responses(plan: Plan, model: ScriptedChatModel) -> list[str]:
    """What differs from the plan in the tool responses the model received."""
    problems = []
    rounds = [p.messages[-1] for p in model.prompts[1:]]
    for turn, message in zip(plan.turns, rounds, strict=False):
        if not isinstance(message, ToolResponseMessage):
            problems.append(f'no tool responses after a turn: {message!r}')
            continue
        for (name, _, expected), response in zip(turn, message.responses, strict=True):
            text = response.response_data
            if expected.startswith('timeout'):
                good = text.startswith(f"Tool '{name}' did not finish within") or (
                    expected.endswith('late') and text == 'late'
                )
            elif expected == 'invalid':
                good = text.startswith(f"Invalid arguments for tool '{name}': ")
            else:
                good = text == expected
            if not good or text != text.encode('utf-8', 'replace').decode('utf-8'):
                problems.append(f'{name}: {text!r}, expected {expected!r}')
    return problems


async def _run_async(plan: Plan, model: ScriptedChatModel, context: dict[str, Any]) -> str:
    spec = ChatClient.create(model).prompt('go').tools(*plan.tools.values()).tool_context(context)
    if plan.mode == 'acall':
        return (await bounded(spec.acall(), BOUND)).content()

    async def collect() -> str:
        return ''.join([c.text or '' async for c in spec.stream().chat_responses()])

    return await bounded(collect(), BOUND)


async def _conversation(plan: Plan) -> tuple[str, list[str]]:
    """Run one planned conversation; ``(outcome, problems)`` where outcome is ``'ok'`` or the exception's name."""
    model = ScriptedChatModel(_script(plan))
    context = _context()
    try:
        if plan.mode == 'call':
            spec = ChatClient.create(model).prompt('go').tools(*plan.tools.values()).tool_context(context)
            text = await asyncio.to_thread(lambda: spec.call().content())
        else:
            text = await _run_async(plan, model, context)
    except asyncio.TimeoutError:  # the bound (TimeoutError itself from Python 3.11)
        return 'hung', []
    except BaseException as error:  # noqa: BLE001 - every outcome is compared with the plan
        outcome = type(error).__name__
        if plan.ending is not None and type(error) is plan.ending:
            return outcome, _check_responses(plan, model)[: len(plan.turns) - 1]
        return outcome, [f'escaped {error!r}']
    problems = _check_responses(plan, model)
    if plan.ending is not None:
        problems.append(f'expected {plan.ending.__name__}, the run ended normally')
    if text != 'final answer':
        problems.append(f'final text {text!r}')
    if context != _context():
        problems.append(f'caller context changed: {context!r}')
    return 'ok', problems


def _one(rng: random.Random) -> list[tuple[Plan, str, list[str]]]:
    """One worker step: a single conversation, or four on one event loop."""
    if rng.random() < 0.5:
        plan = _plan(rng, rng.choice(['call', 'acall', 'stream']), one_loop=False)
        try:
            outcome, problems = asyncio.run(_conversation(plan))
        except BaseException as error:  # noqa: BLE001 - a KeyboardInterrupt/SystemExit ends that loop
            outcome, problems = type(error).__name__, []
            if plan.ending is None or type(error) is not plan.ending:
                problems = [f'escaped {error!r}']
        return [(plan, outcome, problems)]
    plans = [_plan(rng, rng.choice(['acall', 'stream']), one_loop=True) for _ in range(4)]

    async def group() -> list[Any]:
        return await asyncio.gather(*(_conversation(p) for p in plans), return_exceptions=True)

    results = []
    for plan, result in zip(plans, asyncio.run(group()), strict=True):
        if isinstance(result, BaseException):
            good = plan.ending is not None and type(result) is plan.ending
            result = (type(result).__name__, [] if good else [f'escaped {result!r}'])
        results.append((plan, *result))
    return results


class _Counting(logging.Handler):
    """Counts the warnings of ``toolweave.tools`` (one per failed call) instead of printing thousands."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def soak(seconds: float, seed: int) -> dict[str, float | int]:
    """Run the randomised attacks for about ``seconds``; the figures described in the module docstring."""
    tools_logger, counting = logging.getLogger('toolweave.tools'), _Counting()
    tools_logger.addHandler(counting)
    try:
        result = _soak(seconds, seed)
    finally:
        tools_logger.removeHandler(counting)
    result['warnings_logged'] = counting.count
    return result


def _soak(seconds: float, seed: int) -> dict[str, float | int]:
    RELEASE.clear()
    rng = random.Random(seed)
    figures: Counter[str] = Counter()
    peak_abandoned = 0
    deadline = time.monotonic() + seconds

    def worker(worker_seed: int) -> Counter[str]:
        local_rng, counts = random.Random(worker_seed), Counter[str]()
        while time.monotonic() < deadline:
            for plan, outcome, problems in _one(local_rng):
                counts['runs'] += 1
                counts['tools_called'] += sum(len(t) for t in plan.turns)
                counts['faults_injected'] += plan.faults
                counts['hung_calls'] += outcome == 'hung'
                counts['escaped_errors'] += sum(p.startswith('escaped') for p in problems)
                counts['mismatches'] += sum(not p.startswith('escaped') for p in problems)
        return counts

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        futures = [pool.submit(worker, rng.randrange(2**32)) for _ in range(WORKERS)]
        while not all(f.done() for f in futures):
            peak_abandoned = max(peak_abandoned, abandoned_threads())
            if time.monotonic() > deadline + BOUND * 4:
                figures['hung_calls'] += sum(not f.done() for f in futures)
                break
            time.sleep(0.05)
        for future in futures:
            if future.done():
                figures.update(future.result())
        RELEASE.set()
    figures['leaks'] = 0 if wait_until(lambda: abandoned_threads() == 0, 10) else abandoned_threads()
    result: dict[str, float | int] = {
        name: figures[name]
        for name in ('runs', 'tools_called', 'faults_injected', 'hung_calls', 'escaped_errors', 'mismatches', 'leaks')
    }
    result['abandoned_threads'] = peak_abandoned
    result['peak_rss_mb'] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


if __name__ == '__main__':
    print(soak(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0, int(sys.argv[2]) if len(sys.argv) > 2 else 1))
