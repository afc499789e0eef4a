"""Each tool call gets its own copy of the ToolContext's containers; clients and locks stay shared.

Attack: tools that mutate nested dicts and lists of their ToolContext, running concurrently
(``acall()``/``stream()``: they meet at a barrier after mutating, so every mutation happens before
any tool reads), one after another (``call()``) and in later rounds. No tool may see another's
change, and the caller's dict must come out unchanged. A database connection (it cannot be
deep-copied), a lock and the application's own objects must reach every call as the same object.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections import OrderedDict, defaultdict, namedtuple
from typing import Any

import pytest
from tool_faults import MODES, calls, run
from toolweave import ChatClient, tool
from toolweave.providers import ScriptedChatModel
from toolweave.tools import ToolContext

S = ScriptedChatModel
TOOLS = 6


def caller_context() -> dict[str, Any]:
    return {'cfg': {'limits': [1, 2], 'owner': {'name': 'ada'}}, 'tags': ['a'], 'pair': ([0], 'x')}


def mutating_tools(mode: str, seen: dict[str, Any]) -> list[Any]:
    barrier = threading.Barrier(TOOLS, timeout=10) if mode != 'call' else None
    gate: dict[str, Any] = {'arrived': 0}

    def mutate(ctx: ToolContext, i: int) -> None:
        ctx['cfg']['limits'].append(i)
        ctx['cfg']['owner']['name'] = f'tool {i}'
        ctx['tags'].clear()
        ctx['pair'][0].append(i)
        ctx.context['tags'].append(f't{i}')  # the plain-dict view shares this call's copy, nobody else's

    def snapshot(ctx: ToolContext) -> Any:
        return (list(ctx['cfg']['limits']), ctx['cfg']['owner']['name'], list(ctx['tags']), list(ctx['pair'][0]))

    @tool
    def sync_mutator(ctx: ToolContext, i: int) -> str:
        mutate(ctx, i)
        if barrier is not None:
            barrier.wait()
        seen[f'sync {i}'] = snapshot(ctx)
        return 'ok'

    @tool
    async def async_mutator(ctx: ToolContext, i: int) -> str:
        mutate(ctx, i)
        if barrier is not None:
            gate['arrived'] += 1
            while gate['arrived'] < TOOLS // 2:  # the async half meets on the loop, the sync half in threads
                await asyncio.sleep(0.001)
            await asyncio.to_thread(barrier.wait)
        seen[f'async {i}'] = snapshot(ctx)
        return 'ok'

    @tool
    def reader(ctx: ToolContext) -> str:
        seen['later'] = snapshot(ctx)
        return 'ok'

    return [sync_mutator, async_mutator, reader]


@pytest.mark.timeout(60)
@pytest.mark.parametrize('mode', MODES)
def test_a_tool_mutating_nested_values_changes_nothing_another_call_or_the_caller_sees(mode):
    seen: dict[str, Any] = {}
    first_turn = calls((('sync_mutator' if i % 2 else 'async_mutator'), {'i': i}) for i in range(TOOLS))
    model = ScriptedChatModel([first_turn, S.tool_call_response('reader'), S.text_response('done')])
    context = caller_context()
    spec = ChatClient.create(model).prompt('go').tools(*mutating_tools(mode, seen)).tool_context(context)
    assert run(spec, mode)[0] == 'done'
    for i in range(TOOLS):
        kind = 'sync' if i % 2 else 'async'
        assert seen[f'{kind} {i}'] == ([1, 2, i], f'tool {i}', [f't{i}'], [0, i])
    assert seen['later'] == ([1, 2], 'ada', ['a'], [0])
    assert context == caller_context()


class Client:
    """An application object: shared by every call, never copied."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.lock = threading.Lock()

    def record(self, i: int) -> None:
        with self.lock:
            self.calls.append(i)


