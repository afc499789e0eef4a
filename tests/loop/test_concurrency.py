"""Concurrent tool execution: overlap, order, max_concurrency, sequential tools, timeouts, cancellation.

Overlap is shown with barriers and recorded start/end events, never with timings: a barrier of N
only opens when N calls run at the same time (otherwise it breaks after its generous timeout and
the tool's error text shows up in the response).
"""

import asyncio
import threading

import pytest
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Prompt,
    ToolCall,
    ToolCallingChatOptions,
    UserMessage,
)
from toolweave.tools import (
    DefaultToolCallingManager,
    DefaultToolExecutionExceptionProcessor,
    MethodToolCallback,
    ToolCallLimitExceededError,
    ToolCallLimits,
    ToolMetadata,
    tool,
)

BARRIER_TIMEOUT = 10


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def add(self, kind: str, name: str) -> None:
        with self.lock:
            self.events.append((kind, name))

    def index(self, kind: str, name: str) -> int:
        return self.events.index((kind, name))


def sync_tool(name: str, rec: Recorder, barrier: threading.Barrier | None = None, **spec):
    def body(x: int) -> str:
        rec.add('start', name)
        if barrier is not None:
            barrier.wait(BARRIER_TIMEOUT)
        rec.add('end', name)
        return f'{name}:{x}'

    body.__name__ = name
    return MethodToolCallback(tool(**spec)(body) if spec else body)


def async_tool(name: str, rec: Recorder, gate: dict | None = None, **spec):
    async def body(x: int) -> str:
        rec.add('start', name)
        if gate is not None:
            gate['arrived'] += 1
            if gate['arrived'] == gate['n']:
                gate['event'].set()
            await asyncio.wait_for(gate['event'].wait(), BARRIER_TIMEOUT)
        rec.add('end', name)
        return f'{name}:{x}'

    body.__name__ = name
    return MethodToolCallback(tool(**spec)(body) if spec else body)


def turn(callbacks, names, manager=None):
    options = ToolCallingChatOptions(tool_callbacks=tuple(callbacks))
    calls = tuple(ToolCall(f'id{i}', 'function', n, f'{{"x": {i}}}') for i, n in enumerate(names))
    prompt = Prompt((UserMessage('go'),), options)
    response = ChatResponse((Generation(AssistantMessage(None, calls), 'tool_calls'),))
    return manager or DefaultToolCallingManager(), prompt, response


def texts(result):
    return [(r.id, r.response_data) for r in result.conversation_history[-1].responses]


def test_three_sync_tools_overlap_and_keep_call_order():
    rec = Recorder()
    barrier = threading.Barrier(3)
    tools = [sync_tool(n, rec, barrier) for n in ('a', 'b', 'c')]
    manager, prompt, response = turn(tools, ['a', 'b', 'c'])
    result = asyncio.run(manager.aexecute_tool_calls(prompt, response))
    assert texts(result) == [('id0', 'a:0'), ('id1', 'b:1'), ('id2', 'c:2')]
    last_start = max(rec.index('start', n) for n in 'abc')
    first_end = min(rec.index('end', n) for n in 'abc')
    assert last_start < first_end  # all three ran at the same time


def test_async_and_sync_tools_overlap_on_one_turn():
    rec = Recorder()

    async def run():
        gate = {'arrived': 0, 'n': 2, 'event': asyncio.Event()}
        release = threading.Event()
        started = threading.Event()

        def blocker(x: int) -> str:
            rec.add('start', 's')
            started.set()
            release.wait(BARRIER_TIMEOUT)
            rec.add('end', 's')
            return 'sync done'

        async def waiter(x: int) -> str:
            rec.add('start', 'w')
            while not started.is_set():  # the sync tool is running in its thread meanwhile
                await asyncio.sleep(0.001)
            release.set()  # the sync tool can only finish because this ran meanwhile
            rec.add('end', 'w')
            return 'async done'

        tools = [async_tool('a1', rec, gate), async_tool('a2', rec, gate), MethodToolCallback(blocker)]
        tools.append(MethodToolCallback(waiter))
        manager, prompt, response = turn(tools, ['a1', 'blocker', 'a2', 'waiter'])
        return await manager.aexecute_tool_calls(prompt, response)

    result = asyncio.run(run())
    assert texts(result) == [('id0', 'a1:0'), ('id1', 'sync done'), ('id2', 'a2:2'), ('id3', 'async done')]
    assert rec.index('start', 's') < rec.index('end', 'w') < rec.index('end', 's')


