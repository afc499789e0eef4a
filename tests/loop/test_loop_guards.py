"""max_rounds, identical-call detection, ChatClient rules, and one span per round (blocking, async, streaming)."""

import asyncio

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolweave import ChatClient, tool
from toolweave.advisors import (
    MAX_ROUNDS_FINISH_REASON,
    REPEATED_TOOL_CALL_FINISH_REASON,
    BaseAdvisor,
    MessageChatMemoryAdvisor,
    ToolCallingAdvisor,
)
from toolweave.chat import AssistantMessage, ToolResponseMessage, UserMessage
from toolweave.memory import MessageWindowChatMemory
from toolweave.providers import ScriptedChatModel
from toolweave.tools import DefaultToolCallingManager, ToolCallLimitBehavior, ToolCallLimits

S = ScriptedChatModel
calls: list[int] = []


@tool
def ping(n: int) -> str:
    """Ping."""
    calls.append(n)
    return f'pong {n}'


@tool
def other(n: int) -> str:
    return f'other {n}'


def client_with(model, **advisor_args):
    return ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(**advisor_args)).build()


def test_max_rounds_ends_a_loop_that_limits_cannot_end(run_loop):
    calls.clear()
    limits = ToolCallLimits().exclude_tool_from_limit('ping').with_behavior(ToolCallLimitBehavior.RETURN_ERROR_RESPONSE)
    model = ScriptedChatModel([S.tool_call_response('ping', {'n': i}) for i in range(5)])
    client = client_with(model, tool_calling_manager=DefaultToolCallingManager(limits=limits), max_rounds=3)
    chat = run_loop(client.prompt('go').tools(ping)).response
    assert chat.result.finish_reason == MAX_ROUNDS_FINISH_REASON == 'maxRoundsReached'
    assert chat.text == 'Tool-calling loop stopped: the model still asked for tools after 3 rounds (max_rounds=3).'
    assert [c.name for c in chat.result.metadata['pendingToolCalls']] == ['ping']
    assert calls == [0, 1]
    assert model.remaining == 2


def test_identical_calls_in_a_row_end_the_loop(run_loop):
    calls.clear()
    model = ScriptedChatModel(
        [
            S.tool_call_response('ping', '{"n": 1}'),
            S.tool_call_response('ping', '{ "n" : 1 }'),
            S.tool_call_response('ping', '{"n":1}'),
            S.text_response('never'),
        ]
    )
    chat = run_loop(client_with(model, max_identical_tool_calls=3).prompt('go').tools(ping)).response
    assert chat.result.finish_reason == REPEATED_TOOL_CALL_FINISH_REASON == 'repeatedToolCall'
    assert chat.text == "Tool-calling loop stopped: tool 'ping' was called 3 times in a row with identical arguments."
    assert chat.result.metadata['repeatedToolCall'] == 'ping'
    assert calls == [1, 1]
    assert model.remaining == 1


def test_a_different_call_resets_the_streak(run_loop):
    calls.clear()
    model = ScriptedChatModel(
        [
            S.tool_call_response('ping', {'n': 1}),
            S.tool_call_response('ping', {'n': 2}),
            S.tool_call_response('ping', {'n': 1}, more=[('other', {'n': 1})]),
            S.tool_call_response('ping', {'n': 1}),
            S.text_response('done'),
        ]
    )
    result = run_loop(client_with(model, max_identical_tool_calls=2).prompt('go').tools(ping, other))
    assert result.text == 'done'
    assert calls == [1, 2, 1, 1]


def test_guards_are_off_by_default_and_validated():
    advisor = ToolCallingAdvisor()
    assert advisor.max_rounds is None and advisor.max_identical_tool_calls is None
    with pytest.raises(ValueError, match='max_rounds must be an int >= 1 or None, got 0'):
        ToolCallingAdvisor(max_rounds=0)
    with pytest.raises(ValueError, match='max_identical_tool_calls must be an int >= 2 or None, got 1'):
        ToolCallingAdvisor(max_identical_tool_calls=1)
    copy = ToolCallingAdvisor(max_rounds=4, max_identical_tool_calls=2).copy()
    assert (copy.max_rounds, copy.max_identical_tool_calls) == (4, 2)