@pytest.mark.parametrize('mode', MODES)
def test_clients_locks_and_application_objects_are_shared_and_keep_working(mode, tmp_path):
    db = sqlite3.connect(tmp_path / 'app.db', check_same_thread=False)
    db.execute('create table hits (n integer)')
    client, lock = Client(), threading.Lock()
    identities: list[tuple[bool, bool, bool]] = []

    @tool
    def use_services(ctx: ToolContext, i: int) -> str:
        with ctx['lock']:
            ctx['services']['db'].execute('insert into hits values (?)', (i,))
            ctx['services']['db'].commit()
        ctx['client'].record(i)
        services = ctx['services']
        identities.append((services['db'] is db, ctx['client'] is client, ctx['lock'] is lock))
        return 'ok'

    model = ScriptedChatModel([calls(('use_services', {'i': i}) for i in range(4)), S.text_response('done')])
    context = {'services': {'db': db}, 'client': client, 'lock': lock}
    assert run(ChatClient.create(model).prompt('go').tools(use_services).tool_context(context), mode)[0] == 'done'
    assert identities == [(True, True, True)] * 4
    assert sorted(n for (n,) in db.execute('select n from hits')) == [0, 1, 2, 3]
    assert sorted(client.calls) == [0, 1, 2, 3]
    db.close()


Point = namedtuple('Point', 'x tags')


def test_copies_keep_container_classes_sharing_and_cycles():
    loop: list[Any] = []
    loop.append(loop)
    shared = [1]
    counts: defaultdict[str, list[int]] = defaultdict(list)
    counts['a'].append(1)
    values = {
        'ordered': OrderedDict(b=[1], a=[2]),
        'counts': counts,
        'point': Point(1, ['t']),
        'frozen': (1, 'two', frozenset({3})),
        'loop': loop,
        'twice': [shared, shared],
        'set': {1, 2},
    }
    ctx = ToolContext(values)
    assert type(ctx['ordered']) is OrderedDict and list(ctx['ordered']) == ['b', 'a']
    assert ctx['ordered']['b'] is not values['ordered']['b']
    assert type(ctx['counts']) is defaultdict and ctx['counts']['new'] == [] and 'new' not in counts
    assert (
        type(ctx['point']) is Point
        and ctx['point'] == values['point']
        and ctx['point'].tags is not values['point'].tags
    )
    assert ctx['frozen'] is values['frozen']  # nothing mutable inside: no copy needed
    assert ctx['loop'][0] is ctx['loop'] and ctx['loop'] is not loop
    assert ctx['twice'][0] is ctx['twice'][1] and ctx['twice'][0] is not shared
    ctx['set'].add(3)
    assert values['set'] == {1, 2}


def test_history_messages_are_the_conversations_own():
    seen: list[Any] = []

    @tool
    def look(ctx: ToolContext) -> str:
        seen.append(ctx[ToolContext.TOOL_CALL_HISTORY])
        return 'ok'

    model = ScriptedChatModel([S.tool_call_response('look'), S.text_response('done')])
    ChatClient.create(model).prompt('go').tools(look).call()
    (history,) = seen
    assert history[-1] is model.prompts[1].messages[-2]  # the assistant message itself, not a copy


def test_the_context_parameter_may_come_first_last_or_positional_only():
    @tool
    def first(ctx: ToolContext, i: int) -> str:
        return f'{ctx["k"]} {i}'

    @tool
    def positional_only(ctx: ToolContext, /, i: int, *, j: int = 0) -> str:
        return f'{ctx["k"]} {i} {j}'

    @tool
    def keyword_only(i: int, *, ctx: ToolContext) -> str:
        return f'{ctx["k"]} {i}'

    turn = calls([('first', {'i': 1}), ('positional_only', {'i': 2, 'j': 3}), ('keyword_only', {'i': 4})])
    model = ScriptedChatModel([turn, S.text_response('done')])
    ChatClient.create(model).prompt('go').tools(first, positional_only, keyword_only).tool_context({'k': 'v'}).call()
    assert [r.response_data for r in model.prompts[1].messages[-1].responses] == ['v 1', 'v 2 3', 'v 4']
