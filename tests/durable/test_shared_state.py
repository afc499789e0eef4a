"""State shared across worker processes: tool-search sessions in SQLite or Redis, chat memory in Redis."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from toolweave.durable import DurableClient, connect
from toolweave.memory import MessageWindowChatMemory, RedisChatMemoryRepository
from toolweave.search.sessions import (
    DiscoveredToolsStore,
    RedisDiscoveredToolsStore,
    SqliteDiscoveredToolsStore,
    ToolSearchSessions,
)

HERE = Path(__file__).parent


def _serve(kind, where, conversation, query=None):
    args = [sys.executable, str(HERE / 'search_process.py'), kind, where, conversation, *([query] if query else [])]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(params=['sqlite', 'redis'])
def store_location(request, tmp_path):
    if request.param == 'sqlite':
        return 'sqlite', str(tmp_path / 'sessions.db')
    return 'redis', request.getfixturevalue('redis_url')


def test_two_processes_see_the_same_discovered_tools(store_location):
    kind, where = store_location
    conversation = f'c-{uuid.uuid4().hex[:8]}'
    first = _serve(kind, where, conversation, 'weather')
    assert first['offered'] == ['toolSearchTool']  # nothing discovered yet
    assert first['discovered'] == ['get_weather']
    second = _serve(kind, where, conversation)  # another process, the same conversation
    assert second['offered'] == ['get_weather', 'toolSearchTool']
    assert second['discovered'] == ['get_weather']
    other = _serve(kind, where, f'other-{conversation}')  # another conversation sees nothing of it
    assert other['offered'] == ['toolSearchTool']
    assert other['discovered'] == []


@pytest.fixture(params=['sqlite', 'redis'])
def store(request, tmp_path):
    if request.param == 'sqlite':
        store = SqliteDiscoveredToolsStore(tmp_path / 'sessions.db')
        yield store
        store.close()
    else:
        yield RedisDiscoveredToolsStore(url=request.getfixturevalue('redis_url'), key_prefix=f't:{uuid.uuid4().hex}:')


def test_store_keeps_discovery_order_without_duplicates(store):
    assert isinstance(store, DiscoveredToolsStore)
    store.add('a', ['x', 'y'])
    store.add('a', ['y', 'z', 'x', 'w'])
    store.add('b', ['q'])
    assert store.discovered('a') == ('x', 'y', 'z', 'w')
    assert store.discovered('nobody') == ()
    sessions = ToolSearchSessions(store=store)
    sessions.add('b', ['r', 'q'])
    assert sessions.discovered('b') == ('q', 'r')
    sessions.clear('a')
    assert store.discovered('a') == ()
    assert store.discovered('b') == ('q', 'r')
    store.clear()
    assert store.discovered('b') == ()


def test_store_must_be_a_store():
    with pytest.raises(TypeError, match='DiscoveredToolsStore'):
        ToolSearchSessions(store=object())


def test_one_conversation_alternately_through_two_worker_processes(
    temporal_target, redis_url, worker_processes, tool_dir
):
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    queues = [f'tw-a-{uuid.uuid4().hex[:8]}', f'tw-b-{uuid.uuid4().hex[:8]}']
    workers = [worker_processes(redis_url, queue=queue) for queue in queues]

    async def conversation():
        client = await connect(temporal_target)
        answers = []
        for turn in range(4):
            tw = DurableClient(client, task_queue=queues[turn % 2])  # worker A, B, A, B
            response = await tw.run(
                f'turn {turn}', model='conversation', tools=['first'], memory='chat', conversation_id='alice'
            )
            answers.append(response.text)
        return answers

    answers = asyncio.run(conversation())
    assert answers == [
        'first=10; saw 1 user messages, 0 answers',
        'first=20; saw 2 user messages, 1 answers',
        'first=30; saw 3 user messages, 2 answers',
        'first=40; saw 4 user messages, 3 answers',
    ]
    ran = (tool_dir / 'first.log').read_text().split('\n')
    assert [line.split()[0] for line in ran if line] == [str(w.pid) for w in workers] * 2  # A, B, A, B
    stored = MessageWindowChatMemory(RedisChatMemoryRepository(url=redis_url, key_prefix='tw:')).get('alice')
    assert [m.text for m in stored] == [
        text for turn, answer in enumerate(answers) for text in (f'turn {turn}', answer)
    ]
