"""Durable runs with registered advisors, the tool-search loop, streamed deltas and the blocking client.

Each is checked against the same run in-process (``ChatClient``) on a real Temporal dev server.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from durable_app import (
    PLAN,
    JsonModel,
    Person,
    PlanModel,
    SearchingModel,
    StrategyModel,
    StreamingModel,
    build_registry,
    first,
    get_time,
    get_weather,
)
from durable_app import send_mail as mail
from toolweave import ChatClient
from toolweave.advisors import ToolSearchToolCallingAdvisor
from toolweave.advisors.api import HIGHEST_PRECEDENCE, BaseAdvisor, ChatClientRequest, ChatClientResponse
from toolweave.chat.messages import AssistantMessage, SystemMessage
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Generation, Usage
from toolweave.durable import (
    BlockingDurableClient,
    DurableClient,
    DurableRegistry,
    DurableRunError,
    connect,
    create_replayer,
    create_worker,
)
from toolweave.events import (
    RunFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStarted,
    ToolExecutionStarted,
    ToolResult,
)
from toolweave.search import RegexToolIndex
from toolweave.search.sessions import SqliteDiscoveredToolsStore, ToolSearchSessions

HERE = Path(__file__).parent


@contextlib.asynccontextmanager
async def durable(target: str, task_queue: str, registry: DurableRegistry):
    client = await connect(target)
    async with create_worker(client, registry, task_queue=task_queue):
        yield DurableClient(client, task_queue=task_queue)


# -- registered advisors -------------------------------------------------------------------------


class Tagging(BaseAdvisor):
    """Adds a system line on the way down and a suffix to the answer on the way up; logs what it saw."""

    advisor_params = frozenset({'tag'})

    def __init__(self, order: int, log: list[str]) -> None:
        super().__init__(order)
        self.log = log

    def before(self, request: ChatClientRequest, chain) -> ChatClientRequest:
        tag = request.context.get('tag', '-')
        self.log.append(f'before {self.order} {len(request.prompt.messages)} {tag}')
        messages = (*request.prompt.messages, SystemMessage(f'[{tag}@{self.order}]'))
        return request.with_prompt(Prompt(messages, request.prompt.options))

    def after(self, response: ChatClientResponse, chain) -> ChatClientResponse:
        chat = response.chat_response
        self.log.append(f'after {self.order} {chat.text if chat is not None else None}')
        if chat is None or chat.tool_calls:
            return response
        answer = Generation(AssistantMessage(f'{chat.text} <{self.order}>'), chat.result.finish_reason)
        return ChatClientResponse(
            ChatResponse((answer,), chat.id, chat.model, chat.usage, chat.metadata), response.context
        )


def _both(order_outer: int, order_inner: int):
    """(durable registry, in-process advisors, their logs): an advisor around the loop and one around every round."""
    durable_log: list[str] = []
    registry = build_registry()
    registry.add_advisor('outer', lambda: Tagging(order_outer, durable_log))
    registry.add_advisor('inner', lambda: Tagging(order_inner, durable_log))
    local_log: list[str] = []
    return registry, (Tagging(order_outer, local_log), Tagging(order_inner, local_log)), durable_log, local_log


def test_registered_advisors_run_around_the_loop_and_each_round_as_in_process(temporal_target, task_queue):
    registry, advisors, durable_log, local_log = _both(HIGHEST_PRECEDENCE + 100, 0)

    async def main():
        async with durable(temporal_target, task_queue, registry) as tw:
            return await tw.run(
                'go', model='pair', tools=['first', 'second', 'third'], advisors=['inner', 'outer'],
                advisor_params={'tag': 't1'},
            )  # fmt: skip

    response = asyncio.run(main())
    model = PlanModel(((PLAN[0],), (PLAN[1], PLAN[2])))
    from durable_app import second, third

    expected = (
        ChatClient.builder(model).default_advisors(*advisors).build()
        .prompt('go').tools(first, second, third).advisors(tag='t1').call().chat_response()
    )  # fmt: skip
    assert response.text == expected.text == 'answer: first=10 | second=20 | third=30 <0> <-2147483548>'
    assert response.usage == expected.usage
    assert response.metadata['toolCallingRounds'] == expected.metadata['toolCallingRounds'] == 3
    assert durable_log == local_log
    assert local_log[0] == 'before -2147483548 1 t1'  # the outer advisor once, around the loop
    assert sum(line.startswith('before 0 ') for line in local_log) == 3  # the inner one every round


def test_structured_output_validates_and_asks_again_as_in_process(temporal_target, task_queue):
    registry = build_registry().add_model('json', JsonModel()).add_output('person', Person, strategy='prompted')
    registry.add_output('strict', Person, strategy='prompted', max_retries=0)

    async def main():
        async with durable(temporal_target, task_queue, registry) as tw:
            good = await tw.run('who?', model='json', advisors=['person'])
            with pytest.raises(DurableRunError) as bad:
                await tw.run('who?', model='json', advisors=['strict'])
            return good, bad.value

    response, error = asyncio.run(main())
    local = JsonModel()
    expected = ChatClient.create(local).prompt('who?').response_entity(Person, strategy='prompted')
    assert expected.entity == Person(name='Ada', age=36)
    assert Person.model_validate_json(response.text) == expected.entity
    assert response.usage == expected.chat_response.usage == Usage(14, 10, 24)  # both attempts
    assert error.error_type == 'StructuredOutputValidationError'
    assert 'age' in error.message
    durable_model = registry.model('json').model
    assert [len(p.messages) for p in durable_model.prompts[:2]] == [len(p.messages) for p in local.prompts]
    assert durable_model.prompts[0].messages[-1].text == local.prompts[0].messages[-1].text  # format instructions


@pytest.mark.parametrize('strategy', ['native', 'tool'])
def test_structured_output_strategies_as_in_process(temporal_target, task_queue, strategy):
    registry = build_registry().add_model('m', StrategyModel()).add_output('person', Person, strategy=strategy)

    async def main():
        async with durable(temporal_target, task_queue, registry) as tw:
            return await tw.run('who?', model='m', advisors=['person'])

    response = asyncio.run(main())
    expected = ChatClient.create(StrategyModel()).prompt('who?').response_entity(Person, strategy=strategy)
    assert expected.entity == Person(name='Ada', age=36)
    assert Person.model_validate_json(response.text) == expected.entity
    assert response.usage == expected.chat_response.usage
    assert response.result.finish_reason == expected.chat_response.result.finish_reason


def test_an_advisor_needing_a_thread_is_refused():
    from toolweave.advisors.api import CallAdvisor

    class Blocking(CallAdvisor):
        order = 0

        def advise_call(self, request, chain):  # pragma: no cover
            return chain.next_call(request)

    with pytest.raises(TypeError, match='BaseAdvisor or write aadvise_call'):
        DurableRegistry().add_advisor('b', Blocking())
    registry = DurableRegistry().add_advisor('b', lambda: [Blocking()])
    with pytest.raises(TypeError, match='no aadvise_call of its own'):
        registry.advisors('b')


# -- tool search ---------------------------------------------------------------------------------


def _search_registry(store_path: Path, model: SearchingModel) -> DurableRegistry:
    registry = build_registry().add_model('searching', model).add_tools(get_weather, get_time, mail)
    sessions = ToolSearchSessions(store=SqliteDiscoveredToolsStore(store_path))
    return registry.add_loop('search', ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), sessions=sessions))


def test_tool_search_loop_discovers_tools_as_in_process(temporal_target, task_queue, tmp_path):
    model = SearchingModel()
    tools = ['get_weather', 'get_time', 'send_mail']

    async def main():
        async with durable(temporal_target, task_queue, _search_registry(tmp_path / 's.db', model)) as tw:
            run = await tw.start('weather?', model='searching', tools=tools, loop='search', conversation_id='c1')
            return [e async for e in run.events()], await run.result()

    events, response = asyncio.run(main())
    local = SearchingModel()
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex())
    expected_events: list = []
    expected = (
        ChatClient.builder(local).tool_calling_advisor(advisor).build().prompt('weather?')
        .tools(get_weather, get_time, mail).advisors(chat_memory_conversation_id='c1')
        .call(on_event=expected_events.append).chat_response()
    )  # fmt: skip
    assert response.text == expected.text == 'sunny in Paris'
    assert (
        model.offered
        == local.offered
        == [['toolSearchTool'], ['get_weather', 'toolSearchTool']] * 1 + [['get_weather', 'toolSearchTool']]
    )
    assert response.usage == expected.usage
    assert response.metadata['toolDefinitionsPerRound'] == expected.metadata['toolDefinitionsPerRound'] == [1, 2, 2]
    assert response.metadata['toolDefinitionBytesPerRound'] == expected.metadata['toolDefinitionBytesPerRound']
    assert [(e.name, e.text) for e in events if isinstance(e, ToolResult)] == [
        (e.name, e.text) for e in expected_events if isinstance(e, ToolResult)
    ]


def test_tool_search_session_is_shared_by_workers(temporal_target, tmp_path):
    """Two workers (each its own registry, sessions and index) share the conversation's finds through the store."""
    store = tmp_path / 'shared.db'
    tools = ['get_weather', 'get_time', 'send_mail']

    async def turn(model: SearchingModel, conversation: str):
        queue = f'tw-{uuid.uuid4().hex[:12]}'  # a fresh worker: nothing in its memory
        async with durable(temporal_target, queue, _search_registry(store, model)) as tw:
            return await tw.run('weather?', model='searching', tools=tools, loop='search', conversation_id=conversation)

    worker_a, worker_b, worker_c = SearchingModel(), SearchingModel(), SearchingModel()
    first_turn = asyncio.run(turn(worker_a, 'alice'))
    second_turn = asyncio.run(turn(worker_b, 'alice'))
    other = asyncio.run(turn(worker_c, 'bob'))
    assert worker_a.offered[0] == ['toolSearchTool']
    assert worker_b.offered[0] == ['get_weather', 'toolSearchTool']  # found by the first worker's run
    assert worker_c.offered[0] == ['toolSearchTool']  # another conversation
    assert first_turn.text == second_turn.text == other.text == 'sunny in Paris'
    assert second_turn.metadata['toolDefinitionsPerRound'] == [2, 2]
    assert SqliteDiscoveredToolsStore(store).discovered('alice') == ('get_weather',)


