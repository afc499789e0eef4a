"""A stored conversation never holds an assistant tool call without its response, whatever ends the turn.

The memory advisor sits inside the tool loop (it stores every round) or at its default order
outside it; the turn ends by an unknown tool name, a retry budget exceeded, a limit breach with
``THROW``, a provider error mid-round, cancellation during a tool, ``max_rounds``, ``return_direct``,
or the process SIGKILLed while a tool runs. Afterwards the raw stored rows have every call answered
(:func:`memory_support.problems` is empty), the next request of the conversation works and sends the
model a valid history. Conversations stored broken by someone else are repaired on load, with one
warning per load. Each ending runs in ``call()``, ``acall()`` and ``stream()`` where it applies.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memory_support import problems
from toolweave import ChatClient, tool
from toolweave.advisors import MessageChatMemoryAdvisor, ToolCallingAdvisor
from toolweave.chat import AssistantMessage, ToolCall, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.exceptions import ServerError, ToolRetryBudgetExceededError
from toolweave.memory import MessageWindowChatMemory, SqliteChatMemoryRepository
from toolweave.memory.window import NOT_EXECUTED_METADATA
from toolweave.providers import ScriptedChatModel
from toolweave.tools import DefaultToolCallingManager, ToolCallLimits

S = ScriptedChatModel
MODES = ['call', 'acall', 'stream']
INSIDE = ToolCallingAdvisor.DEFAULT_ORDER + 1
OUTSIDE = MessageChatMemoryAdvisor.DEFAULT_ORDER


@tool
def ping(n: int) -> str:
    """Ping."""
    return f'pong {n}'


@tool(return_direct=True)
def direct(n: int) -> str:
    """Answer the user directly."""
    return f'direct {n}'


def run(spec: Any, mode: str) -> str | None:
    """The final text of one request, in ``mode``."""
    if mode == 'call':
        return spec.call().content()
    if mode == 'acall':
        return asyncio.run(spec.acall()).content()

    async def consume() -> str:
        return ''.join([text async for text in spec.stream().content()])

    return asyncio.run(consume())


def client(model: ScriptedChatModel, memory: MessageWindowChatMemory, order: int, **loop: Any) -> ChatClient:
    builder = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory, order=order))
    if loop:
        builder = builder.tool_calling_advisor(ToolCallingAdvisor(**loop))
    return builder.build()


def raw(memory: MessageWindowChatMemory, conversation_id: str = 'u1') -> list[Any]:
    """What the repository holds (``memory.get`` would repair it)."""
    return memory.repository.find_by_conversation_id(conversation_id)


def check_next_request_is_valid(
    model: ScriptedChatModel, memory: MessageWindowChatMemory, order: int, mode: str
) -> None:
    """A later request of the conversation works and sends the model a history providers accept."""
    follow = ScriptedChatModel([S.text_response('fine')])
    assert (
        run(client(follow, memory, order).prompt('again').tools(ping).advisors(chat_memory_conversation_id='u1'), mode)
        == 'fine'
    )
    assert problems(follow.prompts[0].messages) == []
    assert problems(raw(memory)) == []


def provider_error(prompt: Any) -> Any:
    raise ServerError('upstream failed mid-turn', status_code=503)


ENDINGS: dict[str, tuple[list[Any], dict[str, Any], type[BaseException] | None]] = {
    'unknown_tool': (
        [S.tool_call_response('ping', {'n': 1}, 'k1'), S.tool_call_response('nope', {}, 'k2')],
        {},
        LookupError,
    ),
    'retry_budget': (
        [
            S.tool_call_response('ping', {'n': 1}, 'k1'),
            S.tool_call_response('ping', '{"n": "x"}', 'k2', more=[('ping', '[')]),
        ],
        {},
        ToolRetryBudgetExceededError,
    ),
    'limit_throw': (
        [S.tool_call_response('ping', {'n': 1}, 'k1'), S.tool_call_response('ping', {'n': 2}, 'k2')],
        {'tool_calling_manager': DefaultToolCallingManager(limits=ToolCallLimits().max_calls_per_tool(1))},
        None,
    ),
    'provider_error': ([S.tool_call_response('ping', {'n': 1}, 'k1'), provider_error], {}, ServerError),
    'max_rounds': (
        [S.tool_call_response('ping', {'n': 1}, 'k1'), S.tool_call_response('ping', {'n': 2}, 'k2')],
        {'max_rounds': 2},
        None,
    ),
    'return_direct': (
        [S.tool_call_response('ping', {'n': 1}, 'k1'), S.tool_call_response('direct', {'n': 2}, 'k2')],
        {},
        None,
    ),
}


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('order', [INSIDE, OUTSIDE], ids=['inside', 'outside'])
@pytest.mark.parametrize('ending', sorted(ENDINGS))
def test_every_ending_leaves_a_valid_conversation(ending: str, order: int, mode: str) -> None:
    script, loop, error = ENDINGS[ending]
    model = ScriptedChatModel(script)
    memory = MessageWindowChatMemory(max_messages=100)
    spec = (
        client(model, memory, order, **loop).prompt('go').tools(ping, direct).advisors(chat_memory_conversation_id='u1')
    )
    if error is None:
        run(spec, mode)
    else:
        with pytest.raises(error):
            run(spec, mode)
    stored = raw(memory)
    assert problems(stored) == []
    assert stored[0] == UserMessage('go')
    if order == INSIDE:  # the first round's call and response were stored together; the second call never alone
        assert [type(m).__name__ for m in stored[1:3]] == ['AssistantMessage', 'ToolResponseMessage']
        assert stored[1].tool_calls[0].id == 'k1' and stored[2].responses[0].response_data == 'pong 1'
        assert all(c.id != 'k2' for m in stored if isinstance(m, AssistantMessage) for c in m.tool_calls)
    check_next_request_is_valid(model, memory, order, mode)


@pytest.mark.parametrize('mode', ['acall', 'stream'])
def test_cancellation_during_a_tool_leaves_a_valid_conversation(mode: str) -> None:
    memory = MessageWindowChatMemory(max_messages=100)

    async def scenario() -> None:
        started = asyncio.Event()

        @tool
        async def slow() -> str:
            """Takes long."""
            started.set()
            await asyncio.sleep(60)
            return 'late'

        model = ScriptedChatModel(
            [S.tool_call_response('ping', {'n': 1}, 'k1'), S.tool_call_response('slow', {}, 'k2')]
        )
        spec = client(model, memory, INSIDE).prompt('go').tools(ping, slow).advisors(chat_memory_conversation_id='u1')

        async def consume() -> None:
            if mode == 'acall':
                await spec.acall()
            else:
                async for _ in spec.stream().content():
                    pass

        task = asyncio.create_task(consume())
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    stored = raw(memory)
    assert problems(stored) == []
    assert [type(m).__name__ for m in stored] == ['UserMessage', 'AssistantMessage', 'ToolResponseMessage']
    check_next_request_is_valid(ScriptedChatModel([]), memory, INSIDE, mode)


KILLED = """
import os, signal, sys
from toolweave import ChatClient, tool
from toolweave.advisors import MessageChatMemoryAdvisor, ToolCallingAdvisor
from toolweave.memory import MessageWindowChatMemory, SqliteChatMemoryRepository
from toolweave.providers import ScriptedChatModel as S

