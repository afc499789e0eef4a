"""Approvals, deferred tools and resumed runs on the tool loop, in call(), acall() and stream() (issue 15)."""

from __future__ import annotations

import asyncio
import copy
import pickle
from typing import Any

import orjson
import pytest
from pydantic import BaseModel
from support.loop_fixtures import LoopResult
from toolweave import ChatClient, tool
from toolweave.advisors import MAX_ROUNDS_FINISH_REASON, MessageChatMemoryAdvisor, ToolCallingAdvisor
from toolweave.approvals import (
    ApprovalRequired,
    Approve,
    DeferredResult,
    Deny,
    PendingToolCall,
    tool_call_approved,
)
from toolweave.chat import AssistantMessage, Message, Prompt, ToolResponseMessage, UserMessage
from toolweave.events import (
    ApprovalRequested,
    RoundStarted,
    RunFinished,
    ToolExecutionStarted,
    ToolResult,
    event_to_dict,
)
from toolweave.exceptions import ToolRetryBudgetExceededError
from toolweave.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolweave.providers import ScriptedChatModel
from toolweave.runstate import InvalidDecisionError, RunPausedError, RunState
from toolweave.tools import (
    DefaultToolCallingManager,
    FunctionToolCallback,
    ToolCallLimitBehavior,
    ToolCallLimits,
    ToolContext,
)

S = ScriptedChatModel
RAN: list[str] = []


@tool(requires_approval=True)
def transfer(amount: int, to: str) -> str:
    """Send money."""
    RAN.append(f'transfer {amount} {to} approved={tool_call_approved()}')
    return f'sent {amount} to {to}'


@tool
def balance() -> str:
    """The account balance."""
    RAN.append('balance')
    return '1000 EUR'


@tool
def ping(n: int) -> str:
    """Ping."""
    RAN.append(f'ping {n}')
    return f'pong {n}'


def answer_with_results(prompt: Prompt) -> Any:
    """A final answer naming every tool response the model received last."""
    last = prompt.messages[-1]
    assert isinstance(last, ToolResponseMessage)
    return S.text_response('; '.join(r.response_data for r in last.responses), usage=S.usage(7, 3))


def paused_state(result: LoopResult) -> RunState:
    state = result.response.metadata.get('runState')
    assert isinstance(state, RunState), result.response
    return state


def valid_conversation(messages: list[Message]) -> bool:
    """Every assistant tool call is answered by the tool-response message right after it."""
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            following = messages[index + 1] if index + 1 < len(messages) else None
            if not isinstance(following, ToolResponseMessage):
                return False
            if {r.id for r in following.responses} != {c.id for c in message.tool_calls}:
                return False
    return all(
        not isinstance(m, ToolResponseMessage) or (i > 0 and isinstance(messages[i - 1], AssistantMessage))
        for i, m in enumerate(messages)
    )


def test_approve_runs_the_call_and_the_run_continues_where_it_stopped(run_loop):
    RAN.clear()
    model = ScriptedChatModel(
        [
            S.tool_call_response('transfer', {'amount': 500, 'to': 'bob'}, 'c-transfer', more=[('balance', {})],
                                 usage=S.usage(10, 5)),
            answer_with_results,
        ]
    )  # fmt: skip
    client = ChatClient.builder(model).build()
    paused = run_loop(client.prompt('Send 500 to Bob').tools(transfer, balance))

    chat = paused.response
    assert chat.result.finish_reason == 'paused'
    assert chat.text == ''
    assert [c.id for c in chat.result.metadata['pendingToolCalls']] == ['c-transfer']
    state = paused_state(paused)
    assert state.pending == (
        PendingToolCall('c-transfer', 'transfer', {'amount': 500, 'to': 'bob'}, "Tool 'transfer' requires approval."),
    )
    assert RAN == ['balance']  # the round's call that needs nothing ran; the other waits
    assert (state.rounds, state.usage) == (1, S.usage(10, 5))
    assert chat.usage == S.usage(10, 5)
    assert model.remaining == 1

    resumed = run_loop(client.resume(state, {'c-transfer': Approve()}).tools(transfer, balance), events=True)
    assert RAN == ['balance', 'transfer 500 bob approved=True']
    assert resumed.text == 'sent 500 to bob; 1000 EUR'  # the responses in call order
    assert resumed.usage == S.usage(17, 8)  # summed across the pause
    assert resumed.events[-1].round == 2
    sent = model.prompts[-1].messages
    assert [type(m).__name__ for m in sent] == ['UserMessage', 'AssistantMessage', 'ToolResponseMessage']
    assert [c.id for c in sent[1].tool_calls] == ['c-transfer', sent[2].responses[1].id]
    assert not any(r.is_error for r in sent[2].responses)


