"""A durable run paused for approval waits (no worker held) for a decision from any process, then continues."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_durable_crash import _log_lines
from test_durable_run import durable
from toolweave.approvals import Approve, Deny
from toolweave.durable import DurableClient, DurableRunError, connect
from toolweave.events import ApprovalRequested, RunFinished

HERE = Path(__file__).parent


async def _wait_pending(run, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not (pending := await run.pending()):
        assert time.monotonic() < deadline, 'the run did not pause'
        await asyncio.sleep(0.1)
    return pending


def test_paused_run_denied_and_decisions_checked(temporal_target, task_queue, tool_dir):
    async def main():
        async with durable(temporal_target, task_queue) as tw:
            run = await tw.start('go', model='approval', tools=['first', 'guarded'])
            pending = await _wait_pending(run)
            rejected = []
            for wrong in ({}, {'nope': Approve()}, {pending[0].id: Approve(), 'nope': Deny()}):
                with pytest.raises(DurableRunError) as raised:
                    await run.decide(wrong)
                rejected.append(raised.value.error_type)
            await run.decide({pending[0].id: Deny()})
            with pytest.raises(DurableRunError) as again:
                await run.decide({pending[0].id: Approve()})  # decided already
            events = [e async for e in run.events()]
            return run.id, pending, rejected, again.value.error_type, events, await run.result()

    run_id, pending, rejected, again, events, response = asyncio.run(main())
    assert [(p.name, p.arguments, p.deferred) for p in pending] == [('guarded', {'x': 5}, False)]
    assert rejected == ['MissingDecisionError', 'UnknownToolCallError', 'UnknownToolCallError']
    assert again == 'RunNotPausedError'
    assert _log_lines(tool_dir, 'guarded') == []  # denied: never ran
    assert response.text == "answer: first=10 | The user denied the call to tool 'guarded': it was not executed."
    assert response.usage.prompt_tokens == 10 + 11  # the rounds before and after the pause, summed
    kinds = [type(e) for e in events]
    assert ApprovalRequested in kinds and kinds[-1] is RunFinished
    paused = next(e for e in events if isinstance(e, ApprovalRequested))
    assert paused.state.run_id == run_id  # the workflow id, not a random one
    assert [p.name for p in paused.calls] == ['guarded']


def test_paused_run_approved_from_another_process_finished_by_another_worker(
    temporal_target, task_queue, tool_dir, worker_processes
):
    one = worker_processes()

    async def start():
        tw = DurableClient(await connect(temporal_target), task_queue=task_queue)
        run = await tw.start('go', model='approval', tools=['first', 'guarded'])
        await _wait_pending(run)
        return run.id

    run_id = asyncio.run(start())
    one.kill()  # the paused run holds no worker: kill the one that ran it
    two = worker_processes()
    approved = subprocess.run(
        [sys.executable, str(HERE / 'decide_process.py'), temporal_target, task_queue, run_id],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.split() == ['guarded']

    async def finish():
        tw = DurableClient(await connect(temporal_target), task_queue=task_queue)
        return await asyncio.wait_for(tw.get(run_id).result(), 60)

    response = asyncio.run(finish())
    assert _log_lines(tool_dir, 'first') == [f'{one.pid} 1']  # before the pause, once
    assert _log_lines(tool_dir, 'guarded') == [f'{two.pid} 5']  # approved, run by the second worker
    assert response.text == 'answer: first=10 | guarded=50'
    assert response.usage.prompt_tokens == 10 + 11
    assert response.metadata['toolCallingRounds'] == 2