# -- deltas --------------------------------------------------------------------------------------


def test_streamed_rounds_give_delta_events_as_in_process_stream(temporal_target, task_queue):
    registry = build_registry().add_model('streaming', StreamingModel())

    async def main():
        async with durable(temporal_target, task_queue, registry) as tw:
            run = await tw.start('go', model='streaming', tools=['first'], deltas=True)
            streamed = [e async for e in run.events(poll_interval=0.02)]
            plain = await tw.start('go', model='streaming', tools=['first'])
            return streamed, await run.result(), [e async for e in plain.events()]

    events, response, without = asyncio.run(main())
    expected = list(ChatClient.create(StreamingModel()).prompt('go').tools(first).stream().events())
    kinds = [e.kind for e in events]
    assert kinds == [e.kind for e in expected]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == [e.text for e in expected if isinstance(e, TextDelta)]
    assert deltas == ['Let me ', 'look ', 'that up.', 'The ', 'answer: ', 'first=40']
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [ToolCallStarted(1, 0, 'c1', 'first')]
    assert [e.delta for e in events if isinstance(e, ToolCallArgumentsDelta)] == ['{"x": 4}']
    assert response.text == 'The answer: first=40'
    assert isinstance(events[-1], RunFinished) and events[-1].usage == response.usage == Usage(14, 7, 21)
    assert not any(isinstance(e, TextDelta) for e in without)  # deltas only when asked for
    assert [e.kind for e in without].count('tool_call_started') == 1


