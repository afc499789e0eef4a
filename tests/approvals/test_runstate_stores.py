"""RunState's JSON form and typed errors, the stores (memory, SQLite, Redis), resuming once, and across processes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from toolweave import ChatClient, tool
from toolweave.approvals import Approve, DeferredResult, Deny
from toolweave.providers import ScriptedChatModel
from toolweave.runstate import (
    InMemoryRunStateStore,
    InvalidDecisionError,
    InvalidRunStateError,
    MissingDecisionError,
    RedisRunStateStore,
    RunAlreadyResumedError,
    RunState,
    RunStateNotFoundError,
    RunStateStore,
    RunStateVersionError,
    SqliteRunStateStore,
    UnknownToolCallError,
)

S = ScriptedChatModel
APP = Path(__file__).with_name('approval_app.py')
SENT: list[str] = []


@tool(requires_approval=True)
def transfer(amount: int, to: str) -> str:
    """Send money."""
    SENT.append(f'{amount} {to}')
    return f'sent {amount} to {to}'


@tool
def ping() -> str:
    """Ping."""
    return 'pong'


def paused(store: RunStateStore | None = None, calls: int = 1) -> tuple[ChatClient, RunState]:
    """A client whose model answers once more, and the state of a run paused on ``calls`` transfers (the first id t0)."""
    more = [('transfer', {'amount': i, 'to': 'x'}) for i in range(1, calls)]
    first = S.tool_call_response('transfer', {'amount': 0, 'to': 'x'}, 't0', more=[*more, ('ping', {})])
    model = S([first, S.text_response('done'), S.text_response('done again')])
    builder = ChatClient.builder(model)
    if store is not None:
        builder = builder.run_state_store(store)
    client = builder.build()
    state = client.prompt('go').tools(transfer, ping).call().run_state()
    assert state is not None
    return client, state


# -- the JSON form ------------------------------------------------------------------------------


def test_json_round_trip_keeps_every_field():
    _, state = paused(calls=2)
    again = RunState.from_json(state.to_json())
    assert again == state
    assert isinstance(orjson.loads(state.to_json()), dict)
    assert [p.id for p in again.pending] == [p.id for p in state.pending] and len(state.pending) == 2
    assert [r.response_data for r in again.answered.responses] == ['pong']


def tampered(text: str, change: Any) -> str:
    data = orjson.loads(text)
    change(data)
    return orjson.dumps(data).decode()


CHANGED = '^run state digest does not match: it was changed'


@pytest.mark.parametrize(
    ('change', 'reason'),
    [
        (lambda d: d['body']['pending'][0].update(id='t9'), CHANGED),
        (
            lambda d: d['body']['messages'][1]['tool_calls'][0].update(arguments='{"amount": 1000000, "to": "eve"}'),
            CHANGED,
        ),
        (lambda d: d['body'].update(rounds=0), CHANGED),
        (lambda d: d.update(digest='0' * 64), CHANGED),
        (lambda d: d.pop('digest'), '^run state without body or digest$'),
        (
            lambda d: d.update(format='something else'),
            r'^not a toolweave run state \(format field missing or wrong\)$',
        ),
    ],
    ids=['pending id', 'arguments', 'rounds', 'digest', 'no digest', 'format'],
)
def test_a_tampered_state_is_refused(change, reason):
    _, state = paused()
    with pytest.raises(InvalidRunStateError, match=reason):
        RunState.from_json(tampered(state.to_json(), change))


@pytest.mark.parametrize('cut', [1, 10, 200])
def test_a_truncated_state_is_refused(cut):
    _, state = paused()
    with pytest.raises(InvalidRunStateError, match='truncated'):
        RunState.from_json(state.to_json()[:-cut])


def test_a_state_of_another_version_is_refused():
    _, state = paused()
    with pytest.raises(RunStateVersionError) as caught:
        RunState.from_json(tampered(state.to_json(), lambda d: d.update(version=2)))
    assert caught.value.version == 2


def test_a_signed_state_needs_its_key():
    _, state = paused()
    signed = state.to_json(key=b'secret')
    assert RunState.from_json(signed, key=b'secret') == state
    for key in (None, b'other'):
        with pytest.raises(InvalidRunStateError, match='digest'):
            RunState.from_json(signed, key=key)


def test_a_malformed_body_with_a_right_digest_is_refused():
    _, state = paused()
    data = state.to_dict()
    data['body']['pending'] = []  # a paused run without pending calls
    from toolweave.runstate.state import _digest

    data['digest'] = _digest(data['body'], None)
    with pytest.raises(InvalidRunStateError, match='malformed'):
        RunState.from_dict(data)


# -- decisions: typed errors that change nothing ----------------------------------------------


@pytest.mark.parametrize(
    ('decisions', 'error', 'reason'),
    [
        ({'t0': Approve(), 'nope': Approve()}, UnknownToolCallError, 'not pending in this run: nope$'),
        ({}, MissingDecisionError, r'^no decision for the pending tool call\(s\): t0$'),
        ({'t0': True}, InvalidDecisionError, r"^the decision for 't0' must be Approve\(\), .* got True$"),
    ],
)
def test_wrong_decisions_raise_and_change_nothing(decisions, error, reason):
    SENT.clear()
    store = InMemoryRunStateStore()
    client, state = paused(store)
    with pytest.raises(error, match=reason):
        client.resume(state.run_id, decisions)
    assert store.load(state.run_id) == state  # still paused, not claimed
    assert SENT == []
    assert client.resume(state.run_id, {'t0': Approve()}).tools(transfer, ping).call().content() == 'done'
    assert SENT == ['0 x']


def test_missing_decisions_name_every_call():
    _, state = paused(calls=3)
    with pytest.raises(MissingDecisionError) as caught:
        paused()[0].resume(state, {'t0': Deny()})
    others = tuple(call.id for call in state.pending[1:])
    assert len(others) == 2 and caught.value.call_ids == others
    assert str(caught.value) == f'no decision for the pending tool call(s): {", ".join(others)}'


def test_a_run_continues_once_without_a_store():
    SENT.clear()
    client, state = paused()
    assert client.resume(state, {'t0': Approve()}).tools(transfer, ping).call().content() == 'done'
    with pytest.raises(RunAlreadyResumedError):
        client.resume(state, {'t0': Approve()}).tools(transfer, ping).call()
    with pytest.raises(RunAlreadyResumedError):
        client.resume(RunState.from_json(state.to_json()), {'t0': Deny()}).tools(transfer, ping).stream().collect()
    assert SENT == ['0 x']


def test_a_resumed_request_takes_no_new_messages():
    client, state = paused()
    with pytest.raises(ValueError, match='no new messages'):
        client.resume(state, {'t0': Approve()}).user('and also').call()
    assert client.resume(state, {'t0': Approve()}).tools(transfer, ping).call().content() == 'done'


def test_resume_by_run_id_needs_a_store():
    client, state = paused()
    with pytest.raises(ValueError, match='run_state_store'):
        client.resume(state.run_id, {'t0': Approve()})


# -- stores ------------------------------------------------------------------------------------


@pytest.fixture(params=['memory', 'sqlite', 'redis'])
def make_store(request, tmp_path) -> Iterator[Any]:
    def make(**settings: Any) -> RunStateStore:
        if request.param == 'memory':
            return InMemoryRunStateStore(**settings)
        if request.param == 'sqlite':
            return SqliteRunStateStore(tmp_path / 'runs.db', **settings)
        return RedisRunStateStore(url=request.getfixturevalue('redis_url'), key_prefix=f'{tmp_path.name}:', **settings)

    yield make


def test_a_store_saves_loads_claims_and_deletes(make_store):
    store = make_store()
    _, state = paused(store)
    assert store.load(state.run_id) == state  # saved by the client when the run paused
    with pytest.raises(RunStateNotFoundError):
        store.load('unknown')
    store.claim(state.run_id)
    with pytest.raises(RunAlreadyResumedError):
        store.load(state.run_id)
    with pytest.raises(RunAlreadyResumedError):
        store.claim(state.run_id)
    store.save(state)  # a resumed run stays resumed
    with pytest.raises(RunAlreadyResumedError):
        store.load(state.run_id)
    _, other = paused(store)
    store.delete(other.run_id)
    with pytest.raises(RunStateNotFoundError):
        store.load(other.run_id)


def test_a_paused_run_expires(make_store):
    store = make_store(ttl=0.3)
    _, state = paused(store)
    assert store.load(state.run_id) == state
    time.sleep(0.5)
    with pytest.raises(RunStateNotFoundError):
        store.load(state.run_id)


def test_resumed_twice_concurrently_exactly_one_wins(make_store):
    SENT.clear()
    store = make_store()
    _, state = paused(store)
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def resume() -> None:
        client = ChatClient.builder(S([S.text_response('done')])).run_state_store(store).build()
        barrier.wait(10)
        try:
            outcomes.append(client.resume(state.run_id, {'t0': Approve()}).tools(transfer, ping).call().content())
        except RunAlreadyResumedError:
            outcomes.append('already')

    threads = [threading.Thread(target=resume) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ['already', 'already', 'already', 'done']
    assert SENT == ['0 x']


def test_a_deferred_result_given_through_the_store(make_store):
    store = make_store()
    client, state = paused(store)
    response = client.resume(state.run_id, {'t0': DeferredResult('done by hand')}).tools(transfer, ping).call()
    assert response.content() == 'done'
    assert not response.is_paused() and response.run_state() is None and response.pending_tool_calls() == ()


def test_a_store_with_a_key_refuses_states_signed_otherwise(tmp_path):
    SqliteRunStateStore(tmp_path / 'runs.db', key=b'a').save(paused()[1])
    _, state = paused(SqliteRunStateStore(tmp_path / 'runs.db', key=b'a'))
    with pytest.raises(InvalidRunStateError, match=r'digest does not match: .*\(or signed with another key\)$'):
        SqliteRunStateStore(tmp_path / 'runs.db', key=b'b').load(state.run_id)


# -- processes ---------------------------------------------------------------------------------


def run_app(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(APP), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(params=['sqlite', 'redis'])
def shared_store(request, tmp_path) -> tuple[str, str]:
    if request.param == 'sqlite':
        return 'sqlite', str(tmp_path / 'runs.db')
    return 'redis', request.getfixturevalue('redis_url')


def test_pause_in_one_process_and_resume_in_another(shared_store, tmp_path):
    kind, where = shared_store
    ledger = tmp_path / 'ledger.txt'
    pausing = run_app('pause', kind, where, str(ledger))
    assert pausing.returncode == 0, pausing.stderr
    run_id = pausing.stdout.strip()
    assert not ledger.exists()  # nothing sent before the approval

    resuming = run_app('resume', kind, where, str(ledger), run_id)
    assert resuming.returncode == 0, resuming.stderr
    assert resuming.stdout.split() == ['done:', 'sent', '500', 'to', 'bob', '14']  # usage summed across processes
    assert ledger.read_text() == '500 bob\n'

    again = run_app('resume', kind, where, str(ledger), run_id)
    assert (again.returncode, again.stdout.strip()) == (3, 'RunAlreadyResumedError')
    assert ledger.read_text() == '500 bob\n'


def test_two_processes_resume_the_same_run_exactly_one_wins(shared_store, tmp_path):
    kind, where = shared_store
    ledger, gate = tmp_path / 'ledger.txt', tmp_path / 'go'
    run_id = run_app('pause', kind, where, str(ledger)).stdout.strip()
    command = [sys.executable, str(APP), 'resume', kind, where, str(ledger), run_id, '--wait', str(gate)]
    workers = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == 'ready'
        gate.touch()
        outputs = [worker.communicate(timeout=60) for worker in workers]
    finally:
        for worker in workers:
            worker.kill() if worker.poll() is None else None
    codes = sorted(worker.returncode for worker in workers)
    assert codes == [0, 3], outputs
    assert sorted(out.strip().split()[0] for out, _ in outputs) == ['RunAlreadyResumedError', 'done:']
    assert ledger.read_text() == '500 bob\n'


def test_every_path_saves_the_paused_run_and_resumes_it_by_id(run_loop, tmp_path):
    SENT.clear()
    store = SqliteRunStateStore(tmp_path / 'runs.db')
    model = S([S.tool_call_response('transfer', {'amount': 7, 'to': 'y'}, 't0'), S.text_response('done')])
    client = ChatClient.builder(model).run_state_store(store).build()
    result = run_loop(client.prompt('go').tools(transfer))
    state = result.response.metadata['runState']
    assert store.load(state.run_id) == state
    resumed = run_loop(client.resume(state.run_id, {'t0': Approve()}).tools(transfer))
    assert (resumed.text, SENT) == ('done', ['7 y'])
    with pytest.raises(RunAlreadyResumedError):
        store.load(state.run_id)
