"""Every repository's atomic ``add_all`` applies exactly the window rules of ``apply_window``.

Random conversations (system, user, assistant text, assistant tool calls, tool responses, in any
order, several per add) and random window sizes, replayed on the in-memory, SQLite and Redis
repositories (and on a SQLite table written by the earlier schema, migrated on open): after every
add each store holds exactly what :func:`toolweave.memory.window.apply_window` computes.
"""

from __future__ import annotations

import random
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from memory_support import redis_server
from toolweave.chat import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.memory import (
    InMemoryChatMemoryRepository,
    MessageWindowChatMemory,
    RedisChatMemoryRepository,
    SqliteChatMemoryRepository,
)
from toolweave.memory.base import WindowedChatMemoryRepository
from toolweave.memory.serialization import message_to_dict
from toolweave.memory.window import apply_window

__all__ = ['redis_server']


def random_message(rng: random.Random, n: int) -> Message:
    roll = rng.random()
    if roll < 0.08:
        return SystemMessage(f's{n}')
    if roll < 0.35:
        return UserMessage(f'u{n}')
    if roll < 0.5:
        return AssistantMessage(f'a{n}')
    if roll < 0.75:
        calls = tuple(ToolCall(f'c{n}.{k}', 'function', 'f', '{}') for k in range(rng.randint(1, 3)))
        return AssistantMessage(rng.choice([None, f'a{n}']), calls)
    return ToolResponseMessage((ToolResponse(f'c{n}', 'f', f'r{n}'),))


@pytest.fixture(params=['in_memory', 'sqlite', 'redis'])
def repository(request: pytest.FixtureRequest) -> Iterator[WindowedChatMemoryRepository]:
    if request.param == 'in_memory':
        yield InMemoryChatMemoryRepository()
    elif request.param == 'sqlite':
        with SqliteChatMemoryRepository(':memory:') as repo:
            yield repo
    else:
        server = request.getfixturevalue('redis_server')
        yield RedisChatMemoryRepository(url=server.url, key_prefix=f'eq:{uuid.uuid4().hex}:')


@pytest.mark.parametrize('seed', range(12))
def test_add_all_matches_apply_window(repository: WindowedChatMemoryRepository, seed: int) -> None:
    rng = random.Random(seed)
    window = rng.choice([1, 2, 3, 5, 8, 13, None])
    expected: list[Message] = []
    n = 0
    for _ in range(60):
        batch = []
        for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
            batch.append(random_message(rng, n))
            n += 1
        repository.add_all('c', batch, max_messages=window)
        expected = apply_window(expected, batch, window)
        assert repository.find_by_conversation_id('c') == expected, (seed, window, n)
    assert repository.find_conversation_ids() == (['c'] if expected else [])


def test_documented_window_rules_hold_on_every_repository(repository: WindowedChatMemoryRepository) -> None:
    call = AssistantMessage(None, (ToolCall('c1', 'function', 't', '{}'), ToolCall('c2', 'function', 't', '{}')))
    responses = ToolResponseMessage((ToolResponse('c1', 't', '1'), ToolResponse('c2', 't', '2')))
    memory = MessageWindowChatMemory(repository, max_messages=4)
    memory.add('c', [SystemMessage('s'), UserMessage('u1'), call, responses, AssistantMessage('a1')])
    assert memory.get('c') == [SystemMessage('s'), call, responses, AssistantMessage('a1')]
    memory.add('c', [UserMessage('u2')])
    assert memory.get('c') == [SystemMessage('s'), AssistantMessage('a1'), UserMessage('u2')]
    memory.add('c', [SystemMessage('s2')])
    assert memory.get('c') == [AssistantMessage('a1'), UserMessage('u2'), SystemMessage('s2')]
    # a system message between a call and its responses does not split them
    memory.clear('c')
    memory.add('c', [UserMessage('u'), call, SystemMessage('s3'), responses, UserMessage('u3'), UserMessage('u4')])
    assert memory.get('c') == [SystemMessage('s3'), UserMessage('u3'), UserMessage('u4')]


OLD_SCHEMA = (
    'CREATE TABLE toolweave_chat_memory (conversation_id TEXT NOT NULL, position INTEGER NOT NULL, '
    'message TEXT NOT NULL, PRIMARY KEY (conversation_id, position))'
)


def test_a_table_of_the_earlier_schema_is_migrated_and_windowed_right(tmp_path: Path) -> None:
    rng = random.Random(99)
    conversations = {f'k{i}': [random_message(rng, i * 100 + j) for j in range(rng.randint(1, 30))] for i in range(5)}
    path = tmp_path / 'old.db'
    with sqlite3.connect(path) as connection:
        connection.execute(OLD_SCHEMA)
        for cid, messages in conversations.items():
            connection.executemany(
                'INSERT INTO toolweave_chat_memory VALUES (?, ?, ?)',
                [(cid, p, orjson.dumps(message_to_dict(m)).decode()) for p, m in enumerate(messages)],
            )
    connection.close()
    with SqliteChatMemoryRepository(path) as repository:
        assert repository.find_conversation_ids() == sorted(conversations)
        for cid, messages in conversations.items():
            assert repository.find_by_conversation_id(cid) == messages
            batch = [random_message(rng, 10_000), random_message(rng, 10_001)]
            repository.add_all(cid, batch, max_messages=7)
            assert repository.find_by_conversation_id(cid) == apply_window(messages, batch, 7)
    with SqliteChatMemoryRepository(path) as again:  # opening a migrated file again changes nothing
        assert again.find_conversation_ids() == sorted(conversations)