# -- replay --------------------------------------------------------------------------------------


def test_runs_with_advisors_search_and_deltas_replay(temporal_target, task_queue, tmp_path):
    registry = _search_registry(tmp_path / 'r.db', SearchingModel()).add_model('streaming', StreamingModel())
    registry.add_output('person', Person).add_model('json', JsonModel())

    async def main():
        async with durable(temporal_target, task_queue, registry) as tw:
            runs = [
                await tw.start('weather?', model='searching', tools=['get_weather'], loop='search'),
                await tw.start('go', model='streaming', tools=['first'], deltas=True),
                await tw.start('who?', model='json', advisors=['person']),
            ]
            for run in runs:
                await run.result()
            histories = [await run.handle.fetch_history() for run in runs]
        replayer = create_replayer(registry)
        return [await replayer.replay_workflow(h) for h in histories]

    results = asyncio.run(main())
    assert [r.replay_failure for r in results] == [None, None, None]


# -- blocking client -----------------------------------------------------------------------------


def test_blocking_client(temporal_target, task_queue, worker_processes):
    worker_processes()
    with BlockingDurableClient(temporal_target, task_queue=task_queue) as runs:
        response = runs.run('go', model='pair', tools=['first', 'second', 'third'])
        run = runs.start('go', model='pair', tools=['first', 'second', 'third'])
        events = list(run.events(poll_interval=0.02))
        again = runs.get(run.id)
        assert again.result().text == run.result().text
        assert again.pending() == ()
        with pytest.raises(DurableRunError) as not_paused:
            again.decide({})
    assert response.text == 'answer: first=10 | second=20 | third=30'
    assert isinstance(events[-1], RunFinished) and events[-1].usage == response.usage
    assert sum(isinstance(e, ToolExecutionStarted) for e in events) == 3
    assert not_paused.value.error_type == 'RunNotPausedError'
    runs.close()  # twice is fine
    with pytest.raises(RuntimeError, match='closed'):
        runs.run('go', model='pair')