# -- ChatClient rules ---------------------------------------------------------------------------


def test_auto_register_switch_returns_tool_calls_to_the_caller():
    model = ScriptedChatModel([S.tool_call_response('ping', {'n': 1}, 'c1')])
    client = ChatClient.builder(model).tool_calling_advisor_auto_register(False).build()
    chat = client.prompt('go').tools(ping).call().chat_response()
    assert chat.result.finish_reason == 'tool_calls'
    assert [c.id for c in chat.result.output.tool_calls] == ['c1']
    assert model.remaining == 0


def test_two_tool_advisors_error_lists_names_and_orders():
    class Audited(ToolCallingAdvisor):
        pass

    client = ChatClient.create(ScriptedChatModel([]))
    with pytest.raises(ValueError) as info:
        client.prompt('go').advisors(ToolCallingAdvisor(), Audited(order=5)).call()
    assert str(info.value) == (
        'Only one ToolCallingAdvisor is allowed on a chain, found 2: '
        'ToolCallingAdvisor (order -2147483348), Audited (order 5)'
    )


def test_memory_inside_the_loop_turns_tool_history_off_and_stores_every_round(run_loop):
    model = ScriptedChatModel([S.tool_call_response('ping', {'n': 7}, 'c1'), S.text_response('pong received')])
    template = ToolCallingAdvisor()
    memory = MessageWindowChatMemory()
    inner_memory = MessageChatMemoryAdvisor(memory, order=ToolCallingAdvisor.DEFAULT_ORDER + 1)
    client = ChatClient.builder(model).default_system('sys').tool_calling_advisor(template).build()
    run_loop(client.prompt('go').tools(ping).advisors(inner_memory, chat_memory_conversation_id='u1'))
    assert template.conversation_history_enabled is True  # the builder's template is untouched
    second = model.prompts[1].messages
    assert [type(m).__name__ for m in second] == [
        'SystemMessage',
        'UserMessage',
        'AssistantMessage',
        'ToolResponseMessage',
    ]
    stored = memory.get('u1')
    assert [type(m).__name__ for m in stored] == [
        'UserMessage',
        'AssistantMessage',
        'ToolResponseMessage',
        'AssistantMessage',
    ]
    assert stored[1].tool_calls[0].id == 'c1' and stored[2].responses[0].response_data == 'pong 7'
    assert memory.get('default') == []


def test_memory_outside_the_loop_stores_user_and_final_answer_only(run_loop):
    memory = MessageWindowChatMemory()
    memory.add('u2', [UserMessage('earlier'), AssistantMessage('earlier answer')])
    model = ScriptedChatModel([S.tool_call_response('ping', {'n': 3}, 'c1'), S.text_response('pong 3 it is')])
    client = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory)).build()
    run_loop(client.prompt('go').tools(ping).advisors(chat_memory_conversation_id='u2'))
    assert [m.text for m in model.prompts[0].messages] == ['earlier', 'earlier answer', 'go']
    assert isinstance(model.prompts[1].messages[-1], ToolResponseMessage)
    assert [(type(m).__name__, m.text) for m in memory.get('u2')] == [
        ('UserMessage', 'earlier'),
        ('AssistantMessage', 'earlier answer'),
        ('UserMessage', 'go'),
        ('AssistantMessage', 'pong 3 it is'),
    ]


def test_request_settings_never_change_builder_defaults():
    seen = []

    class Marker(BaseAdvisor):
        advisor_params = frozenset({'chat_memory_conversation_id'})  # it reads the parameter (no warning)

        def before(self, request, chain):
            seen.append(dict(request.context))
            return request

    model = ScriptedChatModel([S.text_response('a'), S.text_response('b')])
    builder = ChatClient.builder(model).default_system('default sys').default_tools(ping)
    client = builder.default_tool_context({'k': 1}).default_advisors(Marker()).build()
    client.prompt('one').system('other sys').tools(other).tool_context({'k': 2, 'x': 3}).advisors(
        Marker(), chat_memory_conversation_id='c'
    ).call()
    client.prompt('two').call()
    first, second = model.prompts
    assert first.messages[0].text == 'other sys' and second.messages[0].text == 'default sys'
    assert [cb.tool_definition.name for cb in first.options.tool_callbacks] == ['ping', 'other']
    assert [cb.tool_definition.name for cb in second.options.tool_callbacks] == ['ping']
    assert dict(first.options.tool_context) == {'k': 2, 'x': 3} and dict(second.options.tool_context) == {'k': 1}
    assert seen == [{'chat_memory_conversation_id': 'c'}, {'chat_memory_conversation_id': 'c'}, {}]