def test_the_state_survives_json_and_a_new_client(run_loop):
    RAN.clear()
    model = ScriptedChatModel([S.tool_call_response('transfer', {'amount': 5, 'to': 'al'}, 'c1'), answer_with_results])
    paused = run_loop(ChatClient.builder(model).build().prompt('pay').tools(transfer))
    text = paused_state(paused).to_json()
    assert len(text) < 1500  # small: the turn's messages and a few counters

    other = ChatClient.builder(model).build()  # as another worker would build it
    resumed = run_loop(other.resume(RunState.from_json(text), {'c1': Approve()}).tools(transfer))
    assert resumed.text == 'sent 5 to al'
    assert RAN == ['transfer 5 al approved=True']


@pytest.mark.parametrize('message', [None, 'Bob is not a known payee; ask the user for the IBAN.'])
def test_deny_sends_the_message_to_the_model(run_loop, message):
    RAN.clear()
    model = ScriptedChatModel([S.tool_call_response('transfer', {'amount': 5, 'to': 'bob'}, 'c1'), answer_with_results])
    client = ChatClient.builder(model).build()
    state = paused_state(run_loop(client.prompt('pay').tools(transfer)))
    resumed = run_loop(client.resume(state, {'c1': Deny(message)}).tools(transfer))
    assert RAN == []
    response = model.prompts[-1].messages[-1].responses[0]
    expected = message or "The user denied the call to tool 'transfer': it was not executed."
    assert (response.response_data, response.is_error, response.error_type) == (expected, True, 'ToolCallDenied')
    assert resumed.text == expected


class Shipment(BaseModel):
    parcel: str


@tool(deferred=True)
def ask_manager(question: str) -> str:
    """Ask a manager (answered later, outside this process)."""
    raise AssertionError('a deferred tool is never run by the loop')


@pytest.mark.parametrize('deferred_tool', ['decorator', 'callback without function'])
def test_deferred_calls_take_a_result_from_outside(run_loop, deferred_tool):
    RAN.clear()
    if deferred_tool == 'decorator':
        tools: Any = ask_manager
        name, arguments = 'ask_manager', {'question': 'ok?'}
    else:
        tools = FunctionToolCallback.builder('ship', None).input_type(Shipment).description('Ship a parcel').build()
        name, arguments = 'ship', {'parcel': 'p-1'}
    model = ScriptedChatModel([S.tool_call_response(name, arguments, 'c1', more=[('ping', {'n': 1})]),
                               answer_with_results])  # fmt: skip
    client = ChatClient.builder(model).build()
    state = paused_state(run_loop(client.prompt('go').tools(tools, ping)))
    assert state.pending == (PendingToolCall('c1', name, arguments, state.pending[0].reason, deferred=True),)
    assert 'deferred' in state.pending[0].reason
    assert RAN == ['ping 1']

    with pytest.raises(InvalidDecisionError, match='cannot be approved'):
        client.resume(state, {'c1': Approve()})
    resumed = run_loop(client.resume(state, {'c1': DeferredResult({'status': 'shipped'})}).tools(tools, ping))
    assert resumed.text == '{"status":"shipped"}; pong 1'


def test_a_deferred_result_may_report_an_error(run_loop):
    model = ScriptedChatModel([S.tool_call_response('ask_manager', {'question': 'q'}, 'c1'), answer_with_results])
    client = ChatClient.builder(model).build()
    state = paused_state(run_loop(client.prompt('go').tools(ask_manager)))
    run_loop(client.resume(state, {'c1': DeferredResult('manager unreachable', is_error=True)}).tools(ask_manager))
    response = model.prompts[-1].messages[-1].responses[0]
    assert (response.response_data, response.is_error) == ('manager unreachable', True)


def over_limit(call: Any, context: ToolContext) -> bool:
    return bool(context['role'] != 'admin')


@tool(requires_approval=over_limit)
def delete_user(user: str) -> str:
    """Delete a user."""
    RAN.append(f'delete {user}')
    return 'deleted'


