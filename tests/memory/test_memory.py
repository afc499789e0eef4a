"""Chat memory: lossless repositories (in-memory, SQLite, Redis), the message window, concurrency."""

import subprocess
import sys
import threading
import uuid

import pytest
from toolweave.chat import AssistantMessage, SystemMessage, ToolCall, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.memory import (
    InMemoryChatMemoryRepository,
    MessageWindowChatMemory,
    RedisChatMemoryRepository,
    SqliteChatMemoryRepository,
    message_from_dict,
    message_to_dict,
)

MESSAGES = {
    'system': SystemMessage('Be brief.', {'source': 'config'}),
    'user': UserMessage('héllo 🌍 "quoted"\n', {'n': 1, 'nested': {'a': [1, 2.5, None, True]}}),
    'assistant_text': AssistantMessage('It is 18 C.', (), {'reasoning': 'looked it up'}),
    'assistant_empty': AssistantMessage(''),
    'assistant_tool_calls': AssistantMessage(
        None,
        (
            ToolCall('call_1', 'function', 'get_weather', '{"city": "Paris", "unit": "c"}'),
            ToolCall('call_2', 'function', 'now', ''),
            ToolCall('call_3', 'function', 'broken', '{"a": '),
        ),
    ),
    'assistant_text_and_calls': AssistantMessage('Let me check.', (ToolCall('c9', 'function', 'x', '{}'),)),
    'tool_responses': ToolResponseMessage(
        (
            ToolResponse('call_1', 'get_weather', '18 C'),
            ToolResponse('call_2', 'now', ''),
            ToolResponse('call_3', 'broken', 'Invalid arguments'),
        ),
        {'elapsed_ms': 12},
    ),
}


def _redis_repository(url):
    return RedisChatMemoryRepository(url=url, key_prefix=f'test:{uuid.uuid4().hex}:')


@pytest.fixture(params=['in_memory', 'sqlite_memory', 'sqlite_file', 'redis'])
def repository(request, tmp_path):
    kind = request.param
    if kind == 'in_memory':
        yield InMemoryChatMemoryRepository()
    elif kind == 'sqlite_memory':
        with SqliteChatMemoryRepository(':memory:') as repo:
            yield repo
    elif kind == 'sqlite_file':
        with SqliteChatMemoryRepository(tmp_path / 'chat.db') as repo:
            yield repo
    else:
        yield _redis_repository(request.getfixturevalue('redis_url'))


@pytest.mark.parametrize('kind', sorted(MESSAGES))
def test_every_message_type_round_trips_losslessly(repository, kind):
    message = MESSAGES[kind]
    repository.save_all('conv', [message])
    (back,) = repository.find_by_conversation_id('conv')
    assert back == message
    assert type(back) is type(message)
    if isinstance(message, AssistantMessage):
        assert back.content is message.content or back.content == message.content


def test_repository_contract(repository):
    assert repository.find_by_conversation_id('missing') == []
    repository.save_all('a', list(MESSAGES.values()))
    repository.save_all('b', [UserMessage('x')])
    assert repository.find_by_conversation_id('a') == list(MESSAGES.values())
    assert sorted(repository.find_conversation_ids()) == ['a', 'b']
    repository.save_all('a', [UserMessage('replaced')])
    assert repository.find_by_conversation_id('a') == [UserMessage('replaced')]
    repository.delete_by_conversation_id('a')
    repository.delete_by_conversation_id('never')
    assert repository.find_conversation_ids() == ['b']
    with pytest.raises(ValueError, match='conversation_id cannot be null or empty'):
        repository.save_all(' ', [])
    with pytest.raises(TypeError, match='conversation_id must be a str'):
        repository.find_by_conversation_id(None)


def test_unserialisable_metadata_is_a_type_error_and_changes_nothing(repository):
    repository.save_all('c', [UserMessage('kept')])
    if isinstance(repository, InMemoryChatMemoryRepository):
        return  # keeps Python objects as they are: nothing to serialise
    with pytest.raises(TypeError, match='not JSON serializable: object'):
        repository.save_all('c', [UserMessage('new', {'obj': object()})])
    assert repository.find_by_conversation_id('c') == [UserMessage('kept')]


