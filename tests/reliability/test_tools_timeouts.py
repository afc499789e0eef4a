"""Sync tools that outlive their timeout never take the worker capacity away from later calls.

Attack: 40 sync tools (more than the 32 worker slots) block on an Event past a small timeout; in
the next round a plain sync tool (no timeout, so it needs a free worker) must still run, in call(),
acall() and stream(), and in a later request of the process. The blocked threads are released at
the end, so the abandoned count goes back down and the test process exits cleanly.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest
from tool_faults import MODES, calls, run, wait_until
from toolweave import ChatClient, tool
from toolweave.advisors import ToolCallingAdvisor
from toolweave.chat import ToolResponseMessage
from toolweave.providers import ScriptedChatModel
from toolweave.tools import DefaultToolCallingManager, FunctionToolCallback
from toolweave.tools._concurrent import abandoned_threads, executor, result_of

HUNG = 40
TIMEOUT = 0.05
S = ScriptedChatModel


def hanging_tools(release: threading.Event) -> tuple[object, object]:
    @tool(timeout=TIMEOUT)
    def hang(i: int) -> str:
        release.wait(30)
        return 'late'

    @tool
    def ok(x: int) -> str:
        return f'ok {x}'

    return hang, ok


@pytest.mark.timeout(60)
@pytest.mark.parametrize('mode', MODES)
def test_hung_sync_tools_past_their_timeout_leave_capacity_for_later_calls(mode, caplog):
    release = threading.Event()
    hang, ok = hanging_tools(release)
    before = abandoned_threads()
    script = [
        calls(('hang', {'i': i}) for i in range(HUNG)),
        S.tool_call_response('ok', {'x': 7}),
        S.text_response('done'),
    ]
    model = ScriptedChatModel(script)
    try:
        with caplog.at_level(logging.WARNING, logger='toolweave.tools'):
            text, _ = run(ChatClient.create(model).prompt('go').tools(hang, ok), mode)
        assert text == 'done'
        first, second = (p.messages[-1] for p in model.prompts[1:3])
        assert isinstance(first, ToolResponseMessage) and isinstance(second, ToolResponseMessage)
        assert {r.response_data for r in first.responses} == {
            f"Tool 'hang' did not finish within {TIMEOUT:g} seconds and was abandoned."
        }
        assert [r.response_data for r in second.responses] == ['ok 7']
        # every call that started is abandoned, not counted against the 32 slots (the rest never started)
        assert 32 <= abandoned_threads() - before <= HUNG
        warnings = [r for r in caplog.records if 'abandoned sync tool call(s) are still running' in r.getMessage()]
        assert warnings, 'the abandoned count is logged'
        # a later request of the process is not starved either
        later = ScriptedChatModel([S.tool_call_response('ok', {'x': 8}), S.text_response('again')])
        assert run(ChatClient.create(later).prompt('go').tools(ok), mode)[0] == 'again'
        assert later.prompts[1].messages[-1].responses[0].response_data == 'ok 8'
    finally:
        release.set()
    assert wait_until(lambda: abandoned_threads() == before), 'released threads are no longer counted'


@pytest.mark.timeout(60)
@pytest.mark.parametrize('mode', MODES)
def test_function_tool_callbacks_past_their_timeout_use_the_same_workers(mode):
    # a sync FunctionToolCallback runs on the tool workers too (never on the event loop's default executor)
    release = threading.Event()
    stuck = (
        FunctionToolCallback.builder('stuck', lambda args: release.wait(30) and 'late')
        .input_schema({'type': 'object', 'properties': {'i': {'type': 'integer'}}})
        .build()
    )
    _, ok = hanging_tools(release)
    before = abandoned_threads()
    manager = DefaultToolCallingManager(default_timeout=TIMEOUT)
    script = [
        calls(('stuck', {'i': i}) for i in range(HUNG)),
        S.tool_call_response('ok', {'x': 1}),
        S.text_response('done'),
    ]
    model = ScriptedChatModel(script)
    client = ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(manager)).build()
    try:
        assert run(client.prompt('go').tools(stuck, ok), mode)[0] == 'done'
        assert 32 <= abandoned_threads() - before <= HUNG
    finally:
        release.set()
    assert wait_until(lambda: abandoned_threads() == before)


def test_workers_run_every_startable_call_at_once():
    # 32 calls that each wait for all 32 to have started: a worker pool that under-provisions deadlocks here
    pool = executor()
    barrier = threading.Barrier(pool.size, timeout=10)
    futures = [pool.submit(barrier.wait) for _ in range(pool.size)]
    assert sorted(f.result(15) for f in futures) == list(range(pool.size))


def test_a_worker_hands_base_exceptions_to_the_caller_and_keeps_serving():
    pool = executor()

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        result_of(pool.submit(interrupt), 10)
    assert pool.submit(lambda: 'still serving').result(10) == 'still serving'


@pytest.mark.timeout(60)
def test_a_cancelled_turn_waits_for_a_timed_sync_tool_only_until_its_timeout():
    # a tool raising CancelledError cancels its turn; the timed tool next to it is waited for at most
    # until its timeout, then abandoned (without a timeout it would be waited for until it returns)
    release = threading.Event()
    hang, _ = hanging_tools(release)

    @tool
    async def cancel(x: int) -> str:
        await asyncio.sleep(0.01)
        raise asyncio.CancelledError

    before = abandoned_threads()
    model = ScriptedChatModel([calls([('hang', {'i': 1}), ('cancel', {'x': 1})]), S.text_response('unreachable')])
    started = time.monotonic()
    try:
        with pytest.raises(asyncio.CancelledError):
            run(ChatClient.create(model).prompt('go').tools(hang, cancel), 'acall')
        assert time.monotonic() - started < 5
        assert abandoned_threads() - before == 1
    finally:
        release.set()
    assert wait_until(lambda: abandoned_threads() == before)