@pytest.mark.parametrize(('role', 'pauses'), [('admin', False), ('clerk', True)])
def test_a_predicate_decides_from_the_tool_context(run_loop, role, pauses):
    RAN.clear()
    model = ScriptedChatModel([S.tool_call_response('delete_user', {'user': 'x'}, 'c1'), answer_with_results])
    result = run_loop(ChatClient.builder(model).build().prompt('go').tools(delete_user).tool_context({'role': role}))
    assert (result.response.metadata.get('runState') is not None) is pauses
    assert RAN == ([] if pauses else ['delete x'])


def test_a_predicate_on_the_arguments(run_loop):
    RAN.clear()

    @tool(requires_approval=lambda call, context: call.arguments.count('9') > 2)
    def pay(amount: int) -> str:
        """Pay."""
        RAN.append(f'pay {amount}')
        return 'paid'

    model = ScriptedChatModel([S.tool_call_response('pay', {'amount': 50}, 'c1', more=[('pay', {'amount': 9999})]),
                               answer_with_results])  # fmt: skip
    state = paused_state(run_loop(ChatClient.builder(model).build().prompt('go').tools(pay)))
    assert RAN == ['pay 50']
    assert [(p.name, p.arguments) for p in state.pending] == [('pay', {'amount': 9999})]


ATTEMPTS: list[bool] = []


@tool
def wire(amount: int) -> str:
    """Wire money; asks for approval above 100 before doing anything."""
    ATTEMPTS.append(tool_call_approved())
    if amount > 100 and not tool_call_approved():
        raise ApprovalRequired(f'wire of {amount} is above 100')
    return f'wired {amount}'


def test_a_tool_asks_for_approval_at_run_time(run_loop):
    ATTEMPTS.clear()
    model = ScriptedChatModel([S.tool_call_response('wire', {'amount': 500}, 'c1', more=[('wire', {'amount': 5})]),
                               answer_with_results])  # fmt: skip
    client = ChatClient.builder(model).build()
    paused = run_loop(client.prompt('go').tools(wire))
    state = paused_state(paused)
    assert [(p.id, p.reason, p.deferred) for p in state.pending] == [('c1', 'wire of 500 is above 100', False)]
    assert [r.response_data for r in state.answered.responses] == ['wired 5']
    resumed = run_loop(client.resume(state, {'c1': Approve()}).tools(wire))
    assert resumed.text == 'wired 500; wired 5'
    assert sorted(ATTEMPTS) == [False, False, True]


def test_an_approved_call_that_asks_again_fails_like_a_tool_error(run_loop):
    @tool
    def stubborn() -> str:
        """Always asks."""
        raise ApprovalRequired('again')

    model = ScriptedChatModel([S.tool_call_response('stubborn', {}, 'c1'), answer_with_results])
    client = ChatClient.builder(model).build()
    state = paused_state(run_loop(client.prompt('go').tools(stubborn)))
    run_loop(client.resume(state, {'c1': Approve()}).tools(stubborn))
    response = model.prompts[-1].messages[-1].responses[0]
    assert (response.response_data, response.is_error, response.error_type) == ('again', True, 'ApprovalRequired')


def test_events_end_with_the_pause_and_the_resumed_run_goes_on_counting(run_loop):
    model = ScriptedChatModel([S.tool_call_response('transfer', {'amount': 5, 'to': 'al'}, 'c1', more=[('ping', {'n': 1})]),
                               answer_with_results])  # fmt: skip
    client = ChatClient.builder(model).build()
    paused = run_loop(client.prompt('pay').tools(transfer, ping), events=True)
    last = paused.events[-1]
    assert isinstance(last, ApprovalRequested)
    assert (last.round, [c.id for c in last.calls]) == (1, ['c1'])
    assert last.state is paused_state(paused)
    assert not any(isinstance(e, RunFinished) for e in paused.events)
    assert [e.call.name for e in paused.events if isinstance(e, ToolExecutionStarted)] == ['ping']

    resumed = run_loop(client.resume(last.state, {'c1': Approve()}).tools(transfer, ping), events=True)
    kinds = [(type(e).__name__, e.round) for e in resumed.events]
    assert kinds[:2] == [('ToolExecutionStarted', 1), ('ToolResult', 1)]
    assert kinds[2] == ('RoundStarted', 2)
    assert isinstance(resumed.events[-1], RunFinished) and resumed.events[-1].round == 2
    assert [e.text for e in resumed.events if isinstance(e, ToolResult)] == ['sent 5 to al']
    assert not any(isinstance(e, RoundStarted) and e.round == 1 for e in resumed.events)