def test_message_dicts_reject_garbage():
    assert message_to_dict(UserMessage('hi')) == {'type': 'user', 'text': 'hi', 'metadata': {}}
    with pytest.raises(ValueError, match='unknown stored message type'):
        message_from_dict({'type': 'robot'})
    with pytest.raises(ValueError, match='malformed stored message'):
        message_from_dict({'type': 'assistant', 'content': 'x'})


# -- the window ---------------------------------------------------------------------------------


def test_window_keeps_last_messages_and_system_messages():
    memory = MessageWindowChatMemory()
    assert memory.max_messages == 20
    memory = MessageWindowChatMemory(max_messages=3)
    memory.add('c', [SystemMessage('s1'), UserMessage('u1'), AssistantMessage('a1'), UserMessage('u2')])
    assert [m.text for m in memory.get('c')] == ['s1', 'a1', 'u2']
    memory.add('c', [SystemMessage('s2')])
    assert [m.text for m in memory.get('c')] == ['a1', 'u2', 's2']
    memory.clear('c')
    assert memory.get('c') == []
    with pytest.raises(ValueError, match='max_messages must be a positive int'):
        MessageWindowChatMemory(max_messages=0)


def test_window_never_splits_tool_calls_from_their_responses():
    call = AssistantMessage(None, (ToolCall('c1', 'function', 't', '{}'), ToolCall('c2', 'function', 't', '{}')))
    responses = ToolResponseMessage((ToolResponse('c1', 't', '1'), ToolResponse('c2', 't', '2')))
    memory = MessageWindowChatMemory(max_messages=4)
    memory.add('c', [SystemMessage('s'), UserMessage('u1'), call, responses, AssistantMessage('a1')])
    assert memory.get('c') == [SystemMessage('s'), call, responses, AssistantMessage('a1')]
    memory.add('c', [UserMessage('u2')])
    assert memory.get('c') == [SystemMessage('s'), AssistantMessage('a1'), UserMessage('u2')]


# -- concurrency --------------------------------------------------------------------------------


def test_sqlite_is_safe_under_threads(tmp_path):
    for repo in (SqliteChatMemoryRepository(tmp_path / 't.db'), SqliteChatMemoryRepository(':memory:')):
        memory = MessageWindowChatMemory(repo, max_messages=1000)
        errors = []

        def worker(n: int, memory=memory, errors=errors) -> None:
            try:
                for i in range(25):
                    memory.add(f'c{n}', [UserMessage(f'{n}-{i}')])
                    memory.get(f'c{n}')
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for n in range(6):
            assert [m.text for m in memory.get(f'c{n}')] == [f'{n}-{i}' for i in range(25)]
        repo.close()


WRITER = """
import sys
from toolweave.chat import UserMessage
from toolweave.memory import SqliteChatMemoryRepository
repo = SqliteChatMemoryRepository(sys.argv[1])
name = sys.argv[2]
for i in range(40):
    repo.save_all(name, [UserMessage(f'{name}-{i}-{k}') for k in range(5)])
    repo.save_all('shared', [UserMessage(f'{name}-{k}') for k in range(5)])
"""


def test_sqlite_is_safe_across_processes(tmp_path):
    path = str(tmp_path / 'p.db')
    procs = [subprocess.Popen([sys.executable, '-c', WRITER, path, name]) for name in ('w1', 'w2')]
    assert [p.wait(120) for p in procs] == [0, 0]
    repo = SqliteChatMemoryRepository(path)
    for name in ('w1', 'w2'):
        assert [m.text for m in repo.find_by_conversation_id(name)] == [f'{name}-39-{k}' for k in range(5)]
    shared = [m.text for m in repo.find_by_conversation_id('shared')]
    assert shared in ([f'w1-{k}' for k in range(5)], [f'w2-{k}' for k in range(5)])  # never a mix
    repo.close()


def test_redis_save_all_is_atomic_under_threads(redis_url):
    repo = _redis_repository(redis_url)
    barrier = threading.Barrier(4)

    def writer(n: int) -> None:
        barrier.wait(10)
        for _ in range(30):
            repo.save_all('shared', [UserMessage(f'{n}-{k}') for k in range(4)])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    texts = [m.text for m in repo.find_by_conversation_id('shared')]
    assert len(texts) == 4 and len({t.split('-')[0] for t in texts}) == 1