def test_advisors_rejects_non_advisors():
    with pytest.raises(TypeError, match='advisors\\(\\) takes Advisor instances, got function'):
        ChatClient.create(ScriptedChatModel([])).prompt('x').advisors(ping)


# -- tracing ------------------------------------------------------------------------------------


@pytest.fixture
def spans(monkeypatch):
    import toolweave.advisors.tool_calling as loop_module
    import toolweave.tools.manager as manager_module

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer('toolweave')
    monkeypatch.setattr(loop_module, '_tracer', tracer)
    monkeypatch.setattr(manager_module, '_tracer', tracer)
    return tracer, exporter


def test_one_span_per_round_parents_the_tool_spans(spans, run_loop):
    tracer, exporter = spans
    model = ScriptedChatModel(
        [
            S.tool_call_response('ping', {'n': 1}, 'c1', more=[('other', {'n': 2})]),
            S.tool_call_response('ping', {'n': 3}, 'c3'),
            S.text_response('done'),
        ]
    )
    client = ChatClient.create(model)
    with tracer.start_as_current_span('app') as app:
        run_loop(client.prompt('go').tools(ping, other))
    finished = {s.name + str(s.attributes.get('toolweave.round.number', '')): s for s in exporter.get_finished_spans()}
    names = sorted(s.name for s in exporter.get_finished_spans())
    assert names == ['app', 'execute_tool other', 'execute_tool ping', 'execute_tool ping'] + ['toolweave.round'] * 3
    rounds = {n: finished[f'toolweave.round{n}'] for n in (1, 2, 3)}
    for span in rounds.values():
        assert span.parent.span_id == app.get_span_context().span_id
    tools = [s for s in exporter.get_finished_spans() if s.name.startswith('execute_tool')]
    by_call = {s.attributes['gen_ai.tool.call.id']: s for s in tools}
    assert by_call['c1'].parent.span_id == rounds[1].context.span_id
    assert by_call['c3'].parent.span_id == rounds[2].context.span_id
    other_span = next(s for s in tools if s.name == 'execute_tool other')
    assert other_span.parent.span_id == rounds[1].context.span_id


def test_client_runs_one_turns_tools_concurrently_in_async_paths(run_loop):
    import threading

    barrier = threading.Barrier(3)
    # with call() the three calls run one after another, so a barrier of 3 would break: only async paths
    if run_loop.mode == 'call':
        barrier = threading.Barrier(1)

    @tool
    def wait_a(n: int) -> str:
        barrier.wait(10)
        return f'a{n}'

    @tool
    def wait_b(n: int) -> str:
        barrier.wait(10)
        return f'b{n}'

    model = ScriptedChatModel(
        [
            S.tool_call_response('wait_a', {'n': 1}, more=[('wait_b', {'n': 2}), ('wait_a', {'n': 3})]),
            S.text_response('ok'),
        ]
    )
    run_loop(ChatClient.create(model).prompt('go').tools(wait_a, wait_b))
    responses = model.prompts[1].messages[-1].responses
    assert [r.response_data for r in responses] == ['a1', 'b2', 'a3']


def test_cancelling_acall_cancels_running_tools():
    state = []

    @tool
    async def forever(n: int) -> str:
        state.append('started')
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            state.append('cancelled')
            raise
        return 'never'

    async def run():
        model = ScriptedChatModel([S.tool_call_response('forever', {'n': 1})])
        task = asyncio.create_task(ChatClient.create(model).prompt('go').tools(forever).acall())
        while not state:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    assert asyncio.run(run()) == set()
    assert state == ['started', 'cancelled']