def test_a_denied_call_is_reported_as_a_tool_result_event(run_loop):
    model = ScriptedChatModel([S.tool_call_response('transfer', {'amount': 5, 'to': 'al'}, 'c1'), answer_with_results])
    client = ChatClient.builder(model).build()
    state = paused_state(run_loop(client.prompt('pay').tools(transfer)))
    resumed = run_loop(client.resume(state, {'c1': Deny('no')}).tools(transfer), events=True)
    results = [e for e in resumed.events if isinstance(e, ToolResult)]
    assert [(e.call_id, e.text, e.is_error, e.error_type) for e in results] == [('c1', 'no', True, 'ToolCallDenied')]


def test_call_limits_count_across_the_pause(run_loop):
    RAN.clear()
    limits = ToolCallLimits().max_calls_per_tool(2, 'ping').with_behavior(ToolCallLimitBehavior.RETURN_ERROR_RESPONSE)
    model = ScriptedChatModel(
        [
            S.tool_call_response('ping', {'n': 1}),
            S.tool_call_response('ping', {'n': 2}, more=[('transfer', {'amount': 1, 'to': 'a'})]),
            S.tool_call_response('ping', {'n': 3}),
            answer_with_results,
        ]
    )
    advisor = ToolCallingAdvisor(DefaultToolCallingManager(limits=limits))
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    state = paused_state(run_loop(client.prompt('go').tools(ping, transfer)))
    assert state.rounds == 2
    resumed = run_loop(client.resume(state, {state.pending[0].id: Approve()}).tools(ping, transfer))
    assert RAN == ['ping 1', 'ping 2', 'transfer 1 a approved=True']  # the third ping breached the limit
    assert resumed.text.startswith("Tool call limit (2) exceeded for tool 'ping'")


def test_the_retry_budget_counts_across_the_pause(run_loop):
    model = ScriptedChatModel(
        [
            S.tool_call_response('ping', {'n': 'x'}, more=[('transfer', {'amount': 1, 'to': 'a'})]),
            S.tool_call_response('ping', {'n': 'y'}),
        ]
    )
    client = ChatClient.builder(model).build()
    state = paused_state(run_loop(client.prompt('go').tools(ping, transfer)))
    assert state.answered.responses[0].is_error  # the first invalid call was answered (budget 1)
    with pytest.raises(ToolRetryBudgetExceededError) as info:
        run_loop(client.resume(state, {state.pending[0].id: Approve()}).tools(ping, transfer))
    assert (info.value.tool_name, info.value.max_retries) == ('ping', 1)  # the second invalid ping, after the pause


def test_max_rounds_counts_the_rounds_before_the_pause(run_loop):
    model = ScriptedChatModel(
        [
            S.tool_call_response('transfer', {'amount': 1, 'to': 'a'}, 'c1'),
            S.tool_call_response('ping', {'n': 1}),
        ]
    )
    client = ChatClient.builder(model).tool_calling_advisor(ToolCallingAdvisor(max_rounds=2)).build()
    state = paused_state(run_loop(client.prompt('go').tools(ping, transfer)))
    resumed = run_loop(client.resume(state, {'c1': Approve()}).tools(ping, transfer))
    assert resumed.response.result.finish_reason == MAX_ROUNDS_FINISH_REASON
    assert resumed.response.metadata['toolCallingRounds'] == 2


def test_final_answer_on_max_rounds_makes_one_last_call_without_tools(run_loop):
    RAN.clear()
    model = ScriptedChatModel(
        [S.tool_call_response('ping', {'n': 1}), S.tool_call_response('ping', {'n': 2}), answer_with_results]
    )
    advisor = ToolCallingAdvisor(max_rounds=2, final_answer_on_max_rounds=True)
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    result = run_loop(client.prompt('go').tools(ping), events=True)
    assert RAN == ['ping 1', 'ping 2']
    assert (result.text, result.response.result.finish_reason) == ('pong 2', 'stop')
    assert result.events[-1].round == 3
    assert [p.options.tool_choice for p in model.prompts] == [None, None, 'none']


def test_final_answer_on_max_rounds_still_stops_a_model_that_asks_again(run_loop):
    model = ScriptedChatModel([S.tool_call_response('ping', {'n': i}) for i in range(3)])
    advisor = ToolCallingAdvisor(max_rounds=2, final_answer_on_max_rounds=True)
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    result = run_loop(client.prompt('go').tools(ping))
    assert result.response.result.finish_reason == MAX_ROUNDS_FINISH_REASON
    assert model.remaining == 0


