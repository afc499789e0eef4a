"""Attacks on paused runs: crafted or broken RunState JSON, wrong keys, hostile decisions, broken stores.

Every attack expects a typed :class:`~toolweave.runstate.RunStateError` (or the store's own bounded error)
that names what was wrong, leaks no key, and changes nothing: the run can still be resumed properly after.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.redis_fixtures import redis_server
from toolweave import ChatClient, tool
from toolweave.approvals import Approve, DeferredResult, Deny
from toolweave.providers import ScriptedChatModel
from toolweave.runstate import (
    InMemoryRunStateStore,
    InvalidDecisionError,
    InvalidRunStateError,
    MissingToolError,
    RedisRunStateStore,
    RunState,
    RunStateError,
    RunStateNotFoundError,
    RunStateStore,
    SqliteRunStateStore,
)
from toolweave.runstate.state import _digest

S = ScriptedChatModel
SENT: list[str] = []


@tool(requires_approval=True)
def transfer(amount: int, to: str) -> str:
    """Send money."""
    SENT.append(f'{amount} {to}')
    return f'sent {amount} to {to}'


@tool(deferred=True)
def ask_manager(question: str) -> str:
    """Ask a manager (answered from outside)."""
    raise AssertionError('a deferred tool never runs in the process')


def paused(store: RunStateStore | None = None, tool_name: str = 'transfer') -> tuple[ChatClient, RunState]:
    """A client with the tools as defaults and the state of a run paused on one call ``t0``."""
    arguments = {'amount': 5, 'to': 'x'} if tool_name == 'transfer' else {'question': 'ok?'}
    model = S([S.tool_call_response(tool_name, arguments, 't0'), S.text_response('done')])
    builder = ChatClient.builder(model).default_tools(transfer, ask_manager)
    if store is not None:
        builder = builder.run_state_store(store)
    client = builder.build()
    state = client.prompt('go').call().run_state()
    assert state is not None
    return client, state


def forged(state: RunState, change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    """The state's dict with ``change`` applied to its body and the digest recomputed (the public key is public)."""
    data = state.to_dict()
    body = orjson.loads(orjson.dumps(data['body']))
    change(body)
    return {**data, 'body': body, 'digest': _digest(body, None)}


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        target: Any = body
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


CRAFTED = {
    'usage as text': _set(('usage',), 'lots'),
    'usage as a list': _set(('usage',), [1, 2]),
    'messages as text': _set(('messages',), 'abc'),
    'a message as a number': _set(('messages', 0), 7),
    'user text as a number': _set(('messages', 0, 'text'), 7),
    'tool call arguments as an object': _set(('messages', 1, 'tool_calls', 0, 'arguments'), {'amount': 1}),
    'tool call id as null': _set(('messages', 1, 'tool_calls', 0, 'id'), None),
    'pending as an object': _set(('pending',), {'id': 't0'}),
    'a pending call as text': _set(('pending', 0), 't0'),
    'extras as a list': _set(('extras',), [['a', 1]]),
    'empty run id': _set(('run_id',), ''),
    'the same call pending twice': lambda body: body['pending'].append(body['pending'][0]),
}


@pytest.mark.parametrize('change', CRAFTED.values(), ids=CRAFTED.keys())
def test_a_crafted_body_with_a_matching_digest_is_refused_with_a_typed_error(change):
    _, state = paused()
    with pytest.raises(InvalidRunStateError, match='malformed run state body'):
        RunState.from_dict(forged(state, change))


def test_the_error_of_a_huge_malformed_body_is_short():
    _, state = paused()
    huge = 'A' * 2_000_000
    data = forged(state, lambda body: body['messages'][0].update(type='assistant', content=huge, tool_calls=5))
    with pytest.raises(InvalidRunStateError) as caught:
        RunState.from_dict(data)
    assert len(str(caught.value)) < 600


@pytest.mark.parametrize('text', [None, 5, b'\xff\xfe', '[' * 100_000, 'null', '{"format": "toolweave.run_state"}', ''])
def test_garbage_is_refused_with_a_typed_error(text):
    with pytest.raises(RunStateError):  # a format field without a version: RunStateVersionError(None)
        RunState.from_json(text)  # type: ignore[arg-type]


def test_a_wrong_key_is_refused_and_never_named():
    _, state = paused()
    secret, wrong = b'correct-horse-battery-staple', b'wrong-key-0123456789'
    text = state.to_json(secret)
    for key in (wrong, None):
        with pytest.raises(InvalidRunStateError) as caught:
            RunState.from_json(text, key)
        message = repr(caught.value) + str(caught.value.__cause__)
        assert 'correct-horse' not in message and 'wrong-key' not in message
    assert RunState.from_json(text, secret) == state


# -- hostile decisions: refused before the run is claimed, so a proper resume still works -------------------------

BAD_DECISIONS: dict[str, tuple[str, Any]] = {
    'deny with a number': ('transfer', Deny(5)),  # type: ignore[arg-type]
    'deny with bytes': ('transfer', Deny(b'no')),  # type: ignore[arg-type]
    'a result JSON cannot hold': ('ask_manager', DeferredResult(object())),
    'is_error as text': ('ask_manager', DeferredResult('fine', is_error='no')),  # type: ignore[arg-type]
    'the class instead of an instance': ('transfer', Approve),
    'approving a deferred call': ('ask_manager', Approve()),
}


