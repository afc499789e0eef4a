"""Activity settings from the objects: tool timeouts and retries, model Timeouts and RetryPolicy; the data converter."""

from __future__ import annotations

from datetime import timedelta

import pytest
from durable_app import FLAKY_CALLS, PlanModel, SlowModel, build_registry, flaky, slow
from test_durable_run import run_durable
from toolweave import ToolCallingAdvisor
from toolweave.approvals import Approve, DeferredResult, Deny, PendingToolCall
from toolweave.chat.content import Media
from toolweave.chat.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.chat.options import ChatOptions
from toolweave.chat.response import ChatResponse, Generation, Usage
from toolweave.durable import DATA_CONVERTER, DurableRegistry, ToolRetry, UnknownNameError
from toolweave.durable._codec import from_json_value, to_json_value
from toolweave.durable._registry import model_retry_policy
from toolweave.events import RunFinished, ToolCallReady
from toolweave.exceptions import ProviderTimeoutError
from toolweave.providers import RetryPolicy, Timeouts
from toolweave.tools.manager import DefaultToolCallingManager


def test_tool_timeout_and_retry_come_from_the_tool():
    registry = DurableRegistry(timeout_grace=2.0, max_tool_seconds=100.0).add_tools(slow, flaky)
    registry.add_loop('bounded', ToolCallingAdvisor(DefaultToolCallingManager(default_timeout=7.0)))
    assert registry.tool_timeout('slow', 'default') == (0.5, timedelta(seconds=2.5))  # the tool's own timeout
    assert registry.tool_timeout('flaky', 'default') == (None, timedelta(seconds=100))  # none: the bound
    assert registry.tool_timeout('flaky', 'bounded') == (7.0, timedelta(seconds=9))  # the manager's default
    policy = registry.tool_retry_policy('flaky')
    assert policy.maximum_attempts == 3 and 'InvalidToolArgumentsError' in policy.non_retryable_error_types


def test_model_timeout_and_retry_come_from_timeouts_and_retry_policy():
    registry = DurableRegistry()
    registry.add_model('total', PlanModel(), timeouts=Timeouts(total=12.0))
    registry.add_model('phases', PlanModel(), timeouts=Timeouts(connect=1.0, read=2.0, write=3.0, pool=4.0))
    registry.add_model('none', PlanModel())
    assert registry.model('total').timeout == timedelta(seconds=12)
    assert registry.model('phases').timeout == timedelta(seconds=10)
    assert registry.model('none').timeout == timedelta(seconds=600)
    policy = model_retry_policy(RetryPolicy(max_retries=4, initial_delay=0.25, multiplier=3.0, max_delay=5.0))
    assert (policy.maximum_attempts, policy.initial_interval, policy.backoff_coefficient, policy.maximum_interval) == (
        5,
        timedelta(seconds=0.25),
        3.0,
        timedelta(seconds=5),
    )
    assert {'AuthenticationError', 'ContextLengthError', 'ToolArgumentsError'} <= set(policy.non_retryable_error_types)


def test_registry_checks_its_inputs():
    with pytest.raises(ValueError, match='heartbeat_timeout'):
        DurableRegistry(heartbeat_timeout=0)
    with pytest.raises(ValueError, match='attempts'):
        ToolRetry(attempts=0)
    with pytest.raises(TypeError, match='ToolCallingAdvisor'):
        DurableRegistry().add_loop('x', object())  # type: ignore[arg-type]
    with pytest.raises(UnknownNameError, match=r"no tool registered as 'nope' on this worker \(registered: slow\)"):
        DurableRegistry().add_tools(slow).tool('nope')


def test_model_timeout_ends_the_run_after_the_policy_attempts(temporal_target, task_queue):
    registry = build_registry()
    model = SlowModel(5.0)
    registry.add_model(
        'slow', model, timeouts=Timeouts(total=0.5), retry=RetryPolicy(max_retries=1, initial_delay=0.01)
    )
    with pytest.raises(ProviderTimeoutError, match='toolweave.model_call timed out'):
        run_durable(temporal_target, task_queue, registry=registry, model='slow')
    assert model.calls == 2  # max_retries=1: two attempts, each cut at 0.5 s