def test_final_answer_on_max_rounds_holds_across_a_pause(run_loop):
    model = ScriptedChatModel(
        [S.tool_call_response('transfer', {'amount': 1, 'to': 'a'}, 'c1'), S.text_response('done')]
    )
    advisor = ToolCallingAdvisor(max_rounds=1, final_answer_on_max_rounds=True)
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    state = paused_state(run_loop(client.prompt('go').tools(transfer)))
    resumed = run_loop(client.resume(state, {'c1': Approve()}).tools(transfer))
    assert resumed.text == 'done'
    assert model.prompts[-1].options.tool_choice == 'none'


@pytest.mark.parametrize('inside', [False, True], ids=['memory outside the loop', 'memory inside the loop'])
def test_the_stored_conversation_is_valid_at_every_moment(run_loop, inside):
    repository = InMemoryChatMemoryRepository()
    memory = MessageWindowChatMemory(repository, max_messages=100)
    order = ToolCallingAdvisor.DEFAULT_ORDER + 1 if inside else MessageChatMemoryAdvisor.DEFAULT_ORDER
    advisor = MessageChatMemoryAdvisor(memory, order=order, conversation_id='c')
    model = ScriptedChatModel(
        [
            S.tool_call_response('ping', {'n': 1}),
            S.tool_call_response('transfer', {'amount': 5, 'to': 'al'}, 'c1', more=[('ping', {'n': 2})]),
            answer_with_results,
        ]
    )
    client = ChatClient.builder(model).default_advisors(advisor).build()
    state = paused_state(run_loop(client.prompt('pay').tools(ping, transfer)))
    during = memory.get('c')
    assert valid_conversation(during)
    assert isinstance(during[0], UserMessage)

    resumed = run_loop(client.resume(state, {'c1': Approve()}).tools(ping, transfer))
    after = memory.get('c')
    assert valid_conversation(after)
    assert isinstance(after[-1], AssistantMessage) and after[-1].text == resumed.text == 'sent 5 to al; pong 2'
    kinds = [type(m).__name__ for m in after]
    if inside:  # every round, the paused one's call and both responses stored together
        assert kinds == ['UserMessage', 'AssistantMessage', 'ToolResponseMessage', 'AssistantMessage',
                         'ToolResponseMessage', 'AssistantMessage']  # fmt: skip
        assert [r.response_data for r in after[4].responses] == ['sent 5 to al', 'pong 2']
    else:
        assert kinds == ['UserMessage', 'AssistantMessage']
    sent = model.prompts[-1].messages  # the model saw the whole turn after the pause
    assert [type(m).__name__ for m in sent][-4:] == ['AssistantMessage', 'ToolResponseMessage', 'AssistantMessage',
                                                     'ToolResponseMessage']  # fmt: skip


def test_a_return_direct_round_completed_after_the_pause(run_loop):
    @tool(return_direct=True)
    def lookup(q: str) -> str:
        """Direct."""
        return f'found {q}'

    @tool(return_direct=True, requires_approval=True)
    def guarded(q: str) -> str:
        """Direct and guarded."""
        return f'guarded {q}'

    model = ScriptedChatModel([S.tool_call_response('lookup', {'q': 'a'}, more=[('guarded', {'q': 'b'})])])
    client = ChatClient.builder(model).build()
    state = paused_state(run_loop(client.prompt('go').tools(lookup, guarded)))
    resumed = run_loop(client.resume(state, {state.pending[0].id: Approve()}).tools(lookup, guarded))
    assert [g.output.text for g in resumed.response.generations] == ['found a', 'guarded b']
    assert resumed.response.result.finish_reason == 'returnDirect'


def test_a_second_pause_after_a_resume(run_loop):
    model = ScriptedChatModel(
        [
            S.tool_call_response('transfer', {'amount': 1, 'to': 'a'}, 'c1', usage=S.usage(1, 1)),
            S.tool_call_response('transfer', {'amount': 2, 'to': 'b'}, 'c2', usage=S.usage(2, 2)),
            S.text_response('both done', usage=S.usage(3, 3)),
        ]
    )
    client = ChatClient.builder(model).build()
    first = paused_state(run_loop(client.prompt('go').tools(transfer)))
    second = paused_state(run_loop(client.resume(first, {'c1': Approve()}).tools(transfer)))
    assert second.run_id != first.run_id
    assert (second.rounds, second.usage, [p.id for p in second.pending]) == (2, S.usage(3, 3), ['c2'])
    final = run_loop(client.resume(second, {'c2': Approve()}).tools(transfer), events=True)
    assert (final.text, final.usage, final.events[-1].round) == ('both done', S.usage(6, 6), 3)


