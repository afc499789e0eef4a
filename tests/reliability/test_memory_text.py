"""Memory rows holding lone surrogates (tool output, user text, metadata) store and load, as U+FFFD.

A Python ``str`` can hold a lone surrogate (``os.listdir`` of a non-UTF-8 file name, a JSON
``\\ud800`` escape); UTF-8 cannot. SQLite and Redis rows store U+FFFD in its place and never fail;
the in-memory repository keeps the objects as they are.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memory_support import problems, redis_server
from toolweave import ChatClient, tool
from toolweave.advisors import MessageChatMemoryAdvisor, ToolCallingAdvisor
from toolweave.chat import AssistantMessage, SystemMessage, ToolCall, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.memory import (
    InMemoryChatMemoryRepository,
    MessageWindowChatMemory,
    RedisChatMemoryRepository,
    SqliteChatMemoryRepository,
)
from toolweave.memory.base import WindowedChatMemoryRepository
from toolweave.providers import ScriptedChatModel

__all__ = ['redis_server']

BAD = 'file-\udcff\udcfe.txt \ud800 end'
GOOD = 'file-\ufffd\ufffd.txt \ufffd end'
PAIR = 'emoji \ud83d\ude00'  # a surrogate pair as two code points: joined, not replaced

HOSTILE = [
    SystemMessage(BAD, {BAD: [BAD]}),
    UserMessage(BAD),
    AssistantMessage(BAD, (ToolCall('c\udcff', 'function', 'ls', '{"path": "' + BAD + '"}'),), {'k': BAD}),
    ToolResponseMessage((ToolResponse('c\udcff', 'ls', BAD),), {'n': 1}),
    UserMessage(PAIR),
]


EXPECTED = [
    SystemMessage(GOOD, {GOOD: [GOOD]}),
    UserMessage(GOOD),
    AssistantMessage(GOOD, (ToolCall('c\ufffd', 'function', 'ls', '{"path": "' + GOOD + '"}'),), {'k': GOOD}),
    ToolResponseMessage((ToolResponse('c\ufffd', 'ls', GOOD),), {'n': 1}),
    UserMessage('emoji 😀'),
]


@pytest.fixture(params=['in_memory', 'sqlite', 'redis'])
def repository(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WindowedChatMemoryRepository]:
    if request.param == 'in_memory':
        yield InMemoryChatMemoryRepository()
    elif request.param == 'sqlite':
        with SqliteChatMemoryRepository(tmp_path / 'text.db') as repo:
            yield repo
    else:
        server = request.getfixturevalue('redis_server')
        yield RedisChatMemoryRepository(url=server.url, key_prefix=f'txt:{uuid.uuid4().hex}:')


@pytest.mark.parametrize('write', ['save_all', 'add_all'])
def test_lone_surrogates_store_and_load_as_replacement_characters(
    repository: WindowedChatMemoryRepository, write: str
) -> None:
    if write == 'save_all':
        repository.save_all('c', HOSTILE)
    else:
        for message in HOSTILE:
            repository.add_all('c', [message], max_messages=100)
    loaded = repository.find_by_conversation_id('c')
    if isinstance(repository, InMemoryChatMemoryRepository):
        assert loaded == HOSTILE
    else:
        assert loaded == EXPECTED
    repository.add_all('c', [UserMessage('still works')], max_messages=100)
    assert repository.find_by_conversation_id('c')[-1] == UserMessage('still works')


@pytest.mark.parametrize('mode', ['call', 'acall', 'stream'])
def test_a_tool_output_with_a_lone_surrogate_is_remembered(tmp_path: Path, mode: str) -> None:
    @tool
    def listdir() -> str:
        """Lists a directory with a file name that is not UTF-8."""
        return 'report-\udcff.txt'

    S = ScriptedChatModel
    model = S([S.tool_call_response('listdir', {}, 'k1'), S.text_response('one file')])
    with SqliteChatMemoryRepository(tmp_path / 'tool.db') as repo:
        memory = MessageWindowChatMemory(repo, max_messages=50)
        advisor = MessageChatMemoryAdvisor(memory, order=ToolCallingAdvisor.DEFAULT_ORDER + 1)
        spec = ChatClient.builder(model).default_advisors(advisor).build().prompt('ls \udcfe').tools(listdir)
        spec = spec.advisors(chat_memory_conversation_id='u1')
        run(spec, mode)
        stored = repo.find_by_conversation_id('u1')
        assert stored[0] == UserMessage('ls \ufffd')
        assert stored[2].responses[0].response_data == 'report-\ufffd.txt'
        assert problems(stored) == [] and len(stored) == 4


def run(spec: Any, mode: str) -> None:
    if mode == 'call':
        spec.call()
    elif mode == 'acall':
        asyncio.run(spec.acall())
    else:

        async def consume() -> None:
            async for _ in spec.stream().content():
                pass

        asyncio.run(consume())
