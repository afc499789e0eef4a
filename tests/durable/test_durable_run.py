"""Durable runs against a real Temporal dev server: same answers, usage and events as the in-process loop."""

from __future__ import annotations

import asyncio
import contextlib

from app import PLAN, PlanModel, build_registry, first, second, third
from toolweave import ChatClient
from toolweave.durable import DurableClient, connect, create_worker


@contextlib.asynccontextmanager
async def durable(target: str, task_queue: str, registry=None):
    client = await connect(target)
    async with create_worker(client, registry or build_registry(), task_queue=task_queue):
        yield DurableClient(client, task_queue=task_queue)


def in_process(model: PlanModel, *tools):
    events = []
    response = ChatClient.create(model).prompt('go').tools(*tools).call(on_event=events.append).chat_response()
    return response, events


def test_durable_run_matches_in_process(temporal_target, task_queue):
    async def main():
        async with durable(temporal_target, task_queue) as tw:
            return await tw.run('go', model='pair', tools=['first', 'second', 'third'])

    response = asyncio.run(main())
    expected, _ = in_process(PlanModel(((PLAN[0],), (PLAN[1], PLAN[2]))), first, second, third)
    assert response.text == expected.text == 'answer: first=10 | second=20 | third=30'
    assert response.usage == expected.usage
    assert response.usage.prompt_tokens == 10 + 11 + 12
    assert response.result.finish_reason == expected.result.finish_reason == 'stop'
    assert response.metadata['toolCallingRounds'] == expected.metadata['toolCallingRounds'] == 3