def test_stream_views_end_with_the_pause_and_the_resume_streams_the_rest():
    model = ScriptedChatModel(
        [
            S.tool_call_response('transfer', {'amount': 5, 'to': 'al'}, 'c1', text='Sending it now.'),
            S.text_response('All sent, Al has the money now.'),
        ]
    )
    client = ChatClient.builder(model).build()
    events = list(client.prompt('pay').tools(transfer).stream().events())
    pause = events[-1]
    assert isinstance(pause, ApprovalRequested)
    forwarded = orjson.loads(orjson.dumps(event_to_dict(pause)))  # JSON-ready, the state stays on the server
    assert forwarded == {
        'kind': 'approval_requested',
        'round': 1,
        'calls': [{'id': 'c1', 'name': 'transfer', 'arguments': {'amount': 5, 'to': 'al'},
                   'reason': "Tool 'transfer' requires approval.", 'deferred': False}],
        'state': pause.state.run_id,
    }  # fmt: skip
    pieces = list(client.resume(pause.state, {'c1': Approve()}).tools(transfer).stream().content())
    assert len(pieces) > 1
    assert ''.join(pieces) == 'All sent, Al has the money now.'


def test_collect_raises_the_pause_with_the_state_and_the_text_so_far():
    def model() -> ScriptedChatModel:
        return ScriptedChatModel(
            [
                S.tool_call_response('transfer', {'amount': 5, 'to': 'al'}, 'c1', text='Sending it now.'),
                S.text_response('All sent.'),
            ]
        )

    client = ChatClient.builder(model()).build()
    with pytest.raises(RunPausedError) as caught:
        client.prompt('pay').tools(transfer).stream().collect()
    assert caught.value.text == 'Sending it now.'
    assert [(p.id, p.name) for p in caught.value.state.pending] == [('c1', 'transfer')]
    assert str(caught.value) == (
        'the run paused for decisions on 1 tool call(s) (transfer): resume it with client.resume(error.state, decisions)'
    )
    caught.value.add_note('a note')
    for again in (pickle.loads(pickle.dumps(caught.value)), copy.copy(caught.value), copy.deepcopy(caught.value)):
        assert type(again) is RunPausedError and str(again) == str(caught.value)  # crosses processes whole
        assert (again.state, again.text, again.__notes__) == (caught.value.state, 'Sending it now.', ['a note'])
    assert client.resume(caught.value.state, {'c1': Approve()}).tools(transfer).stream().collect() == 'All sent.'

    async def paused_async() -> RunPausedError:
        other = ChatClient.builder(model()).build()
        try:
            await other.prompt('pay').tools(transfer).stream().acollect()
        except RunPausedError as exc:
            return exc
        raise AssertionError('acollect() returned on a paused run')

    assert asyncio.run(paused_async()).state.pending[0].arguments == {'amount': 5, 'to': 'al'}


def test_tool_search_finds_survive_the_pause(run_loop):
    from toolweave.advisors import ToolSearchToolCallingAdvisor
    from toolweave.search import LexicalToolIndex

    first = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), accumulate_from_history=False)
    model = ScriptedChatModel(
        [
            S.tool_call_response('ping', {'n': 1}),  # called by its exact name: joins the session
            S.tool_call_response('transfer', {'amount': 1, 'to': 'a'}, 'c1'),
            lambda prompt: S.text_response(','.join(sorted(cb.tool_definition.name for cb in prompt.options.tool_callbacks))),
        ]
    )  # fmt: skip
    client = ChatClient.builder(model).tool_calling_advisor(first).build()
    state = paused_state(run_loop(client.prompt('go').tools(ping, transfer)))
    assert state.extras == {'toolSearch': {'discovered': ['ping', 'transfer']}}

    fresh = ToolSearchToolCallingAdvisor(tool_index=LexicalToolIndex(), accumulate_from_history=False)  # another worker
    other = ChatClient.builder(model).tool_calling_advisor(fresh).build()
    resumed = run_loop(other.resume(state, {'c1': Approve()}).tools(ping, transfer))
    assert resumed.text == 'ping,toolSearchTool,transfer'
