"""Determinism: Temporal's ``Replayer`` replays toolweave's workflow over recorded histories.

The histories in tests/data/durable/ were recorded by this module (``TOOLWEAVE_RECORD_HISTORIES=1``);
a fresh history of each scenario is recorded and replayed too. A replay runs the workflow code again
against the recorded results: any clock, randomness or changed decision fails it (the last test shows
the replayer catching a loop whose decisions changed).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from durable_app import build_registry
from temporalio.client import WorkflowHistory
from temporalio.workflow import NondeterminismError
from test_durable_run import durable
from toolweave import ToolCallingAdvisor
from toolweave.durable import create_replayer

DATA = Path(__file__).parent.parent / 'data' / 'durable'
RECORDED_QUEUE = 'tw-recorded'
SCENARIOS = {
    'pair_run': {'model': 'pair', 'tools': ['first', 'second', 'third']},
    'failing_tools': {'model': 'failing', 'tools': ['broken', 'slow']},
    'structured_output': {'model': 'json', 'advisors': ['person']},
    'tool_search': {'model': 'searching', 'tools': ['get_weather', 'get_time'], 'loop': 'search'},
    'streamed_deltas': {'model': 'streaming', 'tools': ['first'], 'deltas': True},
}


def _registry():
    from durable_app import JsonModel, Person, PlanModel, SearchingModel, StreamingModel, get_time, get_weather
    from toolweave.advisors import ToolSearchToolCallingAdvisor

    registry = build_registry()
    registry.add_model('failing', PlanModel(((('broken', '{"x": 1}'), ('slow', '{"x": 2}')),)))
    registry.add_model('json', JsonModel()).add_output('person', Person)
    registry.add_model('searching', SearchingModel()).add_tools(get_weather, get_time)
    registry.add_loop('search', ToolSearchToolCallingAdvisor())
    return registry.add_model('streaming', StreamingModel())


async def _record(target, task_queue, scenario):
    async with durable(target, task_queue, _registry()) as tw:
        run = await tw.start('go', **SCENARIOS[scenario])
        await run.result()
        return await run.handle.fetch_history()


@pytest.mark.parametrize('scenario', sorted(SCENARIOS))
def test_fresh_history_replays(temporal_target, scenario):
    history = asyncio.run(_record(temporal_target, RECORDED_QUEUE, scenario))
    if os.environ.get('TOOLWEAVE_RECORD_HISTORIES') == '1':
        DATA.mkdir(parents=True, exist_ok=True)
        (DATA / f'{scenario}.json').write_text(json.dumps(json.loads(history.to_json()), indent=1))
    result = asyncio.run(create_replayer(_registry()).replay_workflow(history))
    assert result.replay_failure is None


@pytest.mark.parametrize('scenario', sorted(SCENARIOS))
def test_recorded_history_replays(scenario):
    history = WorkflowHistory.from_json(f'recorded-{scenario}', (DATA / f'{scenario}.json').read_text())
    assert any(e.activity_task_completed_event_attributes.result.payloads for e in history.events)  # real results
    result = asyncio.run(create_replayer(_registry()).replay_workflow(history))
    assert result.replay_failure is None


def test_replay_catches_changed_decisions():
    history = WorkflowHistory.from_json('recorded-pair', (DATA / 'pair_run.json').read_text())
    registry = _registry().add_loop('default', ToolCallingAdvisor(max_rounds=1))  # now stops after round 1
    with pytest.raises(NondeterminismError):
        asyncio.run(create_replayer(registry).replay_workflow(history))
