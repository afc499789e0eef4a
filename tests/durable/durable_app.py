"""The application the durable tests run: a prompt-driven fake model, tools that log each completed run.

Imported by the in-process workers of the tests and by the worker subprocesses (worker_main.py), so
both register exactly the same objects. Tools append one line per completed call to
``$DURABLE_TEST_DIR/<tool>.log``; ``second`` waits until ``$DURABLE_TEST_DIR/go`` exists (the kill test
creates it once the first worker is dead).
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import time

from pydantic import BaseModel
from toolweave.chat.messages import AssistantMessage, ToolCall, ToolResponseMessage, UserMessage
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation, Usage
from toolweave.durable import DurableRegistry, ToolRetry
from toolweave.tools import ToolContext, tool

PLAN = (('first', '{"x": 1}'), ('second', '{"x": 2}'), ('third', '{"x": 3}'))
BENCH_PLAN = (
    (('first', '{"x": 1}'), ('third', '{"x": 2}'), ('first', '{"x": 3}')),
    (('third', '{"x": 4}'), ('first', '{"x": 5}'), ('third', '{"x": 6}')),
)
"""The benchmark's run: 2 rounds of 3 tool calls, then the answer (benches/test_bench_durable.py)."""


def _turn_results(prompt: Prompt) -> list[ToolResponseMessage]:
    start = max(i for i, m in enumerate(prompt.messages) if isinstance(m, UserMessage))
    return [m for m in prompt.messages[start:] if isinstance(m, ToolResponseMessage)]