@tool
def ping(n: int) -> str:
    '''Ping.'''
    return f'pong {n}'

@tool
def die() -> str:
    '''Killed while running: after the assistant's call was seen, before its response exists.'''
    os.kill(os.getpid(), signal.SIGKILL)
    return 'never'

memory = MessageWindowChatMemory(SqliteChatMemoryRepository(sys.argv[1]), max_messages=100)
advisor = MessageChatMemoryAdvisor(memory, order=ToolCallingAdvisor.DEFAULT_ORDER + 1)
model = S([S.tool_call_response('ping', {'n': 1}, 'k1'), S.tool_call_response('die', {}, 'k2')])
client = ChatClient.builder(model).default_advisors(advisor).build()
spec = client.prompt('go').tools(ping, die).advisors(chat_memory_conversation_id='u1')
if sys.argv[2] == 'call':
    spec.call()
elif sys.argv[2] == 'acall':
    import asyncio
    asyncio.run(spec.acall())
else:
    import asyncio

    async def consume():
        async for _ in spec.stream().content():
            pass

    asyncio.run(consume())
"""


@pytest.mark.parametrize('mode', MODES)
def test_process_sigkilled_between_the_call_and_its_response(tmp_path: Path, mode: str) -> None:
    path = str(tmp_path / 'killed.db')
    process = subprocess.run([sys.executable, '-c', KILLED, path, mode], timeout=120, check=False)
    assert process.returncode == -signal.SIGKILL
    with SqliteChatMemoryRepository(path) as repository:
        stored = repository.find_by_conversation_id('u1')
        assert problems(stored) == []
        assert [type(m).__name__ for m in stored] == ['UserMessage', 'AssistantMessage', 'ToolResponseMessage']
        memory = MessageWindowChatMemory(repository, max_messages=100)
        check_next_request_is_valid(ScriptedChatModel([]), memory, INSIDE, mode)
    assert os.path.exists(path)


BROKEN_CALL = AssistantMessage(
    'checking', (ToolCall('b1', 'function', 'ping', '{"n": 1}'), ToolCall('b2', 'function', 'ping', '{}'))
)


@pytest.mark.parametrize('mode', MODES)
def test_a_conversation_stored_broken_is_repaired_on_load_with_one_warning(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    memory = MessageWindowChatMemory(max_messages=100)
    answered_one = ToolResponseMessage((ToolResponse('b1', 'ping', 'pong 1'),))
    memory.repository.save_all('u1', [UserMessage('go'), BROKEN_CALL, answered_one, UserMessage('next'), BROKEN_CALL])
    with caplog.at_level(logging.WARNING, logger='toolweave.memory'):
        loaded = memory.get('u1')
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1 and len(caplog.records) == 1
    assert "'u1'" in caplog.records[0].message and '3 tool call(s)' in caplog.records[0].message
    assert problems(loaded) == []
    first_fix, second_fix = (m for m in loaded if isinstance(m, ToolResponseMessage) and m.metadata)
    assert loaded.index(first_fix) == 3 and loaded[-1] is second_fix
    assert [r.id for r in first_fix.responses] == ['b2'] and [r.id for r in second_fix.responses] == ['b1', 'b2']
    assert first_fix.metadata == {NOT_EXECUTED_METADATA: True}
    assert first_fix.responses[0].response_data == (
        "Tool call 'ping' was not executed: no response was stored for this call."
    )
    assert all(r.is_error and r.error_type == 'NotExecuted' for m in (first_fix, second_fix) for r in m.responses)
    with caplog.at_level(logging.WARNING, logger='toolweave.memory'):
        assert memory.get('u1') == loaded  # the same repair again, not logged again
    assert len(caplog.records) == 1
    model = ScriptedChatModel([S.text_response('ok')])
    assert run(client(model, memory, OUTSIDE).prompt('more').advisors(chat_memory_conversation_id='u1'), mode) == 'ok'
    assert problems(model.prompts[0].messages) == []
    assert len(raw(memory)) == 7  # repair on load does not write: another writer may still answer


@pytest.mark.parametrize('mode', MODES)
def test_a_final_answer_with_unexecuted_calls_is_not_stored_alone(mode: str) -> None:
    """Without a tool loop (a checker that never runs tools) the answer's calls have no responses: not stored."""
    model = ScriptedChatModel([S.tool_call_response('ping', {'n': 1}, 'k1', text='let me see')])
    memory = MessageWindowChatMemory(max_messages=100)
    never = client(model, memory, OUTSIDE, eligibility_checker=lambda response: False)
    run(never.prompt('go').tools(ping).advisors(chat_memory_conversation_id='u1'), mode)
    # streaming honours the checker as blocking does: the refused calls reach the caller, so nothing is stored
    assert raw(memory) == [UserMessage('go')]