def test_later_calls_may_finish_first_responses_stay_in_call_order():
    rec = Recorder()
    done_last = threading.Event()

    def slow(x: int) -> str:
        done_last.wait(BARRIER_TIMEOUT)
        rec.add('end', 'slow')
        return 'slow'

    def fast(x: int) -> str:
        rec.add('end', 'fast')
        done_last.set()
        return 'fast'

    manager, prompt, response = turn([MethodToolCallback(slow), MethodToolCallback(fast)], ['slow', 'fast'])
    result = asyncio.run(manager.aexecute_tool_calls(prompt, response))
    assert rec.events == [('end', 'fast'), ('end', 'slow')]
    assert texts(result) == [('id0', 'slow'), ('id1', 'fast')]


def test_max_concurrency_caps_running_calls():
    running = {'now': 0, 'peak': 0}
    lock = threading.Lock()
    barrier = threading.Barrier(2)

    def work(x: int) -> str:
        with lock:
            running['now'] += 1
            running['peak'] = max(running['peak'], running['now'])
        barrier.wait(BARRIER_TIMEOUT)  # pairs can pass; a third runner would not be needed
        with lock:
            running['now'] -= 1
        return str(x)

    manager = DefaultToolCallingManager(max_concurrency=2)
    _, prompt, response = turn([MethodToolCallback(work)], ['work'] * 4, manager)
    result = asyncio.run(manager.aexecute_tool_calls(prompt, response))
    assert [t for _, t in texts(result)] == ['0', '1', '2', '3']
    assert running['peak'] == 2


def test_sequential_tool_runs_alone():
    rec = Recorder()
    before = threading.Barrier(2)
    after = threading.Barrier(2)
    tools = [
        sync_tool('p1', rec, before),
        sync_tool('p2', rec, before),
        sync_tool('alone', rec, None, sequential=True),
        sync_tool('q1', rec, after),
        sync_tool('q2', rec, after),
    ]
    assert tools[2].tool_metadata.sequential is True
    manager, prompt, response = turn(tools, ['p1', 'p2', 'alone', 'q1', 'q2'])
    result = asyncio.run(manager.aexecute_tool_calls(prompt, response))
    assert [t for _, t in texts(result)] == ['p1:0', 'p2:1', 'alone:2', 'q1:3', 'q2:4']
    start, end = rec.index('start', 'alone'), rec.index('end', 'alone')
    assert max(rec.index('end', 'p1'), rec.index('end', 'p2')) < start
    assert end < min(rec.index('start', 'q1'), rec.index('start', 'q2'))


def test_async_timeout_becomes_error_text_and_cancels_the_tool():
    rec = Recorder()

    @tool(timeout=0.05)
    async def hangs(x: int) -> str:
        rec.add('start', 'hangs')
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            rec.add('cancelled', 'hangs')
            raise
        return 'never'

    callbacks = [MethodToolCallback(hangs), sync_tool('ok', rec)]
    manager, prompt, response = turn(callbacks, ['hangs', 'ok'])
    result = asyncio.run(manager.aexecute_tool_calls(prompt, response))
    assert texts(result) == [
        ('id0', "Tool 'hangs' did not finish within 0.05 seconds and was abandoned."),
        ('id1', 'ok:1'),
    ]
    assert ('cancelled', 'hangs') in rec.events


@pytest.mark.parametrize('path', ['blocking', 'async'])
def test_sync_timeout_becomes_error_text(path):
    release = threading.Event()

    @tool(timeout=0.05)
    def stuck(x: int) -> str:
        release.wait(BARRIER_TIMEOUT)
        return 'late'

    manager, prompt, response = turn([MethodToolCallback(stuck)], ['stuck'])
    try:
        if path == 'blocking':
            result = manager.execute_tool_calls(prompt, response)
        else:
            result = asyncio.run(manager.aexecute_tool_calls(prompt, response))
    finally:
        release.set()
    assert texts(result) == [('id0', "Tool 'stuck' did not finish within 0.05 seconds and was abandoned.")]


def test_manager_default_timeout_and_rethrow_of_timeouts():
    release = threading.Event()

    def stuck(x: int) -> str:
        release.wait(BARRIER_TIMEOUT)
        return 'late'

    rethrowing = DefaultToolCallingManager(
        default_timeout=0.05, exception_processor=DefaultToolExecutionExceptionProcessor(rethrow=[TimeoutError])
    )
    _, prompt, response = turn([MethodToolCallback(stuck)], ['stuck'])
    try:
        with pytest.raises(TimeoutError, match="Tool 'stuck' did not finish within 0.05 seconds"):
            asyncio.run(rethrowing.aexecute_tool_calls(prompt, response))
    finally:
        release.set()


