"""A worker SIGKILLed mid-run: another worker process finishes the run; no tool runs twice."""

from __future__ import annotations

import asyncio
import time

from durable_app import PlanModel, first, second, third
from temporalio.api.enums.v1 import PendingActivityState
from test_durable_run import in_process
from toolweave.durable import DurableClient, connect


def _log_lines(folder, name):
    path = folder / f'{name}.log'
    return path.read_text().splitlines() if path.exists() else []


def _wait_for(predicate, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, 'timed out waiting'
        time.sleep(0.05)


async def _second_tool_running(target, run_id):
    """Round 2's tool call has started, and the history holds 3 completed activities (rounds 1 and 2, `first`)."""
    handle = (await connect(target)).get_workflow_handle(run_id)
    history = await handle.fetch_history()
    completed = sum(e.HasField('activity_task_completed_event_attributes') for e in history.events)
    pending = (await handle.describe()).raw_description.pending_activities
    started = any(
        p.activity_type.name == 'toolweave.tool_call' and p.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        for p in pending
    )
    return completed == 3 and started


def test_sigkilled_worker_run_finished_by_another_worker(temporal_target, task_queue, tool_dir, worker_processes):
    one = worker_processes()

    async def start():
        tw = DurableClient(await connect(temporal_target), task_queue=task_queue)
        return (await tw.start('go', model='plan', tools=['first', 'second', 'third'])).id

    run_id = asyncio.run(start())
    _wait_for(lambda: asyncio.run(_second_tool_running(temporal_target, run_id)))
    one.kill()  # SIGKILL: `first` completed (recorded), `second` running (it waits for the go file)
    (tool_dir / 'go').touch()
    two = worker_processes()

    async def finish():
        tw = DurableClient(await connect(temporal_target), task_queue=task_queue)
        return await asyncio.wait_for(tw.get(run_id).result(), 60)

    response = asyncio.run(finish())
    first_runs, second_runs, third_runs = (_log_lines(tool_dir, n) for n in ('first', 'second', 'third'))
    assert first_runs == [f'{one.pid} 1']  # ran once, on the killed worker
    assert second_runs == [f'{two.pid} 2']  # once each, on the second worker
    assert third_runs == [f'{two.pid} 3']
    expected, _ = in_process(PlanModel(), first, second, third)
    assert response.text == expected.text == 'answer: first=10 | second=20 | third=30'
    assert response.usage == expected.usage
    assert response.metadata['toolCallingRounds'] == expected.metadata['toolCallingRounds'] == 4
