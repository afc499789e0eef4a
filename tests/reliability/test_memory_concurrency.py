"""Concurrent ``MessageWindowChatMemory.add`` on one conversation loses nothing: threads, processes, SIGKILLed writers.

Every repository (in-memory, SQLite ``:memory:`` and file, Redis, and a third-party repository that
has only the Spring methods) gets 8 threads x 50 adds; a SQLite file and a Redis server get 4
processes x 25 adds. With a window larger than the total every message is kept, each writer's in
its own order; with a smaller window the result is exactly the last N messages of some serial order
of the adds (each writer's kept messages are a suffix of what it wrote).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from memory_support import RedisServer, problems, redis_server
from toolweave.chat import AssistantMessage, Message, UserMessage
from toolweave.memory import (
    InMemoryChatMemoryRepository,
    MessageWindowChatMemory,
    RedisChatMemoryRepository,
    SqliteChatMemoryRepository,
)
from toolweave.memory.base import ChatMemoryRepository, WindowedChatMemoryRepository

__all__ = ['redis_server']

THREADS, THREAD_ADDS = 8, 50
PROCESSES, PROCESS_ADDS = 4, 25


class SpringOnlyRepository:
    """A third-party repository with only the four Spring methods (no ``add_all``)."""

    def __init__(self) -> None:
        self._inner = InMemoryChatMemoryRepository()

    def find_conversation_ids(self) -> list[str]:
        return self._inner.find_conversation_ids()

    def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        messages = self._inner.find_by_conversation_id(conversation_id)
        time.sleep(0)  # let another thread in between the read and the write
        return messages

    def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        self._inner.save_all(conversation_id, messages)

    def delete_by_conversation_id(self, conversation_id: str) -> None:
        self._inner.delete_by_conversation_id(conversation_id)


@pytest.fixture(params=['in_memory', 'sqlite_memory', 'sqlite_file', 'redis', 'spring_only'])
def repository(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChatMemoryRepository]:
    kind = request.param
    if kind == 'in_memory':
        yield InMemoryChatMemoryRepository()
    elif kind == 'spring_only':
        repo = SpringOnlyRepository()
        assert not isinstance(repo, WindowedChatMemoryRepository)
        yield repo
    elif kind.startswith('sqlite'):
        with SqliteChatMemoryRepository(':memory:' if kind == 'sqlite_memory' else tmp_path / 'chat.db') as repo:
            yield repo
    else:
        server = request.getfixturevalue('redis_server')
        yield RedisChatMemoryRepository(url=server.url, key_prefix=f'test:{uuid.uuid4().hex}:')


def check_serial_window(texts: list[str], written: dict[str, int], window: int | None) -> None:
    """``texts`` is the last ``window`` messages of a serial order of the writers' messages (``None``: all)."""
    total = sum(written.values())
    assert len(texts) == (total if window is None else min(window, total)), texts
    assert len(set(texts)) == len(texts), 'a message was stored twice'
    for writer, count in written.items():
        mine = [int(t.split('-')[1]) for t in texts if t.split('-')[0] == writer]
        assert mine == list(range(count - len(mine), count)), f'{writer}: {mine}'


def run_threads(memory: MessageWindowChatMemory, conversation_id: str) -> None:
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            barrier.wait(10)
            for i in range(THREAD_ADDS):
                memory.add(conversation_id, [UserMessage(f't{n}-{i}')])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []


@pytest.mark.parametrize('window', [1000, 37])
def test_threads_lose_no_message(repository: ChatMemoryRepository, window: int) -> None:
    memory = MessageWindowChatMemory(repository, max_messages=window)
    run_threads(memory, 'shared')
    texts = [m.text for m in repository.find_by_conversation_id('shared')]
    check_serial_window(texts, {f't{n}': THREAD_ADDS for n in range(THREADS)}, window)


WRITER = """
import sys, time
from pathlib import Path
from toolweave.chat import AssistantMessage, UserMessage
from toolweave.memory import MessageWindowChatMemory, RedisChatMemoryRepository, SqliteChatMemoryRepository
kind, where, prefix, name, adds, window, go = sys.argv[1:8]
if kind == 'sqlite':
    repository = SqliteChatMemoryRepository(where)
else:
    repository = RedisChatMemoryRepository(url=where, key_prefix=prefix)
memory = MessageWindowChatMemory(repository, max_messages=int(window))
Path(go + '.' + name).touch()
while not Path(go).exists():
    time.sleep(0.005)
for i in range(int(adds)):
    if name.startswith('pair'):
        memory.add('shared', [UserMessage(f'{name}-{2 * i}'), AssistantMessage(f'{name}-{2 * i + 1}')])
    else:
        memory.add('shared', [UserMessage(f'{name}-{i}')])
"""