@pytest.mark.parametrize(('retry_errors', 'expected'), [(False, 'upstream reset'), (True, 'flaky=1')])
def test_tool_errors_retried_only_when_the_tool_says_so(temporal_target, task_queue, retry_errors, expected):
    FLAKY_CALLS.clear()
    registry = build_registry().add_tools(
        flaky, retry=ToolRetry(attempts=3, retry_errors=retry_errors, initial_interval=0.05)
    )
    registry.add_model('m', PlanModel(((('flaky', '{"x": 1}'),),)))
    response = run_durable(temporal_target, task_queue, registry=registry, model='m', tools=['flaky'])
    assert response.text == f'answer: {expected}'
    assert len(FLAKY_CALLS) == (2 if retry_errors else 1)


def test_codec_round_trips_toolweave_values():
    call = ToolCall('c1', 'function', 'get', '{"a": 1}')
    values = [
        SystemMessage('s', {'k': [1, 2]}),
        UserMessage('look', media=(Media('image/png', b'\x89PNG\r\n'), Media('image/png', 'https://x/y.png', 'y.png'))),
        AssistantMessage(None, (call,), {'reasoning': 'r'}),
        ToolResponseMessage((ToolResponse('c1', 'get', 'boom', True, 'ValueError'),)),
        ChatResponse(
            (Generation(AssistantMessage('hi'), 'stop', {'pendingToolCalls': (call,)}),),
            'id',
            'model',
            Usage(1, 2, 3, {'cached_tokens': 1}, None, {'raw': True}),
        ),
        ToolCallReady(2, 0, call, {'a': 1}),
        RunFinished(3, ChatResponse(), None),
        PendingToolCall('c1', 'get', {'a': 1}, 'why', deferred=True),
        {'x': Approve(), 'y': Deny('no'), 'z': DeferredResult({'v': 1}, is_error=True)},
    ]
    for value in values:
        assert from_json_value(to_json_value(value)) == value
        payload = DATA_CONVERTER.payload_converter.to_payloads([value])[0]
        assert payload.metadata['encoding'] == b'json/plain'
        assert DATA_CONVERTER.payload_converter.from_payloads([payload])[0] == value
    assert (
        from_json_value(to_json_value(UserMessage('x', media=(Media('image/png', b'\x00'),)))).media[0].data == b'\x00'
    )


def test_codec_refuses_unknown_classes():
    class Secret:
        pass

    with pytest.raises(TypeError, match='cannot carry a Secret'):
        to_json_value({'k': Secret()})
    with pytest.raises(ValueError, match="unknown class in a durable payload: 'os.system'"):
        from_json_value({'@': 'os.system', 'command': 'rm'})


def test_lone_surrogates_become_replacement_characters():
    payload = DATA_CONVERTER.payload_converter.to_payloads([UserMessage('bad \udcff name')])[0]
    assert DATA_CONVERTER.payload_converter.from_payloads([payload])[0] == UserMessage('bad \ufffd name')


def test_options_and_tools_reach_the_model(temporal_target, task_queue):
    class Recording(PlanModel):
        def __init__(self):
            super().__init__(((('first', '{"x": 1}'),),))
            self.options = []

        async def acall(self, prompt):
            self.options.append(prompt.options)
            return await super().acall(prompt)

    model = Recording()
    registry = build_registry()
    registry.add_model('rec', model)
    options = ChatOptions(model='m-1', temperature=0.2, max_tokens=50, stop=('END', 'STOP'), extra_body={'k': [1]})
    response = run_durable(
        temporal_target, task_queue, registry=registry, model='rec', tools=['first', 'third'], options=options
    )
    assert response.text == 'answer: first=10'
    assert len(model.options) == 2
    for seen in model.options:
        assert (seen.model, seen.temperature, seen.max_tokens, seen.stop, dict(seen.extra_body)) == (
            'm-1',
            0.2,
            50,
            ('END', 'STOP'),
            {'k': [1]},
        )
        assert [c.tool_definition.name for c in seen.tool_callbacks] == ['first', 'third']


def test_a_call_lost_on_every_attempt_reaches_the_model_as_a_timeout():
    from temporalio.exceptions import TimeoutType
    from toolweave.durable._workflow import lost_call_error
    from toolweave.tools.provider import to_tool_callbacks

    definition = to_tool_callbacks(slow)[0].tool_definition
    lost = lost_call_error(definition, TimeoutType.HEARTBEAT, timedelta(seconds=5.5), 3)
    assert str(lost) == "Tool 'slow' did not finish: the worker running it was lost (3 attempt(s))."
    assert type(lost.cause) is TimeoutError and lost.__cause__ is lost.cause
    bound = lost_call_error(definition, TimeoutType.START_TO_CLOSE, timedelta(seconds=5.5), 1)
    assert str(bound) == "Tool 'slow' did not finish within 5.5 seconds (1 attempt(s))."
