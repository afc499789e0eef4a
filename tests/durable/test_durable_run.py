"""Durable runs against a real Temporal dev server: same answers, usage and events as the in-process loop."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from durable_app import (
    PLAN,
    FailingModel,
    PlanModel,
    broken,
    build_registry,
    direct,
    first,
    huge,
    second,
    slow,
    third,
    whoami,
)
from toolweave import ChatClient, ToolCallingAdvisor
from toolweave.chat.messages import ToolResponseMessage
from toolweave.durable import DurableClient, DurableRunError, connect, create_worker
from toolweave.events import RunFinished, ToolExecutionStarted, ToolResult
from toolweave.exceptions import (
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    ServerError,
    ToolRetryBudgetExceededError,
)
from toolweave.providers import RetryPolicy
from toolweave.tools.limits import ToolCallLimits
from toolweave.tools.manager import DefaultToolCallingManager


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


def run_durable(target, task_queue, prompt='go', registry=None, **settings):
    async def main():
        async with durable(target, task_queue, registry) as tw:
            return await tw.run(prompt, **settings)

    return asyncio.run(main())


def registry_with(model_name, model, *tools, loop=None):
    registry = build_registry()
    registry.add_model(model_name, model, retry=RetryPolicy(max_retries=2, initial_delay=0.01, jitter=0.0))
    if tools:
        registry.add_tools(*tools)
    if loop is not None:
        registry.add_loop('custom', loop)
    return registry


def test_events_stream_as_in_process(temporal_target, task_queue):
    async def main():
        async with durable(temporal_target, task_queue) as tw:
            run = await tw.start('go', model='pair', tools=['first', 'second', 'third'])
            events = [event async for event in run.events()]
            return events, await run.result()

    events, response = asyncio.run(main())
    _, expected = in_process(PlanModel(((PLAN[0],), (PLAN[1], PLAN[2]))), first, second, third)
    concurrent = (ToolExecutionStarted, ToolResult)  # calls of one round overlap: their order may differ
    assert [type(e) for e in events if not isinstance(e, concurrent)] == [
        type(e) for e in expected if not isinstance(e, concurrent)
    ]
    assert sorted((e.round, e.kind) for e in events) == sorted((e.round, e.kind) for e in expected)
    assert [e.kind for e in events][:2] == ['round_started', 'tool_call_started']
    results = [e for e in events if isinstance(e, ToolResult)]
    assert sorted((r.name, r.text, r.is_error) for r in results) == sorted(
        (r.name, r.text, r.is_error) for r in expected if isinstance(r, ToolResult)
    )
    assert all(r.duration > 0 for r in results)  # measured by the activity
    assert isinstance(events[-1], RunFinished)
    assert events[-1].usage == response.usage


def _tool_texts(response_or_prompt):
    return [
        r.response_data for m in response_or_prompt.messages if isinstance(m, ToolResponseMessage) for r in m.responses
    ]


@pytest.mark.parametrize(
    ('tool_name', 'expected_text', 'error_type'),
    [
        ('broken', "KeyError: 'missing'", 'KeyError'),
        ('slow', "Tool 'slow' did not finish within 0.5 seconds and was abandoned.", 'TimeoutError'),
    ],
)
def test_tool_failures_answered_as_in_process(temporal_target, task_queue, tool_name, expected_text, error_type):
    plan = (((tool_name, '{"x": 1}'),),)
    events = []

    async def main():
        async with durable(temporal_target, task_queue, registry_with('m', PlanModel(plan))) as tw:
            run = await tw.start('go', model='m', tools=[tool_name])
            events.extend([e async for e in run.events()])
            return await run.result()

    response = asyncio.run(main())
    expected, expected_events = in_process(PlanModel(plan), broken if tool_name == 'broken' else slow)
    result = next(e for e in events if isinstance(e, ToolResult))
    in_process_result = next(e for e in expected_events if isinstance(e, ToolResult))
    assert (result.text, result.is_error, result.error_type) == (expected_text, True, error_type)
    assert (in_process_result.text, in_process_result.error_type) == (expected_text, error_type)
    assert response.text == expected.text == f'answer: {expected_text}'


def test_large_tool_result_reaches_the_model_as_an_error_text(temporal_target, task_queue):
    plan = ((('huge', '{"x": 1}'),),)
    response = run_durable(
        temporal_target, task_queue, registry=registry_with('m', PlanModel(plan), huge), model='m', tools=['huge']
    )
    assert response.text == (
        "answer: Tool 'huge' returned 5000 bytes, more than a durable run carries (max_tool_result_bytes=4096)."
    )


def test_return_direct_and_max_rounds_as_in_process(temporal_target, task_queue):
    direct_plan = ((('direct', '{"x": 4}'),),)
    registry = registry_with('direct', PlanModel(direct_plan), direct, loop=ToolCallingAdvisor(max_rounds=2))
    registry.add_model('endless', PlanModel(tuple((('first', f'{{"x": {i}}}'),) for i in range(5))))

    async def main():
        async with durable(temporal_target, task_queue, registry) as tw:
            return (
                await tw.run('go', model='direct', tools=['direct']),
                await tw.run('go', model='endless', tools=['first'], loop='custom'),
            )

    returned, bounded = asyncio.run(main())
    expected_direct, _ = in_process(PlanModel(direct_plan), direct)
    assert returned.text == expected_direct.text == 'direct=4'
    assert returned.result.finish_reason == 'returnDirect'
    assert returned.usage == expected_direct.usage
    endless = PlanModel(tuple((('first', f'{{"x": {i}}}'),) for i in range(5)))
    client = ChatClient.builder(endless).tool_calling_advisor(ToolCallingAdvisor(max_rounds=2)).build()
    expected_bounded = client.prompt('go').tools(first).call().chat_response()
    assert bounded.result.finish_reason == expected_bounded.result.finish_reason == 'maxRoundsReached'
    assert bounded.text == expected_bounded.text
    assert bounded.usage == expected_bounded.usage


def test_invalid_arguments_retry_budget_as_in_process(temporal_target, task_queue):
    plan = ((('first', '{"x": "one"}'),), (('first', '{"x": "two"}'),))
    with pytest.raises(ToolRetryBudgetExceededError) as in_process_error:
        in_process(PlanModel(plan), first)
    with pytest.raises(DurableRunError) as durable_error:
        run_durable(
            temporal_target, task_queue, registry=registry_with('m', PlanModel(plan)), model='m', tools=['first']
        )
    assert durable_error.value.error_type == 'ToolRetryBudgetExceededError'
    assert durable_error.value.message == str(in_process_error.value)


@pytest.mark.parametrize(
    ('error', 'attempts'),
    [
        (AuthenticationError('bad key', status_code=401), 1),
        (ContextLengthError('too long', status_code=400), 1),
        (BadRequestError('bad request', status_code=400), 1),
        (ServerError('overloaded', status_code=503), 3),  # RetryPolicy(max_retries=2): 3 attempts
    ],
)
def test_model_errors_retried_by_the_retry_policy_or_not_at_all(temporal_target, task_queue, error, attempts):
    model = FailingModel(error)
    with pytest.raises(type(error)) as raised:
        run_durable(temporal_target, task_queue, registry=registry_with('m', model), model='m')
    assert type(raised.value) is type(error)
    assert str(raised.value) == str(error)
    assert raised.value.status_code == error.status_code
    assert model.calls == attempts


def test_unknown_names_fail_the_run(temporal_target, task_queue):
    with pytest.raises(DurableRunError) as raised:
        run_durable(temporal_target, task_queue, model='nope')
    assert raised.value.error_type == 'UnknownNameError'
    assert "no model registered as 'nope'" in raised.value.message


def test_tool_context_travels_with_the_call(temporal_target, task_queue):
    plan = ((('whoami', '{"x": 1}'),),)
    registry = registry_with('m', PlanModel(plan), whoami)
    response = run_durable(
        temporal_target, task_queue, registry=registry, model='m', tools=['whoami'], tool_context={'user': 'ada'}
    )
    client = ChatClient.builder(PlanModel(plan)).default_tool_context({'user': 'ada'}).build()
    expected = client.prompt('go').tools(whoami).call().chat_response()
    assert response.text == expected.text == 'answer: user=ada history=2 last=AssistantMessage'


def test_a_tool_the_run_does_not_offer_fails_as_in_process(temporal_target, task_queue):
    plan = ((('third', '{"x": 1}'),),)
    with pytest.raises(LookupError) as in_process_error:
        in_process(PlanModel(plan), first)
    with pytest.raises(DurableRunError) as raised:
        run_durable(
            temporal_target, task_queue, registry=registry_with('m', PlanModel(plan)), model='m', tools=['first']
        )
    assert (raised.value.error_type, raised.value.message) == ('LookupError', str(in_process_error.value))


def test_events_arrive_while_the_run_runs(temporal_target, task_queue, tool_dir):
    async def main():
        async with durable(temporal_target, task_queue) as tw:
            run = await tw.start('go', model='plan', tools=['first', 'second', 'third'])
            seen = []
            async for event in run.events(poll_interval=0.05):
                seen.append(event)
                if isinstance(event, ToolResult) and event.name == 'first':
                    break  # `second` now waits for the go file: the run is still going
            assert not (tool_dir / 'second.log').exists()
            (tool_dir / 'go').touch()
            rest = [e async for e in run.events()]  # a new stream starts from the first event
            return seen, rest, await run.result()

    seen, rest, response = asyncio.run(main())
    assert [e.kind for e in seen] == [
        'round_started',
        'tool_call_started',
        'tool_call_ready',
        'round_finished',
        'tool_execution_started',
        'tool_result',
    ]
    assert rest[: len(seen)] == seen  # the same events again, from the start
    assert isinstance(rest[-1], RunFinished) and rest[-1].response.text == response.text


@pytest.mark.parametrize(
    ('advisor', 'plan'),
    [
        (  # per-tool limit 2: the third call of `first` in the turn breaches it
            lambda: ToolCallingAdvisor(DefaultToolCallingManager(limits=ToolCallLimits(per_tool={'first': 2}))),
            ((('first', '{"x": 1}'), ('third', '{"x": 2}')), (('first', '{"x": 3}'), ('first', '{"x": 4}'))),
        ),
        (  # the same call three times in a row
            lambda: ToolCallingAdvisor(max_identical_tool_calls=3),
            tuple((('first', '{"x": 1}'),) for _ in range(4)),
        ),
    ],
)
def test_limits_and_guards_end_the_run_as_in_process(temporal_target, task_queue, advisor, plan):
    registry = registry_with('m', PlanModel(plan), loop=advisor())
    response = run_durable(
        temporal_target, task_queue, registry=registry, model='m', tools=['first', 'third'], loop='custom'
    )
    client = ChatClient.builder(PlanModel(plan)).tool_calling_advisor(advisor()).build()
    expected = client.prompt('go').tools(first, third).call().chat_response()
    assert response.result.finish_reason == expected.result.finish_reason
    assert response.result.finish_reason in ('toolCallLimitExceeded', 'repeatedToolCall')
    assert response.text == expected.text
    assert response.usage == expected.usage
    assert response.result.metadata == expected.result.metadata  # partial responses / pending calls, as tuples
