"""Redis: keys written by others, a server that dies, hangs or restarts, ids with separator and glob characters.

Every outcome is a correct result or a typed error (``redis.RedisError``, ``ValueError``), within a
bounded time, never ``UnicodeDecodeError`` and never another conversation's data.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
import redis
from memory_support import RedisServer, problems
from toolweave.chat import AssistantMessage, UserMessage
from toolweave.memory import MessageWindowChatMemory, RedisChatMemoryRepository

TIMEOUT = 1.0


@pytest.fixture
def server() -> Iterator[RedisServer]:
    """A server of this test only (tests here kill, stop and restart it)."""
    try:
        with RedisServer() as started:
            yield started
    except FileNotFoundError:
        pytest.skip('redis-server not installed')


def repo(server: RedisServer, prefix: str | None = None) -> RedisChatMemoryRepository:
    return RedisChatMemoryRepository(
        url=server.url, key_prefix=prefix or f't:{uuid.uuid4().hex}:', socket_timeout=TIMEOUT
    )


def outcome(operation: Callable[[], object]) -> tuple[str, float]:
    """``('ok' | error type name, seconds)``; an error that is not typed fails the test."""
    started = time.monotonic()
    try:
        operation()
        result = 'ok'
    except (redis.RedisError, ValueError) as exc:
        assert not isinstance(exc, UnicodeError), repr(exc)
        result = type(exc).__name__
    return result, time.monotonic() - started


def test_keys_that_are_not_utf8_are_skipped_with_a_warning(
    server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    repository = repo(server, 'mixed:')
    repository.save_all('good', [UserMessage('mine')])
    client = redis.Redis.from_url(server.url)
    client.rpush(b'mixed:\xff\xfe', b'{"type":"user","text":"x","metadata":{}}')
    client.rpush(b'mixed:bad-item', b'\xff\xfe not json')
    client.set(b'mixed:a-string', b'not a list')
    with caplog.at_level(logging.WARNING, logger='toolweave.memory'):
        ids = repository.find_conversation_ids()
    assert ids == ['a-string', 'bad-item', 'good']
    assert [r.getMessage() for r in caplog.records] == ["skipped 1 key(s) under prefix 'mixed:' that are not UTF-8"]
    with pytest.raises(ValueError) as info:
        repository.find_by_conversation_id('bad-item')
    assert not isinstance(info.value, UnicodeError)
    with pytest.raises(redis.ResponseError):
        repository.find_by_conversation_id('a-string')
    with pytest.raises(redis.ResponseError):
        repository.add_all('a-string', [UserMessage('x')], max_messages=5)
    memory = MessageWindowChatMemory(repository, max_messages=3)
    memory.add('bad-item', [UserMessage('a'), UserMessage('b'), UserMessage('c')])  # evicts the foreign item
    assert [m.text for m in memory.get('bad-item')] == ['a', 'b', 'c']
    assert repository.find_by_conversation_id('good') == [UserMessage('mine')]
    client.close()


IDS = ['a', 'a:b', 'a*', 'ab', 'a?', '[ab]', 'b', 'a\\', 'p:q:r', '*', ':']


def test_ids_with_separator_and_glob_characters_stay_apart(server: RedisServer) -> None:
    for prefix in ('g:', 'g*[x]?:'):
        repository = repo(server, prefix)
        for conversation_id in IDS:
            repository.add_all(conversation_id, [UserMessage(f'in {conversation_id}')], max_messages=10)
        assert repository.find_conversation_ids() == sorted(IDS)
        for conversation_id in IDS:
            assert repository.find_by_conversation_id(conversation_id) == [UserMessage(f'in {conversation_id}')]
        repository.delete_by_conversation_id('a*')
        repository.delete_by_conversation_id('[ab]')
        assert repository.find_conversation_ids() == sorted(set(IDS) - {'a*', '[ab]'})
        assert repository.find_by_conversation_id('ab') == [UserMessage('in ab')]
    other = repo(server, 'g?')  # unescaped, 'g?*' would match every key above
    assert other.find_conversation_ids() == []


def test_an_id_with_a_lone_surrogate_is_a_value_error(server: RedisServer) -> None:
    repository = repo(server)
    for operation in (
        lambda: repository.add_all('bad\udcff', [UserMessage('x')]),
        lambda: repository.find_by_conversation_id('\ud800'),
    ):
        with pytest.raises(ValueError) as info:
            operation()
        assert type(info.value) is ValueError


def test_a_server_restart_mid_conversation_gives_typed_errors_then_works(server: RedisServer) -> None:
    repository = repo(server)
    memory = MessageWindowChatMemory(repository, max_messages=50)
    memory.add('c', [UserMessage('before')])
    server.kill()
    for _ in range(3):
        result, seconds = outcome(lambda: memory.add('c', [UserMessage('while down')]))
        assert result == 'ConnectionError' and seconds < TIMEOUT + 2
    server.start()  # same port, empty (no persistence)
    results = [outcome(lambda: memory.add('c', [UserMessage('after')])) for _ in range(3)]
    assert all(seconds < TIMEOUT + 2 for _, seconds in results)
    assert results[-1][0] == 'ok' and {r for r, _ in results} <= {'ok', 'ConnectionError'}
    assert [m.text for m in memory.get('c')] == ['after'] * sum(r == 'ok' for r, _ in results)


def test_a_hung_server_is_a_timeout_not_a_hang(server: RedisServer) -> None:
    repository = repo(server)
    repository.add_all('c', [UserMessage('x')], max_messages=5)
    assert server.process is not None
    server.process.send_signal(signal.SIGSTOP)
    try:
        for operation in (
            lambda: repository.add_all('c', [UserMessage('y')], max_messages=5),
            lambda: repository.find_by_conversation_id('c'),
        ):
            result, seconds = outcome(operation)
            assert result == 'TimeoutError' and seconds < TIMEOUT + 2
    finally:
        server.process.send_signal(signal.SIGCONT)


def test_writers_across_a_restart_get_results_or_typed_errors(server: RedisServer) -> None:
    """8 threads add [user, assistant] pairs while the server is killed and restarted: no hang, whole pairs only."""
    repository = repo(server)
    memory = MessageWindowChatMemory(repository, max_messages=10_000)
    stop = threading.Event()
    outcomes: list[tuple[str, float]] = []
    untyped: list[BaseException] = []

    def writer(n: int) -> None:
        i = 0
        while not stop.is_set():
            pair = [UserMessage(f'w{n}-{i}'), AssistantMessage(f'w{n}-{i + 1}')]
            try:
                outcomes.append(outcome(lambda pair=pair: memory.add('c', pair)))
            except BaseException as exc:  # noqa: BLE001 - an untyped error is the failure reported below
                untyped.append(exc)
            i += 2

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    server.restart()
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join(TIMEOUT + 10)
    assert not any(t.is_alive() for t in threads) and untyped == []
    assert all(seconds < TIMEOUT + 2 for _, seconds in outcomes)
    assert {r for r, _ in outcomes} <= {'ok', 'ConnectionError', 'TimeoutError'}
    stored = memory.get('c')
    assert len(stored) % 2 == 0 and problems(stored) == []
    for first, second in zip(stored[::2], stored[1::2], strict=True):
        writer_id, index = first.text.split('-')
        assert second.text == f'{writer_id}-{int(index) + 1}'