_SCRIPTS = {
    'async': """
        import asyncio
        from toolweave.durable import DurableClient, connect

        async def main():
            runs = DurableClient(await connect({target!r}), task_queue={queue!r})
            print((await runs.run('go', model='plan', tools=['first', 'second', 'third'])).text)
            try:
                await runs.get('no-such-run').pending()
            except Exception as error:  # an RPCError: its traceback holds the client in a cycle
                print(type(error).__name__)

        asyncio.run(main())
    """,
    'blocking': """
        from toolweave.durable import BlockingDurableClient

        runs = BlockingDurableClient({target!r}, task_queue={queue!r})  # never closed
        print(runs.run('go', model='plan', tools=['first', 'second', 'third']).text)
        try:
            runs.get('no-such-run').pending()
        except Exception as error:
            print(type(error).__name__)
    """,
}


@pytest.mark.parametrize('kind', sorted(_SCRIPTS))
def test_short_lived_scripts_exit_cleanly(temporal_target, task_queue, worker_processes, kind):
    """A script that runs once and ends exits 0, eight times in a row.

    Without the collection at exit that ``connect`` registers, about a third of such async scripts
    were aborted by temporalio's runtime at interpreter finalization (SIGABRT).
    """
    worker_processes()
    script = textwrap.dedent(_SCRIPTS[kind]).format(target=temporal_target, queue=task_queue)
    for _ in range(8):
        done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=60, check=False)
        output = done.stdout.split()
        assert (done.returncode, output[-1]) == (0, 'RPCError'), done.stderr
        assert ' '.join(output[:-1]) == 'answer: first=10 | second=20 | third=30'