@pytest.mark.parametrize(('tool_name', 'decision'), BAD_DECISIONS.values(), ids=BAD_DECISIONS.keys())
def test_a_hostile_decision_is_refused_and_the_run_can_still_be_resumed(tool_name, decision):
    SENT.clear()
    client, state = paused(tool_name=tool_name)
    with pytest.raises(InvalidDecisionError, match="'t0'"):
        client.resume(state, {'t0': decision}).call()
    good = Approve() if tool_name == 'transfer' else DeferredResult('yes')
    assert client.resume(state, {'t0': good}).call().content() == 'done'
    assert SENT == (['5 x'] if tool_name == 'transfer' else [])


def test_resuming_without_the_approved_calls_tool_claims_nothing():
    """An approved call whose tool the resuming request lacks is refused before the claim (the run stays resumable)."""
    SENT.clear()
    client, state = paused()
    bare = ChatClient.builder(S([S.text_response('done')])).build()  # no default tools
    with pytest.raises(MissingToolError, match="'transfer'") as raised:
        bare.resume(state, {'t0': Approve()}).call()
    assert raised.value.tool_names == ('transfer',)
    assert isinstance(raised.value, LookupError)
    assert SENT == []
    assert client.resume(state, {'t0': Approve()}).call().content() == 'done'
    assert SENT == ['5 x']


def test_denying_a_call_needs_no_tool():
    _, state = paused()
    bare = ChatClient.builder(S([S.text_response('understood')])).build()
    assert bare.resume(state, {'t0': Deny('not today')}).call().content() == 'understood'


@pytest.mark.parametrize('decisions', [None, [('t0', Approve())], {('t0',): Approve()}, {0: Approve()}])
def test_decisions_of_the_wrong_shape_are_refused(decisions):
    client, state = paused()
    with pytest.raises(RunStateError):
        client.resume(state, decisions).call()
    assert client.resume(state, {'t0': Deny()}).call().content() == 'done'


# -- broken stores ----------------------------------------------------------------------------------------------


def test_a_sqlite_file_deleted_while_open_is_reopened_not_written_blind(tmp_path):
    path = tmp_path / 'runs.db'
    writer = SqliteRunStateStore(path)
    _, first = paused(writer)
    for suffix in ('', '-wal', '-shm'):
        Path(f'{path}{suffix}').unlink(missing_ok=True)
    with pytest.raises(RunStateNotFoundError):  # gone with its file, not served from the deleted inode
        writer.load(first.run_id)
    _, second = paused(writer)  # saved into the new file at the path, where another process looks
    assert SqliteRunStateStore(path).load(second.run_id) == second


def test_a_locked_sqlite_file_fails_within_the_busy_timeout_and_changes_nothing(tmp_path):
    path = tmp_path / 'runs.db'
    store = SqliteRunStateStore(path, busy_timeout=0.3)
    client, state = paused(store)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute('BEGIN EXCLUSIVE')
    started = time.monotonic()
    try:
        with pytest.raises(sqlite3.OperationalError, match='locked'):
            client.resume(state.run_id, {'t0': Approve()}).call()  # WAL: the load reads, the claim waits
    finally:
        holder.execute('ROLLBACK')
        holder.close()
    assert time.monotonic() - started < 10
    SENT.clear()
    assert client.resume(state.run_id, {'t0': Approve()}).call().content() == 'done'
    assert SENT == ['5 x']


def test_a_garbage_sqlite_file_is_a_clear_error(tmp_path):
    path = tmp_path / 'runs.db'
    path.write_bytes(b'not a database' * 400)
    with pytest.raises(sqlite3.DatabaseError, match='not a database'):
        SqliteRunStateStore(path).load('anything')


def test_a_corrupted_stored_state_is_a_typed_error(tmp_path):
    path = tmp_path / 'runs.db'
    store = SqliteRunStateStore(path)
    _, state = paused(store)
    with sqlite3.connect(path) as connection:
        connection.execute('UPDATE toolweave_run_states SET state = substr(state, 1, 40)')
    with pytest.raises(InvalidRunStateError, match='truncated'):
        store.load(state.run_id)


@pytest.mark.parametrize('ttl', [0, -1, float('nan'), float('inf'), 1e30, '60', True])
@pytest.mark.parametrize('kind', ['memory', 'sqlite', 'redis'])
def test_a_ttl_redis_cannot_keep_is_refused_at_construction(kind, ttl, tmp_path):
    class NoServer:  # register_script is all the constructor asks of the client
        def register_script(self, script: str) -> object:
            return script

    with pytest.raises(ValueError, match='ttl must be'):
        if kind == 'memory':
            InMemoryRunStateStore(ttl=ttl)
        elif kind == 'sqlite':
            SqliteRunStateStore(tmp_path / 'runs.db', ttl=ttl)
        else:
            RedisRunStateStore(NoServer(), ttl=ttl)


@pytest.fixture
def own_redis() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A redis-server of this test alone (the test kills or stops it)."""
    with redis_server() as server:
        yield server


def test_a_redis_server_killed_before_the_claim_runs_no_tool(own_redis):
    import redis

    url, process = own_redis
    SENT.clear()
    client, state = paused(RedisRunStateStore(url=url, socket_timeout=2))
    process.kill()
    process.wait(10)
    started = time.monotonic()
    with pytest.raises(redis.ConnectionError):
        client.resume(state, {'t0': Approve()}).call()
    assert time.monotonic() - started < 10 and SENT == []


def test_a_hung_redis_server_times_out_instead_of_hanging(own_redis):
    import redis

    url, process = own_redis
    SENT.clear()
    client, state = paused(RedisRunStateStore(url=url, socket_timeout=0.5))
    os.kill(process.pid, signal.SIGSTOP)
    started = time.monotonic()
    try:
        with pytest.raises(redis.TimeoutError):
            client.resume(state, {'t0': Approve()}).call()
    finally:
        os.kill(process.pid, signal.SIGCONT)
    assert time.monotonic() - started < 10 and SENT == []