class PlanModel:
    """Asks for the tools of ``plan`` one round each (a round = a tuple of calls), then answers with their results.

    Deterministic from the prompt alone (any worker process gives the same answer at the same point).
    """

    def __init__(self, plan: tuple[tuple[tuple[str, str], ...], ...] | None = None) -> None:
        self.plan = plan if plan is not None else tuple((call,) for call in PLAN)

    def _answer(self, prompt: Prompt) -> ChatResponse:
        done = _turn_results(prompt)
        index = len(done)
        usage = Usage(prompt_tokens=10 + index, completion_tokens=3, total_tokens=13 + index)
        if index < len(self.plan):
            calls = tuple(
                ToolCall(f'call_{index}_{n}', 'function', name, arguments)
                for n, (name, arguments) in enumerate(self.plan[index])
            )
            return ChatResponse((Generation(AssistantMessage(None, calls), 'tool_calls'),), 'r', 'plan', usage)
        texts = [r.response_data for m in done for r in m.responses]
        return ChatResponse((Generation(AssistantMessage('answer: ' + ' | '.join(texts)), 'stop'),), 'r', 'plan', usage)

    def call(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def stream(self, prompt: Prompt):  # pragma: no cover - durable runs call acall
        yield self._answer(prompt)


def _log(name: str, x: int) -> str:
    folder = os.environ.get('DURABLE_TEST_DIR')
    if folder:
        with open(pathlib.Path(folder) / f'{name}.log', 'a') as f:
            f.write(f'{os.getpid()} {x}\n')
    return f'{name}={x * 10}'


@tool
def first(x: int) -> str:
    """The first step."""
    return _log('first', x)


@tool
async def second(x: int) -> str:
    """The second step (waits for the go file when DURABLE_TEST_DIR is set)."""
    folder = os.environ.get('DURABLE_TEST_DIR')
    if folder:
        while not (pathlib.Path(folder) / 'go').exists():
            await asyncio.sleep(0.05)
    return _log('second', x)


@tool
def third(x: int) -> str:
    """The third step."""
    return _log('third', x)


@tool
def broken(x: int) -> str:
    """Always fails."""
    raise KeyError('missing')


@tool(timeout=0.5)
def slow(x: int) -> str:
    """Sleeps 3 s (its timeout is 0.5 s)."""
    time.sleep(3)
    return 'late'


@tool(return_direct=True)
def direct(x: int) -> str:
    """Its result goes to the caller."""
    return f'direct={x}'


@tool
def huge(x: int) -> str:
    """A result larger than the test registry's 4096-byte limit."""
    return 'y' * 5000


class FailingModel:
    """Raises ``error`` on every call and counts the calls."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    async def acall(self, prompt: Prompt) -> ChatResponse:
        self.calls += 1
        raise self.error

    def call(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - durable runs call acall
        raise self.error

    async def stream(self, prompt: Prompt):  # pragma: no cover
        raise self.error
        yield


@tool(requires_approval=True)
def guarded(x: int) -> str:
    """Needs a person's approval."""
    return _log('guarded', x)


class ConversationModel:
    """Round 1 calls ``first`` with the number of user messages it sees; then answers with what it saw."""

    def _answer(self, prompt: Prompt) -> ChatResponse:
        users = sum(isinstance(m, UserMessage) for m in prompt.messages)
        answers = sum(isinstance(m, AssistantMessage) and bool(m.content) for m in prompt.messages)
        usage = Usage(prompt_tokens=len(prompt.messages), completion_tokens=1, total_tokens=len(prompt.messages) + 1)
        done = _turn_results(prompt)
        if not done:
            call = ToolCall(f'call_{users}', 'function', 'first', f'{{"x": {users}}}')
            return ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),), usage=usage)
        text = f'{done[0].responses[0].response_data}; saw {users} user messages, {answers} answers'
        return ChatResponse((Generation(AssistantMessage(text), 'stop'),), usage=usage)

    def call(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def stream(self, prompt: Prompt):  # pragma: no cover - durable runs call acall
        yield self._answer(prompt)


def _append(path: pathlib.Path, line: str) -> None:
    with open(path, 'a') as f:
        f.write(line)


class GatedModel(PlanModel):
    """``PlanModel`` of one ``first`` call whose answer round logs ``<pid>`` to ``model.log`` and waits for the go file.

    The crash test kills the worker while it waits: in the middle of a model call.
    """

    async def acall(self, prompt: Prompt) -> ChatResponse:
        folder = os.environ.get('DURABLE_TEST_DIR')
        if folder and _turn_results(prompt):
            _append(pathlib.Path(folder) / 'model.log', f'{os.getpid()}\n')
            while not (pathlib.Path(folder) / 'go').exists():
                await asyncio.sleep(0.05)
        return self._answer(prompt)


def build_registry(*, heartbeat_timeout: float = 2.0) -> DurableRegistry:
    """The registry every test worker uses."""
    registry = DurableRegistry(heartbeat_timeout=heartbeat_timeout, max_tool_result_bytes=4096)
    registry.add_model('plan', PlanModel())
    registry.add_model('pair', PlanModel(((PLAN[0],), (PLAN[1], PLAN[2]))))
    registry.add_tools(first, second, third, broken, slow, guarded, retry=ToolRetry(attempts=3, initial_interval=0.2))
    registry.add_model('conversation', ConversationModel())
    registry.add_model('bench', PlanModel(BENCH_PLAN))
    registry.add_model('approval', PlanModel(((PLAN[0], ('guarded', '{"x": 5}')),)))
    registry.add_model('gated', GatedModel(((PLAN[0],),)))
    return registry


FLAKY_CALLS: list[int] = []


@tool
def flaky(x: int) -> str:
    """Fails on its first call in this process, then works."""
    FLAKY_CALLS.append(x)
    if len(FLAKY_CALLS) == 1:
        raise ConnectionError('upstream reset')
    return f'flaky={x}'


class SlowModel:
    """Sleeps ``seconds`` on every call (longer than its activity timeout), counting the calls."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls = 0

    async def acall(self, prompt: Prompt) -> ChatResponse:
        self.calls += 1
        await asyncio.sleep(self.seconds)
        return ChatResponse((Generation(AssistantMessage('late'), 'stop'),))

    def call(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover - durable runs call acall
        raise NotImplementedError

    async def stream(self, prompt: Prompt):  # pragma: no cover
        yield await self.acall(prompt)


@tool
def whoami(x: int, context: ToolContext) -> str:
    """Reads the tool context: a value the caller gave and the history so far."""
    history = context[ToolContext.TOOL_CALL_HISTORY]
    return f'user={context["user"]} history={len(history)} last={type(history[-1]).__name__}'


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f'sunny in {city}'


@tool
def get_time(city: str) -> str:
    """Local time of a city."""
    return '12:00'


@tool
def send_mail(to: str) -> str:
    """Send a mail."""
    return 'sent'


def _offered(prompt: Prompt) -> list[str]:
    options = prompt.options
    return sorted(c.tool_definition.name for c in getattr(options, 'tool_callbacks', ()))


class SearchingModel:
    """Calls ``get_weather`` once it is offered, else searches for it; then answers with the results.

    Records the tool names offered in each round (``offered``).
    """

    def __init__(self) -> None:
        self.offered: list[list[str]] = []

    def _answer(self, prompt: Prompt) -> ChatResponse:
        names = _offered(prompt)
        self.offered.append(names)
        done = [r for m in _turn_results(prompt) for r in m.responses]
        usage = Usage(prompt_tokens=len(prompt.messages), completion_tokens=2, total_tokens=len(prompt.messages) + 2)
        if 'get_weather' in names and not any(r.name == 'get_weather' for r in done):
            call = ToolCall(f'w{len(done)}', 'function', 'get_weather', '{"city": "Paris"}')
        elif not done:
            call = ToolCall('s0', 'function', 'toolSearchTool', '{"query": "weather"}')
        else:
            text = ' | '.join(r.response_data for r in done if r.name != 'toolSearchTool')
            return ChatResponse((Generation(AssistantMessage(text), 'stop'),), usage=usage)
        return ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),), usage=usage)

    def call(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def acall(self, prompt: Prompt) -> ChatResponse:
        return self._answer(prompt)

    async def stream(self, prompt: Prompt):  # pragma: no cover - durable runs call acall
        yield self._answer(prompt)


class StreamingModel:
    """Round 1 says a few words and calls ``first``; round 2 answers with its result, both in several chunks."""

    def _chunks(self, prompt: Prompt) -> list[ChatResponse]:
        done = [r for m in _turn_results(prompt) for r in m.responses]
        if not done:
            call = ToolCall('c1', 'function', 'first', '{"x": 4}')
            texts = ['Let me ', 'look ', 'that up.']
            last = ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),), usage=Usage(5, 3, 8))
        else:
            texts = ['The ', 'answer: ', done[0].response_data]
            last = ChatResponse((Generation(AssistantMessage(''), 'stop'),), usage=Usage(9, 4, 13))
        return [ChatResponse((Generation(AssistantMessage(t)),)) for t in texts] + [last]

    async def stream(self, prompt: Prompt):
        for chunk in self._chunks(prompt):
            await asyncio.sleep(0.06)  # more than one signal per round
            yield chunk

    async def acall(self, prompt: Prompt) -> ChatResponse:
        from toolweave.chat.stream import ChatResponseAggregator

        aggregator = ChatResponseAggregator()
        for chunk in self._chunks(prompt):
            aggregator.add(chunk)
        return aggregator.result()

    def call(self, prompt: Prompt) -> ChatResponse:  # pragma: no cover
        raise NotImplementedError


class Person(BaseModel):
    name: str
    age: int


class JsonModel:
    """Answers with invalid JSON first, then with a valid person once it read the validation errors."""

    def __init__(self) -> None:
        self.prompts: list[Prompt] = []

    async def acall(self, prompt: Prompt) -> ChatResponse:
        self.prompts.append(prompt)
        asked_again = 'did not match' in (prompt.messages[-1].text or '')
        text = '{"name": "Ada", "age": 36}' if asked_again else '{"name": "Ada", "age": "old"}'
        return ChatResponse((Generation(AssistantMessage(text), 'stop'),), usage=Usage(7, 5, 12))

    def call(self, prompt: Prompt) -> ChatResponse:
        return asyncio.run(self.acall(prompt))

    async def stream(self, prompt: Prompt):  # pragma: no cover
        yield await self.acall(prompt)


class StrategyModel:
    """Answers the way the prompt asks (native schema, the ``final_result`` tool, or text): invalid first, then valid."""

    async def acall(self, prompt: Prompt) -> ChatResponse:
        again = any('did not match' in str(m) or 'Invalid final_result' in str(m) for m in prompt.messages)
        data = '{"name": "Ada", "age": 36}' if again else '{"name": "Ada", "age": "old"}'
        usage = Usage(prompt_tokens=len(prompt.messages), completion_tokens=5, total_tokens=len(prompt.messages) + 5)
        offered = _offered(prompt)
        if 'final_result' in offered:
            call = ToolCall(f'out{len(prompt.messages)}', 'function', 'final_result', data)
            return ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),), usage=usage)
        schema = getattr(prompt.options, 'output_schema', None)
        text = data if schema is not None else f'Here: {data}'
        return ChatResponse((Generation(AssistantMessage(text), 'stop'),), usage=usage)

    def call(self, prompt: Prompt) -> ChatResponse:
        return asyncio.run(self.acall(prompt))

    async def stream(self, prompt: Prompt):  # pragma: no cover
        yield await self.acall(prompt)