def start_writers(
    tmp_path: Path, kind: str, where: str, prefix: str, names: list[str], adds: int | dict[str, int], window: int
) -> list[subprocess.Popen[bytes]]:
    """Start one writer process per name (``adds`` each, or per name); return once all are released together."""
    go = str(tmp_path / 'go')
    args = [kind, where, prefix]
    counts = adds if isinstance(adds, dict) else dict.fromkeys(names, adds)
    procs = [
        subprocess.Popen([sys.executable, '-c', WRITER, *args, name, str(counts[name]), str(window), go])
        for name in names
    ]
    deadline = time.monotonic() + 60
    while not all(Path(f'{go}.{name}').exists() for name in names):
        assert time.monotonic() < deadline, 'writers did not start'
        assert all(p.poll() is None for p in procs), 'a writer died while starting'
        time.sleep(0.01)
    Path(go).touch()
    return procs


def stored_texts(kind: str, where: str, prefix: str) -> list[str]:
    if kind == 'sqlite':
        with SqliteChatMemoryRepository(where) as repository:
            return [m.text or '' for m in repository.find_by_conversation_id('shared')]
    repository = RedisChatMemoryRepository(url=where, key_prefix=prefix)
    return [m.text or '' for m in repository.find_by_conversation_id('shared')]


def store_of(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, str]:
    if kind == 'sqlite':
        return str(tmp_path / 'shared.db'), ''
    server: RedisServer = request.getfixturevalue('redis_server')
    return server.url, f'test:{uuid.uuid4().hex}:'


@pytest.mark.parametrize('kind', ['sqlite', 'redis'])
@pytest.mark.parametrize('window', [1000, 30])
def test_processes_lose_no_message(kind: str, window: int, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    where, prefix = store_of(kind, tmp_path, request)
    names = [f'p{n}' for n in range(PROCESSES)]
    procs = start_writers(tmp_path, kind, where, prefix, names, PROCESS_ADDS, window)
    assert [p.wait(120) for p in procs] == [0] * PROCESSES
    check_serial_window(stored_texts(kind, where, prefix), dict.fromkeys(names, PROCESS_ADDS), window)


@pytest.mark.parametrize('kind', ['sqlite', 'redis'])
def test_sigkilled_writers_leave_whole_adds_only(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Writers adding [user, assistant] pairs are SIGKILLed mid-run: every stored add is whole, nothing else lost.

    Two writers add 400 pairs; the other two would add a million and are killed once those are done.
    """
    where, prefix = store_of(kind, tmp_path, request)
    names = [f'pair{n}' for n in range(PROCESSES)]
    adds = {'pair0': 10**6, 'pair1': 10**6, 'pair2': 400, 'pair3': 400}
    procs = start_writers(tmp_path, kind, where, prefix, names, adds, 10**7)
    assert [p.wait(120) for p in procs[2:]] == [0, 0]
    for victim in procs[:2]:
        victim.send_signal(signal.SIGKILL)
    assert [p.wait(30) for p in procs[:2]] == [-signal.SIGKILL] * 2
    texts = stored_texts(kind, where, prefix)
    written = {}
    for name in names:
        mine = [int(t.split('-')[1]) for t in texts if t.split('-')[0] == name]
        assert mine == list(range(len(mine))), f'{name}: not a prefix of what it wrote'
        assert len(mine) % 2 == 0, f'{name}: half an add was stored'
        written[name] = len(mine)
    assert written['pair2'] == written['pair3'] == 800
    if kind == 'sqlite':
        with sqlite3.connect(where) as connection:
            assert connection.execute('PRAGMA integrity_check').fetchone() == ('ok',)
    memory = MessageWindowChatMemory(
        SqliteChatMemoryRepository(where)
        if kind == 'sqlite'
        else RedisChatMemoryRepository(url=where, key_prefix=prefix),
        max_messages=100_000,
    )
    memory.add('shared', [UserMessage('after'), AssistantMessage('the kill')])
    assert [m.text for m in memory.get('shared')][-2:] == ['after', 'the kill']
    assert problems(memory.get('shared')) == []
    if kind == 'sqlite':
        memory.repository.close()  # type: ignore[attr-defined]


def test_threads_and_processes_together_on_one_sqlite_file(tmp_path: Path) -> None:
    """Threads of this process and writer processes add to one file at once."""
    path = str(tmp_path / 'mixed.db')
    names = [f'p{n}' for n in range(2)]
    procs = start_writers(tmp_path, 'sqlite', path, '', names, PROCESS_ADDS, 1000)
    with SqliteChatMemoryRepository(path) as repository:
        run_threads(MessageWindowChatMemory(repository, max_messages=1000), 'shared')
    assert [p.wait(120) for p in procs] == [0, 0]
    written = {**dict.fromkeys(names, PROCESS_ADDS), **{f't{n}': THREAD_ADDS for n in range(THREADS)}}
    check_serial_window(stored_texts('sqlite', path, ''), written, None)
    assert os.path.exists(path)