def test_cancelling_the_caller_cancels_tools_and_waits_for_threads():
    rec = Recorder()
    release = threading.Event()

    def blocking(x: int) -> str:
        rec.add('start', 'sync')
        release.wait(BARRIER_TIMEOUT)
        rec.add('end', 'sync')
        return 'sync'

    async def forever(x: int) -> str:
        rec.add('start', 'async')
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            rec.add('cancelled', 'async')
            raise
        return 'never'

    async def run():
        manager, prompt, response = turn(
            [MethodToolCallback(blocking), MethodToolCallback(forever)], ['blocking', 'forever']
        )
        task = asyncio.create_task(manager.aexecute_tool_calls(prompt, response))
        while len([e for e in rec.events if e[0] == 'start']) < 2:
            await asyncio.sleep(0.005)
        task.cancel()
        asyncio.get_running_loop().call_later(0.05, release.set)  # the thread returns only later
        with pytest.raises(asyncio.CancelledError):
            await task
        rec.add('caller', 'cancelled')
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    leftover = asyncio.run(run())
    assert leftover == set()
    assert ('cancelled', 'async') in rec.events
    assert rec.index('end', 'sync') < rec.index('caller', 'cancelled')  # no tool thread left running


def test_async_path_resolves_every_name_before_running_any_tool():
    rec = Recorder()
    manager, prompt, response = turn([sync_tool('a', rec)], ['a', 'missing'])
    with pytest.raises(LookupError, match='No ToolCallback found for tool name: missing'):
        asyncio.run(manager.aexecute_tool_calls(prompt, response))
    assert rec.events == []


def test_async_throw_breach_runs_earlier_calls_and_carries_their_responses():
    rec = Recorder()
    manager = DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(2))
    _, prompt, response = turn([sync_tool('a', rec)], ['a', 'a', 'a', 'a'], manager)
    with pytest.raises(ToolCallLimitExceededError) as info:
        asyncio.run(manager.aexecute_tool_calls(prompt, response))
    assert [(r.id, r.response_data) for r in info.value.partial_responses] == [('id0', 'a:0'), ('id1', 'a:1')]
    assert str(info.value) == "Tool call limit (2) exceeded for tool 'a'"
    assert sorted(e for e in rec.events if e[0] == 'end') == [('end', 'a'), ('end', 'a')]


def test_invalid_concurrency_settings_are_rejected():
    with pytest.raises(ValueError, match='max_concurrency must be a positive int'):
        DefaultToolCallingManager(max_concurrency=0)
    with pytest.raises(ValueError, match='a tool timeout must be a positive number of seconds'):
        DefaultToolCallingManager(default_timeout=-1)
    with pytest.raises(ValueError, match='a tool timeout must be a positive number of seconds'):
        tool(timeout=0)
    assert ToolMetadata(timeout=2).timeout == 2


def test_round_counter_continues_from_previous_round_like_a_fresh_count():
    from toolweave.tools import ToolCallLimitBehavior

    limits = ToolCallLimits().max_calls_per_tool(3).with_behavior(ToolCallLimitBehavior.RETURN_ERROR_RESPONSE)
    rec = Recorder()
    reused = DefaultToolCallingManager(limits=limits)
    options = ToolCallingChatOptions(tool_callbacks=(sync_tool('a', rec),))
    history = (UserMessage('go'),)
    outputs = []
    for round_no in range(3):
        calls = (
            ToolCall(f'r{round_no}a', 'function', 'a', '{"x": 1}'),
            ToolCall(f'r{round_no}b', 'function', 'a', '{"x": 2}'),
        )
        response = ChatResponse((Generation(AssistantMessage(None, calls), 'tool_calls'),))
        fresh = DefaultToolCallingManager(limits=limits).execute_tool_calls(Prompt(history, options), response)
        result = reused.execute_tool_calls(Prompt(history, options), response)
        assert result.conversation_history[-1] == fresh.conversation_history[-1]
        outputs.append([r.response_data for r in result.conversation_history[-1].responses])
        history = result.conversation_history
    breach = "Tool call limit (3) exceeded for tool 'a'. No further calls to this tool are allowed in this turn."
    assert outputs == [['a:1', 'a:2'], ['a:1', breach], [breach, breach]]
