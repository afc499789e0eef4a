"""Cost of one ``MessageWindowChatMemory.add`` as the conversation grows: 100 vs 20,000 stored messages.

SQLite (a WAL file) and, when ``redis-server`` is installed, Redis on a loopback port. Two shapes:
``append`` (the window is larger than the conversation: the add only appends) and ``evict`` (the
window is full: every add also evicts the oldest message). An add runs a few indexed statements (or
one Lua script that reads only what it evicts), so the 20k/100 ratio should stay near 1; the
read-everything-and-rewrite approach the repositories used before is printed for comparison.
Never asserts timings.
"""

from __future__ import annotations

import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path

import pytest
from conftest import best_of
from toolweave.chat import AssistantMessage, Message, UserMessage
from toolweave.memory import MessageWindowChatMemory, RedisChatMemoryRepository, SqliteChatMemoryRepository
from toolweave.memory.base import WindowedChatMemoryRepository
from toolweave.memory.window import apply_window

sys.path.insert(0, str(Path(__file__).parent.parent / 'tests' / 'reliability'))
from memory_support import RedisServer

SIZES = (100, 20_000)
_ids = count()


def conversation(size: int) -> list[Message]:
    """``size`` alternating user and assistant messages of a realistic length."""
    return [
        UserMessage(f'question {i}: what is the weather in Paris tomorrow?')
        if i % 2 == 0
        else AssistantMessage(f'answer {i}: about 18 C, light wind from the west, no rain expected.')
        for i in range(size)
    ]


@pytest.fixture(scope='module')
def redis_url() -> Iterator[str | None]:
    if shutil.which('redis-server') is None:
        yield None
        return
    with RedisServer() as server:
        yield server.url


def make_repository(kind: str, tmp_path: Path, redis_url: str | None) -> WindowedChatMemoryRepository:
    if kind == 'sqlite':
        return SqliteChatMemoryRepository(tmp_path / f'bench-{uuid.uuid4().hex}.db')
    if redis_url is None:
        pytest.skip('redis-server not installed')
    return RedisChatMemoryRepository(url=redis_url, key_prefix=f'bench:{uuid.uuid4().hex}:')


def one_add(repository: WindowedChatMemoryRepository, size: int, shape: str) -> Callable[[], None]:
    """A fresh conversation of ``size`` messages, and a function adding one message to it (warmed up: 200 adds)."""
    repository.save_all('c', conversation(size))
    memory = MessageWindowChatMemory(repository, max_messages=size if shape == 'evict' else 10**9)

    def add() -> None:
        memory.add('c', [UserMessage(f'new message {next(_ids)}')])

    for _ in range(200):
        add()
    return add


@pytest.mark.parametrize('size', SIZES)
@pytest.mark.parametrize('shape', ['append', 'evict'])
@pytest.mark.parametrize('kind', ['sqlite', 'redis'])
def test_add(benchmark, kind: str, shape: str, size: int, tmp_path: Path, redis_url: str | None) -> None:  # type: ignore[no-untyped-def]
    repository = make_repository(kind, tmp_path, redis_url)
    benchmark.group = f'memory add ({kind}, {shape})'
    benchmark(one_add(repository, size, shape))
    if isinstance(repository, SqliteChatMemoryRepository):
        repository.close()


def test_ratio_20k_vs_100(tmp_path: Path, redis_url: str | None) -> None:
    """Prints the cost of one add at 20,000 messages divided by the cost at 100, per store and shape."""
    print()
    for kind in ('sqlite', 'redis'):
        if kind == 'redis' and redis_url is None:
            print('redis: skipped (redis-server not installed)')
            continue
        for shape in ('append', 'evict'):
            seconds = {}
            for size in SIZES:
                repository = make_repository(kind, tmp_path, redis_url)
                seconds[size] = best_of(one_add(repository, size, shape), repeat=5, number=40)
                if isinstance(repository, SqliteChatMemoryRepository):
                    repository.close()
            ratio = seconds[20_000] / seconds[100]
            print(
                f'{kind:6} {shape:6}: add at 100 = {seconds[100] * 1e6:8.0f} us, '
                f'at 20,000 = {seconds[20_000] * 1e6:8.0f} us, ratio {ratio:.2f}'
            )
    with SqliteChatMemoryRepository(tmp_path / 'rewrite.db') as repository:
        repository.save_all('c', conversation(20_000))

        def rewrite() -> None:  # what every add cost before add_all: read all, window, rewrite all
            stored = repository.find_by_conversation_id('c')
            repository.save_all('c', apply_window(stored, [UserMessage('new')], 20_000))

        print(
            f'sqlite read-and-rewrite at 20,000 (the former add): {best_of(rewrite, repeat=2, number=2) * 1e3:.0f} ms'
        )
